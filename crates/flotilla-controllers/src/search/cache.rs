//! The multi-cluster cache behind karmada-search: for each (member cluster, resource) some
//! ResourceRegistry selects, one list+watch of the member keeps the objects, the member's
//! resource version and a window of recent changes; the global views (the `search/cache`
//! listing and the `proxying` proxy's get, list and watch) are served from it.
//!
//! Every object served carries the annotation `resource.karmada.io/cached-from-cluster`
//! naming its member. The proxy's lists and watches use multi-cluster resource versions and
//! continue tokens (`version.rs`); its get answers 409 when two members hold the object.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use flotilla_api::karmada::CACHE_SOURCE_ANNOTATION;
use flotilla_api::selector::field::FieldSelector;
use flotilla_api::selector::label::LabelSelector;
use flotilla_member::MemberClients;
use futures::stream::BoxStream;
use kube::api::ApiResource;
use parking_lot::RwLock;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, watch};
use tracing::info;

use super::version::{MultiContinue, MultiVersion};

mod member;
mod watch_mux;

use member::{Change, ChangeType, Key, ResourceCache, State, Stored, reflect};
use watch_mux::{Filter, forward};

/// How many recent changes each (cluster, resource) keeps for watches resuming from a version.
const HISTORY: usize = 1024;
/// How many changes a slow watcher may fall behind before its watch is ended.
const FAN_OUT: usize = 1024;

/// A resource as the proxy's paths name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvr {
    /// API group (`""` for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
}

impl Gvr {
    /// `resource.group` (`resource` for the core group), as in Kubernetes' messages.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// `group/version` (`version` for the core group).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// The namespaces a resource is cached for (Karmada's `MultiNamespace`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespaces {
    all: bool,
    names: BTreeSet<String>,
}

impl Namespaces {
    /// Every namespace.
    pub fn all() -> Self {
        Self {
            all: true,
            names: BTreeSet::new(),
        }
    }

    /// Adds one selector's namespace (empty: all).
    pub fn add(&mut self, namespace: &str) {
        if self.all {
            return;
        }
        if namespace.is_empty() {
            *self = Self::all();
        } else {
            self.names.insert(namespace.to_owned());
        }
    }

    /// The union.
    pub fn merge(&mut self, other: &Namespaces) {
        if other.all {
            *self = Self::all();
        } else {
            for name in &other.names {
                self.add(name);
            }
        }
    }

    /// Whether objects of `namespace` are served.
    pub fn contains(&self, namespace: &str) -> bool {
        self.all || self.names.contains(namespace)
    }
}

/// One resource a cluster caches, as the controller decides it.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedResource {
    /// How to reach it in the member (kind, plural, version).
    pub api: ApiResource,
    /// Namespaced kind.
    pub namespaced: bool,
    /// Namespaces served by the proxy.
    pub namespaces: Namespaces,
}

/// What the caches should hold: cluster → resource → how, and every resource some registry
/// names (served from the cache by the proxy even when no cluster matches).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    pub clusters: BTreeMap<String, BTreeMap<Gvr, CachedResource>>,
    pub registered: BTreeSet<Gvr>,
}

/// Why a request to the cache failed; the API server turns each into a `Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// 404.
    #[error("{resource} {name:?} not found")]
    NotFound { resource: String, name: String },
    /// 409: more than one member holds the object.
    #[error("Operation cannot be fulfilled on {resource} {name:?}: ambiguous objects in clusters [{}]", clusters.join(", "))]
    Ambiguous {
        resource: String,
        name: String,
        clusters: Vec<String>,
    },
    /// 410: a watch from a version the cache no longer has.
    #[error("too old resource version: {requested} ({oldest})")]
    Expired { requested: String, oldest: u64 },
    /// 400: a selector or version that does not parse.
    #[error("{0}")]
    BadRequest(String),
}

/// Options of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<i64>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    pub items: Vec<Value>,
    pub resource_version: String,
    pub continue_token: String,
}

/// One watch event for a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub type_: &'static str,
    pub object: Value,
}

/// The caches of every cluster, and the resources registries name.
#[derive(Default)]
pub struct SearchCache {
    inner: RwLock<Inner>,
    /// Bumped when clusters are added: open proxy watches end so clients re-list and see them.
    topology: watch::Sender<u64>,
}

#[derive(Default)]
struct Inner {
    clusters: BTreeMap<String, BTreeMap<Gvr, Arc<ResourceCache>>>,
    registered: BTreeSet<Gvr>,
}

impl fmt::Debug for SearchCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("SearchCache")
            .field("clusters", &inner.clusters.len())
            .field("registered", &inner.registered)
            .finish()
    }
}

