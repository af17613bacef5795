//! The bundled rules of Kubeflow's PyTorchJob, TFJob, MPIJob and Notebook.

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::*;

#[test]
fn a_pytorch_job_has_a_master_and_a_worker_component() {
    let components = Customizations::none()
        .interpret_components(&pytorch_job())
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(summary, [("master", 1), ("worker", 3)]);
    let worker = components[1]
        .replica_requirements
        .as_ref()
        .expect("requirements");
    assert_eq!(
        worker["resourceRequest"],
        json!({"cpu": "2", "nvidia.com/gpu": "1"})
    );
    // Without replica specs: no components.
    let mut empty = pytorch_job();
    empty["spec"] = json!({});
    let components = Customizations::none()
        .interpret_components(&empty)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    assert!(components.is_empty());
}

#[tokio::test]
async fn a_pytorch_job_aggregates_counts_times_and_one_condition_per_stage() {
    let running = |cluster: &str, start: &str| {
        item(
            cluster,
            json!({
                "startTime": start,
                "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 2, "failed": 0}},
                "conditions": [
                    {"type": "Created", "status": "True"},
                    {"type": "Running", "status": "True", "lastUpdateTime": "2026-12-07T10:05:00Z",
                     "lastTransitionTime": "2026-12-07T10:05:00Z"},
                ],
            }),
        )
    };
    let items = [
        running("us-west-2", "2026-12-07T10:01:00Z"),
        running("cn-shanghai", "2026-12-07T10:00:00Z"),
    ];
    let status = aggregate(&pytorch_job(), &items).await;
    assert_eq!(status["startTime"], "2026-12-07T10:00:00Z");
    assert_eq!(
        status["replicaStatuses"],
        json!({"Master": {"active": 2}, "Worker": {"active": 4}})
    );
    let stages: Vec<(&str, &str)> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(stages, [("Created", "True"), ("Running", "True")]);
    assert_eq!(status["conditions"][0]["reason"], "PyTorchJobCreated");
    assert_eq!(status["conditions"][0]["message"], "PyTorchJob is created.");

    // One member fails: Running turns False and Failed names it.
    let failed = item(
        "eu-central-1",
        json!({
            "startTime": "2026-12-07T10:02:00Z",
            "completionTime": "2026-12-07T11:00:00Z",
            "replicaStatuses": {"Worker": {"failed": 1}},
            "conditions": [
                {"type": "Running", "status": "False"},
                {"type": "Failed", "status": "True"},
            ],
        }),
    );
    let status = aggregate(&pytorch_job(), &[items[0].clone(), failed]).await;
    let conditions = status["conditions"].as_array().expect("conditions");
    let last = conditions.last().expect("a condition");
    assert_eq!(
        (
            last["type"].as_str(),
            last["reason"].as_str(),
            last["message"].as_str()
        ),
        (
            Some("Failed"),
            Some("PyTorchJobFailed"),
            Some("PyTorchJob executed failed in member clusters: eu-central-1")
        )
    );
    assert_eq!(last["lastTransitionTime"], "2026-12-07T11:00:00Z");
    assert_eq!(conditions[1]["type"], "Running");
    assert_eq!(conditions[1]["status"], "False");
    assert_eq!(
        status.get("completionTime"),
        None,
        "only a success completes"
    );

    // Every member succeeded: Succeeded, and the latest completion time.
    let done = |cluster: &str, at: &str| {
        item(
            cluster,
            json!({"completionTime": at, "replicaStatuses": {"Worker": {"succeeded": 3}},
                   "conditions": [{"type": "Succeeded", "status": "True"}]}),
        )
    };
    let status = aggregate(
        &pytorch_job(),
        &[
            done("a", "2026-12-07T12:00:00Z"),
            done("b", "2026-12-07T12:30:00Z"),
        ],
    )
    .await;
    assert_eq!(status["completionTime"], "2026-12-07T12:30:00Z");
    assert_eq!(
        status["replicaStatuses"],
        json!({"Worker": {"succeeded": 6}})
    );
    assert_eq!(
        status["conditions"],
        json!([{"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded",
                "message": "PyTorchJob is successfully completed.",
                "lastUpdateTime": "2026-12-07T12:30:00Z", "lastTransitionTime": "2026-12-07T12:30:00Z"}])
    );
}

