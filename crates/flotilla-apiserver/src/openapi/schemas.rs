//! JSON schemas of the built-in kinds, generated from k8s-openapi's types.

use std::collections::HashMap;
use std::sync::LazyLock;

use parking_lot::RwLock;
use serde_json::Value;

/// Schemas by (group, version, kind), computed once: field validation reads them on every write.
type Cache = RwLock<HashMap<(String, String, String), Option<&'static Value>>>;

static CACHE: LazyLock<Cache> = LazyLock::new(Default::default);

/// [`for_kind`], computed once per kind and kept for the life of the process (the set of
/// built-in kinds is fixed, so this is bounded).
pub fn cached(group: &str, version: &str, kind: &str) -> Option<&'static Value> {
    let key = (group.to_owned(), version.to_owned(), kind.to_owned());
    if let Some(found) = CACHE.read().get(&key) {
        return *found;
    }
    let computed = for_kind(group, version, kind);
    *CACHE
        .write()
        .entry(key)
        .or_insert_with(|| computed.map(|v| &*Box::leak(Box::new(v))))
}

fn schema<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::openapi3().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("definitions");
        map.remove("$defs");
    }
    value
}

/// The schema of a built-in kind, if k8s-openapi has its type.
pub fn for_kind(group: &str, version: &str, kind: &str) -> Option<Value> {
    use k8s_openapi::api::{
        apps, autoscaling, batch, certificates, coordination, core, discovery, events, networking,
        policy, rbac, scheduling,
    };
    Some(match (group, version, kind) {
        ("", "v1", "Namespace") => schema::<core::v1::Namespace>(),
        ("", "v1", "ConfigMap") => schema::<core::v1::ConfigMap>(),
        ("", "v1", "Secret") => schema::<core::v1::Secret>(),
        ("", "v1", "Service") => schema::<core::v1::Service>(),
        ("", "v1", "ServiceAccount") => schema::<core::v1::ServiceAccount>(),
        ("", "v1", "Pod") => schema::<core::v1::Pod>(),
        ("", "v1", "Node") => schema::<core::v1::Node>(),
        ("", "v1", "PersistentVolumeClaim") => schema::<core::v1::PersistentVolumeClaim>(),
        ("", "v1", "Endpoints") => schema::<core::v1::Endpoints>(),
        ("discovery.k8s.io", "v1", "EndpointSlice") => schema::<discovery::v1::EndpointSlice>(),
        ("", "v1", "Event") => schema::<core::v1::Event>(),
        ("events.k8s.io", "v1", "Event") => schema::<events::v1::Event>(),
        ("", "v1", "ResourceQuota") => schema::<core::v1::ResourceQuota>(),
        ("", "v1", "LimitRange") => schema::<core::v1::LimitRange>(),
        ("apps", "v1", "Deployment") => schema::<apps::v1::Deployment>(),
        ("apps", "v1", "StatefulSet") => schema::<apps::v1::StatefulSet>(),
        ("apps", "v1", "DaemonSet") => schema::<apps::v1::DaemonSet>(),
        ("apps", "v1", "ReplicaSet") => schema::<apps::v1::ReplicaSet>(),
        ("batch", "v1", "Job") => schema::<batch::v1::Job>(),
        ("batch", "v1", "CronJob") => schema::<batch::v1::CronJob>(),
        ("networking.k8s.io", "v1", "Ingress") => schema::<networking::v1::Ingress>(),
        ("networking.k8s.io", "v1", "NetworkPolicy") => schema::<networking::v1::NetworkPolicy>(),
        ("policy", "v1", "PodDisruptionBudget") => schema::<policy::v1::PodDisruptionBudget>(),
        ("scheduling.k8s.io", "v1", "PriorityClass") => schema::<scheduling::v1::PriorityClass>(),
        ("rbac.authorization.k8s.io", "v1", "Role") => schema::<rbac::v1::Role>(),
        ("rbac.authorization.k8s.io", "v1", "ClusterRole") => schema::<rbac::v1::ClusterRole>(),
        ("rbac.authorization.k8s.io", "v1", "RoleBinding") => schema::<rbac::v1::RoleBinding>(),
        ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding") => {
            schema::<rbac::v1::ClusterRoleBinding>()
        }
        ("", "v1", "PersistentVolume") => schema::<core::v1::PersistentVolume>(),
        ("", "v1", "PodTemplate") => schema::<core::v1::PodTemplate>(),
        ("apiregistration.k8s.io", "v1", "APIService") => {
            schema::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>()
        }
        ("apps", "v1", "ControllerRevision") => schema::<apps::v1::ControllerRevision>(),
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => {
            schema::<autoscaling::v2::HorizontalPodAutoscaler>()
        }
        ("certificates.k8s.io", "v1", "CertificateSigningRequest") => {
            schema::<certificates::v1::CertificateSigningRequest>()
        }
        ("coordination.k8s.io", "v1", "Lease") => schema::<coordination::v1::Lease>(),
        ("networking.k8s.io", "v1", "IngressClass") => schema::<networking::v1::IngressClass>(),
        _ => return karmada_kind(group, version, kind),
    })
}

