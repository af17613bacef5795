//! Karmada's `descheduler/core` cases: `FilterBindings`, `validateGVK` and `validatePlacement`
//! (which bindings [`deschedulable`] admits), and the `SchedulingResultHelper` cases
//! (`NewSchedulingResultHelper`, `getReadyReplicas`, `GetUndesiredClusters`: what
//! [`cluster_replicas`] and [`ClusterReplicas::short`] compute).

use super::*;

/// A binding of `api_version`/`kind` with `placement` (serialised) as its applied placement.
fn bound(api_version: &str, kind: &str, placement: Option<serde_json::Value>) -> ResourceBinding {
    let mut value = json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"resource": {"apiVersion": api_version, "kind": kind, "name": "web"}},
    });
    if let Some(placement) = placement {
        value["metadata"]["annotations"] =
            json!({(ANNOTATION_APPLIED_PLACEMENT): placement.to_string()});
    }
    serde_json::from_value(value).expect("binding")
}

fn annotated(api_version: &str, kind: &str, annotation: &str) -> ResourceBinding {
    let mut binding = bound(api_version, kind, None);
    binding.metadata.annotations = Some(
        [(
            ANNOTATION_APPLIED_PLACEMENT.to_owned(),
            annotation.to_owned(),
        )]
        .into(),
    );
    binding
}

fn strategy(kind: &str, preference: &str, weights: Option<serde_json::Value>) -> serde_json::Value {
    let mut strategy = json!({"replicaSchedulingType": kind});
    if !preference.is_empty() {
        strategy["replicaDivisionPreference"] = json!(preference);
    }
    if let Some(weights) = weights {
        strategy["weightPreference"] = weights;
    }
    json!({"replicaScheduling": strategy})
}

fn aggregated() -> Option<serde_json::Value> {
    Some(strategy("Divided", "Aggregated", None))
}

fn duplicated() -> Option<serde_json::Value> {
    Some(strategy("Duplicated", "", None))
}

#[test]
fn only_deployments_with_a_dynamically_divided_applied_placement_pass_the_filter() {
    let count = |bindings: &[ResourceBinding]| bindings.iter().filter(|b| deschedulable(b)).count();
    for (case, bindings, expected) in [
        (
            "no valid bindings",
            vec![bound("v1", "Pod", None), bound("v1", "Service", None)],
            0,
        ),
        (
            "mix of valid and invalid bindings",
            vec![
                bound("apps/v1", "Deployment", aggregated()),
                bound("v1", "Pod", aggregated()),
                bound("apps/v1", "Deployment", duplicated()),
            ],
            1,
        ),
        (
            "all valid bindings",
            vec![
                bound("apps/v1", "Deployment", aggregated()),
                bound("apps/v1", "Deployment", aggregated()),
            ],
            2,
        ),
        (
            "invalid placement annotation",
            vec![annotated("apps/v1", "Deployment", "invalid json")],
            0,
        ),
        (
            "mix of valid and invalid annotations",
            vec![
                annotated("apps/v1", "Deployment", "invalid json"),
                bound("apps/v1", "Deployment", aggregated()),
            ],
            1,
        ),
    ] {
        assert_eq!(count(&bindings), expected, "{case}");
    }
}

#[test]
fn apps_v1_deployment_is_the_only_supported_kind() {
    for (case, api_version, kind, expected) in [
        ("Deployment", "apps/v1", "Deployment", true),
        ("Pod", "v1", "Pod", false),
        (
            "custom resource",
            "custom.example.com/v1",
            "MyCustomResource",
            false,
        ),
        (
            "another version of Deployment",
            "apps/v2",
            "Deployment",
            false,
        ),
        ("empty apiVersion", "", "Deployment", false),
        ("empty kind", "apps/v1", "", false),
        ("kind is case-sensitive", "apps/v1", "deployment", false),
    ] {
        // An admissible placement, so that only the kind decides.
        assert_eq!(
            deschedulable(&bound(api_version, kind, aggregated())),
            expected,
            "{case}"
        );
    }
}

