use super::*;

const USER: &str = "system:karmada:agent:m1";

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).expect("a timestamp")
}

fn validity(from: i64, to: i64) -> Validity {
    Validity {
        not_before: at(from),
        not_after: at(to),
    }
}

/// A self-signed certificate for `common_name`, valid over `[from, to]` (seconds from now).
fn certificate(common_name: &str, from: i64, to: i64) -> String {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a key");
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    let now = std::time::SystemTime::now();
    let offset = |s: i64| {
        if s >= 0 {
            now + Duration::from_secs(s.unsigned_abs())
        } else {
            now - Duration::from_secs(s.unsigned_abs())
        }
    };
    params.not_before = offset(from).into();
    params.not_after = offset(to).into();
    params.self_signed(&key).expect("a certificate").pem()
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A kubeconfig shaped like the one bootstrap writes, with `user_fields` for user `m1`.
fn kubeconfig(user_fields: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: karmada-apiserver\n  cluster:\n    server: https://10.0.0.1:6443\n    certificate-authority-data: {ca}\nusers:\n- name: other\n  user:\n    token: abc\n- name: m1\n  user:\n    {user_fields}\ncontexts:\n- name: m1@karmada-apiserver\n  context:\n    cluster: karmada-apiserver\n    user: m1\ncurrent-context: m1@karmada-apiserver\n",
        ca = b64("ca")
    )
}

fn inline(certificate: &str) -> String {
    format!(
        "client-certificate-data: {}\n    client-key-data: {}",
        b64(certificate),
        b64("-----BEGIN PRIVATE KEY-----\nold\n-----END PRIVATE KEY-----\n")
    )
}

#[test]
fn karmadas_default_threshold_renews_a_years_certificate_73_days_before_it_expires() {
    let year = 365 * 86_400;
    let v = validity(0, year);
    let due = v.due_at(0.2);
    assert_eq!(due, at(year - 73 * 86_400));
    assert!(!v.is_due(at(year - 73 * 86_400 - 1), 0.2));
    assert!(v.is_due(due, 0.2), "exactly the threshold remaining is due");
    assert!(v.is_due(at(year - 1), 0.2));
}

#[test]
fn the_remaining_fraction_runs_from_one_to_zero_and_below() {
    let v = validity(0, 1000);
    assert_eq!(v.remaining_fraction(at(0)), 1.0);
    assert_eq!(v.remaining_fraction(at(250)), 0.75);
    assert_eq!(v.remaining_fraction(at(1000)), 0.0);
    assert!(v.remaining_fraction(at(2000)) < 0.0);
    assert!(v.is_due(at(2000), 0.2), "an expired certificate is due");
    // Not yet valid: more than all of it remains, never due.
    assert!(v.remaining_fraction(at(-10)) > 1.0);
    assert!(!v.is_due(at(-10), 0.999));
}

#[test]
fn the_threshold_bounds_behave() {
    let v = validity(0, 1000);
    assert!(!v.is_due(at(999), 0.0), "0 renews only once expired");
    assert!(v.is_due(at(1000), 0.0));
    assert_eq!(v.due_at(0.0), at(1000));
    assert!(v.is_due(at(0), 1.0), "1 renews at every check");
    assert_eq!(v.due_at(1.0), at(0));
    // A certificate without a lifetime is renewed.
    assert!(validity(5, 5).is_due(at(0), 0.2));
    assert!(validity(5, 4).is_due(at(0), 0.2));
}

#[test]
fn a_short_certificate_from_the_signer_counts_its_backdate_in_the_lifetime() {
    // The signer backdates by 5 minutes and gives lifetimes under 8 hours in full: a 600 s
    // request is valid 900 s, two thirds of it ahead when issued. The end-to-end test's
    // threshold 0.65 is therefore due 15 s after issuance.
    let v = validity(-300, 600);
    assert!((v.remaining_fraction(at(0)) - 2.0 / 3.0).abs() < 1e-9);
    assert!(!v.is_due(at(14), 0.65));
    assert!(v.is_due(at(15), 0.65));
}

