//! FederatedResourceQuota end to end through the real binary and the real kubectl: `flotilla up
//! --demo` with every alpha and beta gate on (so `FederatedQuotaEnforcement` too), and the cases
//! of Karmada's `federatedresourcequota_test.go` that three fixed members can run: create /
//! update / delete propagating member ResourceQuotas by `staticAssignments`, status collected
//! from the members, and enforcement (a workload beyond the quota is not scheduled, a scale-up
//! and a requests increase are refused, the usage is counted).
//!
//! The simulated members run a ResourceQuota controller (docs/sim.md): the status case creates a
//! pod in a member and waits for its usage to travel from the member quota's status to the
//! FederatedResourceQuota's aggregated status.

#[path = "propagate_e2e/support.rs"]
#[allow(dead_code)]
mod support;

use support::{ControlPlane, MEMBERS, await_value, eventually};

const DENIED: &str = "admission webhook \"resourcebinding.karmada.io\" denied the request";

/// One control plane; the two stories in their own namespaces, run concurrently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn federated_resource_quotas_follow_karmada() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane =
        ControlPlane::demo_with(dir.path(), &["--feature-gates=AllAlpha=true,AllBeta=true"]).await;
    tokio::join!(
        static_assignments_become_member_quotas(&plane),
        enforcement_refuses_what_exceeds_the_quota(&plane),
    );
}

fn quota_yaml(ns: &str, clusters: &[&str]) -> String {
    let assignments: String = clusters
        .iter()
        .map(|c| format!("  - clusterName: {c}\n    hard:\n      cpu: \"1\"\n      memory: 1Gi\n"))
        .collect();
    format!(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata:\n  name: team\n  namespace: {ns}\nspec:\n  overall:\n    cpu: \"3\"\n    memory: 3Gi\n  staticAssignments:\n{assignments}"
    )
}

fn per_member_lines(values: &[(&str, &str)]) -> String {
    MEMBERS
        .iter()
        .map(|m| {
            let value = values.iter().find(|(c, _)| c == m).map_or("", |(_, v)| *v);
            format!("{m}={value}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Karmada's "CURD a FederatedResourceQuota" and "status should be collected correctly".
async fn static_assignments_become_member_quotas(plane: &ControlPlane) {
    let ns = "quota-sync";
    plane.kubectl(&["create", "namespace", ns]).await;
    plane.apply(None, &quota_yaml(ns, &MEMBERS)).await;

    let all: Vec<(&str, &str)> = MEMBERS.iter().map(|m| (*m, "1")).collect();
    await_value(
        "a ResourceQuota with the assigned hard limits in every member",
        &per_member_lines(&all),
        || plane.per_member(ns, "resourcequota/team", "{.spec.hard.cpu}"),
    )
    .await;
    plane
        .await_events(ns, "FederatedResourceQuota", "team", &["SyncWorkSucceed"])
        .await;

    // A pod in the member counts in its quota (the member's quota controller reports it), and
    // that reaches the quota's aggregated status.
    plane
        .apply(
            Some(MEMBERS[0]),
            &format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: worker\n  namespace: {ns}\nspec:\n  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n    resources:\n      requests:\n        cpu: 200m\n        memory: 64Mi\n"
            ),
        )
        .await;
    await_value("the member quota's own status", "1 200m 64Mi", || {
        plane.get(
            Some(MEMBERS[0]),
            ns,
            "resourcequota/team",
            "{.status.hard.cpu} {.status.used.cpu} {.status.used.memory}",
        )
    })
    .await;
    let path = format!(
        "{{.status.aggregatedStatus[?(@.clusterName==\"{}\")].used.cpu}}",
        MEMBERS[0]
    );
    await_value("the member's usage in aggregatedStatus", "200m", || {
        plane.get(None, ns, "federatedresourcequota/team", &path)
    })
    .await;
    plane
        .await_events(
            ns,
            "FederatedResourceQuota",
            "team",
            &["AggregateStatusSucceed"],
        )
        .await;

    // Fewer assignments: the other members' quotas go.
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "federatedresourcequota",
            "team",
            "--type=json",
            "-p",
            &format!(
                r#"[{{"op":"replace","path":"/spec/staticAssignments","value":[{{"clusterName":"{}","hard":{{"cpu":"2"}}}}]}}]"#,
                MEMBERS[0]
            ),
        ])
        .await;
    await_value(
        "the quota only in the one member still assigned, with its new limit",
        &per_member_lines(&[(MEMBERS[0], "2")]),
        || plane.per_member(ns, "resourcequota/team", "{.spec.hard.cpu}"),
    )
    .await;

    plane
        .kubectl(&["-n", ns, "delete", "federatedresourcequota", "team"])
        .await;
    await_value(
        "no member quota left after the FederatedResourceQuota is deleted",
        &per_member_lines(&[]),
        || plane.per_member(ns, "resourcequota/team", "{.spec.hard.cpu}"),
    )
    .await;
}

fn deployment_yaml(ns: &str, name: &str, replicas: u32, cpu: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: nginx
        image: nginx
        resources:
          requests:
            cpu: {cpu}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: {name}
  namespace: {ns}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: {name}
  placement:
    clusterAffinity:
      clusterNames: [{member}]
"#,
        member = MEMBERS[0]
    )
}

