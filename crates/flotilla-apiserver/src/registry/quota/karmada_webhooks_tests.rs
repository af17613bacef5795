//! The quota cases of Karmada's `pkg/webhook/resourcebinding/validating_test.go`
//! (`TestValidatingAdmission_Handle`), restated against [`quota_refusal`]. Karmada's cases give
//! each quota a `status.overallUsed`; here that is what the namespace uses before the write.

use serde_json::{Value, json};

use super::*;

fn spec(spec: Value) -> ResourceBindingSpec {
    serde_json::from_value(spec).expect("binding spec")
}

/// A binding scheduled onto `clusters` (`[name, replicas]`) with per-replica `cpu`.
fn scheduled(cpu: &str, clusters: &[(&str, i32)]) -> ResourceBindingSpec {
    let clusters: Vec<Value> = clusters
        .iter()
        .map(|(name, replicas)| json!({"name": name, "replicas": replicas}))
        .collect();
    spec(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "replicaRequirements": {"resourceRequest": {"cpu": cpu}},
        "clusters": clusters,
    }))
}

/// A binding with components (`[name, replicas, cpu]`) on `clusters` (no replicas each).
fn with_components(components: &[(&str, i32, &str)], clusters: &[&str]) -> ResourceBindingSpec {
    let components: Vec<Value> = components
        .iter()
        .map(|(name, replicas, cpu)| {
            json!({"name": name, "replicas": replicas,
                   "replicaRequirements": {"resourceRequest": {"cpu": cpu}}})
        })
        .collect();
    let clusters: Vec<Value> = clusters.iter().map(|c| json!({"name": c})).collect();
    spec(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "components": components,
        "clusters": clusters,
    }))
}

fn frq(namespace: &str, name: &str, overall_cpu: &str) -> FederatedResourceQuota {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"overall": {"cpu": overall_cpu}},
    }))
    .expect("quota")
}

fn cpu(quantity: &str) -> ResourceList {
    serde_json::from_value(json!({"cpu": quantity})).expect("resource list")
}

/// Karmada's decision with one quota whose `overallUsed` is `used_cpu`.
fn decide(
    new: &ResourceBindingSpec,
    old: Option<&ResourceBindingSpec>,
    quota: FederatedResourceQuota,
    used_cpu: &str,
) -> Option<String> {
    quota_refusal(new, old, || vec![quota], |_| cpu(used_cpu))
}

#[test]
fn an_unscheduled_create_is_not_checked() {
    let quotas_read = std::cell::Cell::new(false);
    let new = scheduled("100m", &[]);
    let refusal = quota_refusal(
        &new,
        None,
        || {
            quotas_read.set(true);
            vec![frq("default", "frq-for-create-unscheduled", "200m")]
        },
        |_| cpu("100m"),
    );
    assert_eq!(refusal, None);
    assert!(!quotas_read.get());
}

#[test]
fn an_update_without_usage_changes_is_not_checked() {
    let binding = scheduled("100m", &[("m1", 1)]);
    assert_eq!(
        decide(
            &binding,
            Some(&binding),
            frq("default", "frq-for-nochange", "200m"),
            "100m"
        ),
        None
    );
}

#[test]
fn an_update_whose_usage_stays_the_same_is_admitted() {
    // 1 × 200m replaces 2 × 100m: relevant fields change, the usage does not.
    let old = scheduled("100m", &[("m2", 2)]);
    let new = scheduled("200m", &[("m1", 1)]);
    assert_eq!(
        quota_refusal(
            &new,
            Some(&old),
            || vec![frq("default", "frq-fordeltazero", "1Gi")],
            |_| { ResourceList::new() }
        ),
        None
    );
}

#[test]
fn a_namespace_without_quotas_admits_anything() {
    let new = scheduled("1", &[("m1", 1)]);
    assert_eq!(
        quota_refusal(&new, None, Vec::new, |_| ResourceList::new()),
        None
    );
}

#[test]
fn a_create_beyond_the_quota_is_refused_with_karmadas_message() {
    let new = scheduled("200m", &[("m1", 1)]);
    assert_eq!(
        decide(
            &new,
            None,
            frq("quota-ns", "frq-create-exceeds", "150m"),
            "0m"
        )
        .as_deref(),
        Some(
            "FederatedResourceQuota(quota-ns/frq-create-exceeds) exceeded for resource cpu: requested sum 200m, limit 150m."
        )
    );
}

#[test]
fn an_update_within_the_quota_is_admitted() {
    let old = scheduled("50m", &[("m1", 1)]);
    let new = scheduled("100m", &[("m1", 1)]);
    // Karmada's dry-run and non-dry-run cases decide alike.
    for name in ["frq-update-pass-nondryrun", "frq-update-pass-dryrun"] {
        assert_eq!(
            decide(&new, Some(&old), frq("quota-ns", name, "200m"), "100m"),
            None
        );
    }
}

