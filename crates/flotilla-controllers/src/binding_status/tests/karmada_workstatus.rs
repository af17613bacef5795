//! Karmada's `util/helper/workstatus_test.go` cases: a binding's `status.aggregatedStatus`
//! ([`aggregated_items`]) and `FullyApplied` condition ([`fully_applied`],
//! [`with_fully_applied`]) built from its Works.

use flotilla_api::karmada::ResourceBindingSpec;
use serde_json::Value;

use super::*;
use crate::binding::render::expected_clusters;

fn deployment_manifest(namespace: Option<&str>) -> Value {
    let mut metadata = json!({"name": "test-deployment"});
    if let Some(namespace) = namespace {
        metadata["namespace"] = namespace.into();
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata})
}

fn deployment_ref(namespace: &str) -> ObjectReference {
    ObjectReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: namespace.into(),
        name: "test-deployment".into(),
        ..ObjectReference::default()
    }
}

/// A Work in `karmada-es-<cluster>` carrying `manifests`, with an `Applied` condition of
/// `applied` (`(status, message)`) and the manifest statuses `statuses`.
fn work_of(
    cluster: &str,
    manifests: Vec<Value>,
    applied: Option<(&str, &str)>,
    statuses: Vec<Value>,
) -> Work {
    let mut work = json!({
        "metadata": {"name": "work", "namespace": format!("karmada-es-{cluster}")},
        "spec": {"workload": {"manifests": manifests}}});
    if let Some((status, message)) = applied {
        work["status"] = json!({
            "conditions": [{"type": "Applied", "status": status, "reason": "",
                "message": message, "lastTransitionTime": "2024-01-01T00:00:00Z"}],
            "manifestStatuses": statuses});
    }
    serde_json::from_value(work).expect("work")
}

/// The reported status of the Deployment at `ordinal` in `namespace`.
fn deployment_status(ordinal: i32, namespace: &str) -> Value {
    json!({"identifier": {"ordinal": ordinal, "group": "apps", "version": "v1",
        "kind": "Deployment", "namespace": namespace, "name": "test-deployment"},
        "status": {"replicas": 3}, "health": "Healthy"})
}

fn spec_for(clusters: &[&str]) -> ResourceBindingSpec {
    serde_json::from_value(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test-deployment"},
        "clusters": clusters.iter().map(|c| json!({"name": c})).collect::<Vec<_>>()}))
    .expect("spec")
}

/// The binding's `FullyApplied` status and every item's `applied`, as the binding status
/// controller writes them for `works`.
fn aggregate(clusters: &[&str], works: &[Work], resource: &ObjectReference) -> (String, Vec<bool>) {
    let works: Vec<&Work> = works.iter().collect();
    let items = aggregated_items(&works, resource);
    let applied = fully_applied(&expected_clusters(&spec_for(clusters)), &items);
    let conditions = with_fully_applied(&[], applied, Time(jiff::Timestamp::UNIX_EPOCH));
    let condition = conditions
        .iter()
        .find(|c| c.type_ == CONDITION_FULLY_APPLIED)
        .expect("FullyApplied");
    (
        condition.status.clone(),
        items.iter().map(|i| i.applied).collect(),
    )
}

/// A case name, the scheduled clusters, the Works, the expected `FullyApplied` status and
/// every item's expected `applied`.
type AggregationCase<'a> = (&'a str, Vec<&'a str>, Vec<Work>, &'a str, Vec<bool>);

#[test]
fn resource_and_cluster_binding_aggregation_cases_of_karmada() {
    // `TestAggregateResourceBindingWorkStatus` (a namespaced Deployment) and
    // `TestAggregateClusterResourceBindingWorkStatus` (the same without a namespace).
    for namespace in [Some("default"), None] {
        let ns = namespace.unwrap_or("");
        let resource = deployment_ref(ns);
        let work = |cluster: &str, applied: bool, with_status: bool| {
            work_of(
                cluster,
                vec![deployment_manifest(namespace)],
                with_status.then_some((if applied { "True" } else { "False" }, "test message")),
                vec![deployment_status(0, ns)],
            )
        };
        let cases: Vec<AggregationCase<'_>> = vec![
            (
                "one applied work",
                vec!["member1"],
                vec![work("member1", true, true)],
                "True",
                vec![true],
            ),
            ("no works", vec!["member1"], vec![], "False", vec![]),
            (
                "work not applied",
                vec!["member1"],
                vec![work("member1", false, true)],
                "False",
                vec![false],
            ),
            (
                "applied works for every cluster",
                vec!["member1", "member2"],
                vec![work("member1", true, true), work("member2", true, true)],
                "True",
                vec![true, true],
            ),
            (
                "mixed: one cluster's work not applied",
                vec!["member1", "member2"],
                vec![work("member1", true, true), work("member2", false, true)],
                "False",
                vec![true, false],
            ),
            (
                "work without status",
                vec!["member1"],
                vec![work("member1", true, false)],
                "False",
                vec![false],
            ),
        ];
        for (case, clusters, works, status, applied) in cases {
            assert_eq!(
                aggregate(&clusters, &works, &resource),
                (status.to_owned(), applied),
                "{case} ({namespace:?})"
            );
        }
    }
}

