//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's rules: a candidate takes
//! the lease when it is free or its holder has not renewed it for `lease_duration` (judged by the
//! local time at which the record was last seen to change, so clocks need not agree); the leader
//! renews every `retry_period` and steps down when it could not renew for `renew_deadline`. On
//! shutdown the leader releases the lease so a successor need not wait out the duration.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::time::Instant;
use tracing::{info, warn};

use crate::shutdown::Shutdown;

/// Where the lease lives, who we are, and client-go's timing (15 s / 10 s / 2 s by default).
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    pub namespace: String,
    pub name: String,
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

impl LeaseConfig {
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// A failed step of the election.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("reading lease {namespace}/{name}")]
    Get {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("writing lease {namespace}/{name}")]
    Write {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// The last lease record we saw and when we saw it change.
#[derive(Debug, Clone)]
struct Observed {
    holder: String,
    renew_time: Option<MicroTime>,
    lease_duration: Duration,
    at: Instant,
}

/// One candidate for one lease.
#[derive(Debug)]
pub struct LeaderElector {
    api: Api<Lease>,
    config: LeaseConfig,
    observed: tokio::sync::Mutex<Option<Observed>>,
}

impl LeaderElector {
    pub fn new(client: kube::Client, config: LeaseConfig) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            config,
            observed: tokio::sync::Mutex::new(None),
        }
    }

    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// One attempt: returns whether we hold the lease afterwards.
    pub async fn try_acquire_or_renew(&self) -> Result<bool, LeaseError> {
        let now = jiff::Timestamp::now();
        let duration_secs = i32::try_from(self.config.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let current = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|source| LeaseError::Get {
                namespace: self.config.namespace.clone(),
                name: self.config.name.clone(),
                source,
            })?;
        let Some(mut lease) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.config.identity.clone()),
                    lease_duration_seconds: Some(duration_secs),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(&created).await;
                    Ok(true)
                }
                // Somebody else created it first.
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(source) => Err(self.write_error(source)),
            };
        };
        self.observe(&lease).await;
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let we_hold = holder == self.config.identity;
        if !we_hold && !holder.is_empty() && !self.expired().await {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0);
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if !we_hold {
            spec.holder_identity = Some(self.config.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(transitions.saturating_add(1));
        }
        spec.lease_duration_seconds = Some(duration_secs);
        spec.renew_time = Some(MicroTime(now));
        // The update carries the resourceVersion we read: a concurrent writer makes it 409.
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(&updated).await;
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(source) => Err(self.write_error(source)),
        }
    }

    /// Gives the lease up if we hold it (a successor may take it at once).
    pub async fn release(&self) -> Result<(), LeaseError> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|source| LeaseError::Get {
                namespace: self.config.namespace.clone(),
                name: self.config.name.clone(),
                source,
            })?
        else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(jiff::Timestamp::now()));
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(source) => Err(self.write_error(source)),
        }
    }

    /// Runs `lead` each time we become leader, with a scope cancelled when leadership is lost;
    /// returns (after releasing the lease) once `shutdown` is cancelled.
    pub async fn run<F, Fut>(&self, shutdown: &Shutdown, mut lead: F)
    where
        F: FnMut(Shutdown) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        while !shutdown.is_cancelled() {
            if !self.acquire(shutdown).await {
                break;
            }
            info!(lease = %self.config.name, identity = %self.config.identity, "became leader");
            let term = shutdown.child();
            let task = tokio::spawn(lead(term.clone()));
            let renewed = self.renew_until_lost(shutdown).await;
            term.cancel();
            if let Err(error) = task.await {
                warn!(%error, "leader task panicked");
            }
            if !renewed {
                warn!(lease = %self.config.name, identity = %self.config.identity, "lost leadership");
            }
        }
        if let Err(error) = self.release().await {
            warn!(error = %error, "releasing the lease failed");
        }
    }

    /// Tries every retry period until we hold the lease; false if shut down first.
    async fn acquire(&self, shutdown: &Shutdown) -> bool {
        loop {
            match self.try_acquire_or_renew().await {
                Ok(true) => return true,
                Ok(false) => {}
                Err(error) => warn!(error = %error, "acquiring the lease failed"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return false,
                _ = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
    }

    /// Renews every retry period; returns false when a renewal did not succeed within the
    /// renew deadline, true when shut down while still leading.
    async fn renew_until_lost(&self, shutdown: &Shutdown) -> bool {
        let mut last_renewed = Instant::now();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return true,
                _ = tokio::time::sleep(self.config.retry_period) => {}
            }
            let attempt =
                tokio::time::timeout(self.config.renew_deadline, self.try_acquire_or_renew()).await;
            match attempt {
                Ok(Ok(true)) => last_renewed = Instant::now(),
                Ok(Ok(false)) => return false,
                Ok(Err(error)) => warn!(error = %error, "renewing the lease failed"),
                Err(_) => warn!("renewing the lease timed out"),
            }
            if last_renewed.elapsed() >= self.config.renew_deadline {
                return false;
            }
        }
    }

    async fn observe(&self, lease: &Lease) {
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.unwrap_or_default();
        let duration = Duration::from_secs(
            u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0),
        );
        let mut observed = self.observed.lock().await;
        let changed = match observed.as_ref() {
            Some(seen) => seen.holder != holder || seen.renew_time != spec.renew_time,
            None => true,
        };
        if changed {
            *observed = Some(Observed {
                holder,
                renew_time: spec.renew_time,
                lease_duration: duration,
                at: Instant::now(),
            });
        }
    }

    async fn expired(&self) -> bool {
        match self.observed.lock().await.as_ref() {
            Some(seen) => seen.at + seen.lease_duration <= Instant::now(),
            None => true,
        }
    }

    fn write_error(&self, source: kube::Error) -> LeaseError {
        LeaseError::Write {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests;
