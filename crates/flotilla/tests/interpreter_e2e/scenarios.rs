//! The cases. Karmada's scripts are kept as its e2e writes them (they are the inputs users
//! copy); each case also checks something only the script could have produced.

use crate::support::{ControlPlane, await_value, eventually};

/// Namespace `ns` and, when `policy` is given, PropagationPolicy `web` (placement as given)
/// selecting Deployment `web`.
fn namespace_and_policy(ns: &str, placement: &str, propagate_deps: bool) -> String {
    format!(
        "apiVersion: v1
kind: Namespace
metadata:
  name: {ns}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: {ns}
spec:
  propagateDeps: {propagate_deps}
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  placement:
{placement}"
    )
}

/// Karmada's `testhelper.NewDeployment`: 3 replicas of nginx limited to 100m CPU.
fn deployment(ns: &str, replicas: i32, extra_pod_spec: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
{extra_pod_spec}      containers:
      - name: nginx
        image: nginx:1.19.0
        resources:
          limits:
            cpu: 100m
"
    )
}

fn customization(name: &str, rules: &str) -> String {
    format!(
        "apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: {name}
spec:
  target:
    apiVersion: apps/v1
    kind: Deployment
  customizations:
{rules}"
    )
}

/// Indents a Lua script under `<field>: luaScript: |`.
fn rule(field: &str, script: &str) -> String {
    let body: String = script
        .trim_matches('\n')
        .lines()
        .map(|line| format!("        {line}\n"))
        .collect();
    format!("    {field}:\n      luaScript: |\n{body}")
}

/// Creates the customizations, waits as Karmada's suite does for the informers, runs `case`
/// in namespace `ns`, then deletes the namespace and the customizations.
async fn with_customizations<F, Fut>(
    plane: &ControlPlane,
    names_and_rules: &[(&str, String)],
    ns: &str,
    case: F,
) where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for (name, rules) in names_and_rules {
        plane.apply(None, &customization(name, rules)).await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    case().await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
    for (name, _) in names_and_rules {
        plane
            .kubectl(&["delete", "resourceinterpretercustomization", name])
            .await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

const ONE_CLUSTER: &str = "    clusterAffinity:\n      clusterNames: [us-west-2]\n";

pub async fn webhook_refuses_bad_scripts_and_conflicts(plane: &ControlPlane) {
    let broken = customization(
        "broken",
        &rule(
            "healthInterpretation",
            "function InterpretHealth(observedObj)\n  return observedObj.status ==\nend",
        ),
    );
    let path = plane.home.join("broken.yaml");
    std::fs::write(&path, broken).expect("write");
    let error = plane
        .try_kubectl(&["apply", "-f", &path.to_string_lossy()])
        .await
        .expect_err("a script that does not load is refused");
    assert!(
        error
            .contains("denied the request: InterpreterOperation(InterpretHealth) Lua script error"),
        "{error}"
    );
    let retain = rule(
        "retention",
        "function Retain(desiredObj, observedObj)\n  return desiredObj\nend",
    );
    plane.apply(None, &customization("first", &retain)).await;
    let path = plane.home.join("second.yaml");
    std::fs::write(&path, customization("second", &retain)).expect("write");
    let error = plane
        .try_kubectl(&["apply", "-f", &path.to_string_lossy()])
        .await
        .expect_err("a second Retain for Deployments is refused");
    assert!(
        error.contains(
            "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(first)"
        ),
        "{error}"
    );
    plane
        .kubectl(&["delete", "resourceinterpretercustomization", "first"])
        .await;
}

pub async fn interpret_replica(plane: &ControlPlane) {
    let ns = "ric-replica";
    let script = "
function GetReplicas(desiredObj)
  replica = desiredObj.spec.replicas + 1
  requirement = {}
  requirement.nodeClaim = {}
  requirement.nodeClaim.nodeSelector = desiredObj.spec.template.spec.nodeSelector
  requirement.nodeClaim.tolerations = desiredObj.spec.template.spec.tolerations
  requirement.resourceRequest = desiredObj.spec.template.spec.containers[1].resources.limits
  return replica, requirement
end";
    let rules = [("ric-replica", rule("replicaResource", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, false))
            .await;
        plane.apply(None, &deployment(ns, 3, "")).await;
        await_value(
            "the binding's replicas and requirements come from GetReplicas",
            "4 {\"namespace\":\"ric-replica\",\"resourceRequest\":{\"cpu\":\"100m\"}}",
            || async {
                plane
                    .get(
                        None,
                        ns,
                        "resourcebinding/web-deployment",
                        "{.spec.replicas} {.spec.replicaRequirements}",
                    )
                    .await
            },
        )
        .await;
        // As Karmada's detector, each interpretation is reported on the template.
        plane
            .await_events(ns, "Deployment", "web", &["GetReplicasSucceed"])
            .await;
    })
    .await;
}

pub async fn revise_replica(plane: &ControlPlane) {
    let ns = "ric-revise";
    let script = "
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica + 1
  return obj
end";
    let placement = "    clusterAffinity:
      clusterNames: [cn-shanghai, us-west-2, eu-central-1]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [cn-shanghai]}
          weight: 1
        - targetCluster: {clusterNames: [us-west-2]}
          weight: 2
        - targetCluster: {clusterNames: [eu-central-1]}
          weight: 3
";
    let rules = [("ric-revise", rule("replicaRevision", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, placement, false))
            .await;
        plane.apply(None, &deployment(ns, 6, "")).await;
        await_value(
            "each member runs its share plus one",
            "cn-shanghai=2\nus-west-2=3\neu-central-1=4",
            || async {
                plane
                    .per_member(ns, "deployment/web", "{.spec.replicas}")
                    .await
            },
        )
        .await;
    })
    .await;
}

