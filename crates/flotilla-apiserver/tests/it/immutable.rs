//! Updates kube refuses: a workload's selector, a Service's cluster IP once set; what may change
//! (replicas, the template) still does.

use http::StatusCode;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn selectors_and_cluster_ips_do_not_change_on_update() {
    let cp = control_plane().await;
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let reply = send(&cp, json("POST", deployments, &deployment("web", 1))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    let web = format!("{deployments}/web");
    let scaled = send(&cp, merge(&web, json!({"spec": {"replicas": 3}}))).await;
    assert_eq!(scaled.status, StatusCode::OK, "{:?}", scaled.body);
    let moved = send(
        &cp,
        merge(
            &web,
            json!({"spec": {"selector": {"matchLabels": {"app": "api"}},
                "template": {"metadata": {"labels": {"app": "api"}}}}}),
        ),
    )
    .await;
    assert_eq!(moved.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        moved.body["message"],
        "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"api\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
    );

    let services = "/api/v1/namespaces/default/services";
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
        "spec": {"clusterIP": "10.96.0.5", "ports": [{"port": 5432}]}});
    let reply = send(&cp, json("POST", services, &service)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    let moved = send(
        &cp,
        merge(
            &format!("{services}/db"),
            json!({"spec": {"clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"]}}),
        ),
    )
    .await;
    assert_eq!(moved.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        moved.body["message"],
        "Service \"db\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.9\"}: may not change once set"
    );
}
