//! Pull-mode registration with the real kubectl, over HTTPS: a bootstrap token authenticates as
//! `system:bootstrap:<id>`; the anonymous `cluster-info` carries its JWS; a CSR for a
//! karmada-agent subject posted with the token is auto-approved and signed, and the issued
//! certificate authenticates as the agent; `kubectl certificate deny/approve` decide the rest.

use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::harness::*;

const V: &str = "1.33";
const TOKEN_ID: &str = "abcdef";
const TOKEN_SECRET: &str = "0123456789abcdef";

fn ca_data(flotilla: &Flotilla) -> String {
    flotilla.ok(
        V,
        &[
            "config",
            "view",
            "--raw",
            "-o",
            "jsonpath={.clusters[0].cluster.certificate-authority-data}",
        ],
    )
}

/// A kubeconfig for `flotilla` whose user is `user` (YAML of a kubeconfig user, or `{}`).
fn kubeconfig(flotilla: &Flotilla, name: &str, user: &str) -> String {
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: flotilla\n  cluster:\n    server: {}\n    certificate-authority-data: {}\ncontexts:\n- name: {name}\n  context:\n    cluster: flotilla\n    user: {name}\ncurrent-context: {name}\nusers:\n- name: {name}\n  user: {user}\n",
        flotilla.url,
        ca_data(flotilla)
    );
    flotilla.file(&format!("{name}.kubeconfig"), &config)
}

fn as_user(flotilla: &Flotilla, kubeconfig: &str, args: &[&str]) -> (bool, String, String) {
    let output = flotilla.kubectl_with(V, args, &[("KUBECONFIG", kubeconfig)], None);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// An anonymous HTTPS GET with curl (kubectl asks for a password when a kubeconfig has no
/// credentials): (HTTP status, body).
fn anonymous_get(flotilla: &Flotilla, path: &str) -> (u16, String) {
    let ca = flotilla.file(
        "ca.crt",
        &String::from_utf8(STANDARD.decode(ca_data(flotilla).trim()).expect("base64"))
            .expect("PEM"),
    );
    let output = Command::new("curl")
        .args(["-s", "--cacert", &ca, "-w", "\n%{http_code}"])
        .arg(format!("{}{path}", flotilla.url))
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').expect("a status line");
    (
        code.trim().parse().expect("an HTTP status"),
        body.to_owned(),
    )
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A new EC key and a PEM CSR for `subject` (`/O=…/CN=…`); returns (key path, CSR PEM).
fn openssl_request(flotilla: &Flotilla, name: &str, subject: &str) -> (String, String) {
    let key = flotilla.dir.path().join(format!("{name}.key"));
    let request = flotilla.dir.path().join(format!("{name}.csr"));
    let status = Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-subj", subject, "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&request)
        .status()
        .expect("openssl runs");
    assert!(status.success());
    (
        key.to_string_lossy().into_owned(),
        std::fs::read_to_string(request).expect("the CSR"),
    )
}

fn csr_manifest(name: &str, request: &str) -> String {
    format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: {name}\nspec:\n  request: {}\n  signerName: kubernetes.io/kube-apiserver-client\n  expirationSeconds: 86400\n  usages: [digital signature, key encipherment, client auth]\n",
        STANDARD.encode(request)
    )
}

fn whoami(flotilla: &Flotilla, kubeconfig: &str) -> Value {
    let (ok, out, err) = as_user(flotilla, kubeconfig, &["auth", "whoami", "-o", "json"]);
    assert!(ok, "auth whoami failed: {err}");
    serde_json::from_str(&out).expect("JSON")
}

