//! What the bench watches on the control plane: every Work (applied per cluster, with the
//! replicas of its manifest) and the templates' aggregated status (ready), recorded as the
//! instant the watch first showed each condition.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use flotilla_api::karmada::Work;
use futures::TryStreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use kube::runtime::watcher;
use parking_lot::Mutex;
use tokio::sync::Notify;

use slim::{SlimDeployment, SlimWork};

/// `(namespace, name)` of a template.
pub type Key = (String, String);

/// One template's progress.
#[derive(Debug, Default)]
struct Progress {
    /// Replicas of the applied Work's manifest, per cluster (Applied=True only).
    applied: BTreeMap<String, i64>,
    /// When `applied` first covered every expected cluster with the expected total.
    applied_at: Option<Instant>,
    /// When the template's `status.readyReplicas` first reached its replicas.
    ready_at: Option<Instant>,
}

/// What a template must reach to count as applied.
#[derive(Debug, Clone)]
pub struct Expect {
    pub clusters: Vec<String>,
    pub replicas: i64,
}

#[derive(Debug, Default)]
struct State {
    expect: HashMap<Key, Expect>,
    progress: HashMap<Key, Progress>,
    applied: usize,
    ready: usize,
    works_applied: usize,
}

/// Shared view of the watches; [`Tracker::changed`] wakes waiters after every event.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    state: Arc<Mutex<State>>,
    changed: Arc<Notify>,
}

fn condition_true(work: &SlimWork, kind: &str) -> bool {
    work.status
        .conditions
        .iter()
        .any(|c| c.type_ == kind && c.status == "True")
}

impl Tracker {
    /// Registers what `key` must reach (before it is created, so no event is missed).
    pub fn expect(&self, key: Key, expect: Expect) {
        self.state.lock().expect.insert(key, expect);
    }

    /// Runs the two watches until one fails (the bench aborts the task at the end).
    pub async fn run(self, control: kube::Client) -> anyhow::Result<()> {
        let works = self.clone().watch_works(control.clone());
        let templates = self.watch_templates(control);
        tokio::try_join!(works, templates)?;
        Ok(())
    }

    async fn watch_works(self, control: kube::Client) -> anyhow::Result<()> {
        let api = Api::<SlimWork>::all(control);
        let stream = watcher(api, watcher::Config::default());
        futures::pin_mut!(stream);
        // The generation of each Work whose applied manifest was recorded: its later events
        // (status reports, most of them) are skipped without reading the manifest again, so
        // the bench's own watch costs the control plane's CPU figure little.
        let mut recorded: HashMap<(String, String), i64> = HashMap::new();
        while let Some(event) = stream.try_next().await.context("watch Works")? {
            let (watcher::Event::Apply(work) | watcher::Event::InitApply(work)) = event else {
                continue;
            };
            let now = Instant::now();
            let Some(cluster) = work
                .metadata
                .namespace
                .as_deref()
                .and_then(|n| n.strip_prefix("karmada-es-"))
            else {
                continue;
            };
            if !condition_true(&work, "Applied") {
                continue;
            }
            let id = (
                cluster.to_owned(),
                work.metadata.name.clone().unwrap_or_default(),
            );
            let generation = work.metadata.generation.unwrap_or(0);
            if recorded.get(&id) == Some(&generation) {
                continue;
            }
            recorded.insert(id, generation);
            let Some(manifest) = work.spec.workload.manifests.into_iter().next() else {
                continue;
            };
            if manifest.kind != "Deployment" {
                continue;
            }
            let key = (manifest.metadata.namespace, manifest.metadata.name);
            let replicas = manifest.spec.replicas.unwrap_or(1);
            let mut state = self.state.lock();
            let Some(expect) = state.expect.get(&key).cloned() else {
                continue;
            };
            let progress = state.progress.entry(key).or_default();
            let first = progress
                .applied
                .insert(cluster.to_owned(), replicas)
                .is_none();
            let mut newly_applied = false;
            if progress.applied_at.is_none()
                && expect
                    .clusters
                    .iter()
                    .all(|c| progress.applied.contains_key(c))
                && progress.applied.values().sum::<i64>() == expect.replicas
            {
                progress.applied_at = Some(now);
                newly_applied = true;
            }
            if first {
                state.works_applied += 1;
            }
            if newly_applied {
                state.applied += 1;
            }
            drop(state);
            self.changed.notify_waiters();
        }
        Ok(())
    }

