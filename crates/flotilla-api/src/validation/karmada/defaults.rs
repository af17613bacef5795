//! Defaults of Karmada's kinds: first their CRD schema defaults (as kube-apiserver's structural
//! defaulting applies them), then what karmada-webhook's mutating handlers add
//! (`pkg/webhook/*/mutating.go`, helpers in `pkg/util/helper/policy.go`), and for `Cluster`
//! the aggregated API server's strategy (`pkg/registry/cluster/strategy.go`,
//! `pkg/apis/cluster/mutation`). Every default is idempotent: applying it to its own output
//! changes nothing, so an unchanged update is not a change.

use serde_json::{Map, Value, json};

use super::schema::{self, str_at};
use super::{Kind, tables, work};

/// Label carrying a PropagationPolicy's permanent id.
pub const PP_PERMANENT_ID: &str = "propagationpolicy.karmada.io/permanent-id";
/// Label carrying a ClusterPropagationPolicy's permanent id.
pub const CPP_PERMANENT_ID: &str = "clusterpropagationpolicy.karmada.io/permanent-id";
/// Label carrying a ResourceBinding's permanent id.
pub const RB_PERMANENT_ID: &str = "resourcebinding.karmada.io/permanent-id";
/// Label carrying a ClusterResourceBinding's permanent id.
pub const CRB_PERMANENT_ID: &str = "clusterresourcebinding.karmada.io/permanent-id";
/// Label carrying a Work's permanent id.
pub const WORK_PERMANENT_ID: &str = "work.karmada.io/permanent-id";
/// Finalizer of the PropagationPolicy controller (detector).
pub const PP_FINALIZER: &str = "karmada.io/propagation-policy-controller";
/// Finalizer of the ClusterPropagationPolicy controller (detector).
pub const CPP_FINALIZER: &str = "karmada.io/cluster-propagation-policy-controller";

/// What a defaulting pass knows besides the object.
#[derive(Debug, Clone, Copy)]
pub struct Defaulting<'a> {
    /// The write creates the object (permanent ids and finalizers are added on create).
    pub create: bool,
    /// A fresh UUID, used where an object gets a new permanent id.
    pub fresh_id: &'a str,
    /// Now, RFC 3339 (`2026-01-02T03:04:05Z`), for taints' `timeAdded`.
    pub now: &'a str,
}

/// Applies the defaults of `kind` to `object`. `FederatedHPA` gets only its CRD-level
/// defaults here: its webhook defaults are autoscaling/v2's HPA defaults, which the caller
/// owns.
pub fn default_object(kind: Kind, object: &mut Value, ctx: &Defaulting<'_>) {
    if !object.is_object() {
        return;
    }
    match kind {
        Kind::PropagationPolicy | Kind::ClusterPropagationPolicy => {
            propagation_policy(kind, object, ctx)
        }
        Kind::OverridePolicy => {
            schema::default(tables::OVERRIDE, object);
            let namespace = namespace_of(object);
            default_selector_namespaces(object, &namespace);
        }
        Kind::ResourceBinding | Kind::ClusterResourceBinding => {
            for table in [tables::BINDING, tables::PLACEMENT, tables::FAILOVER] {
                schema::default(table, object);
            }
            if ctx.create {
                let key = if kind == Kind::ResourceBinding {
                    RB_PERMANENT_ID
                } else {
                    CRB_PERMANENT_ID
                };
                label_if_absent(object, key, ctx.fresh_id);
            }
        }
        Kind::Work => {
            label_if_absent(object, WORK_PERMANENT_ID, ctx.fresh_id);
            work::prune_manifests(object);
        }
        Kind::Cluster => cluster(object, ctx),
        // Karmada's MultiClusterService webhook: a permanent id when there is none.
        Kind::MultiClusterService => {
            label_if_absent(object, crate::karmada::MCS_PERMANENT_ID_LABEL, ctx.fresh_id)
        }
        Kind::CronFederatedHpa => schema::default(tables::CRON_FEDERATED_HPA, object),
        Kind::ClusterOverridePolicy
        | Kind::FederatedResourceQuota
        | Kind::ClusterTaintPolicy
        | Kind::FederatedHpa
        | Kind::WorkloadRebalancer
        | Kind::Remedy
        | Kind::ResourceRegistry
        | Kind::MultiClusterIngress
        | Kind::ResourceInterpreterCustomization
        | Kind::ResourceInterpreterWebhookConfiguration => {}
    }
}

