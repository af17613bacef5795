use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::*;

fn now() -> jiff::Timestamp {
    "2025-01-01T00:00:00Z".parse().expect("a timestamp")
}

fn secret(entries: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), STANDARD.encode(v).into()))
        .collect();
    json!({
        "metadata": {"name": "bootstrap-token-abcdef", "namespace": "kube-system"},
        "type": SECRET_TYPE,
        "data": data,
    })
}

fn valid() -> Vec<(&'static str, &'static str)> {
    vec![
        ("token-id", "abcdef"),
        ("token-secret", "0123456789abcdef"),
        ("usage-bootstrap-authentication", "true"),
    ]
}

#[test]
fn tokens_are_six_dot_sixteen_lowercase_alphanumerics() {
    assert_eq!(
        parse_token("abcdef.0123456789abcdef"),
        Some(("abcdef", "0123456789abcdef"))
    );
    for bad in [
        "ABCDEF.0123456789abcdef",
        "abcde.0123456789abcdef",
        "abcdef.0123456789abcde",
        "abcdef0123456789abcdef",
        "abcdef.0123456789abcdef.",
        "abcdef:0123456789abcdef",
        "abcdef.0123456789abcdeF",
        "",
    ] {
        assert_eq!(parse_token(bad), None, "{bad}");
    }
}

#[test]
fn a_valid_secret_authenticates_with_the_default_group() {
    let s = secret(&valid());
    assert_eq!(
        authenticates(&s, "abcdef", "0123456789abcdef", now()),
        Ok(vec!["system:bootstrappers".to_owned()])
    );
}

#[test]
fn a_wrong_secret_id_usage_or_type_does_not_authenticate() {
    let s = secret(&valid());
    assert!(authenticates(&s, "abcdef", "0123456789abcdee", now()).is_err());
    assert!(authenticates(&s, "abcdeg", "0123456789abcdef", now()).is_err());
    let mut no_usage = valid();
    no_usage.pop();
    assert!(authenticates(&secret(&no_usage), "abcdef", "0123456789abcdef", now()).is_err());
    let mut opaque = secret(&valid());
    opaque["type"] = "Opaque".into();
    assert!(authenticates(&opaque, "abcdef", "0123456789abcdef", now()).is_err());
    let mut deleting = secret(&valid());
    deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z".into();
    assert!(authenticates(&deleting, "abcdef", "0123456789abcdef", now()).is_err());
}

#[test]
fn expiration_is_rfc3339_and_unparsable_means_expired() {
    let with = |exp: &str| {
        let mut entries = valid();
        entries.push(("expiration", exp));
        secret(&entries)
    };
    assert!(matches!(
        expiry(&with("2025-01-01T00:00:01Z"), now()),
        Expiry::At(_)
    ));
    assert_eq!(
        expiry(&with("2025-01-01T00:00:00Z"), now()),
        Expiry::Expired
    );
    assert_eq!(expiry(&with("tomorrow"), now()), Expiry::Expired);
    assert_eq!(expiry(&secret(&valid()), now()), Expiry::Never);
    assert!(
        authenticates(
            &with("2024-12-31T23:59:59Z"),
            "abcdef",
            "0123456789abcdef",
            now()
        )
        .is_err()
    );
    assert!(
        authenticates(
            &with("2025-01-01T01:00:00+01:00"),
            "abcdef",
            "0123456789abcdef",
            now()
        )
        .is_err()
    );
}

#[test]
fn extra_groups_must_all_be_bootstrapper_groups_or_the_token_is_refused() {
    let mut entries = valid();
    entries.push((
        "auth-extra-groups",
        "system:bootstrappers:karmada:default-cluster-token,system:bootstrappers:a",
    ));
    assert_eq!(
        authenticates(&secret(&entries), "abcdef", "0123456789abcdef", now()),
        Ok(vec![
            "system:bootstrappers".to_owned(),
            "system:bootstrappers:a".to_owned(),
            "system:bootstrappers:karmada:default-cluster-token".to_owned(),
        ])
    );
    for bad in [
        "system:masters",
        "system:bootstrappers:",
        "system:bootstrappers:a-",
        "system:bootstrappers:A",
    ] {
        let mut entries = valid();
        entries.push(("auth-extra-groups", bad));
        assert!(
            authenticates(&secret(&entries), "abcdef", "0123456789abcdef", now()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn signing_tokens_need_the_signing_usage_and_a_matching_name() {
    let mut entries = valid();
    entries.push(("usage-bootstrap-signing", "true"));
    assert_eq!(
        signing_token(&secret(&entries), now()),
        Some(("abcdef".to_owned(), "0123456789abcdef".to_owned()))
    );
    assert_eq!(signing_token(&secret(&valid()), now()), None);
    let mut renamed = secret(&entries);
    renamed["metadata"]["name"] = "bootstrap-token-zzzzzz".into();
    assert_eq!(signing_token(&renamed, now()), None);
}

#[test]
fn constant_time_comparison_compares_everything() {
    assert!(constant_time_eq(b"abc", b"abc"));
    assert!(!constant_time_eq(b"abc", b"abd"));
    assert!(!constant_time_eq(b"abc", b"abcd"));
}
