//! `config.karmada.io/v1alpha1` `ResourceInterpreterWebhookConfiguration` and the
//! `ResourceInterpreterContext` a webhook receives and answers: Karmada's customized
//! (webhook) interpreter, consulted before ResourceInterpreterCustomizations and the native
//! rules. The controllers make the calls (`interpreter/webhook.rs`).

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ApiVersion, Kind, Operation, ReplicaRequirements, karmada_resource};

/// A cluster-scoped list of interpreter webhooks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterWebhookConfiguration {
    /// Always `config.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ResourceInterpreterWebhookConfiguration>,
    /// Always `ResourceInterpreterWebhookConfiguration`.
    #[serde(default)]
    pub kind: Kind<ResourceInterpreterWebhookConfiguration>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The webhooks.
    #[serde(default)]
    pub webhooks: Vec<ResourceInterpreterWebhook>,
}
karmada_resource!(
    ResourceInterpreterWebhookConfiguration,
    group = "config.karmada.io",
    version = "v1alpha1",
    kind = "ResourceInterpreterWebhookConfiguration",
    plural = "resourceinterpreterwebhookconfigurations",
    scope = ClusterResourceScope
);

/// One webhook: where it listens and which kinds and operations it interprets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterWebhook {
    /// The webhook's name (with the configuration's, its identity: `<config>/<name>`).
    #[serde(default)]
    pub name: String,
    /// How to reach it: `url`, or a `service` of the control plane; `caBundle` signs its
    /// serving certificate.
    #[serde(default)]
    pub client_config: WebhookClientConfig,
    /// What it interprets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleWithOperations>,
    /// Seconds a call may take (Karmada's default: 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// `ResourceInterpreterContext` versions it accepts; only `v1alpha1` exists.
    #[serde(default)]
    pub interpreter_context_versions: Vec<String>,
}

/// Operations (or `*`) on the kinds `apiGroups` × `apiVersions` × `kinds` (each may be `*`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithOperations {
    /// Operation names (`InterpretReplica`, …) or `*`.
    #[serde(default)]
    pub operations: Vec<String>,
    /// API groups (`""` for the core group) or `*`.
    #[serde(default)]
    pub api_groups: Vec<String>,
    /// Versions or `*`.
    #[serde(default)]
    pub api_versions: Vec<String>,
    /// Kinds or `*`.
    #[serde(default)]
    pub kinds: Vec<String>,
}

fn exact_or_wildcard(wanted: &str, items: &[String]) -> bool {
    items.iter().any(|item| item == "*" || item == wanted)
}

impl RuleWithOperations {
    /// Karmada's matcher: the operation, group, version and kind each listed or `*`.
    pub fn matches(&self, group: &str, version: &str, kind: &str, operation: Operation) -> bool {
        exact_or_wildcard(operation.name(), &self.operations)
            && exact_or_wildcard(group, &self.api_groups)
            && exact_or_wildcard(version, &self.api_versions)
            && exact_or_wildcard(kind, &self.kinds)
    }
}

/// What is sent to, and read back from, a webhook.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterContext {
    /// `config.karmada.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ResourceInterpreterContext`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<InterpreterRequest>,
    /// The answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<InterpreterResponse>,
}

/// `metav1.GroupVersionKind`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GroupVersionKind {
    /// Group (empty for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// `ResourceInterpreterRequest`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterpreterRequest {
    /// Identifies this call; the response must echo it.
    pub uid: String,
    /// The object's kind.
    pub kind: GroupVersionKind,
    /// The object's name.
    pub name: String,
    /// The object's namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The operation's name.
    pub operation: String,
    /// The object (the template, or the desired manifest for Retain).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub object: Value,
    /// The member's object (Retain, InterpretStatus, InterpretHealth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_object: Option<Value>,
    /// The cluster's replicas (ReviseReplica; Karmada always sends the field, 0 otherwise).
    #[serde(default, rename = "replicas", skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// The members' statuses (AggregateStatus).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<Value>,
}

/// `ResourceInterpreterResponse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterpreterResponse {
    /// The request's uid.
    #[serde(default)]
    pub uid: String,
    /// Whether the webhook interpreted the object.
    #[serde(default)]
    pub successful: bool,
    /// Why not (required when not successful).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RequestStatus>,
    /// A JSON patch (base64 in JSON) for ReviseReplica, Retain and AggregateStatus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub patch: Option<ByteString>,
    /// `JSONPatch`, the only type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    /// InterpretReplica's requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ReplicaRequirements>,
    /// InterpretReplica's replicas (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// InterpretComponent's components (a multi-template workload's pod templates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<super::Component>,
    /// InterpretDependency's references.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Value>,
    /// InterpretStatus's status (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_status: Option<Value>,
    /// InterpretHealth's verdict (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy: Option<bool>,
}

/// `RequestStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestStatus {
    /// Message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Code.
    #[serde(default)]
    pub code: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(
        operations: &[&str],
        groups: &[&str],
        versions: &[&str],
        kinds: &[&str],
    ) -> RuleWithOperations {
        let own = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
        RuleWithOperations {
            operations: own(operations),
            api_groups: own(groups),
            api_versions: own(versions),
            kinds: own(kinds),
        }
    }

    #[test]
    fn rules_match_exact_names_or_wildcards_on_every_axis() {
        let workload = rule(
            &["InterpretReplica", "Retain"],
            &["workload.example.io"],
            &["v1alpha1"],
            &["Workload"],
        );
        assert!(workload.matches(
            "workload.example.io",
            "v1alpha1",
            "Workload",
            Operation::Retain
        ));
        assert!(!workload.matches(
            "workload.example.io",
            "v1alpha1",
            "Workload",
            Operation::InterpretHealth
        ));
        assert!(!workload.matches(
            "workload.example.io",
            "v1beta1",
            "Workload",
            Operation::Retain
        ));
        assert!(!workload.matches("apps", "v1", "Deployment", Operation::Retain));
        let all = rule(&["*"], &["*"], &["*"], &["*"]);
        assert!(all.matches("", "v1", "Pod", Operation::InterpretDependency));
        let core = rule(&["*"], &[""], &["v1"], &["Pod"]);
        assert!(core.matches("", "v1", "Pod", Operation::InterpretHealth));
        assert!(!core.matches("apps", "v1", "Pod", Operation::InterpretHealth));
    }

    #[test]
    fn a_response_reads_karmadas_wire_form() {
        let context: ResourceInterpreterContext = serde_json::from_value(serde_json::json!({
            "apiVersion": "config.karmada.io/v1alpha1",
            "kind": "ResourceInterpreterContext",
            "response": {
                "uid": "u1",
                "successful": true,
                "patch": "W3sib3AiOiJyZXBsYWNlIiwicGF0aCI6Ii9zcGVjL3JlcGxpY2FzIiwidmFsdWUiOjJ9XQ==",
                "patchType": "JSONPatch",
            },
        }))
        .expect("decodes");
        let response = context.response.expect("response");
        assert_eq!(
            String::from_utf8(response.patch.expect("patch").0).expect("utf-8"),
            r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#
        );
    }
}
