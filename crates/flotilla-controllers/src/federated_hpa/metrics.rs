//! The replicas each metric of a FederatedHPA asks for (Karmada's `computeReplicasForMetrics`
//! and `computeReplicasForMetric`), with the metric statuses and conditions they produce.

use flotilla_api::karmada::FederatedHPA;
use flotilla_api::lifted::quantity::{Quantity, QuantityFormat};
use flotilla_api::selector::label::LabelSelector;
use flotilla_runtime::events::EventType;
use k8s_openapi::api::autoscaling::v2::{
    ContainerResourceMetricStatus, MetricSpec, MetricStatus, MetricTarget, MetricValueStatus,
    ResourceMetricStatus,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as KubeQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::gather::Gathered;
use super::state::set_condition;
use super::{Controller, Key, Proposal};
use crate::lifted::hpa::{self, Sample, Samples};

/// What Kubernetes answers when no custom metrics API is registered (Flotilla serves none).
const NO_CUSTOM_METRICS: &str = "unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered";

fn milli(value: i64) -> KubeQuantity {
    KubeQuantity(Quantity::from_milli(value, QuantityFormat::DecimalSI).to_string())
}

/// A metric that could not be computed: the condition to set and the error.
struct Invalid {
    reason: String,
    message: String,
    error: String,
}

/// One metric's proposal.
struct One {
    replicas: i32,
    metric: String,
    status: MetricStatus,
}

/// Per pod, the usage of `resource` in milli-units (summed over containers, or `container`
/// alone), as Kubernetes' resource metrics client reads PodMetrics.
fn samples(
    gathered: &Gathered,
    resource: &str,
    container: Option<&str>,
) -> Result<Samples, String> {
    let items = gathered.metrics.as_ref().map_err(Clone::clone)?;
    let mut samples = Samples::new();
    for (key, m) in items {
        let value = match container {
            Some(container) => {
                let Some((_, usage)) = m.containers.iter().find(|(name, _)| name == container)
                else {
                    return Err(format!(
                        "failed to get container metrics: container {container} not present in metrics for pod {}/{}",
                        gathered.namespace, m.pod
                    ));
                };
                match usage.get(resource) {
                    Some(value) => *value,
                    None => continue,
                }
            }
            None => {
                if m.containers.is_empty() {
                    continue;
                }
                let mut sum = 0;
                let mut missing = false;
                for (_, usage) in &m.containers {
                    match usage.get(resource) {
                        Some(value) => sum += value,
                        None => {
                            missing = true;
                            break;
                        }
                    }
                }
                if missing {
                    continue;
                }
                sum
            }
        };
        samples.insert(
            key.clone(),
            Sample {
                timestamp: m.timestamp,
                window: m.window,
                value,
            },
        );
    }
    Ok(samples)
}

impl Controller {
    /// Records `selector` as this FederatedHPA's and fails when another FederatedHPA of the
    /// namespace selects one of the pods (Karmada's `validateAndParseSelector`).
    fn check_selector(&self, key: &Key, gathered: &Gathered) -> Result<(), String> {
        let selector = LabelSelector::parse(&gathered.selector).map_err(|error| {
            format!(
                "couldn't convert selector into a corresponding internal selector object: {error}"
            )
        })?;
        let mut selectors = self.selectors.lock();
        selectors.insert(key.clone(), selector);
        let mut controlling: Vec<String> = selectors
            .iter()
            .filter(|(other, _)| other.0 == key.0)
            .filter(|(_, selector)| {
                gathered
                    .pod_labels
                    .values()
                    .any(|labels| selector.matches(labels))
            })
            .map(|(other, _)| format!("{}/{}", other.0, other.1))
            .collect();
        controlling.sort();
        if controlling.len() > 1 {
            return Err(format!(
                "pods by selector {} are controlled by multiple HPAs: [{}]",
                gathered.selector,
                controlling.join(" ")
            ));
        }
        Ok(())
    }

    pub(super) async fn compute(
        &self,
        key: &Key,
        fhpa: &mut FederatedHPA,
        gathered: &Gathered,
        current: i32,
        now: &Time,
    ) -> Result<Proposal, String> {
        if let Err(message) = self.check_selector(key, gathered) {
            let reason = if message.starts_with("couldn't convert") {
                "InvalidSelector"
            } else {
                "AmbiguousSelector"
            };
            self.event(fhpa, EventType::Warning, reason, message.clone())
                .await;
            set_condition(
                fhpa.status.get_or_insert_with(Default::default),
                "ScalingActive",
                "False",
                reason,
                message.clone(),
                now,
            );
            return Err(message);
        }
        let calibration = f64::from(gathered.spec_replicas) / f64::from(current.max(1));
        let specs = fhpa.spec.metrics.clone();
        let mut statuses = Vec::with_capacity(specs.len());
        let mut replicas = 0;
        let mut metric = String::new();
        let mut invalid: Vec<Invalid> = Vec::new();
        for spec in &specs {
            match self.one(spec, gathered, current, calibration, now) {
                Ok(one) => {
                    if replicas == 0 || one.replicas > replicas {
                        replicas = one.replicas;
                        metric = one.metric;
                    }
                    statuses.push(one.status);
                }
                Err(bad) => {
                    self.event(fhpa, EventType::Warning, &bad.reason, bad.message.clone())
                        .await;
                    statuses.push(MetricStatus {
                        type_: String::new(),
                        ..MetricStatus::default()
                    });
                    invalid.push(bad);
                }
            }
        }
        let first_error = invalid.first().map(|bad| {
            format!(
                "invalid metrics ({} invalid out of {}), first error is: {}",
                invalid.len(),
                specs.len(),
                bad.error
            )
        });
        if !invalid.is_empty() && (invalid.len() >= specs.len() || replicas < current) {
            let bad = &invalid[0];
            set_condition(
                fhpa.status.get_or_insert_with(Default::default),
                "ScalingActive",
                "False",
                &bad.reason,
                format!(
                    "the HPA was unable to compute the replica count: {}",
                    bad.message
                ),
                now,
            );
            return Err(first_error.unwrap_or_default());
        }
        set_condition(
            fhpa.status.get_or_insert_with(Default::default),
            "ScalingActive",
            "True",
            "ValidMetricFound",
            format!("the HPA was able to successfully calculate a replica count from {metric}"),
            now,
        );
        Ok(Proposal {
            replicas,
            metric,
            statuses,
            error: first_error,
        })
    }

    fn one(
        &self,
        spec: &MetricSpec,
        gathered: &Gathered,
        current: i32,
        calibration: f64,
        now: &Time,
    ) -> Result<One, Invalid> {
        match spec.type_.as_str() {
            "Resource" => {
                let Some(source) = spec.resource.as_ref() else {
                    return Err(unknown(&spec.type_));
                };
                let (replicas, metric, current_value) = self
                    .resource(
                        &source.name,
                        None,
                        &source.target,
                        gathered,
                        current,
                        calibration,
                        now,
                    )
                    .map_err(|message| Invalid {
                        reason: "FailedGetResourceMetric".into(),
                        error: format!(
                            "failed to get {} resource metric value: {message}",
                            source.name
                        ),
                        message,
                    })?;
                Ok(One {
                    replicas,
                    metric,
                    status: MetricStatus {
                        type_: "Resource".into(),
                        resource: Some(ResourceMetricStatus {
                            name: source.name.clone(),
                            current: current_value,
                        }),
                        ..MetricStatus::default()
                    },
                })
            }
            "ContainerResource" => {
                let Some(source) = spec.container_resource.as_ref() else {
                    return Err(unknown(&spec.type_));
                };
                let (replicas, metric, current_value) = self
                    .resource(
                        &source.name,
                        Some(&source.container),
                        &source.target,
                        gathered,
                        current,
                        calibration,
                        now,
                    )
                    .map_err(|message| Invalid {
                        reason: "FailedGetContainerResourceMetric".into(),
                        error: format!(
                            "failed to get {} container metric value: {message}",
                            source.container
                        ),
                        message,
                    })?;
                Ok(One {
                    replicas,
                    metric,
                    status: MetricStatus {
                        type_: "ContainerResource".into(),
                        container_resource: Some(ContainerResourceMetricStatus {
                            name: source.name.clone(),
                            container: source.container.clone(),
                            current: current_value,
                        }),
                        ..MetricStatus::default()
                    },
                })
            }
            "Pods" => Err(no_custom_metrics(
                "pods",
                "Pods",
                spec.pods.as_ref().map(|p| p.metric.name.as_str()),
            )),
            "Object" => Err(no_custom_metrics(
                "object",
                "Object",
                spec.object.as_ref().map(|o| o.metric.name.as_str()),
            )),
            other => Err(unknown(other)),
        }
    }

    /// A resource or container-resource metric: (replicas, metric name, current value).
    #[allow(clippy::too_many_arguments)]
    fn resource(
        &self,
        resource: &str,
        container: Option<&str>,
        target: &MetricTarget,
        gathered: &Gathered,
        current: i32,
        calibration: f64,
        now: &Time,
    ) -> Result<(i32, String, MetricValueStatus), String> {
        let tunables = &self.options.tunables;
        let fetched = samples(gathered, resource, container)
            .map_err(|e| format!("unable to get metrics for resource {resource}: {e}"));
        if let Some(average) = &target.average_value {
            let wanted = Quantity::parse(&average.0)
                .ok()
                .and_then(|q| q.as_milli())
                .unwrap_or(0);
            let (replicas, usage) = fetched
                .and_then(|samples| {
                    hpa::plain_replicas(
                        current,
                        wanted,
                        resource,
                        &gathered.pods,
                        samples,
                        calibration,
                        tunables,
                        now.0,
                    )
                    .map_err(|e| e.to_string())
                })
                .map_err(|e| format!("failed to get {resource} utilization: {e}"))?;
            return Ok((
                replicas,
                format!("{resource} resource"),
                MetricValueStatus {
                    average_value: Some(milli(usage)),
                    ..MetricValueStatus::default()
                },
            ));
        }
        let Some(utilization) = target.average_utilization else {
            return Err("invalid resource metric source: neither an average utilization target nor an average value target was set".into());
        };
        let proposal = fetched
            .and_then(|samples| {
                hpa::resource_replicas(
                    current,
                    utilization,
                    resource,
                    container,
                    &gathered.pods,
                    samples,
                    calibration,
                    tunables,
                    now.0,
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|e| format!("failed to get {resource} utilization: {e}"))?;
        let metric = if container.is_some() {
            format!("{resource} container resource utilization (percentage of request)")
        } else {
            format!("{resource} resource utilization (percentage of request)")
        };
        Ok((
            proposal.replicas,
            metric,
            MetricValueStatus {
                average_utilization: Some(proposal.utilization),
                average_value: Some(milli(proposal.average)),
                value: None,
            },
        ))
    }
}

/// A `Pods` or `Object` metric: there is no custom metrics API to ask.
fn no_custom_metrics(what: &str, kind: &str, name: Option<&str>) -> Invalid {
    let message = format!(
        "unable to get metric {}: {NO_CUSTOM_METRICS}",
        name.unwrap_or_default()
    );
    Invalid {
        reason: format!("FailedGet{kind}Metric"),
        error: format!("failed to get {what} metric value: {message}"),
        message,
    }
}

fn unknown(type_: &str) -> Invalid {
    let message = format!("unknown metric source type {type_:?}");
    Invalid {
        reason: "InvalidMetricSourceType".into(),
        error: message.clone(),
        message,
    }
}
