//! What a FederatedHPA reads from members: the workload's scale in each Ready cluster of its
//! binding, the pods its selector picks and their resource metrics.

use std::collections::BTreeMap;

use flotilla_api::lifted::quantity::Quantity;
use flotilla_member::MemberClients;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersion;
use kube::discovery;
use tracing::warn;

use crate::lifted::hpa::PodFacts;

/// `metrics.k8s.io/v1beta1` PodMetrics.
pub(super) fn pod_metrics_resource() -> ApiResource {
    ApiResource {
        group: "metrics.k8s.io".into(),
        version: "v1beta1".into(),
        api_version: "metrics.k8s.io/v1beta1".into(),
        kind: "PodMetrics".into(),
        plural: "pods".into(),
    }
}

/// Checks an apiVersion as Go's `schema.ParseGroupVersion` does.
pub(super) fn parse_group_version(api_version: &str) -> Result<GroupVersion, String> {
    if api_version.is_empty() {
        return Ok(GroupVersion::gv("", ""));
    }
    if api_version.matches('/').count() > 1 {
        return Err(format!("unexpected GroupVersion string: {api_version}"));
    }
    api_version
        .parse::<GroupVersion>()
        .map_err(|_| format!("unexpected GroupVersion string: {api_version}"))
}

/// An API error as Kubernetes prints it (its message), anything else as itself.
pub(super) use flotilla_runtime::errors::message as kube_message;

/// A selector the target's scale reported that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SelectorProblem {
    pub event_reason: &'static str,
    pub event_message: String,
    pub condition_message: String,
}

/// One member's pod metrics: per pod name, its containers' usage by resource (milli-units),
/// with the sample's time and window.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MemberPodMetrics {
    pub pod: String,
    pub timestamp: jiff::Timestamp,
    pub window: jiff::SignedDuration,
    pub containers: Vec<(String, BTreeMap<String, i64>)>,
}

/// Everything read from the members.
#[derive(Debug)]
pub(super) struct Gathered {
    /// The FederatedHPA's (and its pods') namespace.
    pub namespace: String,
    /// Sum of the members' `scale.spec.replicas`.
    pub spec_replicas: i32,
    /// Sum of the members' `scale.status.replicas`.
    pub status_replicas: i32,
    /// The first member's scale selector.
    pub selector: String,
    pub selector_problems: Vec<SelectorProblem>,
    /// The pods, keyed `cluster/name`.
    pub pods: Vec<PodFacts>,
    /// Labels of the pods (by key), to detect pods two autoscalers select.
    pub pod_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// Metrics keyed `cluster/name`, or why none could be read.
    pub metrics: Result<Vec<(String, MemberPodMetrics)>, String>,
}

