//! A Work deleted by hand is written again by the binding controller once it is gone (as
//! Karmada's, which watches Work deletions).

use flotilla_api::karmada::Work;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::world::{World, deployment, eventually, policy};

const NS: &str = "rewrite";

#[tokio::test]
async fn a_deleted_work_is_written_again() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world.apply(policy(NS, "web", "web", "member1")).await;
    world.apply(deployment(NS, "web")).await;
    let works = Api::<Work>::namespaced(world.client.clone(), "karmada-es-member1");
    let deployment_work = || async {
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
    };
    let first = eventually("the Work is written", || async { deployment_work().await }).await;
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
