//! Tests of this group's bundled customizations (behaviour a user relies on, per kind).
use flotilla_api::karmada::AggregatedStatusItem;
use futures::FutureExt as _;
use serde_json::{Value, json};

use super::super::tests::{item, pod_template};
use crate::interpreter::Customizations;

// ---- KubeRay RayService ----

/// A pod template asking for `cpu` and `memory`, with one reference of each kind besides.
fn serving_template(cpu: &str, memory: &str) -> Value {
    json!({"spec": {"containers": [{
        "name": "ray", "image": "rayproject/ray:2.9.0",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }]}})
}

fn ray_service(groups: Value) -> Value {
    json!({
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "serve", "namespace": "ml"},
        "spec": {
            "serveConfigV2": "applications: []",
            "rayClusterConfig": {
                "headGroupSpec": {"template": serving_template("1", "16Gi")},
                "workerGroupSpecs": groups,
            },
        },
    })
}

fn worker_group(name: &str, replicas: i64) -> Value {
    json!({"groupName": name, "replicas": replicas, "template": serving_template("1", "1Gi")})
}

#[tokio::test]
async fn a_ray_service_counts_its_head_and_workers_at_the_largest_cpu_and_memory() {
    let customizations = Customizations::none();
    let mut service = ray_service(json!([
        {"groupName": "cpu", "replicas": 3, "template": serving_template("8", "4Gi")},
        {"groupName": "small", "replicas": 2, "template": serving_template("500m", "1Gi")},
        {"groupName": "bare", "replicas": 1},
    ]));
    service["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["nodeSelector"] =
        json!({"accelerator": "a100"});
    let interpreted = customizations
        .interpret_replica(&service)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 7, "the head and 3 + 2 + 1 workers");
    let requirements =
        serde_json::to_value(interpreted.requirements.expect("requirements")).expect("encodes");
    // The cpu of the largest worker, the memory of the head, the head's node claim.
    assert_eq!(
        requirements["resourceRequest"],
        json!({"cpu": "8", "memory": "16Gi"})
    );
    assert_eq!(
        requirements["nodeClaim"]["nodeSelector"],
        json!({"accelerator": "a100"})
    );

    // The head's containers add up; a smaller worker does not lower them.
    let mut sidecar = ray_service(json!([
        {"groupName": "w", "replicas": 2, "template": serving_template("1", "2Gi")},
    ]));
    sidecar["spec"]["rayClusterConfig"]["headGroupSpec"]["template"] = json!({"spec": {"containers": [
        {"name": "ray", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}},
        {"name": "proxy", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}},
    ]}});
    let interpreted = customizations
        .interpret_replica(&sidecar)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 3);
    let requirements =
        serde_json::to_value(interpreted.requirements.expect("requirements")).expect("encodes");
    assert_eq!(
        requirements["resourceRequest"],
        json!({"cpu": "2500m", "memory": "4608Mi"})
    );

    // Without a head template there is nothing to schedule.
    let mut headless = ray_service(json!([worker_group("w", 4)]));
    headless["spec"]["rayClusterConfig"]["headGroupSpec"] = json!({});
    let interpreted = customizations
        .interpret_replica(&headless)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 0);
    assert!(interpreted.requirements.is_none());
}

/// The worker groups' replicas after revising `service` to `replicas`.
fn revised_workers(customizations: &Customizations, service: &Value, replicas: i32) -> Vec<i64> {
    let revised = customizations
        .revise_replica(service, replicas)
        .expect("bundled")
        .expect("revises");
    assert!(
        revised["spec"]["rayClusterConfig"]["headGroupSpec"]
            .get("replicas")
            .is_none(),
        "the head is not scaled"
    );
    revised["spec"]["rayClusterConfig"]["workerGroupSpecs"]
        .as_array()
        .expect("worker groups")
        .iter()
        .map(|g| g["replicas"].as_i64().expect("replicas"))
        .collect()
}

