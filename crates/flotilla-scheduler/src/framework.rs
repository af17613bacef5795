//! The plugin framework: filter and score plugin traits that take one context struct, plugin
//! results (Success / Unschedulable(reasons) / Error), and a registry that enables or disables
//! plugins by name (`*` = all in-tree plugins, `-Name` disables one, `Name` enables one).

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::affinity::CompiledAffinity;
use flotilla_api::karmada::{Cluster, Placement, ResourceBindingSpec, ResourceBindingStatus};

/// The lowest score a plugin may give.
pub const MIN_CLUSTER_SCORE: i64 = 0;
/// The highest score a plugin may give.
pub const MAX_CLUSTER_SCORE: i64 = 100;

/// Outcome code of a plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The cluster fits.
    Success,
    /// The cluster does not fit, for the given reasons.
    Unschedulable,
    /// The plugin failed.
    Error,
}

/// A plugin's result: a code and human-readable reasons (the FitError histogram counts these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginResult {
    /// The code.
    pub code: Code,
    /// Reasons, e.g. "cluster(s) did not have the API resource".
    pub reasons: Vec<String>,
}

impl PluginResult {
    /// Success.
    pub fn success() -> Self {
        Self {
            code: Code::Success,
            reasons: Vec::new(),
        }
    }

    /// Unschedulable with one reason.
    pub fn unschedulable(reason: impl Into<String>) -> Self {
        Self {
            code: Code::Unschedulable,
            reasons: vec![reason.into()],
        }
    }

    /// An error.
    pub fn error(reason: impl Into<String>) -> Self {
        Self {
            code: Code::Error,
            reasons: vec![reason.into()],
        }
    }

    /// Whether the code is Success.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
}

/// What a filter or score plugin sees about one (binding, cluster) pair.
#[derive(Debug, Clone, Copy)]
pub struct PluginContext<'a> {
    /// The binding's spec (`spec.placement` is [`PluginContext::placement`]).
    pub spec: &'a ResourceBindingSpec,
    /// The binding's status, with the clusterAffinities term being tried as its observed name.
    pub status: &'a ResourceBindingStatus,
    /// The binding's placement.
    pub placement: &'a Placement,
    /// The cluster under evaluation.
    pub cluster: &'a Cluster,
    /// Per-binding data computed once per scheduling attempt.
    pub prepared: &'a Prepared<'a>,
}

/// What plugins need about the binding, parsed once per scheduling attempt rather than once per
/// cluster.
#[derive(Debug, Clone, Default)]
pub struct Prepared<'a> {
    /// The affinities a cluster must match one of: `clusterAffinity`, or the observed
    /// `clusterAffinities` term plus (for workloads) its overflow affinities; `None` when no
    /// affinity applies.
    pub affinities: Option<Vec<CompiledAffinity<'a>>>,
    /// Gate `WorkloadAffinity`: what the binding's group peers hold, gathered by the run loop
    /// (`None`: not gathered, the workload-affinity filters pass every cluster).
    pub workload_peers: Option<&'a WorkloadPeers>,
}

/// The schedules of a ResourceBinding's workload-affinity peers: the other ResourceBindings of
/// its namespace in the same affinity or anti-affinity group (`spec.workloadAffinityGroups`),
/// each seen at its newest known version (the scheduler's own recent results count before the
/// binding's watch brings them back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkloadPeers {
    /// The clusters of each scheduled peer in the affinity group: a cluster must be in all.
    pub affinity: Vec<std::collections::BTreeSet<String>>,
    /// Every cluster a peer in the anti-affinity group is scheduled to.
    pub anti_affinity: std::collections::BTreeSet<String>,
}

impl<'a> Prepared<'a> {
    /// Prepares a binding.
    pub fn new(
        spec: &'a ResourceBindingSpec,
        status: &'a ResourceBindingStatus,
        placement: &'a Placement,
    ) -> Self {
        let affinities = if let Some(affinity) = &placement.cluster_affinity {
            Some(vec![CompiledAffinity::new(affinity)])
        } else {
            placement
                .cluster_affinities
                .iter()
                .flatten()
                .find(|t| t.affinity_name == status.scheduler_observing_affinity_name)
                .map(|term| {
                    let mut list = vec![CompiledAffinity::new(&term.cluster_affinity)];
                    if spec.is_workload() {
                        list.extend(
                            term.overflow_affinities
                                .iter()
                                .map(|o| CompiledAffinity::new(&o.cluster_affinity)),
                        );
                    }
                    list
                })
        };
        Self {
            affinities,
            workload_peers: None,
        }
    }
}

/// A filter plugin: may the binding go to this cluster?
pub trait FilterPlugin: Send + Sync + std::fmt::Debug {
    /// The plugin's registry name.
    fn name(&self) -> &'static str;
    /// Evaluates one cluster.
    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult;
}

/// A score plugin: how good is this cluster (0–100)?
pub trait ScorePlugin: Send + Sync + std::fmt::Debug {
    /// The plugin's registry name.
    fn name(&self) -> &'static str;
    /// Scores one cluster.
    fn score(&self, ctx: &PluginContext<'_>) -> Result<i64, PluginResult>;
    /// Normalises the scores of all feasible clusters in place (default: no change).
    fn normalize(&self, _scores: &mut [i64]) -> PluginResult {
        PluginResult::success()
    }
}

/// A plugin as the registry knows it: a filter, a score, or both.
#[derive(Debug, Clone)]
pub struct PluginEntry {
    /// Registry name.
    pub name: &'static str,
    /// Its filter half.
    pub filter: Option<Arc<dyn FilterPlugin>>,
    /// Its score half.
    pub score: Option<Arc<dyn ScorePlugin>>,
}

/// Errors building a framework from a plugin list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A name that no plugin has.
    #[error("unknown scheduler plugin {0:?}")]
    UnknownPlugin(String),
}