/// Messages of the Events about `kind/name` with `reason`.
async fn event_messages(
    plane: &ControlPlane,
    ns: &str,
    kind: &str,
    name: &str,
    reason: &str,
) -> String {
    let selector = format!("involvedObject.kind={kind},involvedObject.name={name},reason={reason}");
    plane
        .kubectl(&[
            "-n",
            ns,
            "get",
            "events",
            "--field-selector",
            &selector,
            "-o",
            "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}",
        ])
        .await
}

async fn await_refusal(plane: &ControlPlane, ns: &str, kind: &str, name: &str, reason: &str) {
    eventually(
        &format!("a {reason} event about {kind} {ns}/{name} carrying the webhook's refusal"),
        || async {
            let messages = event_messages(plane, ns, kind, name, reason).await;
            if messages.contains(DENIED) && messages.contains("FederatedResourceQuota(") {
                Ok(())
            } else {
                Err(messages)
            }
        },
    )
    .await;
}

/// Karmada's "[Compute resource] FederatedResourceQuota should be enforced correctly" cases.
async fn enforcement_refuses_what_exceeds_the_quota(plane: &ControlPlane) {
    let ns = "quota-enforce";
    let member = MEMBERS[0];
    plane.kubectl(&["create", "namespace", ns]).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata:\n  name: team\n  namespace: {ns}\nspec:\n  overall:\n    cpu: 10m\n    memory: 100Mi\n"
            ),
        )
        .await;
    await_value("status.overall is spec.overall", "10m 100Mi", || {
        plane.get(
            None,
            ns,
            "federatedresourcequota/team",
            "{.status.overall.cpu} {.status.overall.memory}",
        )
    })
    .await;

    // Within the quota: propagated, and its usage counted (only what overall limits).
    plane
        .apply(None, &deployment_yaml(ns, "web", 1, "10m"))
        .await;
    await_value("web runs 1 replica in the member", "1", || {
        plane.get(Some(member), ns, "deployment/web", "{.spec.replicas}")
    })
    .await;
    await_value(
        "overallUsed counts web's requests",
        "{\"cpu\":\"10m\"}",
        || {
            plane.get(
                None,
                ns,
                "federatedresourcequota/team",
                "{.status.overallUsed}",
            )
        },
    )
    .await;

    // No quota left: a second workload is not scheduled.
    plane
        .apply(None, &deployment_yaml(ns, "web2", 1, "10m"))
        .await;
    await_refusal(
        plane,
        ns,
        "ResourceBinding",
        "web2-deployment",
        "ScheduleBindingFailed",
    )
    .await;
    await_value(
        "web2's binding is Scheduled=False/QuotaExceeded without a result",
        "False QuotaExceeded ",
        || {
            plane.get(
                None,
                ns,
                "resourcebinding/web2-deployment",
                "{.status.conditions[?(@.type==\"Scheduled\")].status} {.status.conditions[?(@.type==\"Scheduled\")].reason} {.spec.clusters}",
            )
        },
    )
    .await;
    assert_eq!(
        plane
            .get(Some(member), ns, "deployment/web2", "{.metadata.name}")
            .await,
        "",
        "a workload refused for quota must not reach the member"
    );

    // A scale-up beyond the quota is refused: the binding keeps one replica.
    plane
        .kubectl(&["-n", ns, "scale", "deployment", "web", "--replicas=2"])
        .await;
    await_refusal(
        plane,
        ns,
        "ResourceBinding",
        "web-deployment",
        "ScheduleBindingFailed",
    )
    .await;
    await_value(
        "web's binding is Scheduled=False/QuotaExceeded and keeps 1 replica",
        "False QuotaExceeded 1",
        || {
            plane.get(
                None,
                ns,
                "resourcebinding/web-deployment",
                "{.status.conditions[?(@.type==\"Scheduled\")].status} {.status.conditions[?(@.type==\"Scheduled\")].reason} {.spec.clusters[*].replicas}",
            )
        },
    )
    .await;
    assert_eq!(
        plane
            .get(Some(member), ns, "deployment/web", "{.spec.replicas}")
            .await,
        "1"
    );

    // Raising the requests beyond the quota is refused when the detector updates the binding.
    plane
        .kubectl(&[
            "-n",
            ns,
            "set",
            "resources",
            "deployment",
            "web",
            "--requests=cpu=20m",
        ])
        .await;
    await_refusal(plane, ns, "Deployment", "web", "ApplyPolicyFailed").await;
    assert_eq!(
        plane
            .get(
                None,
                ns,
                "resourcebinding/web-deployment",
                "{.spec.replicaRequirements.resourceRequest.cpu}",
            )
            .await,
        "10m",
        "the binding keeps the requests the quota admitted"
    );
    assert_eq!(
        plane
            .get(
                None,
                ns,
                "federatedresourcequota/team",
                "{.status.overallUsed.cpu}"
            )
            .await,
        "10m"
    );
}

