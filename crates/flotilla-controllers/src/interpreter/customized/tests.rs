use futures::FutureExt as _;
use serde_json::json;

use super::*;

fn customization(name: &str, kind: &str, rules: Value) -> ResourceInterpreterCustomization {
    serde_json::from_value(json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {"target": {"apiVersion": "apps/v1", "kind": kind}, "customizations": rules},
    }))
    .expect("customization")
}

fn deployment(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {
                "serviceAccountName": "runner",
                "containers": [{"name": "c", "resources": {"limits": {"cpu": "100m"}}}],
            }},
        },
        "status": {"replicas": replicas, "readyReplicas": replicas},
    })
}

fn replicas_plus(n: i64) -> Value {
    json!({"replicaResource": {"luaScript": format!(
        "function GetReplicas(obj) return obj.spec.replicas + {n}, nil end"
    )}})
}

#[tokio::test]
async fn without_customizations_every_operation_falls_back_to_the_native_rules() {
    let customizations = Customizations::none();
    let object = deployment(3);
    assert!(customizations.interpret_replica(&object).await.is_none());
    assert!(customizations.revise_replica(&object, 1).is_none());
    assert!(
        customizations
            .revise_replica_by_webhook(&object, 1)
            .await
            .is_none()
    );
    assert!(customizations.retain(&object, &object).await.is_none());
    assert!(customizations.reflect_status(&object).await.is_none());
    assert!(customizations.interpret_health(&object).await.is_none());
    assert!(
        customizations
            .aggregate_status(&object, &[])
            .await
            .is_none()
    );
    assert!(customizations.dependencies(&object).await.is_none());
}

#[tokio::test]
async fn the_first_customization_by_name_supplies_an_operation() {
    let customizations = Customizations::none();
    customizations.set(&[
        customization("b", "Deployment", replicas_plus(10)),
        customization("a", "Deployment", replicas_plus(1)),
    ]);
    let interpreted = customizations
        .interpret_replica(&deployment(3))
        .await
        .expect("customized")
        .expect("runs");
    assert_eq!(interpreted.replicas, 4);
    assert_eq!(interpreted.requirements, None);
    // Another kind, or an operation nobody scripted, stays native.
    let mut stateful = deployment(3);
    stateful["kind"] = json!("StatefulSet");
    assert!(customizations.interpret_replica(&stateful).await.is_none());
    assert!(
        customizations
            .retain(&deployment(3), &deployment(3))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn requirements_decode_into_the_binding_shape() {
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"replicaResource": {"luaScript": "
function GetReplicas(obj)
  requirement = {}
  requirement.nodeClaim = {}
  requirement.resourceRequest = obj.spec.template.spec.containers[1].resources.limits
  return obj.spec.replicas, requirement
end"}}),
    )]);
    let interpreted = customizations
        .interpret_replica(&deployment(2))
        .await
        .expect("customized")
        .expect("runs");
    assert_eq!(interpreted.replicas, 2);
    let requirements = interpreted.requirements.expect("requirements");
    assert_eq!(requirements.node_claim, None);
    assert_eq!(
        serde_json::to_value(&requirements.resource_request).expect("json"),
        json!({"cpu": "100m"})
    );
}

#[tokio::test]
async fn a_failing_script_is_an_error_naming_the_operation_not_a_fallback() {
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"healthInterpretation": {"luaScript": "function InterpretHealth(obj) return obj.status.nothing.here end"}}),
    )]);
    let error = customizations
        .interpret_health(&deployment(1))
        .await
        .expect("customized")
        .expect_err("fails");
    assert!(
        error.to_string().starts_with(
            "InterpretHealth of Deployment default/web: ResourceInterpreterCustomization script: "
        ),
        "{error}"
    );
}