pub async fn retain(plane: &ControlPlane) {
    let ns = "ric-retain";
    let script = "
function Retain(desiredObj, observedObj)
  desiredObj.spec.paused = observedObj.spec.paused
  return desiredObj
end";
    let rules = [("ric-retain", rule("retention", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, false))
            .await;
        plane.apply(None, &deployment(ns, 3, "")).await;
        await_value("the member has the Deployment", "3", || async {
            plane
                .get(Some("us-west-2"), ns, "deployment/web", "{.spec.replicas}")
                .await
        })
        .await;
        plane
            .kubectl(&[
                "-n",
                ns,
                "patch",
                "deployment",
                "web",
                "--type=merge",
                "-p",
                r#"{"spec":{"paused":true,"replicas":2}}"#,
            ])
            .await;
        await_value(
            "replicas follow the template, paused stays the member's",
            "2 false",
            || async {
                let got = plane
                    .get(
                        Some("us-west-2"),
                        ns,
                        "deployment/web",
                        "{.spec.replicas} {.spec.paused}",
                    )
                    .await;
                // An unset `paused` prints as nothing.
                if got.ends_with(' ') {
                    format!("{got}false")
                } else {
                    got
                }
            },
        )
        .await;
    })
    .await;
}

pub async fn aggregate_status(plane: &ControlPlane) {
    let ns = "ric-aggregate";
    let script = "
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  if desiredObj.status == nil then
    desiredObj.status = {}
  end
  replicas = 0
  for i = 1, #statusItems do
    if statusItems[i].status ~= nil and statusItems[i].status.replicas ~= nil then
      replicas = replicas + statusItems[i].status.replicas + 1
    end
  end
  desiredObj.status.replicas = replicas
  return desiredObj
end";
    let rules = [("ric-aggregate", rule("statusAggregation", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, false))
            .await;
        plane.apply(None, &deployment(ns, 3, "")).await;
        await_value(
            "the template's status.replicas is the script's",
            "4",
            || async {
                plane
                    .get(None, ns, "deployment/web", "{.status.replicas}")
                    .await
            },
        )
        .await;
    })
    .await;
}

pub async fn interpret_status(plane: &ControlPlane) {
    let ns = "ric-status";
    let script = "
function ReflectStatus (observedObj)
  if observedObj.status == nil then
    return nil
  end
  return observedObj.status
end";
    let rules = [("ric-status", rule("statusReflection", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, false))
            .await;
        plane.apply(None, &deployment(ns, 3, "")).await;
        await_value("the template becomes ready", "3", || async {
            plane
                .get(None, ns, "deployment/web", "{.status.readyReplicas}")
                .await
        })
        .await;
        // The whole member status was reflected (the native rule keeps only some fields).
        eventually("the Work records the member's conditions", || async {
            let work = plane
                .get(
                    None,
                    "karmada-es-us-west-2",
                    "works",
                    "{.items[*].status.manifestStatuses[*].status.conditions[*].type}",
                )
                .await;
            if work.contains("Available") {
                Ok(())
            } else {
                Err(work)
            }
        })
        .await;
    })
    .await;
}

