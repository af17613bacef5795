//! The horizontal pod autoscaler's arithmetic, as Karmada's FederatedHPA controller runs it.
//!
//! Provenance: Kubernetes `pkg/controller/podautoscaler/replica_calculator.go` and
//! `horizontal.go` (release-1.27), as Karmada lifts them into
//! `pkg/controllers/federatedhpa/replica_calculator.go` and `federatedhpa_controller.go`; the
//! utilization arithmetic of `pkg/controller/podautoscaler/metrics/utilization.go`. Karmada's
//! one change is the **calibration**: the pods counted come from every member the template was
//! propagated to, so a Duplicated template with 3 members has 3 pods per template replica, and
//! every proposal is divided by `sum of member replicas ÷ template replicas`.
//!
//! Written from the algorithms, not the code: pure functions over plain values, the clock
//! passed in. Pods are keyed by `cluster/name` (Kubernetes keys them by name alone; members may
//! reuse a pod name).

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

pub mod normalize;

/// The controller's tunables (Karmada's flags, with their defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tunables {
    /// `--horizontal-pod-autoscaler-tolerance`: a usage ratio within 1 ± tolerance changes nothing.
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`.
    pub cpu_initialization_period: SignedDuration,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`.
    pub initial_readiness_delay: SignedDuration,
    /// `--horizontal-pod-autoscaler-downscale-stabilization` (used when a behavior leaves the
    /// scale-down window out, and without behavior).
    pub downscale_stabilization: SignedDuration,
}

impl Default for Tunables {
    fn default() -> Self {
        Self {
            tolerance: 0.1,
            cpu_initialization_period: SignedDuration::from_mins(5),
            initial_readiness_delay: SignedDuration::from_secs(30),
            downscale_stabilization: SignedDuration::from_mins(5),
        }
    }
}

/// One pod's sample of a metric, in milli-units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub timestamp: Timestamp,
    pub window: SignedDuration,
    pub value: i64,
}

/// Samples by pod key.
pub type Samples = BTreeMap<String, Sample>;

/// What the calculator needs to know of a pod.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodFacts {
    /// `cluster/name`.
    pub key: String,
    pub deleting: bool,
    /// `status.phase`.
    pub phase: String,
    /// `status.startTime`.
    pub start_time: Option<Timestamp>,
    /// The `Ready` condition: its status and last transition.
    pub ready: Option<(bool, Timestamp)>,
    /// Regular containers: name and requests (milli-units by resource name).
    pub containers: Vec<(String, BTreeMap<String, i64>)>,
}

/// Why no proposal could be made (messages as Kubernetes words them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    #[error("no pods returned by selector while calculating replica count")]
    NoPods,
    #[error("did not receive metrics for any ready pods")]
    NoReadyMetrics,
    #[error("missing request for {resource} in container {container} of Pod {pod}")]
    MissingRequest {
        resource: String,
        container: String,
        pod: String,
    },
    #[error("no metrics returned matched known pods")]
    NoMatchingMetrics,
}

/// How the pods split for one metric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Groups {
    pub ready: usize,
    pub unready: BTreeSet<String>,
    pub missing: BTreeSet<String>,
    pub ignored: BTreeSet<String>,
}

/// Sorts pods into ready (counted), unready (their samples dropped; pending pods, and for CPU
/// pods still initialising), missing (no sample) and ignored (deleting or failed).
pub fn group_pods(
    pods: &[PodFacts],
    samples: &Samples,
    cpu: bool,
    tunables: &Tunables,
    now: Timestamp,
) -> Groups {
    let mut groups = Groups::default();
    for pod in pods {
        if pod.deleting || pod.phase == "Failed" {
            groups.ignored.insert(pod.key.clone());
            continue;
        }
        if pod.phase == "Pending" {
            groups.unready.insert(pod.key.clone());
            continue;
        }
        let Some(sample) = samples.get(&pod.key) else {
            groups.missing.insert(pod.key.clone());
            continue;
        };
        if cpu {
            let unready = match (pod.ready, pod.start_time) {
                (Some((ready, transition)), Some(started)) => {
                    if started + tunables.cpu_initialization_period > now {
                        // Still initialising: a sample counts once the pod is ready and a
                        // whole window was measured after it became so.
                        !ready || sample.timestamp < transition + sample.window
                    } else {
                        // Initialised: only a pod that never became ready is left out.
                        !ready && started + tunables.initial_readiness_delay > transition
                    }
                }
                _ => true,
            };
            if unready {
                groups.unready.insert(pod.key.clone());
                continue;
            }
        }
        groups.ready += 1;
    }
    groups
}

