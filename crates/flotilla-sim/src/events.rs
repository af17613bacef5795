//! Kubernetes Events as the real components record them (what `kubectl describe` shows).

use k8s_openapi::api::core::v1::Event;

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
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let at = now();
    let nanos = jiff::Timestamp::now().as_nanosecond();
    let event: Event = match serde_json::from_value(json!({
        "metadata": {"name": format!("{name}.{nanos:x}"), "namespace": ns},
        "involvedObject": {
            "kind": "Pod", "apiVersion": "v1", "namespace": ns, "name": name,
            "uid": pod.metadata.uid, "resourceVersion": pod.metadata.resource_version,
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
    let api: Api<Event> = Api::namespaced(ctx.client.clone(), &ns);
    if let Err(error) = api.create(&PostParams::default(), &event).await {
        tracing::debug!(cluster = %ctx.name, %error, "cannot record an event");
    }
}
