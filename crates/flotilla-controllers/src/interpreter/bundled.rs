//! Karmada's bundled third-party interpretation (`pkg/resourceinterpreter/default/thirdparty`):
//! ResourceInterpreterCustomizations shipped inside the binary for kinds of well-known
//! operators, consulted after the user's customizations and interpreter webhooks and before the
//! native interpreter (Karmada's `thirdpartyInterpreter`). Karmada writes them in Lua; so does
//! Flotilla, in its own scripts (`bundled/*.yaml`) that follow the same behaviour, run by the
//! same Lua runtime as the user's customizations. They are not API objects: `kubectl get
//! resourceinterpretercustomizations` does not list them, and a customization of the same kind
//! and operation replaces them.

use std::sync::{Arc, LazyLock};

use flotilla_api::karmada::{Operation, ResourceInterpreterCustomization};
use serde_json::Value;

use super::customized::{Index, Rules, build_index};

mod gitops;
mod kruise;
mod ml;

/// The bundled customizations: file name and text (`gitops.rs`, `kruise.rs` and `ml.rs` list more).
const FILES: &[(&str, &str)] = &[
    (
        "argo-workflow.yaml",
        include_str!("bundled/argo-workflow.yaml"),
    ),
    (
        "flux-gitrepository.yaml",
        include_str!("bundled/flux-gitrepository.yaml"),
    ),
    (
        "flux-kustomization.yaml",
        include_str!("bundled/flux-kustomization.yaml"),
    ),
    (
        "kubeflow-mpijob.yaml",
        include_str!("bundled/kubeflow-mpijob.yaml"),
    ),
    (
        "kubeflow-notebook.yaml",
        include_str!("bundled/kubeflow-notebook.yaml"),
    ),
    (
        "kubeflow-pytorchjob.yaml",
        include_str!("bundled/kubeflow-pytorchjob.yaml"),
    ),
    (
        "kubeflow-tfjob.yaml",
        include_str!("bundled/kubeflow-tfjob.yaml"),
    ),
    (
        "ray-raycluster.yaml",
        include_str!("bundled/ray-raycluster.yaml"),
    ),
    ("ray-rayjob.yaml", include_str!("bundled/ray-rayjob.yaml")),
    ("volcano-job.yaml", include_str!("bundled/volcano-job.yaml")),
];

/// The parsed customizations (a file that does not parse is logged and left out; the tests
/// parse every one).
fn customizations() -> Vec<Arc<ResourceInterpreterCustomization>> {
    all_files()
        .filter_map(|(file, text)| {
            match yaml_serde::from_str::<ResourceInterpreterCustomization>(text) {
                Ok(customization) => Some(Arc::new(customization)),
                Err(error) => {
                    tracing::error!(file, %error, "a bundled interpreter customization does not parse");
                    None
                }
            }
        })
        .collect()
}

/// Every bundled file.
fn all_files() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    FILES
        .iter()
        .chain(gitops::FILES)
        .chain(kruise::FILES)
        .chain(ml::FILES)
}

static INDEX: LazyLock<Index> = LazyLock::new(|| build_index(&customizations()));

/// The bundled rules of `object`'s kind. Asked for every object every controller interprets:
/// a scan of the few kinds, without allocating.
fn rules_of(object: &Value) -> Option<&'static Rules> {
    let (api_version, kind) = super::gvk_of(object);
    INDEX
        .iter()
        .find(|((v, k), _)| v == api_version && k == kind)
        .map(|(_, rules)| rules)
}

/// Whether a bundled rule interprets `operation` for the kind (part of Karmada's `HookEnabled`).
pub fn interprets(api_version: &str, kind: &str, operation: Operation) -> bool {
    INDEX.iter().any(|((v, k), rules)| {
        v == api_version
            && k == kind
            && (rules.single.contains_key(&operation)
                || (operation == Operation::InterpretDependency && !rules.dependencies.is_empty()))
    })
}

/// The bundled script for `operation` on `object`'s kind.
pub fn script(object: &Value, operation: Operation) -> Option<Arc<str>> {
    rules_of(object).and_then(|rules| rules.single.get(&operation).cloned())
}

/// The bundled `InterpretDependency` scripts for `object`'s kind (`None` without one).
pub fn dependency_scripts(object: &Value) -> Option<Vec<Arc<str>>> {
    rules_of(object)
        .filter(|rules| !rules.dependencies.is_empty())
        .map(|rules| rules.dependencies.clone())
}

/// The kinds with bundled rules, as (`apiVersion`, `kind`), sorted.
pub fn kinds() -> Vec<(String, String)> {
    let mut kinds: Vec<(String, String)> = INDEX.keys().cloned().collect();
    kinds.sort();
    kinds
}

#[cfg(test)]
mod tests;
