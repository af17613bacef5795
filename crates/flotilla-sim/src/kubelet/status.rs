//! The pod statuses the simulated kubelets write, as a kubelet reports them: ContainerCreating,
//! Running, restarted or crash-looping containers, Succeeded or Failed, image-pull failures.

use serde_json::{Value, json};

use super::{PullState, crash};
use crate::cluster::now;
use crate::image::{self, UnpullableImages};
use crate::pod::Pod;
use crate::rng::mix;

pub(super) fn containers(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

/// Guaranteed, Burstable or BestEffort, as kube computes it from requests and limits.
pub(super) fn qos_class(pod: &Pod) -> &'static str {
    let Some(spec) = &pod.spec else {
        return "BestEffort";
    };
    let mut any = false;
    let mut guaranteed = true;
    for c in &spec.containers {
        let r = c.resources.as_ref();
        let requests = r.and_then(|r| r.requests.clone()).unwrap_or_default();
        let limits = r.and_then(|r| r.limits.clone()).unwrap_or_default();
        for name in ["cpu", "memory"] {
            let (req, lim) = (requests.get(name), limits.get(name));
            if req.is_some() || lim.is_some() {
                any = true;
            }
            match (req, lim) {
                (_, None) => guaranteed = false,
                (Some(r), Some(l)) if r != l => guaranteed = false,
                _ => {}
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

pub(super) fn condition(kind: &str, status: bool, reason: Option<&str>, at: &str) -> Value {
    let mut c = json!({"type": kind, "status": if status { "True" } else { "False" },
                       "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(reason) = reason {
        c["reason"] = reason.into();
    }
    c
}

pub(super) fn start_time(pod: &Pod, at: &str) -> Value {
    pod.status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or_else(|| at.into())
}

pub(super) fn creating_status(pod: &Pod, host_ip: &str) -> Value {
    let at = now();
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "", "ready": false,
            "started": false, "restartCount": 0, "lastState": {},
            "state": {"waiting": {"reason": "ContainerCreating"}}})
        })
        .collect();
    json!({
        "phase": "Pending",
        "conditions": [
            condition("PodReadyToStartContainers", false, None, &at),
            condition("Initialized", true, None, &at),
            condition("Ready", false, Some("ContainersNotReady"), &at),
            condition("ContainersReady", false, Some("ContainersNotReady"), &at),
            condition("PodScheduled", true, None, &at),
        ],
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "startTime": start_time(pod, &at),
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    })
}

pub(super) fn image_digest(image: &str) -> String {
    let a = mix(1, image);
    let b = mix(2, image);
    let c = mix(3, image);
    let d = mix(4, image);
    format!("{a:016x}{b:016x}{c:016x}{d:016x}")
}

/// The image ID a container of `image` reports (a digest derived from the name).
pub(super) fn image_id(image: &str) -> String {
    let repo = image.split([':', '@']).next().unwrap_or("");
    format!("{repo}@sha256:{}", image_digest(image))
}

/// The container ID of container `name` of pod `uid`, the same at every status write.
pub(super) fn container_id(uid: &str, name: &str) -> String {
    format!("containerd://{}", image_digest(&format!("{uid}/{name}")))
}

pub(super) fn running_status(pod: &Pod, host_ip: &str, pod_ip: &str) -> Value {
    let at = now();
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image,
                "imageID": image_id(&image),
                "containerID": container_id(uid, &name),
                "ready": true, "started": true, "restartCount": 0, "lastState": {},
                "state": {"running": {"startedAt": at}}})
        })
        .collect();
    json!({
        "phase": "Running",
        "conditions": [
            condition("PodReadyToStartContainers", true, None, &at),
            condition("Initialized", true, None, &at),
            condition("Ready", true, None, &at),
            condition("ContainersReady", true, None, &at),
            condition("PodScheduled", true, None, &at),
        ],
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
        "startTime": start_time(pod, &at),
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    })
}

/// A kube timestamp (whole seconds).
pub(super) fn stamp(at: jiff::Timestamp) -> String {
    jiff::Timestamp::from_second(at.as_second())
        .unwrap_or(at)
        .to_string()
}

