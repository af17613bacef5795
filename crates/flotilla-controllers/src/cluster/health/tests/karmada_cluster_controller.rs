//! Karmada's `cluster_controller_test.go` (`pkg/controllers/cluster`) restated against the
//! cluster controller's pure decisions. `TestController_Reconcile`: the taints one reconcile
//! leaves on a cluster (`desired_taints`; the execution space and finalizer writes are
//! plumbing against a fake client). `TestController_monitorClusterHealth`: the Ready condition
//! the health monitor writes for a `Pull` cluster (Karmada's test controller has no startup
//! grace period, its monitor grace is 40 s and there is no Lease).

use super::*;

/// (key, effect) of each taint, as Karmada's test compares them (`timeAdded` cleared).
fn key_effects(taints: &[Taint]) -> Vec<(String, String)> {
    taints
        .iter()
        .map(|t| (t.key.clone(), t.effect.clone()))
        .collect()
}

#[test]
fn one_reconcile_leaves_the_taints_the_ready_condition_calls_for() {
    const NR: &str = TAINT_CLUSTER_NOT_READY;
    const UR: &str = TAINT_CLUSTER_UNREACHABLE;
    type Row = (
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        &'static [&'static str],
    );
    let rows: [Row; 4] = [
        ("cluster without status", None, &[], &[NR]),
        ("ready condition", Some("True"), &[NR], &[]),
        ("unknown condition", Some("Unknown"), &[NR], &[UR]),
        ("false condition", Some("False"), &[UR], &[NR]),
    ];
    for (desc, ready, before, after) in rows {
        let before: Vec<serde_json::Value> = before
            .iter()
            .map(|k| json!({"key": k, "effect": "NoSchedule"}))
            .collect();
        let cluster = cluster("Push", ready, json!(before));
        let taints = desired_taints(&cluster, wall()).unwrap_or_else(|| panic!("{desc}: changed"));
        let want: Vec<(String, String)> = after
            .iter()
            .map(|k| ((*k).to_owned(), "NoSchedule".to_owned()))
            .collect();
        assert_eq!(key_effects(&taints), want, "{desc}");
        // A second reconcile of the result changes nothing.
        let mut settled = cluster.clone();
        settled.spec.taints = taints;
        assert!(
            desired_taints(&settled, wall()).is_none(),
            "{desc}: settled"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_pull_cluster_that_never_reported_is_marked_unknown_once_the_grace_is_over() {
    let timings = MonitorTimings {
        startup_grace: Duration::ZERO,
        grace: Duration::from_secs(40),
        ..MonitorTimings::default()
    };
    let mut monitor = HealthMonitor::default();
    let never = cluster("Pull", None, json!([]));
    let condition = monitor
        .observe(&never, None, Instant::now(), wall(), &timings)
        .expect("marked unknown");
    assert_eq!(
        (
            condition.type_.as_str(),
            condition.status.as_str(),
            condition.reason.as_str(),
            condition.message.as_str()
        ),
        (
            "Ready",
            "Unknown",
            "ClusterStatusNeverUpdated",
            "Cluster status controller never posted cluster status."
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_pull_cluster_that_just_reported_ready_is_left_alone() {
    let timings = MonitorTimings {
        startup_grace: Duration::ZERO,
        grace: Duration::from_secs(40),
        ..MonitorTimings::default()
    };
    let mut monitor = HealthMonitor::default();
    let ready = cluster("Pull", Some("True"), json!([]));
    assert!(
        monitor
            .observe(&ready, None, Instant::now(), wall(), &timings)
            .is_none()
    );
}
