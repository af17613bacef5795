use std::fs;
use std::os::unix::fs::PermissionsExt;

use x509_parser::extensions::ParsedExtension;
use x509_parser::prelude::X509Certificate;

use super::*;

fn parse(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).expect("PEM certificate")
}

fn with_cert<R>(pem: &str, f: impl FnOnce(&X509Certificate<'_>) -> R) -> R {
    let der = parse(pem);
    let (_, cert) = X509Certificate::from_der(&der).expect("DER certificate");
    f(&cert)
}

fn strings<'a>(
    it: impl Iterator<Item = &'a x509_parser::x509::AttributeTypeAndValue<'a>>,
) -> Vec<String> {
    it.map(|a| a.as_str().expect("string attribute").to_string())
        .collect()
}

fn lifetime_days(cert: &X509Certificate<'_>) -> i64 {
    let v = cert.validity();
    (v.not_after.timestamp() - v.not_before.timestamp()) / 86_400
}

fn extended_key_usage(cert: &X509Certificate<'_>) -> (bool, bool) {
    let eku = cert
        .extended_key_usage()
        .expect("valid EKU")
        .expect("EKU present");
    (eku.value.server_auth, eku.value.client_auth)
}

fn verifies_with(cert_pem: &str, ca_pem: &str) -> bool {
    with_cert(ca_pem, |ca| {
        with_cert(cert_pem, |cert| {
            cert.verify_signature(Some(ca.public_key())).is_ok()
        })
    })
}

fn hosts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn first_start_creates_ca_serving_and_admin_files_with_private_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki =
        Pki::load_or_create(dir.path(), &hosts(&["api.example.com", "10.0.0.7"])).expect("create");

    for (file, mode) in [
        (CA_CERT_FILE, 0o644),
        (CA_KEY_FILE, 0o600),
        (SERVING_CERT_FILE, 0o644),
        (SERVING_KEY_FILE, 0o600),
        (ADMIN_CERT_FILE, 0o644),
        (ADMIN_KEY_FILE, 0o600),
    ] {
        let meta = fs::metadata(dir.path().join(file)).expect(file);
        assert_eq!(meta.permissions().mode() & 0o777, mode, "{file}");
    }
    assert_eq!(
        fs::read_to_string(dir.path().join(CA_CERT_FILE)).expect("ca"),
        pki.ca_cert_pem()
    );

    with_cert(pki.ca_cert_pem(), |ca| {
        assert!(ca.is_ca());
        assert_eq!(strings(ca.subject().iter_common_name()), [CA_COMMON_NAME]);
        assert!(
            (3649..=3651).contains(&lifetime_days(ca)),
            "{}",
            lifetime_days(ca)
        );
        assert!(ca.verify_signature(None).is_ok(), "self-signed");
    });
    with_cert(&pki.serving().cert_pem, |serving| {
        assert!(!serving.is_ca());
        assert_eq!(extended_key_usage(serving), (true, false));
        assert!((364..=366).contains(&lifetime_days(serving)));
        let expected: Vec<Host> = [
            "localhost",
            "127.0.0.1",
            "::1",
            "api.example.com",
            "10.0.0.7",
        ]
        .iter()
        .map(|h| Host::parse(h).expect("host"))
        .collect();
        assert_eq!(cert_hosts(serving), expected);
    });
    with_cert(&pki.admin().cert_pem, |admin| {
        assert_eq!(strings(admin.subject().iter_common_name()), [ADMIN_USER]);
        assert_eq!(
            strings(admin.subject().iter_organization()),
            [MASTERS_GROUP]
        );
        assert_eq!(extended_key_usage(admin), (false, true));
        let key_usage = admin.key_usage().expect("valid KU").expect("KU present");
        assert!(key_usage.value.digital_signature());
    });
    assert!(verifies_with(&pki.serving().cert_pem, pki.ca_cert_pem()));
    assert!(verifies_with(&pki.admin().cert_pem, pki.ca_cert_pem()));
    assert!(pki.admin().key_pem.contains("BEGIN PRIVATE KEY"));
}

#[test]
fn restart_with_same_hosts_reuses_every_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Pki::load_or_create(dir.path(), &hosts(&["a.example"])).expect("create");
    let second = Pki::load_or_create(dir.path(), &hosts(&["A.example"])).expect("reload");
    assert_eq!(first.ca_cert_pem(), second.ca_cert_pem());
    assert_eq!(first.serving().cert_pem, second.serving().cert_pem);
    assert_eq!(first.admin().cert_pem, second.admin().cert_pem);
    assert_eq!(first.admin().key_pem, second.admin().key_pem);
    // Fewer hosts are still covered by the existing certificate.
    let third = Pki::load_or_create(dir.path(), &[]).expect("reload without hosts");
    assert_eq!(first.serving().cert_pem, third.serving().cert_pem);
}

#[test]
fn new_host_reissues_serving_cert_under_the_same_ca() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Pki::load_or_create(dir.path(), &[]).expect("create");
    let second = Pki::load_or_create(dir.path(), &hosts(&["192.168.1.5"])).expect("reload");
    assert_eq!(first.ca_cert_pem(), second.ca_cert_pem());
    assert_eq!(first.admin().cert_pem, second.admin().cert_pem);
    assert_ne!(first.serving().cert_pem, second.serving().cert_pem);
    assert!(verifies_with(
        &second.serving().cert_pem,
        second.ca_cert_pem()
    ));
    with_cert(&second.serving().cert_pem, |c| {
        assert!(cert_hosts(c).contains(&Host::Ip("192.168.1.5".parse().expect("ip"))));
    });
    let on_disk = fs::read_to_string(dir.path().join(SERVING_CERT_FILE)).expect("serving");
    assert_eq!(on_disk, second.serving().cert_pem);
}

