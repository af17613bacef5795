//! The attached bindings' bookkeeping: the policy they inherit from the bindings requiring
//! them, their `requiredBy` entries, the `depended-by` label, and the owner check.

use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_api::karmada::names::{binding_name, fnv1a_32, safe_encode};
use flotilla_api::karmada::{BindingSnapshot, ResourceBinding, ResourceBindingSpec};
use flotilla_api::validation::karmada::{CPP_PERMANENT_ID, PP_PERMANENT_ID};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::DEPENDED_BY_PREFIX;
use crate::detector::build::{RB_FINALIZER, owner_reference, resource_reference};

/// The policy an unclaimed attached binding inherits from the bindings requiring it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InheritedPolicy {
    /// `Overwrite` when any requiring binding wants it, else `Abort` (empty counts as `Abort`).
    pub conflict_resolution: String,
    /// True when any requiring binding preserves its resources (unset counts as false).
    pub preserve_resources_on_deletion: bool,
    /// Both `Overwrite` and `Abort` were asked for.
    pub conflict_resolution_conflicted: bool,
    /// Both preserving and not preserving were asked for.
    pub preserve_conflicted: bool,
}

impl InheritedPolicy {
    /// Resolves the policy from the specs of the requiring bindings.
    pub fn resolve<'a>(requiring: impl IntoIterator<Item = &'a ResourceBindingSpec>) -> Self {
        let (mut overwrite, mut abort, mut preserve, mut discard) = (false, false, false, false);
        for spec in requiring {
            if spec.conflict_resolution == "Overwrite" {
                overwrite = true;
            } else {
                abort = true;
            }
            if spec.preserve_resources_on_deletion == Some(true) {
                preserve = true;
            } else {
                discard = true;
            }
        }
        InheritedPolicy {
            conflict_resolution: if overwrite { "Overwrite" } else { "Abort" }.to_owned(),
            preserve_resources_on_deletion: preserve,
            conflict_resolution_conflicted: overwrite && abort,
            preserve_conflicted: preserve && discard,
        }
    }

    /// The note of the `DependencyPolicyConflict` event, when the requiring bindings disagree.
    pub fn conflict_note(&self) -> Option<String> {
        let mut reasons = Vec::new();
        if self.conflict_resolution_conflicted {
            reasons.push("ConflictResolution conflicted (Overwrite vs Abort)");
        }
        if self.preserve_conflicted {
            reasons.push("PreserveResourcesOnDeletion conflicted (true vs false)");
        }
        (!reasons.is_empty()).then(|| {
            format!(
                "Dependency policy conflict detected: {}.",
                reasons.join("; ")
            )
        })
    }
}

/// Sets on `spec` of an attached binding the policy inherited from `requiring` (the specs of
/// the bindings in its `requiredBy`), unless a policy claims it (it has a placement). Without
/// requiring bindings the fields are cleared. Returns the resolved policy, if any.
pub fn inherit_policy<'a>(
    spec: &mut ResourceBindingSpec,
    requiring: impl IntoIterator<Item = &'a ResourceBindingSpec>,
) -> Option<InheritedPolicy> {
    if spec.placement.is_some() {
        return None;
    }
    let requiring: Vec<&ResourceBindingSpec> = requiring.into_iter().collect();
    if requiring.is_empty() {
        spec.conflict_resolution = String::new();
        spec.preserve_resources_on_deletion = None;
        return None;
    }
    let policy = InheritedPolicy::resolve(requiring);
    spec.conflict_resolution = policy.conflict_resolution.clone();
    spec.preserve_resources_on_deletion = Some(policy.preserve_resources_on_deletion);
    Some(policy)
}

/// Whether `existing` is controlled by another object than the one of UID `uid` (the
/// dependency was deleted and created again; the old binding awaits garbage collection).
pub fn controlled_by_other(existing: &ResourceBinding, uid: &str) -> bool {
    existing
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
        .is_some_and(|o| o.uid != uid)
}

/// `resourcebinding.karmada.io/depended-by-<SafeEncode(fnv32a("<ns>/<name>"))>`.
pub fn depended_by_label(namespace: &str, name: &str) -> String {
    let hash = fnv1a_32(format!("{namespace}/{name}").as_bytes());
    format!("{DEPENDED_BY_PREFIX}{}", safe_encode(&hash.to_string()))
}

