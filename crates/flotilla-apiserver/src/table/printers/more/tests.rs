use serde_json::json;

use super::*;

#[test]
fn hpa_targets_read_as_kubectl_prints_them() {
    let hpa = json!({
        "spec": {"metrics": [
            {"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "10"}}},
        ]},
        "status": {"currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 42, "averageValue": "210m"}}},
        ]},
    });
    assert_eq!(
        hpa_targets(&hpa),
        "cpu: 42%/80%, memory: <unknown>/500Mi + 1 more..."
    );
    assert_eq!(hpa_targets(&json!({"spec": {}})), "<none>");
    let external = json!({"spec": {"metrics": [
        {"type": "External", "external": {"metric": {"name": "queue"},
            "target": {"type": "Value", "value": "30"}}},
        {"type": "Object", "object": {"metric": {"name": "rps"},
            "target": {"type": "AverageValue", "averageValue": "5"}}},
    ]}, "status": {"currentMetrics": [
        {"type": "External", "external": {"current": {"value": "12"}}},
    ]}});
    assert_eq!(hpa_targets(&external), "12/30, <unknown>/5 (avg)");
}

#[test]
fn ingress_hosts_stop_at_three() {
    let rules = json!([{"host": "a"}, {}, {"host": "b"}, {"host": "c"}, {"host": "d"}]);
    assert_eq!(ingress_hosts(&rules), "a,b,c + 2 more...");
    assert_eq!(ingress_hosts(&json!([{}])), "*");
    assert_eq!(
        ingress_hosts(&json!([{"host": "a"}, {"host": "b"}, {"host": "c"}])),
        "a,b,c"
    );
    assert_eq!(
        load_balancer_addresses(&json!({"ingress": [{"hostname": "lb.example.com"},
            {"ip": "10.0.0.2"}, {"ip": "10.0.0.2"}]})),
        "10.0.0.2,lb.example.com"
    );
}

#[test]
fn quota_columns_split_requests_and_limits() {
    let status = json!({
        "hard": {"requests.cpu": "4", "limits.cpu": "8", "pods": "10", "limits": "1"},
        "used": {"requests.cpu": "500m", "pods": "3"},
    });
    assert_eq!(
        quota_columns(&status),
        (
            "limits: 0/1, pods: 3/10, requests.cpu: 500m/4".to_owned(),
            "limits.cpu: 0/8".to_owned()
        )
    );
}

#[test]
fn small_formats_follow_kube() {
    assert_eq!(int_or_string(&json!(2)), "2");
    assert_eq!(int_or_string(&json!("25%")), "25%");
    assert_eq!(int_or_string(&Value::Null), "N/A");
    assert_eq!(
        access_modes(&json!(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"])),
        "RWO,RWX"
    );
    assert_eq!(format_labels(&json!({})), "<none>");
    assert_eq!(label_selector(&json!({})), "<none>");
    assert_eq!(
        controller_of(&json!({"metadata": {"ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": true}]}})),
        "statefulset.apps/db"
    );
    assert_eq!(controller_of(&json!({"metadata": {}})), "<none>");
    assert_eq!(
        storage_class(&json!({"metadata": {"annotations": {
            "volume.beta.kubernetes.io/storage-class": "old"}},
            "spec": {"storageClassName": "new"}})),
        "old"
    );
}

#[test]
fn endpoints_list_three_addresses_then_count_the_rest() {
    assert_eq!(endpoints(&Value::Null), "<none>");
    let subsets = json!([
        {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]},
        {"addresses": [{"ip": "fd00::1"}]},
    ]);
    assert_eq!(
        endpoints(&subsets),
        "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more..."
    );
    assert_eq!(
        endpoints(&json!([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 53}]}])),
        "[fd00::1]:53"
    );
}
