//! Defaults of Services: `SetDefaults_Service`, and the IP family fields kube-apiserver's
//! service REST storage fills in before it allocates cluster IPs.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes v1.32:
//! - pkg/apis/core/v1/defaults.go `SetDefaults_Service` (session affinity, type, port
//!   protocol and target port, traffic policies, `allocateLoadBalancerNodePorts`, the load
//!   balancer ingress `ipMode`) and the declarative `+default="TCP"` of `ServicePort.protocol`.
//! - pkg/registry/core/service/strategy.go `normalizeClusterIPs` (create: a lone `clusterIP`
//!   becomes `clusterIPs`).
//! - pkg/registry/core/service/storage/alloc.go `initIPFamilyFields`, for a single-stack IPv4
//!   cluster: the policy defaults to SingleStack (RequireDualStack when headless without a
//!   selector), families are inferred from given cluster IPs, else IPv4 (plus IPv6 for a
//!   headless selectorless service that is not SingleStack). Errors it raises (dual-stack
//!   demanded of a single-stack cluster) are validation's business and not reported here.
//!
//! Not ported: allocating cluster IPs and node ports (an allocator, not defaulting), and
//! adopting the previous object's `ipFamilyPolicy` on update (the registry's update path keeps
//! it anyway, since patches start from the stored object).

use serde_json::{Value, json};

use super::fields::{Obj, child, existing, items, list_empty, or_insert, or_insert_str, str_of};

/// `v1.DefaultClientIPServiceAffinitySeconds`: three hours.
const CLIENT_IP_AFFINITY_SECONDS: i64 = 10_800;

pub fn service(service: &mut Obj) {
    let Some(spec) = child(service, "spec") else {
        return;
    };
    session_affinity(spec);
    or_insert_str(spec, "type", "ClusterIP");
    for port in items(spec, "ports") {
        or_insert_str(port, "protocol", "TCP");
        let target_unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(n) => n.as_f64() == Some(0.0),
        };
        if target_unset && let Some(number) = port.get("port").cloned() {
            port.insert("targetPort".into(), number);
        }
    }
    let kind = str_of(spec, "type").to_owned();
    let externally_accessible = kind == "LoadBalancer"
        || kind == "NodePort"
        || (kind == "ClusterIP" && !list_empty(spec, "externalIPs"));
    if externally_accessible {
        or_insert_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        or_insert(spec, "internalTrafficPolicy", "Cluster");
    }
    if kind == "LoadBalancer" {
        or_insert(spec, "allocateLoadBalancerNodePorts", true);
        let ingress = existing(service, "status")
            .and_then(|s| existing(s, "loadBalancer"))
            .into_iter()
            .flat_map(|lb| items(lb, "ingress"));
        for entry in ingress {
            if !str_of(entry, "ip").is_empty() {
                or_insert(entry, "ipMode", "VIP");
            }
        }
    }
    if kind != "ExternalName"
        && let Some(spec) = existing(service, "spec")
    {
        cluster_ips(spec);
        ip_families(spec);
    }
}

/// `None` drops any affinity config; `ClientIP` gets the default timeout when it has none.
fn session_affinity(spec: &mut Obj) {
    or_insert_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}}),
                );
            }
        }
        _ => {}
    }
}

fn cluster_ips(spec: &mut Obj) {
    let single = str_of(spec, "clusterIP").to_owned();
    if !single.is_empty() && list_empty(spec, "clusterIPs") {
        spec.insert("clusterIPs".into(), json!([single]));
    }
}

fn ip_families(spec: &mut Obj) {
    let headless = str_of(spec, "clusterIP") == "None";
    let selectorless = spec
        .get("selector")
        .and_then(Value::as_object)
        .is_none_or(|s| s.is_empty());
    let policy = if headless && selectorless {
        "RequireDualStack"
    } else {
        "SingleStack"
    };
    or_insert(spec, "ipFamilyPolicy", policy);
    let Some(policy) = spec
        .get("ipFamilyPolicy")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    let ips: Vec<String> = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .take_while(|ip| *ip != "None")
        .map(str::to_owned)
        .collect();
    if spec
        .get("ipFamilies")
        .is_some_and(|f| !f.is_array() && !f.is_null())
    {
        return;
    }
    let families = spec
        .entry("ipFamilies")
        .or_insert_with(|| Value::Array(Vec::new()));
    if families.is_null() {
        *families = Value::Array(Vec::new());
    }
    let Some(families) = families.as_array_mut() else {
        return;
    };
    for (i, ip) in ips.iter().enumerate() {
        if i >= families.len() {
            families.push(family_of(ip).into());
        }
    }
    if families.is_empty() {
        families.push("IPv4".into());
    }
    if headless && selectorless && families.len() < 2 && policy != "SingleStack" {
        let other = if families[0] == "IPv4" {
            "IPv6"
        } else {
            "IPv4"
        };
        families.push(other.into());
    }
}

fn family_of(ip: &str) -> &'static str {
    if ip.contains(':') { "IPv6" } else { "IPv4" }
}
