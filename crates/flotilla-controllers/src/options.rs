//! The controller manager's options that change behaviour: Karmada's feature gates
//! (`--feature-gates`) and its cluster-failover flags (`--enable-taint-manager`,
//! `--enable-no-execute-taint-eviction`, `--no-execute-taint-eviction-purge-mode`,
//! `--graceful-eviction-timeout`, `--resource-eviction-rate`), with Karmada's defaults.

use std::collections::BTreeMap;
use std::time::Duration;

/// How mature a gate is (`AllAlpha=true` / `AllBeta=true` switch every gate of a stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Alpha,
    Beta,
}

/// Karmada's feature gates (`pkg/features`): name, default, stage. Only some change what
/// Flotilla does (see [`FeatureGates`]); the others are accepted so that a Karmada
/// `--feature-gates` value works unchanged.
pub const KNOWN_GATES: &[(&str, bool, Stage)] = &[
    ("Failover", false, Stage::Beta),
    ("GracefulEviction", true, Stage::Beta),
    ("PropagateDeps", true, Stage::Beta),
    ("CustomizedClusterResourceModeling", true, Stage::Beta),
    ("PropagationPolicyPreemption", false, Stage::Alpha),
    ("MultiClusterService", false, Stage::Alpha),
    ("ResourceQuotaEstimate", false, Stage::Alpha),
    ("StatefulFailoverInjection", false, Stage::Alpha),
    ("PriorityBasedScheduling", true, Stage::Beta),
    ("FederatedQuotaEnforcement", false, Stage::Alpha),
    ("LoggingAlphaOptions", false, Stage::Alpha),
    ("LoggingBetaOptions", true, Stage::Beta),
    ("ContextualLogging", true, Stage::Beta),
    ("MultiplePodTemplatesScheduling", false, Stage::Alpha),
    ("ControllerPriorityQueue", true, Stage::Beta),
    ("WorkloadAffinity", false, Stage::Alpha),
    ("SchedulingOvercommitProtection", false, Stage::Alpha),
];

/// A `--feature-gates` value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("missing bool value for {0}")]
    MissingValue(String),
    #[error("invalid value of {name}={value}, err: invalid syntax")]
    InvalidValue { name: String, value: String },
    #[error("unrecognized feature gate: {0}")]
    Unknown(String),
    #[error("invalid --no-execute-taint-eviction-purge-mode {0:?}: must be Gracefully or Directly")]
    PurgeMode(String),
    #[error("invalid --resource-eviction-rate {0}: must be a number of evictions per second ≥ 0")]
    EvictionRate(String),
}

/// The gates in force: Karmada's defaults, changed by `--feature-gates`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureGates {
    enabled: BTreeMap<&'static str, bool>,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            enabled: KNOWN_GATES
                .iter()
                .map(|(name, default, _)| (*name, *default))
                .collect(),
        }
    }
}

impl FeatureGates {
    /// Parses Karmada's (and Kubernetes') syntax: `Name=true,Other=false`, with `AllAlpha` and
    /// `AllBeta` switching every gate of their stage first, whatever their place in the list.
    pub fn parse(text: &str) -> Result<Self, OptionsError> {
        let mut gates = Self::default();
        let mut named = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(OptionsError::MissingValue(item.to_owned()));
            };
            let (name, value) = (name.trim(), value.trim());
            let on = parse_go_bool(value).ok_or_else(|| OptionsError::InvalidValue {
                name: name.to_owned(),
                value: value.to_owned(),
            })?;
            let stage = match name {
                "AllAlpha" => Some(Stage::Alpha),
                "AllBeta" => Some(Stage::Beta),
                _ => None,
            };
            match stage {
                Some(stage) => {
                    for (gate, _, s) in KNOWN_GATES {
                        if *s == stage {
                            gates.enabled.insert(gate, on);
                        }
                    }
                }
                None => named.push((name.to_owned(), on)),
            }
        }
        for (name, on) in named {
            let Some((gate, _, _)) = KNOWN_GATES.iter().find(|(g, _, _)| *g == name) else {
                return Err(OptionsError::Unknown(name));
            };
            gates.enabled.insert(gate, on);
        }
        Ok(gates)
    }

    /// Whether `name` is on (an unknown name is off).
    pub fn enabled(&self, name: &str) -> bool {
        self.enabled.get(name).copied().unwrap_or(false)
    }

    /// Switches one known gate (for tests and embedders).
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), OptionsError> {
        let Some((gate, _, _)) = KNOWN_GATES.iter().find(|(g, _, _)| *g == name) else {
            return Err(OptionsError::Unknown(name.to_owned()));
        };
        self.enabled.insert(gate, on);
        Ok(())
    }

    /// `Failover`: the taint manager and the ClusterTaintPolicy controller run.
    pub fn failover(&self) -> bool {
        self.enabled("Failover")
    }

    /// `GracefulEviction`: application failover may purge `Gracefully`.
    pub fn graceful_eviction(&self) -> bool {
        self.enabled("GracefulEviction")
    }

    /// `FederatedQuotaEnforcement`: FederatedResourceQuota `overall`/`overallUsed` are counted
    /// from ResourceBindings, and binding writes beyond the quota are refused.
    pub fn federated_quota_enforcement(&self) -> bool {
        self.enabled("FederatedQuotaEnforcement")
    }

    /// `StatefulFailoverInjection`: eviction tasks keep the preserved label state, and the
    /// binding controller injects it into the workload in its new cluster.
    pub fn stateful_failover_injection(&self) -> bool {
        self.enabled("StatefulFailoverInjection")
    }
}

