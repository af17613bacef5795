//! Service-account tokens: issuing them (legacy Secret tokens for the tokens controller, bound
//! tokens for TokenRequest) and authenticating them.
//!
//! Both kinds are ES256 JWTs ([`super::jwt`]) with Kubernetes' claims, so a token verifies
//! without a store read. Revocation is a watch-cache lookup: a legacy token is valid while its
//! Secret still holds it and its ServiceAccount (same uid) exists; a bound token while it has not
//! expired and its ServiceAccount (and bound Secret or Pod, same uid) exists. Follows
//! `pkg/serviceaccount/{legacy,claims,jwt}.go` (Kubernetes v1.32) in behaviour.
//!
//! A token that verified is remembered (by its SHA-256) with the objects it was checked
//! against and their revisions: the next request with it skips the signature and the claims
//! when none of them changed. kube-apiserver caches a token's success for 10 s instead
//! (`TokenSuccessCacheTTL`), so a revoked token works there for up to 10 s; here revocation
//! is as immediate as without the cache. A member cluster's API server sees the control
//! plane's one token on every request (it was ~4 % of a simulated member's CPU).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AuthError;
use super::authn::UserInfo;
use super::jwt::SigningKey;
use super::lifted::rbac::service_account_username;
use crate::cache::WatchCache;
use crate::registry::Clock;
use flotilla_store::{Revision, Store};

/// How long authentication waits for the watch cache to reach the store's revision.
const CATCH_UP_WAIT: Duration = Duration::from_millis(500);

/// Issuer of legacy (Secret) tokens, fixed by Kubernetes.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// Issuer (and default audience) of bound tokens: kube-apiserver's usual
/// `--service-account-issuer`.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// Verified tokens remembered at most; the memory is forgotten at once when it is full.
const VERIFIED_CAPACITY: usize = 1024;

/// Group of every service account.
pub const SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";
/// Secret type whose token the tokens controller fills.
pub const TOKEN_SECRET_TYPE: &str = "kubernetes.io/service-account-token";
/// Annotation naming the ServiceAccount of a token Secret.
pub const SA_NAME_ANNOTATION: &str = "kubernetes.io/service-account.name";
/// Annotation with the ServiceAccount's uid, set by the tokens controller.
pub const SA_UID_ANNOTATION: &str = "kubernetes.io/service-account.uid";
/// The `user.extra` key for a bound token's id.
const CREDENTIAL_ID_EXTRA: &str = "authentication.kubernetes.io/credential-id";

/// Claims of both token kinds, as Kubernetes writes them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aud: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    #[serde(
        rename = "kubernetes.io",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kubernetes: Option<BoundClaims>,
    #[serde(
        rename = "kubernetes.io/serviceaccount/namespace",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub legacy_namespace: Option<String>,
    #[serde(
        rename = "kubernetes.io/serviceaccount/secret.name",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub legacy_secret_name: Option<String>,
    #[serde(
        rename = "kubernetes.io/serviceaccount/service-account.name",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub legacy_sa_name: Option<String>,
    #[serde(
        rename = "kubernetes.io/serviceaccount/service-account.uid",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub legacy_sa_uid: Option<String>,
}

/// The `kubernetes.io` claim of a bound token.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BoundClaims {
    pub namespace: String,
    pub serviceaccount: ObjectClaim,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ObjectClaim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ObjectClaim>,
}

/// A name and uid.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ObjectClaim {
    pub name: String,
    pub uid: String,
}

/// What a bound token is bound to besides its ServiceAccount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundObject {
    Secret(ObjectClaim),
    Pod(ObjectClaim),
}

/// Issues and checks service-account tokens. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct ServiceAccountTokens {
    key: Arc<SigningKey>,
    issuer: String,
    store: Arc<dyn Store>,
    cache: Arc<WatchCache>,
    clock: Arc<dyn Clock>,
    /// Tokens that verified, by SHA-256 (see the module's documentation).
    verified: parking_lot::Mutex<HashMap<[u8; 32], Verified>>,
}

/// A token that verified: who it is, what it was checked against, and when it stops being
/// valid by its claims.
#[derive(Debug)]
struct Verified {
    user: UserInfo,
    /// The watch-cache keys of the objects checked, with the revisions they had.
    checked: Vec<(String, Revision)>,
    /// Unix seconds: valid from `not_before`, until before `expires` (bound tokens).
    not_before: Option<i64>,
    expires: Option<i64>,
}