impl SearchCache {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Makes the caches what `desired` says: starts the new ones, stops those no longer
    /// wanted (and those whose namespaces changed, which start again).
    pub fn update(&self, desired: &Desired, members: &Arc<dyn MemberClients>) {
        let mut inner = self.inner.write();
        let mut added_cluster = false;
        inner
            .clusters
            .retain(|cluster, _| desired.clusters.contains_key(cluster));
        for (cluster, resources) in &desired.clusters {
            let caches = inner.clusters.entry(cluster.clone()).or_insert_with(|| {
                info!(%cluster, "search cache: caching cluster");
                added_cluster = true;
                BTreeMap::new()
            });
            caches.retain(|gvr, cache| resources.get(gvr) == Some(&cache.resource));
            for (gvr, resource) in resources {
                if caches.contains_key(gvr) {
                    continue;
                }
                info!(%cluster, resource = %gvr.group_resource(), "search cache: caching resource");
                let cache = Arc::new(ResourceCache {
                    cluster: cluster.clone(),
                    resource: resource.clone(),
                    state: RwLock::new(State::default()),
                    changes: broadcast::channel(FAN_OUT).0,
                    task: parking_lot::Mutex::new(None),
                });
                let task = tokio::spawn(reflect(Arc::downgrade(&cache), members.clone()));
                *cache.task.lock() = Some(task.abort_handle());
                caches.insert(gvr.clone(), cache);
            }
        }
        inner.registered = desired.registered.clone();
        drop(inner);
        if added_cluster {
            self.topology.send_modify(|n| *n += 1);
        }
    }

    /// Whether a ResourceRegistry names the resource (Karmada's `HasResource`).
    pub fn registered(&self, gvr: &Gvr) -> bool {
        self.inner.read().registered.contains(gvr)
    }

    /// Whether every cache has listed its member once.
    pub fn synced(&self) -> bool {
        self.inner
            .read()
            .clusters
            .values()
            .flat_map(|c| c.values())
            .all(|c| c.state.read().synced)
    }

    fn caches_of(&self, gvr: &Gvr) -> Vec<Arc<ResourceCache>> {
        self.inner
            .read()
            .clusters
            .values()
            .filter_map(|c| c.get(gvr).cloned())
            .collect()
    }