#[tokio::test]
async fn kubeflow_jobs_are_unhealthy_when_failed_or_before_any_condition() {
    let mut job = pytorch_job();
    let health = |job: &Value| {
        let job = job.clone();
        async move { health(&job).await }
    };
    assert!(!health(&job).await, "no status yet");
    job["status"] = json!({"conditions": [{"type": "Running", "status": "True"}]});
    assert!(health(&job).await);
    job["status"]["conditions"] = json!([{"type": "Failed", "status": "True"}]);
    assert!(!health(&job).await);
    job["kind"] = json!("TFJob");
    assert!(!health(&job).await);
    job["status"]["conditions"] = json!([{"type": "Succeeded", "status": "True"}]);
    assert!(health(&job).await);
    job["apiVersion"] = json!("kubeflow.org/v2beta1");
    job["kind"] = json!("MPIJob");
    job["status"]["conditions"] = json!([]);
    assert!(!health(&job).await, "an MPIJob without conditions");
}

#[tokio::test]
async fn a_pytorch_job_carries_what_its_pod_templates_refer_to() {
    let references = Customizations::none()
        .dependencies(&pytorch_job())
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<(&str, &str, &str)> = references
        .iter()
        .map(|r| (r.kind.as_str(), r.namespace.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ConfigMap", "ml", "master-env"),
            ("ConfigMap", "ml", "worker-env")
        ]
    );
}

