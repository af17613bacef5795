//! The failover scenarios, each in its own namespace.

use crate::support::{ControlPlane, await_value, eventually};

const GRACEFUL: &str = include_str!("graceful.yaml");
const DIRECTLY: &str = include_str!("directly.yaml");
const APPLICATION: &str = include_str!("application.yaml");
const AFFINITIES: &str = include_str!("affinities.yaml");
const REBALANCE: &str = include_str!("rebalance.yaml");
const TAINT_POLICY: &str = include_str!("taint_policy.yaml");

/// `application.yaml` for namespace `ns`, with the Deployment's `image` and the policy's
/// `failover.application` (YAML, indented under it).
fn application(ns: &str, image: &str, behaviour: &str) -> String {
    APPLICATION
        .replace("NAMESPACE", ns)
        .replace("IMAGE", image)
        .replace("    BEHAVIOUR\n", behaviour)
}

/// `spec.replicas/status.readyReplicas` of a Deployment.
const REPLICAS: &str = "{.spec.replicas}/{.status.readyReplicas}";

/// The clusters a ResourceBinding targets, space separated.
async fn targets(plane: &ControlPlane, ns: &str, binding: &str) -> String {
    plane
        .get(
            None,
            ns,
            &format!("resourcebinding/{binding}"),
            "{range .spec.clusters[*]}{.name} {end}",
        )
        .await
        .trim()
        .to_owned()
}

/// Waits until the binding `web-deployment` of `ns` targets exactly one member; returns it.
async fn scheduled_to_one(plane: &ControlPlane, ns: &str) -> String {
    eventually("the Deployment scheduled to one member", || async {
        let t = targets(plane, ns, "web-deployment").await;
        if t.split_whitespace().count() == 1 {
            Ok(t)
        } else {
            Err(t)
        }
    })
    .await
}

/// The candidate member of the two-cluster placements (us-west-2, eu-central-1) that is not
/// `from`.
fn other_candidate(from: &str) -> &'static str {
    if from == "us-west-2" {
        "eu-central-1"
    } else {
        "us-west-2"
    }
}

/// The members the binding `web-deployment` of `ns` targets, sorted.
async fn sorted_targets(plane: &ControlPlane, ns: &str) -> String {
    let t = targets(plane, ns, "web-deployment").await;
    let mut names: Vec<&str> = t.split_whitespace().collect();
    names.sort();
    names.join(" ")
}

/// Puts the NoExecute taint `fail-test` on `cluster`, or takes every taint away.
async fn taint(plane: &ControlPlane, cluster: &str, on: bool) {
    taint_with(plane, cluster, on.then_some("fail-test")).await;
}

/// Puts a NoExecute taint with `key` on `cluster` (`None`: takes every taint away).
async fn taint_with(plane: &ControlPlane, cluster: &str, key: Option<&str>) {
    let patch = match key {
        Some(key) => format!(r#"{{"spec":{{"taints":[{{"key":"{key}","effect":"NoExecute"}}]}}}}"#),
        None => r#"{"spec":{"taints":null}}"#.to_owned(),
    };
    let patch = patch.as_str();
    plane
        .kubectl(&["patch", "cluster", cluster, "--type", "merge", "-p", patch])
        .await;
}

/// Applies `yaml`, waits until the binding `web-deployment` of `ns` targets one member with its
/// Deployment ready there, and returns that member and the other candidate.
async fn placed(plane: &ControlPlane, ns: &str, yaml: &str) -> (String, String) {
    plane.apply(None, yaml).await;
    let from = scheduled_to_one(plane, ns).await;
    let other = other_candidate(&from);
    await_value(&format!("web ready in {from}"), "2/2", || {
        plane.get(Some(&from), ns, "deployment/web", REPLICAS)
    })
    .await;
    (from, other.to_owned())
}

/// Karmada's "taint Cluster with NoExecute taint" with purgeMode Gracefully: the binding leaves
/// the tainted member once the 3 s toleration ends, the workload runs in the other member, the
/// eviction is reported on the Deployment, and the old copy goes once the new one is healthy.
pub async fn cluster_failover_gracefully(plane: &ControlPlane) {
    let ns = "failover-graceful";
    let (from, other) = placed(plane, ns, GRACEFUL).await;
    taint(plane, &from, true).await;
    await_value("the binding moved to the other member", &other, || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    await_value(&format!("web ready in {other}"), "2/2", || {
        plane.get(Some(&other), ns, "deployment/web", REPLICAS)
    })
    .await;
    plane
        .await_events(
            ns,
            "Deployment",
            "web",
            &["EvictWorkloadFromClusterSucceed"],
        )
        .await;
    await_value(&format!("web gone from {from}"), "", || {
        plane.get(Some(&from), ns, "deployment/web", "{.metadata.name}")
    })
    .await;
    await_value("no eviction task left", "", || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.spec.gracefulEvictionTasks}",
        )
    })
    .await;
    taint(plane, &from, false).await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// purgeMode Directly with state preservation: the old copy is deleted before the new one is
