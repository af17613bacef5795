use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequestSpec, CertificateSigningRequestStatus,
};
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};

use super::*;

fn request(common_name: &str, organization: &str, dns: Option<&str>) -> Vec<u8> {
    let key = KeyPair::generate().expect("a key");
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::OrganizationName, organization);
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    if let Some(dns) = dns {
        params.subject_alt_names = vec![SanType::DnsName(dns.try_into().expect("a name"))];
    }
    params
        .serialize_request(&key)
        .expect("a request")
        .pem()
        .expect("PEM")
        .into_bytes()
}

fn csr(pem: Vec<u8>, username: &str, usages: &[&str]) -> CertificateSigningRequest {
    CertificateSigningRequest {
        spec: CertificateSigningRequestSpec {
            request: ByteString(pem),
            signer_name: SIGNER.into(),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            username: Some(username.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

const USAGES: &[&str] = &["digital signature", "key encipherment", "client auth"];

#[test]
fn a_bootstrap_registration_is_recognized_as_clusteragent_only() {
    let pem = request(
        "system:karmada:agent:member1",
        "system:karmada:agents",
        None,
    );
    let found = recognized(&csr(pem, "system:bootstrap:abcdef", USAGES)).expect("parses");
    assert_eq!(
        found.iter().map(|r| r.subresource).collect::<Vec<_>>(),
        ["clusteragent"]
    );
}

#[test]
fn an_agent_renewing_its_own_certificate_is_tried_as_selfclusteragent_first() {
    let pem = request(
        "system:karmada:agent:member1",
        "system:karmada:agents",
        None,
    );
    let found = recognized(&csr(
        pem,
        "system:karmada:agent:member1",
        &["digital signature", "client auth"],
    ))
    .expect("parses");
    assert_eq!(
        found.iter().map(|r| r.subresource).collect::<Vec<_>>(),
        ["selfclusteragent", "clusteragent"]
    );
}

#[test]
fn other_subjects_signers_usages_names_and_decided_requests_are_left_alone() {
    let agent = || request("system:karmada:agent:m", "system:karmada:agents", None);
    let none = |csr: CertificateSigningRequest| recognized(&csr).expect("parses").is_empty();
    assert!(none(csr(
        request("alice", "system:karmada:agents", None),
        "u",
        USAGES
    )));
    assert!(none(csr(
        request("system:karmada:agent:m", "system:masters", None),
        "u",
        USAGES
    )));
    assert!(none(csr(
        request(
            "system:karmada:agent:m",
            "system:karmada:agents",
            Some("x.example")
        ),
        "u",
        USAGES
    )));
    assert!(none(csr(agent(), "u", &["client auth"])));
    let mut other_signer = csr(agent(), "u", USAGES);
    other_signer.spec.signer_name = "example.com/signer".into();
    assert!(none(other_signer));
    let mut denied = csr(agent(), "u", USAGES);
    denied.status = Some(CertificateSigningRequestStatus {
        conditions: Some(vec![CertificateSigningRequestCondition {
            type_: "Denied".into(),
            status: "True".into(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    assert!(none(denied));
}

#[test]
fn validation_reports_karmadas_reasons() {
    let subject = Subject {
        common_name: "system:karmada:agent:m".into(),
        organizations: vec!["system:karmada:agents".into()],
        names: [false, false, true, false],
    };
    assert_eq!(
        validate_agent_csr(&subject, &[]),
        Err("IP subjectAltNames are not allowed".to_owned())
    );
    let subject = Subject {
        names: [false; 4],
        common_name: "system:node:m".into(),
        ..subject
    };
    assert_eq!(
        validate_agent_csr(&subject, &[]),
        Err("subject common name does not begin with system:karmada:agent: prefix".to_owned())
    );
}
