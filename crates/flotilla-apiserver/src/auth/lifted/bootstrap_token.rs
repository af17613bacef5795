//! Bootstrap tokens: their format, the Secrets that hold them, and what such a Secret says.
//!
//! Follows `k8s.io/cluster-bootstrap` (Kubernetes v1.32): `token/api/types.go` (names, keys and
//! the Secret type), `token/util/helpers.go` (`ParseToken`, `IsValidBootstrapTokenID`,
//! `ValidateBootstrapGroupName`), `secret/utils.go` (`GetData`, `HasExpired`, `GetExpiration`,
//! `GetGroups`, `ParseSecretName`); and `plugin/pkg/auth/authenticator/token/bootstrap/
//! bootstrap.go` (`AuthenticateToken`) for which Secrets authenticate a token.
//!
//! Kubernetes validates none of this when such a Secret is written (core Secret validation has
//! no case for the type): a malformed Secret is simply never accepted by the authenticator, the
//! signer or the cleaner. So here.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// The Secret type of bootstrap tokens.
pub const SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// Bootstrap token Secrets live in this namespace.
pub const NAMESPACE: &str = "kube-system";
/// A token's Secret is named this prefix followed by the token id.
pub const SECRET_PREFIX: &str = "bootstrap-token-";
/// The user name prefix of an authenticated bootstrap token (`system:bootstrap:<id>`).
pub const USER_PREFIX: &str = "system:bootstrap:";
/// The group every bootstrap token user is in.
pub const DEFAULT_GROUP: &str = "system:bootstrappers";

pub const KEY_TOKEN_ID: &str = "token-id";
pub const KEY_TOKEN_SECRET: &str = "token-secret";
pub const KEY_EXPIRATION: &str = "expiration";
pub const KEY_EXTRA_GROUPS: &str = "auth-extra-groups";
pub const KEY_USAGE_AUTHENTICATION: &str = "usage-bootstrap-authentication";
pub const KEY_USAGE_SIGNING: &str = "usage-bootstrap-signing";

/// `(id, secret)` of a token `<6 [a-z0-9]>.<16 [a-z0-9]>`, or `None` for any other string.
pub fn parse_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    (is_valid_id(id) && is_lower_alnum(secret, 16)).then_some((id, secret))
}

/// Whether `id` is a token id: six characters of `[a-z0-9]`.
pub fn is_valid_id(id: &str) -> bool {
    is_lower_alnum(id, 6)
}

fn is_lower_alnum(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The token id a Secret name stands for (`bootstrap-token-<id>`), if it is one.
pub fn id_from_secret_name(name: &str) -> Option<&str> {
    name.strip_prefix(SECRET_PREFIX)
        .filter(|id| is_valid_id(id))
}

/// One `data` entry of a Secret, decoded (`GetData`): `""` when absent or not base64 text.
pub fn data(secret: &Value, key: &str) -> String {
    secret["data"][key]
        .as_str()
        .and_then(|b64| STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default()
}

/// When a token Secret expires, as `GetExpiration` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// No `expiration`: valid until deleted.
    Never,
    /// Valid until this instant (exclusive).
    At(jiff::Timestamp),
    /// Expired, or an `expiration` that is not RFC 3339 (treated as expired).
    Expired,
}

/// The expiry of a token Secret at `now`.
pub fn expiry(secret: &Value, now: jiff::Timestamp) -> Expiry {
    let text = data(secret, KEY_EXPIRATION);
    if text.is_empty() {
        return Expiry::Never;
    }
    match text.parse::<jiff::Timestamp>() {
        Ok(at) if at > now => Expiry::At(at),
        Ok(_) => Expiry::Expired,
        Err(_) => {
            tracing::debug!(expiration = %text, "unparsable bootstrap token expiration, treated as expired");
            Expiry::Expired
        }
    }
}

/// The groups of a token Secret (`GetGroups`): `system:bootstrappers` and every extra group,
/// deduplicated and sorted; an error naming the first extra group that is not
/// `system:bootstrappers:<[a-z0-9:-]…>` (the whole token is then refused).
pub fn groups(secret: &Value) -> Result<Vec<String>, String> {
    let mut groups = std::collections::BTreeSet::from([DEFAULT_GROUP.to_owned()]);
    let extra = data(secret, KEY_EXTRA_GROUPS);
    if !extra.is_empty() {
        for group in extra.split(',') {
            validate_group_name(group)?;
            groups.insert(group.to_owned());
        }
    }
    Ok(groups.into_iter().collect())
}

/// `ValidateBootstrapGroupName`: `\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\z`.
pub fn validate_group_name(name: &str) -> Result<(), String> {
    const PREFIX: &str = "system:bootstrappers:";
    let valid = name.strip_prefix(PREFIX).is_some_and(|rest| {
        let bytes = rest.as_bytes();
        let body_ok =
            |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b':' || *b == b'-';
        match bytes.split_last() {
            Some((last, body)) => {
                (last.is_ascii_lowercase() || last.is_ascii_digit())
                    && body.len() <= 255
                    && body.iter().all(body_ok)
            }
            None => false,
        }
    });
    if valid {
        Ok(())
    } else {
        Err(format!(
            "bootstrap group {name:?} is invalid (must match \\Asystem:bootstrappers:[a-z0-9:-]{{0,255}}[a-z0-9]\\z)"
        ))
    }
}

/// Why a Secret does not authenticate `(id, secret)`, or its groups when it does (the checks
/// of `AuthenticateToken`, in its order). The token secret is compared in constant time.
pub fn authenticates(
    object: &Value,
    id: &str,
    token_secret: &str,
    now: jiff::Timestamp,
) -> Result<Vec<String>, &'static str> {
    if object["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        return Err("is deleted and awaiting removal");
    }
    if object["type"].as_str() != Some(SECRET_TYPE) || !object["data"].is_object() {
        return Err("has invalid type");
    }
    let stored = data(object, KEY_TOKEN_SECRET);
    if !constant_time_eq(stored.as_bytes(), token_secret.as_bytes()) {
        return Err("has invalid value for key token-secret");
    }
    if data(object, KEY_TOKEN_ID) != id {
        return Err("has invalid value for key token-id");
    }
    if expiry(object, now) == Expiry::Expired {
        return Err("has expired");
    }
    if data(object, KEY_USAGE_AUTHENTICATION) != "true" {
        return Err("not marked usage-bootstrap-authentication=true");
    }
    groups(object).map_err(|_| "has invalid value for key auth-extra-groups")
}

/// Whether a Secret is a token the bootstrap signer signs with (`validateSecretForSigning`):
/// the type, a name matching its `token-id`, a `token-secret`, `usage-bootstrap-signing: "true"`
/// and not expired. Returns `(id, secret)`.
pub fn signing_token(object: &Value, now: jiff::Timestamp) -> Option<(String, String)> {
    if object["type"].as_str() != Some(SECRET_TYPE) {
        return None;
    }
    let name_id = id_from_secret_name(object["metadata"]["name"].as_str().unwrap_or(""))?;
    let id = data(object, KEY_TOKEN_ID);
    let secret = data(object, KEY_TOKEN_SECRET);
    if id != name_id || secret.is_empty() || data(object, KEY_USAGE_SIGNING) != "true" {
        return None;
    }
    if expiry(object, now) == Expiry::Expired {
        return None;
    }
    Some((id, secret))
}

/// `crypto/subtle.ConstantTimeCompare`: lengths may leak, contents do not.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests;
