//! Workload controllers' status through sequences, asserted against what kube-controller-manager
//! reports for the same sequence (values, reasons, messages, condition order).

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually, pods};

fn conditions(d: &Deployment) -> Vec<(String, String, String, String)> {
    d.status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            (
                c.type_,
                c.status,
                c.reason.unwrap_or_default(),
                c.message.unwrap_or_default(),
            )
        })
        .collect()
}

fn counts(d: &Deployment) -> (Option<i64>, [Option<i32>; 5]) {
    let s = d.status.clone().unwrap_or_default();
    (
        s.observed_generation,
        [
            s.replicas,
            s.updated_replicas,
            s.ready_replicas,
            s.available_replicas,
            s.unavailable_replicas,
        ],
    )
}

async fn settled(api: &Api<Deployment>, generation: i64, replicas: i32) -> Deployment {
    eventually(PATIENCE, "the deployment settles", || async {
        let d = api.get("web").await.ok()?;
        let r = Some(replicas);
        let done = counts(&d) == (Some(generation), [r, r, r, r, None])
            && conditions(&d)
                .last()
                .is_some_and(|c| c.2 == "NewReplicaSetAvailable");
        done.then_some(d)
    })
    .await
}

fn replica_sets_by_revision(list: &[ReplicaSet]) -> Vec<(String, String, i32)> {
    let mut v: Vec<_> = list
        .iter()
        .map(|rs| {
            (
                rs.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("deployment.kubernetes.io/revision").cloned())
                    .unwrap_or_default(),
                rs.metadata.name.clone().unwrap_or_default(),
                rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0),
            )
        })
        .collect();
    v.sort();
    v
}

