//! An informer whose watch falls behind the API server (410) relists and hands handlers the
//! whole new state, consistent with its cache: objects created while it was behind are applied,
//! objects deleted meanwhile are deleted.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::informer::Cache;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::auth::authz::MASTERS_GROUP;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};

use super::{Cached, Change, Informer, WireDeployment};
use k8s_openapi::api::apps::v1::Deployment;

fn configmap(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// What the handlers saw.
#[derive(Default)]
struct Seen {
    /// Names currently applied and not deleted.
    live: BTreeSet<String>,
    /// Applied objects the informer's cache did not hold when the handler ran.
    not_in_cache: Vec<String>,
    synced: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_falling_behind_the_informer_relists_and_resynchronises_its_handlers() {
    // Watchers may lag 4 changes and the window keeps 8: a watcher that stops reading for a
    // few hundred changes gets a 410 and has to relist.
    let store = Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store)
        .watch_buffer(4)
        .cache_window(8)
        .start()
        .await
        .expect("API server starts");
    let user = UserInfo {
        name: "test".into(),
        groups: vec![MASTERS_GROUP.to_owned(), "system:authenticated".into()],
        ..Default::default()
    };
    let client = flotilla_apiserver::client::in_process(&running.server, user);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &configmap("doomed"))
        .await
        .expect("create");

    let seen = Arc::new(Mutex::new(Seen::default()));
    let cache: Arc<OnceLock<Cache<ConfigMap>>> = Arc::new(OnceLock::new());
    // The handler blocks on the first sight of `gate` until the test lets it go: meanwhile
    // the informer reads nothing and falls behind.
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let gate = Mutex::new(Some(gate));
    let mut informer = Informer::<ConfigMap>::new(api.clone());
    {
        let seen = seen.clone();
        let cache = cache.clone();
        informer.on(move |change| {
            let mut seen = seen.lock().expect("not poisoned");
            match change {
                Change::Applied(cm) => {
                    let name = cm.metadata.name.clone().unwrap_or_default();
                    // Before `start` has handed the store to the test (the first list can
                    // race it) there is nothing to check against.
                    let in_cache = cache
                        .get()
                        .is_none_or(|c| c.get("default", &name).is_some());
                    if !in_cache {
                        seen.not_in_cache.push(name.clone());
                    }
                    seen.live.insert(name.clone());
                    if name == "gate" {
                        drop(seen);
                        if let Some(gate) = gate.lock().expect("not poisoned").take() {
                            let _ = gate.recv_timeout(Duration::from_secs(60));
                        }
                    }
                }
                Change::Deleted(cm) => {
                    seen.live
                        .remove(cm.metadata.name.as_deref().unwrap_or_default());
                }
                Change::Synced => seen.synced += 1,
            }
        });
    }
    let (store, task) = informer.start();
    assert!(cache.set(store.clone()).is_ok(), "set once");
    store.wait_until_ready().await;

    api.create(&PostParams::default(), &configmap("gate"))
        .await
        .expect("create");
    // While the handler is held: many creations and one deletion.
    for i in 0..300 {
        api.create(&PostParams::default(), &configmap(&format!("cm-{i:03}")))
            .await
            .expect("create");
    }
    api.delete("doomed", &DeleteParams::default())
        .await
        .expect("delete");
    release.send(()).expect("the handler waits");

    let mut expected: BTreeSet<String> = (0..300).map(|i| format!("cm-{i:03}")).collect();
    expected.insert("gate".into());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        {
            let seen = seen.lock().expect("not poisoned");
            assert!(
                seen.not_in_cache.is_empty(),
                "handlers saw objects their cache did not hold yet: {:?}",
                &seen.not_in_cache[..seen.not_in_cache.len().min(5)]
            );
            if seen.live == expected && seen.synced >= 2 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "handlers never caught up: {} live (expected {}), synced {} times, doomed still live: {}",
                seen.live.len(),
                expected.len(),
                seen.synced,
                seen.live.contains("doomed"),
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(store.state().len(), expected.len());
    task.abort();
}

/// A workload's watch decodes it as kube-rs would, without `metadata.managedFields`.
#[test]
fn workloads_decode_without_managed_fields() {
    let json = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
            "labels": {"app": "web"},
            "managedFields": [{"manager": "karmada-controller-manager", "operation": "Update",
                "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        "status": {"replicas": 2, "readyReplicas": 1},
    });
    let wire: WireDeployment = serde_json::from_value(json.clone()).expect("decodes");
    let decoded = <Deployment as Cached>::from_wire(wire);
    let mut expected: Deployment = serde_json::from_value(json).expect("decodes");
    assert!(expected.metadata.managed_fields.is_some());
    expected.metadata.managed_fields = None;
    assert_eq!(decoded, expected);
    assert_eq!(decoded.status.and_then(|s| s.ready_replicas), Some(1));
}
