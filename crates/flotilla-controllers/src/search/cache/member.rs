//! One (member cluster, resource) cache of the search cache: the objects as JSON text plus
//! what filtering reads, the member's resource version, a window of recent changes for
//! watches resuming from a version, and the list+watch loop that feeds them.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use flotilla_member::MemberClients;
use futures::StreamExt as _;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, WatchEvent, WatchParams};
use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::broadcast;
use tracing::{debug, warn};

use super::{CachedResource, HISTORY};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

#[derive(Debug)]
pub(super) struct Change {
    pub(super) type_: ChangeType,
    pub(super) rv: u64,
    pub(super) object: Arc<Stored>,
}

/// One cached object: its JSON text, parsed again when it is served (a parsed `Value` takes
/// several times the memory of its text, and most cached objects are never read), and what
/// filtering reads.
#[derive(Debug, PartialEq)]
pub(super) struct Stored {
    pub(super) text: Box<str>,
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) rv: u64,
    pub(super) labels: BTreeMap<String, String>,
}

impl Stored {
    pub(super) fn new(object: &Value) -> Self {
        let (namespace, name) = key_of(object);
        Self {
            text: object.to_string().into_boxed_str(),
            namespace,
            name,
            rv: version_of(object),
            labels: object["metadata"]["labels"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    pub(super) fn key(&self) -> Key {
        (self.namespace.clone(), self.name.clone())
    }

    pub(super) fn value(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

pub(super) type Key = (String, String);

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) objects: BTreeMap<Key, Arc<Stored>>,
    /// The member version the cache reflects.
    pub(super) rv: u64,
    /// Changes after `oldest`, in order.
    pub(super) history: VecDeque<Arc<Change>>,
    pub(super) oldest: u64,
    pub(super) synced: bool,
}

/// One (cluster, resource) cache.
pub(super) struct ResourceCache {
    pub(super) cluster: String,
    pub(super) resource: CachedResource,
    pub(super) state: RwLock<State>,
    pub(super) changes: broadcast::Sender<Arc<Change>>,
    pub(super) task: parking_lot::Mutex<Option<tokio::task::AbortHandle>>,
}

impl fmt::Debug for ResourceCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceCache")
            .field("cluster", &self.cluster)
            .field("resource", &self.resource.api.plural)
            .finish_non_exhaustive()
    }
}

impl Drop for ResourceCache {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
    }
}

pub(super) fn key_of(object: &Value) -> Key {
    let meta = &object["metadata"];
    (
        meta["namespace"].as_str().unwrap_or_default().to_owned(),
        meta["name"].as_str().unwrap_or_default().to_owned(),
    )
}

