use flotilla_api::karmada::{AggregatedStatusItem, JsonText};
use futures::FutureExt as _;
use serde_json::json;

use super::*;
use crate::interpreter::Customizations;

pub(super) fn item(cluster: &str, status: Value) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.into(),
        status: Some(JsonText::new(&status)),
        applied: true,
        ..AggregatedStatusItem::default()
    }
}

pub(super) fn pod_template(cpu: &str, config_map: &str) -> Value {
    json!({"spec": {
        "containers": [{
            "name": "trainer",
            "image": "pytorch/pytorch:2.4",
            "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
            "envFrom": [{"configMapRef": {"name": config_map}}],
        }],
    }})
}

// Shared by the group tests (`gitops`, `kruise`): one operation through the bundled rules,
// expected to be there and to succeed.

/// `object` with `status` as its status.
pub(super) fn with_status(object: &Value, status: Value) -> Value {
    let mut observed = object.clone();
    observed["status"] = status;
    observed
}

pub(super) async fn health(observed: &Value) -> bool {
    Customizations::none()
        .interpret_health(observed)
        .await
        .expect("bundled")
        .expect("interprets")
}

pub(super) async fn aggregate(template: &Value, items: &[AggregatedStatusItem]) -> Value {
    Customizations::none()
        .aggregate_status(template, items)
        .await
        .expect("bundled")
        .expect("aggregates")
}

pub(super) async fn reflect(observed: &Value) -> Value {
    Customizations::none()
        .reflect_status(observed)
        .await
        .expect("bundled")
        .expect("reflects")
}

pub(super) async fn retain(desired: &Value, observed: &Value) -> Value {
    Customizations::none()
        .retain(desired, observed)
        .await
        .expect("bundled")
        .expect("retains")
}

/// The references as (kind, namespace, name).
pub(super) async fn dependencies(object: &Value) -> Vec<(String, String, String)> {
    Customizations::none()
        .dependencies(object)
        .await
        .expect("bundled")
        .expect("dependencies")
        .into_iter()
        .map(|r| (r.kind, r.namespace, r.name))
        .collect()
}

fn pytorch_job() -> Value {
    json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {
            "Worker": {"replicas": 3, "template": pod_template("2", "worker-env")},
            "Master": {"template": pod_template("1", "master-env")},
        }},
    })
}

