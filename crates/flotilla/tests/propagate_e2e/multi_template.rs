//! Karmada's `schedule_multi_template_test.go` through `up --demo` with gate
//! `MultiplePodTemplatesScheduling`: a FlinkDeployment and a Volcano Job (their CRDs propagated
//! to every member first) get `spec.components` on their bindings from the third-party
//! interpretation — job and task managers, one component per Volcano task, with their replicas
//! and requests — are scheduled to exactly one cluster and appear there.

use serde_json::Value;

use crate::support::{ControlPlane, MEMBERS, eventually};

const NS: &str = "multi-template-e2e";

pub fn crd(group: &str, version: &str, kind: &str, plural: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: {plural}.{group}}}\nspec:\n  group: {group}\n  scope: Namespaced\n  names: {{kind: {kind}, plural: {plural}, singular: {singular}, listKind: {kind}List}}\n  versions:\n  - name: {version}\n    served: true\n    storage: true\n    subresources: {{status: {{}}}}\n    schema:\n      openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}\n---\napiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {{name: {plural}-crd}}\nspec:\n  resourceSelectors: [{{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: {plural}.{group}}}]\n  placement: {{clusterAffinity: {{clusterNames: [{}]}}}}\n",
        MEMBERS.join(", "),
        singular = kind.to_lowercase(),
    )
}

const FLINK: &str = "apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: flink-e2e, namespace: multi-template-e2e}
spec:
  flinkConfiguration: {taskmanager.numberOfTaskSlots: \"2\"}
  flinkVersion: v1_17
  image: flink:1.17
  job: {jarURI: local:///opt/flink/examples/streaming/StateMachineExample.jar, parallelism: 2, state: running, upgradeMode: stateless}
  jobManager: {replicas: 1, resource: {cpu: 0.05, memory: 100m}}
  serviceAccount: flink
  taskManager: {resource: {cpu: 0.1, memory: 100m}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: flink-e2e, namespace: multi-template-e2e}
spec:
  resourceSelectors: [{apiVersion: flink.apache.org/v1beta1, kind: FlinkDeployment, name: flink-e2e}]
  placement:
    clusterAffinity: {clusterNames: [cn-shanghai, us-west-2, eu-central-1]}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
";

const VOLCANO: &str = "apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: volcano-e2e, namespace: multi-template-e2e}
spec:
  minAvailable: 3
  queue: default
  schedulerName: volcano
  tasks:
  - name: job-nginx1
    minAvailable: 1
    replicas: 1
    template:
      spec:
        containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 200m, memory: 100Mi}}}]
        nodeSelector: {kubernetes.io/os: linux}
        restartPolicy: OnFailure
  - name: job-nginx2
    minAvailable: 2
    replicas: 3
    template:
      spec:
        containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
        nodeSelector: {kubernetes.io/os: linux}
        restartPolicy: OnFailure
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: volcano-e2e, namespace: multi-template-e2e}
spec:
  resourceSelectors: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: volcano-e2e}]
  placement:
    clusterAffinity: {clusterNames: [cn-shanghai, us-west-2, eu-central-1]}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
";

