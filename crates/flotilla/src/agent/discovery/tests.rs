use super::*;

const TOKEN: &str = "abcdef.0123456789abcdef";

fn ca() -> (String, Vec<u8>, String) {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("a CA");
    // The pin computed independently: SHA-256 of the key's SubjectPublicKeyInfo.
    let (_, spki) = x509_parser::pem::parse_x509_pem(key.public_key_pem().as_bytes())
        .expect("a PUBLIC KEY block");
    assert_eq!(spki.label, "PUBLIC KEY");
    let pin = hex(ring::digest::digest(&ring::digest::SHA256, &spki.contents).as_ref());
    (cert.pem(), cert.der().to_vec(), format!("sha256:{pin}"))
}

fn signed(kubeconfig: &str, token: &str) -> BTreeMap<String, String> {
    let token = Token::parse(token).expect("a token");
    BTreeMap::from([
        ("kubeconfig".to_owned(), kubeconfig.to_owned()),
        (
            format!("jws-kubeconfig-{}", token.id),
            jws::detached_signature(kubeconfig, &token.id, &token.secret),
        ),
    ])
}

#[test]
fn tokens_parse_and_never_print_their_secret() {
    let token = Token::parse(TOKEN).expect("valid");
    assert_eq!(
        (token.id.as_str(), token.secret.as_str()),
        ("abcdef", "0123456789abcdef")
    );
    assert_eq!(token.bearer(), TOKEN);
    assert!(!format!("{token:?}").contains("0123456789abcdef"));
    for bad in [
        "",
        "abcdef",
        "abcdef.0123456789abcde",
        "ABCDEF.0123456789abcdef",
        "abcdef:0123456789abcdef",
        "abcdefg.0123456789abcdef",
        " abcdef.0123456789abcdef",
    ] {
        let error = Token::parse(bad).expect_err(bad);
        assert_eq!(error, DiscoveryError::TokenFormat);
        assert!(error.to_string().starts_with("--token: "), "{error}");
    }
}

#[test]
fn hashes_must_be_sha256_hex_and_name_the_flag() {
    let hex64 = "a".repeat(64);
    let pins = Pins::parse(&[format!("SHA256:{}", hex64.to_uppercase())]).expect("valid");
    assert_eq!(pins, Pins(BTreeSet::from([hex64.clone()])));
    for (bad, says) in [
        (hex64.clone(), "expected \"format:hex-value\""),
        (format!("sha256:{hex64}:x"), "expected \"format:hex-value\""),
        (format!("md5:{hex64}"), "unknown hash format \"md5\""),
        ("sha256:abcd".to_owned(), "found 4 digits"),
        (format!("sha256:{}", "g".repeat(64)), "not hexadecimal"),
    ] {
        let error = Pins::parse(std::slice::from_ref(&bad))
            .expect_err(&bad)
            .to_string();
        assert!(
            error.starts_with("--discovery-token-ca-cert-hash: "),
            "{error}"
        );
        assert!(error.contains(says), "{bad}: {error}");
    }
    assert!(Pins::parse(&[]).expect("none").is_empty());
}

#[test]
fn the_pin_is_the_sha256_of_the_subject_public_key_info() {
    let (pem, der, pin) = ca();
    assert_eq!(spki_hash(&der).expect("a certificate"), pin);
    assert_eq!(
        pem_certificates(pem.as_bytes()).expect("PEM"),
        vec![der.clone()]
    );
    assert!(spki_hash(b"not DER").is_err());
    assert!(pem_certificates(b"no PEM here").is_err());
    let pins = Pins::parse(&[pin]).expect("valid");
    assert!(pins.check_any(&[der]).is_ok());
}

#[test]
fn bootstrap_servers_are_host_port_or_https_urls() {
    assert_eq!(
        server_url("10.0.0.1:6443").as_deref(),
        Ok("https://10.0.0.1:6443")
    );
    assert_eq!(
        server_url("https://cp.example:6443/").as_deref(),
        Ok("https://cp.example:6443")
    );
    assert_eq!(
        server_url("[::1]:6443").as_deref(),
        Ok("https://[::1]:6443")
    );
    for bad in [
        "",
        "http://cp:6443",
        "cp:6443/api",
        "https://",
        "user@cp:6443",
    ] {
        let error = server_url(bad).expect_err(bad).to_string();
        assert!(error.starts_with("--bootstrap-server "), "{error}");
    }
}

#[test]
fn cluster_info_is_trusted_only_with_the_tokens_signature_and_a_pinned_ca() {
    let (pem, der, pin) = ca();
    let kubeconfig = crate::registration::cluster_info_kubeconfig("https://10.0.0.1:6443", &pem);
    let token = Token::parse(TOKEN).expect("a token");
    let pins = Pins::parse(&[pin]).expect("a pin");

    let info = verify_cluster_info(&signed(&kubeconfig, TOKEN), &token, &pins).expect("trusted");
    assert_eq!(info.server, "https://10.0.0.1:6443");
    assert_eq!(info.ca_pem, pem);
    assert_eq!(info.ca_certificates, vec![der]);
    assert_eq!(info.kubeconfig, kubeconfig);

    // Unsafe skip: no pins, the signature still has to verify.
    assert!(verify_cluster_info(&signed(&kubeconfig, TOKEN), &token, &Pins::default()).is_ok());

    let other_pin = Pins::parse(&[format!("sha256:{}", "0".repeat(64))]).expect("a pin");
    let error = verify_cluster_info(&signed(&kubeconfig, TOKEN), &token, &other_pin)
        .expect_err("another CA");
    assert!(matches!(error, DiscoveryError::Unpinned { .. }));
    assert!(error.to_string().contains("--discovery-token-ca-cert-hash"));

    let mut tampered = signed(&kubeconfig, TOKEN);
    tampered.insert(
        "kubeconfig".into(),
        kubeconfig.replace("10.0.0.1", "10.6.6.6"),
    );
    assert_eq!(
        verify_cluster_info(&tampered, &token, &pins),
        Err(DiscoveryError::BadSignature)
    );

    let other_secret = signed(&kubeconfig, "abcdef.0123456789abcdee");
    assert_eq!(
        verify_cluster_info(&other_secret, &token, &pins),
        Err(DiscoveryError::BadSignature)
    );

    let unsigned = signed(&kubeconfig, "zzzzzz.0123456789abcdef");
    assert_eq!(
        verify_cluster_info(&unsigned, &token, &pins),
        Err(DiscoveryError::NoSignature {
            id: "abcdef".into()
        })
    );
    assert_eq!(
        verify_cluster_info(&BTreeMap::new(), &token, &pins),
        Err(DiscoveryError::NoKubeconfig)
    );
}

#[test]
fn cluster_info_must_hold_one_cluster_with_a_ca() {
    let (pem, _, _) = ca();
    let token = Token::parse(TOKEN).expect("a token");
    let two = crate::registration::cluster_info_kubeconfig("https://a:1", &pem).replace(
        "clusters:\n",
        "clusters:\n- cluster: {server: 'https://b:1'}\n  name: b\n",
    );
    let error = verify_cluster_info(&signed(&two, TOKEN), &token, &Pins::default())
        .expect_err("two clusters");
    assert!(
        error.to_string().contains("single cluster, found 2"),
        "{error}"
    );
    let no_ca =
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: 'https://a:1'}\n  name: ''\n";
    let error =
        verify_cluster_info(&signed(no_ca, TOKEN), &token, &Pins::default()).expect_err("no CA");
    assert!(
        error.to_string().contains("certificate-authority-data"),
        "{error}"
    );
}
