use super::*;

fn certificate(common_name: &str, days: i64) -> String {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a key");
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let now = std::time::SystemTime::now();
    let day = std::time::Duration::from_secs(86_400);
    if days >= 0 {
        params.not_before = (now - std::time::Duration::from_secs(60)).into();
        params.not_after = (now + day * days.unsigned_abs() as u32).into();
    } else {
        params.not_before = (now - day * 2 * days.unsigned_abs() as u32).into();
        params.not_after = (now - day * days.unsigned_abs() as u32).into();
    }
    params.self_signed(&key).expect("a certificate").pem()
}

#[test]
fn an_existing_certificate_is_reused_only_for_this_cluster_while_valid() {
    let now = jiff::Timestamp::now();
    let user = "system:karmada:agent:m1";
    let valid = certificate(user, 365);
    assert!(certificate_for(valid.as_bytes(), user, now).is_ok());
    let other = certificate("system:karmada:agent:m2", 365);
    let error = certificate_for(other.as_bytes(), user, now).expect_err("another cluster");
    assert!(error.contains("not \"system:karmada:agent:m1\""), "{error}");
    let expired = certificate(user, -1);
    let error = certificate_for(expired.as_bytes(), user, now).expect_err("expired");
    assert!(error.contains("valid from"), "{error}");
    assert!(certificate_for(b"garbage", user, now).is_err());
}

#[test]
fn the_written_kubeconfig_is_private_and_loads() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("agent/karmada-agent.conf");
    let user = "system:karmada:agent:m1";
    let pem = certificate(user, 30);
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let issued = Issued {
        key_pem: "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n".into(),
        certificate_pem: pem.clone(),
    };
    let text = kubeconfig_text(
        "https://10.0.0.1:6443",
        &b64(&pem),
        "m1",
        &issued.user_fields(),
    );
    write_private(&path, &text).expect("written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path)
            .expect("the file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(path.parent().expect("a dir"))
            .expect("the dir")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("a kubeconfig");
    assert_eq!(
        kubeconfig.current_context.as_deref(),
        Some("m1@karmada-apiserver")
    );
    assert!(existing_certificate(&path, user).is_ok());
    assert!(existing_certificate(&dir.path().join("missing"), user).is_err());
}