/// The status of a running pod whose containers' lives are `lives` (in the spec's order):
/// running, waiting in `CrashLoopBackOff` or terminated, with the last run that ended and the
/// restarts; Succeeded or Failed once every container terminated for good.
pub(super) fn lives_status(pod: &Pod, host_ip: &str, pod_ip: &str, lives: &[crash::Life]) -> Value {
    let at = now();
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let name_of_pod = pod.metadata.name.as_deref().unwrap_or("");
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    let terminated = |id: &str, run: &crash::Ended| {
        json!({"exitCode": run.code, "reason": run.reason(),
            "startedAt": stamp(run.started), "finishedAt": stamp(run.finished),
            "containerID": id})
    };
    let mut unready = Vec::new();
    let mut failed = false;
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .zip(lives)
        .map(|((name, image), life)| {
            let id = container_id(uid, &name);
            let last = life
                .last
                .as_ref()
                .map_or_else(|| json!({}), |run| json!({"terminated": terminated(&id, run)}));
            let (state, last_state, running) = match &life.phase {
                crash::Phase::Running { started, .. } => (
                    json!({"running": {"startedAt": stamp(*started)}}),
                    last,
                    true,
                ),
                crash::Phase::Waiting { back_off, .. } => (
                    json!({"waiting": {"reason": "CrashLoopBackOff",
                        "message": crash::back_off_message(*back_off, &name, name_of_pod, namespace, uid)}}),
                    last,
                    false,
                ),
                crash::Phase::Terminated => {
                    let run = life.last.as_ref();
                    failed |= run.is_some_and(|r| r.code != 0);
                    (
                        run.map_or_else(
                            || json!({}),
                            |run| json!({"terminated": terminated(&id, run)}),
                        ),
                        json!({}),
                        false,
                    )
                }
            };
            if !running {
                unready.push(name.clone());
            }
            json!({"name": name, "image": image, "imageID": image_id(&image),
                "containerID": id, "ready": running, "started": running,
                "restartCount": life.restarts, "lastState": last_state, "state": state})
        })
        .collect();
    let done = lives
        .iter()
        .all(|life| matches!(life.phase, crash::Phase::Terminated));
    let (phase, ready_reason) = match (done, failed) {
        (true, true) => ("Failed", Some("PodFailed")),
        (true, false) => ("Succeeded", Some("PodCompleted")),
        (false, _) => ("Running", None),
    };
    let readiness = |kind: &str| {
        if unready.is_empty() {
            return condition(kind, true, None, &at);
        }
        let mut c = condition(
            kind,
            false,
            ready_reason.or(Some("ContainersNotReady")),
            &at,
        );
        if !done {
            // Go's `%s` of a string slice.
            c["message"] =
                format!("containers with unready status: [{}]", unready.join(" ")).into();
        }
        c
    };
    json!({
        "phase": phase,
        "conditions": [
            condition("PodReadyToStartContainers", !done, None, &at),
            condition("Initialized", true, None, &at),
            readiness("Ready"),
            readiness("ContainersReady"),
            condition("PodScheduled", true, None, &at),
        ],
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
        "startTime": start_time(pod, &at),
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    })
}

pub(super) fn succeeded_status(pod: &Pod) -> Value {
    let at = now();
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let running = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    // The containers the Running status reported, with what it reported for them (the image
    // and IDs are derived exactly as `running_status` derived them).
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .filter_map(|(name, image)| {
            let c = running.iter().find(|c| c.name == name)?;
            let started = c
                .state
                .as_ref()
                .and_then(|s| s.running.as_ref())
                .and_then(|r| r.started_at.as_ref())
                .and_then(|t| serde_json::to_value(t).ok())
                .unwrap_or_else(|| at.clone().into());
            let id = container_id(uid, &name);
            Some(
                json!({"name": name, "image": image, "imageID": image_id(&image),
                "containerID": id, "ready": false, "started": false,
                "restartCount": c.restart_count, "lastState": {},
                "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": started, "finishedAt": at, "containerID": id}}}),
            )
        })
        .collect();
    json!({
        "phase": "Succeeded",
        "conditions": [
            condition("PodReadyToStartContainers", false, None, &at),
            condition("Initialized", true, Some("PodCompleted"), &at),
            condition("Ready", false, Some("PodCompleted"), &at),
            condition("ContainersReady", false, Some("PodCompleted"), &at),
            condition("PodScheduled", true, None, &at),
        ],
        "containerStatuses": statuses,
    })
}