/// Each pod's request of `resource` (summed over its containers, or `container` alone).
pub fn pod_requests(
    pods: &[PodFacts],
    container: Option<&str>,
    resource: &str,
) -> Result<BTreeMap<String, i64>, CalcError> {
    let mut requests = BTreeMap::new();
    for pod in pods {
        let mut sum = 0;
        for (name, container_requests) in &pod.containers {
            if container.is_some_and(|c| c != name) {
                continue;
            }
            match container_requests.get(resource) {
                Some(request) => sum += request,
                None => {
                    return Err(CalcError::MissingRequest {
                        resource: resource.to_owned(),
                        container: name.clone(),
                        pod: pod.key.rsplit('/').next().unwrap_or(&pod.key).to_owned(),
                    });
                }
            }
        }
        requests.insert(pod.key.clone(), sum);
    }
    Ok(requests)
}

/// Usage ÷ request over the pods with both, against the target: (ratio, utilization in
/// percent, average usage in milli-units).
pub fn utilization_ratio(
    samples: &Samples,
    requests: &BTreeMap<String, i64>,
    target_utilization: i32,
) -> Result<(f64, i32, i64), CalcError> {
    let (mut usage, mut requested, mut entries) = (0i64, 0i64, 0i64);
    for (pod, sample) in samples {
        let Some(request) = requests.get(pod) else {
            continue;
        };
        usage += sample.value;
        requested += request;
        entries += 1;
    }
    if requested == 0 {
        return Err(CalcError::NoMatchingMetrics);
    }
    let utilization = ((usage * 100) / requested) as i32;
    Ok((
        f64::from(utilization) / f64::from(target_utilization),
        utilization,
        usage / entries,
    ))
}

/// Average usage against a target average: (ratio, average usage).
pub fn usage_ratio(samples: &Samples, target: i64) -> (f64, i64) {
    let total: i64 = samples.values().map(|s| s.value).sum();
    let average = total / (samples.len().max(1) as i64);
    (average as f64 / target as f64, average)
}

/// A utilization proposal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UtilizationProposal {
    pub replicas: i32,
    /// Percent of the request.
    pub utilization: i32,
    /// Average usage, milli-units.
    pub average: i64,
}

/// The replicas a resource utilization target asks for (`GetResourceReplicas`).
#[allow(clippy::too_many_arguments)]
pub fn resource_replicas(
    current: i32,
    target_utilization: i32,
    resource: &str,
    container: Option<&str>,
    pods: &[PodFacts],
    mut samples: Samples,
    calibration: f64,
    tunables: &Tunables,
    now: Timestamp,
) -> Result<UtilizationProposal, CalcError> {
    if pods.is_empty() {
        return Err(CalcError::NoPods);
    }
    let groups = group_pods(pods, &samples, resource == "cpu", tunables, now);
    for pod in groups.ignored.iter().chain(&groups.unready) {
        samples.remove(pod);
    }
    let requests = pod_requests(pods, container, resource)?;
    if samples.is_empty() {
        return Err(CalcError::NoReadyMetrics);
    }
    let (ratio, utilization, average) = utilization_ratio(&samples, &requests, target_utilization)?;
    let proposal = |replicas| UtilizationProposal {
        replicas,
        utilization,
        average,
    };
    let scale_up_with_unready = !groups.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && groups.missing.is_empty() {
        if (1.0 - ratio).abs() <= tunables.tolerance {
            return Ok(proposal(current));
        }
        return Ok(proposal(ceil(ratio * groups.ready as f64 / calibration)));
    }
    if !groups.missing.is_empty() {
        if ratio < 1.0 {
            // Scaling down: a pod without a sample is taken to use its whole request (or the
            // target, above 100%).
            let fallback = i64::from(target_utilization.max(100));
            for pod in &groups.missing {
                let request = requests.get(pod).copied().unwrap_or(0);
                samples.insert(pod.clone(), filler(now, request * fallback / 100));
            }
        } else if ratio > 1.0 {
            for pod in &groups.missing {
                samples.insert(pod.clone(), filler(now, 0));
            }
        }
    }
    if scale_up_with_unready {
        for pod in &groups.unready {
            samples.insert(pod.clone(), filler(now, 0));
        }
    }
    let (new_ratio, _, _) = utilization_ratio(&samples, &requests, target_utilization)?;
    Ok(proposal(settle(
        current,
        ratio,
        new_ratio,
        samples.len(),
        calibration,
        tunables,
    )))
}

