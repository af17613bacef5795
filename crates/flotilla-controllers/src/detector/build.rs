//! The binding a claimed template gets (name `<name>-<kind>`, owner reference, claim metadata,
//! spec copied from the policy plus the interpreter's replicas), and how an existing binding is
//! refreshed without touching what the scheduler and the failover controllers own.

use std::collections::BTreeMap;

use flotilla_api::karmada::replicas::InterpretedReplicas;
use flotilla_api::karmada::{
    BindingSchedulePriority, BindingSuspension, ObjectReference, PropagationSpec,
    ResourceBindingSpec, WorkloadAffinityGroups,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::Value;

use super::claim::PolicyClaim;

/// Finalizer of the ResourceBinding controller.
pub const RB_FINALIZER: &str = "karmada.io/binding-controller";
/// Finalizer of the ClusterResourceBinding controller.
pub const CRB_FINALIZER: &str = "karmada.io/cluster-resource-binding-controller";

fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `spec.resource` of `template`.
pub fn resource_reference(template: &Value) -> ObjectReference {
    ObjectReference {
        api_version: str_at(template, "/apiVersion").to_owned(),
        kind: str_at(template, "/kind").to_owned(),
        namespace: str_at(template, "/metadata/namespace").to_owned(),
        name: str_at(template, "/metadata/name").to_owned(),
        uid: str_at(template, "/metadata/uid").to_owned(),
        resource_version: str_at(template, "/metadata/resourceVersion").to_owned(),
    }
}

/// Gate `ResourceQuotaEstimate`, as Karmada's detector and `GenerateReplicaRequirements` do:
/// the requirements name the template's namespace when the interpreter left it empty, and the
/// native rule's requirements the pod template's priority class.
pub fn quota_estimate_requirements(
    template: &Value,
    interpreted: &mut InterpretedReplicas,
    native: bool,
) {
    let Some(requirements) = &mut interpreted.requirements else {
        return;
    };
    if requirements.namespace.is_empty() {
        requirements.namespace = str_at(template, "/metadata/namespace").to_owned();
    }
    if native && requirements.priority_class_name.is_empty() {
        requirements.priority_class_name =
            str_at(template, "/spec/template/spec/priorityClassName").to_owned();
    }
}

/// The desired spec of `template`'s binding under `policy`.
pub fn binding_spec(
    template: &Value,
    policy: &PropagationSpec,
    interpreted: InterpretedReplicas,
    schedule_priority: Option<i32>,
) -> ResourceBindingSpec {
    ResourceBindingSpec {
        resource: resource_reference(template),
        propagate_deps: policy.propagate_deps || policy.association,
        replica_requirements: interpreted.requirements,
        replicas: interpreted.replicas,
        placement: Some(policy.placement.clone()),
        scheduler_name: policy.scheduler_name.clone(),
        failover: policy.failover.clone(),
        conflict_resolution: policy.conflict_resolution.clone(),
        suspension: policy.suspension.clone().map(|s| BindingSuspension {
            policy: s,
            scheduling: None,
        }),
        preserve_resources_on_deletion: policy.preserve_resources_on_deletion,
        schedule_priority: schedule_priority.map(|priority| BindingSchedulePriority { priority }),
        ..ResourceBindingSpec::default()
    }
}

/// Gate `WorkloadAffinity`: the (anti-)affinity groups a namespaced template joins under its
/// policy's `workloadAffinity`, from the template's labels. Groups are scoped to a namespace,
/// and Karmada sets them on ResourceBindings only (a cluster-scoped template gets none).
pub fn workload_affinity_groups(
    template: &Value,
    policy: &PropagationSpec,
) -> Option<WorkloadAffinityGroups> {
    if str_at(template, "/metadata/namespace").is_empty() {
        return None;
    }
    let labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    WorkloadAffinityGroups::of(&policy.placement, &labels)
}

/// Copies the policy- and template-derived fields of `desired` onto `existing`, keeping the
/// schedule (`clusters`), eviction tasks, `requiredBy`, `rescheduleTriggeredAt` and the
/// binding's own `suspension.scheduling`.
pub fn refresh_spec(existing: &mut ResourceBindingSpec, desired: ResourceBindingSpec) {
    let scheduling = existing.suspension.as_ref().and_then(|s| s.scheduling);
    existing.resource = desired.resource;
    existing.propagate_deps = desired.propagate_deps;
    existing.replica_requirements = desired.replica_requirements;
    existing.replicas = desired.replicas;
    existing.components = desired.components;
    existing.placement = desired.placement;
    existing.scheduler_name = desired.scheduler_name;
    existing.failover = desired.failover;
    existing.conflict_resolution = desired.conflict_resolution;
    existing.preserve_resources_on_deletion = desired.preserve_resources_on_deletion;
    existing.schedule_priority = desired.schedule_priority;
    existing.workload_affinity_groups = desired.workload_affinity_groups;
    existing.suspension = match (desired.suspension, scheduling) {
        (Some(mut s), scheduling) => {
            s.scheduling = scheduling;
            Some(s)
        }
        (None, Some(scheduling)) => Some(BindingSuspension {
            scheduling: Some(scheduling),
            ..BindingSuspension::default()
        }),
        (None, None) => None,
    };
}

/// The controller owner reference to `template`.
pub fn owner_reference(template: &Value) -> OwnerReference {
    OwnerReference {
        api_version: str_at(template, "/apiVersion").to_owned(),
        kind: str_at(template, "/kind").to_owned(),
        name: str_at(template, "/metadata/name").to_owned(),
        uid: str_at(template, "/metadata/uid").to_owned(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Metadata of a new binding of `template` claimed by `claim`.
pub fn binding_metadata(template: &Value, claim: &PolicyClaim, cluster_scoped: bool) -> ObjectMeta {
    let name = flotilla_api::karmada::names::binding_name(
        str_at(template, "/kind"),
        str_at(template, "/metadata/name"),
    );
    let mut meta = ObjectMeta {
        name: Some(name),
        namespace: (!cluster_scoped).then(|| str_at(template, "/metadata/namespace").to_owned()),
        owner_references: Some(vec![owner_reference(template)]),
        finalizers: Some(vec![
            if cluster_scoped {
                CRB_FINALIZER
            } else {
                RB_FINALIZER
            }
            .to_owned(),
        ]),
        ..ObjectMeta::default()
    };
    apply_claim(&mut meta, claim);
    meta
}

/// Writes `claim`'s labels and annotations on `meta`, removing the other kind's.
pub fn apply_claim(meta: &mut ObjectMeta, claim: &PolicyClaim) {
    let labels = meta.labels.get_or_insert_with(BTreeMap::new);
    let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
    let other = match claim {
        PolicyClaim::Namespaced { .. } => PolicyClaim::Cluster {
            name: String::new(),
            id: String::new(),
        },
        PolicyClaim::Cluster { .. } => PolicyClaim::Namespaced {
            namespace: String::new(),
            name: String::new(),
            id: String::new(),
        },
    };
    for (k, _) in other.labels() {
        labels.remove(k);
    }
    for (k, _) in other.annotations() {
        annotations.remove(k);
    }
    for (k, v) in claim.labels() {
        labels.insert(k.to_owned(), v);
    }
    for (k, v) in claim.annotations() {
        annotations.insert(k.to_owned(), v);
    }
}

/// Prefix of Flotilla's own annotations; those of a policy are copied onto its bindings so
/// that the scheduler sees the extensions the policy asks for.
pub const EXTENSION_PREFIX: &str = "flotilla.io/";

/// Makes `meta`'s `flotilla.io/*` annotations exactly `extensions` (the claiming policy's).
pub fn apply_extensions(meta: &mut ObjectMeta, extensions: &BTreeMap<String, String>) {
    let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.retain(|k, _| !k.starts_with(EXTENSION_PREFIX) || extensions.contains_key(k));
    for (k, v) in extensions {
        annotations.insert(k.clone(), v.clone());
    }
}

/// Ensures `meta` has `finalizer`.
pub fn ensure_finalizer(meta: &mut ObjectMeta, finalizer: &str) {
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_owned());
    }
}

/// The UID of `meta`'s controller owner.
pub fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.as_str())
}

