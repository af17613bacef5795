//! The bundled rules of KubeRay's RayCluster and RayJob.

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::*;

fn ray_cluster() -> Value {
    json!({
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "serve", "namespace": "ml"},
        "spec": {
            "headGroupSpec": {"template": pod_template("2", "head-env")},
            "workerGroupSpecs": [
                {"groupName": "gpu", "replicas": 4, "template": pod_template("8", "a")},
                {"replicas": 2, "template": pod_template("1", "b")},
                {"groupName": "idle"},
            ],
        },
    })
}

#[tokio::test]
async fn a_ray_cluster_has_a_head_and_its_worker_groups_and_sums_what_members_report() {
    let customizations = Customizations::none();
    let components = customizations
        .interpret_components(&ray_cluster())
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32, bool)> = components
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.replicas,
                c.replica_requirements.is_some(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("ray-head", 1, true),
            ("gpu", 4, true),
            ("worker-2", 2, true),
            ("idle", 0, false)
        ]
    );

    let mut cluster = ray_cluster();
    let health = |object: Value| async move { health(&object).await };
    assert!(!health(cluster.clone()).await, "no conditions");
    cluster["status"] = json!({"conditions": [
        {"type": "HeadPodReady", "status": "True"},
        {"type": "RayClusterProvisioned", "status": "True"},
    ]});
    assert!(health(cluster.clone()).await);
    cluster["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "RayClusterReplicaFailure", "status": "True"}));
    assert!(!health(cluster.clone()).await);

    let member = |ready: i64, cpu: &str, gpu: &str, endpoints: Option<Value>, updated: &str| {
        let mut status = json!({
            "readyWorkerReplicas": ready, "desiredWorkerReplicas": 4, "desiredCPU": cpu,
            "desiredMemory": "1Gi", "desiredGPU": gpu, "lastUpdateTime": updated,
            "conditions": [{"type": "HeadPodReady", "status": "True"}],
        });
        if let Some(endpoints) = endpoints {
            status["endpoints"] = endpoints;
            status["state"] = json!("ready");
        }
        status
    };
    let one = member(2, "4", "2", None, "2026-12-07T10:00:00Z");
    let status = aggregate(&ray_cluster(), &[item("a", one.clone())]).await;
    assert_eq!(status, one, "one member: its status as it is");

    let status = aggregate(
        &ray_cluster(),
        &[
            item("a", member(2, "500m", "2", None, "2026-12-07T10:00:00Z")),
            item(
                "b",
                member(
                    3,
                    "1500m",
                    "4",
                    Some(json!({"dashboard": "8265"})),
                    "2026-12-07T11:00:00Z",
                ),
            ),
        ],
    )
    .await;
    assert_eq!(status["readyWorkerReplicas"], 5);
    assert_eq!(status["desiredWorkerReplicas"], 8);
    assert_eq!(status["availableWorkerReplicas"], 0);
    assert_eq!(status["desiredCPU"], "2");
    assert_eq!(status["desiredMemory"], "2Gi");
    assert_eq!(status["desiredGPU"], "6");
    assert_eq!(status["desiredTPU"], "0");
    assert_eq!(status["lastUpdateTime"], "2026-12-07T11:00:00Z");
    assert_eq!(status["endpoints"], json!({"dashboard": "8265"}));
    assert_eq!(status["state"], "ready");
    assert_eq!(status["conditions"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn a_ray_job_takes_its_clusters_components_and_the_worst_state_of_its_members() {
    let customizations = Customizations::none();
    let mut cluster = ray_cluster();
    let job = json!({
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "batch", "namespace": "ml"},
        "spec": {
            "entrypoint": "python train.py",
            "rayClusterSpec": cluster["spec"].take(),
            "submitterPodTemplate": {"spec": {"containers": [{"name": "submit", "image": "ray",
                "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "ray-token", "key": "t"}}}]}]}},
        },
    });
    let components = customizations
        .interpret_components(&job)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let names: Vec<&str> = components.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["ray-head", "gpu", "worker-2", "idle"]);

    let references = customizations
        .dependencies(&job)
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<(&str, &str)> = references
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ConfigMap", "a"),
            ("ConfigMap", "b"),
            ("ConfigMap", "head-env"),
            ("Secret", "ray-token")
        ]
    );

    let health = |status: Value| {
        let mut observed = job.clone();
        observed["status"] = status;
        async move { health(&observed).await }
    };
    assert!(health(json!({"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"})).await);
    assert!(health(json!({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Initializing"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Failed", "jobStatus": "FAILED"})).await);

    let status = aggregate(
        &job,
        &[
            item(
                "a",
                json!({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED",
                                 "reason": "", "message": "done"}),
            ),
            item(
                "b",
                json!({"jobDeploymentStatus": "Running", "jobStatus": "RUNNING",
                                 "startTime": "2026-12-07T10:00:00Z"}),
            ),
            item(
                "c",
                json!({"jobDeploymentStatus": "Failed", "jobStatus": "PENDING",
                                 "reason": "DeadlineExceeded", "message": "too slow"}),
            ),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"jobDeploymentStatus": "Failed", "jobStatus": "SUCCEEDED",
               "reason": "DeadlineExceeded", "message": "too slow"})
    );
}
