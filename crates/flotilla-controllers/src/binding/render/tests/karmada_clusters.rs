//! Karmada's `TestObtainBindingSpecExistingClusters` and `TestObtainClustersWithPurgeModeDirectly`
//! (`pkg/util/helper/binding_test.go`) restated against `expected_clusters` and
//! `directly_purged_clusters`.

use super::*;

fn spec(value: Value) -> ResourceBindingSpec {
    serde_json::from_value(value).expect("binding spec")
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn existing_clusters_are_scheduled_required_by_and_gracefully_evicted_ones() {
    let scheduled = json!([{"name": "member1", "replicas": 2}, {"name": "member2", "replicas": 3}]);
    let required_by = json!([{"clusters": [{"name": "member3", "replicas": 2}]}]);
    type Row = (&'static str, Value, &'static [&'static str]);
    let table: [Row; 4] = [
        (
            "scheduled and required-by clusters, no eviction",
            json!({"clusters": scheduled, "requiredBy": required_by}),
            &["member1", "member2", "member3"],
        ),
        (
            "an evicted cluster (no purge mode) still has its Works",
            json!({"clusters": scheduled, "requiredBy": required_by,
                "gracefulEvictionTasks": [{"fromCluster": "member4"}]}),
            &["member1", "member2", "member3", "member4"],
        ),
        (
            "a cluster named twice counts once",
            json!({"clusters": scheduled, "requiredBy": required_by,
                "gracefulEvictionTasks": [{"fromCluster": "member3"}]}),
            &["member1", "member2", "member3"],
        ),
        (
            "an eviction purged Directly leaves no existing cluster",
            json!({"clusters": scheduled, "gracefulEvictionTasks": [
                {"fromCluster": "member3", "purgeMode": "Directly"},
                {"fromCluster": "member4", "purgeMode": "Gracefully"},
                {"fromCluster": "member5", "purgeMode": "Never"}]}),
            &["member1", "member2", "member4", "member5"],
        ),
    ];
    for (desc, value, want) in table {
        assert_eq!(expected_clusters(&spec(value)), names(want), "{desc}");
    }
}

#[test]
fn directly_purged_clusters_are_those_of_directly_purged_evictions() {
    let mixed = spec(json!({"gracefulEvictionTasks": [
        {"fromCluster": "cluster1", "purgeMode": "Directly"},
        {"fromCluster": "cluster2", "purgeMode": "Directly"},
        {"fromCluster": "cluster3", "purgeMode": "Gracefully"}]}));
    assert_eq!(
        directly_purged_clusters(&mixed),
        ["cluster1", "cluster2"].into_iter().collect()
    );
    let none = spec(json!({"gracefulEvictionTasks": []}));
    assert!(directly_purged_clusters(&none).is_empty());
}
