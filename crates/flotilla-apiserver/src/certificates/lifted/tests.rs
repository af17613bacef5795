use std::time::{Duration, SystemTime};

use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};
use serde_json::{Value, json};

use super::signing;
use super::*;

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

fn csr(pem: &str) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "agent"},
        "spec": {
            "request": STANDARD.encode(pem),
            "signerName": KUBE_APISERVER_CLIENT,
            "usages": ["digital signature", "key encipherment", "client auth"],
            "expirationSeconds": 86400,
        },
    })
}

fn agent_csr() -> Value {
    csr(&request_pem(
        "system:karmada:agent:member1",
        "system:karmada:agents",
    ))
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(|e| e.to_string()).collect()
}

fn with_conditions(mut csr: Value, conditions: Value) -> Value {
    csr["status"] = json!({"conditions": conditions});
    csr
}

#[test]
fn a_signed_request_parses_with_its_subject() {
    let parsed = parse_request(request_pem("alice", "team").as_bytes()).expect("parses");
    assert_eq!(parsed.common_name, "alice");
    assert_eq!(parsed.organizations, ["team"]);
}

#[test]
fn create_records_the_requester_and_clears_status() {
    let mut object = agent_csr();
    object["spec"]["username"] = "mallory".into();
    object["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
    let user = UserInfo {
        name: "system:bootstrap:abcdef".into(),
        uid: None,
        groups: vec!["system:bootstrappers".into(), "system:authenticated".into()],
        extra: Default::default(),
    };
    prepare_for_create(&mut object, Some(&user));
    assert_eq!(object["spec"]["username"], "system:bootstrap:abcdef");
    assert_eq!(
        object["spec"]["groups"],
        json!(["system:bootstrappers", "system:authenticated"])
    );
    assert!(object["spec"].get("uid").is_none());
    assert_eq!(object["status"], json!({}));
    assert!(errors(&object, None, None).is_empty());
}

#[test]
fn requests_that_do_not_parse_or_verify_are_invalid() {
    let mut object = agent_csr();
    object["spec"]["request"] = STANDARD.encode("not pem").into();
    assert_eq!(
        messages(&errors(&object, None, None)),
        ["spec.request: Invalid value: <request data>: PEM block type must be CERTIFICATE REQUEST"]
    );
    // A request whose signature does not match its content.
    let pem = request_pem("alice", "team");
    let block = super::pem::decode(pem.as_bytes()).expect("a block").0;
    let mut der = block.der.clone();
    let last = der.len() - 1;
    der[last] ^= 0x01;
    let tampered = super::pem::encode("CERTIFICATE REQUEST", &der);
    let mut object = agent_csr();
    object["spec"]["request"] = STANDARD.encode(tampered).into();
    let found = messages(&errors(&object, None, None));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("spec.request: Invalid value"),
        "{found:?}"
    );
}

#[test]
fn usages_signer_and_duration_are_checked() {
    let mut object = agent_csr();
    object["spec"]["usages"] = json!(["client auth", "flying", "client auth"]);
    object["spec"]["signerName"] = "example".into();
    object["spec"]["expirationSeconds"] = 599.into();
    let found = messages(&errors(&object, None, None));
    assert!(
        found
            .iter()
            .any(|m| m.starts_with("spec.usages[1]: Unsupported value: \"flying\"")),
        "{found:?}"
    );
    assert!(
        found.contains(&"spec.usages[2]: Duplicate value: \"client auth\"".to_owned()),
        "{found:?}"
    );
    assert!(found.contains(&"spec.signerName: Invalid value: \"example\": must be a fully qualified domain and path of the form 'example.com/signer-name'".to_owned()), "{found:?}");
    assert!(found.contains(&"spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)".to_owned()), "{found:?}");
    object["spec"]["usages"] = json!([]);
    object["spec"]["signerName"] = "".into();
    let found = messages(&errors(&object, None, None));
    assert!(
        found.contains(&"spec.usages: Required value".to_owned()),
        "{found:?}"
    );
    assert!(
        found.contains(&"spec.signerName: Required value".to_owned()),
        "{found:?}"
    );
    object["spec"]["signerName"] = "kubernetes.io/legacy-unknown".into();
    let found = messages(&errors(&object, None, None));
    assert!(
        found
            .iter()
            .any(|m| m.contains("the legacy signerName is not allowed")),
        "{found:?}"
    );
    object["spec"]["signerName"] = "localhost/Signer".into();
    let found = messages(&errors(&object, None, None));
    assert!(
        found
            .iter()
            .any(|m| m.contains("should be a domain with at least two segments")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("validating label \"Signer\"")),
        "{found:?}"
    );
}