/// Karmada's `estimator_test.go` "Quota plugin Testing": with the accurate estimator
/// (`--enable-scheduler-estimator`) and gate `ResourceQuotaEstimate`, a member ResourceQuota
/// caps the replicas the scheduler gives that member. The quota (0.03 CPU) is propagated with the
/// Deployment's policy; 3 replicas of 10m fit, 5 do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_quotas_cap_the_estimated_replicas() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane = ControlPlane::demo_with(
        dir.path(),
        &[
            "--enable-scheduler-estimator",
            "--feature-gates=AllAlpha=true,AllBeta=true",
        ],
    )
    .await;
    let target = MEMBERS[0];
    for (ns, replicas) in [("estimate-fits", 3), ("estimate-exceeds", 5)] {
        plane.kubectl(&["create", "namespace", ns]).await;
        plane
            .apply(
                None,
                &format!(
                    "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: rq\n  namespace: {ns}\nspec:\n  hard:\n    requests.cpu: \"0.03\"\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: pp\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  - {{apiVersion: v1, kind: ResourceQuota, name: rq}}\n  placement:\n    clusterAffinity: {{clusterNames: [{target}]}}\n    replicaScheduling:\n      replicaSchedulingType: Divided\n      replicaDivisionPreference: Weighted\n      weightPreference: {{dynamicWeight: AvailableReplicas}}\n"
                ),
            )
            .await;
        // The member's quota controller has reported the quota before the workload comes.
        await_value("the member quota's status", "0.03 0", || {
            plane.get(
                Some(target),
                ns,
                "resourcequota/rq",
                "{.status.hard.requests\\.cpu} {.status.used.requests\\.cpu}",
            )
        })
        .await;
        // The scheduler's estimator sees the member through its own watch, which can trail the
        // member's status under load: let it catch up before the workload comes.
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        plane
            .apply(
                None,
                &format!(
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: web\n        image: registry.k8s.io/pause:3.10\n        resources: {{requests: {{cpu: 10m}}}}\n"
                ),
            )
            .await;
    }
    // Within the quota: scheduled to the target, the requirements name the namespace, and the
    // member runs all three.
    await_value(
        "the binding within the quota",
        &format!("{target}=3 estimate-fits"),
        || {
            plane.get(
                None,
                "estimate-fits",
                "resourcebinding/web-deployment",
                "{.spec.clusters[0].name}={.spec.clusters[0].replicas} {.spec.replicaRequirements.namespace}",
            )
        },
    )
    .await;
    await_value("the member Deployment ready", "3", || {
        plane.get(
            Some(target),
            "estimate-fits",
            "deployment/web",
            "{.status.readyReplicas}",
        )
    })
    .await;
    // Beyond it: Unschedulable, no clusters, nothing in the member.
    await_value(
        "the binding beyond the quota",
        "False Unschedulable ",
        || {
            plane.get(
                None,
                "estimate-exceeds",
                "resourcebinding/web-deployment",
                "{.status.conditions[?(@.type==\"Scheduled\")].status} {.status.conditions[?(@.type==\"Scheduled\")].reason} {.spec.clusters}",
            )
        },
    )
    .await;
    let member = plane
        .get(
            Some(target),
            "estimate-exceeds",
            "deployment/web",
            "{.metadata.name}",
        )
        .await;
    assert_eq!(member, "", "nothing beyond the quota reaches the member");
    overflow_follows_the_member_quotas(&plane).await;
    assumed_flink_deployments_use_up_the_member_quota(&plane).await;
}

