//! Every namespace of a simulated cluster holds the ServiceAccount `default` and the ConfigMap
//! `kube-root-ca.crt` (the cluster's CA), as kube-controller-manager writes them: created with
//! the namespace, created again when deleted, the CA put back when edited.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::{PATIENCE, World, eventually};

#[tokio::test(start_paused = true)]
async fn namespaces_get_a_default_service_account_and_the_root_ca() {
    let world = World::cpu(1, "").await;
    let client = world.client();
    let ca = world.sim.clusters[0].pki.ca_cert_pem().to_owned();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let created: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team-a"}})).expect("a namespace");
    namespaces
        .create(&PostParams::default(), &created)
        .await
        .expect("created");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "team-a");
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "team-a");
    let root_ca = || async {
        config_maps
            .get_opt("kube-root-ca.crt")
            .await
            .ok()
            .flatten()
            .and_then(|c| c.data?.get("ca.crt").cloned())
    };
    eventually(
        PATIENCE,
        "default and kube-root-ca.crt in team-a",
        || async {
            let account = accounts.get_opt("default").await.ok().flatten();
            (account.is_some() && root_ca().await.as_deref() == Some(ca.as_str())).then_some(())
        },
    )
    .await;
    // The system namespaces have them too.
    for namespace in ["default", "kube-system", "kube-public"] {
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
        eventually(PATIENCE, "default in a system namespace", || async {
            accounts.get_opt("default").await.ok().flatten()
        })
        .await;
    }

    // Deleted: back. Edited: the CA is put back.
    accounts
        .delete("default", &DeleteParams::default())
        .await
        .expect("deleted");
    config_maps
        .patch(
            "kube-root-ca.crt",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"ca.crt": "not a CA"}})),
        )
        .await
        .expect("edited");
    eventually(PATIENCE, "both restored", || async {
        let account = accounts.get_opt("default").await.ok().flatten();
        (account.is_some() && root_ca().await.as_deref() == Some(ca.as_str())).then_some(())
    })
    .await;
}
