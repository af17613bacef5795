//! A pod's effective requests the way Karmada's cluster status controller counts them: the sum
//! of the app containers' requests, raised per resource to the largest init container request,
//! plus the pod overhead; CPU in millicores, everything else in whole units (rounded up), and
//! only CPU, memory, ephemeral storage, pods and scalar resources (extended resources such as
//! `nvidia.com/gpu`, hugepages, attachable volumes) count.
//!
//! One deliberate difference: Karmada raises the running total of *all* pods to an init
//! container's request (its `SetMaxResource` works on the accumulated sum), which makes init
//! containers count only for the first pods; here each pod's effective request is computed on
//! its own, as kube-scheduler does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;

use crate::summary::Amounts;

/// Whether Karmada's `Resource` counts `name` (native four, or a scalar resource).
pub fn is_counted(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage" | "pods") || is_scalar(name)
}

/// Kubernetes' `IsScalarResourceName`: extended, hugepages, prefixed native, attachable volumes.
pub fn is_scalar(name: &str) -> bool {
    name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
        || (name.contains('/') && !name.starts_with("requests."))
}

/// The integer a resource is counted in: millicores for CPU, units (rounded up) otherwise.
pub fn amount(name: &str, quantity: &flotilla_api::Quantity) -> i128 {
    let value = if name == "cpu" {
        quantity.as_milli()
    } else {
        quantity.as_i64()
    };
    value.map(i128::from).unwrap_or(i128::from(i64::MAX))
}

fn parse_list(
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> impl Iterator<Item = (&str, i128)> {
    list.into_iter().flatten().filter_map(|(name, q)| {
        if !is_counted(name) {
            return None;
        }
        let parsed = flotilla_api::Quantity::parse(&q.0).ok()?;
        Some((name.as_str(), amount(name, &parsed)))
    })
}

/// The effective requests of one pod (without the `pods` count).
pub fn pod_requests(spec: &PodSpec) -> Amounts {
    let mut total = Amounts::default();
    for container in &spec.containers {
        let requests = container
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref());
        for (name, value) in parse_list(requests) {
            total.add(name, value);
        }
    }
    for container in spec.init_containers.iter().flatten() {
        let requests = container
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref());
        for (name, value) in parse_list(requests) {
            total.raise_to(name, value);
        }
    }
    for (name, value) in parse_list(spec.overhead.as_ref()) {
        total.add(name, value);
    }
    total
}
