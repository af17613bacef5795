//! Per-member dynamic informers for the kinds Works carry, shared by the Works of one controller:
//! API resolution through the member's discovery (cached per group version), one reflector per
//! (cluster, kind) started when the first Work needs it and stopped when the last one is gone,
//! and a handler called with every member event. Only objects labelled `karmada.io/managed=true`
//! are watched: what Flotilla never took over needs no cache (an unmanaged object is found by a
//! direct read when a create reports it exists).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use flotilla_api::karmada::MANAGED_BY_KARMADA_LABEL;
use flotilla_member::{MemberClients, MemberError};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersion;
use kube::discovery::{self, Scope};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use parking_lot::Mutex;

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
    /// Added or changed; `initial` while the informer lists.
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
    #[error("discovery of {api_version}: {source}")]
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
    store: Store<DynamicObject>,
    resource: ApiResource,
    synced: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Informer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The informers of one controller.
pub struct MemberCache {
    members: Arc<dyn MemberClients>,
    handler: Handler,
    /// By (cluster, apiVersion).
    discovery: Mutex<HashMap<(String, String), Kinds>>,
    informers: Mutex<HashMap<InformerKey, Informer>>,
    /// Informers each user (a Work key) needs, and how many users each informer has.
    users: Mutex<Users>,
}

#[derive(Default)]
struct Users {
    by_user: HashMap<String, BTreeSet<InformerKey>>,
    count: HashMap<InformerKey, usize>,
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
    pub fn new(members: Arc<dyn MemberClients>, handler: Handler) -> Self {
        Self {
            members,
            handler,
            discovery: Mutex::new(HashMap::new()),
            informers: Mutex::new(HashMap::new()),
            users: Mutex::new(Users::default()),
        }
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
        let mut reference = ObjectRef::<DynamicObject>::new_with(name, informer.resource.clone());
        if !namespace.is_empty() {
            reference = reference.within(namespace);
        }
        Cached::Synced(informer.store.get(&reference))
    }

    fn set_user(&self, user: &str, keys: BTreeSet<InformerKey>) -> Vec<InformerKey> {
        let mut users = self.users.lock();
        let previous = if keys.is_empty() {
            users.by_user.remove(user).unwrap_or_default()
        } else {
            users
                .by_user
                .insert(user.to_owned(), keys.clone())
                .unwrap_or_default()
        };
        for added in keys.difference(&previous) {
            *users.count.entry(added.clone()).or_insert(0) += 1;
        }
        let mut stop = Vec::new();
        for removed in previous.difference(&keys) {
            if let Some(count) = users.count.get_mut(removed) {
                *count -= 1;
                if *count == 0 {
                    users.count.remove(removed);
                    stop.push(removed.clone());
                }
            }
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
        let api: Api<DynamicObject> = Api::all_with(client, &resource);
        let writer = reflector::store::Writer::new(resource.clone());
        let store = writer.as_reader();
        let synced = Arc::new(AtomicBool::new(false));
        let config = watcher::Config::default().labels(&format!("{MANAGED_BY_KARMADA_LABEL}=true"));
        let stream = reflector::reflector(writer, watcher::watcher(api, config)).default_backoff();
        let handler = self.handler.clone();
        let flag = synced.clone();
        let task = tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::Apply(object)) => handler(MemberEvent::Applied {
                        key: key.clone(),
                        object: Arc::new(object),
                        initial: false,
                    }),
                    Ok(Event::InitApply(object)) => handler(MemberEvent::Applied {
                        key: key.clone(),
                        object: Arc::new(object),
                        initial: true,
                    }),
                    Ok(Event::Delete(object)) => handler(MemberEvent::Deleted {
                        key: key.clone(),
                        object: Arc::new(object),
                    }),
                    Ok(Event::InitDone) => flag.store(true, Ordering::Release),
                    Ok(Event::Init) => {}
                    Err(error) => {
                        tracing::debug!(cluster = %key.cluster, %error, "member watch")
                    }
                }
            }
        });
        Informer {
            store,
            resource,
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
        let cache = MemberCache::new(
            Arc::new(flotilla_member::StaticMemberClients::new()),
            Arc::new(|_| {}),
        );
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
}
