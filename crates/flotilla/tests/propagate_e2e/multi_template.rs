//! Karmada's `schedule_multi_template_test.go` through `up --demo` with gate
//! `MultiplePodTemplatesScheduling`: a FlinkDeployment and a Volcano Job (their CRDs propagated
//! to every member first) get `spec.components` on their bindings from the third-party
//! interpretation — job and task managers, one component per Volcano task, with their replicas
//! and requests — are scheduled to exactly one cluster and appear there.

use serde_json::Value;

use crate::support::{ControlPlane, MEMBERS, eventually};

const NS: &str = "multi-template-e2e";

fn crd(group: &str, version: &str, kind: &str, plural: &str) -> String {
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
    for member in MEMBERS {
        for crd in ["flinkdeployments.flink.apache.org", "jobs.batch.volcano.sh"] {
            eventually(&format!("CRD {crd} in {member}"), || async {
                plane
                    .try_kubectl(&["--context", member, "get", "crd", crd, "-o", "name"])
                    .await
                    .map(drop)
            })
            .await;
        }
    }
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