#[test]
fn every_bundled_customization_parses_and_its_scripts_compile() {
    let parsed = customizations();
    assert_eq!(parsed.len(), all_files().count(), "every file parses");
    for customization in &parsed {
        for operation in Operation::ALL {
            if let Some(script) = customization.spec.customizations.script(operation) {
                flotilla_api::karmada::lua::check_script(script).unwrap_or_else(|e| {
                    panic!(
                        "{:?} {}: {e}",
                        customization.metadata.name,
                        operation.name()
                    )
                });
            }
        }
    }
    // One kind per file, none twice.
    assert_eq!(kinds().len(), all_files().count());
    for kind in [
        ("argoproj.io/v1alpha1", "Workflow"),
        ("kubeflow.org/v1", "Notebook"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("kubeflow.org/v1", "TFJob"),
        ("kubeflow.org/v2beta1", "MPIJob"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("ray.io/v1", "RayCluster"),
        ("ray.io/v1", "RayJob"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("batch.volcano.sh/v1alpha1", "Job"),
    ] {
        assert!(
            kinds().contains(&(kind.0.to_owned(), kind.1.to_owned())),
            "{kind:?}"
        );
    }
}

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
    let customizations = Customizations::none();
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
    let status = customizations
        .aggregate_status(&pytorch_job(), &items)
        .await
        .expect("bundled")
        .expect("aggregates");
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
    let status = customizations
        .aggregate_status(&pytorch_job(), &[items[0].clone(), failed])
        .await
        .expect("bundled")
        .expect("aggregates");
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
    let status = customizations
        .aggregate_status(
            &pytorch_job(),
            &[
                done("a", "2026-12-07T12:00:00Z"),
                done("b", "2026-12-07T12:30:00Z"),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
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
    let customizations = Customizations::none();
    let mut job = pytorch_job();
    let health = |job: &Value| {
        let job = job.clone();
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&job)
                .await
                .expect("bundled")
                .expect("interprets")
        }
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
    let status = customizations
        .aggregate_status(&job, &[member("a", "Succeeded"), member("b", "Succeeded")])
        .await
        .expect("bundled")
        .expect("aggregates");
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

    let status = customizations
        .aggregate_status(&job, &[member("a", "Succeeded"), member("b", "Failed")])
        .await
        .expect("bundled")
        .expect("aggregates");
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
    let status = customizations
        .aggregate_status(&job, &[item("a", one.clone())])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status, one);

    let member = |start: &str, updated: &str, state: &str| {
        json!({"startTime": start, "replicaStatuses": {"Worker": {"active": 2, "succeeded": 0}},
        "conditions": [
            {"type": "Created", "status": "True", "lastTransitionTime": "2026-12-07T07:00:00Z"},
            {"type": "Running", "status": state, "lastUpdateTime": updated},
        ]})
    };
    let status = customizations
        .aggregate_status(
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
        .await
        .expect("bundled")
        .expect("aggregates");
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

    let reflected = customizations
        .reflect_status(&json!({
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "allreduce", "namespace": "ml"},
            "status": {"replicaStatuses": {"Launcher": {"active": 1, "selector": "x=y"}},
                       "startTime": "2026-12-07T08:00:00Z", "extra": true},
        }))
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(
        reflected,
        json!({"replicaStatuses": {"Launcher": {"active": 1, "selector": "x=y"}},
               "startTime": "2026-12-07T08:00:00Z"})
    );
}

#[tokio::test]
async fn a_users_customization_replaces_the_bundled_script_for_its_operations() {
    let customizations = Customizations::none();
    let custom: ResourceInterpreterCustomization = serde_json::from_value(json!({
        "metadata": {"name": "mine"},
        "spec": {"target": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"},
                 "customizations": {"healthInterpretation": {"luaScript":
                     "function InterpretHealth(obj) return true end"}}},
    }))
    .expect("customization");
    customizations.set(&[custom]);
    let healthy = customizations
        .interpret_health(&pytorch_job())
        .await
        .expect("customized")
        .expect("interprets");
    assert!(
        healthy,
        "the user's script, not the bundled one (no conditions)"
    );
    // The operations the user did not script stay bundled.
    assert!(
        customizations
            .interpret_components(&pytorch_job())
            .now_or_never()
            .expect("no webhook to wait for")
            .is_some()
    );
}

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
    let health = |object: Value| {
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&object)
                .await
                .expect("bundled")
                .expect("interprets")
        }
    };
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
    let status = customizations
        .aggregate_status(&ray_cluster(), &[item("a", one.clone())])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status, one, "one member: its status as it is");

    let status = customizations
        .aggregate_status(
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
        .await
        .expect("bundled")
        .expect("aggregates");
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
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&observed)
                .await
                .expect("bundled")
                .expect("interprets")
        }
    };
    assert!(health(json!({"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"})).await);
    assert!(health(json!({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Initializing"})).await);
    assert!(!health(json!({"jobDeploymentStatus": "Failed", "jobStatus": "FAILED"})).await);

    let status = customizations
        .aggregate_status(
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
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status,
        json!({"jobDeploymentStatus": "Failed", "jobStatus": "SUCCEEDED",
               "reason": "DeadlineExceeded", "message": "too slow"})
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
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&observed)
                .await
                .expect("bundled")
                .expect("interprets")
        }
    };
    assert!(health(json!({"running": {"startedAt": "2026-12-07T10:00:00Z"}})).await);
    assert!(health(json!({"waiting": {"reason": "ContainerCreating"}})).await);
    assert!(!health(json!({"waiting": {"reason": "ImagePullBackOff"}})).await);
    assert!(health(json!({"terminated": {"reason": "Completed", "exitCode": 0}})).await);
    assert!(!health(json!({"terminated": {"reason": "Completed", "exitCode": 1}})).await);
    assert!(!health(json!({"terminated": {"reason": "OOMKilled"}})).await);

    let running =
        |at: &str| json!({"readyReplicas": 1, "containerState": {"running": {"startedAt": at}}});
    let status = customizations
        .aggregate_status(
            &notebook,
            &[
                item("a", running("2026-12-07T10:00:00Z")),
                item("b", running("2026-12-07T10:05:00Z")),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
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

    let status = customizations
        .aggregate_status(
            &notebook,
            &[
                item("a", running("2026-12-07T10:00:00Z")),
                item("b", json!({"readyReplicas": 0})),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status["containerState"],
        json!({"waiting": {"reason": "Unschedulable"}})
    );
    assert_eq!(
        status["conditions"][0]["message"],
        "Notebook executed failed in member clusters: b"
    );
    assert_eq!(status["conditions"].as_array().map(Vec::len), Some(1));

    let reflected = customizations
        .reflect_status(&json!({
            "apiVersion": "kubeflow.org/v1", "kind": "Notebook",
            "metadata": {"name": "lab", "namespace": "ml"},
            "status": {"readyReplicas": 1, "containerState": {"running": {}}, "extra": 1},
        }))
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(reflected["readyReplicas"], 1);
    assert_eq!(reflected.get("extra"), None);
}

#[tokio::test]
async fn an_argo_workflow_runs_its_parallelism_and_keeps_what_the_member_decided() {
    let customizations = Customizations::none();
    let workflow = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "etl", "namespace": "data"},
        "spec": {
            "parallelism": 4,
            "entrypoint": "main",
            "nodeSelector": {"accelerator": "a100"},
            "serviceAccountName": "runner",
            "executor": {"serviceAccountName": "default"},
            "imagePullSecrets": [{"name": "registry"}],
            "volumeClaimTemplates": [{"metadata": {"name": "work"}}],
            "volumes": [
                {"name": "cfg", "configMap": {"name": "etl-config"}},
                {"name": "creds", "secret": {"secretName": "not-read", "name": "read-by-name"}},
                {"name": "ceph", "cephfs": {"secretRef": {"name": "ceph-key"}}},
            ],
        },
    });
    let interpreted = customizations
        .interpret_replica(&workflow)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 4);
    let requirements =
        serde_json::to_value(interpreted.requirements.expect("requirements")).unwrap();
    assert_eq!(
        requirements["nodeClaim"]["nodeSelector"],
        json!({"accelerator": "a100"})
    );
    let revised = customizations
        .revise_replica(&workflow, 1)
        .expect("bundled")
        .expect("revises");
    assert_eq!(revised["spec"]["parallelism"], 1);

    let references = customizations
        .dependencies(&workflow)
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
            ("ConfigMap", "etl-config"),
            ("PersistentVolumeClaim", "work"),
            ("Secret", "ceph-key"),
            ("Secret", "read-by-name"),
            ("Secret", "registry"),
            ("ServiceAccount", "default"),
            ("ServiceAccount", "runner"),
        ]
    );

    let mut observed = workflow.clone();
    observed["spec"]["suspend"] = json!(true);
    observed["status"] = json!({"phase": "Running"});
    let retained = customizations
        .retain(&workflow, &observed)
        .await
        .expect("bundled")
        .expect("retains");
    assert_eq!(retained["spec"]["suspend"], true);
    assert_eq!(retained["status"]["phase"], "Running");

    for (phase, healthy) in [
        ("Running", true),
        ("Succeeded", true),
        ("Failed", false),
        ("Error", false),
        ("", false),
    ] {
        let mut observed = workflow.clone();
        observed["status"] = json!({"phase": phase});
        let answer = customizations
            .interpret_health(&observed)
            .await
            .expect("bundled")
            .expect("interprets");
        assert_eq!(answer, healthy, "{phase}");
    }
}

