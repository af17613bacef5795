//! The cells `kubectl get pods` shows for a pod: READY, STATUS (the phase, or the reason a
//! container waits or terminated with: `ContainerCreating`, `ImagePullBackOff`,
//! `CrashLoopBackOff`, `Completed`, `Error`, `Init:0/1`, `Terminating`…), RESTARTS with the time
//! of the last restart (`3 (42s ago)`), and in wide output IP, NODE, NOMINATED NODE and
//! READINESS GATES.
//!
//! Ported from kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (`printPod`,
//! Kubernetes 1.33), over the pod's JSON.

use jiff::Timestamp;
use serde_json::Value;

use super::duration::human_duration;

/// The pod's cells: name, ready, status, restarts, age; then (wide) IP, node, nominated node,
/// readiness gates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodCells {
    pub ready: String,
    pub status: String,
    pub restarts: String,
    pub ip: String,
    pub node: String,
    pub nominated_node: String,
    pub readiness_gates: String,
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

fn time(value: &Value) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

/// `restartPolicy: Always` on an init container: a sidecar, counted with the containers.
fn restartable(container: Option<&Value>) -> bool {
    container.is_some_and(|c| text(&c["restartPolicy"]) == "Always")
}

fn condition_true(status: &Value, kind: &str) -> bool {
    list(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == kind && text(&c["status"]) == "True")
}

fn has_condition(status: &Value, kind: &str) -> bool {
    list(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == kind)
}

/// The reason a terminated container gives: its reason, else its signal or exit code.
fn terminated_reason(terminated: &Value, prefix: &str) -> String {
    let reason = text(&terminated["reason"]);
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    let signal = terminated["signal"].as_i64().unwrap_or(0);
    if signal != 0 {
        format!("{prefix}Signal:{signal}")
    } else {
        format!(
            "{prefix}ExitCode:{}",
            terminated["exitCode"].as_i64().unwrap_or(0)
        )
    }
}

