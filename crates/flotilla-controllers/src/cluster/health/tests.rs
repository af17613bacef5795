use serde_json::json;

use super::*;

// Karmada's own `SetCurrentClusterTaints` / `TaintExists` cases, restated.
mod karmada_taints;
// Karmada's cluster-controller cases (`cluster_controller_test.go`), restated.
mod karmada_cluster_controller;

fn cluster(mode: &str, ready: Option<&str>, taints: serde_json::Value) -> Cluster {
    let mut status = json!({});
    if let Some(ready) = ready {
        status = json!({"conditions": [{"type": "Ready", "status": ready, "reason": "R",
            "message": "m", "lastTransitionTime": "2026-12-01T00:00:00Z"}]});
    }
    serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "m1"},
        "spec": {"syncMode": mode, "taints": taints},
        "status": status,
    }))
    .expect("a cluster")
}

fn wall() -> Time {
    Time("2026-12-03T00:00:00Z".parse().expect("a timestamp"))
}

fn keys(taints: &[Taint]) -> Vec<&str> {
    taints.iter().map(|t| t.key.as_str()).collect()
}

#[test]
fn taints_follow_the_ready_condition() {
    let user = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    // No condition yet: not-ready.
    let t = desired_taints(&cluster("Push", None, user.clone()), wall()).expect("changed");
    assert_eq!(keys(&t), ["dedicated", TAINT_CLUSTER_NOT_READY]);
    assert_eq!(t[1].effect, "NoSchedule");
    assert_eq!(t[1].time_added, Some(wall()));
    // False with unreachable present: swapped.
    let both = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
        {"key": TAINT_CLUSTER_UNREACHABLE, "effect": "NoSchedule"}]);
    let t = desired_taints(&cluster("Push", Some("False"), both.clone()), wall()).expect("changed");
    assert_eq!(keys(&t), ["dedicated", TAINT_CLUSTER_NOT_READY]);
    // Unknown: unreachable.
    let t =
        desired_taints(&cluster("Push", Some("Unknown"), user.clone()), wall()).expect("changed");
    assert_eq!(keys(&t), ["dedicated", TAINT_CLUSTER_UNREACHABLE]);
    assert!(desired_taints(&cluster("Push", Some("Unknown"), both.clone()), wall()).is_none());
    // True: both removed, the user's taint stays.
    let t = desired_taints(&cluster("Push", Some("True"), both), wall()).expect("changed");
    assert_eq!(keys(&t), ["dedicated"]);
    assert!(desired_taints(&cluster("Push", Some("True"), user), wall()).is_none());
}

