//! Status merge patches carry `spec` through as the stored bytes (the registry's `kept` module):
//! what is served and stored is the object the whole path would store, spec defaults, manifests
//! and managed fields included.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const PODS: &str = "/api/v1/namespaces/default/pods";
const WORKS: &str = "/apis/work.karmada.io/v1alpha1/namespaces/default/works";
const BINDINGS: &str = "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings";

/// Status-patches `url` with `status` as `manager` and checks that the answer is what a read
/// serves, with the spec of `before` unchanged; returns the answer.
async fn patch_status(cp: &flotilla_apiserver::Running, url: &str, status: Value) -> Value {
    let before = send(cp, get(url)).await.body;
    let reply = send(
        cp,
        merge(
            &format!("{url}/status?fieldManager=reporter"),
            json!({ "status": status }),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["spec"], before["spec"]);
    assert_eq!(
        reply.body["metadata"]["generation"],
        before["metadata"]["generation"]
    );
    let read = send(cp, get(url)).await;
    assert_eq!(read.body, reply.body);
    reply.body
}

#[tokio::test]
async fn a_pod_status_patch_keeps_the_defaulted_spec_and_records_its_writer() {
    let cp = control_plane().await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
            "resources": {"limits": {"cpu": "1"}}}]}});
    let created = send(
        &cp,
        json("POST", &format!("{PODS}?fieldManager=creator"), &pod),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // Defaults from the create, which the status write must neither drop nor add to.
    assert_eq!(created.body["spec"]["restartPolicy"], "Always");
    assert_eq!(
        created.body["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "1"
    );

    let url = format!("{PODS}/p");
    let patched = patch_status(&cp, &url, json!({"phase": "Running", "hostIP": "10.0.0.1"})).await;
    assert_eq!(patched.get("spec"), created.body.get("spec"));
    assert_eq!(patched["status"]["phase"], "Running");
    let managers: Vec<(&str, Option<&str>)> = patched["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or(""),
                m["subresource"].as_str(),
            )
        })
        .collect();
    assert_eq!(managers, [("creator", None), ("reporter", Some("status"))]);

    // The same status again changes nothing: nothing is stored.
    let again = send(
        &cp,
        merge(
            &format!("{url}/status?fieldManager=reporter"),
            json!({"status": {"phase": "Running"}}),
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        patched["metadata"]["resourceVersion"]
    );
    assert_eq!(again.body, patched);

    // Spec sent along on the status subresource is not taken (the whole path decides it).
    let mixed = send(
        &cp,
        merge(
            &format!("{url}/status?fieldManager=reporter"),
            json!({"spec": {"activeDeadlineSeconds": 5}, "status": {"phase": "Succeeded"}}),
        ),
    )
    .await;
    assert_eq!(mixed.status, StatusCode::OK, "{}", mixed.body);
    assert_eq!(mixed.body["spec"], created.body["spec"]);
    assert_eq!(mixed.body["status"]["phase"], "Succeeded");

    // A status of the wrong type is refused, naming the field; nothing is stored.
    let bad = send(
        &cp,
        merge(
            &format!("{url}/status?fieldManager=reporter"),
            json!({"status": {"phase": 7}}),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(
        bad.body["message"].as_str().is_some_and(|m| m.ends_with(
            "json: cannot unmarshal number into Go struct field Pod.status.phase of type string"
        )),
        "{}",
        bad.body
    );
    let read = send(&cp, get(&url)).await;
    assert_eq!(read.body["status"]["phase"], "Succeeded");
}

#[tokio::test]
async fn a_work_status_patch_keeps_the_manifests_byte_for_byte() {
    let cp = control_plane().await;
    let work = json!({"metadata": {"name": "nginx-687f7fb96f"}, "spec": {"workload": {"manifests": [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "nginx", "namespace": "default"},
         "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    ]}}});
    let created = send(&cp, json("POST", WORKS, &work)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let url = format!("{WORKS}/nginx-687f7fb96f");
    let status = json!({
        "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful",
            "message": "Manifest has been successfully applied",
            "lastTransitionTime": "2026-12-06T00:00:00Z"}],
        "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps", "version": "v1",
            "kind": "Deployment", "resource": "deployments", "namespace": "default",
            "name": "nginx"},
            "status": {"replicas": 2, "readyReplicas": 2}, "health": "Healthy"}]
    });
    let patched = patch_status(&cp, &url, status).await;
    assert_eq!(patched["spec"], created.body["spec"]);
    assert_eq!(
        patched["status"]["manifestStatuses"][0]["status"]["readyReplicas"],
        2
    );
    // The Work's labels (its permanent id, stamped at create) are not stamped anew.
    assert_eq!(
        patched["metadata"]["labels"],
        created.body["metadata"]["labels"]
    );
}

#[tokio::test]
async fn a_binding_status_patch_keeps_the_spec_and_validates_the_status() {
    let cp = control_plane().await;
    let binding = json!({"metadata": {"name": "web-deployment"}, "spec": {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
            "name": "web", "uid": "u-1"},
        "replicas": 3,
        "clusters": [{"name": "m1", "replicas": 2}, {"name": "m2", "replicas": 1}]}});
    let created = send(&cp, json("POST", BINDINGS, &binding)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let url = format!("{BINDINGS}/web-deployment");
    let patched = patch_status(
        &cp,
        &url,
        json!({"schedulerObservedGeneration": 1, "aggregatedStatus": [
            {"clusterName": "m1", "applied": true, "health": "Healthy"}]}),
    )
    .await;
    assert_eq!(patched["spec"], created.body["spec"]);
    assert_eq!(
        patched["status"]["aggregatedStatus"][0]["clusterName"],
        "m1"
    );

    let bad = send(
        &cp,
        merge(
            &format!("{url}/status"),
            json!({"status": {"aggregatedStatus": [{"clusterName": "m1", "health": "Fine"}]}}),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(
        bad.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("status.aggregatedStatus[0].health")),
        "{}",
        bad.body
    );
}