#[tokio::test]
async fn dependency_scripts_of_every_customization_are_merged_and_sorted() {
    let service_account = json!({"dependencyInterpretation": {"luaScript": "
function GetDependencies(obj)
  return {{apiVersion = 'v1', kind = 'ServiceAccount', namespace = obj.metadata.namespace,
           name = obj.spec.template.spec.serviceAccountName}}
end"}});
    let config_map = json!({"dependencyInterpretation": {"luaScript": "
function GetDependencies(obj)
  return {{apiVersion = 'v1', kind = 'ConfigMap', namespace = 'default', name = 'settings'},
          {apiVersion = 'v1', kind = 'ServiceAccount', namespace = 'default', name = 'runner'}}
end"}});
    let customizations = Customizations::none();
    customizations.set(&[
        customization("sa", "Deployment", service_account),
        customization("cm", "Deployment", config_map),
    ]);
    let found = customizations
        .dependencies(&deployment(1))
        .await
        .expect("customized")
        .expect("runs");
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|d| (d.kind.as_str(), d.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [("ConfigMap", "settings"), ("ServiceAccount", "runner")]
    );
}

#[tokio::test]
async fn a_dependency_without_a_name_is_refused() {
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"dependencyInterpretation": {"luaScript":
            "function GetDependencies(obj) return {{apiVersion = 'v1', kind = 'Secret'}} end"}}),
    )]);
    let error = customizations
        .dependencies(&deployment(1))
        .await
        .expect("customized")
        .expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("can not leave name and labelSelector all empty"),
        "{error}"
    );
}

#[tokio::test]
async fn a_dependency_may_pick_objects_by_label() {
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"dependencyInterpretation": {"luaScript":
            "function GetDependencies(obj) return {{apiVersion = 'v1', kind = 'Secret', namespace = 'default', labelSelector = {matchLabels = {app = 'web'}}}} end"}}),
    )]);
    let found = customizations
        .dependencies(&deployment(1))
        .await
        .expect("customized")
        .expect("accepted");
    assert_eq!(found.len(), 1);
    let selector = found[0].label_selector.clone().expect("a selector");
    assert_eq!(
        selector.match_labels,
        Some([("app".to_owned(), "web".to_owned())].into())
    );
}

#[tokio::test]
async fn aggregation_returns_the_scripts_status_from_the_items() {
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"statusAggregation": {"luaScript": "
function AggregateStatus(obj, items)
  obj.status = {}
  obj.status.replicas = 0
  for i = 1, #items do
    obj.status.replicas = obj.status.replicas + items[i].status.replicas
  end
  obj.status.clusters = #items
  return obj
end"}}),
    )]);
    let item = |cluster: &str, replicas: i64| AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        status: Some(flotilla_api::karmada::JsonText::new(
            &json!({"replicas": replicas}),
        )),
        applied: true,
        ..AggregatedStatusItem::default()
    };
    let status = customizations
        .aggregate_status(&deployment(5), &[item("a", 2), item("b", 3)])
        .await
        .expect("customized")
        .expect("runs");
    assert_eq!(status, json!({"replicas": 5, "clusters": 2}));
}

