//! The simulator's configuration: clusters, their regions and zones, and node pools built from
//! profiles. Parsed from YAML (or built from quick flags), then validated into [`SimSpec`]; every
//! error names the field it is about (`clusters[1].nodePools[0].count: …`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::Taint;
use serde::Deserialize;

use crate::image::UnpullableImages;
use crate::profile::{self, PROFILES, Profile};

/// The YAML document (`flotilla sim --config FILE`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimConfig {
    #[serde(default)]
    pub clusters: Vec<ClusterConfig>,
    /// Seed of every random choice (node names, zones, latencies, scheduling tie-breaks).
    pub seed: Option<u64>,
    /// How long a bound pod takes to become Running and Ready (`1s` by default, `0` allowed).
    pub start_latency: Option<String>,
    /// How long a Job's pod runs before it succeeds (`5s` by default; a Job pod whose known
    /// programs all end sooner follows them).
    pub job_duration: Option<String>,
    /// How long pods stay on a NotReady node before eviction when they carry no toleration of
    /// their own (`300s` by default, kube's DefaultTolerationSeconds).
    pub eviction_timeout: Option<String>,
    /// The window the resource metrics API (`metrics.k8s.io`) averages usage over and reports
    /// (`15s` by default, metrics-server's; small values such as `1s` for tests).
    pub metrics_window: Option<String>,
    /// How often each node's Lease in `kube-node-lease` is renewed (`10s` by default).
    pub lease_renew_interval: Option<String>,
    /// Record the clusters' own control loops (kubelets, scheduler, controllers, node
    /// heartbeats) in `managedFields` as a real cluster does (`false` by default: their
    /// entries are about half of every stored pod and node; users' writes are always tracked).
    pub track_own_writes: Option<bool>,
    /// Store each cluster's objects compressed against others of their resource (`true` by
    /// default: a pod's ~1.9 KB of JSON takes ~130 bytes; clients see the same JSON). `false`
    /// stores plain JSON, for comparison.
    pub compact_storage: Option<bool>,
    /// Images the kubelets cannot pull: their pods stay Pending in `ErrImagePull`, then
    /// `ImagePullBackOff` (by default repositories under `fake/`, Karmada's convention, and
    /// registries under RFC 2606's `.invalid`).
    pub unpullable_images: Option<UnpullableImagesConfig>,
    /// Give each cluster what a kind cluster has besides its workers (`false` by default): a
    /// tainted `<cluster>-control-plane` node with the control plane's static pods
    /// (`etcd-<node>`, `kube-apiserver-<node>`, …), CoreDNS (`coredns` Deployment, `kube-dns`
    /// Service) and the `kube-proxy` DaemonSet in `kube-system` (docs/sim.md).
    pub system_components: Option<bool>,
}

/// `unpullableImages`: each list left out keeps its default; `[]` refuses nothing.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnpullableImagesConfig {
    /// First path components of repositories that do not exist (`[fake]`: `fake/nginx:1.19.0`,
    /// `docker.io/fake/busybox`).
    pub repositories: Option<Vec<String>>,
    /// Registry hosts that do not resolve: a host, or a suffix starting with `.`
    /// (`[.invalid]`: `registry.invalid/app:1`).
    pub registries: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterConfig {
    pub name: String,
    pub region: Option<String>,
    #[serde(default)]
    pub zones: Vec<String>,
    pub provider: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub node_pools: Vec<NodePoolConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePoolConfig {
    pub name: String,
    pub count: i64,
    pub profile: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub taints: Vec<TaintConfig>,
    /// Overrides of the profile's capacity (`cpu: "16"`, `memory: 64Gi`, `example.com/fpga: 2`).
    #[serde(default)]
    pub capacity: BTreeMap<String, QuantityValue>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaintConfig {
    pub key: String,
    #[serde(default)]
    pub value: String,
    pub effect: String,
}

/// A quantity written as a string or a number.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum QuantityValue {
    Int(i64),
    Float(f64),
    Text(String),
}

impl QuantityValue {
    fn text(&self) -> String {
        match self {
            QuantityValue::Int(n) => n.to_string(),
            QuantityValue::Float(f) => f.to_string(),
            QuantityValue::Text(s) => s.clone(),
        }
    }
}

/// A configuration error, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct SimSpec {
    pub clusters: Vec<ClusterSpec>,
    pub settings: Settings,
}

