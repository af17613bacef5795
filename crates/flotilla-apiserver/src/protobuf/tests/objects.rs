//! Converted non-workload objects against hand-written JSON: the bodies of `kubectl create
//! namespace|configmap|secret|service|serviceaccount|role|rolebinding|ingress|pdb|quota|
//! priorityclass|token`, `auth can-i` and `drain`.

use k8s_openapi::api as oa;
use k8s_pb::api::{
    authentication, authorization, coordination, core::v1 as core, networking, policy, rbac,
    scheduling,
};
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;
use std::collections::BTreeMap;

use super::{assert_openapi_round_trip, decode_ok, go_meta, labels, s};

fn int(v: i32) -> Option<IntOrString> {
    Some(IntOrString {
        r#type: Some(0),
        int_val: Some(v),
        str_val: Some(String::new()),
    })
}

fn string(v: &str) -> Option<IntOrString> {
    Some(IntOrString {
        r#type: Some(1),
        int_val: Some(0),
        str_val: s(v),
    })
}

#[test]
fn namespace_keeps_only_set_fields() {
    let ns = core::Namespace {
        metadata: Some(go_meta("team-a", "")),
        spec: Some(core::NamespaceSpec::default()),
        status: Some(core::NamespaceStatus {
            phase: s(""),
            ..Default::default()
        }),
    };
    let got = decode_ok("v1", "Namespace", &ns);
    let want = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}, "spec": {}, "status": {}});
    assert_eq!(got, want);
    assert_eq!(
        serde_json::to_string(&got).expect("serializes"),
        serde_json::to_string(&want).expect("serializes")
    );
    assert_openapi_round_trip::<oa::core::v1::Namespace>(&got);
}

#[test]
fn configmap_has_data_and_base64_binary_data() {
    let mut meta = go_meta("settings", "default");
    meta.labels = labels(&[("app", "web")]);
    meta.creation_timestamp = Some(meta::Time {
        seconds: Some(1_700_000_000),
        nanos: Some(0),
    });
    let cm = core::ConfigMap {
        metadata: Some(meta),
        immutable: None,
        data: labels(&[("mode", "fast"), ("empty", "")]),
        binary_data: BTreeMap::from([("blob".to_owned(), vec![0u8, 1, 2, 255])]),
    };
    let got = decode_ok("v1", "ConfigMap", &cm);
    let want = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default", "creationTimestamp": "2023-11-14T22:13:20Z", "labels": {"app": "web"}},
        "data": {"empty": "", "mode": "fast"},
        "binaryData": {"blob": "AAEC/w=="},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::ConfigMap>(&got);
}

#[test]
fn secret_data_is_base64_and_immutable_false_is_kept() {
    let secret = core::Secret {
        metadata: Some(go_meta("db", "prod")),
        immutable: Some(false),
        data: BTreeMap::from([("password".to_owned(), b"s3cr3t\n".to_vec())]),
        string_data: BTreeMap::new(),
        r#type: s("Opaque"),
    };
    let got = decode_ok("v1", "Secret", &secret);
    let want = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "prod"},
        "immutable": false,
        "data": {"password": "czNjcjN0Cg=="},
        "type": "Opaque",
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::Secret>(&got);
}

#[test]
fn service_target_ports_are_int_or_string() {
    let port = |name: &str, port: i32, target: Option<IntOrString>| core::ServicePort {
        name: s(name),
        protocol: s("TCP"),
        port: Some(port),
        target_port: target,
        node_port: Some(0),
        ..Default::default()
    };
    let svc = core::Service {
        metadata: Some(go_meta("web", "default")),
        spec: Some(core::ServiceSpec {
            ports: vec![
                port("http", 80, int(8080)),
                port("https", 443, string("https")),
            ],
            selector: labels(&[("app", "web")]),
            cluster_ip: s(""),
            r#type: s("ClusterIP"),
            session_affinity: s(""),
            health_check_node_port: Some(0),
            ..Default::default()
        }),
        status: Some(core::ServiceStatus {
            load_balancer: Some(core::LoadBalancerStatus::default()),
            conditions: vec![],
        }),
    };
    let got = decode_ok("v1", "Service", &svc);
    let want = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "ports": [
                {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                {"name": "https", "protocol": "TCP", "port": 443, "targetPort": "https"},
            ],
            "selector": {"app": "web"},
            "type": "ClusterIP",
        },
        "status": {"loadBalancer": {}},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::Service>(&got);
}

