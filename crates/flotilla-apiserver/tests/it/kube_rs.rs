//! kube-rs against the in-process service: typed Api, watcher, reflector.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};

use crate::support::*;

#[tokio::test]
async fn typed_api_round_trip() {
    let cp = control_plane().await;
    let client = flotilla_apiserver::client::in_process(&cp.server, admin());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .expect("list namespaces")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"default".to_owned()), "{names:?}");

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let object: Deployment = serde_json::from_value(deployment("web", 2)).expect("typed");
    let created = deployments
        .create(&PostParams::default(), &object)
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let patched = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.spec.expect("spec").replicas, Some(3));
    let applied = deployments
        .patch(
            "web",
            &PatchParams::apply("test").force(),
            &Patch::Apply(deployment("web", 4)),
        )
        .await
        .expect("apply");
    assert_eq!(applied.spec.expect("spec").replicas, Some(4));
    let error = deployments.get("nope").await.expect_err("missing");
    match error {
        kube::Error::Api(status) => assert_eq!(status.code, 404),
        other => panic!("expected a 404 Status, got {other:?}"),
    }
    deployments
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deployments.get_opt("web").await.expect("get").is_none());
}

#[tokio::test]
async fn watcher_and_reflector_follow_changes() {
    let cp = control_plane().await;
    let client = flotilla_apiserver::client::in_process(&cp.server, admin());
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(maps.clone(), watcher::Config::default()))
        .applied_objects()
        .boxed();
    let task = tokio::spawn(async move {
        let mut stream = stream;
        while let Some(item) = stream.next().await {
            item.expect("watcher event");
        }
    });
    for i in 0..5 {
        let cm: ConfigMap =
            serde_json::from_value(serde_json::json!({"metadata": {"name": format!("m{i}")}}))
                .expect("cm");
        maps.create(&PostParams::default(), &cm)
            .await
            .expect("create");
    }
    eventually(Duration::from_secs(10), || {
        let reader = reader.clone();
        async move { reader.state().len() == 5 }
    })
    .await;
    maps.delete("m0", &DeleteParams::default())
        .await
        .expect("delete");
    eventually(Duration::from_secs(10), || {
        let reader = reader.clone();
        async move { reader.state().len() == 4 }
    })
    .await;
    task.abort();
}