#[test]
fn revising_a_ray_service_gives_all_but_the_head_to_its_worker_groups() {
    let customizations = Customizations::none();
    let revise = |groups: &[(&str, i64)], replicas: i32| {
        let groups: Vec<Value> = groups.iter().map(|(n, r)| worker_group(n, *r)).collect();
        revised_workers(&customizations, &ray_service(Value::from(groups)), replicas)
    };
    // One group takes every worker.
    assert_eq!(revise(&[("w", 3)], 7), [6]);
    // Several keep their proportions: 1:2:3 of 12 workers.
    assert_eq!(revise(&[("s", 1), ("m", 2), ("l", 3)], 13), [2, 4, 6]);
    // Rounded half up, the last group taking the rest: 2:1 of 4 workers is 2.67 and 1.33.
    assert_eq!(revise(&[("a", 2), ("b", 1)], 5), [3, 1]);
    // A group without workers stays without.
    assert_eq!(revise(&[("active", 4), ("dormant", 0)], 9), [8, 0]);
    // Groups without workers yet share evenly, the first ones taking one more.
    assert_eq!(revise(&[("a", 0), ("b", 0)], 7), [3, 3]);
    assert_eq!(revise(&[("a", 0), ("b", 0), ("c", 0)], 8), [3, 2, 2]);
    // One replica (or none) is the head alone.
    assert_eq!(revise(&[("a", 5), ("b", 1)], 1), [0, 0]);
    assert_eq!(revise(&[("w", 5)], 0), [0]);
    // Rounding up never hands out more workers than there are (1:1:0 of 3 workers).
    assert_eq!(revise(&[("a", 1), ("b", 1), ("c", 0)], 4), [2, 1, 0]);

    // A head-only service is unchanged.
    let mut head_only = ray_service(json!([]));
    head_only["spec"]["rayClusterConfig"]
        .as_object_mut()
        .unwrap()
        .remove("workerGroupSpecs");
    let revised = customizations
        .revise_replica(&head_only, 5)
        .expect("bundled")
        .expect("revises");
    assert_eq!(revised, head_only);
}

#[tokio::test]
async fn a_ray_service_is_healthy_while_ready() {
    let customizations = Customizations::none();
    let health = |status: Option<Value>| {
        let mut observed = ray_service(json!([worker_group("w", 1)]));
        if let Some(status) = status {
            observed["status"] = status;
        }
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&observed)
                .await
                .expect("bundled")
                .expect("interprets")
        }
    };
    assert!(!health(None).await, "no status yet");
    assert!(
        health(Some(json!({"conditions": [
            {"type": "UpgradeInProgress", "status": "True"},
            {"type": "Ready", "status": "True"},
        ]})))
        .await,
        "ready, upgrading or not"
    );
    assert!(
        !health(Some(json!({"conditions": [
            {"type": "RayClusterReady", "status": "True"},
            {"type": "Ready", "status": "False", "reason": "ZeroServeEndpoints"},
        ]})))
        .await
    );
}

#[tokio::test]
async fn a_ray_service_aggregates_endpoints_generations_and_the_worst_application_status() {
    let customizations = Customizations::none();
    let service = ray_service(json!([worker_group("w", 2)]));
    let single = json!({"serviceStatus": "", "numServeEndpoints": 0, "observedGeneration": 2});
    let status = customizations
        .aggregate_status(&service, &[item("a", single.clone())])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status, single, "one member: its status as it is");

    let member = |endpoints: i64, generation: i64, updated: &str, cluster: &str, apps: Value| {
        json!({
            "conditions": [{"type": "Ready", "status": "True", "message": format!("ready on {cluster}")}],
            "serviceStatus": "Running",
            "numServeEndpoints": endpoints,
            "observedGeneration": generation,
            "lastUpdateTime": updated,
            "activeServiceStatus": {"rayClusterName": cluster, "applicationStatuses": apps},
        })
    };
    let mut upgrading = member(
        6,
        2,
        "2026-12-07T12:01:00Z",
        "serve-b",
        json!({
            "predict": {"status": "RUNNING", "message": "b runs predict"},
            "ingest": {"status": "UNHEALTHY", "message": "b: ingest unhealthy"},
        }),
    );
    upgrading["pendingServiceStatus"] = json!({"rayClusterName": "serve-b-next"});
    let items = [
        item(
            "a",
            member(
                4,
                3,
                "2026-12-07T12:00:00Z",
                "serve-a",
                json!({
                    "predict": {"status": "DEPLOYING", "message": "a deploys predict"},
                    "ingest": {"status": "RUNNING", "message": "a runs ingest"},
                    "batch": {"status": "NOT_STARTED"},
                }),
            ),
        ),
        item("b", upgrading),
    ];
    let status = customizations
        .aggregate_status(&service, &items)
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["numServeEndpoints"], 10);
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(status["lastUpdateTime"], "2026-12-07T12:01:00Z");
    assert_eq!(status["serviceStatus"], "Running");
    let messages: Vec<&str> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["ready on serve-a", "ready on serve-b"]);
    // The first member's active cluster, each application at its worst across members.
    assert_eq!(
        status["activeServiceStatus"],
        json!({
            "rayClusterName": "serve-a",
            "applicationStatuses": {
                "predict": {"status": "DEPLOYING", "message": "a deploys predict"},
                "ingest": {"status": "UNHEALTHY", "message": "b: ingest unhealthy"},
                "batch": {"status": "NOT_STARTED"},
            },
        })
    );
    assert_eq!(
        status["pendingServiceStatus"],
        json!({"rayClusterName": "serve-b-next"})
    );

    // A member with an empty serviceStatus makes the whole service not running.
    let mut stalled = member(0, 1, "2026-12-07T11:00:00Z", "serve-c", json!({}));
    stalled["serviceStatus"] = json!("");
    let status = customizations
        .aggregate_status(&service, &[items[0].clone(), item("c", stalled)])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["serviceStatus"], "");
    assert_eq!(status["numServeEndpoints"], 4);
    assert!(status.get("pendingServiceStatus").is_none());
}

