//! Karmada's `aggregatedapi_test.go` through `up --demo`: a ServiceAccount allowed
//! `clusters/proxy` on one member reaches it through the cluster proxy as itself — the member's
//! impersonator (given its rights by the `unifiedAuth` controller) acts as the caller, so the
//! member's own RBAC decides: `/api` is open, `/api/v1/nodes` is refused until the member binds
//! the account a role. A member the control plane does not allow is refused there.

use base64::Engine as _;

use crate::support::{ControlPlane, await_value, eventually};

const NS: &str = "proxy-e2e";

/// A client of the control plane authenticated with `token` only.
async fn client_as(plane: &ControlPlane, token: &str) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("the kubeconfig");
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("a client config");
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_owned().into()),
        ..Default::default()
    };
    kube::Client::try_from(config).expect("a client")
}

/// The HTTP status `path` answers `client` with.
async fn status(client: &kube::Client, path: &str) -> u16 {
    let request = http::Request::get(path)
        .body(Vec::new())
        .expect("a request");
    match client.request_text(request).await {
        Ok(_) => 200,
        Err(kube::Error::Api(status)) => status.code,
        Err(other) => panic!("GET {path}: {other}"),
    }
}

fn proxy(cluster: &str, path: &str) -> String {
    format!("/apis/cluster.karmada.io/v1alpha1/clusters/{cluster}/proxy/{path}")
}

pub async fn a_service_account_reaches_a_member_as_itself(plane: &ControlPlane) {
    let (member, other) = ("cn-shanghai", "us-west-2");
    plane.kubectl(&["create", "namespace", NS]).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: tom, namespace: {NS}}}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tom\n  namespace: {NS}\n  annotations: {{kubernetes.io/service-account.name: tom}}\ntype: kubernetes.io/service-account-token\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: proxy-e2e-tom}}\nrules:\n- {{apiGroups: [cluster.karmada.io], verbs: ['*'], resources: [clusters/proxy], resourceNames: [{member}]}}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {{name: proxy-e2e-tom}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: proxy-e2e-tom}}\nsubjects:\n- {{kind: ServiceAccount, name: tom, namespace: {NS}}}\n- {{kind: Group, name: 'system:serviceaccounts'}}\n- {{kind: Group, name: 'system:serviceaccounts:{NS}'}}\n"
            ),
        )
        .await;
    let token: String = eventually("tom's token", || async {
        let encoded = plane.get(None, NS, "secret/tom", "{.data.token}").await;
        base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()
            .and_then(|t| String::from_utf8(t).ok())
            .filter(|t| !t.is_empty())
            .ok_or(encoded)
    })
    .await;
    // The account exists in the member too (its namespace is propagated).
    let namespace = format!("namespace/{NS}");
    await_value("the namespace in the member", NS, || {
        plane.get(Some(member), "default", &namespace, "{.metadata.name}")
    })
    .await;
    plane
        .kubectl(&[
            "--context",
            member,
            "-n",
            NS,
            "create",
            "serviceaccount",
            "tom",
        ])
        .await;
    let tom = client_as(plane, &token).await;

    // With the control plane's permission: the member answers as for tom himself.
    await_value("tom reaches the member's /api", "200", || async {
        status(&tom, &proxy(member, "api")).await.to_string()
    })
    .await;
    assert_eq!(
        status(&tom, &proxy(member, "api/v1/nodes")).await,
        403,
        "the member's RBAC does not let tom list nodes yet"
    );
    plane
        .kubectl(&[
            "--context",
            member,
            "create",
            "clusterrole",
            "proxy-e2e-tom",
            "--verb=*",
            "--resource=*.*",
        ])
        .await;
    plane
        .kubectl(&[
            "--context",
            member,
            "create",
            "clusterrolebinding",
            "proxy-e2e-tom",
            "--clusterrole=proxy-e2e-tom",
            &format!("--serviceaccount={NS}:tom"),
        ])
        .await;
    await_value(
        "tom lists the member's nodes once the member allows it",
        "200",
        || async {
            status(&tom, &proxy(member, "api/v1/nodes"))
                .await
                .to_string()
        },
    )
    .await;
    // A member the control plane does not let tom reach: refused before any member is asked.
    assert_eq!(status(&tom, &proxy(other, "api")).await, 403);
    // The impersonator's rights in the member name tom and his groups, as unifiedAuth wrote them.
    let rules = plane
        .get(
            Some(member),
            "default",
            "clusterrole/karmada-impersonator",
            "{.rules[*].resourceNames}",
        )
        .await;
    assert!(rules.contains("\"tom\""), "{rules}");
    assert!(
        rules.contains(&format!("system:serviceaccounts:{NS}")),
        "{rules}"
    );
    plane
        .await_events(
            "default",
            "Cluster",
            member,
            &["SyncImpersonationConfigSucceed"],
        )
        .await;
}
