use std::path::Path;

use rcgen::{CertificateParams, KeyPair};

use super::*;

fn tokens() -> TokenFile {
    TokenFile::parse("s3cret,alice,uid-1,\"dev,ops\"\n", Path::new("tokens.csv")).expect("parse")
}

fn admin_from_cert() -> UserInfo {
    UserInfo {
        name: "flotilla-admin".into(),
        groups: vec!["system:masters".into()],
        ..UserInfo::default()
    }
}

#[test]
fn certificate_user_gets_the_authenticated_group_once() {
    let authn = Authenticator::new();
    let user = authn
        .authenticate(Some(&admin_from_cert()), None)
        .expect("ok")
        .expect("user");
    assert_eq!(user.groups, ["system:masters", AUTHENTICATED_GROUP]);
    let mut already = admin_from_cert();
    already.groups.push(AUTHENTICATED_GROUP.into());
    let user = authn
        .authenticate(Some(&already), None)
        .expect("ok")
        .expect("user");
    assert_eq!(user.groups, ["system:masters", AUTHENTICATED_GROUP]);
}

#[test]
fn bearer_token_resolves_through_the_token_file() {
    let authn = Authenticator::new().with_tokens(tokens());
    for header in [
        "Bearer s3cret",
        "bearer s3cret",
        "  BEARER s3cret  ",
        "Bearer s3cret extra",
    ] {
        let user = authn
            .authenticate(None, Some(header.as_bytes()))
            .expect(header)
            .expect(header);
        assert_eq!(user.name, "alice");
        assert_eq!(user.uid.as_deref(), Some("uid-1"));
        assert_eq!(user.groups, ["dev", "ops", AUTHENTICATED_GROUP]);
    }
}

#[test]
fn bad_or_unknown_credentials_fail_and_no_credentials_is_anonymous() {
    let authn = Authenticator::new().with_tokens(tokens());
    assert_eq!(authn.authenticate(None, None), Ok(None));
    assert_eq!(
        authn.authenticate(None, Some(b"Bearer nope")),
        Err(AuthnError::InvalidToken)
    );
    for header in [
        &b"Basic YTpi"[..],
        b"Bearer",
        b"Bearer  s3cret",
        b"",
        b"\xff\xfe",
    ] {
        assert_eq!(
            authn.authenticate(None, Some(header)),
            Err(AuthnError::MalformedHeader)
        );
    }
    // Without a token file every token is invalid.
    assert_eq!(
        Authenticator::new().authenticate(None, Some(b"Bearer s3cret")),
        Err(AuthnError::InvalidToken)
    );
}

#[test]
fn certificate_identity_wins_over_a_bad_token() {
    let authn = Authenticator::new().with_tokens(tokens());
    let user = authn
        .authenticate(Some(&admin_from_cert()), Some(b"Bearer nope"))
        .expect("certificate wins")
        .expect("user");
    assert_eq!(user.name, "flotilla-admin");
}

#[test]
fn certificate_without_common_name_names_no_user() {
    let key = KeyPair::generate().expect("key");
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    let cert = params.self_signed(&key).expect("cert");
    assert_eq!(user_from_certificate(cert.der()), None);
    assert_eq!(
        user_from_certificate(&CertificateDer::from(vec![1, 2, 3])),
        None
    );

    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "carol");
    let cert = params.self_signed(&key).expect("cert");
    let user = user_from_certificate(cert.der()).expect("user");
    assert_eq!(
        (user.name.as_str(), user.groups.as_slice()),
        ("carol", &["system:masters".to_string()][..])
    );
}

#[test]
fn token_file_loads_from_disk_and_debug_hides_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tokens.csv");
    std::fs::write(&path, "s3cret,alice,uid-1\n").expect("write");
    let authn = Authenticator::new().with_token_file(&path).expect("load");
    assert!(
        authn
            .authenticate(None, Some(b"Bearer s3cret"))
            .expect("ok")
            .is_some()
    );
    assert!(!format!("{authn:?}").contains("s3cret"));
    let missing = Authenticator::new().with_token_file(&dir.path().join("absent.csv"));
    assert!(matches!(missing, Err(AuthError::Read { .. })));
}
