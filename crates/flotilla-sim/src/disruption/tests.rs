use serde_json::json;

use super::*;

const NOW: &str = "2026-12-07T12:00:00Z";

/// A pod in `ns` labelled `app: web`, owned by the controller `owner` (kind, name, uid).
fn pod(name: &str, owner: Option<(&str, &str, &str)>, ready: bool, deleting: bool) -> Arc<Pod> {
    let mut metadata = json!({"name": name, "namespace": "ns", "labels": {"app": "web"}});
    if let Some((kind, owner_name, uid)) = owner {
        metadata["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind,
            "name": owner_name, "uid": uid, "controller": true}]);
    }
    if deleting {
        metadata["deletionTimestamp"] = json!(NOW);
    }
    let status = if ready { "True" } else { "False" };
    Arc::new(
        serde_json::from_value(json!({"metadata": metadata,
            "spec": {"containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": status}]}}))
        .expect("a pod"),
    )
}

fn budget(spec: Value, status: Value) -> PodDisruptionBudget {
    serde_json::from_value(
        json!({"metadata": {"name": "web", "namespace": "ns", "generation": 2},
        "spec": spec, "status": status}),
    )
    .expect("a budget")
}

/// The Deployment `web` (uid `d1`, 3 replicas) through either of its ReplicaSets.
fn deployment_scale(owner: &OwnerReference) -> Option<(String, i32)> {
    matches!(owner.uid.as_str(), "rs1" | "rs2").then(|| ("d1".to_owned(), 3))
}

fn refs(pods: &[Arc<Pod>]) -> Vec<&Pod> {
    pods.iter().map(|p| &**p).collect()
}

/// Karmada's e2e case in one member: `maxUnavailable: 50%` over a Deployment of 3 replicas,
/// mid-rollout (pods of two ReplicaSets): the Deployment counts once.
#[test]
fn max_unavailable_counts_the_deployment_once_and_healthy_pods() {
    let pods = [
        pod("a", Some(("ReplicaSet", "web-1", "rs1")), true, false),
        pod("b", Some(("ReplicaSet", "web-2", "rs2")), true, false),
        pod("c", Some(("ReplicaSet", "web-2", "rs2")), true, false),
        pod("d", Some(("ReplicaSet", "web-1", "rs1")), true, true),
    ];
    let b = budget(
        json!({"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}),
        json!({}),
    );
    let outcome = compute(&b, &refs(&pods), &deployment_scale);
    assert_eq!(
        outcome,
        Outcome::Computed {
            current_healthy: 3,
            desired_healthy: 1,
            expected: 3
        }
    );
    let patch = status_patch(&b, &outcome, NOW).expect("a first status");
    assert_eq!(
        patch,
        json!({"status": {"currentHealthy": 3, "desiredHealthy": 1, "expectedPods": 3,
            "disruptionsAllowed": 2, "observedGeneration": 2,
            "conditions": [{"type": "DisruptionAllowed", "status": "True",
                "reason": "SufficientPods", "message": "", "observedGeneration": 2,
                "lastTransitionTime": NOW}]}})
    );
    // Written back, nothing more to write.
    let written = budget(
        json!({"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}),
        patch["status"].clone(),
    );
    assert_eq!(status_patch(&written, &outcome, "later"), None);
}

#[test]
fn an_integer_min_available_needs_no_controller_and_allows_nothing_when_short() {
    let pods = [
        pod("bare", None, true, false),
        pod(
            "starting",
            Some(("ReplicaSet", "web-1", "rs1")),
            false,
            false,
        ),
    ];
    let b = budget(
        json!({"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}),
        json!({"currentHealthy": 2, "desiredHealthy": 2, "expectedPods": 2, "disruptionsAllowed": 0,
            "observedGeneration": 1, "conditions": [{"type": "DisruptionAllowed", "status": "False",
            "reason": "InsufficientPods", "message": "", "observedGeneration": 1,
            "lastTransitionTime": "2026-12-07T11:00:00Z"}]}),
    );
    let outcome = compute(&b, &refs(&pods), &|_| None);
    assert_eq!(
        outcome,
        Outcome::Computed {
            current_healthy: 1,
            desired_healthy: 2,
            expected: 2
        }
    );
    let patch = status_patch(&b, &outcome, NOW).expect("new generation and health");
    assert_eq!(patch["status"]["disruptionsAllowed"], 0);
    assert_eq!(patch["status"]["observedGeneration"], 2);
    // The condition did not change status: its transition time stays.
    assert_eq!(
        patch["status"]["conditions"][0]["lastTransitionTime"],
        "2026-12-07T11:00:00Z"
    );
}

/// A percentage over a pod whose controller has no scale: kube's fail-safe status.
#[test]
fn a_controller_without_scale_fails_safe() {
    let pods = [pod("job-x", Some(("Job", "batch", "j1")), true, false)];
    let b = budget(
        json!({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}),
        json!({"disruptionsAllowed": 1, "observedGeneration": 1}),
    );
    let outcome = compute(&b, &refs(&pods), &|_| None);
    assert_eq!(
        outcome,
        Outcome::Failed("found no controllers for pod \"job-x\"".to_owned())
    );
    assert_eq!(
        status_patch(&b, &outcome, NOW),
        Some(json!({"status": {"disruptionsAllowed": 0, "conditions": [{
            "type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
            "message": "found no controllers for pod \"job-x\"", "observedGeneration": 1,
            "lastTransitionTime": NOW}]}}))
    );
}

#[test]
fn the_selector_decides_which_pods_count() {
    let pods = vec![
        pod("a", None, true, false),
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": "other", "namespace": "ns",
                "labels": {"app": "db"}}}))
            .expect("a pod"),
        ),
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": "elsewhere", "namespace": "x",
                "labels": {"app": "web"}}}))
            .expect("a pod"),
        ),
    ];
    let web = budget(
        json!({"selector": {"matchLabels": {"app": "web"}}}),
        json!({}),
    );
    let grouped = by_namespace(&[Arc::new(web.clone())], &pods);
    assert_eq!(grouped.len(), 1, "only the budget's namespace");
    let in_ns = grouped["ns"].clone();
    let names = |b: &PodDisruptionBudget| -> Vec<String> {
        selected(b, &in_ns)
            .expect("selector")
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect()
    };
    assert_eq!(names(&web), ["a"]);
    let everything = budget(json!({"selector": {}}), json!({}));
    assert_eq!(names(&everything).len(), 2);
    let nothing = budget(json!({}), json!({}));
    assert!(names(&nothing).is_empty());
}
