//! What the binding controller writes for one target cluster (pure): the workload with its
//! replicas revised and overrides applied, pruned, with Karmada's labels and annotations, inside
//! a Work named `names::work_name` in `karmada-es-<cluster>`.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::karmada::names::{execution_space_name, work_name};
use flotilla_api::karmada::webster;
use flotilla_api::karmada::{Cluster, ResourceBindingSpec, Work, WorkSpec, WorkloadTemplate};
use flotilla_api::validation::karmada::{CRB_PERMANENT_ID, RB_PERMANENT_ID, prune_manifest};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

use crate::interpreter;
use crate::overrides::{self, OverrideError, PolicyRef};

/// Finalizer of the execution controller, put on every Work.
pub const EXECUTION_FINALIZER: &str = "karmada.io/execution-controller";
/// Label on member objects managed by Karmada.
pub const MANAGED_LABEL: &str = "karmada.io/managed";
/// Annotation: conflict resolution (`overwrite` | `abort`), on templates, Works and manifests.
pub const CONFLICT_RESOLUTION_ANNOTATION: &str = "work.karmada.io/conflict-resolution";
/// Annotation on manifests: the Work's name.
pub const WORK_NAME_ANNOTATION: &str = "work.karmada.io/name";
/// Annotation on manifests: the Work's namespace.
pub const WORK_NAMESPACE_ANNOTATION: &str = "work.karmada.io/namespace";
/// Annotation on manifests: the template's UID.
pub const TEMPLATE_UID_ANNOTATION: &str = "resourcetemplate.karmada.io/uid";
/// Annotation on manifests: the template's generation.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "resourcetemplate.karmada.io/generation";
/// Annotation: namespace of the ResourceBinding.
pub const RB_NAMESPACE_ANNOTATION: &str = "resourcebinding.karmada.io/namespace";
/// Annotation: name of the ResourceBinding.
pub const RB_NAME_ANNOTATION: &str = "resourcebinding.karmada.io/name";
/// Annotation: name of the ClusterResourceBinding.
pub const CRB_NAME_ANNOTATION: &str = "clusterresourcebinding.karmada.io/name";

/// Work annotations the binding controller owns (removed when no longer applicable).
pub const ANNOTATION_KEYS_OWNED: &[&str] = &[
    overrides::ANNOTATION_APPLIED_OVERRIDES,
    overrides::ANNOTATION_APPLIED_CLUSTER_OVERRIDES,
];

/// Which binding a Work belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingRef {
    Namespaced {
        namespace: String,
        name: String,
        id: String,
    },
    Cluster {
        name: String,
        id: String,
    },
}

impl BindingRef {
    /// `(label, id)` identifying the binding's Works.
    pub fn id_label(&self) -> (&'static str, &str) {
        match self {
            Self::Namespaced { id, .. } => (RB_PERMANENT_ID, id),
            Self::Cluster { id, .. } => (CRB_PERMANENT_ID, id),
        }
    }

    fn annotations(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Namespaced {
                namespace, name, ..
            } => vec![
                (RB_NAMESPACE_ANNOTATION, namespace.clone()),
                (RB_NAME_ANNOTATION, name.clone()),
            ],
            Self::Cluster { name, .. } => vec![(CRB_NAME_ANNOTATION, name.clone())],
        }
    }
}

/// Everything rendering needs besides the template.
#[derive(Debug)]
pub struct RenderInput<'a> {
    pub binding: &'a BindingRef,
    pub spec: &'a ResourceBindingSpec,
    pub cluster: &'a Cluster,
    /// Replicas for this cluster (from `spec.clusters`, or for a `requiredBy` target the
    /// requiring binding's there); `None`: the template's replicas are kept.
    pub replicas: Option<i32>,
    pub cluster_overrides: Vec<PolicyRef<'a>>,
    pub overrides: Vec<PolicyRef<'a>>,
    /// Labels a stateful failover carries to the workload's new cluster
    /// ([`injected_labels`]), merged into the manifest's labels after overrides.
    pub injected_labels: Option<&'a BTreeMap<String, String>>,
}

/// Why a Work could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Override(#[from] OverrideError),
    #[error("the template is not an object")]
    NotAnObject,
    /// A ResourceInterpreterCustomization's `ReviseReplica` failed.
    #[error("{0}")]
    Customized(String),
}

fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn meta_map<'a>(object: &'a mut Map<String, Value>, field: &str) -> &'a mut Map<String, Value> {
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Value::Object(meta) = meta else {
        unreachable!("metadata was just made an object")
    };
    let map = meta
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if !map.is_object() {
        *map = Value::Object(Map::new());
    }
    match map {
        Value::Object(map) => map,
        _ => unreachable!("the map was just made an object"),
    }
}

