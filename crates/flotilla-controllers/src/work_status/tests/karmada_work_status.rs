//! Karmada's `work_status_controller_test.go` (`pkg/controllers/status`) restated against the
//! work-status controller's pure parts: the identifier of a reflected object
//! (`buildStatusIdentifier`, `syncWorkStatus`'s happy path), which member objects are reflected
//! into a Work (`syncWorkStatus` ignoring objects without the Work annotations) and the health
//! verdict with its events (`interpretHealth`).

use super::*;

#[test]
fn a_reflected_object_is_identified_by_its_manifest() {
    // `buildStatusIdentifier`: an object of apiVersion `v1` (no group).
    let cluster_like = json!({"apiVersion": "v1", "kind": "Cluster",
        "metadata": {"name": "cluster", "namespace": "default"}});
    assert_eq!(
        serde_json::to_value(identifier(0, &cluster_like, true)).expect("json"),
        json!({"ordinal": 0, "version": "v1", "kind": "Cluster", "resource": "",
            "namespace": "default", "name": "cluster"})
    );
    // `syncWorkStatus`: the manifest status of the Work's Pod names it.
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pod", "namespace": "default"}});
    let id = identifier(0, &pod, true);
    assert_eq!((id.kind.as_str(), id.name.as_str()), ("Pod", "pod"));
}

#[test]
fn only_objects_naming_the_work_are_reflected_into_it() {
    let work = WorkKey {
        namespace: "karmada-es-cluster".into(),
        name: "work".into(),
    };
    let pod = |annotations: Value| {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pod", "namespace": "default", "annotations": annotations}})
    };
    assert!(belongs_to(
        &pod(
            json!({"work.karmada.io/namespace": "karmada-es-cluster", "work.karmada.io/name": "work"})
        ),
        &work
    ));
    // Without the Work namespace annotation: ignored.
    assert!(!belongs_to(
        &pod(json!({"work.karmada.io/name": "work"})),
        &work
    ));
    // Naming another Work (Karmada's "work not found"): not this Work's.
    assert!(!belongs_to(
        &pod(json!({"work.karmada.io/namespace": "karmada-es-cluster",
            "work.karmada.io/name": "karmada-es-cluster-test"})),
        &work
    ));
}

#[test]
fn health_is_interpreted_where_a_kind_has_a_rule_and_healthy_elsewhere() {
    // Karmada's `NewDeployment`: three replicas wanted, no status yet.
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bar", "namespace": "foo"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.19.0"}]}}}});
    let verdict = interpret(&deployment);
    assert!(matches!(verdict, Some(Ok(false))));
    let events = reflected_events(&identifier(0, &deployment, true), verdict.as_ref());
    assert_eq!(
        events.last(),
        Some(&(
            EventType::Normal,
            "InterpretHealthSucceed",
            "Interpret health of object(Deployment/foo/bar) as unhealthy.".to_owned()
        ))
    );
    // A ClusterRole has no health rule: Healthy, and no health event.
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "foo"}, "rules": []});
    let verdict = interpret(&role);
    assert!(verdict.is_none());
    let events = reflected_events(&identifier(0, &role, false), verdict.as_ref());
    assert!(
        events
            .iter()
            .all(|(_, reason, _)| !reason.starts_with("InterpretHealth"))
    );
}
