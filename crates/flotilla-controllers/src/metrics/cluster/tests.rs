use std::time::{Duration, UNIX_EPOCH};

use flotilla_api::karmada::{Cluster, ClusterStatus, NodeSummary, ResourceSummary};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use prometheus_client::registry::Registry;

use super::*;

fn encoded(metrics: &ClusterMetrics) -> String {
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    text
}

fn has(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "no line {line:?} in:\n{text}"
    );
}

fn list(pairs: &[(&str, &str)]) -> ResourceList {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity::parse(v).expect("a quantity")))
        .collect()
}

fn cluster(ready: &str) -> Cluster {
    let mut cluster: Cluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "gpu-east"},
        "spec": {"syncMode": "Push"},
    }))
    .expect("a cluster");
    cluster.status = Some(ClusterStatus {
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: ready.into(),
            reason: "ClusterReady".into(),
            message: String::new(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        }],
        node_summary: Some(NodeSummary {
            total_num: 24,
            ready_num: 23,
        }),
        resource_summary: Some(ResourceSummary {
            allocatable: Some(list(&[
                ("cpu", "2304"),
                ("memory", "24Ti"),
                ("pods", "2640"),
                ("nvidia.com/gpu", "192"),
            ])),
            allocated: Some(list(&[("cpu", "1500m"), ("memory", "3Gi"), ("pods", "5")])),
            ..ResourceSummary::default()
        }),
        ..ClusterStatus::default()
    });
    cluster
}

#[test]
fn status_gauges_read_the_summary_with_karmadas_names_and_units() {
    let metrics = ClusterMetrics::default();
    metrics.status(&cluster("True"));
    let text = encoded(&metrics);
    has(
        &text,
        "cluster_ready_state{member_cluster=\"gpu-east\"} 1.0",
    );
    has(
        &text,
        "cluster_node_number{member_cluster=\"gpu-east\"} 24.0",
    );
    has(
        &text,
        "cluster_ready_node_number{member_cluster=\"gpu-east\"} 23.0",
    );
    has(
        &text,
        "cluster_cpu_allocatable_number{member_cluster=\"gpu-east\"} 2304.0",
    );
    has(
        &text,
        "cluster_memory_allocatable_bytes{member_cluster=\"gpu-east\"} 26388279066624.0",
    );
    has(
        &text,
        "cluster_pod_allocatable_number{member_cluster=\"gpu-east\"} 2640.0",
    );
    has(
        &text,
        "cluster_cpu_allocated_number{member_cluster=\"gpu-east\"} 1.5",
    );
    has(
        &text,
        "cluster_memory_allocated_bytes{member_cluster=\"gpu-east\"} 3221225472.0",
    );
    has(
        &text,
        "cluster_pod_allocated_number{member_cluster=\"gpu-east\"} 5.0",
    );
    has(
        &text,
        "flotilla_cluster_gpu_allocatable_number{member_cluster=\"gpu-east\"} 192.0",
    );
    // No GPU requested: zero, as Karmada reads a missing resource.
    has(
        &text,
        "flotilla_cluster_gpu_allocated_number{member_cluster=\"gpu-east\"} 0.0",
    );

    metrics.status(&cluster("False"));
    has(
        &encoded(&metrics),
        "cluster_ready_state{member_cluster=\"gpu-east\"} 0.0",
    );
}

#[test]
fn probes_count_by_result_and_time_into_karmadas_buckets() {
    let metrics = ClusterMetrics::default();
    metrics.probe("gpu-east", true, true, Duration::from_millis(7));
    metrics.probe("gpu-east", true, false, Duration::from_millis(30));
    metrics.probe("gpu-east", false, false, Duration::from_secs(3));
    let text = encoded(&metrics);
    has(
        &text,
        "cluster_health_probe_total{member_cluster=\"gpu-east\",result=\"success\"} 1",
    );
    has(
        &text,
        "cluster_health_probe_total{member_cluster=\"gpu-east\",result=\"error\"} 2",
    );
    has(
        &text,
        "cluster_health_probe_success{member_cluster=\"gpu-east\"} 0.0",
    );
    has(
        &text,
        "cluster_health_probe_duration_seconds_bucket{le=\"0.01\",member_cluster=\"gpu-east\"} 1",
    );
    has(
        &text,
        "cluster_health_probe_duration_seconds_bucket{le=\"5.0\",member_cluster=\"gpu-east\"} 3",
    );
    has(
        &text,
        "cluster_health_probe_duration_seconds_count{member_cluster=\"gpu-east\"} 3",
    );
}

#[test]
fn transitions_move_the_timestamps_and_count_only_real_changes() {
    let metrics = ClusterMetrics::default();
    let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    metrics.transition("gpu-east", None, "True", at);
    metrics.transition(
        "gpu-east",
        Some("True"),
        "True",
        at + Duration::from_secs(5),
    );
    let text = encoded(&metrics);
    has(
        &text,
        "cluster_ready_since_timestamp_seconds{member_cluster=\"gpu-east\"} 1700000000.0",
    );
    has(
        &text,
        "cluster_health_transitions_total{member_cluster=\"gpu-east\",from_state=\"Unknown\",to_state=\"True\"} 1",
    );
    metrics.transition(
        "gpu-east",
        Some("True"),
        "False",
        at + Duration::from_secs(60),
    );
    let text = encoded(&metrics);
    has(
        &text,
        "cluster_ready_since_timestamp_seconds{member_cluster=\"gpu-east\"} 0.0",
    );
    has(
        &text,
        "cluster_condition_last_transition_timestamp_seconds{member_cluster=\"gpu-east\"} 1700000060.0",
    );
    has(
        &text,
        "cluster_health_transitions_total{member_cluster=\"gpu-east\",from_state=\"True\",to_state=\"False\"} 1",
    );
}

#[test]
fn a_forgotten_cluster_has_no_series_left() {
    let metrics = ClusterMetrics::default();
    metrics.status(&cluster("True"));
    metrics.probe("gpu-east", true, true, Duration::from_millis(7));
    metrics.synced("gpu-east", Duration::from_millis(12));
    metrics.transition("gpu-east", None, "True", UNIX_EPOCH);
    assert!(encoded(&metrics).contains("gpu-east"));
    metrics.forget("gpu-east");
    let text = encoded(&metrics);
    assert!(!text.contains("gpu-east"), "{text}");
}