/// `cluster=health` of each entry of the binding's `aggregatedStatus`.
async fn binding_health(plane: &ControlPlane, ns: &str) -> String {
    plane
        .get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{range .status.aggregatedStatus[*]}{.clusterName}={.health}{end}",
        )
        .await
}

/// One Deployment on us-west-2 under the health script `script`; the binding must report `want`.
async fn health_case(plane: &ControlPlane, ns: &str, script: &str, want: &str) {
    let rules = [(ns, rule("healthInterpretation", script))];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, false))
            .await;
        plane.apply(None, &deployment(ns, 3, "")).await;
        await_value("the binding reports the script's health", want, || {
            binding_health(plane, ns)
        })
        .await;
    })
    .await;
}

pub async fn interpret_health(plane: &ControlPlane) {
    let healthy = "
function InterpretHealth(observedObj)
  return observedObj.status.readyReplicas == observedObj.spec.replicas
end";
    health_case(plane, "ric-health", healthy, "us-west-2=Healthy").await;
    // A script that never finds the Deployment healthy: the native rule would.
    let unhealthy = "
function InterpretHealth(observedObj)
  return observedObj.status.readyReplicas == observedObj.spec.replicas + 100
end";
    health_case(plane, "ric-unhealthy", unhealthy, "us-west-2=Unhealthy").await;
}

pub async fn dependency_interpretation(plane: &ControlPlane) {
    let ns = "ric-deps";
    let service_accounts = "
function GetDependencies(desiredObj)
  dependentSas = {}
  refs = {}
  if desiredObj.spec.template.spec.serviceAccountName ~= nil and desiredObj.spec.template.spec.serviceAccountName ~= 'default' then
    dependentSas[desiredObj.spec.template.spec.serviceAccountName] = true
  end
  local idx = 1
  for key, value in pairs(dependentSas) do
    dependObj = {}
    dependObj.apiVersion = 'v1'
    dependObj.kind = 'ServiceAccount'
    dependObj.name = key
    dependObj.namespace = desiredObj.metadata.namespace
    refs[idx] = dependObj
    idx = idx + 1
  end
  return refs
end";
    let config_maps = "
function GetDependencies(desiredObj)
  dependentSas = {}
  refs = {}
  if desiredObj.spec.template.spec.volumes == nil then
    return refs
  end
  local idx = 1
  for index, volume in pairs(desiredObj.spec.template.spec.volumes) do
    if volume.configMap ~= nil then
      dependObj = {}
      dependObj.apiVersion = 'v1'
      dependObj.kind = 'ConfigMap'
      dependObj.name = volume.configMap.name
      dependObj.namespace = desiredObj.metadata.namespace
      refs[idx] = dependObj
      idx = idx + 1
    end
  end
  return refs
end";
    let rules = [
        (
            "ric-deps-sa",
            rule("dependencyInterpretation", service_accounts),
        ),
        ("ric-deps-cm", rule("dependencyInterpretation", config_maps)),
    ];
    with_customizations(plane, &rules, ns, || async {
        plane
            .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, true))
            .await;
        plane
            .apply(
                None,
                &format!(
                    "apiVersion: v1
kind: ServiceAccount
metadata:
  name: web-sa
  namespace: {ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: {ns}
data:
  user: karmada
"
                ),
            )
            .await;
        let pod_spec = "      serviceAccountName: web-sa
      volumes:
      - name: vol-configmap
        configMap:
          name: web-config
";
        plane.apply(None, &deployment(ns, 3, pod_spec)).await;
        for what in [
            "deployment/web",
            "serviceaccount/web-sa",
            "configmap/web-config",
        ] {
            await_value(&format!("{what} reaches the member"), "present", || async {
                let name = plane
                    .get(Some("us-west-2"), ns, what, "{.metadata.name}")
                    .await;
                if name.is_empty() {
                    "absent".to_owned()
                } else {
                    "present".to_owned()
                }
            })
            .await;
        }
    })
    .await;
}