#[test]
fn approved_and_denied_are_exclusive_and_true_only() {
    let object = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "False"}]),
    );
    let found = messages(&errors(&object, None, None));
    assert!(found.contains(&"status.conditions[1].status: Unsupported value: \"False\": supported values: \"True\"".to_owned()), "{found:?}");
    assert!(found.contains(&"status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive".to_owned()), "{found:?}");
}

#[test]
fn only_the_approval_subresource_sets_approval_and_nothing_removes_it() {
    let old = agent_csr();
    let approved = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True", "reason": "R"}]),
    );
    assert!(errors(&approved, Some(&old), Some(Write::Approval)).is_empty());
    assert_eq!(
        messages(&errors(&approved, Some(&old), Some(Write::Status))),
        ["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
    );
    let failed = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True", "reason": "R"}, {"type": "Failed", "status": "True"}]),
    );
    for write in [Write::Approval, Write::Status, Write::Main] {
        let found = messages(&errors(&old, Some(&approved), Some(write)));
        assert!(found.contains(&"status.conditions: Forbidden: updates may not remove a condition of type \"Approved\"".to_owned()), "{write:?}: {found:?}");
    }
    let found = messages(&errors(&approved, Some(&failed), Some(Write::Status)));
    assert!(
        found.contains(
            &"status.conditions: Forbidden: updates may not remove a condition of type \"Failed\""
                .to_owned()
        ),
        "{found:?}"
    );
}