#[tokio::test]
async fn a_ray_service_depends_on_what_its_head_and_workers_refer_to() {
    let customizations = Customizations::none();
    let mut service = ray_service(json!([
        {"groupName": "gpu", "replicas": 2, "template": pod_template("8", "shared-env")},
        {"groupName": "cpu", "replicas": 4, "template": {"spec": {
            "serviceAccountName": "default",
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}],
            "containers": [{"name": "ray", "image": "rayproject/ray:2.9.0"}],
        }}},
    ]));
    service["spec"]["rayClusterConfig"]["headGroupSpec"]["template"] = json!({"spec": {
        "serviceAccountName": "serve-head",
        "imagePullSecrets": [{"name": "registry"}],
        "initContainers": [{"name": "fetch", "envFrom": [{"secretRef": {"name": "model-token"}}]}],
        "containers": [{"name": "ray", "envFrom": [{"configMapRef": {"name": "shared-env"}}]}],
    }});
    let references = customizations
        .dependencies(&service)
        .await
        .expect("bundled")
        .expect("dependencies");
    let found: Vec<(&str, &str, &str)> = references
        .iter()
        .map(|r| (r.kind.as_str(), r.namespace.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("ConfigMap", "ml", "shared-env"),
            ("PersistentVolumeClaim", "ml", "datasets"),
            ("Secret", "ml", "model-token"),
            ("Secret", "ml", "registry"),
            ("ServiceAccount", "ml", "serve-head"),
        ],
        "once each, without the default service account"
    );

    let plain = ray_service(json!([worker_group("w", 1)]));
    let references = customizations
        .dependencies(&plain)
        .await
        .expect("bundled")
        .expect("dependencies");
    assert!(references.is_empty());
}

// ---- Spark operator SparkApplication ----

fn spark_application(kind: &str, driver: Value, executor: Value) -> Value {
    json!({
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": "pi", "namespace": "analytics"},
        "spec": {
            "type": kind,
            "mode": "cluster",
            "image": "spark:3.5.0",
            "mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar",
            "driver": driver,
            "executor": executor,
        },
    })
}

/// (name, replicas, resourceRequest) of each component, and the components themselves.
fn spark_components(application: &Value) -> (Vec<(String, i32, Value)>, Vec<Value>) {
    let components = Customizations::none()
        .interpret_components(application)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary = components
        .iter()
        .map(|c| {
            let requirements = c.replica_requirements.clone().expect("requirements");
            (
                c.name.clone(),
                c.replicas,
                requirements["resourceRequest"].clone(),
            )
        })
        .collect();
    let requirements = components
        .into_iter()
        .map(|c| c.replica_requirements.expect("requirements"))
        .collect();
    (summary, requirements)
}

