//! `flotilla schedule`: what-if scheduling over files. Reads Clusters (with status), a
//! (Cluster)PropagationPolicy, the workload, optionally the previous ResourceBinding and member
//! Node/Pod lists, runs the same pure core as the live scheduler, and prints the resulting
//! ResourceBinding (exit 0) or the unschedulable reason (stderr, exit 1). Input errors name the
//! file and the field (exit 2).
//!
//! Node/Pod input (`--nodes`): Node and Pod objects, each annotated
//! `flotilla.io/cluster: <cluster name>`, or Lists carrying that annotation in their own
//! metadata (items inherit it).

mod input;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use flotilla_api::karmada::replicas::interpret_replica;
use flotilla_api::karmada::{
    ANNOTATION_APPLIED_PLACEMENT, BindingSuspension, CONDITION_SCHEDULED, ClusterResourceBinding,
    DEFAULT_SCHEDULER_NAME, MESSAGE_SCHEDULED, ObjectReference, Placement, REASON_SUCCESS,
    ResourceBinding, ResourceBindingSpec, ResourceBindingStatus, names,
};
use flotilla_scheduler::{
    Framework, Registry, ReplicaEstimator, ScheduleOptions, Snapshot,
    estimator::topology::{GPU_TOPOLOGY_POLICY_ANNOTATION, GpuTopologyLevel},
    schedule, should_schedule,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, OwnerReference, Time};
use serde_json::Value;

use input::{Doc, Policy, Previous, Target};

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
    /// (Cluster)PropagationPolicies (other documents are skipped); the one Karmada's detector
    /// would bind the workload with is used. Optional with --binding (its spec.placement).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// The workload (its metadata.uid drives tie-breaks); Karmada policies, bindings and
    /// clusters in the file are skipped.
    /// Optional with --binding (its spec.resource, replicas and replicaRequirements).
    #[arg(long)]
    pub workload: Option<PathBuf>,
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

/// What the run produced.
enum Outcome {
    /// The binding to print.
    Scheduled(Value),
    /// The unschedulable reason.
    Failed(String),
}

/// The workload as the binding describes it.
struct Workload {
    api_version: String,
    kind: String,
    namespace: String,
    name: String,
    uid: String,
    resource_version: String,
    labels: BTreeMap<String, String>,
    replicas: i32,
    requirements: Option<flotilla_api::karmada::ReplicaRequirements>,
    /// Where it came from, for messages.
    origin: String,
}

impl Workload {
    fn target(&self) -> Target<'_> {
        Target {
            api_version: &self.api_version,
            kind: &self.kind,
            namespace: &self.namespace,
            name: &self.name,
            labels: &self.labels,
        }
    }
}

/// The namespace of a workload document: its own, else (namespaced kinds) the binding's, the
/// one namespace of the PropagationPolicies given, or `default`.
fn workload_namespace(
    doc: &Doc,
    policies: Option<&[Policy]>,
    previous: Option<&Previous>,
) -> String {
    let own = doc.str_at("/metadata/namespace");
    if !own.is_empty() {
        return own.to_owned();
    }
    if CLUSTER_SCOPED_KINDS.contains(&doc.kind()) {
        return String::new();
    }
    if let Some(ns) = previous
        .map(|p| p.spec.resource.namespace.as_str())
        .filter(|ns| !ns.is_empty())
    {
        return ns.to_owned();
    }
    let mut namespaces: Vec<&str> = policies
        .into_iter()
        .flatten()
        .filter(|p| !p.cluster_scoped)
        .filter_map(|p| p.metadata.namespace.as_deref())
        .filter(|ns| !ns.is_empty())
        .collect();
    namespaces.dedup();
    match namespaces.as_slice() {
        [one] => (*one).to_owned(),
        _ => "default".to_owned(),
    }
}