#[tokio::test(start_paused = true)]
async fn deployment_status_through_create_scale_and_rolling_update() {
    let world = World::cpu(4, "").await;
    let client = world.client();
    let template = |image: &str| {
        json!({"metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "nginx", "image": image, "resources": {"requests": {"cpu": "100m"}}}]}})
    };
    create::<Deployment>(&client, "default", json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template("nginx:1.26")},
    }))
    .await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");

    // Created: 3/3, Available and Progressing as kube reports them, in kube's order.
    let d = settled(&api, 1, 3).await;
    let rs_list = rs_api
        .list(&ListParams::default())
        .await
        .expect("replica sets")
        .items;
    assert_eq!(rs_list.len(), 1);
    let rs = &rs_list[0];
    let rs_name = rs.metadata.name.clone().expect("a name");
    let hash = rs.metadata.labels.as_ref().expect("labels")["pod-template-hash"].clone();
    assert_eq!(rs_name, format!("web-{hash}"));
    assert_eq!(
        conditions(&d),
        vec![
            (
                "Available".into(),
                "True".into(),
                "MinimumReplicasAvailable".into(),
                "Deployment has minimum availability.".into()
            ),
            (
                "Progressing".into(),
                "True".into(),
                "NewReplicaSetAvailable".into(),
                format!("ReplicaSet \"{rs_name}\" has successfully progressed.")
            ),
        ]
    );
    let annotations = rs.metadata.annotations.as_ref().expect("annotations");
    assert_eq!(annotations["deployment.kubernetes.io/revision"], "1");
    assert_eq!(
        annotations["deployment.kubernetes.io/desired-replicas"],
        "3"
    );
    assert_eq!(annotations["deployment.kubernetes.io/max-replicas"], "4");
    let owner = &rs.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Deployment", Some(true))
    );
    let rs_status = rs.status.clone().expect("status");
    assert_eq!(
        (
            rs_status.replicas,
            rs_status.fully_labeled_replicas,
            rs_status.ready_replicas,
            rs_status.available_replicas,
            rs_status.observed_generation
        ),
        (3, Some(3), Some(3), Some(3), Some(1))
    );
    let listed = pods(&client, "default").await;
    assert_eq!(listed.len(), 3);
    for pod in &listed {
        let name = pod.metadata.name.as_deref().expect("a name");
        assert!(
            name.starts_with(&format!("{rs_name}-")) && name.len() == rs_name.len() + 6,
            "{name}"
        );
        assert_eq!(
            pod.metadata.labels.as_ref().expect("labels")["pod-template-hash"],
            hash
        );
        let owner = &pod.metadata.owner_references.as_ref().expect("owned")[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("ReplicaSet", rs_name.as_str())
        );
    }

    // Scaled: same ReplicaSet, Progressing untouched (the rollout stays complete).
    let progressing_before = d
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .expect("conditions")[1]
        .clone();
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .expect("scaled");
    let d = eventually(PATIENCE, "scaled to 5", || async {
        let d = api.get("web").await.ok()?;
        (counts(&d) == (Some(2), [Some(5), Some(5), Some(5), Some(5), None])).then_some(d)
    })
    .await;
    // Scaling up dips below minimum availability (Available flips False then True, moving to
    // the end, as in kube); the complete rollout's Progressing condition is left untouched.
    let progressing_after = d
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "Progressing");
    assert_eq!(progressing_after, Some(progressing_before));
    let rs = rs_api.get(&rs_name).await.expect("the same replica set");
    assert_eq!(
        rs.metadata.annotations.as_ref().expect("annotations")["deployment.kubernetes.io/desired-replicas"],
        "5"
    );

    // Rolling update: never more than 5 + maxSurge (2) pods, never fewer than 5 - maxUnavailable
    // (1) available.
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"template": template("nginx:1.27")}})),
    )
    .await
    .expect("updated");
    let d = eventually(PATIENCE, "the rollout completes", || async {
        let listed = pods(&client, "default").await;
        assert!(
            listed.len() <= 7,
            "{} pods exceed replicas + maxSurge",
            listed.len()
        );
        let all = rs_api.list(&ListParams::default()).await.ok()?.items;
        let available: i32 = all
            .iter()
            .map(|rs| {
                rs.status
                    .as_ref()
                    .and_then(|s| s.available_replicas)
                    .unwrap_or(0)
            })
            .sum();
        assert!(available >= 4, "availability fell to {available}");
        let d = api.get("web").await.ok()?;
        let done = counts(&d) == (Some(3), [Some(5), Some(5), Some(5), Some(5), None])
            && conditions(&d)
                .last()
                .is_some_and(|c| c.2 == "NewReplicaSetAvailable" && !c.3.contains(&rs_name));
        done.then_some(d)
    })
    .await;
    let all = rs_api
        .list(&ListParams::default())
        .await
        .expect("replica sets")
        .items;
    let revisions = replica_sets_by_revision(&all);
    assert_eq!(revisions.len(), 2);
    assert_eq!(
        (
            revisions[0].0.as_str(),
            revisions[0].1.as_str(),
            revisions[0].2
        ),
        ("1", rs_name.as_str(), 0)
    );
    let new_name = revisions[1].1.clone();
    assert_eq!((revisions[1].0.as_str(), revisions[1].2), ("2", 5));
    assert_eq!(
        conditions(&d),
        vec![
            (
                "Available".into(),
                "True".into(),
                "MinimumReplicasAvailable".into(),
                "Deployment has minimum availability.".into()
            ),
            (
                "Progressing".into(),
                "True".into(),
                "NewReplicaSetAvailable".into(),
                format!("ReplicaSet \"{new_name}\" has successfully progressed.")
            ),
        ]
    );
    let listed = eventually(PATIENCE, "old pods gone", || async {
        let listed = pods(&client, "default").await;
        (listed.len() == 5).then_some(listed)
    })
    .await;
    assert!(listed.iter().all(|p| {
        p.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with(&new_name))
    }));

    // Deleting the Deployment garbage-collects its ReplicaSets and pods.
    api.delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually(PATIENCE, "dependents collected", || async {
        let none = pods(&client, "default").await.is_empty()
            && rs_api
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .is_empty();
        none.then_some(())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn statefulset_creates_ordinals_in_order_and_daemonset_covers_every_node() {
    let world = World::cpu(3, "").await;
    let client = world.client();
    create::<StatefulSet>(&client, "default", json!({
        "metadata": {"name": "db"},
        "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "pg", "image": "postgres"}]}}},
    }))
    .await;
    create::<DaemonSet>(&client, "default", json!({
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "a", "image": "agent"}]}}},
    }))
    .await;
    let sts: Api<StatefulSet> = Api::namespaced(client.clone(), "default");
    let pod_api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let s = eventually(PATIENCE, "3 ready ordinals", || async {
        // OrderedReady: an ordinal exists only once every lower one is Ready.
        for i in 1..3 {
            if pod_api.get_opt(&format!("db-{i}")).await.ok()?.is_some() {
                let lower = pod_api.get(&format!("db-{}", i - 1)).await.ok()?;
                assert!(
                    crate::support::condition(&lower, "Ready").is_some_and(|c| c.status == "True"),
                    "db-{i} before db-{} was Ready: {:?}",
                    i - 1,
                    lower.status
                );
            }
        }
        let s = sts.get("db").await.ok()?;
        (s.status.as_ref()?.ready_replicas == Some(3)).then_some(s)
    })
    .await;
    let status = s.status.expect("status");
    assert_eq!(status.current_revision, status.update_revision);
    let db0 = pod_api.get("db-0").await.expect("db-0");
    assert_eq!(
        db0.metadata.labels.as_ref().expect("labels")["statefulset.kubernetes.io/pod-name"],
        "db-0"
    );
    assert_eq!(
        db0.spec.as_ref().and_then(|s| s.hostname.as_deref()),
        Some("db-0")
    );

    let ds: Api<DaemonSet> = Api::namespaced(client.clone(), "default");
    let d = eventually(PATIENCE, "a ready agent per node", || async {
        let d = ds.get("agent").await.ok()?;
        (d.status.as_ref()?.number_ready == 3).then_some(d)
    })
    .await;
    let status = d.status.expect("status");
    assert_eq!(
        (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_misscheduled
        ),
        (3, 3, 0)
    );
    let agents = pod_api
        .list(&ListParams::default().labels("app=agent"))
        .await
        .expect("pods")
        .items;
    let mut nodes: Vec<String> = agents
        .iter()
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    nodes.sort();
    nodes.dedup();
    assert_eq!(nodes.len(), 3, "one agent per node");
}