/// The conflict resolution of the Work: a valid template annotation wins, else the binding's.
pub fn conflict_resolution(template: &Value, spec: &ResourceBindingSpec) -> &'static str {
    match template
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CONFLICT_RESOLUTION_ANNOTATION))
        .and_then(Value::as_str)
    {
        Some("overwrite") => "overwrite",
        Some("abort") => "abort",
        _ if spec.conflict_resolution == "Overwrite" => "overwrite",
        _ => "abort",
    }
}

/// Whether dispatching to `cluster` is suspended by the binding.
pub fn dispatching_suspended(spec: &ResourceBindingSpec, cluster: &str) -> bool {
    spec.suspension.as_ref().is_some_and(|s| {
        s.policy.dispatching == Some(true)
            || s.policy
                .dispatching_on_clusters
                .as_ref()
                .is_some_and(|c| c.cluster_names.iter().any(|n| n == cluster))
    })
}

/// The labels Karmada's stateful failover injection (gate `StatefulFailoverInjection`) adds to
/// the workload in `cluster`: only when the binding places it in one cluster, the latest
/// eviction task purged `Directly`, and `cluster` is not one the workload ran in before that
/// failover. Then the task's `preservedLabelState` (values read from the evicted copy's status).
pub fn injected_labels<'a>(
    spec: &'a ResourceBindingSpec,
    cluster: &str,
    targets: usize,
) -> Option<&'a BTreeMap<String, String>> {
    if targets != 1 {
        return None;
    }
    let task = spec.graceful_eviction_tasks.last()?;
    if task.purge_mode != "Directly" || task.clusters_before_failover.iter().any(|c| c == cluster) {
        return None;
    }
    (!task.preserved_label_state.is_empty()).then_some(&task.preserved_label_state)
}

/// The Work for one cluster (Karmada `ensureWork` + `CreateOrUpdateWork`): replicas revised,
/// then overrides applied; everything after (Work name, conflict resolution, the template's UID
/// and generation) is read from the overridden workload, as Karmada reads its clone.
pub fn render_work(template: &Value, input: &RenderInput<'_>) -> Result<Work, RenderError> {
    render_work_with(template, input, None)
}

/// This cluster's share of a Divided Job's `spec.completions`, as Karmada's binding controller
/// divides them (`divideReplicasByJobCompletions`): the template's completions spread over the
/// binding's target clusters (scheduled, then the clusters of `requiredBy` bindings not already
/// among them) by their replicas, with the dispenser's tie-break on the template's UID. `None`
/// (completions left as they are) for anything but a Job whose binding has replicas and a
/// Divided placement, for a Job without `spec.completions` (a work-queue Job), or when the
/// targets carry no replicas to weigh by.
pub fn divided_job_completions(
    template: &Value,
    spec: &ResourceBindingSpec,
    cluster: &str,
) -> Option<i64> {
    let divided = spec.placement.as_ref().is_some_and(|placement| {
        placement.replica_scheduling_type() == flotilla_api::karmada::REPLICA_SCHEDULING_DIVIDED
    });
    if str_at(template, "/kind") != "Job" || spec.replicas <= 0 || !divided {
        return None;
    }
    let completions = template.pointer("/spec/completions")?.as_i64()?;
    let mut targets = spec.clusters.clone();
    for snapshot in &spec.required_by {
        for target in &snapshot.clusters {
            if !targets.iter().any(|t| t.name == target.name) {
                targets.push(target.clone());
            }
        }
    }
    let uid = str_at(template, "/metadata/uid");
    let completions = i32::try_from(completions).unwrap_or(i32::MAX);
    webster::spread_replicas_by_weights(completions, &targets, &[], uid)
        .into_iter()
        .find(|target| target.name == cluster)
        .map(|target| i64::from(target.replicas))
}

