//! Karmada's `taint_manager_test.go` (`pkg/controllers/cluster`) restated against the taint
//! manager's pure decisions: `needEvictionWithCurrentTime` (`placement_of` + `decide`),
//! `enqueueBinding` (`enqueue_decision`), `getPurgeMode` (`purge_mode_for`), the eviction a
//! `syncBindingEviction` writes (`decide` + `evict_cluster`) and `extractStateForEviction`
//! (`preserved_label_state`). Lookups of the binding and the cluster are plumbing.

use std::collections::BTreeMap;

use flotilla_api::karmada::{
    AggregatedStatusItem, ClusterFailoverBehavior, JsonText, ResourceBindingSpec,
    StatePreservation, StatePreservationRule, TargetCluster,
};
use serde_json::json;

use super::*;
use crate::eviction::EvictionError;

/// Karmada's fixed clock of these tests.
fn now() -> jiff::Timestamp {
    "2025-09-23T12:00:00Z".parse().unwrap()
}

/// `now` moved by `seconds`, as a taint's `timeAdded`.
fn at(seconds: i64) -> Option<Time> {
    Some(Time(
        now()
            .checked_add(jiff::SignedDuration::from_secs(seconds))
            .unwrap(),
    ))
}

fn taint_at(key: &str, effect: &str, added: Option<Time>) -> Taint {
    Taint {
        key: key.into(),
        effect: effect.into(),
        value: None,
        time_added: added,
    }
}

fn annotations(placement: &str) -> BTreeMap<String, String> {
    [(
        ANNOTATION_APPLIED_PLACEMENT.to_owned(),
        placement.to_owned(),
    )]
    .into()
}

fn placement_json(tolerations: &str) -> String {
    format!(
        r#"{{"clusterAffinity":{{"clusterNames":["test-cluster"]}},"clusterTolerations":{tolerations}}}"#
    )
}

/// A missing, empty or malformed applied placement is an error of the eviction worker.
#[test]
fn an_unreadable_applied_placement_has_no_placement() {
    assert!(placement_of(None).is_none());
    assert!(placement_of(Some(&BTreeMap::new())).is_none());
    assert!(placement_of(Some(&annotations("invalid-json"))).is_none());
    assert!(placement_of(Some(&annotations(""))).is_none());
    let read = placement_of(Some(&annotations(
        r#"{"clusterAffinity":{"clusterNames":["test-cluster"]}}"#,
    )));
    assert!(read.is_some_and(|p| p.cluster_tolerations.is_empty()));
}

#[test]
fn eviction_waits_for_the_earliest_toleration_to_run_out() {
    type Row = (&'static str, Vec<Taint>, &'static str, Decision);
    let one_ago = || at(-1);
    let rows: Vec<Row> = vec![
        (
            "no NoExecute taints: tolerated",
            vec![taint_at("test-key", "NoSchedule", None)],
            "[]",
            Decision::Keep,
        ),
        (
            "taint not tolerated: now",
            vec![taint_at("test-key", "NoExecute", one_ago())],
            "[]",
            Decision::EvictNow,
        ),
        (
            "tolerated for zero seconds: now",
            vec![taint_at("test-key", "NoExecute", one_ago())],
            r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute","tolerationSeconds":0}]"#,
            Decision::EvictNow,
        ),
        (
            "tolerated for 60 s since a second ago: 59 s left",
            vec![taint_at("test-key", "NoExecute", one_ago())],
            r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]"#,
            Decision::EvictAfter(Duration::from_secs(59)),
        ),
        (
            "tolerated for ever",
            vec![taint_at("test-key", "NoExecute", one_ago())],
            r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute"}]"#,
            Decision::Keep,
        ),
        (
            "one of two taints not tolerated: now",
            vec![
                taint_at("tolerated-key", "NoExecute", at(1)),
                taint_at("not-tolerated-key", "NoExecute", one_ago()),
            ],
            r#"[{"key":"tolerated-key","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]"#,
            Decision::EvictNow,
        ),
        (
            "tolerated for 1 s since 2 s ago: expired",
            vec![taint_at("test-key", "NoExecute", at(-2))],
            r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute","tolerationSeconds":1}]"#,
            Decision::EvictNow,
        ),
    ];
    for (desc, taints, tolerations, want) in rows {
        let placement = placement_of(Some(&annotations(&placement_json(tolerations))))
            .unwrap_or_else(|| panic!("{desc}: placement"));
        assert_eq!(decide(&taints, &placement, now()), want, "{desc}");
    }
}