/// Timings and the seed, shared by every cluster of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub seed: u64,
    pub start_latency: Duration,
    pub job_duration: Duration,
    pub eviction_timeout: Duration,
    pub lease_renew_interval: Duration,
    /// See [`SimConfig::metrics_window`].
    pub metrics_window: Duration,
    /// See [`SimConfig::track_own_writes`].
    pub track_own_writes: bool,
    /// See [`SimConfig::compact_storage`].
    pub compact_storage: bool,
    /// See [`SimConfig::unpullable_images`].
    pub unpullable_images: UnpullableImages,
    /// See [`SimConfig::system_components`].
    pub system_components: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            seed: 0,
            start_latency: Duration::from_secs(1),
            job_duration: Duration::from_secs(5),
            eviction_timeout: Duration::from_secs(300),
            lease_renew_interval: Duration::from_secs(10),
            metrics_window: Duration::from_secs(15),
            track_own_writes: false,
            compact_storage: true,
            unpullable_images: UnpullableImages::default(),
            system_components: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub name: String,
    pub region: String,
    pub zones: Vec<String>,
    pub provider: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub pools: Vec<PoolSpec>,
}

#[derive(Debug, Clone)]
pub struct PoolSpec {
    pub name: String,
    pub count: usize,
    pub profile: Profile,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
}

impl ClusterSpec {
    pub fn node_count(&self) -> usize {
        self.pools.iter().map(|p| p.count).sum()
    }
}

impl SimConfig {
    /// Parses YAML; unknown fields are errors.
    pub fn from_yaml(text: &str) -> Result<SimConfig, ConfigError> {
        yaml_serde::from_str(text).map_err(|e| err("config", e.to_string()))
    }