fn workload_from_doc(
    path: &std::path::Path,
    doc: &Doc,
    policies: Option<&[Policy]>,
    previous: Option<&Previous>,
) -> anyhow::Result<Workload> {
    for (pointer, field) in [
        ("/apiVersion", "apiVersion"),
        ("/kind", "kind"),
        ("/metadata/name", "metadata.name"),
    ] {
        if doc.str_at(pointer).is_empty() {
            bail!(
                "{}: document {}: {field} is missing",
                path.display(),
                doc.number
            );
        }
    }
    let interpreted = interpret_replica(&doc.value)
        .map_err(|e| anyhow!("{}: document {}: {e}", path.display(), doc.number))?;
    Ok(Workload {
        api_version: doc.str_at("/apiVersion").to_owned(),
        kind: doc.kind().to_owned(),
        namespace: workload_namespace(doc, policies, previous),
        name: doc.str_at("/metadata/name").to_owned(),
        uid: doc.str_at("/metadata/uid").to_owned(),
        resource_version: doc.str_at("/metadata/resourceVersion").to_owned(),
        labels: doc.labels(),
        replicas: interpreted.replicas,
        requirements: interpreted.requirements,
        origin: path.display().to_string(),
    })
}

/// The workload: the one object of `--workload` (or, when that file holds several, the one the
/// policies select), else the previous binding's `spec.resource`, replicas and requirements.
fn resolve_workload(
    args: &ScheduleArgs,
    policies: Option<&[Policy]>,
    previous: Option<&Previous>,
) -> anyhow::Result<Workload> {
    let Some(path) = args.workload.as_deref() else {
        let Some(prev) = previous else {
            bail!("--workload is required (or --binding, whose spec.resource is the workload)");
        };
        let r = &prev.spec.resource;
        let binding = args.binding.as_deref().map(|p| p.display().to_string());
        let origin = binding.unwrap_or_default();
        if r.kind.is_empty() || r.name.is_empty() || r.api_version.is_empty() {
            bail!("{origin}: spec.resource needs apiVersion, kind and name (or pass --workload)");
        }
        return Ok(Workload {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            namespace: if r.namespace.is_empty() {
                prev.metadata.namespace.clone().unwrap_or_default()
            } else {
                r.namespace.clone()
            },
            name: r.name.clone(),
            uid: r.uid.clone(),
            resource_version: r.resource_version.clone(),
            labels: BTreeMap::new(),
            replicas: prev.spec.replicas,
            requirements: prev.spec.replica_requirements.clone(),
            origin,
        });
    };
    let docs = input::load_workloads(path)?;
    if let [doc] = docs.as_slice() {
        return workload_from_doc(path, doc, policies, previous);
    }
    let Some(policies) = policies else {
        bail!(
            "{}: {} objects; pass one workload (or --policy to pick the one it selects)",
            path.display(),
            docs.len()
        );
    };
    let mut selected = Vec::new();
    for doc in &docs {
        let w = workload_from_doc(path, doc, Some(policies), previous)?;
        if input::choose_policy(policies, &w.target()).is_some() {
            selected.push(w);
        }
    }
    match selected.len() {
        1 => Ok(selected.remove(0)),
        n => bail!(
            "{}: {} objects, {n} of them selected by the policies; pass exactly one workload",
            path.display(),
            docs.len()
        ),
    }
}

