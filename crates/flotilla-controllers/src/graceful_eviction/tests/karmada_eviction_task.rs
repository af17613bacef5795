//! Karmada's `evictiontask_test.go` (`assessSingleTask`, `assessEvictionTasks`, `nextRetry`)
//! and the pure parts of `rb_graceful_eviction_controller_test.go`, against [`assess`] and
//! [`next_retry`].

use super::*;

const NOW: &str = "2026-12-06T10:00:00Z";

fn now() -> jiff::Timestamp {
    NOW.parse().unwrap()
}

/// `now` moved by `seconds` (negative: earlier).
fn ago(seconds: i64) -> Time {
    Time(now() - jiff::SignedDuration::from_secs(seconds))
}

fn created(cluster: &str, seconds_ago: i64) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.into(),
        creation_timestamp: Some(ago(seconds_ago)),
        ..GracefulEvictionTask::default()
    }
}

fn unstamped(cluster: &str) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.into(),
        ..GracefulEvictionTask::default()
    }
}

fn targets(names: &[&str]) -> Vec<TargetCluster> {
    names
        .iter()
        .map(|n| TargetCluster {
            name: (*n).into(),
            ..TargetCluster::default()
        })
        .collect()
}

fn statuses(items: &[(&str, &str)]) -> Vec<AggregatedStatusItem> {
    items
        .iter()
        .map(|(cluster, health)| AggregatedStatusItem {
            cluster_name: (*cluster).into(),
            health: (*health).into(),
            ..AggregatedStatusItem::default()
        })
        .collect()
}

const THREE_MINUTES: Duration = Duration::from_secs(180);

/// `assessSingleTask`: one task against one assessment, kept (`true`) or dropped.
fn single(
    task: GracefulEvictionTask,
    scheduled: &[&str],
    observed: &[(&str, &str)],
    has_scheduled: bool,
) -> bool {
    let scheduled = targets(scheduled);
    let observed = statuses(observed);
    let (kept, evicted) = assess(
        std::slice::from_ref(&task),
        now(),
        &Assessment {
            timeout: THREE_MINUTES,
            scheduled: &scheduled,
            observed: &observed,
            has_scheduled,
        },
    );
    match kept.as_slice() {
        [k] => {
            assert_eq!(*k, task, "a kept task is kept unchanged");
            assert!(evicted.is_empty());
            true
        }
        [] => {
            assert_eq!(evicted, std::slice::from_ref(&task.from_cluster));
            false
        }
        _ => unreachable!(),
    }
}

/// (case, task, scheduled, observed, has_scheduled, kept)
type SingleCase = (
    &'static str,
    GracefulEvictionTask,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    bool,
    bool,
);

#[test]
fn a_single_task_is_kept_or_dropped_as_karmada_assesses_it() {
    let suppressed = |value| GracefulEvictionTask {
        suppress_deletion: Some(value),
        ..created("member1", 60)
    };
    let cases: Vec<SingleCase> = vec![
        (
            "within the timeout, not scheduled yet",
            created("member1", 60),
            &[],
            &[],
            false,
            true,
        ),
        (
            "past the timeout",
            created("member1", 240),
            &[],
            &[],
            false,
            false,
        ),
        (
            "within the timeout, new placement healthy",
            created("member1", 60),
            &["memberA"],
            &[("memberA", "Healthy")],
            true,
            false,
        ),
        (
            "within the timeout, new placement unhealthy",
            created("member1", 60),
            &["memberA"],
            &[("memberA", "Unhealthy")],
            true,
            true,
        ),
        (
            "within the timeout, new placement unknown",
            created("member1", 60),
            &["memberA"],
            &[("memberA", "Unknown")],
            true,
            true,
        ),
        (
            "suppressDeletion true",
            suppressed(true),
            &[],
            &[],
            false,
            true,
        ),
        (
            "suppressDeletion false",
            suppressed(false),
            &[],
            &[],
            false,
            false,
        ),
    ];
    for (case, task, scheduled, observed, has_scheduled, want) in cases {
        assert_eq!(
            single(task, scheduled, observed, has_scheduled),
            want,
            "{case}"
        );
    }
}

#[test]
fn suppress_deletion_wins_over_an_expired_grace_period_and_a_healthy_placement() {
    let task = GracefulEvictionTask {
        suppress_deletion: Some(true),
        ..created("member1", 3600)
    };
    assert!(single(task, &["memberA"], &[("memberA", "Healthy")], true));
}

/// `assessEvictionTasks` (Karmada's table always assesses with `hasScheduled: true`).
fn assess_all(
    tasks: &[GracefulEvictionTask],
    scheduled: &[&str],
    observed: &[(&str, &str)],
) -> (Vec<GracefulEvictionTask>, Vec<String>) {
    let scheduled = targets(scheduled);
    let observed = statuses(observed);
    assess(
        tasks,
        now(),
        &Assessment {
            timeout: THREE_MINUTES,
            scheduled: &scheduled,
            observed: &observed,
            has_scheduled: true,
        },
    )
}

#[test]
fn new_tasks_are_stamped_with_now_and_kept() {
    let (kept, evicted) = assess_all(&[unstamped("member1"), unstamped("member2")], &[], &[]);
    assert_eq!(kept, [created("member1", 0), created("member2", 0)]);
    assert!(evicted.is_empty());
}