/// The schema of a Karmada kind served from Flotilla's own types (Karmada installs these as
/// CRDs with structural schemas, so unknown fields are refused or pruned as for built-in kinds).
fn karmada_kind(group: &str, version: &str, kind: &str) -> Option<Value> {
    let mut schema = karmada_schema(group, version, kind)?;
    preserve_untyped(&mut schema);
    unwrap_descriptions(&mut schema);
    // schemars states Rust's defaults (`""`, `[]`, `{}` for every field the types default);
    // the CRDs state their own, written in below from the tables.
    strip_defaults(&mut schema);
    if let Some(kind) = flotilla_api::validation::karmada::Kind::of(group, kind) {
        for table in kind.constraints() {
            for (path, rule) in table.iter() {
                if let Some(at) = at_path(&mut schema, path) {
                    state(at, *rule);
                }
            }
        }
    }
    Some(schema)
}

/// Joins the lines of each description's paragraphs (doc comments wrap at 100 columns;
/// `kubectl explain` wraps the text itself, so a kept line break shows as a ragged line). List
/// items (`- `, `* `) and paragraph breaks stay.
fn unwrap_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => *text = unwrap_lines(text),
                    _ => unwrap_descriptions(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

fn unwrap_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            let list_item =
                line.trim_start().starts_with("- ") || line.trim_start().starts_with("* ");
            let paragraph = line.trim().is_empty() || out.ends_with('\n');
            out.push(if list_item || paragraph { '\n' } else { ' ' });
        }
        out.push_str(line.trim_end());
    }
    out
}

/// The schema of the field at `path` (`spec.placement.clusterAffinities[].affinityName`; `[]`
/// an item, `{}` a map value), when the schema declares it.
fn at_path<'s>(schema: &'s mut Value, path: &str) -> Option<&'s mut Value> {
    let mut at = schema;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let name = segment.trim_end_matches(['[', ']', '{', '}']);
        at = at.get_mut("properties")?.get_mut(name)?;
        let mut rest = &segment[name.len()..];
        while !rest.is_empty() {
            let key = if rest.starts_with("[]") {
                "items"
            } else {
                "additionalProperties"
            };
            at = at.get_mut(key).filter(|child| child.is_object())?;
            rest = &rest[2..];
        }
    }
    Some(at)
}

