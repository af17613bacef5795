//! Control-plane writes by resource, counted from the store's own watch (every put and delete,
//! whoever made it): how many writes one propagated workload costs, and where they go.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context as _;
use flotilla_store::{KeyRange, Store};
use futures::StreamExt;
use parking_lot::Mutex;

/// Counts store writes per `<group>/<resource>` from the moment it starts until dropped.
pub struct WriteCounter {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WriteCounter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `/registry/<group>/<resource>/...` → `<group>/<resource>` (`leases` and the like included).
fn resource_of(key: &[u8]) -> String {
    let key = String::from_utf8_lossy(key);
    let mut parts = key.trim_start_matches('/').split('/');
    let _registry = parts.next();
    match (parts.next(), parts.next()) {
        (Some(group), Some(resource)) => format!("{group}/{resource}"),
        _ => key.into_owned(),
    }
}

impl WriteCounter {
    pub async fn start(store: &Arc<dyn Store>) -> anyhow::Result<WriteCounter> {
        let revision = store
            .status()
            .await
            .context("read the store revision")?
            .revision;
        let mut events = store
            .watch(KeyRange::all(), revision)
            .await
            .context("watch the store")?;
        let counts = Arc::new(Mutex::new(BTreeMap::new()));
        let sink = counts.clone();
        let task = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                *sink.lock().entry(resource_of(&event.kv.key)).or_insert(0) += 1;
            }
        });
        Ok(WriteCounter { counts, task })
    }

    /// Writes so far, by resource, most first.
    pub fn snapshot(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .counts
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}
