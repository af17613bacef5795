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
        .map(|(claim, _, _)| match claim {
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
    let decided = index.decide(&namespace, None, true).map(|(c, _, _)| c);
    assert_eq!(
        decided,
        Some(PolicyClaim::Cluster {
            name: "cpp".into(),
            id: "id-cpp".into()
        })
    );
}
