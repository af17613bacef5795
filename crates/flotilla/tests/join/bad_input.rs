//! Bad input: each fails with a message that names the problem, and leaves nothing behind in
//! the member or on the control plane.

use crate::push::{control_objects, join_args, member_objects};
use crate::support::{ControlPlane, Members, failed, flotilla, ok, write_token_kubeconfig};

async fn join_with(control: &ControlPlane, name: &str, kubeconfig: &std::path::Path) -> String {
    failed(
        &flotilla(&[
            "join",
            name,
            "--kubeconfig",
            &control.kubeconfig.display().to_string(),
            "--cluster-kubeconfig",
            &kubeconfig.display().to_string(),
        ])
        .await,
    )
}

/// An HTTP server that is not Kubernetes: answers every request with a small HTML page.
async fn web_server() -> (String, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("listen");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                let body = "<html><body>hello</body></html>";
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_bad_input_is_named_and_leaves_nothing_half_created() {
    let control = ControlPlane::start("").await;
    let members = Members::start(&["m1", "m2"]).await;
    let m1 = members.cluster("m1");
    let m2 = members.cluster("m2");
    let dir = members.dir.path();
    let admin = control.client();

    // Unreachable: nothing listens on the port.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let port = closed.local_addr().expect("address").port();
    drop(closed);
    let path = dir.join("unreachable.kubeconfig");
    write_token_kubeconfig(
        &path,
        &format!("https://127.0.0.1:{port}"),
        Some(m1.pki.ca_cert_pem()),
        "t",
    );
    let error = join_with(&control, "bad", &path).await;
    assert!(
        error.contains("is unreachable: connection refused"),
        "{error}"
    );

    // Wrong CA: m1's server with m2's CA.
    let path = dir.join("wrong-ca.kubeconfig");
    write_token_kubeconfig(&path, &m1.url, Some(m2.pki.ca_cert_pem()), "t");
    let error = join_with(&control, "bad", &path).await;
    assert!(error.contains("TLS with the member API server"), "{error}");
    assert!(
        error.contains("not signed by a CA the kubeconfig trusts"),
        "{error}"
    );

    // A token the member does not accept (expired, revoked or made up).
    let path = dir.join("bad-token.kubeconfig");
    write_token_kubeconfig(&path, &m1.url, Some(m1.pki.ca_cert_pem()), "revoked-token");
    let error = join_with(&control, "bad", &path).await;
    assert!(
        error.contains("rejected the credentials (401 Unauthorized)"),
        "{error}"
    );

    // Not Kubernetes.
    let (web, _web) = web_server().await;
    let path = dir.join("web.kubeconfig");
    write_token_kubeconfig(&path, &web, None, "t");
    let error = join_with(&control, "bad", &path).await;
    assert!(error.contains("is not a Kubernetes API server"), "{error}");

    // A name taken by another member.
    ok(&flotilla(
        &join_args(&control, &members, "taken", "m2")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .await);
    let args = join_args(&control, &members, "taken", "m1");
    let error = failed(&flotilla(&args.iter().map(String::as_str).collect::<Vec<_>>()).await);
    assert!(
        error.contains("a cluster named \"taken\" is already joined and is another member"),
        "{error}"
    );
    assert!(member_objects(&m1.client(), "taken").await.is_empty());

    // The control plane itself is unreachable (checked before anything is written).
    let path = dir.join("control-unreachable.kubeconfig");
    write_token_kubeconfig(
        &path,
        &format!("https://127.0.0.1:{port}"),
        Some(&control.ca_pem),
        "t",
    );
    let error = failed(
        &flotilla(&[
            "join",
            "bad",
            "--kubeconfig",
            &path.display().to_string(),
            "--cluster-kubeconfig",
            &members.kubeconfig.display().to_string(),
            "--cluster-context",
            "m1",
        ])
        .await,
    );
    assert!(
        error.contains("control plane: cannot list clusters: unreachable: connection refused"),
        "{error}"
    );

    // Arguments.
    let args = join_args(&control, &members, "Bad_Name", "m1");
    let error = failed(&flotilla(&args.iter().map(String::as_str).collect::<Vec<_>>()).await);
    assert!(error.contains("cluster name \"Bad_Name\""), "{error}");
    let mut args = join_args(&control, &members, "bad", "m1");
    args.extend(["--taint".to_owned(), "a=b:Sometimes".to_owned()]);
    let error = failed(&flotilla(&args.iter().map(String::as_str).collect::<Vec<_>>()).await);
    assert!(
        error.contains("unsupported effect \"Sometimes\""),
        "{error}"
    );

    for name in ["bad", "Bad_Name"] {
        assert!(
            control_objects(&admin, name).await.is_empty(),
            "{name} on the control plane"
        );
        assert!(
            member_objects(&m1.client(), name).await.is_empty(),
            "{name} in the member"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_after_the_member_is_set_up_rolls_everything_back() {
    // A control-plane user who may manage Secrets in karmada-cluster and read Clusters, but
    // not create them: join gets as far as the Cluster and must undo the rest.
    let control = ControlPlane::start("operator-token,operator,u-1,operators\n").await;
    let admin = control.client();
    let rbac = serde_json::json!([
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "read-clusters"},
         "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["get", "list"]},
                   {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "operators-read-clusters"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read-clusters"},
         "subjects": [{"kind": "Group", "name": "operators", "apiGroup": "rbac.authorization.k8s.io"}]},
    ]);
    let role: k8s_openapi::api::rbac::v1::ClusterRole =
        serde_json::from_value(rbac[0].clone()).expect("a role");
    let binding: k8s_openapi::api::rbac::v1::ClusterRoleBinding =
        serde_json::from_value(rbac[1].clone()).expect("a binding");
    kube::Api::all(admin.clone())
        .create(&Default::default(), &role)
        .await
        .expect("role");
    kube::Api::all(admin.clone())
        .create(&Default::default(), &binding)
        .await
        .expect("binding");
    let members = Members::start(&["m1"]).await;
    let member = members.cluster("m1").client();

    let operator = control.token_kubeconfig("operator", "operator-token");
    let output = flotilla(&[
        "join",
        "m1",
        "--kubeconfig",
        &operator.display().to_string(),
        "--cluster-kubeconfig",
        &members.kubeconfig.display().to_string(),
    ])
    .await;
    let error = failed(&output);
    assert!(
        error.contains("control plane: cannot create the Cluster"),
        "{error}"
    );
    assert!(
        error.contains("rolled back what this run created"),
        "{error}"
    );
    assert!(
        error.contains("control plane: deleted Secret m1"),
        "{error}"
    );
    assert!(
        error.contains("member: deleted ServiceAccount karmada-m1"),
        "{error}"
    );
    assert!(control_objects(&admin, "m1").await.is_empty());
    assert!(member_objects(&member, "m1").await.is_empty());
}