#[test]
fn a_bootstrapped_kubeconfig_is_planned_by_its_certificates_validity() {
    let text = kubeconfig(&inline(&certificate(USER, -60, 86_400)));
    let now = Timestamp::now();
    match plan(&text, None, USER, now, 0.2) {
        Plan::NotDue { validity, due_at } => {
            assert!(due_at > now && due_at < validity.not_after, "{due_at}");
        }
        other => panic!("not due yet: {other:?}"),
    }
    // Renewed once at most half of it remains.
    let late = kubeconfig(&inline(&certificate(USER, -50_000, 40_000)));
    assert!(matches!(
        plan(&late, None, USER, now, 0.2),
        Plan::NotDue { .. }
    ));
    match plan(&late, None, USER, now, 0.5) {
        Plan::Due(found) => {
            assert_eq!(found.common_name, USER);
            assert_eq!(found.user_index, 1);
        }
        other => panic!("due: {other:?}"),
    }
    // An explicit context is honoured.
    assert!(matches!(
        plan(&late, Some("m1@karmada-apiserver"), USER, now, 0.5),
        Plan::Due(_)
    ));
}

#[test]
fn credentials_it_cannot_rotate_leave_it_idle_with_a_reason() {
    let now = Timestamp::now();
    let idle = |text: &str, context: Option<&str>| match plan(text, context, USER, now, 0.999) {
        Plan::Idle(reason) => reason,
        other => panic!("idle: {other:?}"),
    };
    let files = kubeconfig("client-certificate: agent.crt\n    client-key: agent.key");
    assert!(
        idle(&files, None).contains("has no client-certificate-data for user \"m1\""),
        "{}",
        idle(&files, None)
    );
    let token = kubeconfig("token: abc");
    assert!(idle(&token, None).contains("only a certificate and key held in the kubeconfig"));
    let no_key = kubeconfig(&format!(
        "client-certificate-data: {}",
        b64(&certificate(USER, -60, 600))
    ));
    assert!(idle(&no_key, None).contains("has no client-key-data"));
    let another = kubeconfig(&inline(&certificate("system:karmada:agent:m2", -60, 600)));
    assert!(
        idle(&another, None).contains("not this agent's \"system:karmada:agent:m1\""),
        "{}",
        idle(&another, None)
    );
    let valid = kubeconfig(&inline(&certificate(USER, -60, 600)));
    assert!(idle(&valid, Some("missing")).contains("has no context \"missing\""));
    assert!(idle("a: [", None).contains("is not a kubeconfig"));
    let broken = kubeconfig("client-certificate-data: bm9wZQ==\n    client-key-data: bm9wZQ==");
    assert!(idle(&broken, None).contains("broken certificate"));
}

#[test]
fn a_rewrite_replaces_only_the_users_certificate_and_key() {
    let text = kubeconfig(&inline(&certificate(USER, -60, 600)));
    let Plan::Due(found) = plan(&text, None, USER, Timestamp::now(), 0.999) else {
        panic!("due");
    };
    let renewed = certificate(USER, -60, 86_400);
    let issued = Issued {
        key_pem: "-----BEGIN PRIVATE KEY-----\nnew\n-----END PRIVATE KEY-----\n".into(),
        certificate_pem: renewed.clone(),
    };
    let written = found.rewritten(&issued).expect("rendered");
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("karmada-agent.conf");
    bootstrap::write_private(&path, &written).expect("written");
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).expect("a kubeconfig");
    assert_eq!(
        kubeconfig.current_context.as_deref(),
        Some("m1@karmada-apiserver")
    );
    let cluster = kubeconfig.clusters[0].cluster.as_ref().expect("a cluster");
    assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:6443"));
    let users: Vec<_> = kubeconfig
        .auth_infos
        .iter()
        .map(|a| a.auth_info.as_ref().expect("a user"))
        .collect();
    assert!(users[0].token.is_some(), "the other user is kept");
    assert_eq!(
        users[1].client_certificate_data.as_deref(),
        Some(b64(&renewed).as_str())
    );
    let not_after = bootstrap::existing_certificate(&path, USER).expect("the new certificate");
    assert!(not_after > Timestamp::now() + SignedDuration::from_hours(23));
    assert!(!dir.path().join("karmada-agent.tmp").exists());
}

#[test]
fn the_flags_refuse_values_that_cannot_work() {
    assert_eq!(parse_threshold("0.2"), Ok(0.2));
    assert_eq!(parse_threshold("1"), Ok(1.0));
    assert!(
        parse_threshold("1.5")
            .expect_err("above 1")
            .contains("between 0 and 1")
    );
    assert!(parse_threshold("-0.1").is_err());
    assert!(parse_threshold("NaN").is_err());
    assert!(parse_threshold("a fifth").is_err());
    assert_eq!(parse_interval("5m"), Ok(Duration::from_secs(300)));
    assert!(
        parse_interval("0s")
            .expect_err("zero")
            .contains("above zero")
    );
}
