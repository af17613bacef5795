//! Pods that need ConfigMaps and Secrets: the kubelets start their containers only once what
//! they need exists, as a kubelet does — a missing volume source keeps the pod
//! `ContainerCreating`, a missing environment source leaves that container in
//! `CreateContainerConfigError` with the kubelet's message — and start them as soon as it
//! arrives (what makes propagating a workload's dependencies matter). Paused clock.

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::Api;
use serde_json::json;

use crate::support::{PATIENCE, World, container, create, eventually};

fn waiting(pod: &Pod, name: &str) -> Option<(String, String)> {
    let w = container(pod, name)?.state.as_ref()?.waiting.as_ref()?;
    Some((
        w.reason.clone().unwrap_or_default(),
        w.message.clone().unwrap_or_default(),
    ))
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

#[tokio::test(start_paused = true)]
async fn containers_wait_for_the_config_maps_and_secrets_they_need() {
    let world = World::cpu(1, "").await;
    let client = world.client();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "app"},
               "spec": {
                   "containers": [
                       {"name": "app", "image": "nginx:1.27",
                        "envFrom": [{"configMapRef": {"name": "app-config"}}],
                        "env": [{"name": "TOKEN",
                                 "valueFrom": {"secretKeyRef": {"name": "app-token", "key": "token"}}}],
                        "volumeMounts": [{"name": "certs", "mountPath": "/certs"}]},
                       {"name": "sidecar", "image": "busybox:1.36"}],
                   "volumes": [{"name": "certs", "secret": {"secretName": "app-token"}}]}}),
    )
    .await;

    // No Secret: the volume cannot be set up, so nothing starts.
    let pod = eventually(PATIENCE, "the pod is bound and creating", || async {
        let pod = pods.get("app").await.ok()?;
        let (reason, _) = waiting(&pod, "app")?;
        (reason == "ContainerCreating").then_some(pod)
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    let pod_later = pods.get("app").await.expect("the pod");
    assert_eq!(phase(&pod_later), "Pending");
    assert_eq!(
        waiting(&pod_later, "sidecar").map(|w| w.0),
        Some("ContainerCreating".to_owned())
    );
    assert_eq!(
        pod.metadata.resource_version, pod_later.metadata.resource_version,
        "nothing written while it waits"
    );

    // The Secret arrives without the key the environment names, and the ConfigMap is missing:
    // the sidecar starts, the app container waits with the kubelet's first error.
    create::<Secret>(
        &client,
        "default",
        json!({"metadata": {"name": "app-token"}, "stringData": {"other": "x"}}),
    )
    .await;
    let pod = eventually(
        PATIENCE,
        "the app container cannot be configured",
        || async {
            let pod = pods.get("app").await.ok()?;
            let (reason, _) = waiting(&pod, "app")?;
            (reason == "CreateContainerConfigError").then_some(pod)
        },
    )
    .await;
    assert_eq!(
        waiting(&pod, "app"),
        Some((
            "CreateContainerConfigError".to_owned(),
            r#"configmap "app-config" not found"#.to_owned()
        ))
    );
    let sidecar = container(&pod, "sidecar").expect("the sidecar's status");
    assert!(sidecar.ready && sidecar.state.as_ref().is_some_and(|s| s.running.is_some()));
    assert_eq!(phase(&pod), "Pending");

    // The ConfigMap arrives: now the Secret's missing key is what stops it.
    create::<ConfigMap>(
        &client,
        "default",
        json!({"metadata": {"name": "app-config"}, "data": {"MODE": "production"}}),
    )
    .await;
    eventually(PATIENCE, "the missing key is reported", || async {
        let pod = pods.get("app").await.ok()?;
        (waiting(&pod, "app")?.1 == "couldn't find key token in Secret default/app-token")
            .then_some(())
    })
    .await;

    // The key is added: the container starts and the pod runs.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    secrets
        .patch(
            "app-token",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"stringData": {"token": "s3cr3t"}})),
        )
        .await
        .expect("key added");
    let pod = eventually(PATIENCE, "the pod runs", || async {
        let pod = pods.get("app").await.ok()?;
        (phase(&pod) == "Running").then_some(pod)
    })
    .await;
    let app = container(&pod, "app").expect("the app's status");
    assert!(app.ready && app.state.as_ref().is_some_and(|s| s.running.is_some()));
}

#[tokio::test(start_paused = true)]
async fn optional_sources_do_not_hold_a_pod_back() {
    let world = World::cpu(1, "").await;
    let client = world.client();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "tolerant"},
               "spec": {
                   "containers": [{"name": "c", "image": "nginx:1.27",
                       "envFrom": [{"secretRef": {"name": "maybe", "optional": true}}],
                       "env": [{"name": "LEVEL", "valueFrom": {"configMapKeyRef":
                           {"name": "maybe", "key": "level", "optional": true}}}]}],
                   "volumes": [{"name": "v", "configMap": {"name": "maybe", "optional": true}}]}}),
    )
    .await;
    eventually(PATIENCE, "the pod runs", || async {
        let pod = pods.get("tolerant").await.ok()?;
        (phase(&pod) == "Running").then_some(())
    })
    .await;
}
