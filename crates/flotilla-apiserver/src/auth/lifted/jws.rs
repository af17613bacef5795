//! Detached JWS signatures as the bootstrap signer writes them into `cluster-info`.
//!
//! Follows `k8s.io/cluster-bootstrap/token/jws/jws.go` (Kubernetes v1.32):
//! `ComputeDetachedSignature` signs the content with HS256 keyed by the token secret, the token
//! id as `kid` in the protected header (go-jose writes it `{"alg":"HS256","kid":"<id>"}`), and
//! drops the payload from the compact serialization (`<header>..<signature>`);
//! `DetachedTokenIsValid` recomputes the signature and compares the strings.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;

/// `<header>..<signature>` over `content`, keyed by `token_secret`, naming `token_id`.
pub fn detached_signature(content: &str, token_id: &str, token_secret: &str) -> String {
    let header = serde_json::json!({"alg": "HS256", "kid": token_id}).to_string();
    let header = URL_SAFE_NO_PAD.encode(header);
    let payload = URL_SAFE_NO_PAD.encode(content);
    let key = hmac::Key::new(hmac::HMAC_SHA256, token_secret.as_bytes());
    let tag = hmac::sign(&key, format!("{header}.{payload}").as_bytes());
    format!("{header}..{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

/// Whether `signature` is `content`'s detached signature with this token.
pub fn detached_signature_is_valid(
    signature: &str,
    content: &str,
    token_id: &str,
    token_secret: &str,
) -> bool {
    let expected = detached_signature(content, token_id, token_secret);
    super::bootstrap_token::constant_time_eq(expected.as_bytes(), signature.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_the_token_and_the_payload_is_detached() {
        let signature = detached_signature("hello", "abcdef", "0123456789abcdef");
        let (header, rest) = signature.split_once("..").expect("detached form");
        assert_eq!(
            URL_SAFE_NO_PAD.decode(header).expect("base64url"),
            br#"{"alg":"HS256","kid":"abcdef"}"#
        );
        assert_eq!(URL_SAFE_NO_PAD.decode(rest).expect("base64url").len(), 32);
        assert!(detached_signature_is_valid(
            &signature,
            "hello",
            "abcdef",
            "0123456789abcdef"
        ));
        assert!(!detached_signature_is_valid(
            &signature,
            "hellO",
            "abcdef",
            "0123456789abcdef"
        ));
        assert!(!detached_signature_is_valid(
            &signature,
            "hello",
            "abcdef",
            "0123456789abcdee"
        ));
    }

    #[test]
    fn signatures_match_rfc7515s_hs256_construction() {
        // HMAC-SHA256 over `<b64url header>.<b64url payload>`, recomputed independently.
        let signature = detached_signature("{}", "id", "key");
        let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","kid":"id"}"#);
        let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode("{}"));
        let key = hmac::Key::new(hmac::HMAC_SHA256, b"key");
        let tag = URL_SAFE_NO_PAD.encode(hmac::sign(&key, input.as_bytes()).as_ref());
        assert_eq!(signature, format!("{header}..{tag}"));
    }
}
