//! Karmada's `applicationfailover/common_test.go` and the pure parts of
//! `rb_application_failover_controller_test.go`, against [`UnhealthySince`],
//! [`unhealthy_and_others`], [`build_task`] and [`failover_behaviour`].

use super::*;
use flotilla_api::karmada::{
    DecisionConditions, FailoverBehavior, JsonText, ObjectReference, StatePreservation,
    StatePreservationRule, TargetCluster,
};

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

const TOLERATION: Duration = Duration::from_secs(100);

/// Whether `cluster`'s clock is running: a fresh clock would ask to look again after the
/// whole toleration, a running one after less (probed a second later).
fn clock_running(clocks: &UnhealthySince, key: &BindingKey, cluster: &str, now: Instant) -> bool {
    let probe = UnhealthySince::default();
    let snapshot = clocks.bindings.lock().clone();
    *probe.bindings.lock() = snapshot;
    let (_, next) = probe.detect(key, &owned(&[cluster]), TOLERATION, now);
    next != Some(TOLERATION)
}

#[test]
fn a_clock_is_set_found_and_forgotten_with_its_binding() {
    let clocks = UnhealthySince::default();
    let t0 = Instant::now();
    clocks.detect(&key(), &owned(&["cluster-1"]), TOLERATION, t0);
    let later = t0 + Duration::from_secs(1);
    assert!(clock_running(&clocks, &key(), "cluster-1", later));
    clocks.forget(&key());
    assert!(!clock_running(&clocks, &key(), "cluster-1", later));
}

#[test]
fn clocks_of_untargeted_and_recovered_clusters_are_forgotten() {
    let clocks = UnhealthySince::default();
    let t0 = Instant::now();
    clocks.detect(
        &key(),
        &owned(&["cluster-1", "cluster-2", "cluster-3"]),
        TOLERATION,
        t0,
    );
    let targeted: BTreeSet<String> = owned(&["cluster-2", "cluster-3"]).into_iter().collect();
    clocks.retain(&key(), &targeted, &owned(&["cluster-3"]));
    let later = t0 + Duration::from_secs(1);
    assert!(!clock_running(&clocks, &key(), "cluster-1", later));
    assert!(clock_running(&clocks, &key(), "cluster-2", later));
    assert!(!clock_running(&clocks, &key(), "cluster-3", later));
}

#[test]
fn forgetting_clusters_of_an_unknown_binding_changes_nothing() {
    let clocks = UnhealthySince::default();
    let targeted: BTreeSet<String> = owned(&["cluster-2", "cluster-3"]).into_iter().collect();
    clocks.retain(&key(), &targeted, &owned(&["cluster-3"]));
    assert!(clocks.bindings.lock().is_empty());
}

fn item(cluster: &str, health: &str) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.into(),
        health: health.into(),
        ..AggregatedStatusItem::default()
    }
}

/// (case, statuses, spec, unhealthy, others)
type Case<'a> = (
    &'a str,
    Vec<AggregatedStatusItem>,
    &'a ResourceBindingSpec,
    &'a [&'a str],
    &'a [&'a str],
);

#[test]
fn unhealthy_clusters_not_being_evicted_are_told_from_the_others() {
    let evicting = ResourceBindingSpec {
        graceful_eviction_tasks: vec![GracefulEvictionTask {
            from_cluster: "member2".into(),
            ..GracefulEvictionTask::default()
        }],
        ..ResourceBindingSpec::default()
    };
    let plain = ResourceBindingSpec::default();
    let cases: [Case<'_>; 4] = [
        (
            "all healthy",
            vec![item("member1", "Healthy"), item("member2", "Healthy")],
            &plain,
            &[],
            &["member1", "member2"],
        ),
        (
            "all unknown",
            vec![item("member1", "Unknown"), item("member2", "Unknown")],
            &plain,
            &[],
            &["member1", "member2"],
        ),
        (
            "one unhealthy, not being evicted",
            vec![item("member1", "Healthy"), item("member2", "Unhealthy")],
            &plain,
            &["member2"],
            &["member1"],
        ),
        (
            "one unhealthy, already being evicted",
            vec![item("member1", "Healthy"), item("member2", "Unhealthy")],
            &evicting,
            &[],
            &["member1"],
        ),
    ];
    for (case, statuses, spec, unhealthy, others) in cases {
        assert_eq!(
            unhealthy_and_others(&statuses, spec),
            (owned(unhealthy), owned(others)),
            "{case}"
        );
    }
}