#[test]
fn expired_tasks_go_and_the_others_stay_while_the_placement_is_not_all_healthy() {
    let young = [created("member1", 60), created("member2", 120)];
    // Nothing observed of the new placement yet.
    let (kept, evicted) = assess_all(&young, &["memberA"], &[]);
    assert_eq!(kept, young);
    assert!(evicted.is_empty());
    // One task past the three-minute timeout.
    let (kept, evicted) = assess_all(
        &[created("member1", 240), created("member2", 60)],
        &["memberA"],
        &[],
    );
    assert_eq!(kept, [created("member2", 60)]);
    assert_eq!(evicted, ["member1"]);
    // Mixed: one new (stamped), one young, one expired.
    let (kept, evicted) = assess_all(
        &[
            unstamped("member1"),
            created("member2", 120),
            created("member3", 240),
        ],
        &["memberA", "memberB"],
        &[],
    );
    assert_eq!(kept, [created("member1", 0), created("member2", 120)]);
    assert_eq!(evicted, ["member3"]);
}

#[test]
fn young_tasks_go_only_when_every_new_cluster_reports_healthy() {
    let young = [created("member1", 60), created("member2", 120)];
    let scheduled = ["memberA", "memberB"];
    let keeps: [&[(&str, &str)]; 3] = [
        &[("memberA", "Healthy")],
        &[("memberA", "Healthy"), ("memberB", "Unhealthy")],
        &[("memberA", "Healthy"), ("memberB", "Unknown")],
    ];
    for observed in keeps {
        let (kept, evicted) = assess_all(&young, &scheduled, observed);
        assert_eq!(kept, young, "{observed:?}");
        assert!(evicted.is_empty(), "{observed:?}");
    }
    let (kept, evicted) = assess_all(
        &young,
        &scheduled,
        &[("memberA", "Healthy"), ("memberB", "Healthy")],
    );
    assert!(kept.is_empty());
    assert_eq!(evicted, ["member1", "member2"]);
}

#[test]
fn a_task_grace_period_does_not_leak_into_the_next_task() {
    let short = GracefulEvictionTask {
        grace_period_seconds: Some(10),
        ..created("member1", 15)
    };
    let (kept, evicted) = assess_all(&[short, created("member2", 15)], &["memberA"], &[]);
    assert_eq!(kept, [created("member2", 15)]);
    assert_eq!(evicted, ["member1"]);
}

#[test]
fn the_next_look_is_when_the_earliest_grace_period_ends() {
    let twenty_minutes = Duration::from_secs(1200);
    let suppressed = |cluster, seconds_ago| GracefulEvictionTask {
        suppress_deletion: Some(true),
        ..created(cluster, seconds_ago)
    };
    let custom = GracefulEvictionTask {
        grace_period_seconds: Some(600),
        ..created("member1", 300)
    };
    // (case, tasks, want): Karmada's 0 is `None`.
    let cases: Vec<(&str, Vec<GracefulEvictionTask>, Option<u64>)> = vec![
        ("no tasks", vec![], None),
        (
            "one minute left of the older task",
            vec![created("member1", 19 * 60), created("member2", 10 * 60)],
            Some(60),
        ),
        (
            "ten minutes left of the older task",
            vec![created("member1", 10 * 60), created("member2", 5 * 60)],
            Some(600),
        ),
        (
            "suppressed tasks are not waited for",
            vec![suppressed("member1", 3600), created("member2", 5 * 60)],
            Some(900),
        ),
        (
            "only suppressed tasks",
            vec![suppressed("member1", 3600), suppressed("member2", 5 * 60)],
            None,
        ),
        ("a task's own grace period", vec![custom], Some(300)),
    ];
    for (case, tasks, want) in cases {
        assert_eq!(
            next_retry(&tasks, twenty_minutes, now()),
            want.map(Duration::from_secs),
            "{case}"
        );
    }
}

/// `syncBinding`/`Reconcile` of the RB controller with a five-minute timeout: what the
/// reconcile computes from the binding (`hasScheduled` compares generations).
fn sync(
    tasks: &[GracefulEvictionTask],
    generation: i64,
    observed_generation: i64,
) -> (usize, Option<Duration>) {
    let timeout = Duration::from_secs(300);
    let (kept, _) = assess(
        tasks,
        now(),
        &Assessment {
            timeout,
            scheduled: &[],
            observed: &[],
            has_scheduled: observed_generation == generation,
        },
    );
    (kept.len(), next_retry(&kept, timeout, now()))
}

#[test]
fn a_scheduled_binding_without_clusters_drops_its_tasks_at_once() {
    // No tasks: nothing kept, no requeue.
    assert_eq!(sync(&[], 0, 0), (0, None));
    // A fresh task, binding scheduled (generation 1 seen) and no clusters to wait for.
    assert_eq!(sync(&[created("cluster1", 0)], 1, 1), (0, None));
    assert_eq!(sync(&[created("cluster1", 0)], 0, 0), (0, None));
    // Expired (ten minutes against five).
    assert_eq!(sync(&[created("cluster1", 600)], 0, 0), (0, None));
}