/// A pod whose containers could not all be pulled, as kubelet reports it: Pending, the sandbox
/// up (pod IP, `PodReadyToStartContainers`), containers that pulled running, the others waiting
/// in `state` with the runtime's or kubelet's message, and `Ready`/`ContainersReady` False
/// naming them.
pub(super) fn pull_failed_status(
    pod: &Pod,
    rules: &UnpullableImages,
    state: PullState,
    host_ip: &str,
    pod_ip: &str,
) -> Value {
    waiting_status(
        pod,
        |_, image| {
            let refusal = rules.refusal(image)?;
            Some(match state {
                PullState::ErrImagePull => json!({"reason": "ErrImagePull",
                    "message": image::pull_error(image, refusal)}),
                PullState::ImagePullBackOff => json!({"reason": "ImagePullBackOff",
                    "message": image::back_off_message(image)}),
            })
        },
        host_ip,
        pod_ip,
    )
}

/// The status of a pod some of whose containers cannot be given their environment: those wait
/// in `CreateContainerConfigError` with the kubelet's message (`errors`, by container), the
/// others run.
pub(super) fn config_error_status(
    pod: &Pod,
    errors: &std::collections::BTreeMap<String, String>,
    host_ip: &str,
    pod_ip: &str,
) -> Value {
    waiting_status(
        pod,
        |name, _| {
            let message = errors.get(name)?;
            Some(json!({"reason": "CreateContainerConfigError", "message": message}))
        },
        host_ip,
        pod_ip,
    )
}

/// A Pending pod whose containers for which `waiting` (name, image) says so wait in that state,
/// the others running (started at the first such write).
fn waiting_status(
    pod: &Pod,
    waiting: impl Fn(&str, &str) -> Option<Value>,
    host_ip: &str,
    pod_ip: &str,
) -> Value {
    let at = now();
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    let previous = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let mut unready = Vec::new();
    let statuses: Vec<Value> = containers(pod)
        .into_iter()
        .map(|(name, image)| {
            let Some(waiting) = waiting(&name, &image) else {
                // Started when the pod was first written so; the same start at every write.
                let started = previous
                    .iter()
                    .find(|c| c.name == name)
                    .and_then(|c| c.state.as_ref()?.running.as_ref()?.started_at.as_ref())
                    .and_then(|t| serde_json::to_value(t).ok())
                    .unwrap_or_else(|| at.clone().into());
                return json!({"name": name, "image": image,
                    "imageID": image_id(&image),
                    "containerID": container_id(uid, &name),
                    "ready": true, "started": true, "restartCount": 0, "lastState": {},
                    "state": {"running": {"startedAt": started}}});
            };
            unready.push(name.clone());
            json!({"name": name, "image": image, "imageID": "", "ready": false,
                "started": false, "restartCount": 0, "lastState": {},
                "state": {"waiting": waiting}})
        })
        .collect();
    // Go's `%s` of a string slice.
    let message = format!("containers with unready status: [{}]", unready.join(" "));
    let not_ready = |kind: &str| {
        let mut c = condition(kind, false, Some("ContainersNotReady"), &at);
        c["message"] = message.clone().into();
        c
    };
    json!({
        "phase": "Pending",
        "conditions": [
            condition("PodReadyToStartContainers", true, None, &at),
            condition("Initialized", true, None, &at),
            not_ready("Ready"),
            not_ready("ContainersReady"),
            condition("PodScheduled", true, None, &at),
        ],
        "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
        "startTime": start_time(pod, &at),
        "containerStatuses": statuses,
        "qosClass": qos_class(pod),
    })
}