/// written, and the new one carries the label `test-alias` with the evicted copy's
/// `status.replicas`.
pub async fn cluster_failover_directly_keeps_state(plane: &ControlPlane) {
    let ns = "failover-directly";
    let (from, other) = placed(plane, ns, DIRECTLY).await;
    // The status the state is read from must have reached the binding.
    await_value("the member's status collected", "2", || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.status.aggregatedStatus[0].status.replicas}",
        )
    })
    .await;
    taint(plane, &from, true).await;
    await_value("the binding moved to the other member", &other, || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    await_value(
        &format!("web in {other} carries the preserved state"),
        "2",
        || {
            plane.get(
                Some(&other),
                ns,
                "deployment/web",
                "{.metadata.labels.test-alias}",
            )
        },
    )
    .await;
    assert_eq!(
        plane
            .get(Some(&from), ns, "deployment/web", "{.metadata.name}")
            .await,
        "",
        "purged Directly: the old copy goes before the new one is written"
    );
    let task = plane
        .get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.spec.gracefulEvictionTasks[0].fromCluster} {.spec.gracefulEvictionTasks[0].reason} {.spec.gracefulEvictionTasks[0].producer} {.spec.gracefulEvictionTasks[0].purgeMode}",
        )
        .await;
    // The task stays until the new copy is healthy; then it goes.
    if !task.trim().is_empty() {
        assert_eq!(
            task,
            format!("{from} TaintUntolerated TaintManager Directly")
        );
    }
    taint(plane, &from, false).await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// Karmada's "application failover with purgeMode gracefully when the application come back to
