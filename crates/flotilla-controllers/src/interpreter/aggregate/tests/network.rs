//! Service, Ingress and PodDisruptionBudget.

use serde_json::{Value, json};

use super::{aggregate_status, item};

fn lb_status(template: &Value, members: &[Value]) -> Value {
    let items: Vec<_> = members
        .iter()
        .enumerate()
        .map(|(i, ingress)| {
            item(
                &format!("m{i}"),
                Some(json!({"loadBalancer": {"ingress": ingress}})),
            )
        })
        .collect();
    aggregate_status(template, &items).expect("hook")
}

fn service() -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"},
        "status": {"loadBalancer": {}, "conditions": [{"type": "X", "status": "True"}]}})
}

#[test]
fn load_balancer_ingress_is_the_sorted_union() {
    let status = lb_status(
        &service(),
        &[
            json!([{"ip": "10.0.0.2"}]),
            json!([{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]),
        ],
    );
    // A new status: the template's conditions are not kept.
    assert_eq!(
        status,
        json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}})
    );
    let cluster_ip = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}});
    assert!(aggregate_status(&cluster_ip, &[]).is_none());
    assert_eq!(
        lb_status(&service(), &[json!([])]),
        json!({"loadBalancer": {}})
    );
}

#[test]
fn service_entries_merge_ports_and_sort_by_hostname_ip_and_ip_mode() {
    let status = lb_status(
        &service(),
        &[
            json!([
                {"ip": "10.0.0.9", "ipMode": "VIP",
                    "ports": [{"port": 443, "protocol": "TCP"}]},
                {"ip": "10.0.0.1"},
                {"hostname": "b.example", "ports": [{"port": 80, "protocol": "TCP"}]},
                {"ip": "10.0.0.9", "ipMode": "Proxy", "extra": "dropped"},
            ]),
            json!([
                {"ip": "10.0.0.9", "ipMode": "VIP", "ports": [
                    {"port": 80, "protocol": "TCP"},
                    {"port": 443, "protocol": "TCP"},
                    {"port": 80, "protocol": "TCP", "error": "Pending"},
                    {"port": 80, "protocol": "SCTP"}]},
                {"ip": "10.0.0.9"},
                {"hostname": "a.example", "ip": "10.0.0.5"},
                {"hostname": "b.example", "ports": [{"port": 53, "protocol": "UDP"}]},
            ]),
        ],
    );
    assert_eq!(
        status["loadBalancer"]["ingress"],
        json!([
            {"hostname": "a.example", "ip": "10.0.0.5"},
            {"hostname": "b.example", "ports": [
                {"port": 53, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}]},
            {"ip": "10.0.0.1"},
            {"ip": "10.0.0.9", "ipMode": "Proxy"},
            {"ip": "10.0.0.9", "ipMode": "VIP", "ports": [
                {"port": 80, "protocol": "SCTP"},
                {"port": 80, "protocol": "TCP"},
                {"port": 80, "protocol": "TCP", "error": "Pending"},
                {"port": 443, "protocol": "TCP"}]},
            {"ip": "10.0.0.9"},
        ])
    );
}

#[test]
fn ingress_entries_merge_by_hostname_and_ip_only() {
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}}});
    let status = lb_status(
        &ingress,
        &[
            json!([{"ip": "10.0.0.9", "ports": [{"port": 443, "protocol": "TCP"}]}]),
            json!([{"ip": "10.0.0.9", "ipMode": "VIP",
                "ports": [{"port": 80, "protocol": "TCP"}]}]),
        ],
    );
    assert_eq!(
        status,
        json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.9", "ports": [
            {"port": 80, "protocol": "TCP"}, {"port": 443, "protocol": "TCP"}]}]}})
    );
}

#[test]
fn pdb_status_is_new_with_disrupted_pods_per_cluster() {
    let template = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "status": {"observedGeneration": 4, "currentHealthy": 9,
            "conditions": [{"type": "DisruptionAllowed", "status": "True"}],
            "disruptedPods": {"gone": "2026-01-01T00:00:00Z"}}});
    let member = |disrupted: Value| {
        json!({"currentHealthy": 0, "desiredHealthy": 1, "disruptionsAllowed": 0,
            "expectedPods": 1, "disruptedPods": disrupted})
    };
    let status = aggregate_status(
        &template,
        &[
            item(
                "member1",
                Some(member(json!({"pod-1": "2026-01-01T00:00:01Z"}))),
            ),
            item(
                "member2",
                Some(member(json!({"pod-1": "2026-01-01T00:00:02Z"}))),
            ),
            item("member3", None),
        ],
    )
    .expect("hook");
    assert_eq!(
        status,
        json!({"currentHealthy": 0, "desiredHealthy": 2, "disruptionsAllowed": 0,
            "expectedPods": 2, "disruptedPods": {
                "member1/pod-1": "2026-01-01T00:00:01Z",
                "member2/pod-1": "2026-01-01T00:00:02Z"}})
    );
    let healthy =
        aggregate_status(&template, &[item("member1", Some(member(json!({}))))]).expect("hook");
    assert_eq!(
        healthy,
        json!({"currentHealthy": 0, "desiredHealthy": 1, "disruptionsAllowed": 0,
            "expectedPods": 1})
    );
}