/// kube's `printPod` for `pod` at `now`.
pub fn cells(pod: &Value, now: Timestamp) -> PodCells {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let phase = text(&status["phase"]);
    let mut reason = if text(&status["reason"]).is_empty() {
        phase.to_owned()
    } else {
        text(&status["reason"]).to_owned()
    };
    if list(&status["conditions"])
        .iter()
        .any(|c| text(&c["type"]) == "PodScheduled" && text(&c["reason"]) == "SchedulingGated")
    {
        reason = "SchedulingGated".to_owned();
    }
    let init_specs = list(&spec["initContainers"]);
    let total = list(&spec["containers"]).len()
        + init_specs.iter().filter(|c| restartable(Some(c))).count();
    let init_spec = |name: &str| init_specs.iter().find(|c| text(&c["name"]) == name);
    let mut ready = 0usize;
    let mut restarts = 0i64;
    let mut sidecar_restarts = 0i64;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_sidecar_restart: Option<Timestamp> = None;
    let later =
        |current: Option<Timestamp>, candidate: Option<Timestamp>| match (current, candidate) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };

    let mut initializing = false;
    let init_statuses = list(&status["initContainerStatuses"]);
    for (i, container) in init_statuses.iter().enumerate() {
        let count = container["restartCount"].as_i64().unwrap_or(0);
        restarts += count;
        let finished = time(&container["lastState"]["terminated"]["finishedAt"]);
        last_restart = later(last_restart, finished);
        let sidecar = restartable(init_spec(text(&container["name"])));
        if sidecar {
            sidecar_restarts += count;
            last_sidecar_restart = later(last_sidecar_restart, finished);
        }
        let state = &container["state"];
        let terminated = &state["terminated"];
        let waiting_reason = text(&state["waiting"]["reason"]);
        if terminated.is_object() && terminated["exitCode"].as_i64() == Some(0) {
            continue;
        }
        if sidecar && container["started"] == true {
            if container["ready"] == true {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            reason = terminated_reason(terminated, "Init:");
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            reason = format!("Init:{waiting_reason}");
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(status, "Initialized") {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let mut has_running = false;
        for container in list(&status["containerStatuses"]).iter().rev() {
            restarts += container["restartCount"].as_i64().unwrap_or(0);
            last_restart = later(
                last_restart,
                time(&container["lastState"]["terminated"]["finishedAt"]),
            );
            let state = &container["state"];
            let waiting_reason = text(&state["waiting"]["reason"]);
            let terminated = &state["terminated"];
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_owned();
            } else if terminated.is_object() {
                reason = terminated_reason(terminated, "");
            } else if container["ready"] == true && state["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        // A pod with a container still running is not `Completed`.
        if reason == "Completed" && has_running {
            reason = if has_condition(status, "Ready") {
                "Running".to_owned()
            } else {
                "NotReady".to_owned()
            };
        }
    }

    let deleting = pod["metadata"]["deletionTimestamp"].is_string();
    if deleting && text(&status["reason"]) == "NodeLost" {
        reason = "Unknown".to_owned();
    } else if deleting && !matches!(phase, "Succeeded" | "Failed") {
        reason = "Terminating".to_owned();
    }

    let restarts = match last_restart {
        Some(at) if restarts != 0 => {
            format!(
                "{restarts} ({} ago)",
                human_duration(now.duration_since(at))
            )
        }
        _ => restarts.to_string(),
    };
    let none_if_empty = |s: &str| {
        if s.is_empty() {
            "<none>".to_owned()
        } else {
            s.to_owned()
        }
    };
    let gates = list(&spec["readinessGates"]);
    let readiness_gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let passing = gates
            .iter()
            .filter(|gate| {
                list(&status["conditions"])
                    .iter()
                    .find(|c| c["type"] == gate["conditionType"])
                    .is_some_and(|c| text(&c["status"]) == "True")
            })
            .count();
        format!("{passing}/{}", gates.len())
    };
    PodCells {
        ready: format!("{ready}/{total}"),
        status: reason,
        restarts,
        ip: none_if_empty(text(
            &list(&status["podIPs"]).first().cloned().unwrap_or_default()["ip"],
        )),
        node: none_if_empty(text(&spec["nodeName"])),
        nominated_node: none_if_empty(text(&status["nominatedNodeName"])),
        readiness_gates,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn now() -> Timestamp {
        "2026-12-07T03:00:00Z".parse().unwrap()
    }

    fn pod(status: Value) -> Value {
        json!({"metadata": {"name": "p"},
            "spec": {"nodeName": "n1", "containers": [{"name": "app"}]},
            "status": status})
    }

    #[test]
    fn statuses_read_as_kubectl_shows_them() {
        let creating = pod(json!({"phase": "Pending", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0,
             "state": {"waiting": {"reason": "ContainerCreating"}}}]}));
        let c = cells(&creating, now());
        assert_eq!(
            (c.ready.as_str(), c.status.as_str(), c.restarts.as_str()),
            ("0/1", "ContainerCreating", "0")
        );
        assert_eq!(c.ip, "<none>");

        let crashing = pod(
            json!({"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}], "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 3,
             "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": "2026-12-07T02:59:18Z"}},
             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
        );
        let c = cells(&crashing, now());
        assert_eq!(
            (c.ready.as_str(), c.status.as_str(), c.restarts.as_str()),
            ("0/1", "CrashLoopBackOff", "3 (42s ago)")
        );
        assert_eq!((c.ip.as_str(), c.node.as_str()), ("10.0.0.5", "n1"));

        let running = pod(
            json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}]}),
        );
        let c = cells(&running, now());
        assert_eq!((c.ready.as_str(), c.status.as_str()), ("1/1", "Running"));

        let failed = pod(json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 3, "reason": "Error"}}}]}));
        assert_eq!(cells(&failed, now()).status, "Error");
        let killed = pod(json!({"phase": "Failed", "containerStatuses": [
            {"name": "app", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}));
        assert_eq!(cells(&killed, now()).status, "Signal:9");

        let mut deleting = running.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-12-07T02:59:00Z");
        assert_eq!(cells(&deleting, now()).status, "Terminating");

        let evicted = pod(json!({"phase": "Failed", "reason": "Evicted"}));
        assert_eq!(cells(&evicted, now()).status, "Evicted");
    }

    #[test]
    fn init_containers_and_sidecars() {
        let mut p = pod(json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "setup", "restartCount": 0, "state": {"running": {}}}]}));
        p["spec"]["initContainers"] = json!([{"name": "setup"}, {"name": "more"}]);
        assert_eq!(cells(&p, now()).status, "Init:0/2");
        p["status"]["initContainerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "ImagePullBackOff"}});
        assert_eq!(cells(&p, now()).status, "Init:ImagePullBackOff");
        p["status"]["initContainerStatuses"][0]["state"] =
            json!({"terminated": {"exitCode": 2, "reason": "Error"}});
        assert_eq!(cells(&p, now()).status, "Init:Error");

        // A sidecar (restartable init container) counts as a container.
        let mut s = pod(
            json!({"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "ready": true, "started": true, "restartCount": 1,
                "state": {"running": {}}}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "state": {"running": {}}}]}),
        );
        s["spec"]["initContainers"] = json!([{"name": "proxy", "restartPolicy": "Always"}]);
        let c = cells(&s, now());
        assert_eq!(
            (c.ready.as_str(), c.status.as_str(), c.restarts.as_str()),
            ("2/2", "Running", "1")
        );
    }

    #[test]
    fn readiness_gates_count_true_conditions() {
        let mut p = pod(
            json!({"phase": "Running", "conditions": [{"type": "example.com/lb", "status": "True"}]}),
        );
        p["spec"]["readinessGates"] =
            json!([{"conditionType": "example.com/lb"}, {"conditionType": "example.com/dns"}]);
        assert_eq!(cells(&p, now()).readiness_gates, "1/2");
        assert_eq!(cells(&pod(json!({})), now()).readiness_gates, "<none>");
    }
}
