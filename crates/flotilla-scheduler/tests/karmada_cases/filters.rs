//! Filter plugins and the `NoClusterFit` message (`FitError`): taints (NoSchedule and
//! NoExecute), API enablement with and without `CompleteAPIEnablements`, cluster affinity
//! fields, spread properties, graceful eviction, deleting clusters.

use serde_json::{Value, json};

use super::{Case, check, member, member_with};

const NO_FIT: &str = "NoClusterFit";

fn tainted(name: &str, taints: Value) -> Value {
    member_with(name, 10, json!({"spec": {"taints": taints}}))
}

fn duplicated() -> Value {
    json!({})
}

#[test]
fn taints_and_tolerations() {
    let no_schedule = || {
        tainted(
            "member1",
            json!([{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        )
    };
    let no_execute = || tainted("member2", json!([{"key": "gone", "effect": "NoExecute"}]));
    let prefer = || {
        tainted(
            "member3",
            json!([{"key": "soft", "effect": "PreferNoSchedule"}]),
        )
    };
    check(vec![
        Case::new(
            "NoSchedule and NoExecute taints keep a workload out; PreferNoSchedule does not",
            vec![no_schedule(), no_execute(), prefer()],
            duplicated(),
            1,
        )
        .placed(&[("member3", 1)]),
        Case::new(
            "a cluster already targeted stays despite its taint",
            vec![no_schedule(), no_execute(), prefer()],
            duplicated(),
            1,
        )
        .previous(&[("member2", 1)])
        .placed(&[("member2", 1), ("member3", 1)]),
        Case::new(
            "tolerations: Equal with the value, Exists with the key and effect",
            vec![no_schedule(), no_execute(), prefer()],
            json!({"clusterTolerations": [
                {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                {"key": "gone", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]}),
            1,
        )
        .placed(&[("member1", 1), ("member2", 1), ("member3", 1)]),
        Case::new(
            "a toleration for another effect does not tolerate",
            vec![no_schedule()],
            json!({"clusterTolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]}),
            1,
        )
        .fails(NO_FIT, "0/1 clusters are available: 1 cluster(s) had untolerated taint {k=v:NoSchedule}."),
        Case::new(
            "the first untolerated taint is named; reasons are counted and sorted",
            vec![
                no_schedule(),
                no_execute(),
                tainted("member4", json!([{"key": "gone", "effect": "NoExecute"}])),
            ],
            duplicated(),
            1,
        )
        .fails(
            NO_FIT,
            "0/3 clusters are available: 1 cluster(s) had untolerated taint {k=v:NoSchedule}, 2 cluster(s) had untolerated taint {gone:NoExecute}.",
        ),
        Case::new(
            "the not-ready taint the cluster controller sets",
            vec![tainted(
                "member1",
                json!([{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]),
            )],
            duplicated(),
            1,
        )
        .fails(
            NO_FIT,
            "0/1 clusters are available: 1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}.",
        ),
    ]);
}

#[test]
fn api_enablement() {
    let config_maps_only = |name: &str, complete: bool| {
        let mut status = json!({"apiEnablements": [{"groupVersion": "v1",
            "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}],
            "resourceSummary": {"allocatable": {"pods": "10"}}});
        if complete {
            status["conditions"] = json!([{"type": "CompleteAPIEnablements", "status": "True",
                "reason": "Complete", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
        }
        json!({"metadata": {"name": name}, "spec": {"syncMode": "Push"}, "status": status})
    };
    check(vec![
        Case::new(
            "a kind missing from a complete list, or from a partial one, fails",
            vec![config_maps_only("member1", true), config_maps_only("member2", false), member("member3", 10)],
            duplicated(),
            1,
        )
        .placed(&[("member3", 1)]),
        Case::new(
            "a cluster without status does not serve the kind",
            vec![json!({"metadata": {"name": "member1"}, "spec": {"syncMode": "Push"}})],
            duplicated(),
            1,
        )
        .fails(NO_FIT, "0/1 clusters are available: 1 cluster(s) did not have the API resource."),
        Case::new(
            "a cluster already targeted passes without the API",
            vec![config_maps_only("member1", true)],
            duplicated(),
            1,
        )
        .previous(&[("member1", 1)])
        .placed(&[("member1", 1)]),
        Case::new(
            "counts per reason",
            vec![
                config_maps_only("member1", true),
                config_maps_only("member2", false),
                member("member3", 10),
            ],
            json!({"clusterAffinity": {"clusterNames": ["member1", "member2"]}}),
            1,
        )
        .fails(
            NO_FIT,
            "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity constraint, 2 cluster(s) did not have the API resource.",
        ),
    ]);
}

#[test]
fn cluster_affinity_fields_and_spread_properties() {
    let located = |name: &str, provider: &str, region: &str, zones: Value| {
        member_with(
            name,
            10,
            json!({"spec": {"provider": provider, "region": region, "zones": zones},
                "metadata": {"labels": {"env": name}}}),
        )
    };
    let clusters = || {
        vec![
            located("member1", "aws", "us-east", json!(["a", "b"])),
            located("member2", "gcp", "eu-west", json!(["c"])),
            located("member3", "", "", json!([])),
        ]
    };
    let affinity = |a: Value| json!({"clusterAffinity": a});
    check(vec![
        Case::new(
            "region In",
            clusters(),
            affinity(json!({"fieldSelector": {"matchExpressions": [
                {"key": "region", "operator": "In", "values": ["us-east"]}]}})),
            1,
        )
        .placed(&[("member1", 1)]),
        Case::new(
            "provider NotIn keeps clusters without a provider",
            clusters(),
            affinity(json!({"fieldSelector": {"matchExpressions": [
                {"key": "provider", "operator": "NotIn", "values": ["aws"]}]}})),
            1,
        )
        .placed(&[("member2", 1), ("member3", 1)]),
        Case::new(
            "zone In matches any of the cluster's zones",
            clusters(),
            affinity(json!({"fieldSelector": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["b", "c"]}]}})),
            1,
        )
        .placed(&[("member1", 1), ("member2", 1)]),
        Case::new(
            "zone NotIn keeps clusters without zones",
            clusters(),
            affinity(json!({"fieldSelector": {"matchExpressions": [
                {"key": "zone", "operator": "NotIn", "values": ["a"]}]}})),
            1,
        )
        .placed(&[("member2", 1), ("member3", 1)]),
        Case::new(
            "label selector, names and exclusions are ANDed",
            clusters(),
            affinity(json!({"labelSelector": {"matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["member1", "member2"]}]},
                "clusterNames": ["member1", "member2", "member3"], "exclude": ["member1"]})),
            1,
        )
        .placed(&[("member2", 1)]),
        Case::new(
            "spreading by provider needs a provider",
            clusters(),
            json!({"spreadConstraints": [
                {"spreadByField": "provider", "minGroups": 1, "maxGroups": 2},
                {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]}),
            1,
        )
        .placed(&[("member1", 1)]),
        Case::new(
            "no cluster has the spread properties",
            vec![located("member3", "", "", json!([]))],
            json!({"spreadConstraints": [
                {"spreadByField": "zone", "minGroups": 1},
                {"spreadByField": "region", "minGroups": 1},
                {"spreadByField": "cluster", "minGroups": 1}]}),
            1,
        )
        .fails(
            NO_FIT,
            "0/1 clusters are available: 1 cluster(s) did not have zones property.",
        ),
    ]);
}

#[test]
fn eviction_deletion_and_empty_snapshots() {
    let deleting = |name: &str| {
        member_with(
            name,
            10,
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["x"]}}),
        )
    };
    check(vec![
        Case::new(
            "a cluster the binding is being evicted from is no candidate",
            vec![member("member1", 10), member("member2", 10)],
            duplicated(),
            1,
        )
        .spec(json!({"gracefulEvictionTasks": [{"fromCluster": "member1", "reason": "TaintUntolerated",
            "producer": "taint-manager"}]}))
        .placed(&[("member2", 1)]),
        Case::new(
            "only the evicted cluster",
            vec![member("member1", 10)],
            duplicated(),
            1,
        )
        .spec(json!({"gracefulEvictionTasks": [{"fromCluster": "member1", "reason": "TaintUntolerated",
            "producer": "taint-manager"}]}))
        .fails(NO_FIT, "0/1 clusters are available: 1 cluster(s) is in the process of eviction."),
        Case::new(
            "deleting clusters count but are not diagnosed",
            vec![deleting("member1"), tainted("member2", json!([{"key": "k", "effect": "NoSchedule"}]))],
            duplicated(),
            1,
        )
        .fails(NO_FIT, "0/2 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}."),
        Case::new("only deleting clusters", vec![deleting("member1")], duplicated(), 1)
            .fails(NO_FIT, "0/1 clusters are available: no cluster exists."),
        Case::new("no clusters", vec![], duplicated(), 1)
            .fails(NO_FIT, "0/0 clusters are available: no cluster exists."),
    ]);
}
