//! `flotilla schedule`: what-if scheduling over files. Reads Clusters (with status), a
//! (Cluster)PropagationPolicy, the workload, optionally the previous ResourceBinding and member
//! Node/Pod lists, runs the same pure core as the live scheduler, and prints the resulting
//! ResourceBinding (exit 0) or the unschedulable reason (stderr, exit 1). Input errors name the
//! file and the field (exit 2).
//!
//! Node/Pod input (`--nodes`): Node and Pod objects, each annotated
//! `flotilla.io/cluster: <cluster name>`, or Lists carrying that annotation in their own
//! metadata (items inherit it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, anyhow, bail};
use flotilla_api::karmada::replicas::interpret_replica;
use flotilla_api::karmada::{
    ANNOTATION_APPLIED_PLACEMENT, BindingSuspension, Cluster, ClusterPropagationPolicy,
    ClusterResourceBinding, DEFAULT_SCHEDULER_NAME, ObjectReference, PropagationPolicy,
    PropagationSpec, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus, names,
};
use flotilla_scheduler::{
    AccurateEstimator, Framework, Registry, ReplicaEstimator, ScheduleOptions, Snapshot,
    estimator::NodeIndex,
    estimator::topology::{GPU_TOPOLOGY_POLICY_ANNOTATION, GpuTopologyLevel},
    schedule, should_schedule,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize as _;
use serde_json::Value;

/// Annotation naming the member cluster of a Node, Pod or List in `--nodes`.
pub const CLUSTER_ANNOTATION: &str = "flotilla.io/cluster";

/// Policy annotation selecting Flotilla's division by node count (`NodeCount`).
pub use flotilla_scheduler::run::REPLICA_DIVISION_ANNOTATION;

/// Kinds that are cluster-scoped (their bindings are ClusterResourceBindings).
const CLUSTER_SCOPED_KINDS: &[&str] = &[
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "IngressClass",
    "RuntimeClass",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
    "APIService",
];

/// Flags of `flotilla schedule`.
#[derive(Debug, clap::Args)]
pub struct ScheduleArgs {
    /// Clusters (with status): YAML documents or a List.
    #[arg(long)]
    pub clusters: PathBuf,
    /// One PropagationPolicy or ClusterPropagationPolicy.
    #[arg(long)]
    pub policy: PathBuf,
    /// The workload (its metadata.uid drives tie-breaks).
    #[arg(long)]
    pub workload: PathBuf,
    /// The previous ResourceBinding: its spec.clusters are the previous result.
    #[arg(long)]
    pub binding: Option<PathBuf>,
    /// Member Nodes and Pods for the accurate estimator (annotated `flotilla.io/cluster`).
    #[arg(long)]
    pub nodes: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", default_value = "yaml", value_parser = ["yaml", "json"])]
    pub output: String,
    /// Scheduler plugins: `*` for all, `-Name` to disable one.
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub plugins: Vec<String>,
    /// List selected clusters that got no replicas with 0 (Karmada's
    /// `--enable-empty-workload-propagation`).
    #[arg(long)]
    pub enable_empty_workload_propagation: bool,
}

/// One YAML/JSON document (List items expanded).
#[derive(Debug)]
struct Doc {
    /// 1-based document number in the file (items of a List share it).
    number: usize,
    value: Value,
    /// The `flotilla.io/cluster` annotation of an enclosing List.
    inherited_cluster: Option<String>,
}

impl Doc {
    fn kind(&self) -> &str {
        self.value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

fn load(path: &Path) -> anyhow::Result<Vec<Doc>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut docs = Vec::new();
    for (i, document) in yaml_serde::Deserializer::from_str(&text).enumerate() {
        let number = i + 1;
        let value = Value::deserialize(document)
            .with_context(|| format!("{}: document {number}: not valid YAML", path.display()))?;
        if value.is_null() {
            continue;
        }
        if !value.is_object() {
            bail!("{}: document {number}: expected an object", path.display());
        }
        let is_list = value
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"));
        if let (true, Some(items)) = (is_list, value.get("items").and_then(Value::as_array)) {
            let inherited = value
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(CLUSTER_ANNOTATION))
                .and_then(Value::as_str)
                .map(str::to_owned);
            for item in items {
                docs.push(Doc {
                    number,
                    value: item.clone(),
                    inherited_cluster: inherited.clone(),
                });
            }
        } else {
            docs.push(Doc {
                number,
                value,
                inherited_cluster: None,
            });
        }
    }
    Ok(docs)
}

fn decode<T: serde::de::DeserializeOwned>(path: &Path, doc: &Doc) -> anyhow::Result<T> {
    serde_json::from_value(doc.value.clone()).map_err(|e| {
        anyhow!(
            "{}: document {} ({}): {e}",
            path.display(),
            doc.number,
            doc.kind()
        )
    })
}

/// The policy, whichever kind.
struct Policy {
    cluster_scoped: bool,
    metadata: ObjectMeta,
    spec: PropagationSpec,
}

fn load_policy(path: &Path) -> anyhow::Result<Policy> {
    let docs = load(path)?;
    let [doc] = docs.as_slice() else {
        bail!(
            "{}: expected exactly one PropagationPolicy or ClusterPropagationPolicy, found {} documents",
            path.display(),
            docs.len()
        );
    };
    match doc.kind() {
        "PropagationPolicy" => {
            let p: PropagationPolicy = decode(path, doc)?;
            Ok(Policy {
                cluster_scoped: false,
                metadata: p.metadata,
                spec: p.spec,
            })
        }
        "ClusterPropagationPolicy" => {
            let p: ClusterPropagationPolicy = decode(path, doc)?;
            Ok(Policy {
                cluster_scoped: true,
                metadata: p.metadata,
                spec: p.spec,
            })
        }
        other => bail!(
            "{}: document {}: kind is {other:?}, expected PropagationPolicy or ClusterPropagationPolicy",
            path.display(),
            doc.number
        ),
    }
}

fn load_clusters(path: &Path) -> anyhow::Result<Vec<Cluster>> {
    let mut clusters: Vec<Cluster> = Vec::new();
    for doc in load(path)? {
        if doc.kind() != "Cluster" {
            bail!(
                "{}: document {}: kind is {:?}, expected Cluster",
                path.display(),
                doc.number,
                doc.kind()
            );
        }
        let mut cluster: Cluster = decode(path, &doc)?;
        // As Karmada's API server stores it: zone → zones, default/standard resource models.
        cluster.apply_server_defaults();
        if cluster.name().is_empty() {
            bail!(
                "{}: document {}: Cluster has no metadata.name",
                path.display(),
                doc.number
            );
        }
        if clusters.iter().any(|c| c.name() == cluster.name()) {
            bail!(
                "{}: document {}: metadata.name {:?} appears twice",
                path.display(),
                doc.number,
                cluster.name()
            );
        }
        clusters.push(cluster);
    }
    Ok(clusters)
}

/// The previous binding, whichever kind.
struct Previous {
    metadata: ObjectMeta,
    spec: ResourceBindingSpec,
    status: ResourceBindingStatus,
}

fn load_binding(path: &Path) -> anyhow::Result<Previous> {
    let docs = load(path)?;
    let [doc] = docs.as_slice() else {
        bail!(
            "{}: expected exactly one ResourceBinding or ClusterResourceBinding, found {} documents",
            path.display(),
            docs.len()
        );
    };
    match doc.kind() {
        "ResourceBinding" => {
            let b: ResourceBinding = decode(path, doc)?;
            Ok(Previous {
                metadata: b.metadata,
                spec: b.spec,
                status: b.status.unwrap_or_default(),
            })
        }
        "ClusterResourceBinding" => {
            let b: ClusterResourceBinding = decode(path, doc)?;
            Ok(Previous {
                metadata: b.metadata,
                spec: b.spec,
                status: b.status.unwrap_or_default(),
            })
        }
        other => bail!(
            "{}: document {}: kind is {other:?}, expected ResourceBinding or ClusterResourceBinding",
            path.display(),
            doc.number
        ),
    }
}

fn load_nodes(path: &Path, clusters: &[Cluster]) -> anyhow::Result<AccurateEstimator> {
    let mut nodes: BTreeMap<String, (Vec<Node>, Vec<Pod>)> = BTreeMap::new();
    for doc in load(path)? {
        let own = doc
            .value
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(CLUSTER_ANNOTATION))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let name = doc
            .value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(cluster) = own.or_else(|| doc.inherited_cluster.clone()) else {
            bail!(
                "{}: document {}: {} {name:?} has no metadata.annotations[{CLUSTER_ANNOTATION:?}] naming its cluster",
                path.display(),
                doc.number,
                doc.kind()
            );
        };
        if !clusters.iter().any(|c| c.name() == cluster) {
            bail!(
                "{}: document {}: metadata.annotations[{CLUSTER_ANNOTATION:?}] names cluster {cluster:?}, which is not in the clusters file",
                path.display(),
                doc.number
            );
        }
        let entry = nodes.entry(cluster).or_default();
        match doc.kind() {
            "Node" => entry.0.push(decode(path, &doc)?),
            "Pod" => entry.1.push(decode(path, &doc)?),
            other => bail!(
                "{}: document {}: kind is {other:?}, expected Node or Pod",
                path.display(),
                doc.number
            ),
        }
    }
    let mut estimator = AccurateEstimator::default();
    for (cluster, (n, p)) in nodes {
        let index = NodeIndex::new(&n, &p)
            .with_context(|| format!("{}: cluster {cluster}", path.display()))?;
        estimator.insert(cluster, index);
    }
    Ok(estimator)
}