/// healthy on the new cluster": an OverridePolicy breaks the image in the member the workload
/// runs in; after the toleration it moves to the other member, where it runs healthy, and then
/// the broken copy goes (before the 60 s grace period).
pub async fn application_failover_gracefully(plane: &ControlPlane) {
    let ns = "app-graceful";
    let behaviour = "      decisionConditions:\n        tolerationSeconds: 3\n      purgeMode: Gracefully\n      gracePeriodSeconds: 60\n";
    let (from, other) = placed(plane, ns, &application(ns, "nginx:1.27", behaviour)).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata:\n  name: break\n  namespace: {ns}\nspec:\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: web\n  overrideRules:\n    - targetCluster:\n        clusterNames: [{from}]\n      overriders:\n        imageOverrider:\n          - component: Registry\n            operator: replace\n            value: fake\n"
            ),
        )
        .await;
    await_value(
        &format!("the image broken in {from}"),
        "fake/nginx:1.27",
        || {
            plane.get(
                Some(&from),
                ns,
                "deployment/web",
                "{.spec.template.spec.containers[0].image}",
            )
        },
    )
    .await;
    await_value("the binding moved to the other member", &other, || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    await_value(&format!("web ready in {other}"), "2/2", || {
        plane.get(Some(&other), ns, "deployment/web", REPLICAS)
    })
    .await;
    await_value(&format!("the broken copy gone from {from}"), "", || {
        plane.get(Some(&from), ns, "deployment/web", "{.metadata.name}")
    })
    .await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// purgeMode Never: the workload, unhealthy everywhere, moves once; the evicted copy stays (its
/// task suppresses deletion), and with both candidates evicted nothing moves again.
pub async fn application_failover_never(plane: &ControlPlane) {
    let ns = "app-never";
    let behaviour =
        "      decisionConditions:\n        tolerationSeconds: 3\n      purgeMode: Never\n";
    plane
        .apply(None, &application(ns, "fake/nginx:1.19.0", behaviour))
        .await;
    let from = scheduled_to_one(plane, ns).await;
    await_value(
        "the evicted member recorded, its deletion suppressed",
        &format!("{from} ApplicationFailure resource-binding-application-failover-controller Never true"),
        || {
            plane.get(
                None,
                ns,
                "resourcebinding/web-deployment",
                "{.spec.gracefulEvictionTasks[0].fromCluster} {.spec.gracefulEvictionTasks[0].reason} {.spec.gracefulEvictionTasks[0].producer} {.spec.gracefulEvictionTasks[0].purgeMode} {.spec.gracefulEvictionTasks[0].suppressDeletion}",
            )
        },
    )
    .await;
    assert_ne!(
        plane
            .get(Some(&from), ns, "deployment/web", "{.metadata.name}")
            .await,
        "",
        "purgeMode Never keeps the evicted copy"
    );
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// purgeMode Directly with state preservation: the broken copy goes first, and the new one
/// carries `test-alias` from the old copy's `status.replicas`.
pub async fn application_failover_directly(plane: &ControlPlane) {
    let ns = "app-directly";
    let behaviour = "      decisionConditions:\n        tolerationSeconds: 3\n      purgeMode: Directly\n      statePreservation:\n        rules:\n          - aliasLabelName: test-alias\n            jsonPath: \"{.replicas}\"\n";
    plane
        .apply(None, &application(ns, "fake/nginx:1.19.0", behaviour))
        .await;
    let from = scheduled_to_one(plane, ns).await;
    let other = other_candidate(&from);
    await_value(
        &format!("web in {other} carries the preserved state"),
        "2",
        || {
            plane.get(
                Some(other),
                ns,
                "deployment/web",
                "{.metadata.labels.test-alias}",
            )
        },
    )
    .await;
    assert_eq!(
        plane
            .get(Some(&from), ns, "deployment/web", "{.metadata.name}")
            .await,
        "",
        "purged Directly: the old copy goes before the new one is written"
    );
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// Karmada's "failover testing with propagate deployment by clusterAffinities": a
/// `not-ready:NoExecute` taint on the first term's only cluster moves the workload to the second
/// term's.
pub async fn cluster_affinities_fail_over_to_the_next_term(plane: &ControlPlane) {
    let ns = "failover-affinities";
    plane.apply(None, AFFINITIES).await;
    await_value("placed by the first term", "us-west-2", || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    taint_with(plane, "us-west-2", Some("cluster.karmada.io/not-ready")).await;
    await_value("web ready in eu-central-1", "2/2", || {
        plane.get(Some("eu-central-1"), ns, "deployment/web", REPLICAS)
    })
    .await;
    await_value("the second term in force", "group2", || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.status.schedulerObservingAffinityName}",
        )
    })
    .await;
    taint_with(plane, "us-west-2", None).await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// Karmada's "reschedule when policy is dynamic weight schedule type": a taint tolerated for 0 s
/// evicts one member; once the eviction task is done and the taint gone, a WorkloadRebalancer
/// spreads the workload over both members again.
pub async fn rebalancer_spreads_again_after_failover(plane: &ControlPlane) {
    let ns = "failover-rebalance";
    plane.apply(None, REBALANCE).await;
    await_value(
        "divided over both members",
        "eu-central-1 us-west-2",
        || sorted_targets(plane, ns),
    )
    .await;
    taint(plane, "us-west-2", true).await;
    await_value("all replicas in eu-central-1", "eu-central-1", || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    await_value("the eviction task done", "", || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.spec.gracefulEvictionTasks}",
        )
    })
    .await;
    taint(plane, "us-west-2", false).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: apps.karmada.io/v1alpha1\nkind: WorkloadRebalancer\nmetadata:\n  name: {ns}\nspec:\n  workloads:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: web\n      namespace: {ns}\n"
            ),
        )
        .await;
    await_value(
        "divided over both members again",
        "eu-central-1 us-west-2",
        || sorted_targets(plane, ns),
    )
    .await;
    await_value("the rebalancer's result", "Successful", || {
        plane.get(
            None,
            ns,
            "workloadrebalancer/failover-rebalance",
            "{.status.observedWorkloads[0].result}",
        )
    })
    .await;
    plane.kubectl(&["delete", "workloadrebalancer", ns]).await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}

