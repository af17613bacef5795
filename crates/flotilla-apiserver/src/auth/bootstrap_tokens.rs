//! Bootstrap-token authentication: a bearer token `<id>.<secret>` is checked against the
//! Secret `kube-system/bootstrap-token-<id>` in the watch cache (see
//! [`super::lifted::bootstrap_token`] for the rules) and stands for user `system:bootstrap:<id>`
//! in `system:bootstrappers` and the Secret's extra groups. Deleting the Secret revokes the
//! token as soon as the watch cache has the deletion, and expiry is checked on every request
//! (no success cache, unlike kube-apiserver's 10 s one).

use std::sync::Arc;
use std::time::Duration;

use super::authn::UserInfo;
use super::lifted::bootstrap_token::{self as lifted, NAMESPACE, SECRET_PREFIX, USER_PREFIX};
use crate::cache::WatchCache;
use crate::registry::Clock;
use flotilla_store::Store;

/// How long authentication waits for the watch cache to reach the store's revision.
const CATCH_UP_WAIT: Duration = Duration::from_millis(500);

/// Checks bootstrap tokens against their Secrets. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct BootstrapTokens {
    store: Arc<dyn Store>,
    cache: Arc<WatchCache>,
    clock: Arc<dyn Clock>,
}

impl BootstrapTokens {
    pub fn new(store: Arc<dyn Store>, cache: Arc<WatchCache>, clock: Arc<dyn Clock>) -> Self {
        BootstrapTokens {
            store,
            cache,
            clock,
        }
    }

    /// Whether `token` has a bootstrap token's form (whatever its Secret says).
    pub fn is_bootstrap_token(token: &str) -> bool {
        lifted::parse_token(token).is_some()
    }

    /// The user `token` stands for, or `None` when it is not a current bootstrap token.
    pub fn authenticate(&self, token: &str) -> Option<UserInfo> {
        let (id, secret) = lifted::parse_token(token)?;
        let key = format!("/registry/core/secrets/{NAMESPACE}/{SECRET_PREFIX}{id}");
        let object = self.cache.get(key.as_bytes())?.value();
        match lifted::authenticates(&object, id, secret, self.clock.now()) {
            Ok(groups) => Some(UserInfo {
                name: format!("{USER_PREFIX}{id}"),
                groups,
                ..UserInfo::default()
            }),
            Err(reason) => {
                tracing::debug!(secret = %format!("{SECRET_PREFIX}{id}"), reason, "bootstrap token refused");
                None
            }
        }
    }

    /// Waits until the watch cache holds every write the store has acknowledged (a token whose
    /// Secret was just created may be a few milliseconds ahead of the cache).
    pub async fn catch_up(&self) -> bool {
        match self.store.status().await {
            Ok(status) => self.cache.wait_for(status.revision, CATCH_UP_WAIT).await,
            Err(_) => false,
        }
    }
}
