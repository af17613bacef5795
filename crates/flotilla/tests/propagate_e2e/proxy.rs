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

const MEMBER_NS: &str = "proxy-e2e-exec";

/// Karmada's `karmadactl exec --operation-scope members` and `karmadactl logs -C` cases, the way
/// karmadactl makes those requests: kubectl pointed at the control plane's cluster proxy for a
/// member (`--server …/clusters/<member>/proxy`), with the control plane's credentials. Exec is a
/// WebSocket upgrade the proxy passes through to the member; logs a plain GET.
pub async fn exec_and_logs_reach_members_through_the_proxy(plane: &ControlPlane) {
    plane
        .apply(
            None,
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {MEMBER_NS}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: web, namespace: {MEMBER_NS}}}\nspec:\n  containers:\n  - {{name: nginx, image: 'nginx:1.19.0', ports: [{{name: web, containerPort: 80}}]}}\n  - {{name: busybox, image: 'busybox:1.36.0', command: [sleep, '3600']}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: web, namespace: {MEMBER_NS}}}\nspec:\n  resourceSelectors: [{{apiVersion: v1, kind: Pod, name: web}}]\n  placement: {{clusterAffinity: {{clusterNames: [{}]}}}}\n",
                crate::support::MEMBERS.join(", ")
            ),
        )
        .await;
    let server = plane
        .kubectl(&[
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ])
        .await;
    for member in crate::support::MEMBERS {
        await_value("the pod runs in the member", "Running", || {
            plane.get(Some(member), MEMBER_NS, "pod/web", "{.status.phase}")
        })
        .await;
        let through = format!(
            "--server={server}{}",
            proxy(member, "").trim_end_matches('/')
        );
        let hello = plane
            .kubectl(&[
                &through, "-n", MEMBER_NS, "exec", "web", "--", "echo", "hello",
            ])
            .await;
        assert_eq!(hello, "hello\n", "exec in {member}");
        let code = plane
            .try_kubectl(&[
                &through, "-n", MEMBER_NS, "exec", "web", "-c", "busybox", "--", "sh", "-c",
                "exit 3",
            ])
            .await
            .expect_err("a failing command fails kubectl");
        assert!(
            code.contains("command terminated with exit code 3"),
            "{code}"
        );
        let logs = plane
            .kubectl(&[&through, "-n", MEMBER_NS, "logs", "web", "-c", "nginx"])
            .await;
        assert!(!logs.trim().is_empty(), "nginx logs in {member}");
        let wrong = plane
            .try_kubectl(&[&through, "-n", MEMBER_NS, "logs", "web", "-c", "nope"])
            .await
            .expect_err("an unknown container");
        assert!(
            wrong.contains("container nope is not valid for pod web"),
            "{wrong}"
        );
    }
    plane
        .kubectl(&["delete", "namespace", MEMBER_NS, "--wait=false"])
        .await;
}