    /// Clusters named `names`, each with one pool of `nodes` nodes of `profile`.
    pub fn quick(names: &[String], nodes: i64, profile: &str) -> SimConfig {
        SimConfig {
            clusters: names
                .iter()
                .map(|name| ClusterConfig {
                    name: name.clone(),
                    node_pools: vec![NodePoolConfig {
                        name: "pool".into(),
                        count: nodes,
                        profile: profile.into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// Checks everything and resolves profiles, quantities and defaults.
    pub fn validate(&self) -> Result<SimSpec, ConfigError> {
        let mut settings = Settings::default();
        if let Some(seed) = self.seed {
            settings.seed = seed;
        }
        if let Some(track) = self.track_own_writes {
            settings.track_own_writes = track;
        }
        if let Some(compact) = self.compact_storage {
            settings.compact_storage = compact;
        }
        if let Some(system) = self.system_components {
            settings.system_components = system;
        }
        if let Some(images) = &self.unpullable_images {
            let rules = &mut settings.unpullable_images;
            if let Some(repositories) = &images.repositories {
                rules.repositories.clone_from(repositories);
            }
            if let Some(registries) = &images.registries {
                rules.registries.clone_from(registries);
            }
            rules
                .validate()
                .map_err(|(field, message)| err(format!("unpullableImages.{field}"), message))?;
        }
        for (field, text, slot) in [
            (
                "startLatency",
                &self.start_latency,
                &mut settings.start_latency,
            ),
            (
                "jobDuration",
                &self.job_duration,
                &mut settings.job_duration,
            ),
            (
                "evictionTimeout",
                &self.eviction_timeout,
                &mut settings.eviction_timeout,
            ),
            (
                "leaseRenewInterval",
                &self.lease_renew_interval,
                &mut settings.lease_renew_interval,
            ),
            (
                "metricsWindow",
                &self.metrics_window,
                &mut settings.metrics_window,
            ),
        ] {
            if let Some(text) = text {
                *slot = parse_duration(text).map_err(|m| err(field, m))?;
            }
        }
        if settings.lease_renew_interval.is_zero() {
            return Err(err("leaseRenewInterval", "must be greater than zero"));
        }
        if settings.metrics_window.is_zero() {
            return Err(err("metricsWindow", "must be greater than zero"));
        }
        if self.clusters.is_empty() {
            return Err(err("clusters", "at least one cluster is required"));
        }
        let mut names = BTreeSet::new();
        let clusters = self
            .clusters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let at = format!("clusters[{i}]");
                if !names.insert(c.name.clone()) {
                    return Err(err(
                        format!("{at}.name"),
                        format!("duplicate cluster name {:?}", c.name),
                    ));
                }
                validate_cluster(&at, c)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SimSpec { clusters, settings })
    }
}

fn dns_label(field: &str, name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(err(
            field,
            format!(
                "{name:?} is not a DNS label (lower-case letters, digits and '-', at most 63, starting and ending alphanumeric)"
            ),
        ))
    }
}

fn validate_cluster(at: &str, c: &ClusterConfig) -> Result<ClusterSpec, ConfigError> {
    dns_label(&format!("{at}.name"), &c.name)?;
    let region = c.region.clone().unwrap_or_else(|| "region-1".to_owned());
    if region.is_empty() {
        return Err(err(format!("{at}.region"), "must not be empty"));
    }
    let zones = if c.zones.is_empty() {
        ["a", "b", "c"]
            .iter()
            .map(|z| format!("{region}{z}"))
            .collect()
    } else {
        c.zones.clone()
    };
    if let Some((i, _)) = zones.iter().enumerate().find(|(_, z)| z.is_empty()) {
        return Err(err(format!("{at}.zones[{i}]"), "must not be empty"));
    }
    let mut pool_names = BTreeSet::new();
    let pools = c
        .node_pools
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let at = format!("{at}.nodePools[{j}]");
            dns_label(&format!("{at}.name"), &p.name)?;
            if !pool_names.insert(p.name.clone()) {
                return Err(err(
                    format!("{at}.name"),
                    format!("duplicate node pool name {:?}", p.name),
                ));
            }
            validate_pool(&at, p)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ClusterSpec {
        name: c.name.clone(),
        region,
        zones,
        provider: c.provider.clone(),
        labels: c.labels.clone(),
        pools,
    })
}

fn validate_pool(at: &str, p: &NodePoolConfig) -> Result<PoolSpec, ConfigError> {
    if p.count < 0 {
        return Err(err(
            format!("{at}.count"),
            format!("must not be negative (got {})", p.count),
        ));
    }
    let mut profile = profile::profile(&p.profile).ok_or_else(|| {
        err(
            format!("{at}.profile"),
            format!(
                "unknown profile {:?} (known: {})",
                p.profile,
                PROFILES.join(", ")
            ),
        )
    })?;
    for (name, value) in &p.capacity {
        let field = format!("{at}.capacity[{name}]");
        let text = value.text();
        let q = flotilla_api::Quantity::parse(&text)
            .map_err(|e| err(&field, format!("unparsable quantity {text:?}: {e}")))?;
        if q.signum() < 0 {
            return Err(err(&field, format!("must not be negative (got {text})")));
        }
        profile.capacity.insert(name.clone(), text);
    }
    let taints = p
        .taints
        .iter()
        .enumerate()
        .map(|(k, t)| {
            if t.key.is_empty() {
                return Err(err(format!("{at}.taints[{k}].key"), "must not be empty"));
            }
            if !matches!(
                t.effect.as_str(),
                "NoSchedule" | "PreferNoSchedule" | "NoExecute"
            ) {
                return Err(err(
                    format!("{at}.taints[{k}].effect"),
                    format!(
                        "{:?} is not one of NoSchedule, PreferNoSchedule, NoExecute",
                        t.effect
                    ),
                ));
            }
            Ok(Taint {
                key: t.key.clone(),
                value: (!t.value.is_empty()).then(|| t.value.clone()),
                effect: t.effect.clone(),
                time_added: None,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(PoolSpec {
        name: p.name.clone(),
        count: usize::try_from(p.count).expect("checked non-negative"),
        profile,
        labels: p.labels.clone(),
        taints,
    })
}

/// Parses `1s`, `250ms`, `2m`, `1h`, `1.5s` or a bare `0`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit (use ms, s, m or h)"))?;
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration"))?;
    let scale = match unit {
        "ms" => 0.001,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(value * scale).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests;