#[test]
fn a_spark_application_requests_its_memory_plus_sparks_overhead() {
    // A JVM job: 10% overhead, at least 384Mi, so 1g needs 1024 + 384 Mi.
    let (summary, _) = spark_components(&spark_application(
        "Scala",
        json!({"cores": 2, "memory": "1g"}),
        json!({"cores": 1, "instances": 2, "memory": "8g"}),
    ));
    assert_eq!(
        summary,
        [
            (
                "driver".to_owned(),
                1,
                json!({"cpu": "2", "memory": "1408Mi"})
            ),
            // 10% of 8g is above the minimum: 8192 + 819.2 Mi, not a whole number of bytes
            (
                "executor".to_owned(),
                2,
                json!({"cpu": "1", "memory": "9448928051200m"})
            ),
        ]
    );

    // Other jobs: 40%; an explicit memoryOverhead replaces the computed one, in the finer unit.
    let (summary, _) = spark_components(&spark_application(
        "Python",
        json!({}),
        json!({"instances": 4, "memory": "2048m", "memoryOverhead": "1G"}),
    ));
    assert_eq!(
        summary,
        [
            (
                "driver".to_owned(),
                1,
                json!({"cpu": "1", "memory": "1503238553600m"})
            ),
            (
                "executor".to_owned(),
                4,
                json!({"cpu": "1", "memory": "3Gi"})
            ),
        ]
    );

    // spec.memoryOverheadFactor overrides the default; small units are compared in that unit
    // (4096k: the 384Mi minimum, 393216k, wins).
    let mut factored =
        spark_application("Java", json!({"memory": "4096k"}), json!({"memory": "10g"}));
    factored["spec"]["memoryOverheadFactor"] = json!("0.25");
    let (summary, _) = spark_components(&factored);
    assert_eq!(summary[0].2["memory"], "388Mi");
    assert_eq!(summary[1].2["memory"], "12800Mi");

    // A size Spark does not read fails the interpretation.
    let wrong = spark_application("Java", json!({"memory": "1Gi"}), json!({}));
    assert!(
        Customizations::none()
            .interpret_components(&wrong)
            .now_or_never()
            .expect("no webhook to wait for")
            .expect("bundled")
            .is_err()
    );
}

#[test]
fn a_spark_application_has_a_driver_and_its_executors_with_their_placement() {
    let mut application = spark_application(
        "Java",
        json!({
            "gpu": {"name": "nvidia.com/gpu", "quantity": 2},
            "nodeSelector": {"disktype": "ssd"},
            "tolerations": [{"key": "spark", "operator": "Exists"}],
            "priorityClassName": "batch-high",
        }),
        json!({
            "instances": 1,
            "gpu": {"name": "nvidia.com/gpu", "quantity": 0},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "pool", "operator": "In", "values": ["spark"]},
                ]}],
            }}},
        }),
    );
    application["spec"]["dynamicAllocation"] =
        json!({"enabled": true, "initialExecutors": 3, "minExecutors": 2, "maxExecutors": 10});
    let (summary, requirements) = spark_components(&application);
    let names: Vec<(&str, i32)> = summary.iter().map(|s| (s.0.as_str(), s.1)).collect();
    assert_eq!(
        names,
        [("driver", 1), ("executor", 3)],
        "dynamic allocation starts with initialExecutors"
    );
    assert_eq!(
        summary[0].2,
        json!({"cpu": "1", "memory": "1408Mi", "nvidia.com/gpu": "2"})
    );
    assert_eq!(
        summary[1].2,
        json!({"cpu": "1", "memory": "1408Mi"}),
        "no GPU of quantity 0"
    );
    assert_eq!(
        requirements[0]["nodeClaim"],
        json!({"nodeSelector": {"disktype": "ssd"},
               "tolerations": [{"key": "spark", "operator": "Exists"}]})
    );
    assert_eq!(requirements[0]["priorityClassName"], "batch-high");
    assert_eq!(
        requirements[1]["nodeClaim"]["hardNodeAffinity"]["nodeSelectorTerms"][0]["matchExpressions"]
            [0]["values"],
        json!(["spark"])
    );
    assert!(requirements[1].get("priorityClassName").is_none());

    // Disabled dynamic allocation: spec.executor.instances.
    application["spec"]["dynamicAllocation"]["enabled"] = json!(false);
    application["spec"]["executor"]["instances"] = json!(2);
    let (summary, _) = spark_components(&application);
    assert_eq!(summary[1].1, 2);

    // spec.type is required.
    application["spec"].as_object_mut().unwrap().remove("type");
    assert!(
        Customizations::none()
            .interpret_components(&application)
            .now_or_never()
            .expect("no webhook to wait for")
            .expect("bundled")
            .is_err()
    );
}

#[tokio::test]
async fn a_spark_application_is_healthy_unless_it_failed() {
    let customizations = Customizations::none();
    let health = |status: Option<Value>| {
        let mut observed = spark_application("Java", json!({}), json!({}));
        if let Some(status) = status {
            observed["status"] = status;
        }
        let customizations = &customizations;
        async move {
            customizations
                .interpret_health(&observed)
                .await
                .expect("bundled")
                .expect("interprets")
        }
    };
    assert!(!health(None).await, "no status yet");
    assert!(
        !health(Some(json!({"applicationState": {}}))).await,
        "no state yet"
    );
    assert!(health(Some(json!({"applicationState": {"state": ""}}))).await);
    assert!(health(Some(json!({"applicationState": {"state": "RUNNING"}}))).await);
    assert!(health(Some(json!({"applicationState": {"state": "COMPLETED"}}))).await);
    assert!(
        health(Some(
            json!({"applicationState": {"state": "SUBMISSION_FAILED"}})
        ))
        .await
    );
    assert!(
        !health(Some(
            json!({"applicationState": {"state": "FAILED", "errorMessage": "driver OOMKilled"}})
        ))
        .await
    );
}