#[test]
fn role_and_binding_keep_required_fields() {
    let role = rbac::v1::Role {
        metadata: Some(go_meta("reader", "dev")),
        rules: vec![rbac::v1::PolicyRule {
            verbs: vec!["get".into(), "list".into()],
            api_groups: vec![String::new()],
            resources: vec!["pods".into()],
            ..Default::default()
        }],
    };
    let got = decode_ok("rbac.authorization.k8s.io/v1", "Role", &role);
    let want = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "reader", "namespace": "dev"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}],
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::rbac::v1::Role>(&got);

    let binding = rbac::v1::RoleBinding {
        metadata: Some(go_meta("read-pods", "dev")),
        subjects: vec![rbac::v1::Subject {
            kind: s("User"),
            api_group: s("rbac.authorization.k8s.io"),
            name: s("jane"),
            namespace: s(""),
        }],
        role_ref: Some(rbac::v1::RoleRef {
            api_group: s(""),
            kind: s("Role"),
            name: s("reader"),
        }),
    };
    let got = decode_ok("rbac.authorization.k8s.io/v1", "RoleBinding", &binding);
    let want = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "read-pods", "namespace": "dev"},
        "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "jane"}],
        "roleRef": {"apiGroup": "", "kind": "Role", "name": "reader"},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::rbac::v1::RoleBinding>(&got);
}

#[test]
fn ingress_rule_value_is_inlined() {
    let backend = networking::v1::IngressBackend {
        service: Some(networking::v1::IngressServiceBackend {
            name: s("web"),
            port: Some(networking::v1::ServiceBackendPort {
                name: s(""),
                number: Some(80),
            }),
        }),
        resource: None,
    };
    let ingress = networking::v1::Ingress {
        metadata: Some(go_meta("web", "default")),
        spec: Some(networking::v1::IngressSpec {
            ingress_class_name: s("nginx"),
            rules: vec![networking::v1::IngressRule {
                host: s("example.com"),
                ingress_rule_value: Some(networking::v1::IngressRuleValue {
                    http: Some(networking::v1::HttpIngressRuleValue {
                        paths: vec![networking::v1::HttpIngressPath {
                            path: s("/"),
                            path_type: s("Prefix"),
                            backend: Some(backend),
                        }],
                    }),
                }),
            }],
            ..Default::default()
        }),
        status: None,
    };
    let got = decode_ok("networking.k8s.io/v1", "Ingress", &ingress);
    let want = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
            ]}}],
        },
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::networking::v1::Ingress>(&got);
}

#[test]
fn pdb_min_available_and_selector() {
    let pdb = policy::v1::PodDisruptionBudget {
        metadata: Some(go_meta("web", "default")),
        spec: Some(policy::v1::PodDisruptionBudgetSpec {
            min_available: string("50%"),
            selector: Some(meta::LabelSelector {
                match_labels: labels(&[("app", "web")]),
                match_expressions: vec![meta::LabelSelectorRequirement {
                    key: s("tier"),
                    operator: s("In"),
                    values: vec!["a".into(), "b".into()],
                }],
            }),
            max_unavailable: None,
            unhealthy_pod_eviction_policy: None,
        }),
        status: None,
    };
    let got = decode_ok("policy/v1", "PodDisruptionBudget", &pdb);
    let want = json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": "50%", "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        }},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::policy::v1::PodDisruptionBudget>(&got);
}

#[test]
fn quota_and_priority_class() {
    let quota = core::ResourceQuota {
        metadata: Some(go_meta("compute", "dev")),
        spec: Some(core::ResourceQuotaSpec {
            hard: BTreeMap::from([
                ("cpu".to_owned(), Quantity { string: s("2") }),
                ("pods".to_owned(), Quantity { string: s("10") }),
            ]),
            ..Default::default()
        }),
        status: None,
    };
    let got = decode_ok("v1", "ResourceQuota", &quota);
    let want = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": "dev"},
                      "spec": {"hard": {"cpu": "2", "pods": "10"}}});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::ResourceQuota>(&got);

    let pc = scheduling::v1::PriorityClass {
        metadata: Some(go_meta("high", "")),
        value: Some(0),
        global_default: Some(false),
        description: s("important"),
        preemption_policy: s("Never"),
    };
    let got = decode_ok("scheduling.k8s.io/v1", "PriorityClass", &pc);
    let want = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                      "value": 0, "description": "important", "preemptionPolicy": "Never"});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::scheduling::v1::PriorityClass>(&got);
}

#[test]
fn token_request_access_review_and_eviction() {
    let tr = authentication::v1::TokenRequest {
        metadata: Some(go_meta("", "")),
        spec: Some(authentication::v1::TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(3600),
            bound_object_ref: None,
        }),
        status: Some(authentication::v1::TokenRequestStatus {
            token: s(""),
            expiration_timestamp: Some(meta::Time::default()),
        }),
    };
    let got = decode_ok("authentication.k8s.io/v1", "TokenRequest", &tr);
    let want = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {},
                      "spec": {"audiences": [], "expirationSeconds": 3600}, "status": {"token": ""}});
    assert_eq!(got, want);

    let ssar = authorization::v1::SelfSubjectAccessReview {
        metadata: Some(go_meta("", "")),
        spec: Some(authorization::v1::SelfSubjectAccessReviewSpec {
            resource_attributes: Some(authorization::v1::ResourceAttributes {
                namespace: s("dev"),
                verb: s("create"),
                group: s("apps"),
                resource: s("deployments"),
                ..Default::default()
            }),
            non_resource_attributes: None,
        }),
        status: Some(authorization::v1::SubjectAccessReviewStatus {
            allowed: Some(false),
            ..Default::default()
        }),
    };
    let got = decode_ok("authorization.k8s.io/v1", "SelfSubjectAccessReview", &ssar);
    let want = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
                      "spec": {"resourceAttributes": {"namespace": "dev", "verb": "create", "group": "apps", "resource": "deployments"}},
                      "status": {"allowed": false}});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::authorization::v1::SelfSubjectAccessReview>(&got);

    let eviction = policy::v1::Eviction {
        metadata: Some(go_meta("web-1", "default")),
        delete_options: Some(meta::DeleteOptions {
            grace_period_seconds: Some(30),
            preconditions: Some(meta::Preconditions {
                uid: s("1234"),
                resource_version: None,
            }),
            ..Default::default()
        }),
    };
    let got = decode_ok("policy/v1", "Eviction", &eviction);
    let want = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1", "namespace": "default"},
                      "deleteOptions": {"gracePeriodSeconds": 30, "preconditions": {"uid": "1234"}}});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::policy::v1::Eviction>(&got);
}