/// `(status reason message)` of a binding's Scheduled condition.
async fn scheduled(plane: &ControlPlane, ns: &str, binding: &str) -> String {
    plane
        .get(
            None,
            ns,
            &format!("resourcebinding/{binding}"),
            "{.status.conditions[?(@.type==\"Scheduled\")].status} {.status.conditions[?(@.type==\"Scheduled\")].reason} {.status.conditions[?(@.type==\"Scheduled\")].message}",
        )
        .await
}

/// Karmada's `estimator_test.go` "[EstimatorAssumption] ResourceQuota plugin assumption
/// testing" (gate `SchedulingOvercommitProtection`, on with `AllAlpha`): a member quota of one
/// CPU that nothing uses yet (FlinkDeployments run no pods in the member: there is no Flink
/// operator), FlinkDeployments of 50m + 100m placed one by one on that member: six are
/// scheduled, as their assumed footprints add up to 900m; the seventh finds no room
/// (`no enough resource`), and neither does a 200m Deployment.
async fn assumed_flink_deployments_use_up_the_member_quota(plane: &ControlPlane) {
    let ns = "estimate-assumed";
    let target = MEMBERS[0];
    plane
        .apply(
            None,
            &format!(
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: flinkdeployments.flink.apache.org}}\nspec:\n  group: flink.apache.org\n  scope: Namespaced\n  names: {{kind: FlinkDeployment, plural: flinkdeployments, singular: flinkdeployment, listKind: FlinkDeploymentList}}\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n    subresources: {{status: {{}}}}\n    schema:\n      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {{name: flink-crd}}\nspec:\n  resourceSelectors: [{{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: flinkdeployments.flink.apache.org}}]\n  placement: {{clusterAffinity: {{clusterNames: [{target}]}}}}\n"
            ),
        )
        .await;
    eventually("FlinkDeployment in the member's API enablements", || async {
        let listed = plane
            .kubectl(&[
                "get",
                "cluster",
                target,
                "-o",
                "jsonpath={.status.apiEnablements[?(@.groupVersion==\"flink.apache.org/v1beta1\")].resources[*].kind}",
            ])
            .await;
        if listed.split_whitespace().any(|k| k == "FlinkDeployment") {
            Ok(())
        } else {
            Err(listed)
        }
    })
    .await;
    plane.kubectl(&["create", "namespace", ns]).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: rq, namespace: {ns}}}\nspec: {{hard: {{cpu: \"1\"}}}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: rq, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: v1, kind: ResourceQuota, name: rq}}]\n  placement: {{clusterAffinity: {{clusterNames: [{target}]}}}}\n"
            ),
        )
        .await;
    await_value("the member quota's status", "1 0", || {
        plane.get(
            Some(target),
            ns,
            "resourcequota/rq",
            "{.status.hard.cpu} {.status.used.cpu}",
        )
    })
    .await;
    let placement = format!(
        "  placement:\n    clusterAffinity: {{clusterNames: [{target}]}}\n    spreadConstraints: [{{spreadByField: cluster, maxGroups: 1, minGroups: 1}}]\n    replicaScheduling: {{replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}}\n"
    );
    let flink = |i: usize| {
        format!(
            "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {{name: flink-{i}, namespace: {ns}}}\nspec:\n  flinkConfiguration: {{taskmanager.numberOfTaskSlots: \"2\"}}\n  flinkVersion: v1_17\n  image: flink:1.17\n  job: {{jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar, parallelism: 2, state: running, upgradeMode: stateless}}\n  jobManager: {{replicas: 1, resource: {{cpu: 0.05, memory: 100m}}}}\n  serviceAccount: flink\n  taskManager: {{resource: {{cpu: 0.1, memory: 100m}}}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: flink-{i}, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, name: flink-{i}}}]\n{placement}"
        )
    };
    for i in 1..=6 {
        plane.apply(None, &flink(i)).await;
        let binding = format!("flink-{i}-flinkdeployment");
        eventually(&format!("FlinkDeployment {i} scheduled"), || async {
            let got = scheduled(plane, ns, &binding).await;
            if got.starts_with("True ") {
                Ok(())
            } else {
                Err(got)
            }
        })
        .await;
    }
    plane.apply(None, &flink(7)).await;
    eventually("the seventh FlinkDeployment finds no room", || async {
        let got = scheduled(plane, ns, "flink-7-flinkdeployment").await;
        if got.starts_with("False SchedulerError ") && got.contains("no enough resource") {
            Ok(())
        } else {
            Err(got)
        }
    })
    .await;
    // Nothing uses the quota in the member: only the assumed footprints fill it.
    assert_eq!(
        plane
            .get(Some(target), ns, "resourcequota/rq", "{.status.used.cpu}")
            .await,
        "0"
    );
    plane
        .apply(
            None,
            &format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: web, image: nginx, resources: {{requests: {{cpu: 200m}}, limits: {{cpu: 200m}}}}}}]}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]\n{placement}"
            ),
        )
        .await;
    eventually("a 200m Deployment finds no room either", || async {
        let got = scheduled(plane, ns, "web-deployment").await;
        if got.starts_with("False SchedulerError ") && got.contains("no enough resource") {
            Ok(())
        } else {
            Err(got)
        }
    })
    .await;
}