    async fn watch_templates(self, control: kube::Client) -> anyhow::Result<()> {
        let api = Api::<SlimDeployment>::all(control);
        let stream = watcher(api, watcher::Config::default());
        futures::pin_mut!(stream);
        while let Some(event) = stream.try_next().await.context("watch Deployments")? {
            let (watcher::Event::Apply(d) | watcher::Event::InitApply(d)) = event else {
                continue;
            };
            let now = Instant::now();
            let key = (
                d.metadata.namespace.clone().unwrap_or_default(),
                d.metadata.name.clone().unwrap_or_default(),
            );
            let ready = d.status.ready_replicas.unwrap_or(0);
            let mut state = self.state.lock();
            let Some(expect) = state.expect.get(&key).cloned() else {
                continue;
            };
            if i64::from(ready) < expect.replicas {
                continue;
            }
            let progress = state.progress.entry(key).or_default();
            if progress.ready_at.is_none() {
                progress.ready_at = Some(now);
                state.ready += 1;
                drop(state);
                self.changed.notify_waiters();
            }
        }
        Ok(())
    }

    /// Waits until `done` holds for the counts (applied templates, ready templates, applied
    /// Works), or `limit` passes.
    pub async fn wait(
        &self,
        limit: std::time::Duration,
        done: impl Fn(usize, usize, usize) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            futures::pin_mut!(notified);
            notified.as_mut().enable();
            let (applied, ready, works) = self.counts();
            if done(applied, ready, works) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// (applied templates, ready templates, applied Works).
    pub fn counts(&self) -> (usize, usize, usize) {
        let state = self.state.lock();
        (state.applied, state.ready, state.works_applied)
    }

    /// When `key` was first applied and first ready.
    pub fn times(&self, key: &Key) -> (Option<Instant>, Option<Instant>) {
        let state = self.state.lock();
        state
            .progress
            .get(key)
            .map_or((None, None), |p| (p.applied_at, p.ready_at))
    }

    /// The keys [`Tracker::missing`] describes, sorted, at most `n`.
    pub fn missing_keys(&self, n: usize) -> Vec<Key> {
        let state = self.state.lock();
        let all_applied = state.applied >= state.expect.len();
        let mut out: Vec<Key> = state
            .expect
            .keys()
            .filter(|k| {
                state
                    .progress
                    .get(*k)
                    .is_none_or(|p| p.applied_at.is_none() || (all_applied && p.ready_at.is_none()))
            })
            .cloned()
            .collect();
        out.sort();
        out.truncate(n);
        out
    }

    /// Templates expected but not yet applied, or if all are, not yet ready (for a stall
    /// message), at most `n`.
    pub fn missing(&self, n: usize) -> Vec<String> {
        let keys = self.missing_keys(n);
        let state = self.state.lock();
        keys.into_iter()
            .map(|key| {
                let got = state.progress.get(&key).map(|p| &p.applied);
                let (ns, name) = &key;
                match state.expect.get(&key) {
                    Some(e) => format!(
                        "{ns}/{name} (want {:?} × {}, have {got:?})",
                        e.clusters, e.replicas
                    ),
                    None => format!("{ns}/{name}"),
                }
            })
            .collect()
    }
}

/// The parts of Works and Deployments the bench reads. Its watches run in the control plane's
/// process, so their decoding counts as control-plane CPU: decoded as `Work` and `Deployment`,
/// every managed-fields tree, pod template and manifest status of every event was built and
/// dropped. These types read the few members [`Tracker`] looks at and skip the rest.
mod slim {
    use std::borrow::Cow;

    use k8s_openapi::NamespaceResourceScope;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::{Deserialize, Deserializer};

    use super::{Deployment, Work};

    /// `metadata` as far as the watch (its resource version) and the bench read it.
    fn metadata<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Meta {
            name: Option<String>,
            namespace: Option<String>,
            resource_version: Option<String>,
            generation: Option<i64>,
        }
        let meta = Meta::deserialize(deserializer)?;
        Ok(ObjectMeta {
            name: meta.name,
            namespace: meta.namespace,
            resource_version: meta.resource_version,
            generation: meta.generation,
            ..ObjectMeta::default()
        })
    }

