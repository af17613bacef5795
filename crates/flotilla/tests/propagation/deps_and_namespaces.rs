//! The dependencies distributor and the namespace sync controller against Karmada's behaviour:
//! an attached binding shared by workloads with different policies inherits the most protective
//! conflictResolution / preserveResourcesOnDeletion and reports the disagreement; the
//! distributor's events; the skip-auto-propagation label compared case-insensitively; the
//! warning on a policy that selects only skipped namespaces.

use flotilla_api::karmada::names::work_name;
use flotilla_api::karmada::{ResourceBinding, Work};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::{Value, json};

use crate::world::{World, eventually};

const NS: &str = "deps";

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": "app", "image": "nginx:1.27",
                 "envFrom": [{"configMapRef": {"name": "shared"}}]}]}}}})
}

fn policy(name: &str, extra: Value) -> Value {
    let mut spec = json!({"propagateDeps": true,
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}});
    if let (Some(spec), Value::Object(extra)) = (spec.as_object_mut(), extra) {
        spec.extend(extra);
    }
    json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": NS}, "spec": spec})
}

async fn event_with(world: &World, reason: &str, kind: &str, name: &str) -> Event {
    let events = Api::<Event>::namespaced(world.client.clone(), NS);
    eventually(reason, || async {
        let listed = events.list(&ListParams::default()).await.expect("events");
        listed.items.into_iter().find(|e| {
            e.reason.as_deref() == Some(reason)
                && e.involved_object.kind.as_deref() == Some(kind)
                && e.involved_object.name.as_deref() == Some(name)
        })
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_dependency_takes_the_most_protective_policy_and_reports_the_conflict() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "shared", "namespace": NS}, "data": {"k": "v"}}))
        .await;
    world
        .apply(policy(
            "a",
            json!({"conflictResolution": "Overwrite", "preserveResourcesOnDeletion": true}),
        ))
        .await;
    world.apply(policy("b", json!({}))).await;
    world.apply(deployment("a")).await;
    world.apply(deployment("b")).await;

    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    let attached = eventually("attached binding required by both", || async {
        let b = rbs.get_opt("shared-configmap").await.expect("get")?;
        (b.spec.required_by.len() == 2
            && b.spec.conflict_resolution == "Overwrite"
            && b.spec.preserve_resources_on_deletion == Some(true))
        .then_some(b)
    })
    .await;
    assert!(attached.spec.placement.is_none());

    let conflict = event_with(
        &world,
        "DependencyPolicyConflict",
        "ResourceBinding",
        "shared-configmap",
    )
    .await;
    assert_eq!(conflict.type_.as_deref(), Some("Warning"));
    let note = conflict.message.unwrap_or_default();
    assert!(
        note.contains("ConflictResolution conflicted (Overwrite vs Abort)"),
        "{note}"
    );
    assert!(
        note.contains("PreserveResourcesOnDeletion conflicted (true vs false)"),
        "{note}"
    );

    let got = event_with(&world, "GetDependenciesSucceed", "Deployment", "a").await;
    assert_eq!(got.type_.as_deref(), Some("Normal"));
    let synced = event_with(
        &world,
        "SyncScheduleResultToDependenciesSucceed",
        "ResourceBinding",
        "a-deployment",
    )
    .await;
    assert_eq!(synced.type_.as_deref(), Some("Normal"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_labelled_to_skip_in_any_case_is_not_propagated() {
    let world = World::start(&["member1"]).await;
    world
        .apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hidden",
            "labels": {"namespace.karmada.io/skip-auto-propagation": "True"}}}),
        )
        .await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shown"}}))
        .await;
    let works = Api::<Work>::namespaced(world.client.clone(), "karmada-es-member1");
    eventually("the plain namespace reaches member1", || async {
        works
            .get_opt(&work_name("Namespace", "shown", ""))
            .await
            .expect("get work")
    })
    .await;
    // Both namespaces were queued before the Work above was written by the single worker.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        works
            .get_opt(&work_name("Namespace", "hidden", ""))
            .await
            .expect("get work")
            .is_none(),
        "a namespace labelled skip-auto-propagation=True stays on the control plane"
    );
}

/// Karmada ignores objects of its own and kube's namespaces without a word; Flotilla warns on
/// the policy that selects them (once per generation), and propagates nothing from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_selecting_a_skipped_namespace_says_why_nothing_propagates() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "kube-system"}, "data": {"a": "b"}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "system", "namespace": "kube-system"},
            "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}}))
        .await;
    world
        .apply(
            json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": "everything"},
            "spec": {"resourceSelectors": [
                {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "karmada-system"},
                {"apiVersion": "v1", "kind": "Namespace", "name": "kube-public"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}}),
        )
        .await;
    let events = Api::<Event>::namespaced(world.client.clone(), "kube-system");
    let warned = |kind: &'static str, name: &'static str, events: Api<Event>| async move {
        eventually(name, || async {
            let listed = events.list(&ListParams::default()).await.expect("events");
            listed.items.into_iter().find(|e| {
                e.reason.as_deref() == Some("SkippedNamespace")
                    && e.involved_object.kind.as_deref() == Some(kind)
                    && e.involved_object.name.as_deref() == Some(name)
            })
        })
        .await
    };
    let on_pp = warned("PropagationPolicy", "system", events).await;
    assert_eq!(on_pp.type_.as_deref(), Some("Warning"));
    assert_eq!(
        on_pp.message.as_deref(),
        Some(
            "namespace \"kube-system\" is skipped: the karmada-system, karmada-cluster, karmada-es-* and kube-* namespaces and their objects are never propagated"
        )
    );
    // A cluster-scoped object's Events live in `default`.
    let on_cpp = warned(
        "ClusterPropagationPolicy",
        "everything",
        Api::namespaced(world.client.clone(), "default"),
    )
    .await;
    assert_eq!(
        on_cpp.message.as_deref(),
        Some(
            "resourceSelectors[0].namespace \"karmada-system\" is skipped; resourceSelectors[1] selects the skipped namespace \"kube-public\": the karmada-system, karmada-cluster, karmada-es-* and kube-* namespaces and their objects are never propagated"
        )
    );
    let bindings = Api::<ResourceBinding>::namespaced(world.client.clone(), "kube-system");
    assert!(
        bindings
            .list(&ListParams::default())
            .await
            .expect("bindings")
            .items
            .is_empty(),
        "nothing in kube-system gets a binding"
    );
}
