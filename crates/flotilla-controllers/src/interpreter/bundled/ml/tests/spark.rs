//! The bundled rules of the Spark operator's SparkApplication.

use futures::FutureExt as _;
use serde_json::{Value, json};

use crate::interpreter::Customizations;
use crate::interpreter::bundled::tests::{aggregate, health, item, reflect};

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
    let health = |status: Option<Value>| {
        let mut observed = spark_application("Java", json!({}), json!({}));
        if let Some(status) = status {
            observed["status"] = status;
        }
        async move { health(&observed).await }
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
    let status = aggregate(&application, &items).await;
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
    let status = aggregate(
        &application,
        &[
            item("a", json!({"applicationState": {"state": "COMPLETED"}})),
            item(
                "b",
                json!({"applicationState": {"state": "RUNNING"}, "executionAttempts": 2}),
            ),
        ],
    )
    .await;
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
    let status = aggregate(&application, &states("SUCCEEDING", "RUNNING")).await;
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
    let status = aggregate(&application, &items[1..2]).await;
    assert_eq!(status, single);
}

#[tokio::test]
async fn a_spark_application_reflects_the_fields_of_its_run() {
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
    let reflected = reflect(&observed).await;
    let mut expected = observed["status"].clone();
    expected.as_object_mut().unwrap().remove("appUIAddress");
    assert_eq!(reflected, expected);

    // Nothing to reflect: an empty status, empty objects left out.
    observed["status"] = json!({"applicationState": {}, "executorState": {}});
    let reflected = reflect(&observed).await;
    assert_eq!(reflected, json!({}));
    observed.as_object_mut().unwrap().remove("status");
    let reflected = reflect(&observed).await;
    assert_eq!(reflected, json!({}));
}