const RB: &str = RB_CONTROLLER;
const CRB: &str = CRB_CONTROLLER;

fn behaviour(purge_mode: &str, rules: Option<Vec<(&str, &str)>>) -> ApplicationFailoverBehavior {
    ApplicationFailoverBehavior {
        decision_conditions: DecisionConditions {
            toleration_seconds: Some(100),
        },
        purge_mode: purge_mode.into(),
        grace_period_seconds: (purge_mode == "Gracefully").then_some(120),
        state_preservation: rules.map(|rules| StatePreservation {
            rules: rules
                .into_iter()
                .map(|(alias, path)| StatePreservationRule {
                    alias_label_name: alias.into(),
                    json_path: path.into(),
                })
                .collect(),
        }),
    }
}

fn two_rules() -> Option<Vec<(&'static str, &'static str)>> {
    Some(vec![("key-a", "{ .replicas }"), ("key-b", "{ .health }")])
}

fn collected(c1: bool) -> Vec<AggregatedStatusItem> {
    let with = |cluster: &str, status: serde_json::Value| AggregatedStatusItem {
        cluster_name: cluster.into(),
        status: Some(JsonText::new(&status)),
        ..AggregatedStatusItem::default()
    };
    let mut items = vec![with(
        "c2",
        serde_json::json!({"replicas": 3, "health": false}),
    )];
    items.insert(
        0,
        if c1 {
            with("c1", serde_json::json!({"replicas": 2, "health": true}))
        } else {
            item("c1", "")
        },
    );
    items
}

const ALL_GATES: Gates = Gates {
    graceful_eviction: true,
    preserve_state: true,
};

