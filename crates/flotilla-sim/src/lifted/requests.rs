//! What a pod asks of a node.
//!
//! Behaviour of k8s.io/component-helpers `resource/helpers.go` (`PodRequests`) as the
//! NodeResourcesFit plugin uses it at v1.32: the sum of the containers' requests (a missing
//! request falls back to the limit, as defaulting does), at least the largest init container's,
//! plus restartable (sidecar) init containers and the pod overhead. CPU counts in millicores,
//! everything else in whole units (bytes for memory), rounded up.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Container;

use crate::pod::Pod;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Resource name → amount (millicores for `cpu`).
pub type Amounts = BTreeMap<String, i64>;

/// The amount of one quantity in the unit the scheduler counts `name` in, or `None` when it is
/// unparsable.
pub fn amount(name: &str, quantity: &str) -> Option<i64> {
    let q = flotilla_api::Quantity::parse(quantity).ok()?;
    if name == "cpu" {
        q.as_milli()
    } else {
        q.as_i64()
    }
}

fn container_requests(container: &Container) -> Amounts {
    let mut out = Amounts::new();
    let Some(resources) = &container.resources else {
        return out;
    };
    let mut add = |list: &BTreeMap<String, Quantity>, only_missing: bool| {
        for (name, q) in list {
            if only_missing && out.contains_key(name) {
                continue;
            }
            if let Some(v) = amount(name, &q.0) {
                out.insert(name.clone(), v);
            }
        }
    };
    if let Some(requests) = &resources.requests {
        add(requests, false);
    }
    if let Some(limits) = &resources.limits {
        add(limits, true);
    }
    out
}

fn add_into(total: &mut Amounts, more: &Amounts) {
    for (k, v) in more {
        *total.entry(k.clone()).or_default() += v;
    }
}

/// The pod's effective requests (without the implicit one pod slot).
pub fn pod_requests(pod: &Pod) -> Amounts {
    let Some(spec) = &pod.spec else {
        return Amounts::new();
    };
    let mut total = Amounts::new();
    for c in &spec.containers {
        add_into(&mut total, &container_requests(c));
    }
    let mut sidecars = Amounts::new();
    let mut init_max = Amounts::new();
    for c in spec.init_containers.as_deref().unwrap_or_default() {
        let requests = container_requests(c);
        if c.restart_policy.as_deref() == Some("Always") {
            add_into(&mut sidecars, &requests);
            add_into(&mut total, &requests);
        } else {
            // A regular init container runs alongside the sidecars started before it.
            let mut running = sidecars.clone();
            add_into(&mut running, &requests);
            for (k, v) in running {
                let slot = init_max.entry(k).or_default();
                *slot = (*slot).max(v);
            }
        }
    }
    for (k, v) in init_max {
        let slot = total.entry(k).or_default();
        *slot = (*slot).max(v);
    }
    if let Some(overhead) = &spec.overhead {
        for (name, q) in overhead {
            if let Some(v) = amount(name, &q.0) {
                *total.entry(name.clone()).or_default() += v;
            }
        }
    }
    total.retain(|_, v| *v != 0);
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containers_sum_init_max_limits_fallback_and_overhead() {
        let pod: Pod = serde_json::from_value(json!({"spec": {
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                {"name": "b", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "2"}}}
            ],
            "initContainers": [
                {"name": "i", "resources": {"requests": {"cpu": "4"}}},
                {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Mi"}}}
            ],
            "overhead": {"cpu": "100m"}
        }}))
        .expect("a pod");
        let r = pod_requests(&pod);
        assert_eq!(
            r["cpu"], 4100,
            "the init container's 4 CPU exceed the 1.5 of containers"
        );
        assert_eq!(r["memory"], (1 << 30) + (1 << 20));
        assert_eq!(r["nvidia.com/gpu"], 2, "requests default to limits");
    }

    #[test]
    fn units() {
        assert_eq!(amount("cpu", "1.5"), Some(1500));
        assert_eq!(amount("memory", "1Ki"), Some(1024));
        assert_eq!(amount("memory", "lots"), None);
    }
}
