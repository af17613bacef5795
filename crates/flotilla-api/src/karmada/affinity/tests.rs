use serde_json::json;

use super::*;

fn cluster(value: serde_json::Value) -> Cluster {
    serde_json::from_value(value).expect("test cluster")
}

fn affinity(value: serde_json::Value) -> ClusterAffinity {
    serde_json::from_value(value).expect("test affinity")
}

fn member() -> Cluster {
    cluster(json!({
        "metadata": {"name": "member1", "labels": {"env": "prod", "gpu": "a100"}},
        "spec": {"syncMode": "Push", "provider": "aws", "region": "us-west-2",
                 "zones": ["us-west-2a", "us-west-2b"]}
    }))
}

#[test]
fn empty_affinity_matches_every_cluster() {
    assert!(cluster_matches(&member(), &ClusterAffinity::default()));
}

#[test]
fn exclude_wins_over_names() {
    let a = affinity(json!({"clusterNames": ["member1"], "exclude": ["member1"]}));
    assert!(!cluster_matches(&member(), &a));
}

#[test]
fn parts_are_anded() {
    let table = [
        (
            json!({"labelSelector": {"matchLabels": {"env": "prod"}}}),
            true,
        ),
        (
            json!({"labelSelector": {"matchLabels": {"env": "dev"}}}),
            false,
        ),
        (
            json!({"labelSelector": {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]}}),
            true,
        ),
        (json!({"clusterNames": ["member2"]}), false),
        (json!({"clusterNames": ["member2", "member1"]}), true),
        (
            json!({"labelSelector": {"matchLabels": {"env": "prod"}}, "clusterNames": ["member2"]}),
            false,
        ),
        (
            json!({"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In", "values": ["aws"]}]}}),
            true,
        ),
        (
            json!({"fieldSelector": {"matchExpressions": [{"key": "region", "operator": "NotIn", "values": ["us-west-2"]}]}}),
            false,
        ),
        (
            json!({"fieldSelector": {"matchExpressions": [
            {"key": "provider", "operator": "In", "values": ["aws"]},
            {"key": "region", "operator": "In", "values": ["eu-central-1"]}]}}),
            false,
        ),
        // An In expression without values is invalid and matches nothing.
        (
            json!({"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In"}]}}),
            false,
        ),
    ];
    for (value, want) in table {
        assert_eq!(
            cluster_matches(&member(), &affinity(value.clone())),
            want,
            "{value}"
        );
    }
}

#[test]
fn zone_expressions_use_the_zones_list() {
    let no_zones = cluster(json!({"metadata": {"name": "bare"}, "spec": {"syncMode": "Push"}}));
    let expr = |op: &str, values: &[&str]| {
        affinity(json!({"fieldSelector": {"matchExpressions": [
            {"key": "zone", "operator": op, "values": values}]}}))
    };
    let table = [
        (expr("In", &["us-west-2b", "x"]), true, false),
        (expr("In", &["x"]), false, false),
        (expr("NotIn", &["us-west-2a"]), false, true),
        (expr("NotIn", &["x"]), true, true),
        (expr("Exists", &[]), true, false),
        (expr("DoesNotExist", &[]), false, true),
        (expr("Gt", &["1"]), false, false),
    ];
    for (a, with_zones, without) in table {
        assert_eq!(cluster_matches(&member(), &a), with_zones, "{a:?}");
        assert_eq!(cluster_matches(&no_zones, &a), without, "{a:?}");
    }
}

#[test]
fn unset_provider_is_absent_not_empty() {
    let bare = cluster(json!({"metadata": {"name": "bare"}, "spec": {"syncMode": "Push"}}));
    let not_in = affinity(json!({"fieldSelector": {"matchExpressions": [
        {"key": "provider", "operator": "NotIn", "values": ["aws"]}]}}));
    let exists = affinity(json!({"fieldSelector": {"matchExpressions": [
        {"key": "provider", "operator": "Exists"}]}}));
    assert!(cluster_matches(&bare, &not_in));
    assert!(!cluster_matches(&bare, &exists));
}
