//! `InterpretReplica` and `ReviseReplica`. Replica counting and requirements (requests, limits
//! standing in for missing requests, init containers, overhead, extended resources such as
//! `nvidia.com/gpu`, node claim) live in `flotilla_api::karmada::replicas`, shared with the
//! scheduler's what-if tool; this module adds the per-cluster revision.
//!
//! Kinds without a hook (CronJob, DaemonSet, …) are not workloads: no replicas, no
//! requirements, so they are propagated whole to every selected cluster, as in Karmada.

use serde_json::Value;

pub use flotilla_api::karmada::replicas::{InterpretError, InterpretedReplicas, interpret_replica};

/// The field `ReviseReplica` sets for a kind (`None`: the kind has no hook).
pub fn revise_field(api_version: &str, kind: &str) -> Option<&'static str> {
    match (api_version, kind) {
        ("apps/v1", "Deployment" | "ReplicaSet" | "StatefulSet") => Some("replicas"),
        ("batch/v1", "Job") => Some("parallelism"),
        _ => None,
    }
}

/// Sets the replicas of `object` to `replicas` (Deployment/ReplicaSet/StatefulSet
/// `spec.replicas`, Job `spec.parallelism`). Returns whether the kind has the hook.
pub fn revise_replica(object: &mut Value, replicas: i32) -> bool {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(field) = revise_field(api_version, kind) else {
        return false;
    };
    let Some(map) = object.as_object_mut() else {
        return false;
    };
    let spec = map
        .entry("spec")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Some(spec) = spec.as_object_mut() {
        spec.insert(field.to_owned(), Value::from(replicas));
    }
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    mod karmada_cases;

    #[test]
    fn revise_sets_the_kinds_replica_field() {
        let mut deployment =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 10}});
        assert!(revise_replica(&mut deployment, 5));
        assert_eq!(deployment["spec"]["replicas"], 5);
        let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "spec": {"parallelism": 4, "completions": 8}});
        assert!(revise_replica(&mut job, 2));
        assert_eq!(job["spec"], json!({"parallelism": 2, "completions": 8}));
        let mut config = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {}});
        assert!(!revise_replica(&mut config, 3));
        assert_eq!(
            config,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {}})
        );
    }

    #[test]
    fn gpu_requests_are_part_of_the_replica_requirements() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {
            "replicas": 10,
            "template": {"spec": {"containers": [{"name": "vllm", "image": "vllm",
                "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"},
                              "limits": {"nvidia.com/gpu": "2"}}}]}}}});
        let interpreted = interpret_replica(&deployment).expect("interprets");
        assert_eq!(interpreted.replicas, 10);
        let request = interpreted
            .requirements
            .and_then(|r| r.resource_request)
            .expect("requests");
        let rendered: Vec<(String, String)> = request
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        assert_eq!(
            rendered,
            vec![
                ("cpu".to_owned(), "8".to_owned()),
                ("memory".to_owned(), "64Gi".to_owned()),
                ("nvidia.com/gpu".to_owned(), "2".to_owned()),
            ]
        );
    }
}
