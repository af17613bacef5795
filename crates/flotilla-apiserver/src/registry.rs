//! The resource registry: reads (get, list) and writes (create, update, patch, delete) of every
//! resource over the store, with Kubernetes' metadata rules. Handlers call it; it knows nothing
//! about HTTP.

mod delete;
mod interpreter_customization;
mod list;
mod quota;
mod recent;
pub mod write;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{Revision, Store};
use serde_json::Value;

pub use delete::DeleteOptions;
pub use list::{ListItem, ListOptions, ListPage};
pub use write::{PatchKind, WriteGuard, WriteOptions};

use crate::cache::WatchCache;
use crate::catalog::{Catalog, ResourceInfo};
use crate::error::ApiError;
use crate::object;

/// Time, injected so tests control it.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    fn now(&self) -> jiff::Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }
}

/// Formats a timestamp as Kubernetes does (RFC 3339, seconds precision, `Z`).
pub fn format_time(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// How long a consistent read waits for the watch cache to catch up with the store before it
/// reads the store directly.
const CONSISTENT_READ_WAIT: Duration = Duration::from_millis(500);

/// The registry of all resources.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) catalog: Catalog,
    pub(crate) cache: Arc<WatchCache>,
    pub(crate) clock: Arc<dyn Clock>,
    /// The revision of the last namespace write through this registry: once the cache has
    /// reached it, the cache's namespaces are as current as the store's for this server's own
    /// writes (see `check_namespace_open`).
    namespace_fence: Arc<AtomicI64>,
    /// This server's recent writes (which cached copies a write should not start from).
    recent_writes: Arc<recent::RecentWrites>,
    /// Objects are stored in the compact form ([`object::compact`]); only for a store that
    /// lives no longer than the process ([`crate::Builder::compact_storage`]).
    pub(crate) compact: bool,
    /// Deletes of objects labelled `resourcetemplate.karmada.io/deletion-protected: Always`
    /// are refused (Karmada's resource-deletion-protection webhook; see
    /// [`crate::Builder::without_deletion_protection`]).
    pub(crate) deletion_protection: bool,
    /// karmada-webhook's flags (see [`crate::Builder::allow_no_execute_taint_policy`]).
    pub(crate) webhook: flotilla_api::validation::karmada::WebhookOptions,
    /// Cluster IPs for Services created without one ([`crate::Builder::service_cluster_ip_range`]).
    pub(crate) service_ips: Option<Arc<crate::service_ips::ServiceIps>>,
    /// karmada-webhook's metrics for the admission steps Karmada runs in its webhook.
    pub(crate) webhooks: crate::metrics::webhook::WebhookMetrics,
}

impl Registry {
    pub fn new(
        store: Arc<dyn Store>,
        catalog: Catalog,
        cache: Arc<WatchCache>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Registry {
            store,
            catalog,
            cache,
            clock,
            namespace_fence: Arc::new(AtomicI64::new(0)),
            recent_writes: Arc::default(),
            compact: false,
            deletion_protection: false,
            webhook: Default::default(),
            service_ips: None,
            webhooks: Default::default(),
        }
    }

    /// Notes a write to a namespace object at `revision` (see `namespace_fence`).
    pub(crate) fn fence_namespace_write(&self, info: &ResourceInfo, revision: Revision) {
        if info.group.is_empty() && info.kind == "Namespace" {
            self.namespace_fence.fetch_max(revision, Ordering::AcqRel);
        }
    }

    /// Notes this server's write of `key` at `revision` (see `recent_writes`).
    pub(crate) fn note_write(&self, key: &[u8], revision: flotilla_store::Revision) {
        self.recent_writes
            .note(key, revision, self.cache.revision());
    }

    /// Whether the cache holds every namespace write this server made.
    pub(crate) fn cache_has_namespace_writes(&self) -> bool {
        self.cache.revision() >= self.namespace_fence.load(Ordering::Acquire)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn cache(&self) -> &Arc<WatchCache> {
        &self.cache
    }

    fn key(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> Bytes {
        Bytes::from(info.storage_key(namespace, name))
    }

    /// Reads one object, consistently (from the store).
    pub async fn get(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let kv = self.read_kv(info, namespace, name).await?;
        let mut value = object::decode(&kv)?;
        crate::conversion::to_served(info, &mut value);
        Ok(value)
    }

    /// [`Registry::get`] as the JSON served: the stored bytes with `resourceVersion` spliced
    /// in (as the watch cache serves them), not decoded and encoded again.
    pub async fn get_json(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Bytes, ApiError> {
        let kv = self.read_kv(info, namespace, name).await?;
        let served =
            crate::cache::CachedObject::from_stored(Bytes::new(), &kv.value, kv.mod_revision)
                .ok_or_else(|| {
                    ApiError::internal(format!(
                        "{} {name}: the stored object is not JSON",
                        info.plural
                    ))
                })?;
        Ok(crate::conversion::to_served_bytes(info, &served.json()))
    }

    /// Waits until the cache has every write acknowledged so far; false if it could not.
    pub(crate) async fn cache_is_current(&self) -> Result<bool, ApiError> {
        let status = self
            .store
            .status()
            .await
            .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?;
        Ok(self
            .cache
            .wait_for(status.revision, CONSISTENT_READ_WAIT)
            .await)
    }
}
