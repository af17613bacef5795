use serde_json::json;

use super::*;

// Karmada's own `GenerateReplicaRequirements` cases, restated.
mod karmada_requirements;

fn requests(r: &InterpretedReplicas) -> BTreeMap<String, String> {
    r.requirements
        .as_ref()
        .and_then(|r| r.resource_request.as_ref())
        .map(|l| l.iter().map(|(k, v)| (k.clone(), v.to_string())).collect())
        .unwrap_or_default()
}

#[test]
fn deployment_replicas_and_requests() {
    let deploy = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "vllm"},
        "spec": {"replicas": 10, "template": {"spec": {
            "containers": [{"name": "a", "image": "x", "resources": {
                "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"},
                "limits": {"nvidia.com/gpu": "2", "ephemeral-storage": "1Gi"}}},
                {"name": "b", "image": "y", "resources": {"requests": {"cpu": "250m", "foo": "3"}}}],
            "initContainers": [{"name": "i", "image": "z", "resources": {"requests": {"cpu": "10", "memory": "1Gi"}}}],
            "nodeSelector": {"gpu": "true"}
        }}}
    });
    let r = interpret_replica(&deploy).expect("interpret");
    assert_eq!(r.replicas, 10);
    let want: BTreeMap<String, String> = [
        ("cpu", "10"),
        ("ephemeral-storage", "1Gi"),
        ("memory", "64Gi"),
        ("nvidia.com/gpu", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(requests(&r), want);
    let claim = r
        .requirements
        .and_then(|r| r.node_claim)
        .expect("node claim");
    assert_eq!(claim.node_selector.expect("selector")["gpu"], "true");
}

#[test]
fn replicas_default_like_the_api_server() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"template": {"spec": {"containers": []}}}});
    let r = interpret_replica(&deploy).expect("interpret");
    assert_eq!(r.replicas, 1);
    assert_eq!(r.requirements, None);
}

#[test]
fn job_takes_min_of_parallelism_and_completions() {
    let job = |spec: serde_json::Value| {
        interpret_replica(&json!({"apiVersion": "batch/v1", "kind": "Job", "spec": spec}))
            .expect("interpret")
            .replicas
    };
    assert_eq!(job(json!({"parallelism": 5, "completions": 3})), 3);
    assert_eq!(job(json!({"parallelism": 2, "completions": 8})), 2);
    assert_eq!(job(json!({"parallelism": 4})), 4);
    assert_eq!(job(json!({})), 1);
    assert_eq!(job(json!({"parallelism": 0, "completions": 3})), 0);
}

#[test]
fn pods_are_one_replica_and_other_kinds_none() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "500m"}}}]}});
    let r = interpret_replica(&pod).expect("interpret");
    assert_eq!(r.replicas, 1);
    assert_eq!(requests(&r)["cpu"], "500m");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {}});
    assert_eq!(
        interpret_replica(&cm).expect("interpret"),
        InterpretedReplicas::default()
    );
}

#[test]
fn bad_quantity_names_the_field() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}});
    let err = interpret_replica(&pod).expect_err("bad quantity");
    assert!(
        err.to_string().contains("spec.containers[0].resources.cpu"),
        "{err}"
    );
}

#[test]
fn scalar_resource_names() {
    assert!(is_scalar_resource_name("nvidia.com/gpu"));
    assert!(is_scalar_resource_name("hugepages-2Mi"));
    assert!(is_scalar_resource_name("kubernetes.io/foo"));
    assert!(!is_scalar_resource_name("foo"));
    assert!(!is_scalar_resource_name("requests.example.com/x"));
}
