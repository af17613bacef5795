//! Karmada's `TestCalculateUsedWithResourceBinding`
//! (`federated_resource_quota_enforcement_controller_test.go`), against [`bindings_used`].
//! Karmada compares `Quantity.String()`; so do these tests.

use flotilla_api::karmada::work::Component;

use super::*;

/// A binding in `shop` with per-replica requests (empty text: not requested).
fn binding(cpu: &str, memory: &str, clusters: &[(&str, i32)]) -> ResourceBinding {
    let mut b = ResourceBinding::default();
    b.metadata.namespace = Some("shop".into());
    b.spec.replica_requirements = Some(ReplicaRequirements {
        resource_request: Some(requests(cpu, memory)),
        ..ReplicaRequirements::default()
    });
    b.spec.clusters = targets(clusters);
    b
}

fn targets(clusters: &[(&str, i32)]) -> Vec<TargetCluster> {
    clusters
        .iter()
        .map(|(name, replicas)| TargetCluster::new(*name, *replicas))
        .collect()
}

fn requests(cpu: &str, memory: &str) -> ResourceList {
    let entries: Vec<(&str, &str)> = [("cpu", cpu), ("memory", memory)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
    list(&entries)
}

fn component(replicas: i32, cpu: &str, memory: &str) -> Component {
    Component {
        replicas,
        replica_requirements: Some(json!({"resourceRequest": requests(cpu, memory)})),
        ..Component::default()
    }
}

/// The usage as Karmada prints it.
fn used(bindings: &[ResourceBinding], overall: ResourceList) -> Vec<(String, String)> {
    bindings_used("shop", bindings.iter(), &overall)
        .into_iter()
        .map(|(name, quantity)| (name, quantity.to_string()))
        .collect()
}

fn printed(entries: &[(&str, &str)]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn a_bindings_usage_is_its_requests_times_its_scheduled_replicas() {
    let one = [binding(
        "500m",
        "128Mi",
        &[("Cluster1", 1), ("Cluster2", 2)],
    )];
    assert_eq!(
        used(&one, requests("2000m", "1Gi")),
        printed(&[("cpu", "1500m"), ("memory", "384Mi")])
    );
}

#[test]
fn the_usage_of_several_bindings_is_summed() {
    let many = [
        binding("1", "2Gi", &[("Cluster1", 1), ("Cluster2", 1)]),
        binding("500m", "500Mi", &[("Cluster1", 2), ("Cluster2", 2)]),
        binding("2", "1Gi", &[("Cluster1", 1), ("Cluster2", 1)]),
    ];
    assert_eq!(
        used(&many, requests("10", "10Gi")),
        printed(&[("cpu", "8"), ("memory", "8144Mi")])
    );
}

#[test]
fn only_resources_of_the_overall_limit_are_counted() {
    let one = [binding("500m", "1Gi", &[("Cluster1", 1), ("Cluster2", 2)])];
    assert_eq!(used(&one, requests("10", "")), printed(&[("cpu", "1500m")]));
}

#[test]
fn a_binding_without_resource_requests_uses_nothing() {
    let mut bare = ResourceBinding::default();
    bare.metadata.namespace = Some("shop".into());
    bare.spec.clusters = targets(&[("cluster1", 0), ("cluster2", 0)]);
    bare.spec.replica_requirements = Some(ReplicaRequirements::default());
    let bindings = [
        bare,
        binding("200m", "128Mi", &[("Cluster1", 1), ("Cluster2", 1)]),
    ];
    assert_eq!(
        used(&bindings, requests("10", "10Gi")),
        printed(&[("cpu", "400m"), ("memory", "256Mi")])
    );
}

#[test]
fn components_count_once_per_target_cluster_whatever_its_replicas() {
    let mut b = ResourceBinding::default();
    b.metadata.namespace = Some("shop".into());
    b.spec.clusters = targets(&[("cluster2", 7), ("cluster3", 7)]);
    b.spec.components = vec![
        component(2, "100m", "128Mi"),
        component(0, "50m", "64Mi"),
        component(3, "25m", ""),
        component(2, "", "32Mi"),
    ];
    // cpu (100m×2 + 25m×3)×2, memory (128Mi×2 + 32Mi×2)×2.
    assert_eq!(
        used(&[b], requests("1", "2Gi")),
        printed(&[("cpu", "550m"), ("memory", "640Mi")])
    );
}

#[test]
fn no_bindings_use_nothing() {
    assert!(used(&[], requests("10", "10Gi")).is_empty());
}