/// Writes one of the kind's constraints into its schema, as Karmada's CRD states it
/// (`required`, `enum`, bounds, `default`), so `kubectl explain` shows them.
fn state(schema: &mut Value, rule: flotilla_api::validation::karmada::Rule) {
    use flotilla_api::validation::karmada::Rule;
    use serde_json::json;
    if let Rule::Required(keys) = rule {
        let mut required = super::v2::convert::strings(schema, "required");
        required.extend(keys.iter().map(|key| (*key).to_owned()));
        required.sort();
        required.dedup();
        if let Some(map) = schema.as_object_mut() {
            map.insert("required".to_owned(), json!(required));
        }
        return;
    }
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    match rule {
        Rule::Enum(values) => {
            map.insert("enum".to_owned(), json!(values));
        }
        Rule::MinItems(n) => {
            map.insert("minItems".to_owned(), json!(n));
        }
        Rule::Minimum(n) => {
            map.insert("minimum".to_owned(), json!(n));
        }
        Rule::Maximum(n) => {
            map.insert("maximum".to_owned(), json!(n));
        }
        Rule::MinLength(n) => {
            map.insert("minLength".to_owned(), json!(n));
        }
        Rule::MaxLength(n) => {
            map.insert("maxLength".to_owned(), json!(n));
        }
        // Required is stated above; quantities are already int-or-string.
        Rule::Required(_) | Rule::Quantity => {}
        Rule::DefaultStr(value) => {
            map.insert("default".to_owned(), json!(value));
        }
        Rule::DefaultInt(value) => {
            map.insert("default".to_owned(), json!(value));
        }
        Rule::DefaultBool(value) => {
            map.insert("default".to_owned(), json!(value));
        }
    }
}

/// Marks the schemas that say nothing of their value (free-form JSON fields, such as an
/// overrider's `value`) `x-kubernetes-preserve-unknown-fields`, as Karmada's CRDs mark them: a
/// structural schema names a type for every field or says that anything goes.
fn preserve_untyped(schema: &mut Value) {
    const SHAPED: [&str; 8] = [
        "type",
        "properties",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
    ];
    match schema {
        Value::Bool(true) => {
            *schema = serde_json::json!({"x-kubernetes-preserve-unknown-fields": true});
        }
        Value::Object(map) => {
            if !SHAPED.iter().any(|key| map.contains_key(*key)) {
                map.insert(
                    "x-kubernetes-preserve-unknown-fields".to_owned(),
                    Value::Bool(true),
                );
            }
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                properties.values_mut().for_each(preserve_untyped);
            }
            for key in ["items", "additionalProperties"] {
                if let Some(child) = map.get_mut(key).filter(|child| !child.is_boolean()) {
                    preserve_untyped(child);
                }
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(branches)) = map.get_mut(key) {
                    branches.iter_mut().for_each(preserve_untyped);
                }
            }
        }
        _ => {}
    }
}

/// Removes every `default` of a schema (of its own and of the schemas within it; a property
/// named `default` stays).
fn strip_defaults(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("default");
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(strip_defaults);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            strip_defaults(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.iter_mut().for_each(strip_defaults);
        }
    }
}