/// `spec` with the `requiredBy` entry of `(namespace, name)` set to `clusters` (removed when
/// `None`), entries sorted by namespace and name.
pub fn with_required_by(
    spec: &ResourceBindingSpec,
    namespace: &str,
    name: &str,
    clusters: Option<&[flotilla_api::karmada::TargetCluster]>,
) -> Vec<BindingSnapshot> {
    let mut entries: Vec<BindingSnapshot> = spec
        .required_by
        .iter()
        .filter(|e| !(e.namespace == namespace && e.name == name))
        .cloned()
        .collect();
    if let Some(clusters) = clusters {
        entries.push(BindingSnapshot {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            clusters: clusters.to_vec(),
        });
    }
    entries.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    entries
}

/// A new attached binding `<name>-<kind>` of `object` (a dependency, in its namespace) for
/// `independent`: owned by the object, labelled with the `depended-by` label `label` = `id`,
/// with the binding controller's finalizer and `independent`'s `requiredBy` entry. The
/// inherited policy is left to [`inherit_policy`].
pub fn new_attached(
    independent: &ResourceBinding,
    object: &Value,
    label: &str,
    id: &str,
) -> ResourceBinding {
    let resource = resource_reference(object);
    let mut spec = ResourceBindingSpec::default();
    spec.required_by = with_required_by(
        &spec,
        independent.metadata.namespace.as_deref().unwrap_or(""),
        independent.metadata.name.as_deref().unwrap_or(""),
        Some(&independent.spec.clusters),
    );
    ResourceBinding {
        metadata: ObjectMeta {
            name: Some(binding_name(&resource.kind, &resource.name)),
            namespace: Some(resource.namespace.clone()),
            labels: Some([(label.to_owned(), id.to_owned())].into()),
            owner_references: Some(vec![owner_reference(object)]),
            finalizers: Some(vec![RB_FINALIZER.to_owned()]),
            ..ObjectMeta::default()
        },
        spec: ResourceBindingSpec { resource, ..spec },
        ..ResourceBinding::default()
    }
}

/// `existing` attached binding updated for `independent`: the `depended-by` label `label` =
/// `id` added (other labels kept), `independent`'s `requiredBy` entry set to its clusters (the
/// other entries kept) and `spec.resource` pointing at `object` as it is now. The inherited
/// policy is left to [`inherit_policy`]; the owner check to [`controlled_by_other`].
pub fn refresh_attached(
    existing: &ResourceBinding,
    independent: &ResourceBinding,
    object: &Value,
    label: &str,
    id: &str,
) -> ResourceBinding {
    let mut updated = existing.clone();
    updated
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(label.to_owned(), id.to_owned());
    updated.spec.required_by = with_required_by(
        &existing.spec,
        independent.metadata.namespace.as_deref().unwrap_or(""),
        independent.metadata.name.as_deref().unwrap_or(""),
        Some(&independent.spec.clusters),
    );
    updated.spec.resource = resource_reference(object);
    updated
}

/// The attached bindings in `bindings` of `namespace` labelled for an independent binding
/// (`label`) that it no longer needs (not in `keep`, by name).
pub fn stale_attached(
    bindings: impl IntoIterator<Item = Arc<ResourceBinding>>,
    namespace: &str,
    label: &str,
    keep: &BTreeSet<String>,
) -> Vec<Arc<ResourceBinding>> {
    bindings
        .into_iter()
        .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
        .filter(|b| {
            b.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(label))
        })
        .filter(|b| !keep.contains(b.metadata.name.as_deref().unwrap_or("")))
        .collect()
}