#[cfg(test)]
mod extension_tests {
    use super::*;

    #[test]
    fn bindings_carry_exactly_the_policys_flotilla_annotations() {
        let mut meta = ObjectMeta {
            annotations: Some(BTreeMap::from([
                ("flotilla.io/gpu-topology".to_owned(), "NUMANode".to_owned()),
                (
                    "policy.karmada.io/applied-placement".to_owned(),
                    "{}".to_owned(),
                ),
            ])),
            ..ObjectMeta::default()
        };
        let extensions = BTreeMap::from([(
            "flotilla.io/replica-division".to_owned(),
            "NodeCount".to_owned(),
        )]);
        apply_extensions(&mut meta, &extensions);
        let annotations = meta.annotations.expect("annotations");
        assert_eq!(annotations["flotilla.io/replica-division"], "NodeCount");
        // Removed from the policy: removed from the binding. Karmada's own stay.
        assert!(!annotations.contains_key("flotilla.io/gpu-topology"));
        assert_eq!(annotations["policy.karmada.io/applied-placement"], "{}");
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::ReplicaRequirements;
    use serde_json::json;

    use super::*;

    #[test]
    fn quota_estimation_names_the_namespace_and_the_native_rules_priority_class() {
        let template = json!({
            "metadata": {"namespace": "team-a"},
            "spec": {"template": {"spec": {"priorityClassName": "gpu-high"}}},
        });
        let with_requirements = || InterpretedReplicas {
            replicas: 2,
            requirements: Some(ReplicaRequirements::default()),
        };
        let mut native = with_requirements();
        quota_estimate_requirements(&template, &mut native, true);
        let requirements = native.requirements.expect("requirements");
        assert_eq!(requirements.namespace, "team-a");
        assert_eq!(requirements.priority_class_name, "gpu-high");
        // A customization's requirements get the namespace only, as in Karmada.
        let mut customized = with_requirements();
        quota_estimate_requirements(&template, &mut customized, false);
        let requirements = customized.requirements.expect("requirements");
        assert_eq!(requirements.namespace, "team-a");
        assert_eq!(requirements.priority_class_name, "");
        // Nothing to name without requirements.
        let mut none = InterpretedReplicas::default();
        quota_estimate_requirements(&template, &mut none, true);
        assert_eq!(none.requirements, None);
    }

    #[test]
    fn workload_affinity_groups_come_from_a_namespaced_templates_labels_and_are_refreshed() {
        let policy: PropagationSpec = serde_json::from_value(json!({
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placement": {"workloadAffinity": {"antiAffinity": {"groupByLabelKey": "ha"}}},
        }))
        .expect("a policy");
        let template = |namespace: Option<&str>, value: &str| {
            let mut template = json!({"metadata": {"name": "web", "labels": {"ha": value}}});
            if let Some(namespace) = namespace {
                template["metadata"]["namespace"] = json!(namespace);
            }
            template
        };
        let groups = workload_affinity_groups(&template(Some("shop"), "a"), &policy);
        assert_eq!(
            groups.as_ref().map(|g| g.anti_affinity_group.as_str()),
            Some("ha=a")
        );
        // Karmada sets groups on ResourceBindings only.
        assert_eq!(
            workload_affinity_groups(&template(None, "a"), &policy),
            None
        );
        // A relabelled template moves its binding to the new group.
        let mut existing = ResourceBindingSpec {
            workload_affinity_groups: groups,
            ..ResourceBindingSpec::default()
        };
        let desired = ResourceBindingSpec {
            workload_affinity_groups: workload_affinity_groups(
                &template(Some("shop"), "b"),
                &policy,
            ),
            ..ResourceBindingSpec::default()
        };
        refresh_spec(&mut existing, desired);
        assert_eq!(
            existing
                .workload_affinity_groups
                .map(|g| g.anti_affinity_group),
            Some("ha=b".to_owned())
        );
    }
}
