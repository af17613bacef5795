//! Per-member dynamic informers for the kinds Works carry, shared by the Works of one controller:
//! API resolution through the member's discovery (cached per group version), one reflector per
//! (cluster, kind) started when the first Work needs it and stopped when the last one is gone,
//! and a handler called with every member event. Only objects labelled `karmada.io/managed=true`
//! are watched: what Flotilla never took over needs no cache (an unmanaged object is found by a
//! direct read when a create reports it exists).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use flotilla_api::karmada::MANAGED_BY_KARMADA_LABEL;

use crate::compact::{self, CompactObjects};

mod slim;
use flotilla_member::{MemberClients, MemberError};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersion;
use kube::discovery::{self, Scope};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use parking_lot::Mutex;
use slim::Slim;

/// A kind resolved on a member.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
}

/// Which informer: cluster, apiVersion, kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerKey {
    pub cluster: String,
    pub api_version: String,
    pub kind: String,
}

/// What a member reported.
#[derive(Debug, Clone)]
pub enum MemberEvent {
    /// Added or changed; `initial` for what a (re)list found (handed out once the list is
    /// complete and cached).
    Applied {
        key: InformerKey,
        object: Arc<DynamicObject>,
        initial: bool,
    },
    /// Gone (or no longer labelled managed).
    Deleted {
        key: InformerKey,
        object: Arc<DynamicObject>,
    },
}

/// A cache lookup.
#[derive(Debug)]
pub enum Cached {
    /// The informer has listed: the object as cached, or `None` when absent.
    Synced(Option<Arc<DynamicObject>>),
    /// No informer, or it has not listed yet: read the member directly.
    Unknown,
}

/// Why a kind could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Member(#[from] MemberError),
    #[error("invalid apiVersion {0:?}")]
    ApiVersion(String),
    #[error("no matches for kind \"{kind}\" in version \"{api_version}\"")]
    NoMatch { api_version: String, kind: String },
    #[error(
        "discovery of {api_version}: {}",
        flotilla_runtime::errors::message(source)
    )]
    Discovery {
        api_version: String,
        #[source]
        source: kube::Error,
    },
}

type Handler = Arc<dyn Fn(MemberEvent) + Send + Sync>;
/// Kinds of one group version on one member.
type Kinds = Arc<Vec<(String, Resolved)>>;