#[test]
fn assemble_work_status_cases_of_karmada() {
    let resource = deployment_ref("test-ns");
    let manifest = || vec![deployment_manifest(Some("test-ns"))];
    let item =
        |applied: bool, message: &str, health: &str, status: Option<Value>| AggregatedStatusItem {
            cluster_name: "member1".into(),
            status: status.map(Into::into),
            applied,
            applied_message: message.into(),
            health: health.into(),
        };
    let mut deleting = work_of("member1", manifest(), None, vec![]);
    deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    let cases: Vec<(&str, Vec<Work>, Vec<AggregatedStatusItem>)> = vec![
        ("empty work list", vec![], vec![]),
        ("work being deleted", vec![deleting], vec![]),
        (
            "work applied with a healthy member",
            vec![work_of(
                "member1",
                manifest(),
                Some(("True", "")),
                vec![deployment_status(0, "test-ns")],
            )],
            vec![item(true, "", "Healthy", Some(json!({"replicas": 3})))],
        ),
        (
            "work not applied: its message, health unknown",
            vec![work_of(
                "member1",
                manifest(),
                Some(("False", "Failed to apply")),
                vec![],
            )],
            vec![item(false, "Failed to apply", "Unknown", None)],
        ),
        (
            "applied condition unknown: not applied, its message",
            vec![work_of(
                "member1",
                manifest(),
                Some(("Unknown", "Status unknown")),
                vec![],
            )],
            vec![item(false, "Status unknown", "Unknown", None)],
        ),
    ];
    for (case, works, expected) in cases {
        let works: Vec<&Work> = works.iter().collect();
        assert_eq!(aggregated_items(&works, &resource), expected, "{case}");
    }
}

#[test]
fn fully_applied_condition_follows_the_scheduled_clusters() {
    let spec = spec_for(&["cluster1", "cluster2"]);
    let item = |cluster: &str, health: &str| AggregatedStatusItem {
        cluster_name: cluster.into(),
        applied: true,
        health: health.into(),
        ..AggregatedStatusItem::default()
    };
    let items = [item("cluster1", "Healthy"), item("cluster2", "Unknown")];
    let condition = |items: &[AggregatedStatusItem]| {
        let applied = fully_applied(&expected_clusters(&spec), items);
        let c = with_fully_applied(&[], applied, Time(jiff::Timestamp::UNIX_EPOCH)).remove(0);
        (c.status, c.reason, c.message)
    };
    assert_eq!(
        condition(&items),
        (
            "True".to_owned(),
            "FullyAppliedSuccess".to_owned(),
            "All works have been successfully applied".to_owned()
        )
    );
    assert_eq!(
        condition(&items[..1]),
        (
            "False".to_owned(),
            "FullyAppliedFailed".to_owned(),
            "Failed to apply all works, see status.aggregatedStatus for details".to_owned()
        )
    );
}

#[test]
fn works_fully_applied_cases_of_karmada() {
    let item = |cluster: &str, applied: bool| AggregatedStatusItem {
        cluster_name: cluster.into(),
        applied,
        ..AggregatedStatusItem::default()
    };
    let cases: Vec<(&str, Vec<AggregatedStatusItem>, Vec<&str>, bool)> = vec![
        ("no cluster", vec![item("member1", true)], vec![], false),
        ("no aggregated statuses", vec![], vec!["member1"], false),
        (
            "fewer statuses than clusters",
            vec![item("member1", true)],
            vec!["member1", "member2"],
            false,
        ),
        (
            "every cluster applied",
            vec![item("member1", true), item("member2", true)],
            vec!["member1", "member2"],
            true,
        ),
        (
            "one cluster not applied",
            vec![item("member1", true), item("member2", false)],
            vec!["member1", "member2"],
            false,
        ),
        (
            "the status is of another cluster",
            vec![item("member1", true)],
            vec!["member2"],
            false,
        ),
    ];
    for (case, items, clusters, expected) in cases {
        let clusters: BTreeSet<String> = clusters.into_iter().map(String::from).collect();
        assert_eq!(fully_applied(&clusters, &items), expected, "{case}");
    }
}

#[test]
fn the_resources_manifest_index_is_its_ordinal() {
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "test-service", "namespace": "test-namespace"}});
    let deployment = deployment_manifest(Some("test-namespace"));
    let work = work_of("member1", vec![service, deployment], None, vec![]);
    let service_ref = ObjectReference {
        api_version: "v1".into(),
        kind: "Service".into(),
        namespace: "test-namespace".into(),
        name: "test-service".into(),
        ..ObjectReference::default()
    };
    assert_eq!(manifest_ordinal(&work, &service_ref), Some(0));
    assert_eq!(
        manifest_ordinal(&work, &deployment_ref("test-namespace")),
        Some(1)
    );
    assert_eq!(manifest_ordinal(&work, &ObjectReference::default()), None);
}

#[test]
fn a_manifest_status_counts_only_at_the_resources_ordinal() {
    // `equalIdentifier`: the same group, version, kind, namespace and name at another
    // ordinal than the resource's manifest is not the resource's status.
    let resource = deployment_ref("default");
    let status_at = |ordinal: i32| {
        let work = work_of(
            "member1",
            vec![deployment_manifest(Some("default"))],
            Some(("True", "")),
            vec![deployment_status(ordinal, "default")],
        );
        let item = aggregated_items(&[&work], &resource).remove(0);
        (item.status.is_some(), item.health)
    };
    assert_eq!(status_at(0), (true, "Healthy".to_owned()));
    assert_eq!(status_at(1), (false, "Unknown".to_owned()));
}

#[test]
fn a_work_is_applied_when_its_applied_condition_is_true() {
    // `IsResourceApplied`.
    let applied = work_of("member1", vec![], Some(("True", "")), vec![]);
    assert!(applied.is_applied());
    let failed = work_of("member1", vec![], Some(("False", "boom")), vec![]);
    assert!(!failed.is_applied());
    assert!(!work_of("member1", vec![], None, vec![]).is_applied());
}