fn propagation_policy(kind: Kind, object: &mut Value, ctx: &Defaulting<'_>) {
    for table in [tables::PROPAGATION, tables::PLACEMENT, tables::FAILOVER] {
        schema::default(table, object);
    }
    let namespaced = kind == Kind::PropagationPolicy;
    if namespaced {
        let namespace = namespace_of(object);
        default_selector_namespaces(object, &namespace);
    }
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(placement) = spec.get_mut("placement").and_then(Value::as_object_mut) {
        spread_constraints(placement);
        weighted_preference(placement);
    }
    if selects_service_import(spec) {
        spec.insert("propagateDeps".into(), true.into());
    }
    if let Some(application) = spec
        .get_mut("failover")
        .and_then(|f| f.get_mut("application"))
        .and_then(Value::as_object_mut)
        && str_at(application, "purgeMode") == "Gracefully"
        && application
            .get("gracePeriodSeconds")
            .is_none_or(Value::is_null)
    {
        application.insert("gracePeriodSeconds".into(), 600.into());
    }
    if ctx.create {
        let (label, finalizer) = if namespaced {
            (PP_PERMANENT_ID, PP_FINALIZER)
        } else {
            (CPP_PERMANENT_ID, CPP_FINALIZER)
        };
        // The webhook overwrites whatever id the request carried.
        labels_mut(object).insert(label.into(), ctx.fresh_id.into());
        add_finalizer(object, finalizer);
    }
}

/// `SetDefaultSpreadConstraints`: neither field nor label ⇒ `cluster`; `minGroups` 0 ⇒ 1.
fn spread_constraints(placement: &mut Map<String, Value>) {
    let constraints = placement
        .get_mut("spreadConstraints")
        .and_then(Value::as_array_mut);
    for constraint in constraints
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if str_at(constraint, "spreadByLabel").is_empty()
            && str_at(constraint, "spreadByField").is_empty()
        {
            constraint.insert("spreadByField".into(), "cluster".into());
        }
        let min_groups = constraint.get("minGroups");
        if min_groups.is_none_or(|m| m.is_null() || m.as_f64() == Some(0.0)) {
            constraint.insert("minGroups".into(), 1.into());
        }
    }
}

/// `SetReplicaDivisionPreferenceWeighted`: Divided without a preference ⇒ `Weighted`.
fn weighted_preference(placement: &mut Map<String, Value>) {
    let Some(scheduling) = placement
        .get_mut("replicaScheduling")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if str_at(scheduling, "replicaSchedulingType") == "Divided"
        && str_at(scheduling, "replicaDivisionPreference").is_empty()
    {
        scheduling.insert("replicaDivisionPreference".into(), "Weighted".into());
    }
}

/// `ContainsServiceImport`: a selector of `multicluster.x-k8s.io/v1alpha1` ServiceImport.
fn selects_service_import(spec: &Map<String, Value>) -> bool {
    spec.get("resourceSelectors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .any(|s| {
            str_at(s, "kind") == "ServiceImport"
                && str_at(s, "apiVersion") == "multicluster.x-k8s.io/v1alpha1"
        })
}

fn namespace_of(object: &Value) -> String {
    object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Empty selector namespaces become the policy's (namespaced policies only).
fn default_selector_namespaces(object: &mut Value, namespace: &str) {
    if namespace.is_empty() {
        return;
    }
    let selectors = object
        .get_mut("spec")
        .and_then(|s| s.get_mut("resourceSelectors"))
        .and_then(Value::as_array_mut);
    for selector in selectors
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if str_at(selector, "namespace").is_empty() {
            selector.insert("namespace".into(), namespace.into());
        }
    }
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    let map = object.as_object_mut().expect("callers pass objects");
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut()
        .expect("metadata was just made an object")
}

