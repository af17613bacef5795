//! Policies that select only what is never propagated: a PropagationPolicy living in a skipped
//! namespace, or a ClusterPropagationPolicy's selector naming one. Karmada's detector ignores
//! such objects without a word; Flotilla says so once per policy generation, with a Warning
//! Event on the policy (reason [`REASON`]), so that `kubectl describe` explains the silence.

use flotilla_api::karmada::PropagationSpec;
use flotilla_runtime::events::EventType;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{Detector, PolicyKey, is_skipped_namespace};

/// The Event's reason (a Flotilla extension: Karmada records nothing).
pub const REASON: &str = "SkippedNamespace";

const WHY: &str = "the karmada-system, karmada-cluster, karmada-es-* and kube-* namespaces and their objects are never propagated";

/// What a policy selects that is never propagated, or `None` when it selects nothing of the
/// kind. `policy_namespace` is a PropagationPolicy's namespace (`None` for a cluster policy).
pub fn skipped_note(policy_namespace: Option<&str>, spec: &PropagationSpec) -> Option<String> {
    if let Some(namespace) = policy_namespace {
        return is_skipped_namespace(namespace)
            .then(|| format!("namespace \"{namespace}\" is skipped: {WHY}"));
    }
    let found: Vec<String> = spec
        .resource_selectors
        .iter()
        .enumerate()
        .filter_map(|(i, selector)| {
            if !selector.namespace.is_empty() && is_skipped_namespace(&selector.namespace) {
                return Some(format!(
                    "resourceSelectors[{i}].namespace \"{}\" is skipped",
                    selector.namespace
                ));
            }
            let namespace_kind = selector.api_version == "v1" && selector.kind == "Namespace";
            (namespace_kind && !selector.name.is_empty() && is_skipped_namespace(&selector.name))
                .then(|| {
                    format!(
                        "resourceSelectors[{i}] selects the skipped namespace \"{}\"",
                        selector.name
                    )
                })
        })
        .collect();
    (!found.is_empty()).then(|| format!("{}: {WHY}", found.join("; ")))
}

impl Detector {
    /// Records the policy's [`skipped_note`], once per generation; forgets policies that
    /// select nothing skipped (or are gone: `meta` `None`).
    pub(super) fn check_skipped(
        &self,
        key: PolicyKey,
        meta: Option<&ObjectMeta>,
        spec: &PropagationSpec,
    ) {
        let namespace = match &key {
            PolicyKey::Namespaced { namespace, .. } => Some(namespace.as_str()),
            PolicyKey::Cluster { .. } => None,
        };
        let (Some(meta), Some(note)) = (meta, skipped_note(namespace, spec)) else {
            self.skipped_warned.lock().remove(&key);
            return;
        };
        let generation = meta.generation.unwrap_or_default();
        if self.skipped_warned.lock().insert(key.clone(), generation) == Some(generation) {
            return;
        }
        let (api_version, kind) = match &key {
            PolicyKey::Namespaced { .. } => ("policy.karmada.io/v1alpha1", "PropagationPolicy"),
            PolicyKey::Cluster { .. } => ("policy.karmada.io/v1alpha1", "ClusterPropagationPolicy"),
        };
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
            namespace: namespace.map(str::to_owned),
            name: meta.name.clone(),
            uid: meta.uid.clone(),
            ..Default::default()
        };
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            recorder
                .note(&reference, EventType::Warning, REASON, "ApplyPolicy", note)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::{PropagationSpec, ResourceSelector};

    use super::skipped_note;

    fn selector(api_version: &str, kind: &str, namespace: &str, name: &str) -> ResourceSelector {
        ResourceSelector {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            label_selector: None,
        }
    }

    fn spec(selectors: Vec<ResourceSelector>) -> PropagationSpec {
        PropagationSpec {
            resource_selectors: selectors,
            ..PropagationSpec::default()
        }
    }

    #[test]
    fn a_policy_in_a_skipped_namespace_is_explained() {
        let any = spec(vec![selector("v1", "ConfigMap", "", "cfg")]);
        for namespace in [
            "karmada-system",
            "karmada-cluster",
            "karmada-es-m1",
            "kube-system",
        ] {
            assert_eq!(
                skipped_note(Some(namespace), &any).as_deref(),
                Some(
                    format!(
                        "namespace \"{namespace}\" is skipped: the karmada-system, karmada-cluster, karmada-es-* and kube-* namespaces and their objects are never propagated"
                    )
                    .as_str()
                )
            );
        }
        for namespace in ["default", "kubeflow", "karmada"] {
            assert_eq!(skipped_note(Some(namespace), &any), None, "{namespace}");
        }
    }

    #[test]
    fn cluster_policy_selectors_of_skipped_namespaces_are_named() {
        let cpp = spec(vec![
            selector("v1", "ConfigMap", "default", "ok"),
            selector("v1", "ConfigMap", "kube-system", "cfg"),
            selector("v1", "Namespace", "", "karmada-system"),
            selector("v1", "Namespace", "", "team-a"),
            selector("apps/v1", "Deployment", "", ""),
        ]);
        assert_eq!(
            skipped_note(None, &cpp).as_deref(),
            Some(
                "resourceSelectors[1].namespace \"kube-system\" is skipped; resourceSelectors[2] selects the skipped namespace \"karmada-system\": the karmada-system, karmada-cluster, karmada-es-* and kube-* namespaces and their objects are never propagated"
            )
        );
        let fine = spec(vec![selector("v1", "Namespace", "", "team-a")]);
        assert_eq!(skipped_note(None, &fine), None);
    }
}
