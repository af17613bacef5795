//! The bundled rules of Apache Flink's FlinkDeployment.

use flotilla_api::karmada::AggregatedStatusItem;
use futures::FutureExt as _;
use serde_json::{Value, json};

use crate::interpreter::Customizations;
use crate::interpreter::bundled::tests::{aggregate, health, item, reflect};

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
    let health = |status: Value| {
        let mut observed = flink_deployment();
        observed["status"] = status;
        async move { health(&observed).await }
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
    let status = aggregate(&deployment, &items).await;
    let mut expected = flink_status("FINISHED", 3, 1);
    expected["kept"] = json!(true);
    assert_eq!(
        status, expected,
        "the last member with a status, over the template's"
    );

    // Fields the member does not report are dropped, not kept from the template.
    let mut partial = flink_status("RUNNING", 4, 2);
    partial.as_object_mut().unwrap().remove("error");
    let status = aggregate(&deployment, &[item("a", partial.clone())]).await;
    partial["kept"] = json!(true);
    assert_eq!(status, partial);

    // Members that report nothing: empty values.
    let silent = AggregatedStatusItem {
        status: None,
        ..item("a", json!({}))
    };
    let status = aggregate(&deployment, &[silent]).await;
    assert_eq!(
        status,
        json!({"error": "", "jobManagerDeploymentStatus": "", "lifecycleState": "",
               "observedGeneration": 0, "kept": true})
    );
}

#[tokio::test]
async fn a_flink_deployment_reflects_the_operators_status_fields() {
    let mut observed = flink_deployment();
    let mut status = flink_status("RUNNING", 2, 2);
    status["error"] = json!("ImagePullBackOff");
    observed["status"] = status.clone();
    observed["status"]["jobStatus"]["savepointInfo"] = json!({"savepointHistory": []});
    observed["status"]["unrelated"] = json!("dropped");
    let reflected = reflect(&observed).await;
    // Empty lists inside are left out, as Karmada's conversion leaves them.
    status["jobStatus"]["savepointInfo"] = json!({});
    assert_eq!(reflected, status);

    for empty in [json!({}), Value::Null] {
        observed["status"] = empty;
        let reflected = reflect(&observed).await;
        assert_eq!(reflected, json!({}));
    }
}
