//! Images the kubelets cannot pull (Karmada's `fake/…` convention, `.invalid` registries): pods
//! stay Pending in ErrImagePull then ImagePullBackOff, their workloads never become available,
//! and a pullable image recovers them. Paused clock: "never" is an hour of simulated time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, condition, container, create, eventually, pods};

const FAKE: &str = "fake/nginx:1.19.0";

fn deployment(name: &str, replicas: i32, image: &str) -> serde_json::Value {
    json!({
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": template(name, image)},
    })
}

fn template(app: &str, image: &str) -> serde_json::Value {
    json!({"metadata": {"labels": {"app": app}},
           "spec": {"containers": [{"name": "nginx", "image": image}]}})
}

fn waiting(c: &ContainerStatus) -> Option<(&str, &str)> {
    let w = c.state.as_ref()?.waiting.as_ref()?;
    Some((w.reason.as_deref()?, w.message.as_deref().unwrap_or("")))
}

async fn app_pods(client: &kube::Client, app: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    api.list(&ListParams::default().labels(&format!("app={app}")))
        .await
        .expect("pods list")
        .items
}

/// (replicas, updated, ready, available, unavailable) and the Available and Progressing
/// conditions' (status, reason).
type Summary = ([Option<i32>; 5], Vec<(String, String, String)>);

fn summary(d: &Deployment) -> Summary {
    let s = d.status.clone().unwrap_or_default();
    let conditions = s
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason.unwrap_or_default()))
        .collect();
    (
        [
            s.replicas,
            s.updated_replicas,
            s.ready_replicas,
            s.available_replicas,
            s.unavailable_replicas,
        ],
        conditions,
    )
}