/// Go's `strconv.ParseBool`.
fn parse_go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// How an eviction removes the workload from the cluster it leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PurgeMode {
    /// Keep the old copy until the new placement is healthy or the grace period ends.
    #[default]
    Gracefully,
    /// Delete the old copy first, then create the new one.
    Directly,
}

impl PurgeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PurgeMode::Gracefully => "Gracefully",
            PurgeMode::Directly => "Directly",
        }
    }

    pub fn parse(text: &str) -> Result<Self, OptionsError> {
        match text {
            "Gracefully" => Ok(PurgeMode::Gracefully),
            "Directly" => Ok(PurgeMode::Directly),
            other => Err(OptionsError::PurgeMode(other.to_owned())),
        }
    }
}

/// Karmada's cluster-failover flags.
#[derive(Debug, Clone, PartialEq)]
pub struct FailoverOptions {
    /// `--enable-taint-manager` (default true; the manager also needs the `Failover` gate).
    pub enable_taint_manager: bool,
    /// `--enable-no-execute-taint-eviction` (default false): whether NoExecute taints evict.
    pub enable_no_execute_taint_eviction: bool,
    /// `--no-execute-taint-eviction-purge-mode` (default Gracefully), for bindings whose
    /// policy sets no `failover.cluster`.
    pub no_execute_taint_eviction_purge_mode: PurgeMode,
    /// `--graceful-eviction-timeout` (default 10m): how long an eviction task waits at most.
    pub graceful_eviction_timeout: Duration,
    /// `--resource-eviction-rate` (default 0.5): evictions per second during cluster failover.
    pub resource_eviction_rate: f32,
    /// How often a tainted cluster's bindings are looked at again (Karmada: 10 s).
    pub taint_eviction_retry_frequency: Duration,
}

impl Default for FailoverOptions {
    fn default() -> Self {
        Self {
            enable_taint_manager: true,
            enable_no_execute_taint_eviction: false,
            no_execute_taint_eviction_purge_mode: PurgeMode::Gracefully,
            graceful_eviction_timeout: Duration::from_secs(600),
            resource_eviction_rate: 0.5,
            taint_eviction_retry_frequency: Duration::from_secs(10),
        }
    }
}

impl FailoverOptions {
    /// The pause between two evictions of the taint manager: 1 / rate (rate 0: 30 minutes, as
    /// Karmada's limiter does when nothing may be evicted).
    pub fn eviction_interval(&self) -> Duration {
        if self.resource_eviction_rate <= 0.0 || !self.resource_eviction_rate.is_finite() {
            return Duration::from_secs(1800);
        }
        Duration::from_secs_f64(1.0 / f64::from(self.resource_eviction_rate))
    }
}

/// Parses `--resource-eviction-rate`.
pub fn parse_eviction_rate(text: &str) -> Result<f32, OptionsError> {
    match text.parse::<f32>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err(OptionsError::EvictionRate(text.to_owned())),
    }
}