struct Informer {
    store: CompactObjects,
    synced: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Informer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The member informers of one process (or leader term), shared by the execution and
/// work-status controllers: one watch and one cache per member and kind, whose events go to
/// every subscribed handler. Users (a controller's Works) are counted per informer; the
/// controllers prefix their user names so that one's release never stops an informer the
/// other still needs.
pub struct MemberCache {
    members: Arc<dyn MemberClients>,
    handlers: Arc<parking_lot::RwLock<Vec<Handler>>>,
    /// By (cluster, apiVersion).
    discovery: Mutex<HashMap<(String, String), Kinds>>,
    informers: Mutex<HashMap<InformerKey, Informer>>,
    /// Informers each user (a Work key) needs, and how many users each informer has.
    users: Mutex<Users>,
}

/// Users and their informers. A Work needs one or two informers, and there are two users per
/// Work (one per controller): each key is held once, shared by its users (at 30,000 Works a
/// set of owned keys per user came to ~50 MiB).
#[derive(Default)]
struct Users {
    by_user: HashMap<Box<str>, Box<[Arc<InformerKey>]>>,
    /// How many users each informer has; the map's keys are the shared ones.
    count: HashMap<Arc<InformerKey>, usize>,
}

impl std::fmt::Debug for MemberCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberCache")
            .field(
                "informers",
                &self.informers.lock().keys().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl MemberCache {
    /// A cache with no handler yet (see [`MemberCache::subscribe`]).
    pub fn new(members: Arc<dyn MemberClients>) -> Self {
        Self {
            members,
            handlers: Arc::default(),
            discovery: Mutex::new(HashMap::new()),
            informers: Mutex::new(HashMap::new()),
            users: Mutex::new(Users::default()),
        }
    }

    /// Hands every later event of every informer to `handler` too (events run on the
    /// informer's task: the handler must be quick, e.g. queue a key). A handler that refers to
    /// its controller should hold it weakly: the cache lives as long as the controllers'
    /// context.
    pub fn subscribe(&self, handler: Handler) {
        self.handlers.write().push(handler);
    }

    /// The member's resource for `api_version`/`kind` (discovery cached per group version;
    /// an unknown kind refreshes the group version once, for CRDs installed meanwhile).
    pub async fn resolve(
        &self,
        cluster: &str,
        api_version: &str,
        kind: &str,
    ) -> Result<Resolved, ResolveError> {
        let cache_key = (cluster.to_owned(), api_version.to_owned());
        let cached = self.discovery.lock().get(&cache_key).cloned();
        if let Some(found) = cached.as_ref().and_then(|kinds| lookup(kinds, kind)) {
            return Ok(found);
        }
        let gv: GroupVersion = api_version
            .parse()
            .map_err(|_| ResolveError::ApiVersion(api_version.to_owned()))?;
        let client = self.members.client(cluster).await?;
        let group =
            discovery::pinned_group(&client, &gv)
                .await
                .map_err(|source| match &source {
                    kube::Error::Api(status) if status.code == 404 => ResolveError::NoMatch {
                        api_version: api_version.to_owned(),
                        kind: kind.to_owned(),
                    },
                    _ => ResolveError::Discovery {
                        api_version: api_version.to_owned(),
                        source,
                    },
                })?;
        let kinds: Vec<(String, Resolved)> = group
            .versioned_resources(&gv.version)
            .into_iter()
            .filter(|(resource, _)| !resource.plural.contains('/'))
            .map(|(resource, caps)| {
                (
                    resource.kind.clone(),
                    Resolved {
                        namespaced: caps.scope == Scope::Namespaced,
                        resource,
                    },
                )
            })
            .collect();
        let kinds = Arc::new(kinds);
        self.discovery.lock().insert(cache_key, kinds.clone());
        lookup(&kinds, kind).ok_or_else(|| ResolveError::NoMatch {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        })
    }

    /// Records that `user` needs exactly `needed` informers: starts missing ones, stops those
    /// nobody needs any more. Returns whether all of `needed` have listed.
    pub async fn use_informers(
        &self,
        user: &str,
        needed: Vec<(InformerKey, ApiResource)>,
    ) -> Result<bool, MemberError> {
        let keys: BTreeSet<InformerKey> = needed.iter().map(|(k, _)| k.clone()).collect();
        for (key, resource) in &needed {
            if self.informers.lock().contains_key(key) {
                continue;
            }
            let client = self.members.client(&key.cluster).await?;
            let informer = self.start(key.clone(), client, resource.clone());
            self.informers.lock().entry(key.clone()).or_insert(informer);
        }
        let stop = self.set_user(user, keys.clone());
        self.stop(stop);
        let informers = self.informers.lock();
        Ok(keys.iter().all(|k| {
            informers
                .get(k)
                .is_some_and(|i| i.synced.load(Ordering::Acquire))
        }))
    }

    /// `user` needs no informer any more.
    pub fn release(&self, user: &str) {
        let stop = self.set_user(user, BTreeSet::new());
        self.stop(stop);
    }

    /// Stops every informer of `cluster` and forgets its discovery (the cluster is gone).
    pub fn forget_cluster(&self, cluster: &str) {
        self.informers.lock().retain(|k, _| k.cluster != cluster);
        self.discovery.lock().retain(|(c, _), _| c != cluster);
    }

    /// The cached member object.
    pub fn get(&self, key: &InformerKey, namespace: &str, name: &str) -> Cached {
        let informers = self.informers.lock();
        let Some(informer) = informers.get(key) else {
            return Cached::Unknown;
        };
        if !informer.synced.load(Ordering::Acquire) {
            return Cached::Unknown;
        }
        Cached::Synced(informer.store.get(namespace, name))
    }

    fn set_user(&self, user: &str, keys: BTreeSet<InformerKey>) -> Vec<InformerKey> {
        let mut users = self.users.lock();
        let Users { by_user, count } = &mut *users;
        let previous = by_user.remove(user).unwrap_or_default();
        let mut now = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(kept) = previous.iter().find(|p| ***p == key) {
                now.push(kept.clone());
                continue;
            }
            let shared = match count.get_key_value(&key) {
                Some((shared, _)) => shared.clone(),
                None => Arc::new(key),
            };
            *count.entry(shared.clone()).or_insert(0) += 1;
            now.push(shared);
        }
        let mut stop = Vec::new();
        for removed in previous.iter().filter(|p| !now.contains(p)) {
            if let Some(users) = count.get_mut(removed) {
                *users -= 1;
                if *users == 0 {
                    count.remove(removed);
                    stop.push(InformerKey::clone(removed));
                }
            }
        }
        if !now.is_empty() {
            by_user.insert(user.into(), now.into_boxed_slice());
        }
        stop
    }

    fn stop(&self, keys: Vec<InformerKey>) {
        if keys.is_empty() {
            return;
        }
        let users = self.users.lock();
        let mut informers = self.informers.lock();
        for key in keys {
            if !users.count.contains_key(&key) {
                tracing::debug!(cluster = %key.cluster, kind = %key.kind, "stopping member informer");
                informers.remove(&key);
            }
        }
    }

    fn start(&self, key: InformerKey, client: kube::Client, resource: ApiResource) -> Informer {
        tracing::debug!(cluster = %key.cluster, kind = %key.kind, "starting member informer");
        let api: Api<Slim> = Api::all_with(client, &resource);
        let store = CompactObjects::default();
        let synced = Arc::new(AtomicBool::new(false));
        let config = watcher::Config::default().labels(&format!("{MANAGED_BY_KARMADA_LABEL}=true"));
        // Cached member objects are compact JSON without `metadata.managedFields`
        // ([`CompactObjects`]), as Karmada's member informers strip managed fields
        // (`fedinformer.StripUnusedFields`): status reflection, health, drift and the fields an
        // update retains never read them. A heap profile of `bench propagate` put the member
        // caches at ~47 KB per member Deployment as parsed objects with managed fields, ~28 KB
        // without; compact they cost their JSON. An update built from a cached copy sends no
        // managedFields, which leaves the member's entries as they are. They are not even
        // decoded ([`Slim`]).
        let stream = watcher::watcher(api, config).default_backoff();
        let handlers = self.handlers.clone();
        let handler = move |event: MemberEvent| {
            for handler in handlers.read().iter() {
                handler(event.clone());
            }
        };
        let flag = synced.clone();
        let cache = store.clone();
        let task = tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            // A (re)list updates the cache object by object and reaches the handler when it is
            // complete: a Work queued by a listed object reads the cache, which must hold the
            // list (after a watch fell out of the member's window, objects may have changed or
            // gone), and on the first list the cache is not synced before then. Objects the
            // list no longer has were deleted while the watch was down.
            let mut listed: Vec<compact::Key> = Vec::new();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::Apply(Slim(object))) => {
                        cache.apply(&object);
                        handler(MemberEvent::Applied {
                            key: key.clone(),
                            object: Arc::new(object),
                            initial: false,
                        });
                    }
                    Ok(Event::InitApply(Slim(object))) => {
                        cache.apply(&object);
                        listed.push(compact::key_of(&object));
                    }
                    Ok(Event::Delete(Slim(object))) => {
                        cache.delete(&object);
                        handler(MemberEvent::Deleted {
                            key: key.clone(),
                            object: Arc::new(object),
                        });
                    }
                    Ok(Event::InitDone) => {
                        let keep: HashSet<compact::Key> = listed.iter().cloned().collect();
                        for gone in cache.retain(&keep) {
                            handler(MemberEvent::Deleted {
                                key: key.clone(),
                                object: Arc::new(gone),
                            });
                        }
                        flag.store(true, Ordering::Release);
                        for (namespace, name) in listed.drain(..) {
                            if let Some(object) = cache.get(&namespace, &name) {
                                handler(MemberEvent::Applied {
                                    key: key.clone(),
                                    object,
                                    initial: true,
                                });
                            }
                        }
                    }
                    Ok(Event::Init) => listed.clear(),
                    Err(error) => {
                        tracing::debug!(cluster = %key.cluster, %error, "member watch")
                    }
                }
            }
        });
        Informer {
            store,
            synced,
            task,
        }
    }
}