#[test]
fn the_status_strategy_keeps_approval_and_the_approval_strategy_keeps_the_certificate() {
    let old = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True", "reason": "Old", "lastUpdateTime": "2025-01-01T00:00:00Z"}]),
    );
    let mut status_write = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True", "reason": "Forged"}]),
    );
    status_write["status"]["certificate"] = "Y2VydA==".into();
    status_write["spec"]["username"] = "someone-else".into();
    prepare_for_update(
        &mut status_write,
        &old,
        Write::Status,
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(status_write["status"]["conditions"][0]["reason"], "Old");
    assert_eq!(status_write["status"]["certificate"], "Y2VydA==");
    assert_eq!(status_write["spec"], old["spec"]);

    let mut old_issued = old.clone();
    old_issued["status"]["certificate"] = "b2xk".into();
    let mut approval = with_conditions(
        agent_csr(),
        json!([{"type": "Approved", "status": "True", "reason": "Old", "lastUpdateTime": "2025-01-01T00:00:00Z"}, {"type": "Failed", "status": "True"}]),
    );
    prepare_for_update(
        &mut approval,
        &old_issued,
        Write::Approval,
        "2026-01-01T00:00:00Z",
    );
    assert_eq!(approval["status"]["certificate"], "b2xk");
    assert_eq!(
        approval["status"]["conditions"][1]["lastUpdateTime"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(
        approval["status"]["conditions"][1]["lastTransitionTime"],
        "2026-01-01T00:00:00Z"
    );
}

#[test]
fn a_certificate_is_set_once_through_status_only() {
    let old = with_conditions(agent_csr(), json!([{"type": "Approved", "status": "True"}]));
    let issuer = KeyPair::generate().expect("a key");
    let cert = CertificateParams::new(vec!["x.example".to_owned()])
        .expect("params")
        .self_signed(&issuer)
        .expect("a certificate")
        .pem();
    let mut issued = old.clone();
    issued["status"]["certificate"] = STANDARD.encode(&cert).into();
    assert!(errors(&issued, Some(&old), Some(Write::Status)).is_empty());
    assert_eq!(
        messages(&errors(&issued, Some(&old), Some(Write::Main))),
        ["status.certificate: Forbidden: updates may not set certificate content"]
    );
    let mut changed = issued.clone();
    changed["status"]["certificate"] = STANDARD.encode(format!("{cert}{cert}")).into();
    assert_eq!(
        messages(&errors(&changed, Some(&issued), Some(Write::Status))),
        ["status.certificate: Forbidden: updates may not modify existing certificate content"]
    );
    let mut garbage = old.clone();
    garbage["status"]["certificate"] = STANDARD
        .encode("-----BEGIN KEY-----\naGk=\n-----END KEY-----\n")
        .into();
    let found = messages(&errors(&garbage, Some(&old), Some(Write::Status)));
    assert!(
        found
            .iter()
            .any(|m| m.contains("only CERTIFICATE PEM blocks are allowed, found \"KEY\"")),
        "{found:?}"
    );
}

#[test]
fn the_condition_column_is_kubectls() {
    assert_eq!(condition_column(&agent_csr()), "Pending");
    let mut issued = with_conditions(agent_csr(), json!([{"type": "Approved", "status": "True"}]));
    issued["status"]["certificate"] = "eA==".into();
    assert_eq!(condition_column(&issued), "Approved,Issued");
    let denied = with_conditions(
        agent_csr(),
        json!([{"type": "Denied", "status": "True"}, {"type": "Failed", "status": "True"}]),
    );
    assert_eq!(condition_column(&denied), "Denied,Failed");
}

#[test]
fn signing_duration_is_bounded_by_the_signer_and_ten_minutes() {
    let year = signing::DEFAULT_DURATION;
    assert_eq!(signing::duration(year, None), year);
    assert_eq!(
        signing::duration(year, Some(3600)),
        Duration::from_secs(3600)
    );
    assert_eq!(signing::duration(year, Some(60)), Duration::from_secs(600));
    assert_eq!(signing::duration(year, Some(10 * 8760 * 3600)), year);
}

#[test]
fn validity_is_backdated_and_short_lifetimes_keep_their_end() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let far = now + Duration::from_secs(100 * 8760 * 3600);
    let (nb, na) = signing::validity(now, Duration::from_secs(3600), far).expect("valid");
    assert_eq!(nb, now - Duration::from_secs(300));
    assert_eq!(na, now + Duration::from_secs(3600));
    let (_, na) = signing::validity(now, Duration::from_secs(86400), far).expect("valid");
    assert_eq!(na, now + Duration::from_secs(86400 - 300));
    let ca_end = now + Duration::from_secs(60);
    let (_, na) = signing::validity(now, Duration::from_secs(86400), ca_end).expect("valid");
    assert_eq!(na, ca_end);
    assert!(signing::validity(now, Duration::from_secs(86400), now).is_err());
}

#[test]
fn client_signers_check_usages_and_kubelet_subjects() {
    let request =
        parse_request(request_pem("system:node:n1", "system:nodes").as_bytes()).expect("parses");
    let usages = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(signing::check(&request, &usages(&["client auth"]), KUBE_APISERVER_CLIENT).is_ok());
    assert_eq!(
        signing::check(
            &request,
            &usages(&["server auth", "client auth"]),
            KUBE_APISERVER_CLIENT
        ),
        Err("invalid usage for client certificate: server auth".to_owned())
    );
    assert_eq!(
        signing::check(
            &request,
            &usages(&["digital signature"]),
            KUBE_APISERVER_CLIENT
        ),
        Err("missing required usage for client certificate: client auth".to_owned())
    );
    assert!(
        signing::check(
            &request,
            &usages(&["digital signature", "client auth"]),
            KUBE_APISERVER_CLIENT_KUBELET
        )
        .is_ok()
    );
    let agent =
        parse_request(request_pem("system:karmada:agent:m", "system:karmada:agents").as_bytes())
            .expect("parses");
    assert_eq!(
        signing::check(
            &agent,
            &usages(&["digital signature", "client auth"]),
            KUBE_APISERVER_CLIENT_KUBELET
        ),
        Err("subject organization is not system:nodes".to_owned())
    );
    assert_eq!(
        signing::usages(&usages(&["client auth", "flying"])).map(|_| ()),
        Err("unrecognized usage values: [\"flying\"]".to_owned())
    );
}
