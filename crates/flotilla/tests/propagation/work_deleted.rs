//! A Work deleted by hand is written again by the binding controller once it is gone (as
//! Karmada's, which watches Work deletions).

use flotilla_api::karmada::Work;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::world::{World, deployment, eventually, policy};

const NS: &str = "rewrite";

/// The Deployment `web`'s Work among `works`, if written.
async fn web_work(works: &Api<Work>) -> Option<Work> {
    works
        .list(&ListParams::default())
        .await
        .expect("list works")
        .items
        .into_iter()
        .find(|w| {
            w.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("web-"))
        })
}

#[tokio::test]
async fn a_deleted_work_is_written_again() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world.apply(policy(NS, "web", "web", "member1")).await;
    world.apply(deployment(NS, "web")).await;
    let works = Api::<Work>::namespaced(world.client.clone(), "karmada-es-member1");
    let first = eventually("the Work is written", || web_work(&works)).await;
    let name = first.metadata.name.clone().expect("name");
    works
        .delete(&name, &DeleteParams::default())
        .await
        .expect("deleted");
    // The execution controller (not running here) releases its finalizer once the member
    // object is gone; the test plays that part.
    works
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("finalizer released");
    eventually("the Work is written again", || async {
        let again = works.get_opt(&name).await.expect("get work")?;
        (again.metadata.uid != first.metadata.uid && again.metadata.deletion_timestamp.is_none())
            .then_some(())
    })
    .await;
}

/// Karmada's `removeOrphanWorks`: a Work of a cluster the binding no longer targets that cannot
/// be deleted (here: labelled deletion-protected) is reported on the binding as
/// `CleanupWorkFailed` with the API server's refusal, and deleted once it can be.
#[tokio::test]
async fn a_work_that_cannot_be_cleaned_up_is_reported_on_the_binding() {
    const NS: &str = "cleanup";
    const PROTECTED: &str = "resourcetemplate.karmada.io/deletion-protected";
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world.apply(policy(NS, "web", "web", "member1")).await;
    world.apply(deployment(NS, "web")).await;
    let works = Api::<Work>::namespaced(world.client.clone(), "karmada-es-member1");
    let work = eventually("the Work in member1", || web_work(&works)).await;
    let name = work.metadata.name.clone().expect("name");
    works
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {PROTECTED: "Always"}}})),
        )
        .await
        .expect("labelled");

    // The policy moves the workload to member2: member1's Work is an orphan now.
    Api::<flotilla_api::karmada::PropagationPolicy>::namespaced(world.client.clone(), NS)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"placement": {"clusterAffinity": {"clusterNames": ["member2"]}}}}),
            ),
        )
        .await
        .expect("policy moved to member2");
    let events = Api::<k8s_openapi::api::core::v1::Event>::namespaced(world.client.clone(), NS);
    let reported = eventually("CleanupWorkFailed on the binding", || async {
        let listed = events.list(&ListParams::default()).await.expect("events");
        listed.items.into_iter().find(|e| {
            e.reason.as_deref() == Some("CleanupWorkFailed")
                && e.involved_object.kind.as_deref() == Some("ResourceBinding")
                && e.involved_object.name.as_deref() == Some("web-deployment")
        })
    })
    .await;
    assert_eq!(reported.type_.as_deref(), Some("Warning"));
    assert!(
        reported
            .message
            .as_deref()
            .is_some_and(|m| m.contains("This resource is protected")),
        "{reported:?}"
    );
    assert!(works.get_opt(&name).await.expect("get").is_some());

    // Unprotected, it goes (its deletion waits for the execution controller's finalizer, which
    // the test releases as that controller is not running here).
    works
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {PROTECTED: null}}})),
        )
        .await
        .expect("unlabelled");
    eventually("the orphan Work is being deleted", || async {
        let work = works.get_opt(&name).await.expect("get")?;
        work.metadata.deletion_timestamp.is_some().then_some(())
    })
    .await;
}
