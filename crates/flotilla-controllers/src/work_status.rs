//! The work-status controller (Karmada's `work-status-controller`): reflects the status of the
//! member objects of every applied Work into `Work.status.manifestStatuses` — the interpreter's
//! reflected status ([`crate::interpreter::reflect`]) and health
//! ([`crate::interpreter::health`]) — writing only when they changed.
//!
//! Member objects are watched, not polled: for the kinds its applied Works carry, each member
//! gets a dynamic informer (started when the first Work needs it, stopped with the last), and an
//! event on an object queues the Work named by its `work.karmada.io/{namespace,name}`
//! annotations. The scope is the execution controller's: Push clusters in the controller
//! manager, the agent's own cluster in the agent.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    Cluster, JsonText, ManifestStatus, ResourceIdentifier, WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION, Work, names,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Backoff, Priority, Shared, Shutdown, WorkQueue};
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::execution::apply::{api_message, as_value};
use crate::execution::{WorkKey, is_ready};
use crate::interpreter::health::{Health, interpret};
use crate::interpreter::reflect::{ReflectError, reflect_status};
use crate::manager::{Context, ControllerTask};
use crate::member_cache::{Cached, InformerKey, MemberCache, MemberEvent, ResolveError};

/// The `--controllers` name.
pub const NAME: &str = "workStatus";
const REPORTER: &str = "work-status-controller";
const WORKERS: usize = 8;
const BACKOFF: Backoff = Backoff {
    base: Duration::from_millis(5),
    max: Duration::from_secs(1000),
};

/// Starts the controller (the `CONTROLLERS` entry).
pub fn start(ctx: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { WorkStatus::new(ctx).run(shutdown).await })
}

