//! The bootstrap token cleaner (kube-controller-manager's `tokencleaner`, run inside the API
//! server like the tokens controller): a Secret of type `bootstrap.kubernetes.io/token` in
//! `kube-system` is deleted once its `expiration` has passed (an unparsable one counts as
//! passed), with its uid as a precondition so a Secret recreated under the same name is kept.
//! Follows `pkg/controller/bootstrap/tokencleaner.go` (Kubernetes v1.32) in behaviour: a token
//! not yet expired is looked at again when it expires.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::lifted::bootstrap_token::{self as lifted, Expiry, NAMESPACE, SECRET_TYPE};
use crate::cache::ChangeKind;
use crate::catalog::ResourceInfo;
use crate::object;
use crate::registry::{DeleteOptions, Registry};

/// The longest the cleaner sleeps without looking at its timers (a clock that jumps).
const MAX_SLEEP: Duration = Duration::from_secs(60);

/// Runs until dropped.
pub async fn run(registry: Registry) {
    let secrets = registry
        .catalog()
        .get("", "v1", "secrets")
        .expect("secrets are built in");
    let prefix = format!("/registry/core/secrets/{NAMESPACE}/");
    let mut cleaner = Cleaner {
        registry,
        secrets,
        timers: BTreeSet::new(),
    };
    loop {
        let subscription = match cleaner.registry.cache().subscribe(prefix.as_bytes(), None) {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        for change in subscription.backlog {
            cleaner.eval(&change.object.value()).await;
        }
        let mut live = subscription.live;
        // One timer, moved when the next expiry moves: the feed carries every change in the
        // store, and a timer per change costs more than the change's check.
        let timer = tokio::time::sleep(cleaner.until_next());
        tokio::pin!(timer);
        let mut armed_for = cleaner.next_expiry();
        loop {
            let next = cleaner.next_expiry();
            if next != armed_for {
                timer
                    .as_mut()
                    .reset(tokio::time::Instant::now() + cleaner.until_next());
                armed_for = next;
            }
            tokio::select! {
                received = live.recv() => match received {
                    // The live feed carries every change in the store: decode only the
                    // Secrets of the prefix.
                    Ok(change)
                        if change.kind != ChangeKind::Deleted
                            && change.object.key.starts_with(prefix.as_bytes()) =>
                    {
                        cleaner.eval(&change.object.value()).await;
                    }
                    Ok(_) => {}
                    // Missed changes: start over from the current Secrets.
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return,
                },
                () = timer.as_mut() => {
                    cleaner.fire(&prefix).await;
                    timer
                        .as_mut()
                        .reset(tokio::time::Instant::now() + cleaner.until_next());
                    armed_for = cleaner.next_expiry();
                }
            }
        }
    }
}

struct Cleaner {
    registry: Registry,
    secrets: Arc<ResourceInfo>,
    /// When to look at a Secret again, by name.
    timers: BTreeSet<(jiff::Timestamp, String)>,
}

impl Cleaner {
    /// Deletes `secret` if it is an expired token; remembers when to look again otherwise.
    async fn eval(&mut self, secret: &Value) {
        if secret["type"].as_str() != Some(SECRET_TYPE) {
            return;
        }
        let Some(name) = object::name(secret) else {
            return;
        };
        match lifted::expiry(secret, self.registry.clock.now()) {
            Expiry::Never => {}
            Expiry::At(at) => {
                self.timers.insert((at, name.to_owned()));
            }
            Expiry::Expired => {
                let options = DeleteOptions {
                    precondition_uid: secret["metadata"]["uid"].as_str().map(str::to_owned),
                    ..DeleteOptions::default()
                };
                match self
                    .registry
                    .delete(&self.secrets, Some(NAMESPACE), name, &options)
                    .await
                {
                    Ok(_) => tracing::info!(name, "deleted the expired bootstrap token"),
                    // Gone already, or recreated (the uid precondition failed).
                    Err(e) if e.code == 404 || e.code == 409 => {}
                    Err(e) => {
                        tracing::warn!(name, error = %e, "cannot delete the expired bootstrap token")
                    }
                }
            }
        }
    }

    /// How long until the first timer is due.
    /// The earliest timer, if any.
    fn next_expiry(&self) -> Option<jiff::Timestamp> {
        self.timers.first().map(|(at, _)| *at)
    }

    fn until_next(&self) -> Duration {
        let Some((at, _)) = self.timers.first() else {
            return MAX_SLEEP;
        };
        let left = at.duration_since(self.registry.clock.now());
        Duration::try_from(left)
            .unwrap_or(Duration::ZERO)
            .min(MAX_SLEEP)
    }

    /// Looks again at the Secrets whose timers are due, as the cache holds them now.
    async fn fire(&mut self, prefix: &str) {
        let now = self.registry.clock.now();
        while let Some((at, _)) = self.timers.first()
            && *at <= now
        {
            let (_, name) = self.timers.pop_first().expect("a first timer");
            let key = format!("{prefix}{name}");
            if let Some(cached) = self.registry.cache().get(key.as_bytes()) {
                self.eval(&cached.value()).await;
            }
        }
    }
}