#[tokio::test]
async fn a_spark_application_aggregates_the_worst_state_and_sums_attempts() {
    let customizations = Customizations::none();
    let application = spark_application("Java", json!({}), json!({"instances": 2}));
    let member = |state: &str, attempts: i64, submitted: &str, executors: Value| {
        json!({
            "applicationState": {"state": state},
            "executionAttempts": attempts,
            "submissionAttempts": 1,
            "lastSubmissionAttemptTime": submitted,
            "executorState": executors,
            "sparkApplicationId": "spark-1",
        })
    };
    let mut failed = member(
        "FAILED",
        3,
        "2026-12-07T10:10:00Z",
        json!({"pi-exec-1": "FAILED", "pi-b-exec-1": "FAILED"}),
    );
    failed["applicationState"]["errorMessage"] = json!("driver OOMKilled");
    failed["terminationTime"] = json!("2026-12-07T10:12:00Z");
    let mut completed = member(
        "COMPLETED",
        1,
        "2026-12-07T09:57:00Z",
        json!({"pi-a-exec-1": "COMPLETED"}),
    );
    completed["terminationTime"] = json!("2026-12-07T09:58:00Z");
    let items = [
        item("a", completed),
        item(
            "b",
            member(
                "RUNNING",
                2,
                "2026-12-07T10:00:00Z",
                json!({"pi-exec-1": "RUNNING"}),
            ),
        ),
        item("c", failed),
    ];
    let status = customizations
        .aggregate_status(&application, &items)
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status,
        json!({
            "applicationState": {"state": "FAILED", "errorMessage": "driver OOMKilled"},
            "executionAttempts": 6,
            "submissionAttempts": 3,
            "lastSubmissionAttemptTime": "2026-12-07T10:10:00Z",
            "terminationTime": "2026-12-07T10:12:00Z",
            // Every member's executors; a pod name reported twice keeps the later member's.
            "executorState": {"pi-a-exec-1": "COMPLETED", "pi-exec-1": "FAILED", "pi-b-exec-1": "FAILED"},
        })
    );

    // RUNNING is worse than COMPLETED; missing counters and times are 0 and "".
    let status = customizations
        .aggregate_status(
            &application,
            &[
                item("a", json!({"applicationState": {"state": "COMPLETED"}})),
                item(
                    "b",
                    json!({"applicationState": {"state": "RUNNING"}, "executionAttempts": 2}),
                ),
            ],
        )
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status,
        json!({
            "applicationState": {"state": "RUNNING"},
            "executionAttempts": 2,
            "submissionAttempts": 0,
            "lastSubmissionAttemptTime": "",
            "terminationTime": "",
        })
    );

    // Of equally bad states the first member's is kept; a state the operator does not define
    // fails the aggregation.
    let states = |a: &str, b: &str| {
        [
            item("a", json!({"applicationState": {"state": a}})),
            item("b", json!({"applicationState": {"state": b}})),
        ]
    };
    let status = customizations
        .aggregate_status(&application, &states("SUCCEEDING", "RUNNING"))
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status["applicationState"], json!({"state": "SUCCEEDING"}));
    assert!(
        customizations
            .aggregate_status(&application, &states("RUNNING", "EXPLODED"))
            .await
            .expect("bundled")
            .is_err()
    );

    // One member: its status as it is.
    let single = items[1].status.as_ref().expect("status").to_value();
    let status = customizations
        .aggregate_status(&application, &items[1..2])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(status, single);
}