/// Karmada's webhook cases, on Deployments: a ResourceInterpreterWebhookConfiguration whose
/// webhook answers every operation, ahead of the native rules.
pub async fn webhook_interprets_every_operation(
    plane: &ControlPlane,
    webhook: &crate::webhook::Webhook,
) {
    use base64::Engine as _;
    let ns = "ric-webhook";
    let ca = base64::engine::general_purpose::STANDARD.encode(&webhook.ca_pem);
    let configuration = format!(
        "apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata:
  name: examples
webhooks:
- name: deployments.example.com
  rules:
  - operations: [InterpretReplica, ReviseReplica, Retain, AggregateStatus, InterpretHealth, InterpretStatus, InterpretDependency]
    apiGroups: [apps]
    apiVersions: [v1]
    kinds: [Deployment]
  - operations: [InterpretComponent]
    apiGroups: [batch]
    apiVersions: [v1]
    kinds: [Job]
  clientConfig:
    url: {url}
    caBundle: {ca}
  interpreterContextVersions: [v1alpha1]
  timeoutSeconds: 3
",
        url = webhook.url
    );
    plane.apply(None, &configuration).await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    plane
        .apply(None, &namespace_and_policy(ns, ONE_CLUSTER, true))
        .await;
    plane
        .apply(
            None,
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-webhook\n  namespace: {ns}\ndata:\n  a: b\n"),
        )
        .await;
    plane.apply(None, &deployment(ns, 3, "")).await;
    // InterpretReplica.
    await_value(
        "the binding's replicas and requirements come from the webhook",
        "5 {\"namespace\":\"ric-webhook\",\"resourceRequest\":{\"cpu\":\"250m\"}}",
        || async {
            plane
                .get(
                    None,
                    ns,
                    "resourcebinding/web-deployment",
                    "{.spec.replicas} {.spec.replicaRequirements}",
                )
                .await
        },
    )
    .await;
    // ReviseReplica: the one cluster's 5, plus 10.
    await_value("the member runs the webhook's revision", "15", || async {
        plane
            .get(Some("us-west-2"), ns, "deployment/web", "{.spec.replicas}")
            .await
    })
    .await;
    // InterpretDependency: the ConfigMap only the webhook names travels along.
    await_value(
        "the webhook's dependency reaches the member",
        "from-webhook",
        || async {
            plane
                .get(
                    Some("us-west-2"),
                    ns,
                    "configmap/from-webhook",
                    "{.metadata.name}",
                )
                .await
        },
    )
    .await;
    // InterpretHealth and InterpretStatus.
    await_value(
        "the binding reports what the webhook said",
        "us-west-2=Unhealthy",
        || binding_health(plane, ns),
    )
    .await;
    await_value(
        "the reflected status is the webhook's",
        "webhook",
        || async {
            plane
                .get(
                    None,
                    ns,
                    "resourcebinding/web-deployment",
                    "{.status.aggregatedStatus[0].status.reflectedBy}",
                )
                .await
        },
    )
    .await;
    // AggregateStatus.
    await_value("the template's status is the webhook's", "42", || async {
        plane
            .get(None, ns, "deployment/web", "{.status.replicas}")
            .await
    })
    .await;
    // Retain: a member-side pause survives the next update from the template.
    plane
        .kubectl(&[
            "--context",
            "us-west-2",
            "-n",
            ns,
            "patch",
            "deployment",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"paused":true}}"#,
        ])
        .await;
    plane
        .kubectl(&["-n", ns, "label", "deployment", "web", "touched=yes"])
        .await;
    await_value(
        "the update keeps the member's pause",
        "yes true",
        || async {
            plane
                .get(
                    Some("us-west-2"),
                    ns,
                    "deployment/web",
                    "{.metadata.labels.touched} {.spec.paused}",
                )
                .await
        },
    )
    .await;
    // InterpretComponent (gate MultiplePodTemplatesScheduling, on with AllAlpha): a Job's
    // binding gets the webhook's components instead of replicas.
    plane
        .apply(
            None,
            &format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: {ns}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {{name: c, image: busybox, command: [\"true\"]}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: train\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: batch/v1, kind: Job, name: train}}\n  placement:\n{ONE_CLUSTER}"
            ),
        )
        .await;
    await_value(
        "the Job's binding has the webhook's components",
        "from-webhook=2 100m",
        || async {
            plane
                .get(
                    None,
                    ns,
                    "resourcebinding/train-job",
                    "{.spec.components[0].name}={.spec.components[0].replicas} {.spec.components[0].replicaRequirements.resourceRequest.cpu}",
                )
                .await
        },
    )
    .await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
    plane
        .kubectl(&[
            "delete",
            "resourceinterpreterwebhookconfiguration",
            "examples",
        ])
        .await;
}