    /// The `search/cache` view: every cached object of the resource (in `namespace`, named
    /// `name`, matching `labels`), whichever registry namespaces, in cluster then key order.
    pub fn search(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        name: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<Value>, SearchError> {
        let labels = parse_labels(labels)?;
        let mut items = Vec::new();
        for cache in self.caches_of(gvr) {
            let state = cache.state.read();
            for ((ns, n), object) in &state.objects {
                if namespace.is_some_and(|want| want != ns) || name.is_some_and(|want| want != n) {
                    continue;
                }
                if name.is_none() && !labels_match(&labels, &object.labels) {
                    continue;
                }
                items.push(annotated(object, &cache.cluster));
            }
        }
        Ok(items)
    }

    /// The one member holding `namespace/name`, and the object.
    fn find(
        &self,
        gvr: &Gvr,
        namespace: &str,
        name: &str,
    ) -> Result<(Arc<ResourceCache>, Arc<Stored>), SearchError> {
        let mut found = Vec::new();
        for cache in self.caches_of(gvr) {
            if cache.resource.namespaced && !cache.resource.namespaces.contains(namespace) {
                continue;
            }
            let object = cache
                .state
                .read()
                .objects
                .get(&(namespace.to_owned(), name.to_owned()))
                .cloned();
            if let Some(object) = object {
                found.push((cache, object));
            }
        }
        match found.len() {
            0 => Err(SearchError::NotFound {
                resource: gvr.group_resource(),
                name: name.to_owned(),
            }),
            1 => Ok(found.pop().expect("one")),
            _ => Err(SearchError::Ambiguous {
                resource: gvr.group_resource(),
                name: name.to_owned(),
                clusters: found.iter().map(|(c, _)| c.cluster.clone()).collect(),
            }),
        }
    }

    /// The member cluster holding the object (for requests the proxy forwards).
    pub fn owner(&self, gvr: &Gvr, namespace: &str, name: &str) -> Result<String, SearchError> {
        self.find(gvr, namespace, name)
            .map(|(cache, _)| cache.cluster.clone())
    }

    /// The proxy's get: the object, annotated, its version a one-cluster multi version.
    pub fn get(&self, gvr: &Gvr, namespace: &str, name: &str) -> Result<Value, SearchError> {
        let (cache, object) = self.find(gvr, namespace, name)?;
        let mut object = annotated(&object, &cache.cluster);
        let mut version = MultiVersion::default();
        version.set(
            &cache.cluster,
            object["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
        object["metadata"]["resourceVersion"] = Value::String(version.encode());
        Ok(object)
    }

    /// The proxy's list: clusters in name order, each cluster's objects in key order; `limit`
    /// pages across clusters with a multi-cluster continue token.
    pub fn list(
        &self,
        gvr: &Gvr,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListPage, SearchError> {
        let labels = parse_labels(options.label_selector.as_deref())?;
        let fields = parse_fields(options.field_selector.as_deref())?;
        let token = MultiContinue::parse(options.continue_token.as_deref().unwrap_or_default());
        let resuming = !token.cluster.is_empty();
        let mut version = if resuming {
            MultiVersion::parse(&token.rv)
        } else {
            MultiVersion::parse(options.resource_version.as_deref().unwrap_or_default())
        };
        let mut caches = self.caches_of(gvr);
        caches.sort_by(|a, b| a.cluster.cmp(&b.cluster));
        let limit = options.limit.filter(|l| *l > 0).map(|l| l as usize);
        let mut items = Vec::new();
        let mut next = MultiContinue::default();
        let mut started = !resuming;
        for (index, cache) in caches.iter().enumerate() {
            let mut after: Option<Key> = None;
            if !started {
                if cache.cluster != token.cluster {
                    continue;
                }
                started = true;
                if !token.continue_.is_empty() {
                    after = serde_json::from_str::<Key>(&token.continue_).ok();
                }
            }
            let state = cache.state.read();
            version.set(&cache.cluster, state.rv.to_string());
            let range = match &after {
                Some(key) => state
                    .objects
                    .range::<Key, _>((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded)),
                None => state.objects.range::<Key, _>(..),
            };
            let mut last: Option<Key> = None;
            let mut more_here = false;
            for ((ns, _), object) in range {
                if !served(cache, ns, namespace) || !labels_match(&labels, &object.labels) {
                    continue;
                }
                if !fields_match(&fields, object, cache.resource.namespaced) {
                    continue;
                }
                if limit.is_some_and(|l| items.len() >= l) {
                    more_here = true;
                    break;
                }
                last = Some(object.key());
                items.push(annotated(object, &cache.cluster));
            }
            drop(state);
            if limit.is_some_and(|l| items.len() >= l) {
                if more_here {
                    next.cluster = cache.cluster.clone();
                    next.continue_ = last
                        .map(|k| serde_json::to_string(&k).expect("strings serialize"))
                        .unwrap_or_default();
                } else if let Some(following) = caches.get(index + 1) {
                    next.cluster = following.cluster.clone();
                }
                break;
            }
        }
        // Clusters the page did not reach still get a version, so a watch from this list's
        // version starts every member where it stands now.
        for cache in &caches {
            if !version.contains(&cache.cluster) {
                version.set(&cache.cluster, cache.state.read().rv.to_string());
            }
        }
        let resource_version = version.encode();
        next.rv = resource_version.clone();
        Ok(ListPage {
            items,
            resource_version,
            continue_token: next.encode(),
        })
    }

    /// The proxy's watch: the members' changes merged, each object annotated and carrying
    /// the multi-cluster version after it. From a version each member resumes at its own
    /// (410 when a member's window no longer reaches it); without one, or from `"0"`, each
    /// member's current objects come first as `ADDED`. The stream ends when a member's cache
    /// goes away, when clusters are added, or when the client falls too far behind.
    pub fn watch(
        self: &Arc<Self>,
        gvr: &Gvr,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<BoxStream<'static, Event>, SearchError> {
        let labels = parse_labels(options.label_selector.as_deref())?;
        let fields = parse_fields(options.field_selector.as_deref())?;
        let start = MultiVersion::parse(options.resource_version.as_deref().unwrap_or_default());
        let (sender, receiver) = mpsc::channel::<Event>(256);
        let filter = Arc::new(Filter {
            namespace: namespace.map(str::to_owned),
            labels,
            fields,
        });
        let version = Arc::new(parking_lot::Mutex::new(start.clone()));
        let mut sources = Vec::new();
        let mut caches = self.caches_of(gvr);
        caches.sort_by(|a, b| a.cluster.cmp(&b.cluster));
        for cache in caches {
            let from = start.get(&cache.cluster).to_owned();
            let state = cache.state.read();
            let live = cache.changes.subscribe();
            let replay: Vec<Arc<Change>> = match from.as_str() {
                "" | "0" => state
                    .objects
                    .values()
                    .map(|o| {
                        Arc::new(Change {
                            type_: ChangeType::Added,
                            rv: o.rv,
                            object: o.clone(),
                        })
                    })
                    .collect(),
                text => {
                    let requested: u64 = text.parse().map_err(|_| {
                        SearchError::BadRequest(format!("invalid resource version {text:?}"))
                    })?;
                    if requested < state.oldest {
                        return Err(SearchError::Expired {
                            requested: text.to_owned(),
                            oldest: state.oldest,
                        });
                    }
                    state
                        .history
                        .iter()
                        .filter(|c| c.rv > requested)
                        .cloned()
                        .collect()
                }
            };
            drop(state);
            sources.push((cache, replay, live));
        }
        let mut topology = self.topology.subscribe();
        topology.mark_unchanged();
        let (stop, _) = watch::channel(false);
        let stop = Arc::new(stop);
        if !sources.is_empty() {
            let stopper = stop.clone();
            let mut stopped = stop.subscribe();
            tokio::spawn(async move {
                tokio::select! {
                    _ = topology.changed() => { stopper.send_replace(true); }
                    _ = stopped.changed() => {}
                }
            });
        }
        for (cache, replay, live) in sources {
            tokio::spawn(forward(
                cache,
                replay,
                live,
                sender.clone(),
                filter.clone(),
                version.clone(),
                stop.clone(),
            ));
        }
        drop(sender);
        let stream = futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|event| (event, receiver))
        });
        Ok(Box::pin(stream))
    }
}

/// Whether an object of namespace `ns` in `cache` is served for a request in `namespace`.
fn served(cache: &ResourceCache, ns: &str, namespace: Option<&str>) -> bool {
    if namespace.is_some_and(|want| want != ns) {
        return false;
    }
    !cache.resource.namespaced || cache.resource.namespaces.contains(ns)
}

fn parse_labels(text: Option<&str>) -> Result<Option<LabelSelector>, SearchError> {
    match text.filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => LabelSelector::parse(text)
            .map(Some)
            .map_err(|e| SearchError::BadRequest(format!("unable to parse labelSelector: {e}"))),
    }
}