#[tokio::test]
async fn a_script_comes_before_a_matching_webhook_whose_failure_is_the_operations() {
    // Karmada's chain: the customization's script, else the webhook, else the native rules.
    let customizations = Customizations::none();
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"healthInterpretation": {"luaScript": "function InterpretHealth(obj) return false end"}}),
    )]);
    let configuration: flotilla_api::karmada::ResourceInterpreterWebhookConfiguration =
        serde_json::from_value(json!({
            "metadata": {"name": "examples"},
            "webhooks": [{
                "name": "hooks",
                // Nothing listens on port 1.
                "clientConfig": {"url": "https://127.0.0.1:1/hooks"},
                "rules": [{"operations": ["InterpretHealth", "InterpretReplica", "ReviseReplica"],
                           "apiGroups": ["apps"], "apiVersions": ["v1"], "kinds": ["Deployment"]}],
                "interpreterContextVersions": ["v1alpha1"],
                "timeoutSeconds": 2,
            }],
        }))
        .expect("configuration");
    customizations.webhooks().set(&[configuration]);
    let healthy = customizations
        .interpret_health(&deployment(1))
        .await
        .expect("the script answers the operation")
        .expect("the script runs");
    assert!(!healthy, "the script's answer, the webhook is not called");
    // An operation no script covers is the webhook's, and its failure is the operation's.
    let error = customizations
        .interpret_replica(&deployment(1))
        .await
        .expect("the webhook answers the operation")
        .expect_err("the call fails");
    assert!(
        error
            .to_string()
            .contains("failed calling webhook \"examples/hooks\""),
        "{error}"
    );
    assert!(customizations.webhook_revises(&deployment(1)));
    assert!(customizations.revise_replica(&deployment(1), 2).is_none());
    // A script for ReviseReplica takes it from the webhook.
    customizations.set(&[customization(
        "a",
        "Deployment",
        json!({"replicaRevision": {"luaScript":
            "function ReviseReplica(obj, n) obj.spec.replicas = n return obj end"}}),
    )]);
    assert!(!customizations.webhook_revises(&deployment(1)));
    assert!(
        customizations
            .revise_replica_by_webhook(&deployment(1), 2)
            .await
            .is_none()
    );
    let revised = customizations
        .revise_replica(&deployment(1), 2)
        .expect("the script")
        .expect("runs");
    assert_eq!(revised["spec"]["replicas"], 2);
    // Another operation nobody interprets stays native.
    assert!(
        customizations
            .reflect_status(&deployment(1))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn a_component_script_gives_the_components_of_a_multi_template_kind() {
    let customizations = Customizations::none();
    assert!(
        customizations
            .interpret_components(&deployment(1))
            .now_or_never()
            .expect("no webhook to wait for")
            .is_none()
    );
    customizations.set(&[customization(
        "components",
        "Deployment",
        json!({"componentResource": {"luaScript": r#"
            local kube = require("kube")
            function GetComponents(obj)
              return {
                {name = "main", replicas = obj.spec.replicas,
                 replicaRequirements = kube.accuratePodRequirements(obj.spec.template)},
                {name = "sidecar", replicas = math.ceil(obj.spec.replicas / 2)},
              }
            end
        "#}}),
    )]);
    let components = customizations
        .interpret_components(&deployment(3))
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("a component script")
        .expect("components");
    assert_eq!(components.len(), 2);
    assert_eq!(
        (components[0].name.as_str(), components[0].replicas),
        ("main", 3)
    );
    assert_eq!(
        components[0].replica_requirements.as_ref().unwrap()["resourceRequest"],
        json!({"cpu": "100m"})
    );
    assert_eq!(
        (components[1].name.as_str(), components[1].replicas),
        ("sidecar", 2)
    );
    assert!(components[1].replica_requirements.is_none());

    customizations.set(&[customization(
        "bad",
        "Deployment",
        json!({"componentResource": {"luaScript": "function GetComponents(obj) return 3 end"}}),
    )]);
    let error = customizations
        .interpret_components(&deployment(3))
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("a component script")
        .unwrap_err();
    assert!(error.to_string().contains("InterpretComponent"), "{error}");
}

#[test]
fn a_health_hook_is_native_bundled_or_a_customizations() {
    let customizations = Customizations::none();
    assert!(
        customizations.health_hook("apps/v1", "Deployment"),
        "native"
    );
    assert!(
        customizations.health_hook("kubeflow.org/v1", "TFJob"),
        "bundled"
    );
    assert!(!customizations.health_hook("apps/v1", "ControllerRevision"));
    let mut scripted = customization(
        "a",
        "ControllerRevision",
        json!({"healthInterpretation": {"luaScript": "function InterpretHealth(obj) return true end"}}),
    );
    scripted.spec.target.api_version = "apps/v1".into();
    customizations.set(&[scripted]);
    assert!(
        customizations.health_hook("apps/v1", "ControllerRevision"),
        "customized"
    );
}
