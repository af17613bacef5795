//! Karmada's `TestResourceBindingSpec_GracefulEvictCluster` (`work/v1alpha2`), against
//! [`evict_cluster`].

use super::*;

fn template(cluster: &str, purge_mode: &str, message: &str) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.into(),
        purge_mode: purge_mode.into(),
        reason: REASON_TAINT_UNTOLERATED.into(),
        message: message.into(),
        producer: PRODUCER_TAINT_MANAGER.into(),
        ..GracefulEvictionTask::default()
    }
}

fn with_replicas(task: GracefulEvictionTask, replicas: i32) -> GracefulEvictionTask {
    GracefulEvictionTask {
        replicas: Some(replicas),
        ..task
    }
}

fn three() -> ResourceBindingSpec {
    spec(&[("m1", 1), ("m2", 2), ("m3", 3)])
}

#[test]
fn evicting_a_cluster_not_targeted_changes_nothing() {
    let mut s = spec(&[("m1", 0), ("m2", 0), ("m3", 0)]);
    let before = s.clone();
    assert!(!evict_cluster(
        &mut s,
        "non-exist",
        template("non-exist", "", "")
    ));
    assert_eq!(s, before);
    let mut empty = spec(&[]);
    assert!(!evict_cluster(
        &mut empty,
        "",
        GracefulEvictionTask::default()
    ));
    assert_eq!(empty, spec(&[]));
}

/// (case, cluster, purge mode, remaining targets)
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, i32)],
);

#[test]
fn the_evicted_cluster_leaves_the_targets_and_becomes_a_task_with_its_replicas() {
    let cases: [Case; 3] = [
        ("head", "m1", "Directly", &[("m2", 2), ("m3", 3)]),
        ("middle", "m2", "Never", &[("m1", 1), ("m3", 3)]),
        ("tail", "m3", "Gracefully", &[("m1", 1), ("m2", 2)]),
    ];
    for (case, cluster, mode, remaining) in cases {
        let mut s = three();
        let task = template(cluster, mode, "graceful eviction");
        assert!(evict_cluster(&mut s, cluster, task.clone()), "{case}");
        let replicas = three().assigned_replicas_for_cluster(cluster);
        assert_eq!(s.clusters, spec(remaining).clusters, "{case}");
        assert_eq!(
            s.graceful_eviction_tasks,
            [with_replicas(task, replicas)],
            "{case}"
        );
    }
}

#[test]
fn a_new_task_is_appended_after_the_existing_ones() {
    let original = GracefulEvictionTask {
        from_cluster: "original-cluster".into(),
        ..GracefulEvictionTask::default()
    };
    let mut s = ResourceBindingSpec {
        graceful_eviction_tasks: vec![original.clone()],
        ..three()
    };
    let task = template("m3", "Gracefully", "graceful eviction");
    assert!(evict_cluster(&mut s, "m3", task.clone()));
    assert_eq!(s.clusters, spec(&[("m1", 1), ("m2", 2)]).clusters);
    assert_eq!(
        s.graceful_eviction_tasks,
        [original, with_replicas(task, 3)]
    );
}

#[test]
fn a_cluster_already_being_evicted_only_leaves_the_targets() {
    let existing = with_replicas(template("m1", "", "graceful eviction v1"), 1);
    let mut s = ResourceBindingSpec {
        graceful_eviction_tasks: vec![existing.clone()],
        ..spec(&[("m1", 1), ("m2", 2)])
    };
    let newer = with_replicas(template("m1", "Gracefully", "graceful eviction v2"), 1);
    assert!(evict_cluster(&mut s, "m1", newer));
    assert_eq!(s.clusters, spec(&[("m2", 2)]).clusters);
    assert_eq!(s.graceful_eviction_tasks, [existing]);
}