fn flux_condition(status: &str, reason: &str, message: &str) -> Value {
    json!({"type": "Ready", "status": status, "reason": reason, "message": message})
}

#[tokio::test]
async fn a_git_repository_merges_member_conditions_and_follows_generations() {
    let customizations = Customizations::none();
    let repository = json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 3},
        "spec": {"url": "https://example.com/apps.git", "secretRef": {"name": "git-auth"},
                 "verify": {"secretRef": {"name": "signing-keys"}}},
        "status": {"observedGeneration": 2},
    });
    let member = |rendered: i64, ready: Value| {
        json!({"resourceTemplateGeneration": rendered, "generation": 1, "observedGeneration": 1,
               "artifact": {"revision": format!("main@sha1:{rendered}")}, "conditions": [ready]})
    };
    let stored = "stored artifact for revision 'main@sha1:abc'";
    let status = customizations
        .aggregate_status(
            &repository,
            &[
                item("a", member(3, flux_condition("True", "Succeeded", stored))),
                item("b", member(3, flux_condition("True", "Succeeded", stored))),
                item(
                    "c",
                    member(
                        2,
                        flux_condition("False", "GitOperationFailed", "auth failed"),
                    ),
                ),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status["observedGeneration"], 2,
        "c still renders generation 2"
    );
    assert_eq!(status["artifact"], json!({"revision": "main@sha1:2"}));
    assert_eq!(
        status["conditions"],
        json!([
            {"type": "Ready", "status": "True", "reason": "Succeeded",
             "message": format!("a={stored}, b={stored}")},
            {"type": "Ready", "status": "False", "reason": "GitOperationFailed", "message": "c=auth failed"},
        ])
    );
    let status = customizations
        .aggregate_status(
            &repository,
            &[item(
                "a",
                member(3, flux_condition("True", "Succeeded", stored)),
            )],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["observedGeneration"], 3);

    let mut observed = repository.clone();
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "3"});
    observed["metadata"]["generation"] = json!(1);
    observed["status"] = json!({"observedGeneration": 1, "conditions": [flux_condition("True", "Succeeded", "ok")],
                                "artifact": {"revision": "r"}, "url": "not reflected"});
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(reflected["resourceTemplateGeneration"], 3);
    assert_eq!(reflected["generation"], 1);
    assert_eq!(reflected.get("url"), None);
    assert!(
        customizations
            .interpret_health(&observed)
            .await
            .expect("bundled")
            .expect("interprets")
    );

    let references = customizations
        .dependencies(&repository)
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<&str> = references.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["git-auth", "signing-keys"]);

    let mut suspended = repository.clone();
    suspended["spec"]["suspend"] = json!(true);
    let retained = customizations
        .retain(&repository, &suspended)
        .await
        .expect("bundled")
        .expect("retains");
    assert_eq!(retained["spec"]["suspend"], true);
}