fn karmada_schema(group: &str, version: &str, kind: &str) -> Option<Value> {
    use flotilla_api::karmada as k;
    Some(match (group, version, kind) {
        ("policy.karmada.io", "v1alpha1", "PropagationPolicy") => schema::<k::PropagationPolicy>(),
        ("policy.karmada.io", "v1alpha1", "ClusterPropagationPolicy") => {
            schema::<k::ClusterPropagationPolicy>()
        }
        ("policy.karmada.io", "v1alpha1", "OverridePolicy") => schema::<k::OverridePolicy>(),
        ("policy.karmada.io", "v1alpha1", "ClusterOverridePolicy") => {
            schema::<k::ClusterOverridePolicy>()
        }
        ("policy.karmada.io", "v1alpha1", "ClusterTaintPolicy") => {
            schema::<k::ClusterTaintPolicy>()
        }
        ("policy.karmada.io", "v1alpha1", "FederatedResourceQuota") => {
            schema::<k::quota::FederatedResourceQuota>()
        }
        ("work.karmada.io", "v1alpha2", "ResourceBinding") => schema::<k::ResourceBinding>(),
        ("work.karmada.io", "v1alpha2", "ClusterResourceBinding") => {
            schema::<k::ClusterResourceBinding>()
        }
        ("work.karmada.io", "v1alpha1", "Work") => schema::<k::Work>(),
        ("cluster.karmada.io", "v1alpha1", "Cluster") => schema::<k::Cluster>(),
        ("apps.karmada.io", "v1alpha1", "WorkloadRebalancer") => schema::<k::WorkloadRebalancer>(),
        ("autoscaling.karmada.io", "v1alpha1", "FederatedHPA") => schema::<k::FederatedHPA>(),
        ("autoscaling.karmada.io", "v1alpha1", "CronFederatedHPA") => {
            schema::<k::CronFederatedHPA>()
        }
        ("remedy.karmada.io", "v1alpha1", "Remedy") => schema::<k::Remedy>(),
        ("config.karmada.io", "v1alpha1", "ResourceInterpreterCustomization") => {
            schema::<k::ResourceInterpreterCustomization>()
        }
        ("config.karmada.io", "v1alpha1", "ResourceInterpreterWebhookConfiguration") => {
            schema::<k::ResourceInterpreterWebhookConfiguration>()
        }
        ("networking.karmada.io", "v1alpha1", "MultiClusterService") => {
            schema::<k::MultiClusterService>()
        }
        ("search.karmada.io", "v1alpha1", "ResourceRegistry") => schema::<k::ResourceRegistry>(),
        ("networking.karmada.io", "v1alpha1", "MultiClusterIngress") => {
            schema::<k::networking::MultiClusterIngressSchema>()
        }
        _ => return None,
    })
}
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{for_kind, unwrap_lines};

    /// Doc-comment line breaks are not kept in descriptions (`kubectl explain` wraps), but
    /// paragraphs and list items are.
    #[test]
    fn descriptions_are_unwrapped_into_paragraphs() {
        assert_eq!(
            unwrap_lines(
                "How replicas are scheduled: the default\nwhen absent.\n\nSecond\nparagraph:\n- one\n- two"
            ),
            "How replicas are scheduled: the default when absent.\n\nSecond paragraph:\n- one\n- two"
        );
        let pp = for_kind("policy.karmada.io", "v1alpha1", "PropagationPolicy").expect("PP");
        let scheduling = &pp["properties"]["spec"]["properties"]["placement"]["properties"]["replicaScheduling"]
            ["description"];
        assert!(
            !scheduling
                .as_str()
                .expect("a description")
                .contains("default\nwhen"),
            "{scheduling}"
        );
    }

    /// Karmada's kinds are published with their shape and with what Karmada's CRDs state about
    /// it: required fields, enums, defaults and bounds, and free-form fields kept free-form.
    #[test]
    fn karmada_kinds_publish_their_crd_constraints() {
        let pp = for_kind("policy.karmada.io", "v1alpha1", "PropagationPolicy").expect("PP");
        let spec = &pp["properties"]["spec"];
        assert_eq!(spec["required"], json!(["resourceSelectors"]));
        let scheduling = &spec["properties"]["placement"]["properties"]["replicaScheduling"];
        let kind = &scheduling["properties"]["replicaSchedulingType"];
        assert_eq!(kind["type"], "string");
        assert_eq!(kind["enum"], json!(["Duplicated", "Divided"]));
        assert_eq!(kind["default"], "Divided");
        assert!(
            pp["properties"]["spec"].get("default").is_none(),
            "no Rust defaults"
        );
        assert!(pp["properties"]["metadata"].get("default").is_none());
        let weight = &scheduling["properties"]["weightPreference"]["properties"]["staticWeightList"]
            ["items"];
        assert_eq!(weight["required"], json!(["targetCluster", "weight"]));
        assert_eq!(weight["properties"]["weight"]["minimum"], 1);

        let op = for_kind("policy.karmada.io", "v1alpha1", "OverridePolicy").expect("OP");
        let plaintext = &op["properties"]["spec"]["properties"]["overrideRules"]["items"]["properties"]
            ["overriders"]["properties"]["plaintext"]["items"];
        assert_eq!(
            plaintext["properties"]["value"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        let work = for_kind("work.karmada.io", "v1alpha1", "Work").expect("Work");
        let manifest = &work["properties"]["spec"]["properties"]["workload"]["properties"]["manifests"]
            ["items"];
        assert_eq!(manifest["x-kubernetes-preserve-unknown-fields"], true);

        let cluster = for_kind("cluster.karmada.io", "v1alpha1", "Cluster").expect("Cluster");
        let spec = &cluster["properties"]["spec"]["properties"];
        assert_eq!(spec["insecureSkipTLSVerification"]["type"], "boolean");
        assert!(spec.get("insecureSkipTlsVerification").is_none());
    }
}