#[test]
fn an_update_beyond_the_quota_is_refused_with_the_new_sum() {
    // 1 × 50m becomes 2 × 80m: +110m on an unused quota of 100m.
    let old = scheduled("50m", &[("m1", 1)]);
    let new = scheduled("80m", &[("m1", 2)]);
    assert_eq!(
        decide(
            &new,
            Some(&old),
            frq("quota-ns", "frq-update-fail", "100m"),
            "0m"
        )
        .as_deref(),
        Some(
            "FederatedResourceQuota(quota-ns/frq-update-fail) exceeded for resource cpu: requested sum 110m, limit 100m."
        )
    );
}

#[test]
fn component_usage_counts_once_per_target_cluster() {
    // (2 × 25m + 1 × 30m) on two clusters: 160m.
    let new = with_components(&[("comp1", 2, "25m"), ("comp2", 1, "30m")], &["m1", "m2"]);
    assert_eq!(
        decide(
            &new,
            None,
            frq("quota-ns", "frq-components-sufficient", "200m"),
            "0m"
        ),
        None
    );
    assert_eq!(
        decide(
            &new,
            None,
            frq("quota-ns", "frq-components-exceeded", "150m"),
            "0m"
        )
        .as_deref(),
        Some(
            "FederatedResourceQuota(quota-ns/frq-components-exceeded) exceeded for resource cpu: requested sum 160m, limit 150m."
        )
    );
}

#[test]
fn component_updates_are_checked_by_their_usage_change() {
    let old = with_components(&[("comp-old", 1, "50m")], &["m1"]);
    let passing = with_components(&[("comp-new", 2, "40m")], &["m1"]);
    assert_eq!(
        decide(
            &passing,
            Some(&old),
            frq("quota-ns", "frq-components-pass", "200m"),
            "100m"
        ),
        None
    );
    let failing = with_components(&[("comp-new", 2, "80m")], &["m1"]);
    assert_eq!(
        decide(
            &failing,
            Some(&old),
            frq("quota-ns", "frq-components-fail", "100m"),
            "0m"
        )
        .as_deref(),
        Some(
            "FederatedResourceQuota(quota-ns/frq-components-fail) exceeded for resource cpu: requested sum 110m, limit 100m."
        )
    );
}

#[test]
fn quota_relevance_follows_karmadas_field_comparison() {
    // TestIsQuotaRelevantFieldChanged and its helpers' cases.
    let base = scheduled("100m", &[("m1", 1)]);
    let relevant = |a: &ResourceBindingSpec, b: &ResourceBindingSpec| quota_relevant_change(a, b);
    assert!(!relevant(&base, &base.clone()));
    assert!(relevant(&base, &scheduled("200m", &[("m1", 1)])));
    assert!(relevant(&base, &scheduled("100m", &[("m1", 2)])));
    // Another resource name is a different request.
    let memory = spec(
        json!({"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"},
        "replicaRequirements": {"resourceRequest": {"memory": "100m"}},
        "clusters": [{"name": "m1", "replicas": 1}]}),
    );
    assert!(relevant(&base, &memory));
    // No requirements on either side, or equal totals on other clusters: not relevant.
    let bare = |clusters: Value| {
        spec(
            json!({"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"}, "clusters": clusters}),
        )
    };
    assert!(!relevant(&bare(json!([])), &bare(json!([]))));
    assert!(!relevant(
        &bare(json!([{"name": "m1", "replicas": 1}, {"name": "m2", "replicas": 2}])),
        &bare(json!([{"name": "m3", "replicas": 3}]))
    ));
    assert!(relevant(
        &bare(json!([])),
        &bare(json!([{"name": "m1", "replicas": 1}]))
    ));
    assert!(relevant(
        &bare(json!([{"name": "m1", "replicas": 1}])),
        &bare(json!([]))
    ));
    assert!(relevant(&bare(json!([])), &base));
    assert!(relevant(
        &base,
        &bare(json!([{"name": "m1", "replicas": 1}]))
    ));
    // A field quotas do not look at.
    let mut other = base.clone();
    other.conflict_resolution = "Overwrite".into();
    assert!(!relevant(&base, &other));
    // Components: count, replicas, requirements present or not, requests.
    let one = with_components(&[("c", 1, "50m")], &["m1"]);
    assert!(!relevant(&one, &one.clone()));
    assert!(relevant(
        &one,
        &with_components(&[("c", 1, "50m"), ("d", 1, "50m")], &["m1"])
    ));
    assert!(relevant(
        &one,
        &with_components(&[("c", 2, "50m")], &["m1"])
    ));
    assert!(relevant(
        &one,
        &with_components(&[("c", 1, "60m")], &["m1"])
    ));
    let no_requirements = spec(
        json!({"resource": {"apiVersion": "v1", "kind": "Pod", "name": "p"},
        "components": [{"name": "c", "replicas": 1}], "clusters": [{"name": "m1"}]}),
    );
    assert!(relevant(&one, &no_requirements));
    assert!(relevant(&no_requirements, &one));
}
