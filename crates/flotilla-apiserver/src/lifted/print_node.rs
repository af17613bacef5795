//! The cells `kubectl get nodes` shows for a node: STATUS (`Ready`, `NotReady`, `Unknown`, with
//! `,SchedulingDisabled` when cordoned), ROLES, VERSION, and in wide output INTERNAL-IP,
//! EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION and CONTAINER-RUNTIME.
//!
//! Ported from kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (`printNode`,
//! `findNodeRoles`, `getNodeInternalIP`, `getNodeExternalIP`; Kubernetes 1.33), over the node's
//! JSON.

use std::collections::BTreeSet;

use serde_json::Value;

/// The node's cells after its name (age is the caller's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCells {
    pub status: String,
    pub roles: String,
    pub version: String,
    pub internal_ip: String,
    pub external_ip: String,
    pub os_image: String,
    pub kernel_version: String,
    pub container_runtime: String,
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn or(value: &str, default: &str) -> String {
    if value.is_empty() {
        default.to_owned()
    } else {
        value.to_owned()
    }
}

/// The first address of `kind`, or `<none>`.
fn address(node: &Value, kind: &str) -> String {
    node["status"]["addresses"]
        .as_array()
        .and_then(|a| a.iter().find(|a| text(&a["type"]) == kind))
        .map_or_else(|| "<none>".to_owned(), |a| text(&a["address"]).to_owned())
}

/// kube's `printNode` for `node`.
pub fn cells(node: &Value) -> NodeCells {
    let mut status: Vec<String> = node["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().rev().find(|c| text(&c["type"]) == "Ready"))
        .map(|ready| {
            if text(&ready["status"]) == "True" {
                "Ready".to_owned()
            } else {
                "NotReady".to_owned()
            }
        })
        .into_iter()
        .collect();
    if status.is_empty() {
        status.push("Unknown".to_owned());
    }
    if node["spec"]["unschedulable"] == true {
        status.push("SchedulingDisabled".to_owned());
    }
    // findNodeRoles: `node-role.kubernetes.io/<role>` keys and the `kubernetes.io/role` value,
    // sorted and unique.
    let mut roles = BTreeSet::new();
    if let Some(labels) = node["metadata"]["labels"].as_object() {
        for (key, value) in labels {
            if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role.to_owned());
                }
            } else if key == "kubernetes.io/role" && !text(value).is_empty() {
                roles.insert(text(value).to_owned());
            }
        }
    }
    let roles: Vec<String> = roles.into_iter().collect();
    let info = &node["status"]["nodeInfo"];
    NodeCells {
        status: status.join(","),
        roles: or(&roles.join(","), "<none>"),
        version: text(&info["kubeletVersion"]).to_owned(),
        internal_ip: address(node, "InternalIP"),
        external_ip: address(node, "ExternalIP"),
        os_image: or(text(&info["osImage"]), "<unknown>"),
        kernel_version: or(text(&info["kernelVersion"]), "<unknown>"),
        container_runtime: or(text(&info["containerRuntimeVersion"]), "<unknown>"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nodes_read_as_kubectl_shows_them() {
        let node = json!({
            "metadata": {"name": "n1", "labels": {
                "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": "",
                "kubernetes.io/role": "inference", "node-role.kubernetes.io/": ""}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.0.0.7"}],
                "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Ubuntu 22.04.4 LTS",
                    "kernelVersion": "5.15.0-105-generic", "containerRuntimeVersion": "containerd://1.7.13"}}});
        assert_eq!(
            cells(&node),
            NodeCells {
                status: "Ready,SchedulingDisabled".into(),
                roles: "gpu,inference,worker".into(),
                version: "v1.32.0".into(),
                internal_ip: "10.0.0.7".into(),
                external_ip: "<none>".into(),
                os_image: "Ubuntu 22.04.4 LTS".into(),
                kernel_version: "5.15.0-105-generic".into(),
                container_runtime: "containerd://1.7.13".into(),
            }
        );
        let lost = json!({"metadata": {"name": "n2"},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        let c = cells(&lost);
        assert_eq!(
            (c.status.as_str(), c.roles.as_str(), c.os_image.as_str()),
            ("NotReady", "<none>", "<unknown>")
        );
        let new = json!({"metadata": {"name": "n3"}});
        assert_eq!(cells(&new).status, "Unknown");
    }
}