#[test]
fn a_noexecute_taint_with_the_same_key_is_not_mistaken_for_ours() {
    let taints = json!([{"key": TAINT_CLUSTER_NOT_READY, "effect": "NoExecute"}]);
    let t = desired_taints(&cluster("Push", Some("False"), taints), wall()).expect("changed");
    assert_eq!(
        t.len(),
        2,
        "the NoSchedule taint is added beside the NoExecute one"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pull_cluster_goes_unknown_when_its_lease_stops_and_push_clusters_never_do() {
    let timings = MonitorTimings::default();
    let mut monitor = HealthMonitor::default();
    let pull = cluster("Pull", Some("True"), json!([]));
    let renew = |s: &str| MicroTime(s.parse().expect("a timestamp"));
    let start = Instant::now();
    assert!(
        monitor
            .observe(
                &pull,
                Some(&renew("2026-12-03T00:00:00Z")),
                start,
                wall(),
                &timings
            )
            .is_none()
    );
    // Renewed at 30 s: the grace restarts.
    let t30 = start + Duration::from_secs(30);
    assert!(
        monitor
            .observe(
                &pull,
                Some(&renew("2026-12-03T00:00:30Z")),
                t30,
                wall(),
                &timings
            )
            .is_none()
    );
    // 69 s: 39 s since the last renewal, within grace.
    let t69 = start + Duration::from_secs(69);
    assert!(
        monitor
            .observe(
                &pull,
                Some(&renew("2026-12-03T00:00:30Z")),
                t69,
                wall(),
                &timings
            )
            .is_none()
    );
    // 70 s: 40 s without a renewal.
    let t70 = start + Duration::from_secs(70);
    let condition = monitor
        .observe(
            &pull,
            Some(&renew("2026-12-03T00:00:30Z")),
            t70,
            wall(),
            &timings,
        )
        .expect("Unknown");
    assert_eq!(condition.status, "Unknown");
    assert_eq!(condition.reason, "ClusterStatusUnknown");
    assert_eq!(
        condition.message,
        "Cluster status controller stopped posting cluster status."
    );

    let mut monitor = HealthMonitor::default();
    let push = cluster("Push", Some("True"), json!([]));
    assert!(
        monitor
            .observe(&push, None, start, wall(), &timings)
            .is_none()
    );
    assert!(
        monitor
            .observe(
                &push,
                None,
                start + Duration::from_secs(3600),
                wall(),
                &timings
            )
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn a_pull_cluster_that_never_reported_gets_the_startup_grace() {
    let timings = MonitorTimings::default();
    let mut monitor = HealthMonitor::default();
    let fresh = cluster("Pull", None, json!([]));
    let start = Instant::now();
    assert!(
        monitor
            .observe(&fresh, None, start, wall(), &timings)
            .is_none()
    );
    let t59 = start + Duration::from_secs(59);
    assert!(
        monitor
            .observe(&fresh, None, t59, wall(), &timings)
            .is_none()
    );
    let condition = monitor
        .observe(
            &fresh,
            None,
            start + Duration::from_secs(60),
            wall(),
            &timings,
        )
        .expect("never updated");
    assert_eq!(condition.reason, "ClusterStatusNeverUpdated");
    assert_eq!(condition.status, "Unknown");
}

#[tokio::test(start_paused = true)]
async fn a_status_change_counts_as_a_health_signal() {
    let timings = MonitorTimings::default();
    let mut monitor = HealthMonitor::default();
    let start = Instant::now();
    assert!(
        monitor
            .observe(
                &cluster("Pull", Some("True"), json!([])),
                None,
                start,
                wall(),
                &timings
            )
            .is_none()
    );
    let t30 = start + Duration::from_secs(30);
    assert!(
        monitor
            .observe(
                &cluster("Pull", Some("False"), json!([])),
                None,
                t30,
                wall(),
                &timings
            )
            .is_none()
    );
    let t69 = start + Duration::from_secs(69);
    assert!(
        monitor
            .observe(
                &cluster("Pull", Some("False"), json!([])),
                None,
                t69,
                wall(),
                &timings
            )
            .is_none()
    );
    let t70 = start + Duration::from_secs(70);
    let c = monitor
        .observe(
            &cluster("Pull", Some("False"), json!([])),
            None,
            t70,
            wall(),
            &timings,
        )
        .expect("Unknown");
    assert_eq!(c.status, "Unknown");
    // Once Unknown nothing more is written.
    let unknown = cluster("Pull", Some("Unknown"), json!([]));
    assert!(
        monitor
            .observe(
                &unknown,
                None,
                t70 + Duration::from_secs(100),
                wall(),
                &timings
            )
            .is_none()
    );
}

fn created(mut cluster: Cluster, at: &str) -> Cluster {
    cluster.metadata.creation_timestamp = Some(Time(at.parse().expect("a timestamp")));
    cluster
}

#[tokio::test(start_paused = true)]
async fn the_startup_grace_of_a_never_reported_cluster_counts_from_its_creation() {
    let timings = MonitorTimings::default();
    let start = Instant::now();
    // Created two minutes before the (restarted) monitor first sees it: Unknown at once.
    let mut monitor = HealthMonitor::default();
    let old = created(cluster("Pull", None, json!([])), "2026-12-02T23:58:00Z");
    let condition = monitor
        .observe(&old, None, start, wall(), &timings)
        .expect("never updated, grace long over");
    assert_eq!(condition.reason, "ClusterStatusNeverUpdated");
    // Created 50 s ago: 10 s of grace left, not 60.
    let mut monitor = HealthMonitor::default();
    let recent = created(cluster("Pull", None, json!([])), "2026-12-02T23:59:10Z");
    assert!(
        monitor
            .observe(&recent, None, start, wall(), &timings)
            .is_none()
    );
    let t9 = start + Duration::from_secs(9);
    assert!(
        monitor
            .observe(&recent, None, t9, wall(), &timings)
            .is_none()
    );
    let t10 = start + Duration::from_secs(10);
    assert!(
        monitor
            .observe(&recent, None, t10, wall(), &timings)
            .is_some()
    );
    // A creation time in the future (clock skew) is read as "just now".
    let mut monitor = HealthMonitor::default();
    let skewed = created(cluster("Pull", None, json!([])), "2026-12-03T00:05:00Z");
    let t59 = start + Duration::from_secs(59);
    assert!(
        monitor
            .observe(&skewed, None, start, wall(), &timings)
            .is_none()
    );
    assert!(
        monitor
            .observe(&skewed, None, t59, wall(), &timings)
            .is_none()
    );
}