/// Karmada's `ResourceMatches` for one selector.
fn selector_matches(
    selector: &flotilla_api::karmada::ResourceSelector,
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    if selector.api_version != api_version || selector.kind != kind {
        return false;
    }
    if !selector.namespace.is_empty() && selector.namespace != namespace {
        return false;
    }
    if !selector.name.is_empty() {
        return selector.name == name;
    }
    match &selector.label_selector {
        None => true,
        Some(s) => {
            flotilla_api::selector::label::api_selector_matches(Some(s), labels).unwrap_or(false)
        }
    }
}

/// What the run produced.
enum Outcome {
    /// The binding to print.
    Scheduled(Value),
    /// The unschedulable reason.
    Failed(String),
}

fn run(args: &ScheduleArgs) -> anyhow::Result<Outcome> {
    let clusters = load_clusters(&args.clusters)?;
    let mut policy = load_policy(&args.policy)?;
    policy.spec.apply_defaults();
    let workload_docs = load(&args.workload)?;
    let [workload] = workload_docs.as_slice() else {
        bail!(
            "{}: expected exactly one workload object, found {}",
            args.workload.display(),
            workload_docs.len()
        );
    };
    let wpath = args.workload.display();
    let field = |pointer: &str| {
        workload
            .value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (api_version, kind, name) = (
        field("/apiVersion"),
        field("/kind"),
        field("/metadata/name"),
    );
    for (value, f) in [
        (api_version, "apiVersion"),
        (kind, "kind"),
        (name, "metadata.name"),
    ] {
        if value.is_empty() {
            bail!("{wpath}: document {}: {f} is missing", workload.number);
        }
    }
    let policy_namespace = policy.metadata.namespace.clone().unwrap_or_default();
    let cluster_scoped_workload =
        field("/metadata/namespace").is_empty() && CLUSTER_SCOPED_KINDS.contains(&kind);
    let namespace = match field("/metadata/namespace") {
        "" if cluster_scoped_workload => String::new(),
        "" if !policy.cluster_scoped && !policy_namespace.is_empty() => policy_namespace.clone(),
        "" => "default".to_owned(),
        ns => ns.to_owned(),
    };
    if !policy.cluster_scoped {
        if cluster_scoped_workload {
            bail!(
                "{}: a PropagationPolicy cannot select the cluster-scoped {kind} {name:?}; use a ClusterPropagationPolicy",
                args.policy.display()
            );
        }
        if !policy_namespace.is_empty() && policy_namespace != namespace {
            bail!(
                "{}: metadata.namespace is {policy_namespace:?} but the workload ({wpath}) is in namespace {namespace:?}",
                args.policy.display()
            );
        }
    }
    let labels: BTreeMap<String, String> = workload
        .value
        .pointer("/metadata/labels")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default();
    if !policy.spec.resource_selectors.is_empty()
        && !policy.spec.resource_selectors.iter().any(|s| {
            let mut s = s.clone();
            if !policy.cluster_scoped && s.namespace.is_empty() {
                s.namespace.clone_from(&namespace);
            }
            selector_matches(&s, api_version, kind, &namespace, name, &labels)
        })
    {
        // Scheduling only reads the placement, so a what-if over a policy written for other
        // objects still answers; the user is told the policy would not claim this workload.
        eprintln!(
            "warning: {}: spec.resourceSelectors do not select {kind} {name:?} ({api_version}) from {wpath}; scheduling with its placement anyway",
            args.policy.display()
        );
    }
    let interpreted = interpret_replica(&workload.value)
        .map_err(|e| anyhow!("{wpath}: document {}: {e}", workload.number))?;
    let previous = args.binding.as_deref().map(load_binding).transpose()?;
    if let (Some(prev), Some(path)) = (&previous, &args.binding) {
        let r = &prev.spec.resource;
        if (!r.kind.is_empty() && r.kind != kind) || (!r.name.is_empty() && r.name != name) {
            bail!(
                "{}: spec.resource is {} {:?} but the workload ({wpath}) is {kind} {name:?}",
                path.display(),
                r.kind,
                r.name
            );
        }
    }
    let estimator = args
        .nodes
        .as_deref()
        .map(|p| load_nodes(p, &clusters))
        .transpose()?;

    let policy_spec = policy.spec.clone();
    let mut spec = ResourceBindingSpec {
        resource: ObjectReference {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.clone(),
            name: name.to_owned(),
            uid: field("/metadata/uid").to_owned(),
            resource_version: field("/metadata/resourceVersion").to_owned(),
        },
        propagate_deps: policy_spec.propagate_deps || policy_spec.association,
        replica_requirements: interpreted.requirements,
        replicas: interpreted.replicas,
        placement: Some(policy_spec.placement.clone()),
        scheduler_name: if policy_spec.scheduler_name.is_empty() {
            DEFAULT_SCHEDULER_NAME.to_owned()
        } else {
            policy_spec.scheduler_name.clone()
        },
        failover: policy_spec.failover.clone(),
        conflict_resolution: if policy_spec.conflict_resolution.is_empty() {
            "Abort".to_owned()
        } else {
            policy_spec.conflict_resolution.clone()
        },
        suspension: policy_spec
            .suspension
            .clone()
            .map(|policy| BindingSuspension {
                policy,
                scheduling: None,
            }),
        preserve_resources_on_deletion: policy_spec.preserve_resources_on_deletion,
        ..ResourceBindingSpec::default()
    };
    let mut status = ResourceBindingStatus::default();
    let mut annotations: BTreeMap<String, String> = BTreeMap::new();
    let mut binding_meta = ObjectMeta::default();
    if let Some(prev) = previous {
        spec.clusters = prev.spec.clusters;
        spec.graceful_eviction_tasks = prev.spec.graceful_eviction_tasks;
        spec.required_by = prev.spec.required_by;
        spec.reschedule_triggered_at = prev.spec.reschedule_triggered_at;
        if let Some(s) = prev.spec.suspension {
            spec.suspension = Some(BindingSuspension {
                scheduling: s.scheduling,
                ..spec.suspension.unwrap_or_default()
            });
        }
        annotations = prev.metadata.annotations.clone().unwrap_or_default();
        binding_meta = prev.metadata;
        status = prev.status;
    }

    let division = policy
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REPLICA_DIVISION_ANNOTATION))
        .cloned();
    let divide_by_node_count = match division.as_deref() {
        None => None,
        Some("NodeCount") => match &estimator {
            Some(e) => Some(e),
            None => bail!(
                "{}: metadata.annotations[{REPLICA_DIVISION_ANNOTATION:?}] is NodeCount, which needs --nodes",
                args.policy.display()
            ),
        },
        Some(other) => bail!(
            "{}: metadata.annotations[{REPLICA_DIVISION_ANNOTATION:?}]: unknown value {other:?} (supported: NodeCount)",
            args.policy.display()
        ),
    };
    let topology = policy
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(GPU_TOPOLOGY_POLICY_ANNOTATION));
    let gpu_topology = match topology {
        None => None,
        Some(value) => {
            let level: GpuTopologyLevel = value.parse().map_err(|e| {
                anyhow!(
                    "{}: metadata.annotations[{GPU_TOPOLOGY_POLICY_ANNOTATION:?}]: {e}",
                    args.policy.display()
                )
            })?;
            match &estimator {
                Some(e) => Some((e, level)),
                None => bail!(
                    "{}: metadata.annotations[{GPU_TOPOLOGY_POLICY_ANNOTATION:?}] needs --nodes (the members' nodes and their GPU topology)",
                    args.policy.display()
                ),
            }
        }
    };
    let snapshot = Snapshot::new(clusters);
    let framework: Framework = Registry::in_tree()
        .framework(&args.plugins)
        .map_err(|e| anyhow!("--plugins: {e}"))?;
    let extra: Vec<&dyn ReplicaEstimator> = estimator
        .iter()
        .map(|e| e as &dyn ReplicaEstimator)
        .collect();
    let options = ScheduleOptions {
        framework: &framework,
        estimators: &extra,
        enable_empty_workload_propagation: args.enable_empty_workload_propagation,
        divide_by_node_count,
        gpu_topology,
    };
    let suspended = spec.suspension.as_ref().and_then(|s| s.scheduling) == Some(true);
    let needed = args.binding.is_none()
        || (!suspended && should_schedule(Some(&annotations), &spec, &status, &snapshot).is_some());
    if needed {
        match schedule(&snapshot, &spec, &status, &options) {
            Ok(result) => {
                spec.clusters = result.clusters;
                if let Some(name) = result.affinity_name {
                    status.scheduler_observing_affinity_name = name;
                }
                let placement = spec
                    .placement
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?;
                if let Some(p) = placement {
                    annotations.insert(ANNOTATION_APPLIED_PLACEMENT.to_owned(), p);
                }
            }
            Err(e) => return Ok(Outcome::Failed(e.to_string())),
        }
    }
    if spec.is_workload() {
        spec.clusters.retain(|c| c.replicas > 0);
    }
    spec.clusters.sort_by(|a, b| a.name.cmp(&b.name));

    let metadata = ObjectMeta {
        name: Some(names::binding_name(kind, name)),
        namespace: (!namespace.is_empty()).then(|| namespace.clone()),
        labels: binding_meta.labels,
        annotations: Some(annotations),
        ..ObjectMeta::default()
    };
    let status = (status != ResourceBindingStatus::default()).then_some(status);
    let out = if namespace.is_empty() {
        serde_json::to_value(ClusterResourceBinding {
            metadata,
            spec,
            status,
            ..Default::default()
        })?
    } else {
        serde_json::to_value(ResourceBinding {
            metadata,
            spec,
            status,
            ..Default::default()
        })?
    };
    Ok(Outcome::Scheduled(out))
}

/// Runs `flotilla schedule` and returns the process exit code.
pub fn main(args: &ScheduleArgs) -> i32 {
    match run(args) {
        Ok(Outcome::Scheduled(binding)) => {
            let text = if args.output == "json" {
                serde_json::to_string_pretty(&binding)
                    .map(|mut s| {
                        s.push('\n');
                        s
                    })
                    .map_err(anyhow::Error::from)
            } else {
                yaml_serde::to_string(&binding).map_err(anyhow::Error::from)
            };
            match text {
                Ok(text) => {
                    print!("{text}");
                    0
                }
                Err(e) => {
                    eprintln!("error: {e:#}");
                    2
                }
            }
        }
        Ok(Outcome::Failed(reason)) => {
            eprintln!("{reason}");
            1
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}