#[test]
fn bindings_are_queued_now_later_or_never() {
    type Row = (&'static str, Vec<Taint>, Option<&'static str>, &'static str);
    let noexec = |key: &str| taint_at(key, "NoExecute", at(-1));
    let rows: Vec<Row> = vec![
        ("no taints", vec![], Some("[]"), "skip"),
        (
            "no placement annotation",
            vec![noexec("test-key")],
            None,
            "immediate",
        ),
        (
            "invalid placement",
            vec![noexec("test-key")],
            Some("invalid-json"),
            "immediate",
        ),
        (
            "no tolerations",
            vec![noexec("test-key")],
            Some("[]"),
            "immediate",
        ),
        (
            "finite tolerationSeconds not yet over",
            vec![noexec("test-key")],
            Some(
                r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}]"#,
            ),
            "delayed",
        ),
        (
            "tolerated for ever",
            vec![noexec("test-key")],
            Some(r#"[{"key":"test-key","operator":"Exists","effect":"NoExecute"}]"#),
            "skip",
        ),
        (
            "one of two taints not tolerated",
            vec![noexec("tolerated-key"), noexec("not-tolerated-key")],
            Some(r#"[{"key":"tolerated-key","operator":"Exists","effect":"NoExecute"}]"#),
            "immediate",
        ),
        (
            "both tolerated for ever",
            vec![noexec("key1"), noexec("key2")],
            Some(
                r#"[{"key":"key1","operator":"Exists","effect":"NoExecute"},{"key":"key2","operator":"Exists","effect":"NoExecute"}]"#,
            ),
            "skip",
        ),
        (
            "one of two tolerated for a while",
            vec![noexec("key1"), noexec("key2")],
            Some(
                r#"[{"key":"key1","operator":"Exists","effect":"NoExecute"},{"key":"key2","operator":"Exists","effect":"NoExecute","tolerationSeconds":120}]"#,
            ),
            "delayed",
        ),
    ];
    for (desc, taints, tolerations, want) in rows {
        let placement = tolerations.and_then(|t| {
            let text = if t.starts_with('[') {
                placement_json(t)
            } else {
                t.to_owned()
            };
            placement_of(Some(&annotations(&text)))
        });
        let got = match enqueue_decision(&taints, placement.as_ref(), now()) {
            Decision::Keep => "skip",
            Decision::EvictNow => "immediate",
            Decision::EvictAfter(_) => "delayed",
        };
        assert_eq!(got, want, "{desc}");
    }
}

#[test]
fn purge_mode_comes_from_the_policy_then_the_flag() {
    let cluster = |mode: &str| FailoverBehavior {
        cluster: Some(ClusterFailoverBehavior {
            purge_mode: mode.to_owned(),
            state_preservation: None,
        }),
        ..FailoverBehavior::default()
    };
    type Row = (
        &'static str,
        Option<FailoverBehavior>,
        PurgeMode,
        &'static str,
    );
    let rows: Vec<Row> = vec![
        (
            "no failover, default flag",
            None,
            PurgeMode::default(),
            "Gracefully",
        ),
        (
            "no failover, flag Directly",
            None,
            PurgeMode::Directly,
            "Directly",
        ),
        (
            "no failover, flag Gracefully",
            None,
            PurgeMode::Gracefully,
            "Gracefully",
        ),
        (
            "failover without cluster: the flag",
            Some(FailoverBehavior::default()),
            PurgeMode::Directly,
            "Directly",
        ),
        (
            "cluster failover without mode",
            Some(cluster("")),
            PurgeMode::Directly,
            "Gracefully",
        ),
        (
            "cluster failover Directly",
            Some(cluster("Directly")),
            PurgeMode::Gracefully,
            "Directly",
        ),
        (
            "cluster failover Gracefully",
            Some(cluster("Gracefully")),
            PurgeMode::Directly,
            "Gracefully",
        ),
    ];
    for (desc, failover, flag, want) in rows {
        assert_eq!(purge_mode_for(failover.as_ref(), flag), want, "{desc}");
    }
}

/// `syncBindingEviction` / `syncClusterBindingEviction`: the cluster's taints have no
/// `timeAdded` (as Karmada's test objects).
#[test]
fn an_untolerated_taint_moves_the_cluster_into_a_graceful_eviction_task() {
    let taints = vec![taint_at("cluster.karmada.io/not-ready", "NoExecute", None)];
    let spec = || ResourceBindingSpec {
        clusters: vec![TargetCluster {
            name: "test-cluster".into(),
            replicas: 1,
            ..TargetCluster::default()
        }],
        ..ResourceBindingSpec::default()
    };
    // Only `unreachable` is tolerated: evicted now, with the cluster's replicas.
    let placement = placement_of(Some(&annotations(
        r#"{"clusterAffinity":{"clusterNames":["member1","member2"]},"clusterTolerations":[{"key":"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]}"#,
    )))
    .unwrap();
    assert_eq!(decide(&taints, &placement, now()), Decision::EvictNow);
    let mut evicted = spec();
    let task = GracefulEvictionTask {
        purge_mode: purge_mode_for(None, PurgeMode::Gracefully),
        reason: REASON_TAINT_UNTOLERATED.into(),
        producer: PRODUCER_TAINT_MANAGER.into(),
        ..GracefulEvictionTask::default()
    };
    assert!(evict_cluster(&mut evicted, "test-cluster", task));
    assert!(evicted.clusters.is_empty());
    assert_eq!(
        evicted.graceful_eviction_tasks,
        vec![GracefulEvictionTask {
            from_cluster: "test-cluster".into(),
            purge_mode: "Gracefully".into(),
            replicas: Some(1),
            reason: "TaintUntolerated".into(),
            producer: "TaintManager".into(),
            ..GracefulEvictionTask::default()
        }]
    );
    // `not-ready` tolerated for 30 s, but the taint has no `timeAdded`: never evicted.
    let placement = placement_of(Some(&annotations(
        r#"{"clusterTolerations":[{"key":"cluster.karmada.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":30},{"key":"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]}"#,
    )))
    .unwrap();
    assert_eq!(decide(&taints, &placement, now()), Decision::Keep);
}

#[test]
fn preserved_state_needs_the_clusters_collected_status() {
    let rules = StatePreservation {
        rules: vec![StatePreservationRule {
            alias_label_name: "foo".into(),
            json_path: "{ .metadata.labels.foo }".into(),
        }],
    };
    let status = json!({"metadata": {"labels": {"foo": "bar"}}});
    let item = |cluster: &str, status: Option<&serde_json::Value>| AggregatedStatusItem {
        cluster_name: cluster.into(),
        status: status.map(JsonText::new),
        ..AggregatedStatusItem::default()
    };
    let not_collected = Err(EvictionError::StatusNotCollected("member1".into()));
    assert_eq!(
        preserved_label_state(Some(&rules), &[item("member2", Some(&status))], "member1"),
        not_collected
    );
    assert_eq!(
        preserved_label_state(Some(&rules), &[item("member1", None)], "member1"),
        not_collected
    );
    assert_eq!(
        EvictionError::StatusNotCollected("member1".into()).to_string(),
        "the application status has not yet been collected from Cluster(member1)"
    );
    assert_eq!(
        preserved_label_state(Some(&rules), &[item("member1", Some(&status))], "member1"),
        Ok(Some([("foo".to_owned(), "bar".to_owned())].into()))
    );
}