/// The policy Karmada would bind the workload with; `None` without `--policy`.
fn resolve_policy<'p>(
    args: &ScheduleArgs,
    policies: Option<&'p [Policy]>,
    workload: &Workload,
) -> anyhow::Result<Option<&'p Policy>> {
    let (Some(policies), Some(path)) = (policies, args.policy.as_deref()) else {
        return Ok(None);
    };
    let (kind, name) = (&workload.kind, &workload.name);
    let policy = match input::choose_policy(policies, &workload.target()) {
        Some(p) => p,
        None => {
            let [only] = policies else {
                bail!(
                    "{}: none of the {} policies selects {kind} {name:?} ({}) in namespace {:?}",
                    path.display(),
                    policies.len(),
                    workload.api_version,
                    workload.namespace
                );
            };
            let policy_namespace = only.metadata.namespace.as_deref().unwrap_or_default();
            if !only.cluster_scoped {
                if workload.namespace.is_empty() {
                    bail!(
                        "{}: a PropagationPolicy cannot select the cluster-scoped {kind} {name:?}; use a ClusterPropagationPolicy",
                        path.display()
                    );
                }
                if !policy_namespace.is_empty() && policy_namespace != workload.namespace {
                    bail!(
                        "{}: metadata.namespace is {policy_namespace:?} but the workload ({}) is in namespace {:?}",
                        path.display(),
                        workload.origin,
                        workload.namespace
                    );
                }
            }
            // Scheduling only reads the placement, so a what-if over a policy written for
            // other objects still answers; the user is told the policy would not claim it.
            eprintln!(
                "warning: {}: spec.resourceSelectors do not select {kind} {name:?} ({}) from {}; scheduling with its placement anyway",
                path.display(),
                workload.api_version,
                workload.origin
            );
            only
        }
    };
    if let Some(message) = &policy.invalid {
        eprintln!(
            "warning: {}: Karmada's webhook would reject this policy: {message}",
            path.display()
        );
    }
    Ok(Some(policy))
}

