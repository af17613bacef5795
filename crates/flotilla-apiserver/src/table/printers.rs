//! Built-in printers: the columns kube-apiserver prints for the kinds users look at most
//! (more of them in `printers/more.rs`).

use serde_json::Value;

use super::{Cells, ColumnDef, age};
use crate::catalog::ResourceInfo;

mod more;

fn col(name: &str, type_: &'static str, priority: i32) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        type_,
        format: if name == "Name" { "name" } else { "" },
        priority,
        description: "",
    }
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn string(value: &Value) -> String {
    value.as_str().unwrap_or("").to_owned()
}

fn or_none(text: String) -> Value {
    if text.is_empty() {
        "<none>".into()
    } else {
        text.into()
    }
}

/// An absent value prints as kube-apiserver prints a CRD column without a match.
fn null_if_empty(text: String) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        text.into()
    }
}

fn containers(spec: &Value) -> (String, String) {
    let list = spec["containers"].as_array().cloned().unwrap_or_default();
    let names = list.iter().map(|c| string(&c["name"])).collect::<Vec<_>>();
    let images = list.iter().map(|c| string(&c["image"])).collect::<Vec<_>>();
    (names.join(","), images.join(","))
}

/// A label selector as kubectl prints it (`app=web,tier in (a,b)`).
pub(crate) fn selector_text(selector: &Value) -> String {
    let mut parts: Vec<String> = selector["matchLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    for expr in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = string(&expr["key"]);
        let values = expr["values"]
            .as_array()
            .map(|v| v.iter().map(string).collect::<Vec<_>>().join(","))
            .unwrap_or_default();
        parts.push(match expr["operator"].as_str().unwrap_or("") {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key,
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({values})"),
        });
    }
    // Requirements print sorted by key, as Kubernetes' selector String() does.
    parts.sort();
    parts.join(",")
}

fn condition(object: &Value, kind: &str) -> String {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .map(|c| string(&c["status"]))
        .unwrap_or_default()
}

/// At most `MAX_LISTED` items joined by commas, then ` + N more...`; `<unset>` for none
/// (kube's `listWithMoreString`).
fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX_LISTED: usize = 3;
    let mut listed = Vec::with_capacity(MAX_LISTED);
    let mut count = 0;
    for item in items {
        if listed.len() < MAX_LISTED {
            listed.push(item);
        }
        count += 1;
    }
    let text = listed.join(",");
    if count > MAX_LISTED {
        format!("{text} + {} more...", count - MAX_LISTED)
    } else if text.is_empty() {
        "<unset>".to_owned()
    } else {
        text
    }
}

/// An EndpointSlice's ports as kube prints them: the number, else the name, else `*`
/// (`formatDiscoveryPorts`).
fn slice_ports(ports: &Value) -> String {
    list_with_more(ports.as_array().into_iter().flatten().map(|port| {
        match (port["port"].as_i64(), port["name"].as_str()) {
            (Some(number), _) => number.to_string(),
            (None, Some(name)) => name.to_owned(),
            (None, None) => "*".to_owned(),
        }
    }))
}

/// Every address of every endpoint of an EndpointSlice (`formatDiscoveryEndpoints`).
fn slice_endpoints(endpoints: &Value) -> String {
    list_with_more(
        endpoints
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|endpoint| endpoint["addresses"].as_array().into_iter().flatten())
            .map(string),
    )
}