/// [`render_work`], revising replicas with a ResourceInterpreterCustomization's
/// `ReviseReplica` where `customizations` has one for the kind.
pub fn render_work_with(
    template: &Value,
    input: &RenderInput<'_>,
    customizations: Option<&interpreter::Customizations>,
) -> Result<Work, RenderError> {
    let mut workload = template.clone();
    if input.spec.is_workload()
        && let Some(replicas) = input.replicas
    {
        match customizations.and_then(|c| c.revise_replica(&workload, replicas)) {
            Some(Ok(revised)) => workload = revised,
            Some(Err(error)) => return Err(RenderError::Customized(error.to_string())),
            None => {
                interpreter::revise_replica(&mut workload, replicas);
            }
        }
    }
    if let Some(completions) = divided_job_completions(template, input.spec, input.cluster.name())
        && let Some(field) = workload.pointer_mut("/spec/completions")
    {
        *field = completions.into();
    }
    let applied = overrides::apply_overrides(
        &mut workload,
        input.cluster,
        input.cluster_overrides.iter().copied(),
        input.overrides.iter().copied(),
    )?;
    let kind = str_at(&workload, "/kind").to_owned();
    let name = str_at(&workload, "/metadata/name").to_owned();
    let namespace = str_at(&workload, "/metadata/namespace").to_owned();
    let uid = str_at(&workload, "/metadata/uid").to_owned();
    let generation = workload
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let work_name = work_name(&kind, &name, &namespace);
    let work_namespace = execution_space_name(input.cluster.name());
    let conflict = conflict_resolution(&workload, input.spec);
    let Value::Object(object) = &mut workload else {
        return Err(RenderError::NotAnObject);
    };
    prune_manifest(object);
    let (id_label, id) = input.binding.id_label();
    // Karmada's order: the binding id, then a failover's preserved labels, then the managed
    // label (written last, by `CreateOrUpdateWork`, so nothing overrides it).
    let labels = meta_map(object, "labels");
    labels.insert(id_label.into(), id.into());
    for (key, value) in input.injected_labels.into_iter().flatten() {
        labels.insert(key.clone(), value.clone().into());
    }
    labels.insert(MANAGED_LABEL.into(), "true".into());
    let annotations = meta_map(object, "annotations");
    annotations.insert(TEMPLATE_UID_ANNOTATION.into(), uid.into());
    annotations.insert(WORK_NAME_ANNOTATION.into(), work_name.clone().into());
    annotations.insert(
        WORK_NAMESPACE_ANNOTATION.into(),
        work_namespace.clone().into(),
    );
    for (key, value) in input.binding.annotations() {
        annotations.insert(key.into(), value.into());
    }
    // Karmada's `mergeAnnotations` records the generation only when the template has one.
    if generation > 0 {
        annotations.insert(
            TEMPLATE_GENERATION_ANNOTATION.into(),
            generation.to_string().into(),
        );
    }
    annotations.insert(CONFLICT_RESOLUTION_ANNOTATION.into(), conflict.into());

    let mut work_annotations: BTreeMap<String, String> = input
        .binding
        .annotations()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    work_annotations.insert(CONFLICT_RESOLUTION_ANNOTATION.into(), conflict.into());
    for (key, value) in applied.annotations() {
        if let Some(value) = value {
            work_annotations.insert(key.into(), value);
        }
    }
    let suspended = dispatching_suspended(input.spec, input.cluster.name());
    Ok(Work {
        metadata: ObjectMeta {
            name: Some(work_name),
            namespace: Some(work_namespace),
            finalizers: Some(vec![EXECUTION_FINALIZER.to_owned()]),
            labels: Some(BTreeMap::from([(id_label.to_owned(), id.to_owned())])),
            annotations: Some(work_annotations),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![workload.into()],
            },
            // Karmada's `WithSuspendDispatching` / `WithPreserveResourcesOnDeletion` always
            // write both booleans, `false` included.
            suspend_dispatching: Some(suspended),
            preserve_resources_on_deletion: Some(
                input.spec.preserve_resources_on_deletion.unwrap_or(false),
            ),
        },
        ..Work::default()
    })
}

/// The clusters a binding with `spec` has Works in: its scheduled clusters, those of the
/// bindings it is a dependency of, and those of graceful evictions that wait.
pub fn expected_clusters(spec: &ResourceBindingSpec) -> BTreeSet<String> {
    let mut clusters: BTreeSet<String> = spec.clusters.iter().map(|c| c.name.clone()).collect();
    for required in &spec.required_by {
        clusters.extend(required.clusters.iter().map(|c| c.name.clone()));
    }
    for task in &spec.graceful_eviction_tasks {
        if task.purge_mode != "Directly" {
            clusters.insert(task.from_cluster.clone());
        }
    }
    clusters
}

/// The clusters of a binding's graceful evictions purged `Directly` (Karmada's
/// `ObtainClustersWithPurgeModeDirectly`): their Works are deleted at once, before the Works of
/// the new placement are written.
pub fn directly_purged_clusters(spec: &ResourceBindingSpec) -> BTreeSet<&str> {
    spec.graceful_eviction_tasks
        .iter()
        .filter(|t| t.purge_mode == "Directly")
        .map(|t| t.from_cluster.as_str())
        .collect()
}

/// The clusters a binding's Works are rendered for, each with the replicas a workload is
/// revised to there: the scheduled clusters, then (Karmada's `mergeTargetClusters`) each
/// `requiredBy` cluster not already among them, with the requiring binding's replicas there.
pub(super) fn render_targets(spec: &ResourceBindingSpec) -> Vec<(String, Option<i32>)> {
    let mut targets: Vec<(String, Option<i32>)> = spec
        .clusters
        .iter()
        .map(|c| (c.name.clone(), Some(c.replicas)))
        .collect();
    for required in &spec.required_by {
        for cluster in &required.clusters {
            if !targets.iter().any(|(n, _)| *n == cluster.name) {
                targets.push((cluster.name.clone(), Some(cluster.replicas)));
            }
        }
    }
    targets
}

#[cfg(test)]
mod tests;