#[test]
fn the_applied_placement_must_divide_replicas_dynamically() {
    let deployment = |placement| bound("apps/v1", "Deployment", placement);
    for (case, binding, expected) in [
        ("no applied placement", deployment(None), false),
        ("Duplicated", deployment(duplicated()), false),
        ("Divided, Aggregated", deployment(aggregated()), true),
        (
            "Divided, Weighted without a dynamic weight",
            deployment(Some(strategy("Divided", "Weighted", Some(json!({}))))),
            false,
        ),
        (
            "Divided, Weighted by available replicas",
            deployment(Some(strategy(
                "Divided",
                "Weighted",
                Some(json!({"dynamicWeight": "AvailableReplicas"})),
            ))),
            true,
        ),
        (
            "annotation is not JSON",
            annotated("apps/v1", "Deployment", "invalid json"),
            false,
        ),
        (
            "annotation is JSON but no placement field",
            annotated("apps/v1", "Deployment", r#"{"invalidField": "value"}"#),
            false,
        ),
        ("no replicaScheduling", deployment(Some(json!({}))), false),
    ] {
        assert_eq!(deschedulable(&binding), expected, "{case}");
    }
}

/// A binding scheduled to `clusters` whose aggregated status reports `statuses` (raw JSON text).
fn with_statuses(clusters: &[(&str, i32)], statuses: &[(&str, &str)]) -> ResourceBinding {
    let clusters: Vec<serde_json::Value> = clusters
        .iter()
        .map(|(name, replicas)| json!({"name": name, "replicas": replicas}))
        .collect();
    let items: Vec<serde_json::Value> = statuses
        .iter()
        .map(|(name, raw)| {
            json!({"clusterName": name,
                "status": serde_json::from_str::<serde_json::Value>(raw).expect("status JSON")})
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "b", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "clusters": clusters},
        "status": {"aggregatedStatus": items},
    }))
    .expect("binding")
}

fn seen(binding: &ResourceBinding) -> Vec<(String, i32, i32)> {
    cluster_replicas(binding)
        .into_iter()
        .map(|r| {
            assert_eq!(r.unschedulable, 0, "nothing is unschedulable before asking");
            (r.cluster, r.spec, r.ready)
        })
        .collect()
}

fn row(cluster: &str, spec: i32, ready: i32) -> (String, i32, i32) {
    (cluster.to_owned(), spec, ready)
}

#[test]
fn each_scheduled_cluster_gets_its_reported_ready_replicas() {
    let binding = with_statuses(
        &[("cluster1", 3), ("cluster2", 2)],
        &[
            ("cluster1", r#"{"readyReplicas": 2}"#),
            ("cluster2", r#"{"readyReplicas": 1}"#),
        ],
    );
    assert_eq!(
        seen(&binding),
        [row("cluster1", 3, 2), row("cluster2", 2, 1)]
    );
}

#[test]
fn a_status_that_cannot_be_read_leaves_the_ready_replicas_unknown() {
    // Karmada's case stores bytes that are not JSON; a stored status is always JSON here, so a
    // JSON string (not an object) stands in for it.
    let binding = with_statuses(
        &[("cluster1", 3), ("cluster2", 2)],
        &[
            ("cluster1", r#"{"readyReplicas": 2}"#),
            ("cluster2", r#""invalid json""#),
        ],
    );
    assert_eq!(
        seen(&binding),
        [row("cluster1", 3, 2), row("cluster2", 2, UNKNOWN)]
    );
}

#[test]
fn ready_replicas_are_read_only_from_the_ready_replicas_field() {
    for (case, second, expected) in [
        ("both report readyReplicas", r#"{"readyReplicas": 3}"#, 3),
        ("missing readyReplicas", r#"{"someOtherField": 3}"#, UNKNOWN),
        ("not an object", r#""invalid json""#, UNKNOWN),
    ] {
        let binding = with_statuses(
            &[("cluster1", 5), ("cluster2", 5)],
            &[
                ("cluster1", r#"{"readyReplicas": 2}"#),
                ("cluster2", second),
            ],
        );
        assert_eq!(
            seen(&binding),
            [row("cluster1", 5, 2), row("cluster2", 5, expected)],
            "{case}"
        );
    }
}

#[test]
fn clusters_with_fewer_ready_than_scheduled_replicas_are_undesired() {
    let short = |rows: &[(&str, i32, i32)]| -> Vec<String> {
        rows.iter()
            .map(|&(cluster, spec, ready)| ClusterReplicas {
                cluster: cluster.into(),
                spec,
                ready,
                unschedulable: 0,
            })
            .filter(ClusterReplicas::short)
            .map(|r| r.cluster)
            .collect()
    };
    assert_eq!(
        short(&[("cluster1", 3, 2), ("cluster2", 2, 2), ("cluster3", 4, 1)]),
        ["cluster1", "cluster3"]
    );
    assert!(short(&[("cluster1", 2, 2), ("cluster2", 3, 3)]).is_empty());
    // Unknown ready replicas are below any scheduled count.
    assert_eq!(short(&[("cluster1", 1, UNKNOWN)]), ["cluster1"]);
}