fn parse_fields(text: Option<&str>) -> Result<Option<FieldSelector>, SearchError> {
    match text.filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => {
            let selector = FieldSelector::parse(text).map_err(|e| {
                SearchError::BadRequest(format!("unable to parse fieldSelector: {e}"))
            })?;
            Ok(Some(selector))
        }
    }
}

fn labels_match(selector: &Option<LabelSelector>, labels: &BTreeMap<String, String>) -> bool {
    selector.as_ref().is_none_or(|s| s.matches(labels))
}

/// The proxy's cache matches `metadata.name` and (namespaced kinds) `metadata.namespace`.
fn fields_match(selector: &Option<FieldSelector>, object: &Stored, namespaced: bool) -> bool {
    let Some(selector) = selector else {
        return true;
    };
    let mut fields = HashMap::new();
    fields.insert("metadata.name", object.name.clone());
    if namespaced {
        fields.insert("metadata.namespace", object.namespace.clone());
    }
    selector.matches_with(|field| fields.get(field).cloned())
}

/// A copy of `object` carrying the cache-source annotation.
fn annotated(object: &Stored, cluster: &str) -> Value {
    let mut object = object.value();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if !annotations.is_object() {
            *annotations = Value::Object(Default::default());
        }
        annotations.as_object_mut().expect("an object").insert(
            CACHE_SOURCE_ANNOTATION.to_owned(),
            Value::String(cluster.to_owned()),
        );
    }
    object
}

#[cfg(test)]
impl SearchCache {
    /// A cache of `objects` for (`cluster`, `gvr`) with no member behind it.
    fn insert_static(
        &self,
        cluster: &str,
        gvr: &Gvr,
        resource: CachedResource,
        objects: Vec<Value>,
        rv: u64,
    ) -> Arc<ResourceCache> {
        let cache = Arc::new(ResourceCache {
            cluster: cluster.to_owned(),
            resource,
            state: RwLock::new(State::default()),
            changes: broadcast::channel(FAN_OUT).0,
            task: parking_lot::Mutex::new(None),
        });
        cache.replace(objects, rv);
        let mut inner = self.inner.write();
        inner
            .clusters
            .entry(cluster.to_owned())
            .or_default()
            .insert(gvr.clone(), cache.clone());
        inner.registered.insert(gvr.clone());
        cache
    }
}

#[cfg(test)]
mod tests;
