use serde_json::{Value, json};

use super::*;

fn pp(name: &str, priority: i32, preemption: &str, selector: Value) -> PropagationPolicy {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default",
            "labels": {PP_PERMANENT_ID: format!("id-{name}")}},
        "spec": {"resourceSelectors": [selector], "priority": priority, "preemption": preemption,
            "placement": {}}}))
    .expect("pp")
}

fn cpp(name: &str, priority: i32, selector: Value) -> ClusterPropagationPolicy {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {CPP_PERMANENT_ID: format!("id-{name}")}},
        "spec": {"resourceSelectors": [selector], "priority": priority, "placement": {}}}))
    .expect("cpp")
}

fn index(pps: Vec<PropagationPolicy>, cpps: Vec<ClusterPropagationPolicy>) -> PolicyIndex {
    let mut index = PolicyIndex::default();
    for p in pps {
        index.pps.insert(
            (
                p.metadata.namespace.clone().unwrap_or_default(),
                p.metadata.name.clone().unwrap_or_default(),
            ),
            Arc::new(p),
        );
    }
    for p in cpps {
        index
            .cpps
            .insert(p.metadata.name.clone().unwrap_or_default(), Arc::new(p));
    }
    index
}

fn template() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}}})
}

fn all() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment"})
}

fn by_name() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

fn chosen(index: &PolicyIndex, current: Option<&PolicyClaim>) -> Option<String> {
    index
        .decide(&template(), current, false)
        .map(|(claim, _, _, _)| match claim {
            PolicyClaim::Namespaced { name, .. } | PolicyClaim::Cluster { name, .. } => name,
        })
}

#[test]
fn a_namespaced_policy_is_tried_before_any_cluster_policy() {
    let index = index(
        vec![pp("low", 0, "", all())],
        vec![cpp("high", 100, by_name())],
    );
    assert_eq!(chosen(&index, None).as_deref(), Some("low"));
    let only_cluster = super::PolicyIndex {
        pps: BTreeMap::new(),
        cpps: index.cpps.clone(),
    };
    assert_eq!(chosen(&only_cluster, None).as_deref(), Some("high"));
}

#[test]
fn a_claimed_template_keeps_its_policy_unless_preempted() {
    let claim = PolicyClaim::Namespaced {
        namespace: "default".into(),
        name: "first".into(),
        id: "id-first".into(),
    };
    let keep = index(
        vec![
            pp("first", 0, "", all()),
            pp("better", 5, "Never", by_name()),
        ],
        vec![],
    );
    assert_eq!(chosen(&keep, Some(&claim)).as_deref(), Some("first"));
    let preempt = index(
        vec![
            pp("first", 0, "", all()),
            pp("better", 5, "Always", by_name()),
        ],
        vec![],
    );
    assert_eq!(chosen(&preempt, Some(&claim)).as_deref(), Some("better"));
    // A preemption is told apart (for its event); keeping the claim is not one.
    let preempted = |index: &super::PolicyIndex| {
        index
            .decide(&template(), Some(&claim), false)
            .map(|(_, _, _, preempted)| preempted)
    };
    assert_eq!(preempted(&preempt), Some(true));
    assert_eq!(preempted(&keep), Some(false));
}

#[test]
fn a_stale_claim_is_replaced_by_the_best_match() {
    // The claimed policy was recreated (new permanent id): the claim is stale.
    let claim = PolicyClaim::Namespaced {
        namespace: "default".into(),
        name: "first".into(),
        id: "id-of-a-deleted-policy".into(),
    };
    let index = index(
        vec![pp("first", 0, "", all()), pp("second", 0, "", by_name())],
        vec![],
    );
    assert_eq!(chosen(&index, Some(&claim)).as_deref(), Some("second"));
    // Replacing a stale claim preempts nobody.
    assert_eq!(
        index
            .decide(&template(), Some(&claim), false)
            .map(|(_, _, _, preempted)| preempted),
        Some(false)
    );
    let nothing = super::PolicyIndex::default();
    assert_eq!(chosen(&nothing, Some(&claim)), None);
}

#[test]
fn cluster_scoped_templates_only_match_cluster_policies() {
    let index = index(
        vec![pp(
            "pp",
            0,
            "",
            json!({"apiVersion": "v1", "kind": "Namespace"}),
        )],
        vec![cpp(
            "cpp",
            0,
            json!({"apiVersion": "v1", "kind": "Namespace"}),
        )],
    );
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    let decided = index.decide(&namespace, None, true).map(|(c, _, _, _)| c);
    assert_eq!(
        decided,
        Some(PolicyClaim::Cluster {
            name: "cpp".into(),
            id: "id-cpp".into()
        })
    );
}

#[test]
fn karmadas_own_groups_leases_and_events_are_never_propagated() {
    use crate::detector::is_skipped_kind;
    for (group, api_version, kind) in [
        (
            "work.karmada.io",
            "work.karmada.io/v1alpha2",
            "ResourceBinding",
        ),
        (
            "config.karmada.io",
            "config.karmada.io/v1alpha1",
            "ResourceInterpreterCustomization",
        ),
        (
            "networking.karmada.io",
            "networking.karmada.io/v1alpha1",
            "MultiClusterService",
        ),
        (
            "autoscaling.karmada.io",
            "autoscaling.karmada.io/v1alpha1",
            "FederatedHPA",
        ),
        ("coordination.k8s.io", "coordination.k8s.io/v1", "Lease"),
        ("events.k8s.io", "events.k8s.io/v1", "Event"),
        ("", "v1", "Event"),
    ] {
        assert!(
            is_skipped_kind(group, api_version, kind),
            "{api_version} {kind}"
        );
    }
    for (group, api_version, kind) in [
        ("apps", "apps/v1", "Deployment"),
        ("", "v1", "ConfigMap"),
        ("example.com", "example.com/v1", "Event"),
    ] {
        assert!(
            !is_skipped_kind(group, api_version, kind),
            "{api_version} {kind}"
        );
    }
}