#[test]
fn micro_time_has_six_fractional_digits() {
    let lease = coordination::v1::Lease {
        metadata: Some(go_meta("leader", "kube-system")),
        spec: Some(coordination::v1::LeaseSpec {
            holder_identity: s("me"),
            lease_duration_seconds: Some(15),
            renew_time: Some(meta::MicroTime {
                seconds: Some(1_700_000_000),
                nanos: Some(123_456_789),
            }),
            acquire_time: Some(meta::MicroTime {
                seconds: Some(0),
                nanos: Some(0),
            }),
            ..Default::default()
        }),
    };
    let got = decode_ok("coordination.k8s.io/v1", "Lease", &lease);
    let want = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": "leader", "namespace": "kube-system"},
                      "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15,
                               "acquireTime": "1970-01-01T00:00:00.000000Z", "renewTime": "2023-11-14T22:13:20.123456Z"}});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::coordination::v1::Lease>(&got);
}

fn namespace_with(meta: meta::ObjectMeta) -> Vec<u8> {
    super::encode_for_tests(
        "v1",
        "Namespace",
        &core::Namespace {
            metadata: Some(meta),
            spec: None,
            status: None,
        },
    )
}

#[test]
fn managed_fields_carry_embedded_json() {
    let mut m = go_meta("a", "");
    m.creation_timestamp = Some(meta::Time {
        seconds: Some(86_399),
        nanos: Some(999_999_999),
    });
    m.managed_fields = vec![meta::ManagedFieldsEntry {
        manager: s("kubectl-create"),
        operation: s("Update"),
        api_version: s("v1"),
        time: Some(meta::Time {
            seconds: Some(0),
            nanos: Some(0),
        }),
        fields_type: s("FieldsV1"),
        fields_v1: Some(meta::FieldsV1 {
            raw: Some(br#"{"f:metadata":{}}"#.to_vec()),
        }),
        subresource: s(""),
    }];
    let got = super::decode(&namespace_with(m)).expect("decodes");
    let want = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "a", "creationTimestamp": "1970-01-01T23:59:59Z",
        "managedFields": [{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                           "time": "1970-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}],
    }});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::Namespace>(&got);
}

#[test]
fn bad_embedded_json_and_out_of_range_time_are_errors() {
    let mut m = go_meta("a", "");
    m.managed_fields = vec![meta::ManagedFieldsEntry {
        fields_v1: Some(meta::FieldsV1 {
            raw: Some(b"{oops".to_vec()),
        }),
        ..Default::default()
    }];
    let err = super::decode(&namespace_with(m)).expect_err("invalid JSON");
    assert!(
        matches!(
            err,
            super::ProtobufError::EmbeddedJson {
                field: "FieldsV1",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.status_code(), 400);

    let mut m = go_meta("a", "");
    m.creation_timestamp = Some(meta::Time {
        seconds: Some(i64::MAX),
        nanos: Some(0),
    });
    let err = super::decode(&namespace_with(m)).expect_err("year out of range");
    assert!(
        matches!(err, super::ProtobufError::InvalidTime { .. }),
        "{err}"
    );
}

/// A typed client's Node update (what karmada-search's proxy receives for `Nodes().Update`).
#[test]
fn node_update_body() {
    let node = core::Node {
        metadata: Some(meta::ObjectMeta {
            annotations: BTreeMap::from([("proxy-ann".to_owned(), "true".to_owned())]),
            ..go_meta("member1-control-plane", "")
        }),
        spec: Some(core::NodeSpec {
            taints: vec![core::Taint {
                key: s("gpu"),
                value: s("true"),
                effect: s("NoSchedule"),
                time_added: None,
            }],
            ..Default::default()
        }),
        status: Some(core::NodeStatus {
            capacity: BTreeMap::from([("cpu".to_owned(), Quantity { string: s("8") })]),
            addresses: vec![core::NodeAddress {
                r#type: s("InternalIP"),
                address: s("10.0.0.1"),
            }],
            ..Default::default()
        }),
    };
    let got = decode_ok("v1", "Node", &node);
    let want = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "member1-control-plane", "annotations": {"proxy-ann": "true"}},
        "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "8"}, "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::Node>(&got);
}
