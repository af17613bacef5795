use super::*;

#[test]
fn signed_tokens_verify_and_tampered_ones_do_not() {
    let key = SigningKey::generate().expect("key");
    let token = key
        .sign(&serde_json::json!({"sub": "alice"}))
        .expect("sign");
    let claims: serde_json::Value = key.verify(&token).expect("valid");
    assert_eq!(claims["sub"], "alice");

    // Another key's signature, a changed payload, a truncated token: all rejected.
    let other = SigningKey::generate().expect("key");
    assert!(other.verify::<serde_json::Value>(&token).is_none());
    let parts: Vec<&str> = token.split('.').collect();
    let forged_claims = URL_SAFE_NO_PAD.encode(r#"{"sub":"system:admin"}"#);
    let forged = format!("{}.{}.{}", parts[0], forged_claims, parts[2]);
    assert!(key.verify::<serde_json::Value>(&forged).is_none());
    assert!(
        key.verify::<serde_json::Value>(&parts[..2].join("."))
            .is_none()
    );
    // "alg": "none" is never accepted.
    let none_header = URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
    let unsigned = format!("{none_header}.{}.", parts[1]);
    assert!(key.verify::<serde_json::Value>(&unsigned).is_none());
}

#[test]
fn the_key_file_is_created_private_and_reused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let first = SigningKey::load_or_create(dir.path()).expect("create");
    let token = first.sign(&serde_json::json!({"sub": "x"})).expect("sign");
    let mode = std::fs::metadata(dir.path().join(SA_KEY_FILE))
        .expect("key file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let again = SigningKey::load_or_create(dir.path()).expect("load");
    assert_eq!(first.kid(), again.kid());
    assert!(again.verify::<serde_json::Value>(&token).is_some());
}

#[test]
fn a_corrupt_key_file_is_an_error_not_a_new_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(SA_KEY_FILE), "not a key").expect("write");
    assert!(SigningKey::load_or_create(dir.path()).is_err());
}
