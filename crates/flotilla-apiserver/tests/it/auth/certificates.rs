//! CertificateSigningRequests: the requester recorded, approval through its subresource and
//! only with `approve` on the signer, the signer issuing from the CA, and the issued
//! certificate naming the requested user and groups.

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};

use super::*;

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

fn request_pem(common_name: &str, organization: &str) -> String {
    let key = KeyPair::generate().expect("a key");
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, organization);
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params
        .serialize_request(&key)
        .expect("a request")
        .pem()
        .expect("PEM")
}

fn csr(name: &str, pem: &str) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": STANDARD.encode(pem),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "key encipherment", "client auth"],
            "username": "forged",
        },
    })
}

async fn signing_control_plane() -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pki = flotilla_apiserver::auth::pki::Pki::load_or_create(dir.path(), &[]).expect("a PKI");
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let running = Builder::new(store)
        .csr_signing(Arc::new(pki), Duration::from_secs(3600))
        .start()
        .await
        .expect("API server starts");
    (running, dir)
}

fn approval(mut object: Value, kind: &str) -> Request<Body> {
    object["status"]["conditions"] = json!([{"type": kind, "status": "True", "reason": "Test"}]);
    let name = object["metadata"]["name"]
        .as_str()
        .expect("a name")
        .to_owned();
    json_request("PUT", &format!("{CSRS}/{name}/approval"), &object)
}

#[tokio::test]
async fn an_approved_request_is_signed_for_its_subject() {
    let (cp, _dir) = signing_control_plane().await;
    let requester = UserInfo {
        name: "system:bootstrap:abcdef".into(),
        groups: vec!["system:bootstrappers".into(), "system:authenticated".into()],
        ..UserInfo::default()
    };
    // Bootstrap users may post CSRs once bound to system:node-bootstrapper.
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "bootstrap"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:node-bootstrapper"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:bootstrappers"}]}),
    )
    .await;
    let pem = request_pem("system:karmada:agent:member1", "system:karmada:agents");
    // The authorizer reads bindings from the watch cache: wait for it to have this one.
    let can_list = || async { status_as(&cp, &requester, get(CSRS)).await == StatusCode::OK };
    eventually(PATIENCE, can_list).await;
    let created = send_as(
        &cp,
        Some(requester.clone()),
        json_request("POST", CSRS, &csr("agent", &pem)),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["spec"]["username"], "system:bootstrap:abcdef");
    // The requester may not approve its own request.
    let refused = send_as(
        &cp,
        Some(requester),
        approval(created.body.clone(), "Approved"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let approved = send(&cp, approval(created.body.clone(), "Approved")).await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.body);
    assert_eq!(approved.body["status"]["conditions"][0]["type"], "Approved");
    assert!(approved.body["status"]["conditions"][0]["lastUpdateTime"].is_string());
    let uri = format!("{CSRS}/agent");
    eventually(PATIENCE, || async {
        send(&cp, get(&uri)).await.body["status"]["certificate"].is_string()
    })
    .await;
    let issued = send(&cp, get(&uri)).await.body;
    let pem = STANDARD
        .decode(
            issued["status"]["certificate"]
                .as_str()
                .expect("a certificate"),
        )
        .expect("base64");
    let der = rustls_pki_types_der(&pem);
    let user = flotilla_apiserver::auth::authn::user_from_certificate(&der.into()).expect("a user");
    assert_eq!(user.name, "system:karmada:agent:member1");
    assert_eq!(user.groups, ["system:karmada:agents"]);
}

#[tokio::test]
async fn denied_requests_are_not_signed_and_masters_are_refused() {
    let (cp, _dir) = signing_control_plane().await;
    let pem = request_pem("alice", "team");
    let created = send(&cp, json_request("POST", CSRS, &csr("alice", &pem))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let denied = send(&cp, approval(created.body.clone(), "Denied")).await;
    assert_eq!(denied.status, StatusCode::OK, "{}", denied.body);
    let both = send(&cp, approval(denied.body.clone(), "Approved")).await;
    assert_eq!(
        both.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        both.body
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let current = send(&cp, get(&format!("{CSRS}/alice"))).await.body;
    assert!(current["status"].get("certificate").is_none(), "{current}");
    // Asking the kube-apiserver-client signer for system:masters is refused at create.
    let masters = send(
        &cp,
        json_request(
            "POST",
            CSRS,
            &csr("root", &request_pem("root", "system:masters")),
        ),
    )
    .await;
    assert_eq!(masters.status, StatusCode::FORBIDDEN, "{}", masters.body);
    assert_eq!(
        masters.body["message"],
        "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
}

#[tokio::test]
async fn a_request_the_signer_refuses_fails_with_the_reason() {
    let (cp, _dir) = signing_control_plane().await;
    let mut object = csr("server", &request_pem("web", "team"));
    object["spec"]["usages"] = json!(["server auth"]);
    let created = send(&cp, json_request("POST", CSRS, &object)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let approved = send(&cp, approval(created.body.clone(), "Approved")).await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.body);
    let uri = format!("{CSRS}/server");
    eventually(PATIENCE, || async {
        send(&cp, get(&uri)).await.body["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.len() == 2)
    })
    .await;
    let failed = &send(&cp, get(&uri)).await.body["status"]["conditions"][1];
    assert_eq!(failed["type"], "Failed");
    assert_eq!(failed["reason"], "SignerValidationFailure");
    assert_eq!(
        failed["message"],
        "invalid usage for client certificate: server auth"
    );
}

fn rustls_pki_types_der(pem: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(pem).expect("PEM text");
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    STANDARD.decode(body).expect("base64 body")
}