/// The replicas a plain average target asks for (`calcPlainMetricReplicas`): (replicas,
/// average usage).
#[allow(clippy::too_many_arguments)]
pub fn plain_replicas(
    current: i32,
    target: i64,
    resource: &str,
    pods: &[PodFacts],
    mut samples: Samples,
    calibration: f64,
    tunables: &Tunables,
    now: Timestamp,
) -> Result<(i32, i64), CalcError> {
    if pods.is_empty() {
        return Err(CalcError::NoPods);
    }
    let groups = group_pods(pods, &samples, resource == "cpu", tunables, now);
    for pod in groups.ignored.iter().chain(&groups.unready) {
        samples.remove(pod);
    }
    if samples.is_empty() {
        return Err(CalcError::NoReadyMetrics);
    }
    let (ratio, average) = usage_ratio(&samples, target);
    let scale_up_with_unready = !groups.unready.is_empty() && ratio > 1.0;
    if !scale_up_with_unready && groups.missing.is_empty() {
        if (1.0 - ratio).abs() <= tunables.tolerance {
            return Ok((current, average));
        }
        return Ok((ceil(ratio * groups.ready as f64 / calibration), average));
    }
    if !groups.missing.is_empty() {
        let fill = if ratio < 1.0 { target } else { 0 };
        for pod in &groups.missing {
            samples.insert(pod.clone(), filler(now, fill));
        }
    }
    if scale_up_with_unready {
        for pod in &groups.unready {
            samples.insert(pod.clone(), filler(now, 0));
        }
    }
    let (new_ratio, _) = usage_ratio(&samples, target);
    Ok((
        settle(
            current,
            ratio,
            new_ratio,
            samples.len(),
            calibration,
            tunables,
        ),
        average,
    ))
}

fn filler(now: Timestamp, value: i64) -> Sample {
    Sample {
        timestamp: now,
        window: SignedDuration::ZERO,
        value,
    }
}

fn ceil(value: f64) -> i32 {
    value.ceil() as i32
}

/// The second pass, with missing and unready pods filled in: no change when the new ratio is
/// within tolerance or points the other way, or when the count would move against it.
fn settle(
    current: i32,
    ratio: f64,
    new_ratio: f64,
    counted: usize,
    calibration: f64,
    tunables: &Tunables,
) -> i32 {
    if (1.0 - new_ratio).abs() <= tunables.tolerance
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return current;
    }
    let replicas = ceil(new_ratio * counted as f64 / calibration);
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return current;
    }
    replicas
}

/// A recommendation made at some time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recommendation {
    pub replicas: i32,
    pub at: Timestamp,
}

/// A change of scale made at some time (replicas added, or removed, as a positive number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleEvent {
    pub change: i32,
    pub at: Timestamp,
    pub outdated: bool,
}

/// What one autoscaler remembers between syncs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub recommendations: Vec<Recommendation>,
    pub scale_ups: Vec<ScaleEvent>,
    pub scale_downs: Vec<ScaleEvent>,
}

/// One scaling policy (`HPAScalingPolicy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `Pods` or `Percent`.
    pub kind: String,
    pub value: i32,
    pub period_seconds: i32,
}

