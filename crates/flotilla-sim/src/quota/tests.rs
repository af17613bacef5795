use serde_json::json;

use super::*;

fn pod(
    name: &str,
    priority: Option<&str>,
    phase: &str,
    cpu: &str,
    limit: Option<&str>,
) -> Arc<Pod> {
    let mut resources = json!({"requests": {"cpu": cpu, "memory": "16Mi", "nvidia.com/gpu": "1"}});
    if let Some(limit) = limit {
        resources["limits"] = json!({"cpu": limit});
    }
    let mut spec = json!({"containers": [{"name": "c", "image": "x", "resources": resources}]});
    if let Some(priority) = priority {
        spec["priorityClassName"] = json!(priority);
    }
    Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
            "spec": spec, "status": {"phase": phase}}))
        .expect("a pod"),
    )
}

fn quota(spec: serde_json::Value, status: serde_json::Value) -> ResourceQuota {
    serde_json::from_value(json!({"metadata": {"name": "q", "namespace": "ns"},
        "spec": spec, "status": status}))
    .expect("a quota")
}

#[test]
fn used_counts_the_requests_and_limits_of_unfinished_pods() {
    let pods = [
        pod("a", None, "Running", "10m", Some("100m")),
        pod("b", None, "Pending", "20m", None),
        pod("done", None, "Succeeded", "500m", None),
    ];
    let q = quota(
        json!({"hard": {"requests.cpu": "0.03", "cpu": "1", "limits.cpu": "1",
            "requests.memory": "1Gi", "requests.nvidia.com/gpu": "4", "pods": "10",
            "count/deployments.apps": "5"}}),
        json!({}),
    );
    let patch = status_patch(&q, &pods).expect("a status to write");
    assert_eq!(
        patch,
        json!({"status": {
            "hard": {"requests.cpu": "0.03", "cpu": "1", "limits.cpu": "1",
                "requests.memory": "1Gi", "requests.nvidia.com/gpu": "4", "pods": "10",
                "count/deployments.apps": "5"},
            "used": {"requests.cpu": "30m", "cpu": "30m", "limits.cpu": "100m",
                "requests.memory": "32Mi", "requests.nvidia.com/gpu": "2", "pods": "2"},
        }})
    );
    // Written once: nothing more to patch while nothing changes.
    let current = quota(
        json!({"hard": {"requests.cpu": "0.03"}}),
        json!({"hard": {"requests.cpu": "0.03"}, "used": {"requests.cpu": "30m"}}),
    );
    assert_eq!(status_patch(&current, &pods), None);
    // A name dropped from spec.hard is removed from the status.
    let shrunk = quota(
        json!({"hard": {"pods": "10"}}),
        json!({"hard": {"requests.cpu": "0.03", "pods": "10"}, "used": {"requests.cpu": "30m", "pods": "2"}}),
    );
    assert_eq!(
        status_patch(&shrunk, &pods),
        Some(
            json!({"status": {"hard": {"pods": "10", "requests.cpu": null},
            "used": {"pods": "2", "requests.cpu": null}}})
        )
    );
}

#[test]
fn scopes_select_the_pods_counted() {
    let pods = [
        pod("high", Some("high"), "Running", "10m", None),
        pod("plain", None, "Running", "20m", None),
    ];
    let used = |spec: serde_json::Value| {
        let mut spec = spec;
        spec["hard"] = json!({"requests.cpu": "1"});
        status_patch(&quota(spec, json!({})), &pods).expect("a patch")["status"]["used"]
            ["requests.cpu"]
            .clone()
    };
    assert_eq!(
        used(json!({"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}})),
        json!("10m")
    );
    assert_eq!(
        used(json!({"scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "DoesNotExist"}]}})),
        json!("20m")
    );
    assert_eq!(used(json!({"scopes": ["NotBestEffort"]})), json!("30m"));
    assert_eq!(used(json!({"scopes": ["BestEffort"]})), json!("0"));
}