#[derive(Debug, thiserror::Error)]
enum StatusError {
    #[error("cluster({0}) not found")]
    ClusterNotFound(String),
    #[error("cluster({0}) not ready")]
    ClusterNotReady(String),
    #[error("{0}")]
    Member(#[from] flotilla_member::MemberError),
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    #[error("{0}")]
    Reflect(#[from] ReflectError),
    /// A ResourceInterpreterCustomization's `ReflectStatus` failed.
    #[error("{0}")]
    Customized(String),
    #[error("{}", api_message(.0))]
    Kube(#[from] kube::Error),
}

struct WorkStatus {
    ctx: Context,
    queue: WorkQueue<WorkKey>,
    works: Store<Work>,
    clusters: Store<Cluster>,
    members: Arc<MemberCache>,
    /// Per Work: generation and whether it was applied when last seen.
    seen: Mutex<HashMap<WorkKey, (i64, bool)>>,
    recorder: Recorder,
    /// The shared informers behind `works` and `clusters`.
    informers: (Shared<Work>, Shared<Cluster>),
}

impl WorkStatus {
    fn new(ctx: Context) -> Arc<Self> {
        let informers = (ctx.member_works(), ctx.informers.all::<Cluster>());
        let recorder = Recorder::new(
            ctx.client.clone(),
            Reporter {
                controller: REPORTER.into(),
                instance: None,
            },
        );
        let queue: WorkQueue<WorkKey> = WorkQueue::named_with("work-status-controller", BACKOFF);
        let events = queue.clone();
        let members = ctx.member_objects.clone();
        members.subscribe(Arc::new(move |event| {
            let (object, initial) = match &event {
                MemberEvent::Applied {
                    object, initial, ..
                } => (object, *initial),
                MemberEvent::Deleted { object, .. } => (object, false),
            };
            if let Some(work) = WorkKey::from_member_object(object) {
                let priority = if initial {
                    Priority::Low
                } else {
                    Priority::High
                };
                events.add_with(work, priority);
            }
        }));
        Arc::new(Self {
            ctx,
            queue,
            works: informers.0.store(),
            clusters: informers.1.store(),
            members,
            seen: Mutex::new(HashMap::new()),
            recorder,
            informers,
        })
    }

    async fn run(self: Arc<Self>, shutdown: Shutdown) {
        let mut tasks = Tasks::new();
        let me = self.clone();
        tasks.subscribe(&self.informers.0, move |event| me.work_event(event));
        let me = self.clone();
        tasks.subscribe(&self.informers.1, move |event| me.cluster_event(event));
        let ready = async {
            self.informers.1.wait_until_ready().await;
            self.informers.0.wait_until_ready().await;
            self.ctx.interpreter.ready().await;
        };
        until_ready(&shutdown, ready).await;
        let me = self.clone();
        tasks.workers(
            &self.queue,
            WORKERS,
            move |key| {
                let me = me.clone();
                async move { me.reconcile(&key).await }
            },
            |key, error| tracing::warn!(work = %key, %error, "reflecting work status failed"),
        );
        shutdown.cancelled().await;
        self.queue.shut_down();
        tasks.abort();
    }

    fn work_event(&self, event: watcher::Event<&Work>) {
        match event {
            watcher::Event::Apply(work) => self.work_seen(work, Priority::High),
            watcher::Event::InitApply(work) => self.work_seen(work, Priority::Low),
            watcher::Event::Delete(work) => {
                let key = WorkKey::of(work);
                self.seen.lock().remove(&key);
                self.queue.add(key);
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }

    /// A Work matters when its manifests change or it becomes (un)applied.
    fn work_seen(&self, work: &Work, priority: Priority) {
        let Some(namespace) = work.metadata.namespace.as_deref() else {
            return;
        };
        if names::cluster_name(namespace).is_err() {
            return;
        }
        let key = WorkKey::of(work);
        let shape = (
            work.metadata.generation.unwrap_or(0),
            work.is_applied() && !work.is_deleting(),
        );
        if self.seen.lock().insert(key.clone(), shape) == Some(shape) {
            return;
        }
        self.queue.add_with(key, priority);
    }

    fn cluster_event(&self, event: watcher::Event<&Cluster>) {
        if let watcher::Event::Delete(cluster) = event {
            self.members.forget_cluster(cluster.name());
        }
    }

    async fn reconcile(&self, key: &WorkKey) -> Result<(), StatusError> {
        // Named apart from the execution controller's users of the shared member informers.
        let user = format!("{NAME}/{key}");
        let reference = ObjectRef::<Work>::new(&key.name).within(&key.namespace);
        let Some(work) = self.works.get(&reference) else {
            self.members.release(&user);
            return Ok(());
        };
        if work.is_deleting() || !work.is_applied() {
            self.members.release(&user);
            return Ok(());
        }
        let Ok(cluster_name) = names::cluster_name(&key.namespace) else {
            return Ok(());
        };
        if let Some(own) = &self.ctx.cluster
            && own != cluster_name
        {
            return Ok(());
        }
        let cluster = self
            .clusters
            .get(&ObjectRef::new(cluster_name))
            .ok_or_else(|| StatusError::ClusterNotFound(cluster_name.to_owned()))?;
        if self.ctx.cluster.is_none() && cluster.spec.sync_mode != "Push" {
            return Ok(());
        }
        if !is_ready(&cluster) {
            return Err(StatusError::ClusterNotReady(cluster_name.to_owned()));
        }
        let client = self.ctx.members.client(cluster_name).await?;
        let manifests = work.spec.workload.values();
        let mut targets = Vec::new();
        for manifest in &manifests {
            let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
            let kind = manifest["kind"].as_str().unwrap_or_default();
            let resolved = self
                .members
                .resolve(cluster_name, api_version, kind)
                .await?;
            let informer = InformerKey {
                cluster: cluster_name.to_owned(),
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            };
            targets.push((informer, resolved));
        }
        self.members
            .use_informers(
                &user,
                targets
                    .iter()
                    .map(|(k, r)| (k.clone(), r.resource.clone()))
                    .collect(),
            )
            .await?;
        let existing = work
            .status
            .as_ref()
            .map(|s| s.manifest_statuses.clone())
            .unwrap_or_default();
        let mut statuses = Vec::new();
        let mut reports = Vec::new();
        for (ordinal, (manifest, (informer, resolved))) in
            manifests.iter().zip(&targets).enumerate()
        {
            let identifier = identifier(ordinal, manifest, resolved.namespaced);
            let namespace = identifier.namespace.clone();
            let name = identifier.name.clone();
            let observed = match self.members.get(informer, &namespace, &name) {
                Cached::Synced(object) => object.map(|o| as_value(&o, manifest)),
                Cached::Unknown => {
                    let api: Api<kube::api::DynamicObject> = if resolved.namespaced {
                        Api::namespaced_with(client.clone(), &namespace, &resolved.resource)
                    } else {
                        Api::all_with(client.clone(), &resolved.resource)
                    };
                    api.get_opt(&name).await?.map(|o| as_value(&o, manifest))
                }
            };
            let Some(observed) = observed.filter(|o| belongs_to(o, key)) else {
                // Not there (yet): keep what was recorded for it.
                statuses.extend(
                    existing
                        .iter()
                        .find(|s| s.identifier == identifier)
                        .cloned(),
                );
                continue;
            };
            let reflected = match self.ctx.interpreter.reflect_status(&observed).await {
                Some(customized) => customized
                    .map(Some)
                    .map_err(|e| StatusError::Customized(e.to_string())),
                None => reflect_status(&observed).map_err(StatusError::from),
            };
            let status = match reflected {
                Ok(status) => status,
                Err(error) => {
                    self.event(
                        &work,
                        EventType::Warning,
                        "ReflectStatusFailed",
                        format!(
                            "Reflect status for object({}/{}/{}) failed, err: {error}.",
                            identifier.kind, namespace, name
                        ),
                    )
                    .await;
                    return Err(error);
                }
            };
            let verdict: Option<Result<bool, String>> =
                match self.ctx.interpreter.interpret_health(&observed).await {
                    Some(customized) => Some(customized.map_err(|e| e.to_string())),
                    None => interpret(&observed).map(|v| v.map_err(|e| e.to_string())),
                };
            let health = match &verdict {
                None | Some(Ok(true)) => Health::Healthy,
                Some(Ok(false)) => Health::Unhealthy,
                Some(Err(error)) => {
                    tracing::debug!(%error, "health interpretation failed");
                    Health::Unknown
                }
            };
            let reflected = ManifestStatus {
                identifier,
                status: status.as_ref().map(JsonText::new),
                health: health.as_str().to_owned(),
            };
            // Karmada reports every reflection; here only the ones that change the Work.
            if !existing.contains(&reflected) {
                reports.extend(reflected_events(&reflected.identifier, verdict.as_ref()));
            }
            statuses.push(reflected);
        }
        if statuses == existing {
            return Ok(());
        }
        let patch = json!({"status": {"manifestStatuses": statuses}});
        // Read for its versions only (the informer brings the Work back).
        match key.patch_status(&self.ctx.client, &patch).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        }
        for (type_, reason, note) in reports {
            self.event(&work, type_, reason, note).await;
        }
        Ok(())
    }

    async fn event(&self, work: &Work, type_: EventType, reason: &str, note: String) {
        use kube::Resource;
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: reason.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &work.object_ref(&())).await {
            tracing::debug!(%error, "publishing an event");
        }
    }
}

/// Karmada's identifier of a manifest (it leaves `resource` empty).
fn identifier(ordinal: usize, manifest: &Value, namespaced: bool) -> ResourceIdentifier {
    let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    let meta = &manifest["metadata"];
    ResourceIdentifier {
        ordinal: i32::try_from(ordinal).unwrap_or(i32::MAX),
        group: group.to_owned(),
        version: version.to_owned(),
        kind: manifest["kind"].as_str().unwrap_or_default().to_owned(),
        resource: String::new(),
        namespace: if namespaced {
            meta["namespace"].as_str().unwrap_or_default().to_owned()
        } else {
            String::new()
        },
        name: meta["name"].as_str().unwrap_or_default().to_owned(),
    }
}

/// Karmada's events on a Work for one object whose status was reflected:
/// `ReflectStatusSucceed`, then the health verdict (`InterpretHealthSucceed`, or
/// `InterpretHealthFailed`; none for a kind without a health rule).
fn reflected_events<E: std::fmt::Display>(
    id: &ResourceIdentifier,
    verdict: Option<&Result<bool, E>>,
) -> Vec<(EventType, &'static str, String)> {
    let object = format!("{}/{}/{}", id.kind, id.namespace, id.name);
    let mut events = vec![(
        EventType::Normal,
        "ReflectStatusSucceed",
        format!("Reflect status for object({object}) succeed."),
    )];
    events.extend(verdict.map(|verdict| match verdict {
        Ok(healthy) => (
            EventType::Normal,
            "InterpretHealthSucceed",
            format!(
                "Interpret health of object({object}) as {}.",
                if *healthy { "healthy" } else { "unhealthy" }
            ),
        ),
        Err(error) => (
            EventType::Warning,
            "InterpretHealthFailed",
            format!("Interpret health of object({object}) failed, err: {error}."),
        ),
    }));
    events
}

/// Whether the member object was applied from this Work (its annotations name it).
fn belongs_to(object: &Value, work: &WorkKey) -> bool {
    let annotations = &object["metadata"]["annotations"];
    annotations[WORK_NAMESPACE_ANNOTATION].as_str() == Some(work.namespace.as_str())
        && annotations[WORK_NAME_ANNOTATION].as_str() == Some(work.name.as_str())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // Karmada's work-status-controller cases (`work_status_controller_test.go`), restated.
    mod karmada_work_status;

    #[test]
    fn identifier_splits_the_api_version_and_leaves_resource_empty() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"}});
        let id = identifier(0, &deployment, true);
        assert_eq!(
            serde_json::to_value(&id).expect("json"),
            json!({"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                "resource": "", "namespace": "default", "name": "web"})
        );
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
        assert_eq!(
            serde_json::to_value(identifier(0, &namespace, false)).expect("json"),
            json!({"ordinal": 0, "version": "v1", "kind": "Namespace", "resource": "", "name": "ns"})
        );
    }

    #[test]
    fn reflection_reports_status_and_health_as_karmada_does() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "generation": 1},
            "status": {"observedGeneration": 1}});
        let id = identifier(0, &deployment, true);
        let events = reflected_events(&id, interpret(&deployment).as_ref());
        assert_eq!(
            events,
            vec![
                (
                    EventType::Normal,
                    "ReflectStatusSucceed",
                    "Reflect status for object(Deployment/default/web) succeed.".to_owned()
                ),
                (
                    EventType::Normal,
                    "InterpretHealthSucceed",
                    "Interpret health of object(Deployment/default/web) as healthy.".to_owned()
                ),
            ]
        );
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"}, "status": {"phase": "Pending"}});
        let events = reflected_events(&identifier(0, &pod, true), interpret(&pod).as_ref());
        assert_eq!(
            events[1].2,
            "Interpret health of object(Pod/default/p) as unhealthy."
        );
        let broken = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"}, "status": {"phase": 7}});
        let events = reflected_events(&identifier(0, &broken, true), interpret(&broken).as_ref());
        assert_eq!(
            (events[1].0, events[1].1),
            (EventType::Warning, "InterpretHealthFailed")
        );
        assert!(
            events[1]
                .2
                .starts_with("Interpret health of object(Pod/default/p) failed, err: ")
        );
        // A kind without a health rule: Healthy, and no health event.
        let map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let events = reflected_events(&identifier(0, &map, false), interpret(&map).as_ref());
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].2,
            "Reflect status for object(ConfigMap//c) succeed."
        );
    }

    #[test]
    fn only_objects_annotated_with_the_work_are_reflected() {
        let key = WorkKey {
            namespace: "karmada-es-m1".into(),
            name: "web-687f7fb96f".into(),
        };
        let mine = json!({"metadata": {"annotations": {
            "work.karmada.io/namespace": "karmada-es-m1", "work.karmada.io/name": "web-687f7fb96f"}}});
        let other = json!({"metadata": {"annotations": {
            "work.karmada.io/namespace": "karmada-es-m1", "work.karmada.io/name": "other"}}});
        assert!(belongs_to(&mine, &key));
        assert!(!belongs_to(&other, &key));
        assert!(!belongs_to(&json!({"metadata": {}}), &key));
    }
}
