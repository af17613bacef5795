use std::time::Duration;

use prometheus_client::registry::Registry;
use tokio::time::Instant;

use super::*;

fn encoded(metrics: &Metrics) -> String {
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

fn web() -> TemplateId {
    TemplateId {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: "default".into(),
        name: "web".into(),
    }
}

#[test]
fn policy_and_work_metrics_carry_karmadas_names_labels_and_buckets() {
    let metrics = Metrics::default();
    metrics.observe_match_policy(Duration::from_millis(3));
    metrics.observe_apply_policy(true, Duration::from_millis(2));
    metrics.observe_apply_policy(true, Duration::from_millis(2));
    metrics.observe_apply_policy(false, Duration::from_millis(5));
    metrics.observe_sync_work(true, Duration::from_millis(1));
    metrics.observe_sync_workload(false, Duration::from_secs(3));
    metrics.count_preemption(true);
    let text = encoded(&metrics);
    has(
        &text,
        "karmada_policy_apply_attempts_total{result=\"success\"} 2",
    );
    has(
        &text,
        "karmada_policy_preemption_total{result=\"success\"} 1",
    );
    has(&text, "policy_preemption_total{result=\"success\"} 1");
    has(
        &text,
        "karmada_policy_apply_attempts_total{result=\"error\"} 1",
    );
    // Karmada's own (unprefixed) name serves the same series.
    has(&text, "policy_apply_attempts_total{result=\"success\"} 2");
    has(
        &text,
        "karmada_resource_match_policy_duration_seconds_count 1",
    );
    has(&text, "resource_match_policy_duration_seconds_count 1");
    has(
        &text,
        "karmada_resource_apply_policy_duration_seconds_count{result=\"error\"} 1",
    );
    has(
        &text,
        "karmada_binding_sync_work_duration_seconds_count{result=\"success\"} 1",
    );
    // ExponentialBuckets(0.001, 2, 12): the last finite bucket is 2.048 s; 3 s lands in +Inf.
    has(
        &text,
        "karmada_work_sync_workload_duration_seconds_bucket{le=\"2.048\",result=\"error\"} 0",
    );
    has(
        &text,
        "karmada_work_sync_workload_duration_seconds_bucket{le=\"+Inf\",result=\"error\"} 1",
    );
    has(
        &text,
        "work_sync_workload_duration_seconds_count{result=\"error\"} 1",
    );
}

#[test]
fn member_operations_are_counted_per_result_kind_and_cluster() {
    let metrics = Metrics::default();
    metrics.count_create(true, "apps/v1", "Deployment", "m1");
    metrics.count_create(false, "apps/v1", "Deployment", "m1");
    metrics.count_update(true, "v1", "ConfigMap", "m2", UpdateResult::Updated);
    metrics.count_update(true, "v1", "ConfigMap", "m2", UpdateResult::None);
    metrics.count_update(false, "v1", "ConfigMap", "m2", UpdateResult::None);
    metrics.count_delete(true, "apps/v1", "Deployment", "m1");
    let text = encoded(&metrics);
    has(
        &text,
        "karmada_create_resource_to_cluster_total{result=\"success\",apiversion=\"apps/v1\",kind=\"Deployment\",member_cluster=\"m1\"} 1",
    );
    has(
        &text,
        "karmada_create_resource_to_cluster_total{result=\"error\",apiversion=\"apps/v1\",kind=\"Deployment\",member_cluster=\"m1\"} 1",
    );
    has(
        &text,
        "karmada_update_resource_to_cluster_total{result=\"success\",apiversion=\"v1\",kind=\"ConfigMap\",member_cluster=\"m2\",operationResult=\"updated\"} 1",
    );
    has(
        &text,
        "karmada_update_resource_to_cluster_total{result=\"success\",apiversion=\"v1\",kind=\"ConfigMap\",member_cluster=\"m2\",operationResult=\"none\"} 1",
    );
    has(
        &text,
        "karmada_update_resource_to_cluster_total{result=\"error\",apiversion=\"v1\",kind=\"ConfigMap\",member_cluster=\"m2\",operationResult=\"none\"} 1",
    );
    has(
        &text,
        "karmada_delete_resource_from_cluster_total{result=\"success\",apiversion=\"apps/v1\",kind=\"Deployment\",member_cluster=\"m1\"} 1",
    );
}

#[test]
fn the_agent_registers_only_the_member_side_metrics() {
    let metrics = Metrics::default();
    metrics.observe_sync_workload(true, Duration::from_millis(1));
    metrics.observe_apply_policy(true, Duration::from_millis(1));
    let mut registry = Registry::default();
    metrics.register_member_side(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    has(
        &text,
        "karmada_work_sync_workload_duration_seconds_count{result=\"success\"} 1",
    );
    assert!(!text.contains("policy_apply_attempts"), "{text}");
}

#[tokio::test(start_paused = true)]
async fn propagation_latency_runs_from_the_change_to_every_member_at_its_generation() {
    let metrics = Metrics::default();
    let t0 = Instant::now();
    // Generation 1 came with the initial list (a restart): no clock.
    metrics.template_seen(web(), 1, true, t0);
    assert_eq!(metrics.pending_templates(), 0);
    metrics.template_seen(web(), 2, false, t0);
    // The detector sees the same generation again (its own claim patch, a label edit): the
    // clock keeps t0.
    metrics.template_seen(web(), 2, false, t0 + Duration::from_millis(50));
    metrics.template_seen(web(), 3, false, t0 + Duration::from_millis(100));
    // Members still at generation 1: nothing observed.
    metrics.template_applied(&web(), 1, t0 + Duration::from_millis(200));
    assert_eq!(metrics.pending_templates(), 1);
    metrics.template_applied(&web(), 2, t0 + Duration::from_millis(300));
    let text = encoded(&metrics);
    has(&text, "karmada_propagation_latency_seconds_count 1");
    has(&text, "karmada_propagation_latency_seconds_sum 0.3");
    // Generation 3, changed at 100 ms, is everywhere at 400 ms: 0.3 s again.
    metrics.template_applied(&web(), 3, t0 + Duration::from_millis(400));
    let text = encoded(&metrics);
    has(&text, "karmada_propagation_latency_seconds_count 2");
    has(
        &text,
        "karmada_propagation_latency_seconds_bucket{le=\"0.256\"} 0",
    );
    has(
        &text,
        "karmada_propagation_latency_seconds_bucket{le=\"0.512\"} 2",
    );
    has(
        &text,
        "karmada_propagation_latency_seconds_bucket{le=\"131.072\"} 2",
    );
    assert_eq!(metrics.pending_templates(), 0);
    // Once observed, a later status update of the same generation observes nothing more, and
    // an edit that keeps the generation starts no clock.
    metrics.template_applied(&web(), 3, t0 + Duration::from_secs(5));
    metrics.template_seen(web(), 3, false, t0 + Duration::from_secs(6));
    assert_eq!(metrics.pending_templates(), 0);
    has(
        &encoded(&metrics),
        "karmada_propagation_latency_seconds_count 2",
    );
}

#[tokio::test(start_paused = true)]
async fn a_deleted_or_never_converging_template_keeps_a_bounded_clock() {
    let metrics = Metrics::default();
    let t0 = Instant::now();
    for generation in 1..=40 {
        metrics.template_seen(web(), generation, false, t0);
    }
    assert_eq!(
        metrics.pending.lock()[&web()].1.len(),
        MAX_PENDING_PER_TEMPLATE
    );
    metrics.template_deleted(&web());
    assert_eq!(metrics.pending_templates(), 0);
    metrics.template_applied(&web(), 40, t0);
    has(
        &encoded(&metrics),
        "karmada_propagation_latency_seconds_count 0",
    );
}

#[test]
fn binding_status_counts_each_binding_once_in_its_current_state() {
    let metrics = Metrics::default();
    metrics.binding_state("default/a".into(), BindingState::Pending);
    metrics.binding_state("default/b".into(), BindingState::Pending);
    metrics.binding_state("default/a".into(), BindingState::Applied);
    metrics.binding_state("default/a".into(), BindingState::Applied);
    metrics.binding_state("crb".into(), BindingState::NotApplied);
    let text = encoded(&metrics);
    has(&text, "karmada_binding_status{status=\"Applied\"} 1");
    has(&text, "karmada_binding_status{status=\"Pending\"} 1");
    has(&text, "karmada_binding_status{status=\"NotApplied\"} 1");
    metrics.binding_deleted("default/b");
    metrics.binding_deleted("never-seen");
    has(
        &encoded(&metrics),
        "karmada_binding_status{status=\"Pending\"} 0",
    );
    metrics.reset_bindings();
    let text = encoded(&metrics);
    has(&text, "karmada_binding_status{status=\"Applied\"} 0");
    has(&text, "karmada_binding_status{status=\"NotApplied\"} 0");
}

#[test]
fn federated_hpa_metrics_carry_karmadas_names_labels_and_buckets() {
    let metrics = Metrics::default();
    metrics.observe_fhpa(true, Duration::from_millis(15));
    metrics.observe_fhpa_pull(false, "ResourceMetric", Duration::from_millis(5));
    let text = encoded(&metrics);
    for prefix in ["", "karmada_"] {
        has(
            &text,
            &format!("{prefix}federatedhpa_process_duration_seconds_count{{result=\"success\"}} 1"),
        );
        has(
            &text,
            &format!(
                "{prefix}federatedhpa_process_duration_seconds_bucket{{le=\"0.02\",result=\"success\"}} 1"
            ),
        );
        has(
            &text,
            &format!(
                "{prefix}federatedhpa_pull_metrics_duration_seconds_count{{result=\"error\",metricType=\"ResourceMetric\"}} 1"
            ),
        );
    }
}
