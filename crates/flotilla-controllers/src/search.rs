//! karmada-search's registry controller: from the ResourceRegistries and the Clusters, which
//! member clusters cache which resources (`search/cache.rs` keeps and serves them).
//!
//! A registry selects clusters with its `targetCluster` (Karmada's placement `ClusterAffinity`:
//! names, labels, fields, exclusions) and kinds with its `resourceSelectors` (`apiVersion`,
//! `kind`, optionally one `namespace`). Only Ready clusters not being deleted are cached, and
//! only for kinds their `apiEnablements` do not rule out. Kinds resolve to resources through the
//! control plane's discovery, as Karmada's RESTMapper does. Two registries naming one
//! (cluster, resource) merge their namespaces. Any Cluster or ResourceRegistry change
//! recomputes the whole picture (one key, as in Karmada); caches whose (cluster, resource,
//! namespaces) stay the same keep running.
//!
//! Unlike the other controllers this one is not leader-elected: every API server replica
//! serves search requests from its own cache.

pub mod cache;
pub mod version;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::affinity::cluster_matches;
use flotilla_api::karmada::{ApiEnablementStatus, Cluster, ResourceRegistry};
use flotilla_member::MemberClients;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Informers, Shutdown, WorkQueue};
use kube::runtime::watcher::Event as WatchEvent;
use tracing::{info, warn};

pub use cache::{Desired, Gvr, Namespaces, SearchCache};

use crate::resources::Resources;

/// Computes what `registries` ask of `clusters`; `resolve` maps `(apiVersion, kind)` to the
/// served resource (`None`: not served, the selector is skipped as Karmada logs and skips it).
pub fn desired<'a>(
    registries: impl IntoIterator<Item = &'a ResourceRegistry>,
    clusters: &[Arc<Cluster>],
    resolve: impl Fn(&str, &str) -> Option<(kube::api::ApiResource, bool)>,
) -> Desired {
    let mut desired = Desired::default();
    for registry in registries {
        let mut matched: BTreeMap<Gvr, cache::CachedResource> = BTreeMap::new();
        for selector in &registry.spec.resource_selectors {
            let Some((api, namespaced)) = resolve(&selector.api_version, &selector.kind) else {
                continue;
            };
            let gvr = Gvr {
                group: api.group.clone(),
                version: api.version.clone(),
                resource: api.plural.clone(),
            };
            desired.registered.insert(gvr.clone());
            let entry = matched.entry(gvr).or_insert_with(|| cache::CachedResource {
                api,
                namespaced,
                namespaces: Namespaces::default(),
            });
            if namespaced {
                entry.namespaces.add(&selector.namespace);
            } else {
                entry.namespaces = Namespaces::all();
            }
        }
        if matched.is_empty() {
            continue;
        }
        for cluster in clusters {
            if cluster.is_deleting()
                || !crate::execution::is_ready(cluster)
                || !cluster_matches(cluster, &registry.spec.target_cluster)
            {
                continue;
            }
            let resources = desired
                .clusters
                .entry(cluster.name().to_owned())
                .or_default();
            for (gvr, resource) in &matched {
                if cluster.api_enablement(&resource.api.api_version, &resource.api.kind)
                    == ApiEnablementStatus::Disabled
                {
                    continue;
                }
                match resources.get_mut(gvr) {
                    Some(existing) => existing.namespaces.merge(&resource.namespaces),
                    None => {
                        resources.insert(gvr.clone(), resource.clone());
                    }
                }
            }
        }
    }
    desired
        .clusters
        .retain(|_, resources| !resources.is_empty());
    desired
}

