//! Built-in defaulting through the HTTP API: stored objects carry kube-apiserver's defaults,
//! and re-applying an unchanged object is a no-op because defaulting is idempotent.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn minimal_deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}
            }
        }
    })
}

fn assert_deployment_defaults(object: &Value) {
    let spec = &object["spec"];
    assert_eq!(spec["replicas"], 1, "{object}");
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    let container = &pod["containers"][0];
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["terminationMessagePolicy"], "File");
    assert_eq!(
        container["imagePullPolicy"], "Always",
        "untagged images are :latest"
    );
    assert_eq!(container["ports"][0]["protocol"], "TCP");
}

#[tokio::test]
async fn created_objects_are_stored_with_kubernetes_defaults() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", DEPLOYMENTS, &minimal_deployment("web"))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_deployment_defaults(&created.body);
    let stored = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(stored.status, StatusCode::OK);
    assert_deployment_defaults(&stored.body);

    // Writing back what was read changes nothing.
    let replaced = send(
        &cp,
        json("PUT", &format!("{DEPLOYMENTS}/web"), &stored.body),
    )
    .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert_eq!(
        replaced.body["metadata"]["resourceVersion"],
        stored.body["metadata"]["resourceVersion"]
    );

    let services = "/api/v1/namespaces/default/services";
    let service = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
    let created = send(&cp, json("POST", services, &service)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let spec = &created.body["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(
        spec["ports"][0],
        json!({"port": 80, "protocol": "TCP", "targetPort": 80})
    );
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
}

#[tokio::test]
async fn applying_the_same_object_twice_changes_nothing() {
    let cp = control_plane().await;
    let url = format!("{DEPLOYMENTS}/applied?fieldManager=kubectl");
    let body = minimal_deployment("applied").to_string();
    let apply = || with_body("PATCH", &url, "application/apply-patch+yaml", body.clone());
    let first = send(&cp, apply()).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert_deployment_defaults(&first.body);
    let second = send(&cp, apply()).await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(
        second.body["metadata"]["resourceVersion"], first.body["metadata"]["resourceVersion"],
        "an unchanged apply must not write"
    );
    assert_eq!(second.body["metadata"]["generation"], 1);
    assert_deployment_defaults(&second.body);
}