#[test]
fn a_bootstrap_token_registers_an_agent_through_an_auto_approved_csr() {
    let flotilla = Flotilla::start();
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bootstrap-token-{TOKEN_ID}\n  namespace: kube-system\ntype: bootstrap.kubernetes.io/token\nstringData:\n  token-id: {TOKEN_ID}\n  token-secret: {TOKEN_SECRET}\n  usage-bootstrap-authentication: \"true\"\n  usage-bootstrap-signing: \"true\"\n  auth-extra-groups: system:bootstrappers:karmada:default-cluster-token\n"
    );
    flotilla.ok(V, &["apply", "-f", &flotilla.file("token.yaml", &secret)]);

    // The token authenticates as its bootstrap user.
    let token = kubeconfig(
        &flotilla,
        "bootstrap",
        &format!("{{token: {TOKEN_ID}.{TOKEN_SECRET}}}"),
    );
    let me = whoami(&flotilla, &token);
    assert_eq!(
        me["status"]["userInfo"]["username"],
        "system:bootstrap:abcdef"
    );
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!([
            "system:bootstrappers",
            "system:bootstrappers:karmada:default-cluster-token",
            "system:authenticated"
        ])
    );

    // cluster-info is readable without credentials, and signed with the token.
    let cluster_info = "/api/v1/namespaces/kube-public/configmaps/cluster-info";
    let mut data = Value::Null;
    wait_for("cluster-info's signature", || {
        let (code, body) = anonymous_get(&flotilla, cluster_info);
        data = serde_json::from_str::<Value>(&body)
            .map(|v| v["data"].clone())
            .unwrap_or_default();
        code == 200 && data["jws-kubeconfig-abcdef"].is_string()
    });
    let content = data["kubeconfig"].as_str().expect("a kubeconfig");
    assert!(content.contains(&flotilla.url), "{content}");
    assert!(content.contains(ca_data(&flotilla).trim()), "{content}");
    let signature = data["jws-kubeconfig-abcdef"].as_str().expect("a signature");
    assert!(
        flotilla_apiserver::auth::lifted::jws::detached_signature_is_valid(
            signature,
            content,
            TOKEN_ID,
            TOKEN_SECRET
        )
    );
    // Anonymous requests reach nothing else.
    for path in [
        "/api/v1/namespaces",
        "/api/v1/namespaces/kube-public/configmaps",
    ] {
        assert_eq!(anonymous_get(&flotilla, path).0, 401, "{path}");
    }

    // The bootstrap user posts a CSR for an agent; Karmada's approver approves it, the signer
    // signs it.
    let (key, request) = openssl_request(
        &flotilla,
        "agent",
        "/O=system:karmada:agents/CN=system:karmada:agent:member1",
    );
    let manifest = flotilla.file("agent-csr.yaml", &csr_manifest("agent", &request));
    let (ok, _, err) = as_user(&flotilla, &token, &["create", "-f", &manifest]);
    assert!(ok, "the bootstrap user cannot create its CSR: {err}");
    let mut certificate = String::new();
    wait_for("the agent's certificate", || {
        certificate = flotilla.ok(
            V,
            &[
                "get",
                "csr",
                "agent",
                "-o",
                "jsonpath={.status.certificate}",
            ],
        );
        !certificate.trim().is_empty()
    });
    let conditions = flotilla.ok(
        V,
        &[
            "get",
            "csr",
            "agent",
            "-o",
            "jsonpath={.status.conditions[0].reason}/{.status.conditions[0].message}",
        ],
    );
    assert_eq!(
        conditions,
        "AutoApproved/Auto approving karmada agent certificate after SubjectAccessReview."
    );
    let table = flotilla.ok(V, &["get", "csr"]);
    let header = table.lines().next().expect("a header");
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "NAME",
            "AGE",
            "SIGNERNAME",
            "REQUESTOR",
            "REQUESTEDDURATION",
            "CONDITION"
        ]
    );
    let row = table
        .lines()
        .find(|l| l.starts_with("agent "))
        .expect("the agent's row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        [cells[2], cells[3], cells[4], cells[5]],
        [
            "kubernetes.io/kube-apiserver-client",
            "system:bootstrap:abcdef",
            "24h",
            "Approved,Issued"
        ]
    );

    // The issued certificate authenticates as the agent.
    let cert_path = flotilla.file(
        "agent.crt",
        &String::from_utf8(STANDARD.decode(certificate.trim()).expect("base64")).expect("PEM"),
    );
    let agent = kubeconfig(
        &flotilla,
        "agent",
        &format!("{{client-certificate: {cert_path}, client-key: {key}}}"),
    );
    let me = whoami(&flotilla, &agent);
    assert_eq!(
        me["status"]["userInfo"]["username"],
        "system:karmada:agent:member1"
    );
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!(["system:karmada:agents", "system:authenticated"])
    );

    // Requests that are not an agent's wait for a person.
    let (_, request) = openssl_request(&flotilla, "alice", "/O=team/CN=alice");
    flotilla.ok(
        V,
        &[
            "create",
            "-f",
            &flotilla.file("alice.yaml", &csr_manifest("alice", &request)),
        ],
    );
    let (_, request) = openssl_request(&flotilla, "bob", "/O=team/CN=bob");
    flotilla.ok(
        V,
        &[
            "create",
            "-f",
            &flotilla.file("bob.yaml", &csr_manifest("bob", &request)),
        ],
    );
    let status = |name: &str| {
        let table = flotilla.ok(V, &["get", "csr", name, "--no-headers"]);
        table.split_whitespace().last().unwrap_or("").to_owned()
    };
    assert_eq!(status("alice"), "Pending");
    flotilla.ok(V, &["certificate", "deny", "alice"]);
    flotilla.ok(V, &["certificate", "approve", "bob"]);
    assert_eq!(status("alice"), "Denied");
    wait_for("bob's certificate", || status("bob") == "Approved,Issued");
    assert_eq!(status("alice"), "Denied");
    // A denied request cannot be approved afterwards.
    let err = flotilla.fails(V, &["certificate", "approve", "alice"]);
    assert!(
        err.contains("mutually exclusive") || err.contains("Denied"),
        "{err}"
    );
}