/// Sets the condition `NetworkReady` of `cluster` to `status` (keeping the others), as Karmada's
/// `UpdateClusterStatusCondition` does.
async fn set_network_ready(plane: &ControlPlane, cluster: &str, status: &str) {
    let current = plane
        .kubectl(&[
            "get",
            "cluster",
            cluster,
            "-o",
            "jsonpath={.status.conditions}",
        ])
        .await;
    let mut conditions: Vec<serde_json::Value> =
        serde_json::from_str(&current).expect("conditions are JSON");
    conditions.retain(|c| c["type"] != "NetworkReady");
    conditions.push(serde_json::json!({"type": "NetworkReady", "status": status,
        "reason": "Test", "message": "", "lastTransitionTime": "2026-12-06T00:00:00Z"}));
    let patch = serde_json::json!({"status": {"conditions": conditions}}).to_string();
    plane
        .kubectl(&[
            "patch",
            "cluster",
            cluster,
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            &patch,
        ])
        .await;
}

/// Karmada's ClusterTaintPolicy "Control with multiple taints" (admitted with
/// `--allow-no-execute-taint-policy`), carried on to what it is for: the NoExecute taint the
/// policy adds when `NetworkReady` fails evicts the workload to its backup term, and the taints go
/// when the condition recovers.
pub async fn taint_policy_evicts_when_a_condition_fails(plane: &ControlPlane) {
    let ns = "failover-taint-policy";
    plane.apply(None, TAINT_POLICY).await;
    await_value("web ready in cn-shanghai", "2/2", || {
        plane.get(Some("cn-shanghai"), ns, "deployment/web", REPLICAS)
    })
    .await;
    set_network_ready(plane, "cn-shanghai", "False").await;
    let taints = "{range .spec.taints[*]}{.key}:{.effect} {end}";
    await_value(
        "both taints on cn-shanghai",
        "testing/network-not-ready:NoSchedule testing/network-not-ready:NoExecute ",
        || plane.get(None, "default", "cluster/cn-shanghai", taints),
    )
    .await;
    plane
        .await_events(
            "default",
            "Cluster",
            "cn-shanghai",
            &["TaintClusterSucceed"],
        )
        .await;
    await_value("web moved to the backup term", "eu-central-1", || {
        targets(plane, ns, "web-deployment")
    })
    .await;
    await_value("web ready in eu-central-1", "2/2", || {
        plane.get(Some("eu-central-1"), ns, "deployment/web", REPLICAS)
    })
    .await;
    set_network_ready(plane, "cn-shanghai", "True").await;
    await_value("the taints removed", "", || {
        plane.get(None, "default", "cluster/cn-shanghai", taints)
    })
    .await;
    plane
        .kubectl(&["delete", "clustertaintpolicy", "network-not-ready"])
        .await;
    plane.kubectl(&["delete", "namespace", ns]).await;
}