impl ServiceAccountTokens {
    pub fn new(
        key: Arc<SigningKey>,
        store: Arc<dyn Store>,
        cache: Arc<WatchCache>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        ServiceAccountTokens {
            key,
            issuer: DEFAULT_ISSUER.to_owned(),
            store,
            cache,
            clock,
            verified: parking_lot::Mutex::new(HashMap::new()),
        }
    }

    /// Whether `token` carries this server's signature (valid or not in other respects).
    pub fn signed_here(&self, token: &str) -> bool {
        self.key.verify::<Claims>(token).is_some()
    }

    /// Waits until the watch cache holds every write the store has acknowledged; false if the
    /// store cannot say or the cache does not get there in time.
    pub async fn catch_up(&self) -> bool {
        match self.store.status().await {
            Ok(status) => self.cache.wait_for(status.revision, CATCH_UP_WAIT).await,
            Err(_) => false,
        }
    }

    /// The issuer of bound tokens, also the default audience.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The current time in Unix seconds, from the injected clock.
    pub fn now(&self) -> i64 {
        self.clock.now().as_second()
    }

    /// A legacy token for the token Secret `secret` of ServiceAccount `sa` (name, uid).
    pub fn issue_legacy(
        &self,
        namespace: &str,
        sa: &ObjectClaim,
        secret: &str,
    ) -> Result<String, AuthError> {
        self.key.sign(&Claims {
            iss: LEGACY_ISSUER.to_owned(),
            sub: service_account_username(namespace, &sa.name),
            legacy_namespace: Some(namespace.to_owned()),
            legacy_secret_name: Some(secret.to_owned()),
            legacy_sa_name: Some(sa.name.clone()),
            legacy_sa_uid: Some(sa.uid.clone()),
            ..Claims::default()
        })
    }

    /// A bound token valid for `seconds` from now; returns it with its expiry (Unix seconds).
    pub fn issue_bound(
        &self,
        namespace: &str,
        sa: &ObjectClaim,
        audiences: Vec<String>,
        seconds: i64,
        bound: Option<BoundObject>,
    ) -> Result<(String, i64), AuthError> {
        let now = self.now();
        let exp = now + seconds;
        let (secret, pod) = match bound {
            Some(BoundObject::Secret(s)) => (Some(s), None),
            Some(BoundObject::Pod(p)) => (None, Some(p)),
            None => (None, None),
        };
        let token = self.key.sign(&Claims {
            iss: self.issuer.clone(),
            sub: service_account_username(namespace, &sa.name),
            aud: audiences,
            exp: Some(exp),
            iat: Some(now),
            nbf: Some(now),
            jti: Some(uuid::Uuid::new_v4().to_string()),
            kubernetes: Some(BoundClaims {
                namespace: namespace.to_owned(),
                serviceaccount: sa.clone(),
                secret,
                pod,
            }),
            ..Claims::default()
        })?;
        Ok((token, exp))
    }