#[tokio::test]
async fn a_kustomization_keeps_the_last_revisions_and_is_healthy_once_reconciled() {
    let customizations = Customizations::none();
    let kustomization = json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
        "spec": {"path": "./apps", "serviceAccountName": "flux-applier",
                 "decryption": {"provider": "sops", "secretRef": {"name": "sops-age"}},
                 "kubeConfig": {"secretRef": {"name": "remote"}}},
        "status": {"lastAppliedRevision": "main@sha1:old"},
    });
    let status = customizations
        .aggregate_status(
            &kustomization,
            &[
                item("a", json!({"lastAppliedRevision": "main@sha1:new", "lastAttemptedRevision": "main@sha1:new",
                                 "resourceTemplateGeneration": 1,
                                 "conditions": [flux_condition("True", "ReconciliationSucceeded", "Applied revision: main@sha1:new")]})),
                item("b", json!({"lastAppliedRevision": ""})),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["lastAppliedRevision"], "main@sha1:new");
    assert_eq!(status["lastAttemptedRevision"], "main@sha1:new");
    assert_eq!(
        status["observedGeneration"], 0,
        "b has not rendered generation 1"
    );
    assert_eq!(
        status["conditions"][0]["message"],
        "a=Applied revision: main@sha1:new"
    );

    let mut observed = kustomization.clone();
    observed["status"] = json!({"conditions": [flux_condition("True", "Succeeded", "")]});
    let healthy = customizations
        .interpret_health(&observed)
        .await
        .expect("bundled")
        .expect("interprets");
    assert!(
        !healthy,
        "a Kustomization's success reason is ReconciliationSucceeded"
    );

    let references = customizations
        .dependencies(&kustomization)
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
            ("Secret", "remote"),
            ("Secret", "sops-age"),
            ("ServiceAccount", "flux-applier")
        ]
    );
}