#[tokio::test]
async fn a_tf_job_has_a_component_per_role_and_completes_when_every_member_succeeded() {
    let customizations = Customizations::none();
    let job = json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {"tfReplicaSpecs": {
            "Worker": {"replicas": "4", "template": pod_template("1", "a")},
            "Chief": {"template": pod_template("1", "b")},
            "PS": {"replicas": 2, "template": pod_template("500m", "c")},
        }},
    });
    let components = customizations
        .interpret_components(&job)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(summary, [("ps", 2), ("worker", 4), ("chief", 1)]);

    let member = |cluster: &str, kind: &str| {
        item(
            cluster,
            json!({"startTime": "2026-12-07T09:00:00Z", "completionTime": "2026-12-07T09:30:00Z",
                   "replicaStatuses": {"Worker": {"succeeded": 2}, "PS": {"active": 1}},
                   "conditions": [{"type": "Running", "status": "False"}, {"type": kind, "status": "True"}]}),
        )
    };
    let status = aggregate(&job, &[member("a", "Succeeded"), member("b", "Succeeded")]).await;
    assert_eq!(
        status["replicaStatuses"],
        json!({"Worker": {"succeeded": 4}, "PS": {"active": 2}})
    );
    assert_eq!(status["completionTime"], "2026-12-07T09:30:00Z");
    let conditions = status["conditions"].as_array().expect("conditions");
    assert_eq!(conditions.len(), 1);
    assert_eq!(
        (
            conditions[0]["type"].as_str(),
            conditions[0]["reason"].as_str()
        ),
        (Some("Succeeded"), Some("Completed"))
    );
    assert!(
        conditions[0]["lastTransitionTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );

    let status = aggregate(&job, &[member("a", "Succeeded"), member("b", "Failed")]).await;
    assert_eq!(
        status["conditions"][0]["message"],
        "TFJob executed failed in member clusters: b"
    );
    assert_eq!(status["conditions"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn an_mpi_job_keeps_one_members_status_and_merges_several() {
    let customizations = Customizations::none();
    let job = json!({
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "allreduce", "namespace": "ml"},
        "spec": {"mpiReplicaSpecs": {
            "Worker": {"template": pod_template("4", "a")},
            "Launcher": {"replicas": 1, "template": pod_template("1", "b")},
        }},
    });
    let components = customizations
        .interpret_components(&job)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(summary, [("Launcher", 1), ("Worker", 0)]);

    let one =
        json!({"replicaStatuses": {"Worker": {"active": 2}}, "startTime": "2026-12-07T08:00:00Z"});
    let status = aggregate(&job, &[item("a", one.clone())]).await;
    assert_eq!(status, one);

    let member = |start: &str, updated: &str, state: &str| {
        json!({"startTime": start, "replicaStatuses": {"Worker": {"active": 2, "succeeded": 0}},
        "conditions": [
            {"type": "Created", "status": "True", "lastTransitionTime": "2026-12-07T07:00:00Z"},
            {"type": "Running", "status": state, "lastUpdateTime": updated},
        ]})
    };
    let status = aggregate(
        &job,
        &[
            item(
                "a",
                member("2026-12-07T08:00:00Z", "2026-12-07T08:10:00Z", "True"),
            ),
            item(
                "b",
                member("2026-12-07T07:30:00Z", "2026-12-07T08:20:00Z", "False"),
            ),
        ],
    )
    .await;
    assert_eq!(status["startTime"], "2026-12-07T07:30:00Z");
    assert_eq!(
        status["replicaStatuses"],
        json!({"Worker": {"active": 4, "succeeded": 0, "failed": 0}})
    );
    let conditions: Vec<(&str, &str)> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| (c["type"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(conditions, [("Created", "True"), ("Running", "False")]);

    let reflected = reflect(&json!({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "allreduce", "namespace": "ml"},
        "status": {"replicaStatuses": {"Launcher": {"active": 1, "selector": "x=y"}},
                   "startTime": "2026-12-07T08:00:00Z", "extra": true},
    }))
    .await;
    assert_eq!(
        reflected,
        json!({"replicaStatuses": {"Launcher": {"active": 1, "selector": "x=y"}},
               "startTime": "2026-12-07T08:00:00Z"})
    );
}

#[tokio::test]
async fn a_notebook_is_one_replica_ready_only_when_running_everywhere() {
    let customizations = Customizations::none();
    let notebook = json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": {"name": "lab", "namespace": "ml"},
        "spec": {"template": pod_template("2", "lab-env")},
    });
    let interpreted = customizations
        .interpret_replica(&notebook)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 1);
    assert!(interpreted.requirements.is_some());

    let health = |state: Value| {
        let mut observed = notebook.clone();
        observed["status"] = json!({"containerState": state});
        async move { health(&observed).await }
    };
    assert!(health(json!({"running": {"startedAt": "2026-12-07T10:00:00Z"}})).await);
    assert!(health(json!({"waiting": {"reason": "ContainerCreating"}})).await);
    assert!(!health(json!({"waiting": {"reason": "ImagePullBackOff"}})).await);
    assert!(health(json!({"terminated": {"reason": "Completed", "exitCode": 0}})).await);
    assert!(!health(json!({"terminated": {"reason": "Completed", "exitCode": 1}})).await);
    assert!(!health(json!({"terminated": {"reason": "OOMKilled"}})).await);

    let running =
        |at: &str| json!({"readyReplicas": 1, "containerState": {"running": {"startedAt": at}}});
    let status = aggregate(
        &notebook,
        &[
            item("a", running("2026-12-07T10:00:00Z")),
            item("b", running("2026-12-07T10:05:00Z")),
        ],
    )
    .await;
    assert_eq!(status["readyReplicas"], 2);
    assert_eq!(
        status["containerState"],
        json!({"running": {"startedAt": "2026-12-07T10:05:00Z"}})
    );
    assert_eq!(status["conditions"][0]["type"], "Ready");
    assert_eq!(
        status["conditions"][0]["message"],
        "All notebooks are ready"
    );

    let status = aggregate(
        &notebook,
        &[
            item("a", running("2026-12-07T10:00:00Z")),
            item("b", json!({"readyReplicas": 0})),
        ],
    )
    .await;
    assert_eq!(
        status["containerState"],
        json!({"waiting": {"reason": "Unschedulable"}})
    );
    assert_eq!(
        status["conditions"][0]["message"],
        "Notebook executed failed in member clusters: b"
    );
    assert_eq!(status["conditions"].as_array().map(Vec::len), Some(1));

    let reflected = reflect(&json!({
        "apiVersion": "kubeflow.org/v1", "kind": "Notebook",
        "metadata": {"name": "lab", "namespace": "ml"},
        "status": {"readyReplicas": 1, "containerState": {"running": {}}, "extra": 1},
    }))
    .await;
    assert_eq!(reflected["readyReplicas"], 1);
    assert_eq!(reflected.get("extra"), None);
}