/// `attached` once the independent binding `namespace/name` (its `depended-by` label `label`)
/// withdraws: its label and every `requiredBy` entry of it removed and, unless a policy claims
/// it, the policy inherited again from the remaining requiring bindings (`requiring` looks
/// them up; those gone are left out). `None` when nobody requires it any more and no policy
/// claims it (placement or a policy's permanent id): it is deleted (Karmada keeps it, empty).
pub fn detach(
    attached: &ResourceBinding,
    namespace: &str,
    name: &str,
    label: &str,
    requiring: impl Fn(&BindingSnapshot) -> Option<Arc<ResourceBinding>>,
) -> Option<ResourceBinding> {
    let required_by = with_required_by(&attached.spec, namespace, name, None);
    let claimed =
        attached.spec.placement.is_some()
            || attached.metadata.labels.as_ref().is_some_and(|l| {
                l.contains_key(PP_PERMANENT_ID) || l.contains_key(CPP_PERMANENT_ID)
            });
    if required_by.is_empty() && !claimed {
        return None;
    }
    let mut updated = attached.clone();
    if let Some(labels) = updated.metadata.labels.as_mut() {
        labels.remove(label);
    }
    let requiring: Vec<Arc<ResourceBinding>> = required_by.iter().filter_map(requiring).collect();
    updated.spec.required_by = required_by;
    inherit_policy(&mut updated.spec, requiring.iter().map(|b| &b.spec));
    Some(updated)
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::TargetCluster;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::json;

    use super::*;
    use crate::detector::build::owner_reference;

    #[test]
    fn depended_by_labels_hash_the_independent_binding() {
        let label = depended_by_label("default", "web-deployment");
        assert!(label.starts_with(DEPENDED_BY_PREFIX));
        let suffix = &label[DEPENDED_BY_PREFIX.len()..];
        let hash = fnv1a_32(b"default/web-deployment").to_string();
        assert_eq!(suffix, safe_encode(&hash));
        assert_ne!(label, depended_by_label("default", "api-deployment"));
    }

    fn requiring(conflict_resolution: &str, preserve: Option<bool>) -> ResourceBindingSpec {
        ResourceBindingSpec {
            conflict_resolution: conflict_resolution.to_owned(),
            preserve_resources_on_deletion: preserve,
            ..ResourceBindingSpec::default()
        }
    }

    #[test]
    fn attached_bindings_inherit_the_most_protective_policy_of_their_requirers() {
        let a = requiring("Overwrite", Some(true));
        let b = requiring("", None);
        let mut spec = ResourceBindingSpec::default();
        let policy = inherit_policy(&mut spec, [&a, &b]).expect("resolved");
        assert_eq!(spec.conflict_resolution, "Overwrite");
        assert_eq!(spec.preserve_resources_on_deletion, Some(true));
        assert_eq!(
            policy.conflict_note().as_deref(),
            Some(
                "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs \
                 Abort); PreserveResourcesOnDeletion conflicted (true vs false)."
            )
        );
        // A single requirer with defaults: explicit Abort and false, no conflict.
        let policy = inherit_policy(&mut spec, [&b]).expect("resolved");
        assert_eq!(spec.conflict_resolution, "Abort");
        assert_eq!(spec.preserve_resources_on_deletion, Some(false));
        assert_eq!(policy.conflict_note(), None);
        // Only the preserve flag disagrees.
        let c = requiring("Abort", Some(true));
        let policy = InheritedPolicy::resolve([&b, &c]);
        assert_eq!(
            policy.conflict_note().as_deref(),
            Some(
                "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted \
                 (true vs false)."
            )
        );
        // Nobody requires it any more: the inherited fields are cleared.
        assert_eq!(inherit_policy(&mut spec, []), None);
        assert_eq!(spec.conflict_resolution, "");
        assert_eq!(spec.preserve_resources_on_deletion, None);
    }

    #[test]
    fn attached_bindings_claimed_by_a_policy_keep_its_settings() {
        let mut spec = ResourceBindingSpec {
            placement: Some(Default::default()),
            conflict_resolution: "Abort".to_owned(),
            preserve_resources_on_deletion: Some(false),
            ..ResourceBindingSpec::default()
        };
        let a = requiring("Overwrite", Some(true));
        assert_eq!(inherit_policy(&mut spec, [&a]), None);
        assert_eq!(spec.conflict_resolution, "Abort");
        assert_eq!(spec.preserve_resources_on_deletion, Some(false));
    }

    #[test]
    fn attached_bindings_of_a_recreated_dependency_are_not_taken_over() {
        let owned = |uid: &str| ResourceBinding {
            metadata: ObjectMeta {
                owner_references: Some(vec![owner_reference(&json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "settings", "uid": uid}}))]),
                ..ObjectMeta::default()
            },
            ..ResourceBinding::default()
        };
        assert!(!controlled_by_other(&owned("u1"), "u1"));
        assert!(controlled_by_other(&owned("u1"), "u2"));
        assert!(!controlled_by_other(&ResourceBinding::default(), "u2"));
    }

    #[test]
    fn required_by_entries_are_replaced_and_removed_per_independent_binding() {
        let mut spec = ResourceBindingSpec::default();
        spec.required_by =
            with_required_by(&spec, "default", "b", Some(&[TargetCluster::new("m1", 1)]));
        spec.required_by =
            with_required_by(&spec, "default", "a", Some(&[TargetCluster::new("m2", 1)]));
        spec.required_by =
            with_required_by(&spec, "default", "b", Some(&[TargetCluster::new("m3", 2)]));
        let entries: Vec<(&str, Vec<&str>)> = spec
            .required_by
            .iter()
            .map(|e| {
                (
                    e.name.as_str(),
                    e.clusters.iter().map(|c| c.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(entries, vec![("a", vec!["m2"]), ("b", vec!["m3"])]);
        let removed = with_required_by(&spec, "default", "a", None);
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].name, "b");
    }

    mod karmada_attached;
    mod karmada_detach;
}
