use std::sync::Arc;

use serde_json::json;

use super::*;

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut spec = json!({"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": "100m"}}}], "restartPolicy": "Always"});
    if let Some(node) = node {
        spec["nodeName"] = node.into();
    }
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default",
            "managedFields": [{"manager": "kubelet", "operation": "Update",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}}]},
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
            "conditions": [{"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"},
                {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                "imageID": "registry.k8s.io/pause@sha256:00", "containerID": "containerd://01",
                "ready": true, "restartCount": 2, "started": true,
                "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}}}],
            "hostIP": "172.16.0.1", "podIP": "10.0.1.2", "qosClass": "Burstable"}}))
    .expect("a pod")
}

#[test]
fn pods_of_one_spec_share_it_and_keep_their_node() {
    let a = pod("a", Some("node-1"));
    let b = pod("b", Some("node-2"));
    let c = pod("c", None);
    let (sa, sb, sc) = (
        a.spec.as_ref().expect("a spec"),
        b.spec.as_ref().expect("a spec"),
        c.spec.as_ref().expect("a spec"),
    );
    assert!(Arc::ptr_eq(&sa.shared, &sb.shared));
    assert!(Arc::ptr_eq(&sa.shared, &sc.shared));
    assert_eq!(a.node_name(), "node-1");
    assert_eq!(b.node_name(), "node-2");
    assert_eq!(c.node_name(), "");
    assert_eq!(sa.node_name.as_deref(), Some("node-1"));
    assert_eq!(sa.containers[0].name, "c");
    assert_eq!(sa.restart_policy.as_deref(), Some("Always"));
}

#[test]
fn a_different_spec_is_not_shared() {
    let a = pod("a", Some("node-1"));
    let other: Pod = serde_json::from_value(json!({"metadata": {"name": "x"},
        "spec": {"containers": [{"name": "c", "image": "other"}], "nodeName": "node-1"}}))
    .expect("a pod");
    let (sa, so) = (
        a.spec.as_ref().expect("a spec"),
        other.spec.as_ref().expect("a spec"),
    );
    assert!(!Arc::ptr_eq(&sa.shared, &so.shared));
    assert_eq!(so.containers[0].image.as_deref(), Some("other"));
}

#[test]
fn status_fields_the_loops_read() {
    let a = pod("a", Some("node-1"));
    let status = a.status.expect("a status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(a.metadata.name.as_deref(), Some("a"));
    assert_eq!(a.metadata.namespace.as_deref(), Some("default"));
    let kept: Vec<String> = status
        .conditions
        .expect("conditions")
        .iter()
        .map(|c| c.type_.clone())
        .collect();
    assert_eq!(kept, ["Ready", "PodScheduled"]);
    assert!(status.start_time.is_some());
    let c = &status.container_statuses.expect("container statuses")[0];
    assert_eq!((c.name.as_str(), c.restart_count), ("c", 2));
    assert!(c.state.as_ref().and_then(|s| s.running.as_ref()).is_some());
    assert_eq!(status.pod_ip, Some(std::net::IpAddr::from([10, 0, 1, 2])));
}

#[test]
fn pods_with_the_same_conditions_share_them() {
    let (a, b) = (pod("a", Some("node-1")), pod("b", Some("node-2")));
    let conditions = |p: &Pod| {
        p.status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .expect("conditions")
    };
    assert!(Arc::ptr_eq(&conditions(&a), &conditions(&b)));
    let later: Pod = serde_json::from_value(json!({"metadata": {"name": "c"},
        "status": {"conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:09Z"}]}}))
    .expect("a pod");
    let later = conditions(&later);
    assert!(!Arc::ptr_eq(&conditions(&a), &later));
    assert_eq!(later.len(), 1);
    assert!(later[0].last_transition_time.is_some());
}