/// Works the execution controller syncs at once by default (`--concurrent-work-syncs`).
///
/// Karmada's default is 5. A sync waits on the member's API server (a create or update there)
/// and then on the control plane's store (the Work's `Applied` condition), so with a few
/// workers the controller spends its time waiting, not working: at 8, the propagation burst
/// (`flotilla bench propagate --clusters 100 --deployments 3000`) left a fifth of the machine
/// idle and applied Works ~25 % slower than at 24 or more (docs/propagation.md, "The execution
/// controller waits less"). Members across regions, at tens of milliseconds per request, need
/// the concurrency more.
pub const DEFAULT_CONCURRENT_WORK_SYNCS: usize = 64;

/// Every option the controllers read.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerOptions {
    pub gates: FeatureGates,
    pub failover: FailoverOptions,
    /// Karmada's `--concurrent-work-syncs`: Works the execution controller syncs at once
    /// (at least 1).
    pub concurrent_work_syncs: usize,
    /// The FederatedHPA controller's flags.
    pub hpa: HpaOptions,
    /// The descheduler's flags (`--descheduling-interval`, `--unschedulable-threshold`).
    pub descheduler: crate::descheduler::DeschedulerOptions,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        Self {
            gates: FeatureGates::default(),
            failover: FailoverOptions::default(),
            concurrent_work_syncs: DEFAULT_CONCURRENT_WORK_SYNCS,
            hpa: HpaOptions::default(),
            descheduler: crate::descheduler::DeschedulerOptions::default(),
        }
    }
}

/// Karmada's `--horizontal-pod-autoscaler-*` flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HpaOptions {
    /// `--horizontal-pod-autoscaler-sync-period` (15 s): how often each FederatedHPA is
    /// evaluated.
    pub sync_period: Duration,
    /// Tolerance, CPU initialization period, initial readiness delay, downscale stabilization.
    pub tunables: crate::lifted::hpa::Tunables,
}

impl Default for HpaOptions {
    fn default() -> Self {
        Self {
            sync_period: Duration::from_secs(15),
            tunables: crate::lifted::hpa::Tunables::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_karmadas() {
        let gates = FeatureGates::default();
        assert!(!gates.failover());
        assert!(gates.graceful_eviction());
        assert!(!gates.stateful_failover_injection());
        let failover = FailoverOptions::default();
        assert!(failover.enable_taint_manager);
        assert!(!failover.enable_no_execute_taint_eviction);
        assert_eq!(failover.graceful_eviction_timeout, Duration::from_secs(600));
        assert_eq!(failover.eviction_interval(), Duration::from_secs(2));
    }

    #[test]
    fn all_alpha_and_all_beta_switch_their_stage_and_named_gates_win() {
        let gates = FeatureGates::parse("AllAlpha=true,AllBeta=true").unwrap();
        assert!(gates.failover());
        assert!(gates.stateful_failover_injection());
        let gates = FeatureGates::parse("GracefulEviction=false,AllBeta=true").unwrap();
        assert!(!gates.graceful_eviction(), "a named gate wins over AllBeta");
        assert!(gates.failover());
        let gates = FeatureGates::parse("Failover=true").unwrap();
        assert!(gates.failover());
        assert!(!gates.stateful_failover_injection());
    }

    #[test]
    fn bad_values_are_refused_with_kubernetes_wording() {
        assert_eq!(
            FeatureGates::parse("Failvoer=true")
                .unwrap_err()
                .to_string(),
            "unrecognized feature gate: Failvoer"
        );
        assert_eq!(
            FeatureGates::parse("Failover").unwrap_err().to_string(),
            "missing bool value for Failover"
        );
        assert_eq!(
            FeatureGates::parse("Failover=yes").unwrap_err().to_string(),
            "invalid value of Failover=yes, err: invalid syntax"
        );
        assert!(PurgeMode::parse("Never").is_err());
        assert!(parse_eviction_rate("-1").is_err());
        assert_eq!(parse_eviction_rate("0").unwrap(), 0.0);
        let zero = FailoverOptions {
            resource_eviction_rate: 0.0,
            ..FailoverOptions::default()
        };
        assert_eq!(zero.eviction_interval(), Duration::from_secs(1800));
    }
}
