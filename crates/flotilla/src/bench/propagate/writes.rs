//! Control-plane writes by resource, counted from the store's own watch (every put and delete,
//! whoever made it): how many writes one propagated workload costs, and where they go. With
//! `explain`, each write is also described by what it changed (`--explain-writes`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::Context as _;
use flotilla_store::{Event, EventKind, KeyRange, Store};
use futures::StreamExt;
use parking_lot::Mutex;
use serde_json::Value;

#[derive(Default)]
struct Counts {
    by_resource: BTreeMap<String, u64>,
    explained: BTreeMap<String, u64>,
}

/// Counts store writes per `<group>/<resource>` from the moment it starts until dropped.
pub struct WriteCounter {
    counts: Arc<Mutex<Counts>>,
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

/// What one write did: `create`, `delete`, or the fields it changed (`metadata.<key>`,
/// `spec.<key>`, `status.<key>`, and an Event's `count`/`lastTimestamp`; `resourceVersion`
/// left out as every write moves it). Events are told apart by reason and involved kind.
pub fn explain(event: &Event) -> String {
    if event.kind == EventKind::Delete {
        return "delete".to_owned();
    }
    let new: Value = serde_json::from_slice(&event.kv.value).unwrap_or_default();
    let mut what = match &event.prev {
        None => "create".to_owned(),
        Some(prev) => {
            let old: Value = serde_json::from_slice(&prev.value).unwrap_or_default();
            let changed = changed_fields(&old, &new);
            if changed.is_empty() {
                "nothing".to_owned()
            } else {
                changed.join("+")
            }
        }
    };
    if let Some(reason) = new["reason"].as_str() {
        let kind = new["involvedObject"]["kind"].as_str().unwrap_or_default();
        what = format!("{what} ({reason} on {kind})");
    }
    what
}

fn changed_fields(old: &Value, new: &Value) -> Vec<String> {
    let mut changed = Vec::new();
    for top in ["metadata", "spec", "status"] {
        let (o, n) = (&old[top], &new[top]);
        let keys: BTreeSet<&String> = o
            .as_object()
            .into_iter()
            .chain(n.as_object())
            .flat_map(|m| m.keys())
            .collect();
        if keys.is_empty() && o != n {
            changed.push(top.to_owned());
        }
        for key in keys {
            if key != "resourceVersion" && o[key] != n[key] {
                changed.push(format!("{top}.{key}"));
            }
        }
    }
    for key in ["count", "lastTimestamp", "series"] {
        if old[key] != new[key] {
            changed.push(key.to_owned());
        }
    }
    changed
}

impl WriteCounter {
    pub async fn start(store: &Arc<dyn Store>, explain: bool) -> anyhow::Result<WriteCounter> {
        let revision = store
            .status()
            .await
            .context("read the store revision")?
            .revision;
        let mut events = store
            .watch(KeyRange::all(), revision)
            .await
            .context("watch the store")?;
        let counts = Arc::new(Mutex::new(Counts::default()));
        let sink = counts.clone();
        let task = tokio::spawn(async move {
            while let Some(Ok(event)) = events.next().await {
                let resource = resource_of(&event.kv.key);
                let explained = explain.then(|| format!("{resource} {}", self::explain(&event)));
                let mut counts = sink.lock();
                *counts.by_resource.entry(resource).or_insert(0) += 1;
                if let Some(explained) = explained {
                    *counts.explained.entry(explained).or_insert(0) += 1;
                }
            }
        });
        Ok(WriteCounter { counts, task })
    }

    /// Writes so far, by resource, most first.
    pub fn snapshot(&self) -> Vec<(String, u64)> {
        most_first(&self.counts.lock().by_resource)
    }

    /// Writes so far by resource and what they changed, most first (empty unless explaining).
    pub fn explained(&self) -> Vec<(String, u64)> {
        most_first(&self.counts.lock().explained)
    }
}

fn most_first(counts: &BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = counts.iter().map(|(k, v)| (k.clone(), *v)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use flotilla_store::KeyValue;
    use serde_json::json;

    use super::*;

    fn kv(value: Value) -> KeyValue {
        KeyValue {
            key: Bytes::from_static(b"/registry/apps/deployments/ns/web"),
            value: Bytes::from(serde_json::to_vec(&value).expect("json")),
            create_revision: 1,
            mod_revision: 1,
            version: 1,
        }
    }

    fn put(prev: Option<Value>, new: Value) -> Event {
        Event {
            kind: EventKind::Put,
            kv: kv(new),
            prev: prev.map(kv),
        }
    }

    #[test]
    fn writes_are_told_apart_by_what_they_changed() {
        let v1 =
            json!({"metadata": {"name": "web", "resourceVersion": "1"}, "spec": {"replicas": 1}});
        assert_eq!(explain(&put(None, v1.clone())), "create");
        let mut v2 = v1.clone();
        v2["metadata"]["resourceVersion"] = json!("2");
        v2["metadata"]["labels"] = json!({"a": "b"});
        v2["status"] = json!({"replicas": 1});
        assert_eq!(
            explain(&put(Some(v1.clone()), v2.clone())),
            "metadata.labels+status.replicas"
        );
        let mut v3 = v2.clone();
        v3["metadata"]["resourceVersion"] = json!("3");
        assert_eq!(explain(&put(Some(v2), v3)), "nothing");
        let event = json!({"metadata": {"name": "e"}, "reason": "Scheduled", "count": 2,
            "involvedObject": {"kind": "Pod"}});
        let mut again = event.clone();
        again["count"] = json!(3);
        assert_eq!(
            explain(&put(Some(event), again)),
            "count (Scheduled on Pod)"
        );
        let deleted = Event {
            kind: EventKind::Delete,
            kv: kv(json!({})),
            prev: Some(kv(v1)),
        };
        assert_eq!(explain(&deleted), "delete");
        assert_eq!(
            resource_of(b"/registry/apps/deployments/ns/web"),
            "apps/deployments"
        );
    }
}