#[tokio::test]
async fn a_spark_application_reflects_the_fields_of_its_run() {
    let customizations = Customizations::none();
    let mut observed = spark_application("Java", json!({}), json!({}));
    observed["status"] = json!({
        "applicationState": {"state": "COMPLETED"},
        "driverInfo": {"podName": "pi-driver", "webUIPort": 4040},
        "executorState": {"pi-exec-1": "COMPLETED"},
        "sparkApplicationId": "spark-1",
        "submissionID": "0df4a04b",
        "submissionAttempts": 1,
        "executionAttempts": 1,
        "lastSubmissionAttemptTime": "2026-12-07T09:57:00Z",
        "terminationTime": "2026-12-07T09:58:00Z",
        "appUIAddress": "not kept",
    });
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    let mut expected = observed["status"].clone();
    expected.as_object_mut().unwrap().remove("appUIAddress");
    assert_eq!(reflected, expected);

    // Nothing to reflect: an empty status, empty objects left out.
    observed["status"] = json!({"applicationState": {}, "executorState": {}});
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(reflected, json!({}));
    observed.as_object_mut().unwrap().remove("status");
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    assert_eq!(reflected, json!({}));
}

// ---- Apache Flink FlinkDeployment ----

/// A session-less application deployment: one job manager, task managers from the job's
/// parallelism (6 at 4 slots each: 2).
fn flink_deployment() -> Value {
    json!({
        "apiVersion": "flink.apache.org/v1beta1",
        "kind": "FlinkDeployment",
        "metadata": {"name": "wordcount", "namespace": "streaming"},
        "spec": {
            "image": "flink:1.19",
            "flinkVersion": "v1_19",
            "serviceAccount": "flink",
            "flinkConfiguration": {"taskmanager.numberOfTaskSlots": "4"},
            "job": {"jarURI": "local:///opt/flink/usrlib/wordcount.jar", "parallelism": 6},
            "jobManager": {"resource": {"cpu": 0.5, "memory": "1536m"}},
            "taskManager": {"resource": {"cpu": 2, "memory": "4Gi"}},
        },
    })
}

/// (name, replicas) of each component, and each one's replicaRequirements.
fn flink_components(deployment: &Value) -> (Vec<(String, i32)>, Vec<Value>) {
    let components = Customizations::none()
        .interpret_components(deployment)
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let names = components
        .iter()
        .map(|c| (c.name.clone(), c.replicas))
        .collect();
    let requirements = components
        .into_iter()
        .map(|c| c.replica_requirements.expect("requirements"))
        .collect();
    (names, requirements)
}

fn named(components: &[(&str, i32)]) -> Vec<(String, i32)> {
    components
        .iter()
        .map(|(n, r)| ((*n).to_owned(), *r))
        .collect()
}

#[test]
fn a_flink_deployment_has_a_job_manager_and_its_task_managers() {
    let mut deployment = flink_deployment();
    let (names, requirements) = flink_components(&deployment);
    assert_eq!(names, named(&[("jobmanager", 1), ("taskmanager", 2)]));
    // Quantities in their canonical spelling; memory read as bytes, as Karmada reads it.
    assert_eq!(
        requirements,
        [
            json!({"resourceRequest": {"cpu": "500m", "memory": "1536m"}}),
            json!({"resourceRequest": {"cpu": "2", "memory": "4294967296"}}),
        ]
    );

    // Parallelism is rounded up to whole task managers; slots in a string or a number.
    deployment["spec"]["job"]["parallelism"] = json!(9);
    assert_eq!(flink_components(&deployment).0[1].1, 3);
    deployment["spec"]["flinkConfiguration"]["taskmanager.numberOfTaskSlots"] = json!(2);
    assert_eq!(flink_components(&deployment).0[1].1, 5);
    // No slots (or zero) and no parallelism: one task manager.
    deployment["spec"]["flinkConfiguration"]["taskmanager.numberOfTaskSlots"] = json!("0");
    assert_eq!(flink_components(&deployment).0[1].1, 1);
    deployment["spec"]["flinkConfiguration"] = json!({});
    deployment["spec"]["job"] = json!({"jarURI": "local:///opt/flink/usrlib/wordcount.jar"});
    assert_eq!(flink_components(&deployment).0[1].1, 1);
    // Explicit counts win over parallelism.
    deployment["spec"]["job"]["parallelism"] = json!(40);
    deployment["spec"]["taskManager"]["replicas"] = json!(3);
    deployment["spec"]["jobManager"]["replicas"] = json!("2");
    assert_eq!(
        flink_components(&deployment).0,
        named(&[("jobmanager", 2), ("taskmanager", 3)])
    );

    // A manager without resources asks for nothing (the empty request is left out).
    deployment["spec"]["taskManager"]
        .as_object_mut()
        .unwrap()
        .remove("resource");
    deployment["spec"]["jobManager"]["resource"] = json!({"cpu": "1000m"});
    assert_eq!(
        flink_components(&deployment).1,
        [json!({"resourceRequest": {"cpu": "1"}}), json!({})]
    );
}