/// The printer of a built-in kind, if it has one.
/// `cluster:ready/desired` per target cluster in the scheduler's order (`cluster` alone for
/// bindings without replicas, e.g. a ConfigMap).
fn binding_clusters(binding: &Value) -> String {
    let with_replicas = binding["spec"]["replicas"].as_i64().unwrap_or(0) > 0;
    let statuses = binding["status"]["aggregatedStatus"].as_array();
    binding["spec"]["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|target| {
            let cluster = string(&target["name"]);
            if !with_replicas {
                return cluster;
            }
            let ready = statuses
                .into_iter()
                .flatten()
                .find(|s| s["clusterName"].as_str() == Some(cluster.as_str()))
                .map(|s| int(&s["status"]["readyReplicas"]))
                .unwrap_or(0);
            format!("{cluster}:{ready}/{}", int(&target["replicas"]))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// GPUs the placement holds: per-replica `nvidia.com/gpu` times the replicas of every target.
fn binding_gpus(binding: &Value) -> i64 {
    let per_replica = binding["spec"]["replicaRequirements"]["resourceRequest"]["nvidia.com/gpu"]
        .as_str()
        .and_then(|q| flotilla_api::Quantity::parse(q).ok())
        .and_then(|q| q.as_i64())
        .unwrap_or(0);
    let replicas: i64 = binding["spec"]["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| int(&t["replicas"]))
        .sum();
    per_replica.saturating_mul(replicas)
}

pub(super) fn builtin(
    info: &ResourceInfo,
    now: jiff::Timestamp,
) -> Option<(Vec<ColumnDef>, Cells)> {
    let name = |o: &Value| o["metadata"]["name"].clone();
    let printer: (Vec<ColumnDef>, Cells) = match (info.group.as_str(), info.kind.as_str()) {
        ("apps", "Deployment") => (
            vec![
                col("Name", "string", 0),
                col("Ready", "string", 0),
                col("Up-to-date", "integer", 0),
                col("Available", "integer", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let (names, images) = containers(&o["spec"]["template"]["spec"]);
                vec![
                    name(o),
                    format!(
                        "{}/{}",
                        int(&o["status"]["readyReplicas"]),
                        o["spec"]["replicas"].as_i64().unwrap_or(1)
                    )
                    .into(),
                    int(&o["status"]["updatedReplicas"]).into(),
                    int(&o["status"]["availableReplicas"]).into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                    selector_text(&o["spec"]["selector"]).into(),
                ]
            }),
        ),
        // kube-aggregator's table convertor.
        ("apiregistration.k8s.io", "APIService") => (
            vec![
                col("Name", "string", 0),
                col("Service", "string", 0),
                col("Available", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let service = &o["spec"]["service"];
                let target = match service["name"].as_str() {
                    Some(name) => format!("{}/{name}", service["namespace"].as_str().unwrap_or("")),
                    None => "Local".to_owned(),
                };
                let available = o["status"]["conditions"]
                    .as_array()
                    .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
                    .map_or("Unknown".to_owned(), |c| match c["status"].as_str() {
                        Some("True") => "True".to_owned(),
                        status => format!(
                            "{} ({})",
                            status.unwrap_or("Unknown"),
                            c["reason"].as_str().unwrap_or("")
                        ),
                    });
                vec![name(o), target.into(), available.into(), age(o, now).into()]
            }),
        ),
        ("scheduling.k8s.io", "PriorityClass") => (
            vec![
                col("Name", "string", 0),
                col("Value", "integer", 0),
                col("Global-Default", "boolean", 0),
                col("Age", "string", 0),
                col("PreemptionPolicy", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    int(&o["value"]).into(),
                    o["globalDefault"].as_bool().unwrap_or(false).into(),
                    age(o, now).into(),
                    o["preemptionPolicy"].as_str().unwrap_or("").into(),
                ]
            }),
        ),
        ("certificates.k8s.io", "CertificateSigningRequest") => (
            vec![
                col("Name", "string", 0),
                col("Age", "string", 0),
                col("SignerName", "string", 0),
                col("Requestor", "string", 0),
                col("RequestedDuration", "string", 0),
                col("Condition", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let spec = &o["spec"];
                let duration = match spec["expirationSeconds"].as_i64() {
                    Some(seconds) => crate::lifted::duration::human_duration(
                        jiff::SignedDuration::from_secs(seconds),
                    ),
                    None => "<none>".to_owned(),
                };
                vec![
                    name(o),
                    age(o, now).into(),
                    or_none(string(&spec["signerName"])),
                    string(&spec["username"]).into(),
                    duration.into(),
                    crate::certificates::lifted::condition_column(o).into(),
                ]
            }),
        ),
        ("apps", "ReplicaSet") => (
            vec![
                col("Name", "string", 0),
                col("Desired", "integer", 0),
                col("Current", "integer", 0),
                col("Ready", "integer", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let (names, images) = containers(&o["spec"]["template"]["spec"]);
                vec![
                    name(o),
                    o["spec"]["replicas"].as_i64().unwrap_or(1).into(),
                    int(&o["status"]["replicas"]).into(),
                    int(&o["status"]["readyReplicas"]).into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                    selector_text(&o["spec"]["selector"]).into(),
                ]
            }),
        ),
        ("apps", "StatefulSet") => (
            vec![
                col("Name", "string", 0),
                col("Ready", "string", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let (names, images) = containers(&o["spec"]["template"]["spec"]);
                vec![
                    name(o),
                    format!(
                        "{}/{}",
                        int(&o["status"]["readyReplicas"]),
                        o["spec"]["replicas"].as_i64().unwrap_or(1)
                    )
                    .into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                ]
            }),
        ),
        ("batch", "Job") => (
            vec![
                col("Name", "string", 0),
                col("Status", "string", 0),
                col("Completions", "string", 0),
                col("Duration", "string", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let cells = crate::lifted::print_job::cells(o, now);
                let (names, images) = containers(&o["spec"]["template"]["spec"]);
                vec![
                    name(o),
                    cells.status.into(),
                    cells.completions.into(),
                    cells.duration.into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                    selector_text(&o["spec"]["selector"]).into(),
                ]
            }),
        ),
        // kube's printCronJob.
        ("batch", "CronJob") => (
            vec![
                col("Name", "string", 0),
                col("Schedule", "string", 0),
                col("Timezone", "string", 0),
                col("Suspend", "boolean", 0),
                col("Active", "integer", 0),
                col("Last Schedule", "string", 0),
                col("Age", "string", 0),
                col("Containers", "string", 1),
                col("Images", "string", 1),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let job = &o["spec"]["jobTemplate"]["spec"];
                let (names, images) = containers(&job["template"]["spec"]);
                let last = o["status"]["lastScheduleTime"]
                    .as_str()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                    .map_or("<none>".to_owned(), |t| {
                        crate::lifted::duration::human_duration(now.duration_since(t))
                    });
                let suspend = match o["spec"]["suspend"].as_bool() {
                    None => "<unset>",
                    Some(true) => "True",
                    Some(false) => "False",
                };
                vec![
                    name(o),
                    string(&o["spec"]["schedule"]).into(),
                    o["spec"]["timeZone"].as_str().unwrap_or("<none>").into(),
                    suspend.into(),
                    o["status"]["active"].as_array().map_or(0, Vec::len).into(),
                    last.into(),
                    age(o, now).into(),
                    names.into(),
                    images.into(),
                    selector_text(&job["selector"]).into(),
                ]
            }),
        ),
        ("", "Event") | ("events.k8s.io", "Event") => super::event::printer(info, now),
        ("", "Pod") => (
            vec![
                col("Name", "string", 0),
                col("Ready", "string", 0),
                col("Status", "string", 0),
                col("Restarts", "string", 0),
                col("Age", "string", 0),
                col("IP", "string", 1),
                col("Node", "string", 1),
                col("Nominated Node", "string", 1),
                col("Readiness Gates", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let cells = crate::lifted::print_pod::cells(o, now);
                vec![
                    name(o),
                    cells.ready.into(),
                    cells.status.into(),
                    cells.restarts.into(),
                    age(o, now).into(),
                    cells.ip.into(),
                    cells.node.into(),
                    cells.nominated_node.into(),
                    cells.readiness_gates.into(),
                ]
            }),
        ),
        ("", "Namespace") => (
            vec![
                col("Name", "string", 0),
                col("Status", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    string(&o["status"]["phase"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("", "ConfigMap") => (
            vec![
                col("Name", "string", 0),
                col("Data", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let n = o["data"].as_object().map_or(0, |m| m.len())
                    + o["binaryData"].as_object().map_or(0, |m| m.len());
                vec![name(o), n.into(), age(o, now).into()]
            }),
        ),
        ("", "Secret") => (
            vec![
                col("Name", "string", 0),
                col("Type", "string", 0),
                col("Data", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                let n = o["data"].as_object().map_or(0, |m| m.len());
                let type_ = o["type"].as_str().unwrap_or("Opaque").to_owned();
                vec![name(o), type_.into(), n.into(), age(o, now).into()]
            }),
        ),
        ("", "Service") => (
            vec![
                col("Name", "string", 0),
                col("Type", "string", 0),
                col("Cluster-IP", "string", 0),
                col("External-IP", "string", 0),
                col("Port(s)", "string", 0),
                col("Age", "string", 0),
                col("Selector", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let ports = o["spec"]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| {
                        let proto = p["protocol"].as_str().unwrap_or("TCP");
                        match p["nodePort"].as_i64() {
                            Some(node) => format!("{}:{node}/{proto}", int(&p["port"])),
                            None => format!("{}/{proto}", int(&p["port"])),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",");
                let selector = o["spec"]["selector"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default();
                vec![
                    name(o),
                    o["spec"]["type"].as_str().unwrap_or("ClusterIP").into(),
                    or_none(string(&o["spec"]["clusterIP"])),
                    or_none(
                        o["spec"]["externalIPs"]
                            .as_array()
                            .map(|a| a.iter().map(string).collect::<Vec<_>>().join(","))
                            .unwrap_or_default(),
                    ),
                    or_none(ports),
                    age(o, now).into(),
                    or_none(selector),
                ]
            }),
        ),
        ("discovery.k8s.io", "EndpointSlice") => (
            vec![
                col("Name", "string", 0),
                col("AddressType", "string", 0),
                col("Ports", "string", 0),
                col("Endpoints", "string", 0),
                col("Age", "string", 0),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    string(&o["addressType"]).into(),
                    slice_ports(&o["ports"]).into(),
                    slice_endpoints(&o["endpoints"]).into(),
                    age(o, now).into(),
                ]
            }),
        ),
        ("", "Node") => (
            vec![
                col("Name", "string", 0),
                col("Status", "string", 0),
                col("Roles", "string", 0),
                col("Age", "string", 0),
                col("Version", "string", 0),
                col("Internal-IP", "string", 1),
                col("External-IP", "string", 1),
                col("OS-Image", "string", 1),
                col("Kernel-Version", "string", 1),
                col("Container-Runtime", "string", 1),
            ],
            Box::new(move |o: &Value| {
                let cells = crate::lifted::print_node::cells(o);
                vec![
                    name(o),
                    cells.status.into(),
                    cells.roles.into(),
                    age(o, now).into(),
                    cells.version.into(),
                    cells.internal_ip.into(),
                    cells.external_ip.into(),
                    cells.os_image.into(),
                    cells.kernel_version.into(),
                    cells.container_runtime.into(),
                ]
            }),
        ),
        // Karmada's aggregated API server prints NAME VERSION MODE READY AGE (wide: APIENDPOINT);
        // wide adds the topology and the GPU counts of the health view.
        ("cluster.karmada.io", "Cluster") => (
            vec![
                col("Name", "string", 0),
                col("Version", "string", 0),
                col("Mode", "string", 0),
                col("Ready", "string", 0),
                col("Age", "string", 0),
                col("Zones", "string", 1),
                col("Region", "string", 1),
                col("Provider", "string", 1),
                col("API-Endpoint", "string", 1),
                col("GPU-Allocatable", "integer", 1),
                col("GPU-Allocated", "integer", 1),
            ],
            Box::new(move |o: &Value| {
                let ready = condition(o, "Ready");
                let zones = o["spec"]["zones"]
                    .as_array()
                    .map(|z| z.iter().map(string).collect::<Vec<_>>().join(","))
                    .unwrap_or_default();
                let summary = &o["status"]["resourceSummary"];
                vec![
                    name(o),
                    string(&o["status"]["kubernetesVersion"]).into(),
                    string(&o["spec"]["syncMode"]).into(),
                    if ready.is_empty() {
                        "Unknown".into()
                    } else {
                        ready
                    }
                    .into(),
                    age(o, now).into(),
                    or_none(zones),
                    or_none(string(&o["spec"]["region"])),
                    or_none(string(&o["spec"]["provider"])),
                    string(&o["spec"]["apiEndpoint"]).into(),
                    crate::cluster_health::gpus(&summary["allocatable"]).into(),
                    crate::cluster_health::gpus(&summary["allocated"]).into(),
                ]
            }),
        ),
        // Karmada's CRD columns (SCHEDULED, FULLYAPPLIED, AGE); wide adds, per target cluster,
        // ready/desired replicas from the aggregated status and the GPUs the placement holds.
        ("work.karmada.io", "ResourceBinding" | "ClusterResourceBinding") => (
            vec![
                col("Name", "string", 0),
                col("Scheduled", "string", 0),
                col("FullyApplied", "string", 0),
                col("Age", "string", 0),
                col("Clusters", "string", 1),
                col("GPUs", "integer", 1),
            ],
            Box::new(move |o: &Value| {
                vec![
                    name(o),
                    null_if_empty(condition(o, "Scheduled")),
                    null_if_empty(condition(o, "FullyApplied")),
                    age(o, now).into(),
                    or_none(binding_clusters(o)),
                    binding_gpus(o).into(),
                ]
            }),
        ),
        // kube's default table convertor, which both serve with.
        ("apiextensions.k8s.io", "CustomResourceDefinition")
        | ("search.karmada.io", "ResourceRegistry") => (
            vec![col("Name", "string", 0), col("Created At", "date", 0)],
            Box::new(move |o: &Value| vec![name(o), o["metadata"]["creationTimestamp"].clone()]),
        ),
        _ => return more::builtin(info, now),
    };
    Some(printer)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn binding(replicas: i64) -> Value {
        json!({
            "spec": {
                "replicas": replicas,
                "replicaRequirements": {"resourceRequest": {"cpu": "4", "nvidia.com/gpu": "2"}},
                "clusters": [
                    {"name": "us-west-2", "replicas": 3},
                    {"name": "cn-shanghai", "replicas": 5},
                    {"name": "eu-central-1", "replicas": 2},
                ],
            },
            "status": {"aggregatedStatus": [
                {"clusterName": "cn-shanghai", "status": {"readyReplicas": 5}},
                {"clusterName": "us-west-2", "status": {"readyReplicas": 1}},
            ]},
        })
    }

    #[test]
    fn binding_wide_columns_show_ready_over_desired_per_cluster_and_the_gpus_held() {
        assert_eq!(
            binding_clusters(&binding(10)),
            "us-west-2:1/3,cn-shanghai:5/5,eu-central-1:0/2"
        );
        assert_eq!(binding_gpus(&binding(10)), 20);
    }

    #[test]
    fn endpoint_slices_list_three_ports_and_addresses_then_count_the_rest() {
        assert_eq!(slice_ports(&json!([])), "<unset>");
        assert_eq!(slice_ports(&Value::Null), "<unset>");
        assert_eq!(
            slice_ports(&json!([{"port": 80}, {"name": "metrics"}, {}])),
            "80,metrics,*"
        );
        assert_eq!(
            slice_ports(&json!([{"port": 1}, {"port": 2}, {"port": 3}, {"port": 4}, {"port": 5}])),
            "1,2,3 + 2 more..."
        );
        assert_eq!(slice_endpoints(&json!([])), "<unset>");
        assert_eq!(
            slice_endpoints(&json!([
                {"addresses": ["10.0.0.1"]},
                {"addresses": ["10.0.0.2", "10.0.0.3"]},
                {"addresses": ["10.0.0.4"]},
            ])),
            "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more..."
        );
    }

    #[test]
    fn a_binding_without_replicas_lists_its_clusters_only() {
        let mut b = binding(0);
        b["spec"]["replicaRequirements"] = Value::Null;
        assert_eq!(binding_clusters(&b), "us-west-2,cn-shanghai,eu-central-1");
        assert_eq!(binding_gpus(&b), 0);
    }
}