fn expected(producer: &str, purge_mode: &str, preserved: bool) -> GracefulEvictionTask {
    GracefulEvictionTask {
        producer: producer.into(),
        reason: "ApplicationFailure".into(),
        purge_mode: purge_mode.into(),
        grace_period_seconds: (purge_mode == "Gracefully").then_some(120),
        suppress_deletion: (purge_mode == "Never").then_some(true),
        preserved_label_state: if preserved {
            [("key-a", "2"), ("key-b", "true")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        } else {
            BTreeMap::new()
        },
        clusters_before_failover: if preserved { owned(&["c0"]) } else { vec![] },
        ..GracefulEvictionTask::default()
    }
}

#[test]
fn the_failover_task_carries_purge_mode_grace_period_and_preserved_state() {
    // (case, behaviour, producer, want)
    let cases = [
        (
            "Gracefully, with state preservation",
            behaviour("Gracefully", two_rules()),
            RB,
            expected(RB, "Gracefully", true),
        ),
        (
            "Never, with state preservation",
            behaviour("Never", two_rules()),
            CRB,
            expected(CRB, "Never", true),
        ),
        (
            "Directly, with state preservation",
            behaviour("Directly", two_rules()),
            CRB,
            expected(CRB, "Directly", true),
        ),
        (
            "Gracefully, no state preservation",
            behaviour("Gracefully", None),
            RB,
            expected(RB, "Gracefully", false),
        ),
        (
            "Gracefully, state preservation without rules",
            behaviour("Gracefully", Some(vec![])),
            RB,
            expected(RB, "Gracefully", false),
        ),
    ];
    for (case, behaviour, producer, want) in cases {
        let got = build_task(
            &behaviour,
            &collected(true),
            "c1",
            producer,
            &owned(&["c0"]),
            ALL_GATES,
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(got, want, "{case}");
    }
}

#[test]
fn preserving_state_fails_until_the_cluster_status_is_collected() {
    let error = build_task(
        &behaviour("Gracefully", two_rules()),
        &collected(false),
        "c1",
        RB,
        &owned(&["c0"]),
        ALL_GATES,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the application status has not yet been collected from Cluster(c1)"
    );
}

#[test]
fn every_purge_mode_builds_a_task_with_the_default_gates() {
    // `evictBinding`: GracefulEviction on, StatefulFailoverInjection off, no status at all.
    let gates = Gates {
        graceful_eviction: true,
        preserve_state: false,
    };
    for mode in ["Gracefully", "Never", "Directly"] {
        let task = build_task(&behaviour(mode, None), &[], "member1", RB, &[], gates);
        assert!(task.is_ok(), "{mode}");
    }
    let off = Gates {
        graceful_eviction: false,
        ..gates
    };
    let error = build_task(&behaviour("Gracefully", None), &[], "member1", RB, &[], off);
    assert_eq!(
        error.unwrap_err().to_string(),
        "GracefulEviction featureGate must be enabled when purgeMode is Gracefully"
    );
}

#[test]
fn detecting_failures_reports_the_next_look_and_the_clusters_to_evict() {
    let clusters = owned(&["cluster1", "cluster2"]);
    let one = Duration::from_secs(1);
    let t0 = Instant::now();
    // No clock yet: both start; look again after the toleration.
    let clocks = UnhealthySince::default();
    assert_eq!(
        clocks.detect(&key(), &clusters, one, t0),
        (vec![], Some(one))
    );
    // cluster1 unhealthy for two seconds against one: evicted; cluster2 starts now.
    let clocks = UnhealthySince::default();
    clocks.detect(&key(), &owned(&["cluster1"]), one, t0);
    let (evict, next) = clocks.detect(&key(), &clusters, one, t0 + 2 * one);
    assert_eq!((evict, next), (owned(&["cluster1"]), Some(one)));
    // Within a hundred seconds: nothing to evict.
    let clocks = UnhealthySince::default();
    clocks.detect(&key(), &owned(&["cluster1"]), TOLERATION, t0);
    let (evict, next) = clocks.detect(&key(), &clusters, TOLERATION, t0);
    assert_eq!((evict, next), (vec![], Some(TOLERATION)));
    // No unhealthy cluster: nothing to wait for (Karmada's 0).
    let clocks = UnhealthySince::default();
    assert_eq!(clocks.detect(&key(), &[], TOLERATION, t0), (vec![], None));
}

#[test]
fn a_first_unhealthy_copy_is_looked_at_again_after_the_toleration() {
    // `syncBinding`: toleration 5 s, member2 unhealthy for the first time.
    let spec = ResourceBindingSpec {
        clusters: vec![
            TargetCluster::new("member1", 1),
            TargetCluster::new("member1", 2),
        ],
        ..ResourceBindingSpec::default()
    };
    let statuses = [item("member1", "Healthy"), item("member2", "Unhealthy")];
    let (unhealthy, _) = unhealthy_and_others(&statuses, &spec);
    let five = Duration::from_secs(5);
    let clocks = UnhealthySince::default();
    assert_eq!(
        clocks.detect(&key(), &unhealthy, five, Instant::now()),
        (vec![], Some(five))
    );
}

#[test]
fn bindings_without_the_behaviour_status_or_a_health_rule_are_left_alone() {
    let pod = ObjectReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        namespace: "default".into(),
        name: "pod".into(),
        ..ObjectReference::default()
    };
    let with_failover = |resource: ObjectReference| ResourceBindingSpec {
        resource,
        failover: Some(FailoverBehavior {
            application: Some(ApplicationFailoverBehavior::default()),
            ..FailoverBehavior::default()
        }),
        propagate_deps: true,
        ..ResourceBindingSpec::default()
    };
    let statuses = [item("memberA", ""), item("memberB", "")];
    let hook = crate::interpreter::health::has_rule;
    let none = ResourceBindingSpec {
        resource: pod.clone(),
        ..ResourceBindingSpec::default()
    };
    assert!(failover_behaviour(&none, &statuses, hook).is_none());
    assert!(failover_behaviour(&with_failover(pod.clone()), &[], hook).is_none());
    let bad = ObjectReference {
        api_version: "a/b/c".into(),
        ..pod.clone()
    };
    assert!(failover_behaviour(&with_failover(bad), &statuses, hook).is_none());
    assert!(failover_behaviour(&with_failover(pod), &statuses, hook).is_some());
}