    /// Implements `kube::Resource` as the full type `$full` does.
    macro_rules! resource_like {
        ($slim:ty, $full:ty) => {
            impl kube::Resource for $slim {
                type DynamicType = ();
                type Scope = NamespaceResourceScope;

                fn kind(dt: &()) -> Cow<'_, str> {
                    <$full as kube::Resource>::kind(dt)
                }

                fn group(dt: &()) -> Cow<'_, str> {
                    <$full as kube::Resource>::group(dt)
                }

                fn version(dt: &()) -> Cow<'_, str> {
                    <$full as kube::Resource>::version(dt)
                }

                fn plural(dt: &()) -> Cow<'_, str> {
                    <$full as kube::Resource>::plural(dt)
                }

                fn meta(&self) -> &ObjectMeta {
                    &self.metadata
                }

                fn meta_mut(&mut self) -> &mut ObjectMeta {
                    &mut self.metadata
                }
            }
        };
    }

    #[derive(Debug, Clone, Deserialize)]
    pub struct SlimWork {
        #[serde(deserialize_with = "metadata")]
        pub metadata: ObjectMeta,
        #[serde(default)]
        pub spec: WorkSpec,
        #[serde(default)]
        pub status: WorkStatus,
    }
    resource_like!(SlimWork, Work);

    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct WorkSpec {
        #[serde(default)]
        pub workload: Workload,
    }

    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct Workload {
        #[serde(default)]
        pub manifests: Vec<Manifest>,
    }

    /// A manifest's kind, name and replicas.
    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct Manifest {
        #[serde(default)]
        pub kind: String,
        #[serde(default)]
        pub metadata: Named,
        #[serde(default)]
        pub spec: Replicas,
    }

    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct Named {
        #[serde(default)]
        pub namespace: String,
        #[serde(default)]
        pub name: String,
    }

    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct Replicas {
        pub replicas: Option<i64>,
    }

    #[derive(Debug, Clone, Default, Deserialize)]
    pub struct WorkStatus {
        #[serde(default)]
        pub conditions: Vec<Condition>,
    }

    #[derive(Debug, Clone, Deserialize)]
    pub struct Condition {
        #[serde(rename = "type")]
        pub type_: String,
        pub status: String,
    }

    #[derive(Debug, Clone, Deserialize)]
    pub struct SlimDeployment {
        #[serde(deserialize_with = "metadata")]
        pub metadata: ObjectMeta,
        #[serde(default)]
        pub status: DeploymentStatus,
    }
    resource_like!(SlimDeployment, Deployment);

    #[derive(Debug, Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct DeploymentStatus {
        pub ready_replicas: Option<i32>,
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_work_and_a_deployment_read_as_the_bench_needs_them() {
            let work: SlimWork = serde_json::from_value(serde_json::json!({
                "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
                "metadata": {"name": "w", "namespace": "karmada-es-m1", "resourceVersion": "7",
                    "generation": 2, "managedFields": [{"manager": "x", "fieldsV1": {"f:spec": {}}}]},
                "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 3, "template": {"spec": {"containers": []}}}}]}},
                "status": {"conditions": [{"type": "Applied", "status": "True", "reason": "r",
                    "message": "", "lastTransitionTime": "2026-12-06T00:00:00Z"}],
                    "manifestStatuses": [{"identifier": {}, "status": {"replicas": 3}}]},
            }))
            .expect("a Work");
            assert_eq!(work.metadata.resource_version.as_deref(), Some("7"));
            assert_eq!(work.metadata.generation, Some(2));
            let manifest = &work.spec.workload.manifests[0];
            assert_eq!(
                (manifest.kind.as_str(), manifest.metadata.namespace.as_str()),
                ("Deployment", "default")
            );
            assert_eq!(manifest.spec.replicas, Some(3));
            assert!(super::super::condition_true(&work, "Applied"));
            assert!(!super::super::condition_true(&work, "Available"));

            let deployment: SlimDeployment = serde_json::from_value(serde_json::json!({
                "metadata": {"name": "web", "namespace": "default", "resourceVersion": "9"},
                "spec": {"replicas": 3},
                "status": {"readyReplicas": 2, "replicas": 3},
            }))
            .expect("a Deployment");
            assert_eq!(deployment.status.ready_replicas, Some(2));
            assert_eq!(
                <SlimDeployment as kube::Resource>::plural(&()),
                "deployments"
            );
            assert_eq!(<SlimWork as kube::Resource>::group(&()), "work.karmada.io");
        }
    }
}