#[test]
fn a_flink_deployments_pod_template_places_both_managers() {
    let mut deployment = flink_deployment();
    deployment["spec"]["podTemplate"] = json!({"spec": {
        "nodeSelector": {"pool": "streaming"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "flink", "effect": "NoSchedule"}],
        "priorityClassName": "streaming-high",
        "containers": [{"name": "flink-main-container"}],
    }});
    let (_, requirements) = flink_components(&deployment);
    for manager in &requirements {
        assert_eq!(
            manager["nodeClaim"],
            json!({"nodeSelector": {"pool": "streaming"},
                   "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "flink", "effect": "NoSchedule"}]})
        );
        assert_eq!(manager["priorityClassName"], "streaming-high");
    }

    // A template without placement adds no claim; an empty priority class is none.
    deployment["spec"]["podTemplate"] = json!({"spec": {"priorityClassName": "", "containers": [{"name": "flink-main-container"}]}});
    let (_, requirements) = flink_components(&deployment);
    assert_eq!(
        requirements[0],
        json!({"resourceRequest": {"cpu": "500m", "memory": "1536m"}})
    );

    // Memory given as a bare number is not a quantity string: the interpretation fails.
    deployment["spec"]["jobManager"]["resource"]["memory"] = json!(2048);
    assert!(
        Customizations::none()
            .interpret_components(&deployment)
            .now_or_never()
            .expect("no webhook to wait for")
            .expect("bundled")
            .is_err()
    );
}

#[tokio::test]
async fn a_flink_deployment_counts_both_managers_at_the_larger_request() {
    let customizations = Customizations::none();
    let replicas = |deployment: Value| {
        let customizations = &customizations;
        async move {
            let interpreted = customizations
                .interpret_replica(&deployment)
                .await
                .expect("bundled")
                .expect("interprets");
            let requirements =
                serde_json::to_value(interpreted.requirements.expect("requirements"))
                    .expect("encodes");
            (interpreted.replicas, requirements)
        }
    };

    let mut deployment = flink_deployment();
    let (count, requirements) = replicas(deployment.clone()).await;
    assert_eq!(
        count, 3,
        "one job manager and 6 / 4 task managers, rounded up"
    );
    assert_eq!(
        requirements,
        json!({"resourceRequest": {"cpu": "2", "memory": "4Gi"}, "namespace": "streaming"})
    );

    // The job manager's larger memory, compared as quantities; the cpu of either alone.
    deployment["spec"]["jobManager"] = json!({"replicas": 2, "resource": {"memory": "8Gi"}});
    deployment["spec"]["taskManager"] =
        json!({"replicas": 4, "resource": {"cpu": "1.5", "memory": "6144Mi"}});
    deployment["spec"]["podTemplate"] = json!({"spec": {
        "nodeSelector": {"pool": "streaming"},
        "priorityClassName": "streaming-high",
    }});
    let (count, requirements) = replicas(deployment.clone()).await;
    assert_eq!(count, 6);
    assert_eq!(
        requirements,
        json!({
            "resourceRequest": {"cpu": "1500m", "memory": "8Gi"},
            "nodeClaim": {"nodeSelector": {"pool": "streaming"}},
            "priorityClassName": "streaming-high",
            "namespace": "streaming",
        })
    );

    // Without a job manager spec: one job manager, the task managers' requests.
    deployment["spec"]
        .as_object_mut()
        .unwrap()
        .remove("jobManager");
    deployment["spec"]
        .as_object_mut()
        .unwrap()
        .remove("podTemplate");
    deployment["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("namespace");
    let (count, requirements) = replicas(deployment.clone()).await;
    assert_eq!(count, 5);
    assert_eq!(
        requirements,
        json!({"resourceRequest": {"cpu": "1500m", "memory": "6Gi"}})
    );

    // Both CPUs are compared as numbers: a millicore string cannot be.
    deployment["spec"]["jobManager"] = json!({"resource": {"cpu": "500m"}});
    assert!(
        customizations
            .interpret_replica(&deployment)
            .await
            .expect("bundled")
            .is_err()
    );
}

#[tokio::test]
async fn a_flink_deployment_is_healthy_unless_stuck_starting() {
    let customizations = Customizations::none();
    let health = |status: Value| {
        let mut observed = flink_deployment();
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
    // Running, ended or on the way to an end: healthy.
    for state in [
        "RUNNING",
        "FINISHED",
        "FAILED",
        "CANCELED",
        "SUSPENDED",
        "CANCELLING",
        "FAILING",
        "RESTARTING",
    ] {
        assert!(
            health(json!({"jobStatus": {"state": state}})).await,
            "{state}"
        );
    }
    // Starting: healthy only when a pod error is the user's own.
    for state in ["CREATED", "INITIALIZING", "RECONCILING"] {
        assert!(
            !health(json!({"jobStatus": {"state": state}})).await,
            "{state}"
        );
        assert!(
            health(json!({"jobStatus": {"state": state},
                          "error": "Back-off restarting failed container: CrashLoopBackOff"}))
            .await,
            "{state}"
        );
        assert!(
            !health(
                json!({"jobStatus": {"state": state}, "error": "JobManager deployment timed out"})
            )
            .await,
            "{state}"
        );
    }
    // A state Flink does not define is not healthy.
    assert!(!health(json!({"jobStatus": {"state": "UNKNOWN"}})).await);
    // No job state: healthy once the job manager is ready and the deployment stable.
    assert!(
        health(json!({"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE"})).await
    );
    assert!(
        !health(json!({"jobManagerDeploymentStatus": "READY", "lifecycleState": "DEPLOYED"})).await
    );
    assert!(!health(json!({"error": "ErrImagePull"})).await);
    assert!(!health(json!({})).await);
}

/// A member's status as the operator reports it.
fn flink_status(state: &str, generation: i64, task_managers: i64) -> Value {
    json!({
        "clusterInfo": {"flink-version": "1.19.1", "total-cpu": "4.0"},
        "jobManagerDeploymentStatus": "READY",
        "jobStatus": {"jobName": "wordcount", "state": state},
        "lifecycleState": "STABLE",
        "observedGeneration": generation,
        "reconciliationStatus": {"state": "DEPLOYED"},
        "taskManager": {"replicas": task_managers},
        "error": "",
    })
}

#[tokio::test]
async fn a_flink_deployment_takes_the_status_of_its_last_reporting_member() {
    let customizations = Customizations::none();
    let mut deployment = flink_deployment();
    deployment["status"] =
        json!({"error": "stale", "jobStatus": {"state": "CREATED"}, "kept": true});

    let items = [
        item("a", flink_status("RUNNING", 1, 2)),
        item("b", flink_status("FINISHED", 3, 1)),
        AggregatedStatusItem {
            status: None,
            ..item("c", json!({}))
        },
    ];
    let status = customizations
        .aggregate_status(&deployment, &items)
        .await
        .expect("bundled")
        .expect("aggregates");
    let mut expected = flink_status("FINISHED", 3, 1);
    expected["kept"] = json!(true);
    assert_eq!(
        status, expected,
        "the last member with a status, over the template's"
    );

    // Fields the member does not report are dropped, not kept from the template.
    let mut partial = flink_status("RUNNING", 4, 2);
    partial.as_object_mut().unwrap().remove("error");
    let status = customizations
        .aggregate_status(&deployment, &[item("a", partial.clone())])
        .await
        .expect("bundled")
        .expect("aggregates");
    partial["kept"] = json!(true);
    assert_eq!(status, partial);

    // Members that report nothing: empty values.
    let silent = AggregatedStatusItem {
        status: None,
        ..item("a", json!({}))
    };
    let status = customizations
        .aggregate_status(&deployment, &[silent])
        .await
        .expect("bundled")
        .expect("aggregates");
    assert_eq!(
        status,
        json!({"error": "", "jobManagerDeploymentStatus": "", "lifecycleState": "",
               "observedGeneration": 0, "kept": true})
    );
}

#[tokio::test]
async fn a_flink_deployment_reflects_the_operators_status_fields() {
    let customizations = Customizations::none();
    let mut observed = flink_deployment();
    let mut status = flink_status("RUNNING", 2, 2);
    status["error"] = json!("ImagePullBackOff");
    observed["status"] = status.clone();
    observed["status"]["jobStatus"]["savepointInfo"] = json!({"savepointHistory": []});
    observed["status"]["unrelated"] = json!("dropped");
    let reflected = customizations
        .reflect_status(&observed)
        .await
        .expect("bundled")
        .expect("reflects");
    // Empty lists inside are left out, as Karmada's conversion leaves them.
    status["jobStatus"]["savepointInfo"] = json!({});
    assert_eq!(reflected, status);

    for empty in [json!({}), Value::Null] {
        observed["status"] = empty;
        let reflected = customizations
            .reflect_status(&observed)
            .await
            .expect("bundled")
            .expect("reflects");
        assert_eq!(reflected, json!({}));
    }
}
