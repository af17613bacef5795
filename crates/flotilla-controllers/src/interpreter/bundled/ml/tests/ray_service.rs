//! The bundled rules of KubeRay's RayService.

use serde_json::{Value, json};

use crate::interpreter::Customizations;
use crate::interpreter::bundled::tests::{aggregate, health, item, pod_template};

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
    let health = |status: Option<Value>| {
        let mut observed = ray_service(json!([worker_group("w", 1)]));
        if let Some(status) = status {
            observed["status"] = status;
        }
        async move { health(&observed).await }
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
    let service = ray_service(json!([worker_group("w", 2)]));
    let single = json!({"serviceStatus": "", "numServeEndpoints": 0, "observedGeneration": 2});
    let status = aggregate(&service, &[item("a", single.clone())]).await;
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
    let status = aggregate(&service, &items).await;
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
    let status = aggregate(&service, &[items[0].clone(), item("c", stalled)]).await;
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
