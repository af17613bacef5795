//! RBAC escalation prevention: a user may only write Roles granting what they hold (or with
//! `escalate`) and bind roles whose permissions they hold (or with `bind`), with kube's 403s.

use std::time::Duration;

use flotilla_apiserver::auth::authn::UserInfo;
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::{Reply, control_plane, eventually, json as json_request, send, send_as};

const PATIENCE: Duration = Duration::from_secs(10);
const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";

fn alice() -> UserInfo {
    UserInfo {
        name: "alice".into(),
        groups: vec!["system:authenticated".into()],
        ..UserInfo::default()
    }
}

async fn admin_create(cp: &flotilla_apiserver::Running, uri: &str, body: Value) {
    let reply = send(cp, json_request("POST", uri, &body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

fn role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name}, "rules": rules})
}

fn binding(name: &str, kind: &str, role: &str, user: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
}

async fn as_alice(
    cp: &flotilla_apiserver::Running,
    method: &str,
    uri: &str,
    body: &Value,
) -> Reply {
    send_as(cp, Some(alice()), json_request(method, uri, body)).await
}

#[tokio::test]
async fn roles_and_bindings_cannot_grant_more_than_the_writer_holds() {
    let cp = control_plane().await;
    admin_create(
        &cp,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    )
    .await;
    let roles = format!("{RBAC}/namespaces/team-a/roles");
    let bindings = format!("{RBAC}/namespaces/team-a/rolebindings");
    admin_create(
        &cp,
        &roles,
        role(
            "rbac-writer",
            json!([
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
                 "verbs": ["create", "get", "update", "patch"]},
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
            ]),
        ),
    )
    .await;
    admin_create(
        &cp,
        &bindings,
        binding("alice", "Role", "rbac-writer", "alice"),
    )
    .await;
    let reader = role(
        "reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
    );
    eventually(PATIENCE, || async {
        as_alice(&cp, "POST", &roles, &reader).await.status == StatusCode::CREATED
    })
    .await;

    // A Role granting what alice lacks.
    let secrets = role(
        "secrets",
        json!([{"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get", "watch", "list"]}]),
    );
    let refused = as_alice(&cp, "POST", &roles, &secrets).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(
        refused.body["message"],
        "roles.rbac.authorization.k8s.io \"secrets\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"watch\"]}\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"watch\" \"list\"]}"
    );
    assert_eq!(refused.body["details"]["kind"], "roles");
    assert_eq!(refused.body["details"]["name"], "secrets");
    // Updating her own Role beyond her rights is refused too; nothing changes.
    let widened = role(
        "reader",
        json!([{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get"]}]),
    );
    let refused = as_alice(&cp, "PUT", &format!("{roles}/reader"), &widened).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let stored = send(&cp, crate::support::get(&format!("{roles}/reader"))).await;
    assert_eq!(stored.body["rules"][0]["resources"], json!(["configmaps"]));

    // Binding a role she holds the rules of is fine; binding cluster-admin is not.
    let ok = as_alice(
        &cp,
        "POST",
        &bindings,
        &binding("bob-reads", "Role", "reader", "bob"),
    )
    .await;
    assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.body);
    let admin_binding = binding("bob-admin", "ClusterRole", "cluster-admin", "bob");
    let refused = as_alice(&cp, "POST", &bindings, &admin_binding).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["message"],
        "rolebindings.rbac.authorization.k8s.io \"bob-admin\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n\
         {NonResourceURLs:[\"*\"], Verbs:[\"*\"]}"
    );
    let missing = as_alice(
        &cp,
        "POST",
        &bindings,
        &binding("ghost", "Role", "no-such-role", "bob"),
    )
    .await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    assert_eq!(
        missing.body["message"],
        "rolebindings.rbac.authorization.k8s.io \"ghost\" is forbidden: roles.rbac.authorization.k8s.io \"no-such-role\" not found"
    );

    // `bind` on that one ClusterRole, and `escalate` on roles, lift the checks.
    admin_create(
        &cp,
        &roles,
        role(
            "delegate",
            json!([
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                 "verbs": ["bind"], "resourceNames": ["cluster-admin"]},
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]},
            ]),
        ),
    )
    .await;
    admin_create(
        &cp,
        &bindings,
        binding("alice-delegate", "Role", "delegate", "alice"),
    )
    .await;
    eventually(PATIENCE, || async {
        as_alice(&cp, "POST", &bindings, &admin_binding)
            .await
            .status
            == StatusCode::CREATED
    })
    .await;
    let escalated = as_alice(&cp, "POST", &roles, &secrets).await;
    assert_eq!(escalated.status, StatusCode::CREATED, "{}", escalated.body);
}

#[tokio::test]
async fn cluster_roles_need_cluster_wide_rights_and_aggregation_needs_everything() {
    let cp = control_plane().await;
    admin_create(
        &cp,
        &format!("{RBAC}/clusterroles"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "clusterrole-writer"},
            "rules": [
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["create"]},
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            ]}),
    )
    .await;
    admin_create(
        &cp,
        &format!("{RBAC}/clusterrolebindings"),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "alice"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "clusterrole-writer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}),
    )
    .await;
    let pod_reader = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
    let clusterroles = format!("{RBAC}/clusterroles");
    eventually(PATIENCE, || async {
        as_alice(&cp, "POST", &clusterroles, &pod_reader)
            .await
            .status
            == StatusCode::CREATED
    })
    .await;
    let aggregated = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "everything-labelled"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
        "rules": []});
    let refused = as_alice(&cp, "POST", &clusterroles, &aggregated).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["message"],
        "clusterroles.rbac.authorization.k8s.io \"everything-labelled\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
    );
    // The admin (system:masters) is never checked.
    let reply = send(&cp, json_request("POST", &clusterroles, &aggregated)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}