fn volcano_job() -> Value {
    json!({
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"minAvailable": 3, "tasks": [
            {"name": "ps", "replicas": 1, "template": pod_template("1", "a")},
            {"replicas": 4, "minAvailable": 2, "template": pod_template("4", "b")},
        ]},
    })
}

#[tokio::test]
async fn a_volcano_job_has_a_component_per_task_and_sums_what_members_report() {
    let customizations = Customizations::none();
    let components = customizations
        .interpret_components(&volcano_job())
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(summary, [("ps", 1), ("task-1", 2)]);

    for (phase, healthy) in [
        ("Running", true),
        ("Pending", true),
        ("Completed", true),
        ("Aborted", true),
        ("Failed", false),
        ("", false),
    ] {
        let mut observed = volcano_job();
        observed["status"] = json!({"state": {"phase": phase}});
        let answer = customizations
            .interpret_health(&observed)
            .await
            .expect("bundled")
            .expect("interprets");
        assert_eq!(answer, healthy, "{phase}");
    }

    let member = |phase: &str, running: i64, duration: &str| {
        json!({"state": {"phase": phase}, "running": running, "succeeded": 1, "version": running,
               "runningDuration": duration,
               "taskStatusCount": {"ps": {"phase": {"Running": running}}},
               "conditions": [{"status": "Running", "lastTransitionTime": format!("2026-12-07T10:0{running}:00Z")}]})
    };
    let status = customizations
        .aggregate_status(
            &volcano_job(),
            &[
                item("a", member("Running", 1, "1m30s")),
                item("b", member("Running", 2, "2m")),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["running"], 3);
    assert_eq!(status["succeeded"], 2);
    assert_eq!(status["version"], 2, "the highest");
    assert_eq!(status["runningDuration"], "2m", "the longest");
    assert_eq!(
        status["taskStatusCount"],
        json!({"ps": {"phase": {"Running": 3}}})
    );
    assert_eq!(
        status["conditions"],
        json!([{"status": "Running", "lastTransitionTime": "2026-12-07T10:02:00Z"}])
    );
    assert_eq!(status.get("state"), None, "no member finished");

    let status = customizations
        .aggregate_status(
            &volcano_job(),
            &[
                item("a", member("Completed", 1, "1m")),
                item("b", member("Failed", 1, "1m")),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["state"]["phase"], "Failed");
    assert_eq!(status["state"]["message"], "Job failed in clusters: b");
    let status = customizations
        .aggregate_status(
            &volcano_job(),
            &[
                item("a", member("Completed", 1, "1m")),
                item("b", member("Completed", 1, "1m")),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["state"]["reason"], "Completed");
    assert_eq!(status["state"]["message"], "Job completed successfully");

    let mut observed = volcano_job();
    observed["status"] = member("Running", 1, "10s");
    observed["status"]["extra"] = json!(true);
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(reflected["running"], 1);
    assert_eq!(reflected["state"], json!({"phase": "Running"}));
    assert_eq!(reflected.get("extra"), None);
}

#[test]
fn bundled_health_rules_count_as_health_hooks() {
    use crate::interpreter::health::has_rule;
    assert!(has_rule("kubeflow.org/v1", "PyTorchJob"));
    assert!(has_rule("apps.kruise.io/v1alpha1", "CloneSet"));
    assert!(
        !has_rule("apps.kruise.io/v1alpha1", "AdvancedCronJob"),
        "no health rule"
    );
    assert!(!has_rule("example.io/v1", "Workload"));
    assert!(interprets(
        "kubeflow.org/v1",
        "PyTorchJob",
        Operation::InterpretDependency
    ));
    assert!(!interprets(
        "kubeflow.org/v2beta1",
        "MPIJob",
        Operation::InterpretDependency
    ));
}