#[test]
fn leaves_from_another_ca_or_expiring_soon_are_reissued() {
    let dir = tempfile::tempdir().expect("tempdir");
    let other_dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::load_or_create(dir.path(), &[]).expect("create");
    let other = Pki::load_or_create(other_dir.path(), &[]).expect("other");
    fs::copy(
        other_dir.path().join(ADMIN_CERT_FILE),
        dir.path().join(ADMIN_CERT_FILE),
    )
    .expect("copy");
    fs::copy(
        other_dir.path().join(ADMIN_KEY_FILE),
        dir.path().join(ADMIN_KEY_FILE),
    )
    .expect("copy");

    // A serving certificate from our CA that expires in ten days.
    let key = KeyPair::generate().expect("key");
    let mut params =
        CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into(), "::1".into()])
            .expect("params");
    set_validity(&mut params, 10 * DAY, u64::MAX);
    let cert = params.signed_by(&key, &pki.ca.issuer).expect("sign");
    fs::write(dir.path().join(SERVING_CERT_FILE), cert.pem()).expect("write");
    fs::write(dir.path().join(SERVING_KEY_FILE), key.serialize_pem()).expect("write");

    let reloaded = Pki::load_or_create(dir.path(), &[]).expect("reload");
    assert_eq!(reloaded.ca_cert_pem(), pki.ca_cert_pem());
    assert_ne!(reloaded.admin().cert_pem, other.admin().cert_pem);
    assert!(verifies_with(&reloaded.admin().cert_pem, pki.ca_cert_pem()));
    assert_ne!(reloaded.serving().cert_pem, cert.pem());
    with_cert(&reloaded.serving().cert_pem, |c| {
        assert!(lifetime_days(c) >= 364)
    });
}

#[test]
fn a_ca_certificate_without_its_key_is_an_error_not_a_new_ca() {
    let dir = tempfile::tempdir().expect("tempdir");
    Pki::load_or_create(dir.path(), &[]).expect("create");
    fs::remove_file(dir.path().join(CA_KEY_FILE)).expect("remove");
    let err = Pki::load_or_create(dir.path(), &[]).expect_err("must refuse");
    assert!(matches!(err, AuthError::PartialCa { .. }), "{err:?}");
    assert!(dir.path().join(CA_CERT_FILE).exists());
}

#[test]
fn invalid_hosts_are_rejected_with_the_host_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    for bad in ["", "bad host", "a..b", "ex_ample.com"] {
        match Pki::load_or_create(dir.path(), &hosts(&[bad])) {
            Err(AuthError::BadHost { host, .. }) => assert_eq!(host, bad),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let pki = Pki::load_or_create(dir.path(), &hosts(&["[fd00::1]", "*.svc.example"])).expect("ok");
    with_cert(&pki.serving().cert_pem, |c| {
        assert!(cert_hosts(c).contains(&Host::Ip("fd00::1".parse().expect("ip"))));
        assert!(cert_hosts(c).contains(&Host::Dns("*.svc.example".into())));
    });
}

#[test]
fn client_certs_carry_every_group_as_an_organization() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::load_or_create(dir.path(), &[]).expect("create");
    let groups = hosts(&["system:karmada:agents", "dev", "ops"]);
    let issued = pki
        .issue_client_cert("system:karmada:agent:member1", &groups)
        .expect("issue");
    assert!(verifies_with(&issued.cert_pem, pki.ca_cert_pem()));
    with_cert(&issued.cert_pem, |c| {
        assert_eq!(
            strings(c.subject().iter_common_name()),
            ["system:karmada:agent:member1"]
        );
        assert_eq!(strings(c.subject().iter_organization()), groups);
        assert_eq!(c.issuer().to_string(), format!("CN={CA_COMMON_NAME}"));
        assert_eq!(extended_key_usage(c), (false, true));
        let has_aki = c.extensions().iter().any(|e| {
            matches!(
                e.parsed_extension(),
                ParsedExtension::AuthorityKeyIdentifier(_)
            )
        });
        assert!(has_aki, "leaf names its issuer's key");
    });
    let none = pki
        .issue_client_cert("bob", &[])
        .expect("issue without groups");
    with_cert(&none.cert_pem, |c| {
        assert!(c.subject().iter_organization().next().is_none())
    });

    assert!(matches!(
        pki.issue_client_cert("", &[]),
        Err(AuthError::BadSubject { .. })
    ));
    assert!(matches!(
        pki.issue_client_cert("bob", &hosts(&[""])),
        Err(AuthError::BadSubject { .. })
    ));
}

#[test]
fn debug_output_never_contains_private_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::load_or_create(dir.path(), &[]).expect("create");
    let issued = pki.issue_client_cert("alice", &[]).expect("issue");
    for text in [
        format!("{pki:?}"),
        format!("{:?}", pki.admin()),
        format!("{issued:?}"),
    ] {
        assert!(!text.contains("PRIVATE KEY"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}
