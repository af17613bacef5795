use serde_json::json;

use super::*;

fn hpa(labels: Value, api_version: &str, kind: &str, name: &str) -> HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "prod", "labels": labels},
        "spec": {"scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": name},
            "minReplicas": 2, "maxReplicas": 10},
    }))
    .expect("an HPA")
}

fn target(kind: &str, name: &str) -> ScaleTarget {
    ScaleTarget {
        namespace: "prod".into(),
        api_version: "apps/v1".into(),
        kind: kind.into(),
        name: name.into(),
    }
}

const CLAIMED: &str = "propagationpolicy.karmada.io/permanent-id";

#[test]
fn only_an_hpa_claimed_by_a_policy_marks_its_target() {
    let claimed = hpa(json!({CLAIMED: "id"}), "apps/v1", "Deployment", "web");
    assert_eq!(
        on_seen(None, &claimed),
        vec![(target("Deployment", "web"), Mark::Add)]
    );
    let cluster_claimed = hpa(
        json!({"clusterpropagationpolicy.karmada.io/permanent-id": "id"}),
        "apps/v1",
        "StatefulSet",
        "db",
    );
    assert_eq!(
        on_seen(None, &cluster_claimed),
        vec![(target("StatefulSet", "db"), Mark::Add)]
    );
    let unclaimed = hpa(json!({"app": "web"}), "apps/v1", "Deployment", "web");
    assert_eq!(on_seen(None, &unclaimed), vec![]);
}

#[test]
fn a_retargeted_hpa_unmarks_the_old_target_even_when_not_propagated() {
    let old = target("Deployment", "web");
    let claimed = hpa(json!({CLAIMED: "id"}), "apps/v1", "Deployment", "api");
    assert_eq!(
        on_seen(Some(&old), &claimed),
        vec![
            (old.clone(), Mark::Remove),
            (target("Deployment", "api"), Mark::Add)
        ]
    );
    let unclaimed = hpa(json!({}), "apps/v1", "Deployment", "api");
    assert_eq!(
        on_seen(Some(&old), &unclaimed),
        vec![(old.clone(), Mark::Remove)]
    );
    // Another apiVersion of the same name is another target, as in Karmada's comparison
    // of the whole reference.
    let moved = hpa(json!({}), "apps/v1beta1", "Deployment", "web");
    assert_eq!(on_seen(Some(&old), &moved), vec![(old, Mark::Remove)]);
}

#[test]
fn an_unchanged_target_is_marked_again_on_every_update() {
    let old = target("Deployment", "web");
    let claimed = hpa(json!({CLAIMED: "id"}), "apps/v1", "Deployment", "web");
    assert_eq!(
        on_seen(Some(&old), &claimed),
        vec![(old.clone(), Mark::Add)]
    );
}

#[test]
fn the_label_patch_changes_only_what_differs() {
    let labels = |value: Option<&str>| {
        let mut labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        if let Some(value) = value {
            labels.insert(RETAIN_REPLICAS_LABEL.to_owned(), value.to_owned());
        }
        labels
    };
    assert_eq!(
        label_patch(Some(&labels(None)), Mark::Add),
        Some(json!({"metadata": {"labels": {RETAIN_REPLICAS_LABEL: "true"}}}))
    );
    assert_eq!(
        label_patch(None, Mark::Add),
        Some(json!({"metadata": {"labels": {RETAIN_REPLICAS_LABEL: "true"}}}))
    );
    assert_eq!(
        label_patch(Some(&labels(Some("false"))), Mark::Add),
        Some(json!({"metadata": {"labels": {RETAIN_REPLICAS_LABEL: "true"}}}))
    );
    assert_eq!(label_patch(Some(&labels(Some("true"))), Mark::Add), None);
    assert_eq!(
        label_patch(Some(&labels(Some("false"))), Mark::Remove),
        Some(json!({"metadata": {"labels": {RETAIN_REPLICAS_LABEL: null}}}))
    );
    assert_eq!(label_patch(Some(&labels(None)), Mark::Remove), None);
    assert_eq!(label_patch(None, Mark::Remove), None);
}
