//! More of kube-apiserver's printers (k8s.io/kubernetes `pkg/printers/internalversion`,
//! `printers.go`, v1.33): the columns and cells of DaemonSets, PodDisruptionBudgets,
//! HorizontalPodAutoscalers, Ingresses and IngressClasses, PersistentVolumes and their claims,
//! ServiceAccounts, RoleBindings and ClusterRoleBindings, Leases, ResourceQuotas,
//! ControllerRevisions, NetworkPolicies, Endpoints and PodTemplates, as `kubectl get` (and `-o wide`) shows them. Kinds
//! kube prints with its default convertor (Roles, ClusterRoles, LimitRanges) get `Name` and
//! `Created At`.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{col, containers, int, selector_text, string};
use crate::catalog::ResourceInfo;
use crate::table::{Cells, ColumnDef, age};

/// A printer for `info`'s kind, or `None` when kube has none either.
pub(super) fn builtin(
    info: &ResourceInfo,
    now: jiff::Timestamp,
) -> Option<(Vec<ColumnDef>, Cells)> {
    let name = |o: &Value| o["metadata"]["name"].clone();
    let printer: (Vec<ColumnDef>, Cells) = match (info.group.as_str(), info.kind.as_str()) {
        ("apps", "DaemonSet") => (
            vec![
                col("Name", "string", 0),
                col("Desired", "integer", 0),
                col("Current", "integer", 0),
                col("Ready", "integer", 0),
                col("Up-to-date", "integer", 0),
                col("Available", "integer", 0),
                col("Node Selector", "string", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let status = &o["status"];
                let pod_spec = &o["spec"]["template"]["spec"];
                let (names, images) = containers(pod_spec);
                vec![
                    name(o),
                    int(&status["desiredNumberScheduled"]).into(),
                    int(&status["currentNumberScheduled"]).into(),
                    int(&status["numberReady"]).into(),
                    int(&status["updatedNumberScheduled"]).into(),
                    int(&status["numberAvailable"]).into(),
                    format_labels(&pod_spec["nodeSelector"]).into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                    label_selector(&o["spec"]["selector"]).into(),
                ]
            }),
        ),
        ("policy", "PodDisruptionBudget") => (
            vec![
                col("Name", "string", 0),
                col("Min Available", "string", 0),
                col("Max Unavailable", "string", 0),
                col("Allowed Disruptions", "integer", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                vec![
                    name(o),
                    int_or_string(&spec["minAvailable"]).into(),
                    int_or_string(&spec["maxUnavailable"]).into(),
                    int(&o["status"]["disruptionsAllowed"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("autoscaling", "HorizontalPodAutoscaler") => (
            vec![
                col("Name", "string", 0),
                col("Reference", "string", 0),
                col("Targets", "string", 0),
                col("MinPods", "string", 0),
                col("MaxPods", "string", 0),
                col("Replicas", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                let target = &spec["scaleTargetRef"];
                let min = spec["minReplicas"]
                    .as_i64()
                    .map_or_else(|| "<unset>".to_owned(), |n| n.to_string());
                vec![
                    name(o),
                    format!("{}/{}", string(&target["kind"]), string(&target["name"])).into(),
                    hpa_targets(o).into(),
                    min.into(),
                    int(&spec["maxReplicas"]).into(),
                    int(&o["status"]["currentReplicas"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("networking.k8s.io", "Ingress") => (
            vec![
                col("Name", "string", 0),
                col("Class", "string", 0),
                col("Hosts", "string", 0),
                col("Address", "string", 0),
                col("Ports", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                let class = spec["ingressClassName"]
                    .as_str()
                    .map_or_else(|| "<none>".to_owned(), str::to_owned);
                let ports = if spec["tls"].as_array().is_some_and(|t| !t.is_empty()) {
                    "80, 443"
                } else {
                    "80"
                };
                vec![
                    name(o),
                    class.into(),
                    ingress_hosts(&spec["rules"]).into(),
                    load_balancer_addresses(&o["status"]["loadBalancer"]).into(),
                    ports.into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("networking.k8s.io", "IngressClass") => (
            vec![
                col("Name", "string", 0),
                col("Controller", "string", 0),
                col("Parameters", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let parameters = &o["spec"]["parameters"];
                let shown = if parameters.is_object() {
                    let mut kind = string(&parameters["kind"]);
                    if let Some(group) = parameters["apiGroup"].as_str() {
                        kind = format!("{kind}.{group}");
                    }
                    format!("{kind}/{}", string(&parameters["name"]))
                } else {
                    "<none>".to_owned()
                };
                vec![
                    name(o),
                    string(&o["spec"]["controller"]).into(),
                    shown.into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("", "PersistentVolumeClaim") => (
            vec![
                col("Name", "string", 0),
                col("Status", "string", 0),
                col("Volume", "string", 0),
                col("Capacity", "string", 0),
                col("Access Modes", "string", 0),
                col("StorageClass", "string", 0),
                col("VolumeAttributesClass", "string", 0),
                col("Age", "string", 0),
                col("VolumeMode", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                let volume = string(&spec["volumeName"]);
                let (capacity, modes) = if volume.is_empty() {
                    (String::new(), String::new())
                } else {
                    (
                        quantity(&o["status"]["capacity"]["storage"]),
                        access_modes(&o["status"]["accessModes"]),
                    )
                };
                vec![
                    name(o),
                    terminating_or(o, string(&o["status"]["phase"])).into(),
                    volume.into(),
                    capacity.into(),
                    modes.into(),
                    storage_class(o).into(),
                    unset_or(&spec["volumeAttributesClassName"]).into(),
                    age(o, now).into(),
                    unset_or(&spec["volumeMode"]).into(),
                ]
            }),
        ),
        ("", "PersistentVolume") => (
            vec![
                col("Name", "string", 0),
                col("Capacity", "string", 0),
                col("Access Modes", "string", 0),
                col("Reclaim Policy", "string", 0),
                col("Status", "string", 0),
                col("Claim", "string", 0),
                col("StorageClass", "string", 0),
                col("VolumeAttributesClass", "string", 0),
                col("Reason", "string", 0),
                col("Age", "string", 0),
                col("VolumeMode", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                let claim = &spec["claimRef"];
                let claim = if claim.is_object() {
                    format!("{}/{}", string(&claim["namespace"]), string(&claim["name"]))
                } else {
                    String::new()
                };
                vec![
                    name(o),
                    quantity(&spec["capacity"]["storage"]).into(),
                    access_modes(&spec["accessModes"]).into(),
                    string(&spec["persistentVolumeReclaimPolicy"]).into(),
                    terminating_or(o, string(&o["status"]["phase"])).into(),
                    claim.into(),
                    storage_class(o).into(),
                    unset_or(&spec["volumeAttributesClassName"]).into(),
                    string(&o["status"]["reason"]).into(),
                    age(o, now).into(),
                    unset_or(&spec["volumeMode"]).into(),
                ]
            }),
        ),
        ("", "ServiceAccount") => (
            vec![
                col("Name", "string", 0),
                col("Secrets", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let secrets = o["secrets"].as_array().map_or(0, Vec::len);
                vec![name(o), secrets.into(), age(o, now).into()]
            }),
        ),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => (
            vec![
                col("Name", "string", 0),
                col("Role", "string", 0),
                col("Age", "string", 0),
                col("Users", "string", 1),
                col("Groups", "string", 1),
                col("ServiceAccounts", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let role = &o["roleRef"];
                let subjects = |kind: &str| -> String {
                    o["subjects"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|s| s["kind"] == kind)
                        .map(|s| match kind {
                            "ServiceAccount" => {
                                format!("{}/{}", string(&s["namespace"]), string(&s["name"]))
                            }
                            _ => string(&s["name"]),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                vec![
                    name(o),
                    format!("{}/{}", string(&role["kind"]), string(&role["name"])).into(),
                    age(o, now).into(),
                    subjects("User").into(),
                    subjects("Group").into(),
                    subjects("ServiceAccount").into(),
                ]
            }),
        ),
        ("coordination.k8s.io", "Lease") => (
            vec![
                col("Name", "string", 0),
                col("Holder", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    string(&o["spec"]["holderIdentity"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("", "ResourceQuota") => (
            vec![
                col("Name", "string", 0),
                col("Age", "string", 0),
                col("Request", "string", 0),
                col("Limit", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let (request, limit) = quota_columns(&o["status"]);
                vec![name(o), age(o, now).into(), request.into(), limit.into()]
            }),
        ),
        ("apps", "ControllerRevision") => (
            vec![
                col("Name", "string", 0),
                col("Controller", "string", 0),
                col("Revision", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    controller_of(o).into(),
                    int(&o["revision"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("networking.k8s.io", "NetworkPolicy") => (
            vec![
                col("Name", "string", 0),
                col("Pod-Selector", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    label_selector(&o["spec"]["podSelector"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("", "Endpoints") => (
            vec![
                col("Name", "string", 0),
                col("Endpoints", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![name(o), endpoints(&o["subsets"]).into(), age(o, now).into()]
            }),
        ),
        ("", "PodTemplate") => (
            vec![
                col("Name", "string", 0),
                col("Containers", "string", 0),
                col("Images", "string", 0),
                col("Pod Labels", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let template = &o["template"];
                let (names, images) = containers(&template["spec"]);
                vec![
                    name(o),
                    names.into(),
                    images.into(),
                    format_labels(&template["metadata"]["labels"]).into(),
                ]
            }),
        ),
        // kube's default table convertor.
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") | ("", "LimitRange") => (
            vec![col("Name", "string", 0), col("Created At", "date", 0)],
            Box::new(move |o: &Value| vec![name(o), o["metadata"]["creationTimestamp"].clone()]),
        ),
        _ => return None,
    };
    Some(printer)
}

/// apimachinery's `labels.FormatLabels`: `k=v` sorted by key, joined by commas; `<none>`.
fn format_labels(labels: &Value) -> String {
    let mut pairs: Vec<String> = labels
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    or_none_text(pairs.join(","))
}

/// `metav1.FormatLabelSelector`: `<none>` for a missing or empty selector.
fn label_selector(selector: &Value) -> String {
    if selector.is_null() {
        return "<none>".to_owned();
    }
    or_none_text(selector_text(selector))
}

fn or_none_text(text: String) -> String {
    if text.is_empty() {
        "<none>".to_owned()
    } else {
        text
    }
}

/// `IntOrString.String()`, `N/A` when unset.
fn int_or_string(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".to_owned(),
    }
}

/// A quantity as stored (`0` when absent, as Go prints a zero `Quantity`).
fn quantity(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".to_owned(),
    }
}

/// `<unset>` unless `value` is a non-empty string.
fn unset_or(value: &Value) -> String {
    value
        .as_str()
        .filter(|s| !s.is_empty())
        .map_or_else(|| "<unset>".to_owned(), str::to_owned)
}

/// `Terminating` for an object being deleted, else `phase`.
fn terminating_or(object: &Value, phase: String) -> String {
    if object["metadata"]["deletionTimestamp"].is_string() {
        "Terminating".to_owned()
    } else {
        phase
    }
}

/// kube's `GetAccessModesAsString`: each mode once, abbreviated, in kube's order.
fn access_modes(modes: &Value) -> String {
    let modes: Vec<&str> = modes
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage class of a claim or volume: the beta annotation first, then the field.
fn storage_class(object: &Value) -> String {
    object["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .map_or_else(
            || string(&object["spec"]["storageClassName"]),
            str::to_owned,
        )
}

/// kube's `formatEndpoints`: `ip:port` for every address and port (the IP alone without
/// ports), three at most, then ` + N more...`; `<none>` without subsets.
fn endpoints(subsets: &Value) -> String {
    const MAX: usize = 3;
    let subsets = subsets.as_array().map(Vec::as_slice).unwrap_or_default();
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut listed: Vec<String> = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let addresses: Vec<&str> = subset["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a["ip"].as_str().unwrap_or(""))
            .collect();
        let ports: Vec<i64> = subset["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| int(&p["port"]))
            .collect();
        if ports.is_empty() {
            count += addresses.len();
            listed.extend(
                addresses
                    .iter()
                    .take(MAX.saturating_sub(listed.len()))
                    .map(|ip| (*ip).to_owned()),
            );
            continue;
        }
        for port in ports {
            count += addresses.len();
            for ip in &addresses {
                if listed.len() == MAX {
                    break;
                }
                // Go's `net.JoinHostPort`: an IPv6 address in brackets.
                listed.push(if ip.contains(':') {
                    format!("[{ip}]:{port}")
                } else {
                    format!("{ip}:{port}")
                });
            }
        }
    }
    let text = listed.join(",");
    if count > MAX {
        format!("{text} + {} more...", count - MAX)
    } else {
        text
    }
}

/// kube's `formatHosts`: hosts until three are listed, then ` + N more...` (N counted in rules);
/// `*` for none.
fn ingress_hosts(rules: &Value) -> String {
    const MAX: usize = 3;
    let rules = rules.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        if let Some(host) = rule["host"].as_str().filter(|h| !h.is_empty())
            && !more
        {
            hosts.push(host);
        }
    }
    if hosts.is_empty() {
        return "*".to_owned();
    }
    let text = hosts.join(",");
    if more {
        format!("{text} + {} more...", rules.len() - MAX)
    } else {
        text
    }
}

/// A load balancer's ingress points: IPs, else hostnames, each once, sorted (the server prints
/// wide, so nothing is cut).
fn load_balancer_addresses(status: &Value) -> String {
    let addresses: BTreeSet<String> = status["ingress"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            i["ip"]
                .as_str()
                .filter(|s| !s.is_empty())
                .or_else(|| i["hostname"].as_str().filter(|s| !s.is_empty()))
                .map(str::to_owned)
        })
        .collect();
    addresses.into_iter().collect::<Vec<_>>().join(",")
}

/// kube's `formatHPAMetrics`: `current/target` per metric (at most two, then ` + N more...`),
/// `<none>` without metrics.
fn hpa_targets(hpa: &Value) -> String {
    const MAX: usize = 2;
    let specs = hpa["spec"]["metrics"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let statuses = hpa["status"]["currentMetrics"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let unknown = || "<unknown>".to_owned();
    let text = |v: &Value| quantity(v);
    let listed: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let status = statuses.get(i);
            let current = |source: &str, field: &str| {
                status
                    .map(|s| &s[source]["current"][field])
                    .filter(|v| !v.is_null())
            };
            let by_value = |source: &str| {
                let target = &spec[source]["target"];
                if !target["averageValue"].is_null() {
                    let now = current(source, "averageValue").map_or_else(unknown, text);
                    format!("{now}/{} (avg)", text(&target["averageValue"]))
                } else {
                    let now = current(source, "value").map_or_else(unknown, text);
                    format!("{now}/{}", text(&target["value"]))
                }
            };
            let resource = |source: &str, prefix: String| {
                let target = &spec[source]["target"];
                if !target["averageValue"].is_null() {
                    let now = current(source, "averageValue").map_or_else(unknown, text);
                    format!("{prefix}: {now}/{}", text(&target["averageValue"]))
                } else {
                    let now = current(source, "averageUtilization")
                        .and_then(Value::as_i64)
                        .map_or_else(unknown, |n| format!("{n}%"));
                    let wanted = target["averageUtilization"]
                        .as_i64()
                        .map_or_else(|| "<auto>".to_owned(), |n| format!("{n}%"));
                    format!("{prefix}: {now}/{wanted}")
                }
            };
            match spec["type"].as_str().unwrap_or("") {
                "External" => by_value("external"),
                "Object" => by_value("object"),
                "Pods" => {
                    let now = current("pods", "averageValue").map_or_else(unknown, text);
                    format!("{now}/{}", text(&spec["pods"]["target"]["averageValue"]))
                }
                "Resource" => resource("resource", string(&spec["resource"]["name"])),
                "ContainerResource" => resource(
                    "containerResource",
                    string(&spec["containerResource"]["name"]),
                ),
                _ => "<unknown type>".to_owned(),
            }
        })
        .collect();
    let shown = listed
        .iter()
        .take(MAX)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if listed.len() > MAX {
        format!("{shown} + {} more...", listed.len() - MAX)
    } else {
        shown
    }
}

/// kube's quota columns: `name: used/hard` for every hard limit, sorted by name, `limits.*`
/// in the second column.
fn quota_columns(status: &Value) -> (String, String) {
    let mut names: Vec<&String> = status["hard"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    names.sort();
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    for name in names {
        let entry = format!(
            "{name}: {}/{}",
            quantity(&status["used"][name]),
            quantity(&status["hard"][name])
        );
        let mut pieces = name.split('.');
        if pieces.next() == Some("limits") && pieces.next().is_some() {
            limit.push(entry);
        } else {
            request.push(entry);
        }
    }
    (request.join(", "), limit.join(", "))
}

/// The controller owning `object` as `kind.group/name` in lower case, `<none>` without one.
fn controller_of(object: &Value) -> String {
    let owner = object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"] == true);
    let Some(owner) = owner else {
        return "<none>".to_owned();
    };
    let api_version = string(&owner["apiVersion"]);
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let kind = string(&owner["kind"]);
    let kind = if group.is_empty() {
        kind
    } else {
        format!("{kind}.{group}")
    };
    format!("{}/{}", kind.to_lowercase(), string(&owner["name"]))
}

#[cfg(test)]
mod tests;