/// Runs the controller until `shutdown`, keeping `cache` in line with the registries.
pub async fn run(
    client: kube::Client,
    members: Arc<dyn MemberClients>,
    cache: Arc<SearchCache>,
    shutdown: Shutdown,
) {
    let informers = Informers::new(client.clone());
    let clusters = informers.all::<Cluster>();
    let registries = informers.all::<ResourceRegistry>();
    let queue: WorkQueue<()> = WorkQueue::named("resource-registry-controller");
    let mut tasks = Tasks::new();
    let q = queue.clone();
    // What of a Cluster the picture depends on (its heartbeats change none of it, and a
    // registry naming a kind the control plane does not serve costs a discovery per run).
    let mut seen: HashMap<String, serde_json::Value> = HashMap::new();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| match event {
        WatchEvent::Apply(c) | WatchEvent::InitApply(c) => {
            let observed = serde_json::json!([
                c.metadata.labels,
                c.spec,
                crate::execution::is_ready(c),
                c.is_deleting(),
                c.status.as_ref().map(|s| &s.api_enablements),
            ]);
            if seen.insert(c.name().to_owned(), observed.clone()) != Some(observed) {
                q.add(());
            }
        }
        WatchEvent::Delete(c) => {
            seen.remove(c.name());
            q.add(());
        }
        WatchEvent::Init | WatchEvent::InitDone => {}
    });
    let q = queue.clone();
    tasks.subscribe(&registries, move |event: WatchEvent<&ResourceRegistry>| {
        if !matches!(event, WatchEvent::Init) {
            q.add(());
        }
    });
    let ready = async {
        clusters.wait_until_ready().await;
        registries.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let resources = Arc::new(Resources::new(client));
    let (cluster_store, registry_store) = (clusters.store(), registries.store());
    tasks.workers(
        &queue,
        1,
        move |()| {
            let (clusters, registries) = (cluster_store.state(), registry_store.state());
            let (resources, members, cache) = (resources.clone(), members.clone(), cache.clone());
            async move {
                let mut kinds = BTreeMap::new();
                let wanted: BTreeSet<(String, String)> = registries
                    .iter()
                    .flat_map(|r| r.spec.resource_selectors.iter())
                    .map(|s| (s.api_version.clone(), s.kind.clone()))
                    .collect();
                for (api_version, kind) in wanted {
                    match resources.resolve(&api_version, &kind).await {
                        Ok(served) => {
                            kinds.insert(
                                (api_version, kind),
                                (served.resource.clone(), served.namespaced),
                            );
                        }
                        Err(error) => {
                            warn!(%api_version, %kind, %error, "search: a registry names a kind the control plane does not serve");
                        }
                    }
                }
                let desired = desired(registries.iter().map(|r| r.as_ref()), &clusters, |v, k| {
                    kinds.get(&(v.to_owned(), k.to_owned())).cloned()
                });
                cache.update(&desired, &members);
                Ok::<(), std::convert::Infallible>(())
            }
        },
        |_, error: &std::convert::Infallible| match *error {},
    );
    info!("search registry controller running");
    shutdown.cancelled().await;
    queue.shut_down();
    tasks.abort();
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::{ClusterStatus, SearchResourceSelector};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use kube::api::ApiResource;

    use super::*;

    fn cluster(name: &str, ready: bool, labels: &[(&str, &str)]) -> Arc<Cluster> {
        let mut cluster = Cluster::default();
        cluster.metadata.name = Some(name.into());
        cluster.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        cluster.status = Some(ClusterStatus {
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                reason: String::new(),
                message: String::new(),
                last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
                observed_generation: None,
            }],
            ..ClusterStatus::default()
        });
        Arc::new(cluster)
    }

    fn registry(names: &[&str], selectors: &[(&str, &str, &str)]) -> ResourceRegistry {
        let mut registry = ResourceRegistry::default();
        registry.spec.target_cluster.cluster_names =
            names.iter().map(|n| (*n).to_owned()).collect();
        registry.spec.resource_selectors = selectors
            .iter()
            .map(|(api_version, kind, namespace)| SearchResourceSelector {
                api_version: (*api_version).into(),
                kind: (*kind).into(),
                namespace: (*namespace).into(),
            })
            .collect();
        registry
    }

    fn resolve(api_version: &str, kind: &str) -> Option<(ApiResource, bool)> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let (plural, namespaced) = match kind {
            "Node" => ("nodes", false),
            "Secret" => ("secrets", true),
            "Deployment" => ("deployments", true),
            _ => return None,
        };
        Some((
            ApiResource {
                group: group.into(),
                version: version.into(),
                api_version: api_version.into(),
                kind: kind.into(),
                plural: plural.into(),
            },
            namespaced,
        ))
    }

    fn gvr(resource: &str) -> Gvr {
        let group = if resource == "deployments" {
            "apps"
        } else {
            ""
        };
        Gvr {
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
        }
    }

    #[test]
    fn ready_matching_clusters_cache_the_selected_kinds_with_merged_namespaces() {
        let clusters = [
            cluster("m1", true, &[]),
            cluster("m2", true, &[]),
            cluster("down", false, &[]),
        ];
        let registries = [
            registry(
                &["m1", "down"],
                &[("v1", "Secret", "a"), ("v1", "Node", "ignored")],
            ),
            registry(
                &["m1"],
                &[("v1", "Secret", "b"), ("example.io/v1", "Widget", "")],
            ),
            registry(&["m2"], &[("apps/v1", "Deployment", "")]),
        ];
        let desired = desired(registries.iter(), &clusters, resolve);
        // The unready cluster caches nothing; unknown kinds are skipped.
        assert_eq!(
            desired.clusters.keys().cloned().collect::<Vec<_>>(),
            ["m1", "m2"]
        );
        assert_eq!(
            desired.registered,
            [gvr("deployments"), gvr("nodes"), gvr("secrets")].into()
        );
        let m1 = &desired.clusters["m1"];
        let secrets = &m1[&gvr("secrets")].namespaces;
        assert!(secrets.contains("a") && secrets.contains("b") && !secrets.contains("c"));
        // A cluster-scoped kind ignores the selector's namespace.
        assert!(m1[&gvr("nodes")].namespaces.contains("anything"));
        assert!(
            desired.clusters["m2"][&gvr("deployments")]
                .namespaces
                .contains("x")
        );
    }

    #[test]
    fn label_selectors_follow_the_clusters_labels() {
        let mut by_label = registry(&[], &[("v1", "Node", "")]);
        by_label.spec.target_cluster.label_selector = Some(
            serde_json::from_value(serde_json::json!({
                "matchExpressions": [{"key": "search", "operator": "Exists"}]
            }))
            .unwrap(),
        );
        let unlabelled = [cluster("m1", true, &[])];
        assert!(
            desired([&by_label], &unlabelled, resolve)
                .clusters
                .is_empty()
        );
        let labelled = [cluster("m1", true, &[("search", "yes")])];
        assert!(
            desired([&by_label], &labelled, resolve)
                .clusters
                .contains_key("m1")
        );
    }
}