/// Reads scale, pods and pod metrics of the target in each of `clusters` (a member that fails
/// is left out, as Karmada skips it).
pub(super) async fn gather(
    members: &dyn MemberClients,
    clusters: &[String],
    namespace: &str,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Gathered {
    let mut gathered = Gathered {
        namespace: namespace.to_owned(),
        spec_replicas: 0,
        status_replicas: 0,
        selector: String::new(),
        selector_problems: Vec::new(),
        pods: Vec::new(),
        pod_labels: BTreeMap::new(),
        metrics: Ok(Vec::new()),
    };
    let mut metric_errors = Vec::new();
    let mut metrics = Vec::new();
    for cluster in clusters {
        let client = match members.client(cluster).await {
            Ok(client) => client,
            Err(error) => {
                warn!(%cluster, %error, "FederatedHPA: no client for the member");
                continue;
            }
        };
        let resource = match member_resource(&client, api_version, kind).await {
            Ok(resource) => resource,
            Err(error) => {
                warn!(%cluster, %error, "FederatedHPA: the member does not serve the target's kind");
                continue;
            }
        };
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
        let scale = match api.get_scale(name).await {
            Ok(scale) => scale,
            Err(error) => {
                warn!(%cluster, %error, "FederatedHPA: reading the member's scale failed");
                continue;
            }
        };
        gathered.spec_replicas += scale.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
        let status = scale.status.unwrap_or_default();
        gathered.status_replicas += status.replicas;
        let selector = status.selector.unwrap_or_default();
        if gathered.selector.is_empty() {
            gathered.selector = selector.clone();
        }
        if selector.is_empty() {
            gathered.selector_problems.push(SelectorProblem {
                event_reason: "SelectorRequired",
                event_message: "selector is required".into(),
                condition_message: "the HPA target's scale is missing a selector".into(),
            });
            continue;
        }
        if let Err(error) = flotilla_api::selector::label::LabelSelector::parse(&selector) {
            let message = format!(
                "couldn't convert selector into a corresponding internal selector object: {error}"
            );
            gathered.selector_problems.push(SelectorProblem {
                event_reason: "InvalidSelector",
                event_message: message.clone(),
                condition_message: message,
            });
            continue;
        }
        let params = ListParams::default().labels(&selector);
        match Api::<Pod>::namespaced(client.clone(), namespace)
            .list(&params)
            .await
        {
            Ok(list) => {
                for pod in list.items {
                    let facts = pod_facts(cluster, &pod);
                    gathered.pod_labels.insert(
                        facts.key.clone(),
                        pod.metadata.labels.clone().unwrap_or_default(),
                    );
                    gathered.pods.push(facts);
                }
            }
            Err(error) => {
                warn!(%cluster, %error, "FederatedHPA: listing the member's pods failed");
                continue;
            }
        }
        let metrics_api: Api<DynamicObject> =
            Api::namespaced_with(client, namespace, &pod_metrics_resource());
        match metrics_api.list(&params).await {
            Ok(list) => {
                for item in list.items {
                    if let Some(sample) = member_pod_metrics(&item) {
                        metrics.push((format!("{cluster}/{}", sample.pod), sample));
                    }
                }
            }
            Err(error) => metric_errors.push(kube_message(&error)),
        }
    }
    gathered.metrics = if metrics.is_empty() {
        match metric_errors.into_iter().next() {
            Some(error) => Err(format!(
                "unable to fetch metrics from resource metrics API: {error}"
            )),
            None => Err("no metrics returned from resource metrics API".into()),
        }
    } else {
        Ok(metrics)
    };
    gathered
}

async fn member_resource(
    client: &kube::Client,
    api_version: &str,
    kind: &str,
) -> Result<ApiResource, String> {
    let gv = parse_group_version(api_version)?;
    let group = discovery::oneshot::pinned_group(client, &gv)
        .await
        .map_err(|e| kube_message(&e))?;
    group
        .recommended_kind(kind)
        .map(|(resource, _)| resource)
        .ok_or_else(|| format!("no matches for kind \"{kind}\" in version \"{api_version}\""))
}

fn timestamp(
    value: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
) -> Option<jiff::Timestamp> {
    value.map(|t| t.0)
}

/// What the calculator needs of a member pod.
pub(super) fn pod_facts(cluster: &str, pod: &Pod) -> PodFacts {
    let status = pod.status.clone().unwrap_or_default();
    let ready = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .map(|c| {
            (
                c.status == "True",
                timestamp(c.last_transition_time.as_ref()).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
            )
        });
    let containers = pod
        .spec
        .as_ref()
        .map(|spec| {
            spec.containers
                .iter()
                .map(|c| {
                    let requests = c
                        .resources
                        .as_ref()
                        .and_then(|r| r.requests.as_ref())
                        .map(|requests| {
                            requests
                                .iter()
                                .filter_map(|(name, q)| {
                                    Some((name.clone(), Quantity::parse(&q.0).ok()?.as_milli()?))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    (c.name.clone(), requests)
                })
                .collect()
        })
        .unwrap_or_default();
    PodFacts {
        key: format!(
            "{cluster}/{}",
            pod.metadata.name.clone().unwrap_or_default()
        ),
        deleting: pod.metadata.deletion_timestamp.is_some(),
        phase: status.phase.clone().unwrap_or_default(),
        start_time: timestamp(status.start_time.as_ref()),
        ready,
        containers,
    }
}

/// One PodMetrics object, read leniently (a malformed one is left out).
pub(super) fn member_pod_metrics(item: &DynamicObject) -> Option<MemberPodMetrics> {
    let pod = item.metadata.name.clone()?;
    let timestamp: jiff::Timestamp = item.data.get("timestamp")?.as_str()?.parse().ok()?;
    let window = item
        .data
        .get("window")
        .and_then(|w| w.as_str())
        .and_then(flotilla_api::karmada::cron::go_duration_secs)
        .map(jiff::SignedDuration::from_secs_f64)
        .unwrap_or(jiff::SignedDuration::ZERO);
    let containers = item
        .data
        .get("containers")?
        .as_array()?
        .iter()
        .map(|c| {
            let name = c
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or("")
                .to_owned();
            let usage = c
                .get("usage")
                .and_then(|u| u.as_object())
                .map(|usage| {
                    usage
                        .iter()
                        .filter_map(|(resource, q)| {
                            Some((
                                resource.clone(),
                                Quantity::parse(q.as_str()?).ok()?.as_milli()?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default();
            (name, usage)
        })
        .collect();
    Some(MemberPodMetrics {
        pod,
        timestamp,
        window,
        containers,
    })
}