/// One direction's rules (`HPAScalingRules`, defaults applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub stabilization_window_seconds: i32,
    /// `Max`, `Min` or `Disabled`.
    pub select_policy: String,
    pub policies: Vec<Policy>,
}

/// A decision and the condition explaining it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limited {
    pub replicas: i32,
    pub reason: &'static str,
    pub message: &'static str,
}

/// Without behavior: the highest recommendation of the downscale window (the newest replacing
/// one older than the window) (`stabilizeRecommendation`).
pub fn stabilize(
    history: &mut History,
    proposed: i32,
    window: SignedDuration,
    now: Timestamp,
) -> i32 {
    let cutoff = now - window;
    let mut highest = proposed;
    let mut old = None;
    for (i, r) in history.recommendations.iter().enumerate() {
        if r.at < cutoff {
            old = Some(i);
        } else if r.replicas > highest {
            highest = r.replicas;
        }
    }
    let fresh = Recommendation {
        replicas: proposed,
        at: now,
    };
    match old {
        Some(i) => history.recommendations[i] = fresh,
        None => history.recommendations.push(fresh),
    }
    highest
}

/// Without behavior: bounds and at most double (or 4) at once (`convertDesiredReplicasWithRules`).
pub fn bound(current: i32, desired: i32, min: i32, max: i32) -> Limited {
    let scale_up_limit = (2.0 * f64::from(current)).max(4.0) as i32;
    let (maximum, reason, message) = if max > scale_up_limit {
        (
            scale_up_limit,
            "ScaleUpLimit",
            "the desired replica count is increasing faster than the maximum scale rate",
        )
    } else {
        (
            max,
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        )
    };
    if desired < min {
        return Limited {
            replicas: min,
            reason: "TooFewReplicas",
            message: "the desired replica count is less than the minimum replica count",
        };
    }
    if desired > maximum {
        return Limited {
            replicas: maximum,
            reason,
            message,
        };
    }
    within_range(desired)
}

fn within_range(replicas: i32) -> Limited {
    Limited {
        replicas,
        reason: "DesiredWithinRange",
        message: "the desired count is within the acceptable range",
    }
}

/// With behavior: the recommendation kept within the lowest of the scale-up window and the
/// highest of the scale-down window, the raw one recorded (`stabilizeRecommendationWithBehaviors`).
pub fn stabilize_with_behaviors(
    history: &mut History,
    current: i32,
    desired: i32,
    up: &Rules,
    down: &Rules,
    now: Timestamp,
) -> Limited {
    let up_cutoff = now - SignedDuration::from_secs(i64::from(up.stabilization_window_seconds));
    let down_cutoff = now - SignedDuration::from_secs(i64::from(down.stabilization_window_seconds));
    let (mut up_limit, mut down_limit) = (desired, desired);
    let mut old = None;
    for (i, r) in history.recommendations.iter().enumerate() {
        if r.at > up_cutoff {
            up_limit = up_limit.min(r.replicas);
        }
        if r.at > down_cutoff {
            down_limit = down_limit.max(r.replicas);
        }
        if r.at < up_cutoff && r.at < down_cutoff {
            old = Some(i);
        }
    }
    let recommendation = current.max(up_limit).min(down_limit);
    let fresh = Recommendation {
        replicas: desired,
        at: now,
    };
    match old {
        Some(i) => history.recommendations[i] = fresh,
        None => history.recommendations.push(fresh),
    }
    if desired >= current {
        Limited {
            replicas: recommendation,
            reason: "ScaleUpStabilized",
            message: "recent recommendations were lower than current one, applying the lowest recent recommendation",
        }
    } else {
        Limited {
            replicas: recommendation,
            reason: "ScaleDownStabilized",
            message: "recent recommendations were higher than current one, applying the highest recent recommendation",
        }
    }
}

fn change_in_period(events: &[ScaleEvent], period_seconds: i32, now: Timestamp) -> i32 {
    let cutoff = now - SignedDuration::from_secs(i64::from(period_seconds));
    events
        .iter()
        .filter(|e| e.at > cutoff)
        .map(|e| e.change)
        .sum()
}