pub(super) fn labels_mut(object: &mut Value) -> &mut Map<String, Value> {
    let meta = metadata_mut(object);
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    labels
        .as_object_mut()
        .expect("labels were just made an object")
}

fn label_if_absent(object: &mut Value, key: &str, value: &str) {
    let labels = labels_mut(object);
    if labels
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        labels.insert(key.into(), value.into());
    }
}

fn add_finalizer(object: &mut Value, finalizer: &str) {
    let meta = metadata_mut(object);
    let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    let list = finalizers
        .as_array_mut()
        .expect("finalizers were just made a list");
    if !list.iter().any(|f| f.as_str() == Some(finalizer)) {
        list.push(finalizer.into());
    }
}

/// The largest int64, which ends the last resource-model grade.
pub const MAX_INT64: &str = "9223372036854775807";

/// The Cluster strategy: default or standardized resource models, `zone` moved into `zones`,
/// `timeAdded` on NoExecute taints.
fn cluster(object: &mut Value, ctx: &Defaulting<'_>) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let models_empty = spec
        .get("resourceModels")
        .is_none_or(|m| m.is_null() || m.as_array().is_some_and(Vec::is_empty));
    if models_empty {
        if ctx.create {
            spec.insert("resourceModels".into(), default_resource_models());
        }
    } else if let Some(models) = spec.get_mut("resourceModels").and_then(Value::as_array_mut) {
        standardize_resource_models(models);
    }
    for taint in spec
        .get_mut("taints")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if str_at(taint, "effect") == "NoExecute"
            && taint.get("timeAdded").is_none_or(Value::is_null)
        {
            taint.insert("timeAdded".into(), ctx.now.into());
        }
    }
    let zone = str_at(spec, "zone").to_owned();
    let zones_empty = spec
        .get("zones")
        .is_none_or(|z| z.is_null() || z.as_array().is_some_and(Vec::is_empty));
    if !zone.is_empty() && zones_empty {
        spec.insert("zones".into(), json!([zone]));
        spec.remove("zone");
    }
}

/// Sorted by grade; the first grade starts at 0 and the last ends at the largest int64.
fn standardize_resource_models(models: &mut [Value]) {
    if models.is_empty() {
        return;
    }
    models.sort_by_key(|m| m["grade"].as_u64().unwrap_or(0));
    let last = models.len() - 1;
    set_range_bound(&mut models[0], "min", "0");
    set_range_bound(&mut models[last], "max", MAX_INT64);
}

fn set_range_bound(model: &mut Value, bound: &str, value: &str) {
    let ranges = model.get_mut("ranges").and_then(Value::as_array_mut);
    for range in ranges
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        range.insert(bound.into(), value.into());
    }
}

/// The nine default grades: CPU doubles from 1 core and memory from 4 GiB, each interval
/// left-closed and right-open, the last one unbounded.
pub fn default_resource_models() -> Value {
    let gib = |n: u64| -> String {
        if n == 0 {
            "0".into()
        } else if n.is_multiple_of(1024) {
            format!("{}Ti", n / 1024)
        } else {
            format!("{n}Gi")
        }
    };
    let bounds = |grade: u32| -> (u64, u64) {
        match grade {
            0 => (0, 1),
            g => (1 << (g - 1), 1 << g),
        }
    };
    let memory = |grade: u32| -> (u64, u64) {
        match grade {
            0 => (0, 4),
            1 => (4, 16),
            g => (1 << (g + 2), 1 << (g + 3)),
        }
    };
    let models: Vec<Value> = (0..9u32)
        .map(|grade| {
            let (cpu_min, cpu_max) = bounds(grade);
            let (mem_min, mem_max) = memory(grade);
            let (cpu_max, mem_max) = if grade == 8 {
                (MAX_INT64.to_owned(), MAX_INT64.to_owned())
            } else {
                (cpu_max.to_string(), gib(mem_max))
            };
            json!({
                "grade": grade,
                "ranges": [
                    {"name": "cpu", "min": cpu_min.to_string(), "max": cpu_max},
                    {"name": "memory", "min": gib(mem_min), "max": mem_max},
                ]
            })
        })
        .collect();
    Value::Array(models)
}