/// Karmada's `clusteraffinities_test.go` "[OverflowAffinities]": member quotas of 20m cap each
/// cluster at 2 replicas of 10m; an Aggregated Deployment with the second cluster as overflow
/// stays on the first at 2, spills 2 onto the overflow at 4, cannot be placed at 5, and leaves
/// the overflow first when scaled back to 2.
async fn overflow_follows_the_member_quotas(plane: &ControlPlane) {
    let ns = "overflow";
    let (primary, secondary) = (MEMBERS[0], MEMBERS[1]);
    plane.kubectl(&["create", "namespace", ns]).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: rq\n  namespace: {ns}\nspec:\n  hard:\n    requests.cpu: 20m\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: rq\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: v1, kind: ResourceQuota, name: rq}}\n  placement:\n    clusterAffinity: {{clusterNames: [{primary}, {secondary}]}}\n"
            ),
        )
        .await;
    for member in [primary, secondary] {
        await_value("the member quota's status", "20m 0", || {
            plane.get(
                Some(member),
                ns,
                "resourcequota/rq",
                "{.status.hard.requests\\.cpu} {.status.used.requests\\.cpu}",
            )
        })
        .await;
    }
    plane
        .apply(
            None,
            &format!(
                "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  placement:\n    clusterAffinities:\n    - affinityName: primary\n      clusterNames: [{primary}]\n      overflowAffinities:\n      - affinityName: secondary\n        clusterNames: [{secondary}]\n    replicaScheduling: {{replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: web\n        image: registry.k8s.io/pause:3.10\n        resources: {{requests: {{cpu: 10m}}}}\n"
            ),
        )
        .await;
    let clusters = || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{range .spec.clusters[*]}{.name}={.replicas} {end}",
        )
    };
    await_value(
        "only the primary at its cap",
        &format!("{primary}=2 "),
        clusters,
    )
    .await;
    // The primary's pods use its quota up before the scale-up is scheduled.
    await_value("the primary's quota used", "20m", || {
        plane.get(
            Some(primary),
            ns,
            "resourcequota/rq",
            "{.status.used.requests\\.cpu}",
        )
    })
    .await;
    // The scheduler's estimator sees the member through its own watch, which can trail the
    // member's status under load: let it catch up before the workload comes.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let scale = |replicas: &'static str| async move {
        plane
            .kubectl(&[
                "-n",
                ns,
                "scale",
                "deployment",
                "web",
                "--replicas",
                replicas,
            ])
            .await;
    };
    scale("4").await;
    await_value(
        "the overflow takes what the primary cannot",
        &format!("{primary}=2 {secondary}=2 "),
        clusters,
    )
    .await;
    // Without Karmada's assumed in-flight workloads (gate SchedulingOvercommitProtection, not
    // modelled), the estimator sees the overflow's quota used once its pods exist.
    await_value("the overflow's quota used", "20m", || {
        plane.get(
            Some(secondary),
            ns,
            "resourcequota/rq",
            "{.status.used.requests\\.cpu}",
        )
    })
    .await;
    // The scheduler's estimator sees the member through its own watch, which can trail the
    // member's status under load: let it catch up before the workload comes.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    scale("5").await;
    await_value("5 do not fit both quotas", "False", || {
        plane.get(
            None,
            ns,
            "resourcebinding/web-deployment",
            "{.status.conditions[?(@.type==\"Scheduled\")].status}",
        )
    })
    .await;
    scale("2").await;
    await_value(
        "back to the primary alone",
        &format!("{primary}=2 "),
        clusters,
    )
    .await;
    await_value("the overflow's Deployment gone", "", || {
        plane.get(Some(secondary), ns, "deployment/web", "{.metadata.name}")
    })
    .await;
}