/// Known plugins, in evaluation order.
#[derive(Debug, Clone)]
pub struct Registry {
    plugins: Vec<PluginEntry>,
}

impl Registry {
    /// A registry over `plugins` (evaluation order = this order).
    pub fn new(plugins: Vec<PluginEntry>) -> Self {
        Self { plugins }
    }

    /// The in-tree plugins.
    pub fn in_tree() -> Self {
        Self::new(crate::plugins::in_tree())
    }

    /// The in-tree plugins with those of gate `WorkloadAffinity` when `workload_affinity` is on
    /// (Karmada registers them only then).
    pub fn in_tree_gated(workload_affinity: bool) -> Self {
        let mut plugins = crate::plugins::in_tree();
        if workload_affinity {
            plugins.extend(crate::plugins::workload_affinity());
        }
        Self::new(plugins)
    }

    /// Names of all known plugins.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|p| p.name)
    }

    /// Builds a framework from a `--plugins` list, as Karmada's `Registry.Filter`: `*` anywhere
    /// enables every plugin; then, in order, `Name` enables one and `-Name` disables one (a no-op
    /// while nothing is enabled). An empty list means `*`. Unlike Karmada, unknown names are
    /// errors rather than ignored.
    pub fn framework(&self, list: &[impl AsRef<str>]) -> Result<Framework, RegistryError> {
        let position = |name: &str| {
            self.plugins
                .iter()
                .position(|p| p.name == name)
                .ok_or_else(|| RegistryError::UnknownPlugin(name.to_owned()))
        };
        let star = list.is_empty() || list.iter().any(|i| i.as_ref().trim() == "*");
        let mut enabled = vec![star; self.plugins.len()];
        for item in list {
            let item = item.as_ref().trim();
            if item == "*" {
                continue;
            }
            match item.strip_prefix('-') {
                Some(name) => {
                    let index = position(name)?;
                    if enabled.iter().any(|e| *e) {
                        enabled[index] = false;
                    }
                }
                None => enabled[position(item)?] = true,
            }
        }
        let plugins = self
            .plugins
            .iter()
            .zip(enabled)
            .filter(|(_, on)| *on)
            .map(|(p, _)| p.clone())
            .collect();
        Ok(Framework {
            plugins,
            score_weights: BTreeMap::new(),
        })
    }
}

/// The enabled plugins, ready to run.
#[derive(Debug, Clone)]
pub struct Framework {
    plugins: Vec<PluginEntry>,
    score_weights: BTreeMap<&'static str, i64>,
}

impl Default for Framework {
    /// Every in-tree plugin.
    fn default() -> Self {
        Registry::in_tree()
            .framework(&["*"])
            .expect("`*` is always a valid plugin list")
    }
}

impl Framework {
    /// Multiplies a score plugin's scores by `weight` (unset = unweighted).
    pub fn with_score_weight(mut self, plugin: &'static str, weight: i64) -> Self {
        self.score_weights.insert(plugin, weight);
        self
    }

    /// Names of the enabled plugins.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.plugins.iter().map(|p| p.name)
    }

    /// Runs the filters in order; the first non-success result is the cluster's result.
    pub fn run_filters(&self, ctx: &PluginContext<'_>) -> PluginResult {
        for plugin in &self.plugins {
            if let Some(filter) = &plugin.filter {
                let result = filter.filter(ctx);
                if !result.is_success() {
                    return result;
                }
            }
        }
        PluginResult::success()
    }

    /// Runs the score plugins over `clusters`: per cluster the sum over plugins of
    /// score × weight. An error names the plugin, as Karmada does.
    pub fn run_scores(
        &self,
        spec: &ResourceBindingSpec,
        status: &ResourceBindingStatus,
        placement: &Placement,
        prepared: &Prepared<'_>,
        clusters: &[&Cluster],
    ) -> Result<Vec<i64>, String> {
        let mut totals = vec![0i64; clusters.len()];
        let mut scores = vec![0i64; clusters.len()];
        for plugin in &self.plugins {
            let Some(scorer) = &plugin.score else {
                continue;
            };
            for (slot, cluster) in scores.iter_mut().zip(clusters) {
                let ctx = PluginContext {
                    spec,
                    status,
                    placement,
                    cluster,
                    prepared,
                };
                *slot = scorer.score(&ctx).map_err(|r| {
                    format!(
                        "plugin {:?} failed with: {}",
                        plugin.name,
                        r.reasons.join(",")
                    )
                })?;
            }
            let normalized = scorer.normalize(&mut scores);
            if !normalized.is_success() {
                return Err(format!(
                    "plugin {:?} normalizeScore failed with: {}",
                    plugin.name,
                    normalized.reasons.join(",")
                ));
            }
            let weight = self.score_weights.get(plugin.name).copied().unwrap_or(1);
            for (total, score) in totals.iter_mut().zip(&scores) {
                *total += score * weight;
            }
        }
        Ok(totals)
    }
}

#[cfg(test)]
mod tests;
