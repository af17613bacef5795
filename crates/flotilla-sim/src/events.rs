//! Kubernetes Events as the real components record them (what `kubectl describe` shows): a
//! repeat of the same Event (object, type, reason, message, component) is counted into the one
//! already written (`count`, `lastTimestamp`: `kubectl describe`'s `(x4 over 2m)`), as
//! client-go's recorder does, instead of writing another.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use k8s_openapi::api::core::v1::Event;
use parking_lot::Mutex;

use crate::pod::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::cluster::{Ctx, now};

/// Records a `Warning` event about a pod from `component`.
pub async fn warn(ctx: &Ctx, pod: &Pod, reason: &str, message: &str, component: &str) {
    record(ctx, pod, "Warning", reason, message, component).await;
}

/// Records a `Normal` event about a pod from `component`.
pub async fn normal(ctx: &Ctx, pod: &Pod, reason: &str, message: &str, component: &str) {
    record(ctx, pod, "Normal", reason, message, component).await;
}

async fn record(ctx: &Ctx, pod: &Pod, kind: &str, reason: &str, message: &str, component: &str) {
    let involved = Involved {
        kind: "Pod",
        api_version: "v1",
        namespace: pod.metadata.namespace.as_deref().unwrap_or_default(),
        name: pod.metadata.name.as_deref().unwrap_or_default(),
        uid: pod.metadata.uid.as_deref(),
        resource_version: pod.metadata.resource_version.as_deref(),
    };
    record_about(ctx, &involved, kind, reason, message, component).await;
}

/// The object an Event is about.
#[derive(Debug, Clone, Copy)]
pub struct Involved<'a> {
    pub kind: &'a str,
    pub api_version: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: Option<&'a str>,
    pub resource_version: Option<&'a str>,
}

impl<'a> Involved<'a> {
    /// The object of `kind` (in `api_version`) with metadata `meta`.
    pub fn of(
        kind: &'a str,
        api_version: &'a str,
        meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> Self {
        Involved {
            kind,
            api_version,
            namespace: meta.namespace.as_deref().unwrap_or_default(),
            name: meta.name.as_deref().unwrap_or_default(),
            uid: meta.uid.as_deref(),
            resource_version: meta.resource_version.as_deref(),
        }
    }
}

/// Records an event of type `kind` (`Normal`, `Warning`) about `involved` from `component`.
pub async fn record_about(
    ctx: &Ctx,
    involved: &Involved<'_>,
    kind: &str,
    reason: &str,
    message: &str,
    component: &str,
) {
    let (ns, name) = (involved.namespace, involved.name);
    let at = now();
    let key = repeat_key(involved, [kind, reason, message, component]);
    if let Some((event, count)) = ctx.events.get(key) {
        let patch = json!({"count": count + 1, "lastTimestamp": at});
        match crate::writes::merge_patch::<Event>(ctx, Some(ns), &event, None, &patch).await {
            Ok(()) => {
                ctx.events.remember(key, event, count + 1);
                return;
            }
            // Expired (the Event TTL) or deleted: recorded afresh below.
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                tracing::debug!(cluster = %ctx.name, %error, "cannot count a repeated event");
                return;
            }
        }
    }
    let nanos = jiff::Timestamp::now().as_nanosecond();
    let event: Event = match serde_json::from_value(json!({
        "metadata": {"name": format!("{name}.{nanos:x}"), "namespace": ns},
        "involvedObject": {
            "kind": involved.kind, "apiVersion": involved.api_version, "namespace": ns,
            "name": name, "uid": involved.uid, "resourceVersion": involved.resource_version,
        },
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": component},
        "reportingComponent": component,
        "reportingInstance": format!("{component}-{}", ctx.name),
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 1,
    })) {
        Ok(event) => event,
        Err(error) => {
            tracing::warn!(%error, "cannot build an event");
            return;
        }
    };
    let api: Api<Event> = Api::namespaced(ctx.client.clone(), ns);
    match api.create(&PostParams::default(), &event).await {
        Ok(_) => ctx
            .events
            .remember(key, event.metadata.name.unwrap_or_default(), 1),
        Err(error) => tracing::debug!(cluster = %ctx.name, %error, "cannot record an event"),
    }
}

/// How many distinct recent Events a cluster remembers for counting repeats (client-go keeps
/// an LRU of 4096 per recorder; a simulated cluster has many recorders' worth in one).
const REMEMBERED: usize = 1024;

/// The Events a cluster recorded: a hash of what makes a repeat → (Event name, count).
#[derive(Debug, Default)]
pub struct Repeats(Mutex<HashMap<u64, (String, i32)>>);

impl Repeats {
    fn get(&self, key: u64) -> Option<(String, i32)> {
        self.0.lock().get(&key).cloned()
    }

    fn remember(&self, key: u64, name: String, count: i32) {
        let mut seen = self.0.lock();
        if seen.len() >= REMEMBERED && !seen.contains_key(&key) {
            seen.clear();
        }
        seen.insert(key, (name, count));
    }
}

fn repeat_key(involved: &Involved<'_>, parts: [&str; 4]) -> u64 {
    let mut hasher = DefaultHasher::new();
    (
        involved.kind,
        involved.namespace,
        involved.name,
        involved.uid,
        parts,
    )
        .hash(&mut hasher);
    hasher.finish()
}