    /// The service account `token` stands for, or `None` when it is not a valid, current token
    /// of this server.
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        let digest = token_digest(token);
        if let Some(user) = self.remembered(&digest) {
            return Some(user);
        }
        let mut checked = Vec::new();
        let claims: Claims = self.key.verify(token)?;
        let user = if claims.iss == LEGACY_ISSUER {
            self.check_legacy(token, &claims, &mut checked)
        } else if claims.iss == self.issuer {
            self.check_bound(&claims, &mut checked)
        } else {
            None
        }?;
        let mut verified = self.verified.lock();
        if verified.len() >= VERIFIED_CAPACITY {
            verified.clear();
        }
        verified.insert(
            digest,
            Verified {
                user: user.clone(),
                checked,
                not_before: claims.nbf,
                expires: claims.exp,
            },
        );
        Some(user)
    }

    /// The user of a token verified before, when its claims still hold at this time and every
    /// object it was checked against is at the revision it had then.
    fn remembered(&self, digest: &[u8; 32]) -> Option<UserInfo> {
        let now = self.now();
        let mut verified = self.verified.lock();
        let entry = verified.get(digest)?;
        let current = entry.expires.is_none_or(|exp| now < exp)
            && entry.not_before.is_none_or(|nbf| now >= nbf)
            && entry.checked.iter().all(|(key, revision)| {
                self.cache
                    .get(key.as_bytes())
                    .is_some_and(|object| object.revision == *revision)
            });
        if current {
            Some(entry.user.clone())
        } else {
            verified.remove(digest);
            None
        }
    }

    fn check_legacy(
        &self,
        token: &str,
        claims: &Claims,
        checked: &mut Vec<(String, Revision)>,
    ) -> Option<UserInfo> {
        let namespace = claims.legacy_namespace.as_deref()?;
        let secret_name = claims.legacy_secret_name.as_deref()?;
        let sa_name = claims.legacy_sa_name.as_deref()?;
        let sa_uid = claims.legacy_sa_uid.as_deref()?;
        let secret = self.live_object("secrets", namespace, secret_name, checked)?;
        let stored = secret["data"]["token"]
            .as_str()
            .and_then(|b64| STANDARD.decode(b64).ok())?;
        if stored != token.as_bytes() {
            tracing::debug!(namespace, secret_name, "token no longer matches its Secret");
            return None;
        }
        self.live_service_account(namespace, sa_name, sa_uid, checked)?;
        Some(user(namespace, sa_name, sa_uid, BTreeMap::new()))
    }

    fn check_bound(
        &self,
        claims: &Claims,
        checked: &mut Vec<(String, Revision)>,
    ) -> Option<UserInfo> {
        let now = self.now();
        if claims.exp.is_none_or(|exp| now >= exp) || claims.nbf.is_some_and(|nbf| now < nbf) {
            return None;
        }
        if !claims.aud.contains(&self.issuer) {
            return None;
        }
        let bound = claims.kubernetes.as_ref()?;
        let sa = &bound.serviceaccount;
        self.live_service_account(&bound.namespace, &sa.name, &sa.uid, checked)?;
        for (plural, object) in [("secrets", &bound.secret), ("pods", &bound.pod)] {
            if let Some(object) = object {
                let live = self.live_object(plural, &bound.namespace, &object.name, checked)?;
                if live["metadata"]["uid"].as_str() != Some(object.uid.as_str()) {
                    return None;
                }
            }
        }
        let mut extra = BTreeMap::new();
        if let Some(jti) = &claims.jti {
            extra.insert(CREDENTIAL_ID_EXTRA.to_owned(), vec![format!("JTI={jti}")]);
        }
        if let Some(pod) = &bound.pod {
            extra.insert(
                "authentication.kubernetes.io/pod-name".to_owned(),
                vec![pod.name.clone()],
            );
            extra.insert(
                "authentication.kubernetes.io/pod-uid".to_owned(),
                vec![pod.uid.clone()],
            );
        }
        Some(user(&bound.namespace, &sa.name, &sa.uid, extra))
    }

    fn live_service_account(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        checked: &mut Vec<(String, Revision)>,
    ) -> Option<Value> {
        let sa = self.live_object("serviceaccounts", namespace, name, checked)?;
        if sa["metadata"]["uid"].as_str() != Some(uid) {
            tracing::debug!(
                namespace,
                name,
                "service account was recreated since the token was issued"
            );
            return None;
        }
        Some(sa)
    }

    /// A core/v1 object from the watch cache, unless it is absent or being deleted; its key
    /// and revision are added to `checked`.
    fn live_object(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
        checked: &mut Vec<(String, Revision)>,
    ) -> Option<Value> {
        let key = format!("/registry/core/{plural}/{namespace}/{name}");
        let cached = self.cache.get(key.as_bytes())?;
        checked.push((key, cached.revision));
        let object = cached.value();
        if object["metadata"]
            .get("deletionTimestamp")
            .is_some_and(|t| !t.is_null())
        {
            return None;
        }
        Some(object)
    }
}

/// The SHA-256 of a token: what the memory of verified tokens keeps instead of the token.
fn token_digest(token: &str) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// The identity of service account `namespace/name`.
fn user(namespace: &str, name: &str, uid: &str, extra: BTreeMap<String, Vec<String>>) -> UserInfo {
    UserInfo {
        name: service_account_username(namespace, name),
        uid: Some(uid.to_owned()),
        groups: vec![
            SERVICE_ACCOUNTS_GROUP.to_owned(),
            format!("{SERVICE_ACCOUNTS_GROUP}:{namespace}"),
        ],
        extra,
    }
}