/// Karmada's claim metadata and owner of a binding it creates (`BuildResourceBinding`).
fn fresh_metadata(policy: Option<&Policy>, workload: &Workload) -> ObjectMeta {
    let mut labels = BTreeMap::new();
    let mut annotations = BTreeMap::new();
    if let Some(policy) = policy {
        let name = policy.metadata.name.clone().unwrap_or_default();
        let id_label = if policy.cluster_scoped {
            annotations.insert("clusterpropagationpolicy.karmada.io/name".to_owned(), name);
            "clusterpropagationpolicy.karmada.io/permanent-id"
        } else {
            let namespace = match policy.metadata.namespace.as_deref() {
                None | Some("") => workload.namespace.clone(),
                Some(ns) => ns.to_owned(),
            };
            annotations.insert(
                "propagationpolicy.karmada.io/namespace".to_owned(),
                namespace,
            );
            annotations.insert("propagationpolicy.karmada.io/name".to_owned(), name);
            "propagationpolicy.karmada.io/permanent-id"
        };
        // The policy's permanent id, when the file carries it (the webhook sets it on create).
        if let Some(id) = policy
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(id_label))
        {
            labels.insert(id_label.to_owned(), id.clone());
        }
    }
    let owner = (!workload.uid.is_empty()).then(|| {
        vec![OwnerReference {
            api_version: workload.api_version.clone(),
            kind: workload.kind.clone(),
            name: workload.name.clone(),
            uid: workload.uid.clone(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]
    });
    let finalizer = if workload.namespace.is_empty() {
        "karmada.io/cluster-resource-binding-controller"
    } else {
        "karmada.io/binding-controller"
    };
    ObjectMeta {
        labels: (!labels.is_empty()).then_some(labels),
        annotations: Some(annotations),
        owner_references: owner,
        finalizers: Some(vec![finalizer.to_owned()]),
        ..ObjectMeta::default()
    }
}

/// `meta.SetStatusCondition` for the `Scheduled=True/Success` condition.
fn set_scheduled(conditions: &mut Vec<Condition>, now: &Time) {
    match conditions
        .iter_mut()
        .find(|c| c.type_ == CONDITION_SCHEDULED)
    {
        Some(c) => {
            if c.status != "True" {
                c.status = "True".to_owned();
                c.last_transition_time = now.clone();
            }
            REASON_SUCCESS.clone_into(&mut c.reason);
            MESSAGE_SCHEDULED.clone_into(&mut c.message);
        }
        None => conditions.push(Condition {
            type_: CONDITION_SCHEDULED.to_owned(),
            status: "True".to_owned(),
            reason: REASON_SUCCESS.to_owned(),
            message: MESSAGE_SCHEDULED.to_owned(),
            last_transition_time: now.clone(),
            observed_generation: None,
        }),
    }
}

/// The placement as Karmada's scheduler sees it: defaults applied, an empty
/// `clusterAffinities` dropped (it is `omitempty`).
fn normalized(mut placement: Placement) -> Placement {
    placement.apply_defaults();
    if placement
        .cluster_affinities
        .as_ref()
        .is_some_and(Vec::is_empty)
    {
        placement.cluster_affinities = None;
    }
    placement
}

fn run(args: &ScheduleArgs) -> anyhow::Result<Outcome> {
    let clusters = input::load_clusters(&args.clusters)?;
    let previous = args
        .binding
        .as_deref()
        .map(input::load_binding)
        .transpose()?;
    let policies = args
        .policy
        .as_deref()
        .map(input::load_policies)
        .transpose()?;
    let workload = resolve_workload(args, policies.as_deref(), previous.as_ref())?;
    let policy = resolve_policy(args, policies.as_deref(), &workload)?;
    if let (Some(prev), Some(path)) = (&previous, &args.binding) {
        let r = &prev.spec.resource;
        if (!r.kind.is_empty() && r.kind != workload.kind)
            || (!r.name.is_empty() && r.name != workload.name)
        {
            bail!(
                "{}: spec.resource is {} {:?} but the workload ({}) is {} {:?}",
                path.display(),
                r.kind,
                r.name,
                workload.origin,
                workload.kind,
                workload.name
            );
        }
    }
    let estimator = args
        .nodes
        .as_deref()
        .map(|p| input::load_nodes(p, &clusters))
        .transpose()?;

    let resource = ObjectReference {
        api_version: workload.api_version.clone(),
        kind: workload.kind.clone(),
        namespace: workload.namespace.clone(),
        name: workload.name.clone(),
        uid: workload.uid.clone(),
        resource_version: workload.resource_version.clone(),
    };
    let mut spec = match policy {
        Some(policy) => {
            let p = &policy.spec;
            ResourceBindingSpec {
                propagate_deps: p.propagate_deps || p.association,
                placement: Some(p.placement.clone()),
                scheduler_name: if p.scheduler_name.is_empty() {
                    DEFAULT_SCHEDULER_NAME.to_owned()
                } else {
                    p.scheduler_name.clone()
                },
                failover: p.failover.clone(),
                conflict_resolution: if p.conflict_resolution.is_empty() {
                    "Abort".to_owned()
                } else {
                    p.conflict_resolution.clone()
                },
                suspension: p.suspension.clone().map(|policy| BindingSuspension {
                    policy,
                    scheduling: None,
                }),
                preserve_resources_on_deletion: p.preserve_resources_on_deletion,
                ..ResourceBindingSpec::default()
            }
        }
        None => {
            let Some(prev) = &previous else {
                bail!("--policy is required (or --binding, whose spec.placement is used)");
            };
            let Some(placement) = prev.spec.placement.clone() else {
                bail!(
                    "{}: spec.placement is missing (pass --policy)",
                    args.binding
                        .as_deref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                );
            };
            ResourceBindingSpec {
                placement: Some(normalized(placement)),
                ..prev.spec.clone()
            }
        }
    };
    spec.resource = resource;
    spec.replicas = workload.replicas;
    spec.replica_requirements = workload.requirements.clone();
    let mut status = ResourceBindingStatus::default();
    let mut metadata = fresh_metadata(policy, &workload);
    if let Some(prev) = previous.as_ref() {
        spec.clusters.clone_from(&prev.spec.clusters);
        spec.graceful_eviction_tasks
            .clone_from(&prev.spec.graceful_eviction_tasks);
        spec.required_by.clone_from(&prev.spec.required_by);
        spec.reschedule_triggered_at
            .clone_from(&prev.spec.reschedule_triggered_at);
        if let Some(s) = &prev.spec.suspension {
            spec.suspension = Some(BindingSuspension {
                scheduling: s.scheduling,
                ..spec.suspension.unwrap_or_default()
            });
        }
        metadata = ObjectMeta {
            managed_fields: None,
            ..prev.metadata.clone()
        };
        status.clone_from(&prev.status);
    }
    let mut annotations = metadata.annotations.clone().unwrap_or_default();

    let policy_annotations = policy.and_then(|p| p.metadata.annotations.as_ref());
    let division = policy_annotations
        .and_then(|a| a.get(REPLICA_DIVISION_ANNOTATION))
        .cloned();
    let policy_path = args
        .policy
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let divide_by_node_count = match division.as_deref() {
        None => None,
        Some("NodeCount") => match &estimator {
            Some(e) => Some(e),
            None => bail!(
                "{policy_path}: metadata.annotations[{REPLICA_DIVISION_ANNOTATION:?}] is NodeCount, which needs --nodes"
            ),
        },
        Some(other) => bail!(
            "{policy_path}: metadata.annotations[{REPLICA_DIVISION_ANNOTATION:?}]: unknown value {other:?} (supported: NodeCount)"
        ),
    };
    let gpu_topology = match policy_annotations.and_then(|a| a.get(GPU_TOPOLOGY_POLICY_ANNOTATION))
    {
        None => None,
        Some(value) => {
            let level: GpuTopologyLevel = value.parse().map_err(|e| {
                anyhow!(
                    "{policy_path}: metadata.annotations[{GPU_TOPOLOGY_POLICY_ANNOTATION:?}]: {e}"
                )
            })?;
            match &estimator {
                Some(e) => Some((e, level)),
                None => bail!(
                    "{policy_path}: metadata.annotations[{GPU_TOPOLOGY_POLICY_ANNOTATION:?}] needs --nodes (the members' nodes and their GPU topology)"
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
        workload_peers: None,
        assumed: None,
    };
    let suspended = spec.suspension.as_ref().and_then(|s| s.scheduling) == Some(true);
    let needed = previous.is_none()
        || (!suspended && should_schedule(Some(&annotations), &spec, &status, &snapshot).is_some());
    let generation = metadata.generation.unwrap_or(0);
    if needed {
        match schedule(&snapshot, &spec, &status, &options) {
            Ok(result) => {
                spec.clusters = result.clusters;
                if let Some(name) = result.affinity_name {
                    status.scheduler_observing_affinity_name = name;
                }
                if let Some(p) = &spec.placement {
                    annotations.insert(
                        ANNOTATION_APPLIED_PLACEMENT.to_owned(),
                        serde_json::to_string(p)?,
                    );
                }
                // As Karmada's status patch after a success.
                let now = Time(k8s_openapi::jiff::Timestamp::from_second(
                    k8s_openapi::jiff::Timestamp::now().as_second(),
                )?);
                set_scheduled(&mut status.conditions, &now);
                status.last_scheduled_time = Some(now);
                status.scheduler_observed_generation = generation;
            }
            Err(e) => return Ok(Outcome::Failed(e.to_string())),
        }
    } else {
        status.scheduler_observed_generation = generation;
    }
    // `--enable-empty-workload-propagation` lists selected clusters without replicas on purpose.
    if spec.is_workload() && !args.enable_empty_workload_propagation {
        spec.clusters.retain(|c| c.replicas > 0);
    }
    spec.clusters.sort_by(|a, b| a.name.cmp(&b.name));

    let namespace = workload.namespace.clone();
    if metadata.name.as_deref().is_none_or(str::is_empty) {
        metadata.name = Some(names::binding_name(&workload.kind, &workload.name));
    }
    metadata.namespace = (!namespace.is_empty()).then(|| namespace.clone());
    metadata.annotations = Some(annotations);
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