pub(super) fn version_of(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl ResourceCache {
    /// Records a change and tells the watchers.
    pub(super) fn apply(&self, type_: ChangeType, object: Value) {
        let object = Arc::new(Stored::new(&object));
        let rv = object.rv;
        let key = object.key();
        let mut state = self.state.write();
        match type_ {
            ChangeType::Deleted => {
                state.objects.remove(&key);
            }
            _ => {
                state.objects.insert(key, object.clone());
            }
        }
        state.rv = state.rv.max(rv);
        let change = Arc::new(Change {
            type_,
            rv: state.rv,
            object,
        });
        push_history(&mut state, change.clone());
        let _ = self.changes.send(change);
    }

    /// Replaces the contents with a (re)list, as changes for the watchers.
    pub(super) fn replace(&self, objects: Vec<Value>, rv: u64) {
        let mut fresh: BTreeMap<Key, Arc<Stored>> = objects
            .iter()
            .map(|o| {
                let stored = Stored::new(o);
                (stored.key(), Arc::new(stored))
            })
            .collect();
        let mut state = self.state.write();
        let rv = rv.max(state.rv);
        let mut changes = Vec::new();
        for (key, old) in &state.objects {
            if !fresh.contains_key(key) {
                changes.push((ChangeType::Deleted, old.clone()));
            }
        }
        for (key, object) in &fresh {
            match state.objects.get(key) {
                None => changes.push((ChangeType::Added, object.clone())),
                Some(old) if old != object => changes.push((ChangeType::Modified, object.clone())),
                Some(_) => {}
            }
        }
        std::mem::swap(&mut state.objects, &mut fresh);
        state.rv = rv;
        let first_sync = !state.synced;
        state.synced = true;
        for (type_, object) in changes {
            let change = Arc::new(Change { type_, rv, object });
            if !first_sync {
                push_history(&mut state, change.clone());
            }
            let _ = self.changes.send(change);
        }
        if first_sync {
            state.oldest = rv;
        }
    }

    pub(super) fn bookmark(&self, rv: u64) {
        let mut state = self.state.write();
        if rv > state.rv {
            state.rv = rv;
            if state.history.is_empty() {
                state.oldest = rv;
            }
        }
    }
}

pub(super) fn push_history(state: &mut State, change: Arc<Change>) {
    state.history.push_back(change);
    while state.history.len() > HISTORY {
        if let Some(dropped) = state.history.pop_front() {
            state.oldest = dropped.rv;
        }
    }
}

/// The list+watch loop of one cache: relists after an expired version or a failure, with
/// backoff; ends only when the cache is dropped (the task is aborted).
pub(super) async fn reflect(
    cache: std::sync::Weak<ResourceCache>,
    members: Arc<dyn MemberClients>,
) {
    let mut backoff = Duration::from_millis(200);
    loop {
        let Some(this) = cache.upgrade() else {
            return;
        };
        let (cluster, api) = (this.cluster.clone(), this.resource.api.clone());
        drop(this);
        match reflect_once(&cache, &members, &cluster, &api).await {
            Ok(()) => backoff = Duration::from_millis(200),
            Err(error) => {
                warn!(%cluster, resource = %api.plural, %error, "search cache: member list/watch failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// One list, then watches until the version expires (`Ok`) or a request fails (`Err`).
pub(super) async fn reflect_once(
    cache: &std::sync::Weak<ResourceCache>,
    members: &Arc<dyn MemberClients>,
    cluster: &str,
    api: &ApiResource,
) -> Result<(), String> {
    let client = members.client(cluster).await.map_err(|e| e.to_string())?;
    let api: Api<DynamicObject> = Api::all_with(client, api);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| e.to_string())?;
    let mut rv = list.metadata.resource_version.clone().unwrap_or_default();
    let objects: Vec<Value> = list
        .items
        .iter()
        .map(|o| serde_json::to_value(o).unwrap_or(Value::Null))
        .collect();
    {
        let Some(this) = cache.upgrade() else {
            return Ok(());
        };
        this.replace(objects, rv.parse().unwrap_or(0));
        debug!(%cluster, resource = %api.resource_url(), rv, "search cache listed");
    }
    loop {
        let params = WatchParams::default().timeout(290);
        let stream = api.watch(&params, &rv).await.map_err(|e| e.to_string())?;
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let event = event.map_err(|e| e.to_string())?;
            let Some(this) = cache.upgrade() else {
                return Ok(());
            };
            let value = |o: &DynamicObject| serde_json::to_value(o).unwrap_or(Value::Null);
            match event {
                WatchEvent::Added(o) => {
                    rv = o.metadata.resource_version.clone().unwrap_or(rv);
                    this.apply(ChangeType::Added, value(&o));
                }
                WatchEvent::Modified(o) => {
                    rv = o.metadata.resource_version.clone().unwrap_or(rv);
                    this.apply(ChangeType::Modified, value(&o));
                }
                WatchEvent::Deleted(o) => {
                    rv = o.metadata.resource_version.clone().unwrap_or(rv);
                    this.apply(ChangeType::Deleted, value(&o));
                }
                WatchEvent::Bookmark(b) => {
                    rv = b.metadata.resource_version.clone();
                    this.bookmark(rv.parse().unwrap_or(0));
                }
                WatchEvent::Error(status) if status.code == 410 => return Ok(()),
                WatchEvent::Error(status) => return Err(status.message),
            }
        }
    }
}