fn resource_versions(pods: &[Pod]) -> BTreeMap<String, String> {
    pods.iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                p.metadata.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Every waiting reason each pod's first container shows, in the order written.
fn record_waiting_reasons(client: &kube::Client) -> Arc<Mutex<BTreeMap<String, Vec<String>>>> {
    let seen = Arc::new(Mutex::new(BTreeMap::<String, Vec<String>>::new()));
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let record = seen.clone();
    tokio::spawn(async move {
        let params = WatchParams::default().labels("app=web");
        let mut events = api.watch(&params, "0").await.expect("a watch").boxed();
        while let Ok(Some(event)) = events.try_next().await {
            let (WatchEvent::Added(pod) | WatchEvent::Modified(pod)) = event else {
                continue;
            };
            let reason = pod
                .status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .and_then(|c| c.first())
                .and_then(waiting)
                .map(|(reason, _)| reason.to_owned());
            if let Some(reason) = reason {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let mut seen = record.lock().expect("not poisoned");
                let reasons = seen.entry(name).or_default();
                if reasons.last() != Some(&reason) {
                    reasons.push(reason);
                }
            }
        }
    });
    seen
}

#[tokio::test(start_paused = true)]
async fn a_deployment_whose_image_cannot_be_pulled_never_becomes_available() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    let seen = record_waiting_reasons(&client);
    create::<Deployment>(&client, "default", deployment("web", 2, FAKE)).await;
    create::<Deployment>(&client, "default", deployment("ok", 2, "nginx:1.19.0")).await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");

    // The normal image still becomes available beside it.
    eventually(PATIENCE, "the pullable deployment is available", || async {
        let d = api.get("ok").await.ok()?;
        let r = Some(2);
        (summary(&d).0 == [r, r, r, r, None]).then_some(())
    })
    .await;
    let backed_off = eventually(PATIENCE, "both pods back off", || async {
        let listed = app_pods(&client, "web").await;
        let all = listed.len() == 2
            && listed.iter().all(|p| {
                container(p, "nginx")
                    .and_then(waiting)
                    .is_some_and(|(reason, _)| reason == "ImagePullBackOff")
            });
        all.then_some(listed)
    })
    .await;
    let unavailable = (
        [Some(2), Some(2), None, None, Some(2)],
        vec![
            (
                "Available".into(),
                "False".into(),
                "MinimumReplicasUnavailable".into(),
            ),
            (
                "Progressing".into(),
                "True".into(),
                "ReplicaSetUpdated".into(),
            ),
        ],
    );
    eventually(
        PATIENCE,
        "the deployment reports its unavailable pods",
        || async {
            let d = api.get("web").await.ok()?;
            (summary(&d) == unavailable).then_some(())
        },
    )
    .await;

    // Each pod went through ContainerCreating, ErrImagePull, ImagePullBackOff, in that order.
    let reasons = seen.lock().expect("not poisoned").clone();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    for (pod, reasons) in &reasons {
        assert_eq!(
            reasons,
            &["ContainerCreating", "ErrImagePull", "ImagePullBackOff"],
            "{pod}"
        );
    }

    // An hour later nothing changed and nothing was written: no retries, no restarts.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let later = app_pods(&client, "web").await;
    assert_eq!(resource_versions(&later), resource_versions(&backed_off));
    let d = api.get("web").await.expect("the deployment");
    assert_eq!(summary(&d).0, unavailable.0);

    let pod = &later[0];
    let status = pod.status.as_ref().expect("a status");
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert!(status.pod_ip.is_some() && status.host_ip.is_some());
    for (kind, want) in [
        ("PodReadyToStartContainers", "True"),
        ("Initialized", "True"),
        ("Ready", "False"),
        ("ContainersReady", "False"),
        ("PodScheduled", "True"),
    ] {
        let c = condition(pod, kind).expect(kind);
        assert_eq!(c.status, want, "{kind}");
        if want == "False" {
            assert_eq!(c.reason.as_deref(), Some("ContainersNotReady"));
            assert_eq!(
                c.message.as_deref(),
                Some("containers with unready status: [nginx]")
            );
        }
    }
    let c = container(pod, "nginx").expect("a container status");
    assert_eq!(
        waiting(c),
        Some((
            "ImagePullBackOff",
            "Back-off pulling image \"fake/nginx:1.19.0\""
        ))
    );
    assert_eq!(
        (c.image.as_str(), c.image_id.as_str(), c.ready, c.started),
        (FAKE, "", false, Some(false))
    );
    assert_eq!(c.restart_count, 0);
    assert!(c.container_id.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_rollout_to_an_unpullable_image_stalls_and_a_pullable_one_completes_it() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    create::<Deployment>(&client, "default", deployment("web", 3, "nginx:1.19.0")).await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let settled = |generation: i64| {
        let api = api.clone();
        async move {
            eventually(PATIENCE, "the rollout completes", || async {
                let d = api.get("web").await.ok()?;
                let r = Some(3);
                let done = d.status.as_ref()?.observed_generation == Some(generation)
                    && summary(&d).0 == [r, r, r, r, None]
                    && summary(&d)
                        .1
                        .last()
                        .is_some_and(|c| c.2 == "NewReplicaSetAvailable");
                done.then_some(d)
            })
            .await
        }
    };
    settled(1).await;

    // To the unpullable image: maxSurge 1, maxUnavailable 0. One new pod that never pulls;
    // the three old ones keep serving; kube's counts.
    let patch = |image: &str| Patch::Merge(json!({"spec": {"template": template("web", image)}}));
    api.patch("web", &PatchParams::default(), &patch(FAKE))
        .await
        .expect("updated");
    let stalled = (
        [Some(4), Some(1), Some(3), Some(3), Some(1)],
        vec![
            (
                "Available".into(),
                "True".into(),
                "MinimumReplicasAvailable".into(),
            ),
            (
                "Progressing".into(),
                "True".into(),
                "ReplicaSetUpdated".into(),
            ),
        ],
    );
    eventually(PATIENCE, "the new pod backs off", || async {
        let d = api.get("web").await.ok()?;
        let backed_off = app_pods(&client, "web").await.iter().any(|p| {
            container(p, "nginx")
                .and_then(waiting)
                .is_some_and(|(reason, _)| reason == "ImagePullBackOff")
        });
        (backed_off && summary(&d) == stalled).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    let d = api.get("web").await.expect("the deployment");
    assert_eq!(summary(&d).0, stalled.0, "still stalled an hour later");
    let images: Vec<(String, bool)> = app_pods(&client, "web")
        .await
        .iter()
        .map(|p| {
            let c = container(p, "nginx").expect("a container status");
            (c.image.clone(), c.ready)
        })
        .collect();
    assert_eq!(images.iter().filter(|(i, r)| i == FAKE && !r).count(), 1);
    assert_eq!(
        images
            .iter()
            .filter(|(i, r)| i == "nginx:1.19.0" && *r)
            .count(),
        3
    );

    // A pullable image: the rollout completes and no pod of the unpullable one is left.
    api.patch("web", &PatchParams::default(), &patch("nginx:1.20.0"))
        .await
        .expect("updated");
    settled(3).await;
    let listed = eventually(PATIENCE, "only the new pods are left", || async {
        let listed = app_pods(&client, "web").await;
        (listed.len() == 3).then_some(listed)
    })
    .await;
    for pod in &listed {
        let c = container(pod, "nginx").expect("a container status");
        assert_eq!((c.image.as_str(), c.ready), ("nginx:1.20.0", true));
    }
}

#[tokio::test(start_paused = true)]
async fn a_pods_image_changed_to_a_pullable_one_starts() {
    let world = World::cpu(1, "").await;
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "app"},
               "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"},
                                       {"name": "sidecar", "image": "busybox:1.36"}]}}),
    )
    .await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = eventually(PATIENCE, "the pod backs off", || async {
        let pod = api.get("app").await.ok()?;
        let reason = container(&pod, "app").and_then(waiting)?.0;
        (reason == "ImagePullBackOff").then_some(pod)
    })
    .await;
    // The sidecar pulled and runs; only the app container is named unready.
    let sidecar = container(&pod, "sidecar").expect("the sidecar's status");
    assert!(sidecar.ready && sidecar.state.as_ref().is_some_and(|s| s.running.is_some()));
    assert_eq!(
        condition(&pod, "Ready").and_then(|c| c.message.as_deref()),
        Some("containers with unready status: [app]")
    );
    assert_eq!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );

    api.patch(
        "app",
        &PatchParams::default(),
        &Patch::Strategic(json!({"spec": {"containers": [{"name": "app", "image": "app:1"}]}})),
    )
    .await
    .expect("image updated");
    let pod = eventually(PATIENCE, "the pod runs", || async {
        let pod = api.get("app").await.ok()?;
        let running = pod.status.as_ref()?.phase.as_deref() == Some("Running");
        running.then_some(pod)
    })
    .await;
    assert_eq!(
        condition(&pod, "Ready").map(|c| c.status.as_str()),
        Some("True")
    );
    let c = container(&pod, "app").expect("a container status");
    assert_eq!(
        (c.image.as_str(), c.ready, c.restart_count),
        ("app:1", true, 0)
    );
    assert!(!c.image_id.is_empty());
}

#[tokio::test(start_paused = true)]
async fn with_no_rules_every_image_is_pulled() {
    let world = World::cpu(1, "unpullableImages: {repositories: [], registries: []}").await;
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "app"},
               "spec": {"containers": [{"name": "app", "image": FAKE}]}}),
    )
    .await;
    eventually(PATIENCE, "the pod runs", || async {
        let listed = pods(&client, "default").await;
        let ready = condition(listed.first()?, "Ready")?.status == "True";
        ready.then_some(())
    })
    .await;
}