fn lookup(kinds: &[(String, Resolved)], kind: &str) -> Option<Resolved> {
    kinds
        .iter()
        .find(|(k, _)| k == kind)
        .map(|(_, r)| r.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(cluster: &str, kind: &str) -> InformerKey {
        InformerKey {
            cluster: cluster.into(),
            api_version: "apps/v1".into(),
            kind: kind.into(),
        }
    }

    #[test]
    fn an_informer_stops_only_when_its_last_user_is_gone() {
        let cache = MemberCache::new(Arc::new(flotilla_member::StaticMemberClients::new()));
        let deployments = key("m1", "Deployment");
        let jobs = key("m1", "Job");
        assert!(cache.set_user("a", [deployments.clone()].into()).is_empty());
        assert!(
            cache
                .set_user("b", [deployments.clone(), jobs.clone()].into())
                .is_empty()
        );
        // `b` no longer needs Jobs: nobody does.
        assert_eq!(
            cache.set_user("b", [deployments.clone()].into()),
            vec![jobs]
        );
        assert!(cache.set_user("a", BTreeSet::new()).is_empty());
        assert_eq!(cache.set_user("b", BTreeSet::new()), vec![deployments]);
    }

    /// A member whose Deployments are listed (a ready 1, b), whose watch then fails with 410
    /// (the watcher fell out of the member's window), and whose list afterwards shows a ready 3,
    /// b deleted and c created; later watches never answer.
    fn relisting_member() -> kube::Client {
        use http_body_util::BodyExt as _;
        let lists = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let lists = lists.clone();
            async move {
                let watch = request
                    .uri()
                    .query()
                    .unwrap_or_default()
                    .contains("watch=true");
                let _ = request.into_body().collect().await?;
                let deployment = |name: &str, ready: i64| {
                    serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": name, "namespace": "x", "resourceVersion": "3"},
                        "status": {"readyReplicas": ready}})
                };
                let body = match (watch, lists.load(Ordering::SeqCst)) {
                    (false, n) => {
                        lists.fetch_add(1, Ordering::SeqCst);
                        let items = if n == 0 {
                            vec![deployment("a", 1), deployment("b", 1)]
                        } else {
                            vec![deployment("a", 3), deployment("c", 2)]
                        };
                        serde_json::json!({"kind": "DeploymentList", "apiVersion": "apps/v1",
                            "metadata": {"resourceVersion": "5"}, "items": items})
                        .to_string()
                    }
                    (true, 1) => serde_json::json!({"type": "ERROR", "object": {
                        "kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "Expired", "code": 410, "message": "too old resource version"}})
                    .to_string(),
                    (true, _) => std::future::pending().await,
                };
                let response = http::Response::builder()
                    .status(200)
                    .header("content-type", "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from(body)))?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    /// A Work queued by a listed object must find that object in the cache: after a relist
    /// the reflector holds the old state until the list is complete, so the events of a list
    /// come once it is (and what the relist no longer has comes as deleted).
    #[tokio::test]
    async fn a_relist_is_handed_out_once_the_cache_holds_it() {
        let clients = flotilla_member::StaticMemberClients::new();
        clients.insert("m1", relisting_member());
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let cache_slot = Arc::new(std::sync::OnceLock::<std::sync::Weak<MemberCache>>::new());
        let (out, slot) = (seen.clone(), cache_slot.clone());
        let handler: Handler = Arc::new(move |event| {
            let (what, key, object) = match &event {
                MemberEvent::Applied {
                    key,
                    object,
                    initial,
                } => (if *initial { "listed" } else { "applied" }, key, object),
                MemberEvent::Deleted { key, object } => ("deleted", key, object),
            };
            let name = object.metadata.name.clone().unwrap_or_default();
            let cached = match slot.get().and_then(std::sync::Weak::upgrade) {
                Some(cache) => match cache.get(key, "x", &name) {
                    Cached::Synced(Some(o)) => o.data["status"]["readyReplicas"].to_string(),
                    Cached::Synced(None) => "-".to_owned(),
                    Cached::Unknown => "unknown".to_owned(),
                },
                None => "no cache".to_owned(),
            };
            out.lock().push(format!(
                "{what} {name}={} cached {cached}",
                object.data["status"]["readyReplicas"]
            ));
        });
        let cache = Arc::new(MemberCache::new(Arc::new(clients)));
        cache.subscribe(handler);
        cache_slot.set(Arc::downgrade(&cache)).expect("set once");
        let resource = ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&());
        cache
            .use_informers("work", vec![(key("m1", "Deployment"), resource)])
            .await
            .expect("informer");
        let want = [
            "listed a=1 cached 1",
            "listed b=1 cached 1",
            "deleted b=1 cached -",
            "listed a=3 cached 3",
            "listed c=2 cached 2",
        ];
        for _ in 0..600 {
            if seen.lock().len() >= want.len() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(*seen.lock(), want);
    }
}