/// The most replicas the scale-up policies allow now (`calculateScaleUpLimitWithScalingRules`).
pub fn scale_up_limit(current: i32, history: &History, rules: &Rules, now: Timestamp) -> i32 {
    policy_limit(current, history, rules, now, true)
}

/// The fewest replicas the scale-down policies allow now (`calculateScaleDownLimitWithBehaviors`).
pub fn scale_down_limit(current: i32, history: &History, rules: &Rules, now: Timestamp) -> i32 {
    policy_limit(current, history, rules, now, false)
}

/// Each policy proposes a count from the replicas at the start of its period (`Pods`: ± the
/// value; `Percent`: × (1 ± value %), rounded up when growing, truncated when shrinking);
/// `Max` keeps the largest change (highest up, lowest down), `Min` the smallest, `Disabled`
/// none.
fn policy_limit(current: i32, history: &History, rules: &Rules, now: Timestamp, up: bool) -> i32 {
    if rules.select_policy == "Disabled" {
        return current;
    }
    // The larger change is the higher count up and the lower count down.
    let pick_higher = (rules.select_policy == "Min") != up;
    let mut result = if pick_higher { i32::MIN } else { i32::MAX };
    for policy in &rules.policies {
        let added = change_in_period(&history.scale_ups, policy.period_seconds, now);
        let removed = change_in_period(&history.scale_downs, policy.period_seconds, now);
        let start = f64::from(current - added + removed);
        let value = f64::from(policy.value);
        let proposed = match (policy.kind.as_str(), up) {
            ("Pods", true) => start + value,
            ("Pods", false) => start - value,
            ("Percent", true) => (start * (1.0 + value / 100.0)).ceil(),
            ("Percent", false) => (start * (1.0 - value / 100.0)).trunc(),
            _ => continue,
        } as i32;
        result = if pick_higher {
            result.max(proposed)
        } else {
            result.min(proposed)
        };
    }
    result
}

/// With behavior: the bounds and the policies' rates (`convertDesiredReplicasWithBehaviorRate`).
#[allow(clippy::too_many_arguments)]
pub fn rate_limit(
    history: &History,
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    up: &Rules,
    down: &Rules,
    now: Timestamp,
) -> Limited {
    if desired > current {
        let limit = scale_up_limit(current, history, up, now).max(current);
        let (maximum, reason, message) = if max > limit {
            (
                limit,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            )
        } else {
            (
                max,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
        };
        if desired > maximum {
            return Limited {
                replicas: maximum,
                reason,
                message,
            };
        }
    } else if desired < current {
        let limit = scale_down_limit(current, history, down, now).min(current);
        let (minimum, reason, message) = if min < limit {
            (
                limit,
                "ScaleDownLimit",
                "the desired replica count is decreasing faster than the maximum scale rate",
            )
        } else {
            (
                min,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
        };
        if desired < minimum {
            return Limited {
                replicas: minimum,
                reason,
                message,
            };
        }
    }
    within_range(desired)
}

/// Records a scale change for the rate policies (`storeScaleEvent`): events older than the
/// direction's longest policy period are outdated, and the last outdated one is replaced.
pub fn record_scale(
    history: &mut History,
    up: &Rules,
    down: &Rules,
    previous: i32,
    new: i32,
    now: Timestamp,
) {
    let (events, rules, change) = if new > previous {
        (&mut history.scale_ups, up, new - previous)
    } else {
        (&mut history.scale_downs, down, previous - new)
    };
    let longest = rules
        .policies
        .iter()
        .map(|p| p.period_seconds)
        .max()
        .unwrap_or(0);
    let cutoff = now - SignedDuration::from_secs(i64::from(longest));
    let mut old = None;
    for (i, event) in events.iter_mut().enumerate() {
        if event.at < cutoff {
            event.outdated = true;
        }
        if event.outdated {
            old = Some(i);
        }
    }
    let fresh = ScaleEvent {
        change,
        at: now,
        outdated: false,
    };
    match old {
        Some(i) => events[i] = fresh,
        None => events.push(fresh),
    }
}

#[cfg(test)]
mod tests;
