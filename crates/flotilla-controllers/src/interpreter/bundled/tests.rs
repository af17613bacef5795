use flotilla_api::karmada::{AggregatedStatusItem, JsonText};
use futures::FutureExt as _;
use serde_json::json;

use super::*;
use crate::interpreter::Customizations;

mod argo_and_flux;
mod kubeflow;
mod ray;
mod volcano;

pub(super) fn item(cluster: &str, status: Value) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.into(),
        status: Some(JsonText::new(&status)),
        applied: true,
        ..AggregatedStatusItem::default()
    }
}

pub(super) fn pod_template(cpu: &str, config_map: &str) -> Value {
    json!({"spec": {
        "containers": [{
            "name": "trainer",
            "image": "pytorch/pytorch:2.4",
            "resources": {"requests": {"cpu": cpu, "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
            "envFrom": [{"configMapRef": {"name": config_map}}],
        }],
    }})
}

// Shared by the group tests (`gitops`, `kruise`): one operation through the bundled rules,
// expected to be there and to succeed.

/// `object` with `status` as its status.
pub(super) fn with_status(object: &Value, status: Value) -> Value {
    let mut observed = object.clone();
    observed["status"] = status;
    observed
}

pub(super) async fn health(observed: &Value) -> bool {
    Customizations::none()
        .interpret_health(observed)
        .await
        .expect("bundled")
        .expect("interprets")
}

pub(super) async fn aggregate(template: &Value, items: &[AggregatedStatusItem]) -> Value {
    Customizations::none()
        .aggregate_status(template, items)
        .await
        .expect("bundled")
        .expect("aggregates")
}

pub(super) async fn reflect(observed: &Value) -> Value {
    Customizations::none()
        .reflect_status(observed)
        .await
        .expect("bundled")
        .expect("reflects")
}

pub(super) async fn retain(desired: &Value, observed: &Value) -> Value {
    Customizations::none()
        .retain(desired, observed)
        .await
        .expect("bundled")
        .expect("retains")
}

/// The references as (kind, namespace, name).
pub(super) async fn dependencies(object: &Value) -> Vec<(String, String, String)> {
    Customizations::none()
        .dependencies(object)
        .await
        .expect("bundled")
        .expect("dependencies")
        .into_iter()
        .map(|r| (r.kind, r.namespace, r.name))
        .collect()
}

pub(super) fn pytorch_job() -> Value {
    json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"pytorchReplicaSpecs": {
            "Worker": {"replicas": 3, "template": pod_template("2", "worker-env")},
            "Master": {"template": pod_template("1", "master-env")},
        }},
    })
}

#[test]
fn every_bundled_customization_parses_and_its_scripts_compile() {
    let parsed = customizations();
    assert_eq!(parsed.len(), all_files().count(), "every file parses");
    for customization in &parsed {
        for operation in Operation::ALL {
            if let Some(script) = customization.spec.customizations.script(operation) {
                flotilla_api::karmada::lua::check_script(script).unwrap_or_else(|e| {
                    panic!(
                        "{:?} {}: {e}",
                        customization.metadata.name,
                        operation.name()
                    )
                });
            }
        }
    }
    // One kind per file, none twice.
    assert_eq!(kinds().len(), all_files().count());
    for kind in [
        ("argoproj.io/v1alpha1", "Workflow"),
        ("kubeflow.org/v1", "Notebook"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("kubeflow.org/v1", "TFJob"),
        ("kubeflow.org/v2beta1", "MPIJob"),
        ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
        ("ray.io/v1", "RayCluster"),
        ("ray.io/v1", "RayJob"),
        ("source.toolkit.fluxcd.io/v1", "GitRepository"),
        ("batch.volcano.sh/v1alpha1", "Job"),
    ] {
        assert!(
            kinds().contains(&(kind.0.to_owned(), kind.1.to_owned())),
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn a_users_customization_replaces_the_bundled_script_for_its_operations() {
    let customizations = Customizations::none();
    let custom: ResourceInterpreterCustomization = serde_json::from_value(json!({
        "metadata": {"name": "mine"},
        "spec": {"target": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"},
                 "customizations": {"healthInterpretation": {"luaScript":
                     "function InterpretHealth(obj) return true end"}}},
    }))
    .expect("customization");
    customizations.set(&[custom]);
    let healthy = customizations
        .interpret_health(&pytorch_job())
        .await
        .expect("customized")
        .expect("interprets");
    assert!(
        healthy,
        "the user's script, not the bundled one (no conditions)"
    );
    // The operations the user did not script stay bundled.
    assert!(
        customizations
            .interpret_components(&pytorch_job())
            .now_or_never()
            .expect("no webhook to wait for")
            .is_some()
    );
}

#[test]
fn bundled_health_rules_count_as_health_hooks() {
    use crate::interpreter::health::has_rule;
    assert!(has_rule("kubeflow.org/v1", "PyTorchJob"));
    assert!(has_rule("apps.kruise.io/v1alpha1", "CloneSet"));
    assert!(
        !has_rule("apps.kruise.io/v1alpha1", "AdvancedCronJob"),
        "no health rule"
    );
    assert!(!has_rule("example.io/v1", "Workload"));
    assert!(interprets(
        "kubeflow.org/v1",
        "PyTorchJob",
        Operation::InterpretDependency
    ));
    assert!(!interprets(
        "kubeflow.org/v2beta1",
        "MPIJob",
        Operation::InterpretDependency
    ));
}