/// `(name, replicas, cpu, memory)` of the binding's components, once it is scheduled, and the
/// cluster it went to.
async fn scheduled(
    plane: &ControlPlane,
    binding: &str,
) -> (Vec<(String, i64, String, String)>, String) {
    eventually(
        &format!("binding {binding} scheduled to one cluster"),
        || async {
            let out = plane
                .try_kubectl(&["-n", NS, "get", "resourcebinding", binding, "-o", "json"])
                .await?;
            let rb: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
            let clusters = rb["spec"]["clusters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let scheduled = rb["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Scheduled" && c["status"] == "True");
            if !scheduled || clusters.len() != 1 {
                return Err(format!("clusters {clusters:?}, scheduled {scheduled}"));
            }
            let components = rb["spec"]["components"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let request = &c["replicaRequirements"]["resourceRequest"];
                    (
                        c["name"].as_str().unwrap_or_default().to_owned(),
                        c["replicas"].as_i64().unwrap_or_default(),
                        request["cpu"].as_str().unwrap_or_default().to_owned(),
                        request["memory"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            let cluster = clusters[0]["name"].as_str().unwrap_or_default().to_owned();
            Ok((components, cluster))
        },
    )
    .await
}

/// Waits until every member's Cluster status lists both kinds in its API enablements (what
/// Karmada's `WaitCRDPresentOnClusters` waits for: the scheduler places a workload only on
/// clusters whose status says they serve its kind, and a status change does not requeue an
/// unschedulable binding).
async fn kinds_enabled(plane: &ControlPlane) {
    for member in MEMBERS {
        for (group_version, kind) in [
            ("flink.apache.org/v1beta1", "FlinkDeployment"),
            ("batch.volcano.sh/v1alpha1", "Job"),
        ] {
            eventually(&format!("{kind} in {member}'s API enablements"), || async {
                let listed = plane
                    .kubectl(&[
                        "get",
                        "cluster",
                        member,
                        "-o",
                        &format!(
                            "jsonpath={{.status.apiEnablements[?(@.groupVersion==\"{group_version}\")].resources[*].kind}}"
                        ),
                    ])
                    .await;
                if listed.split_whitespace().any(|k| k == kind) {
                    Ok(())
                } else {
                    Err(listed)
                }
            })
            .await;
        }
    }
}

async fn present(plane: &ControlPlane, cluster: &str, resource: &str, name: &str) {
    eventually(&format!("{resource} {name} in {cluster}"), || async {
        plane
            .try_kubectl(&[
                "--context",
                cluster,
                "-n",
                NS,
                "get",
                resource,
                name,
                "-o",
                "name",
            ])
            .await
            .map(drop)
    })
    .await;
}

pub async fn multi_template_workloads_go_to_one_cluster_with_their_components(
    plane: &ControlPlane,
) {
    plane
        .apply(
            None,
            &format!(
                "{}---\n{}",
                crd(
                    "flink.apache.org",
                    "v1beta1",
                    "FlinkDeployment",
                    "flinkdeployments"
                ),
                crd("batch.volcano.sh", "v1alpha1", "Job", "jobs")
            ),
        )
        .await;
    kinds_enabled(plane).await;
    plane.kubectl(&["create", "namespace", NS]).await;
    plane.apply(None, FLINK).await;
    plane.apply(None, VOLCANO).await;

    let (components, cluster) = scheduled(plane, "flink-e2e-flinkdeployment").await;
    assert_eq!(
        components,
        [
            (
                "jobmanager".to_owned(),
                1,
                "50m".to_owned(),
                "100m".to_owned()
            ),
            (
                "taskmanager".to_owned(),
                1,
                "100m".to_owned(),
                "100m".to_owned()
            ),
        ]
    );
    present(
        plane,
        &cluster,
        "flinkdeployments.flink.apache.org",
        "flink-e2e",
    )
    .await;

    let (components, cluster) = scheduled(plane, "volcano-e2e-job").await;
    assert_eq!(
        components,
        [
            (
                "job-nginx1".to_owned(),
                1,
                "200m".to_owned(),
                "100Mi".to_owned()
            ),
            (
                "job-nginx2".to_owned(),
                2,
                "100m".to_owned(),
                "100Mi".to_owned()
            ),
        ]
    );
    present(plane, &cluster, "jobs.batch.volcano.sh", "volcano-e2e").await;

    plane
        .kubectl(&["delete", "namespace", NS, "--wait=false"])
        .await;
}

/// Karmada's FederatedResourceQuota case "usage should be calculated correctly" for a
/// FlinkDeployment (gate `FederatedQuotaEnforcement`): the quota counts each component's
/// requests × replicas on its one cluster.
pub async fn a_federated_quota_counts_a_flink_deployments_components(plane: &ControlPlane) {
    let ns = "frq-flink-e2e";
    plane.kubectl(&["create", "namespace", ns]).await;
    plane
        .apply(
            None,
            &format!(
                "apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata: {{name: flink, namespace: {ns}}}\nspec:\n  overall: {{cpu: \"10\", memory: 1Gi}}\n"
            ),
        )
        .await;
    // As Karmada's case does, wait for the quota's status before creating workloads under it.
    eventually("the quota's overall status", || async {
        let overall = plane
            .get(
                None,
                ns,
                "federatedresourcequota/flink",
                "{.status.overall.cpu}",
            )
            .await;
        if overall == "10" {
            Ok(())
        } else {
            Err(overall)
        }
    })
    .await;
    // The Flink CRD comes from the multi-template scenario running alongside.
    kinds_enabled(plane).await;
    let flink = FLINK.replace("namespace: multi-template-e2e", &format!("namespace: {ns}"));
    let flink = flink.replacen(
        "    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]\n",
        "    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]\n    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}\n",
        1,
    );
    eventually("the FlinkDeployment accepted", || async {
        let path = plane.home.join("frq-flink.yaml");
        std::fs::write(&path, &flink).map_err(|e| e.to_string())?;
        plane
            .try_kubectl(&["apply", "-f", &path.to_string_lossy()])
            .await
            .map(drop)
    })
    .await;
    eventually("overallUsed counts both managers", || async {
        let used = plane
            .get(
                None,
                ns,
                "federatedresourcequota/flink",
                "{.status.overallUsed}",
            )
            .await;
        let used: Value = serde_json::from_str(&used).unwrap_or(Value::Null);
        if used == serde_json::json!({"cpu": "150m", "memory": "200m"}) {
            Ok(())
        } else {
            let binding = plane
                .try_kubectl(&["-n", ns, "get", "rb", "-o", "json"])
                .await
                .unwrap_or_else(|e| e);
            let quota = plane
                .try_kubectl(&[
                    "-n",
                    ns,
                    "get",
                    "federatedresourcequota",
                    "flink",
                    "-o",
                    "json",
                ])
                .await
                .unwrap_or_else(|e| e);
            let events = plane
                .try_kubectl(&["-n", ns, "get", "events"])
                .await
                .unwrap_or_else(|e| e);
            Err(format!(
                "used {used}\nbindings {binding}\nquota {quota}\nevents {events}"
            ))
        }
    })
    .await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
}
