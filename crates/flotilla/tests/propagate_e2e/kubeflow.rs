//! A Kubeflow PyTorchJob through `up --demo` with gate `MultiplePodTemplatesScheduling`: the
//! bundled third-party interpretation (Karmada's `thirdparty` customizations, Flotilla's own
//! scripts) gives its binding a `master` and a `worker` component, carries the ConfigMap its
//! pod templates read along (`propagateDeps`), judges its health and aggregates the status a
//! training operator would write in the member back onto the template. The members run no
//! training operator: the test writes the member's status as one would.

use serde_json::Value;

use crate::multi_template::crd;
use crate::support::{ControlPlane, await_value, eventually};

const NS: &str = "kubeflow-e2e";
const CLUSTER: &str = "us-west-2";

const JOB: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: train-env, namespace: kubeflow-e2e}
data: {EPOCHS: \"3\"}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train, namespace: kubeflow-e2e}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: pytorch/pytorch:2.4, resources: {requests: {cpu: 200m, memory: 256Mi}}}]
    Worker:
      replicas: 2
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4
            envFrom: [{configMapRef: {name: train-env}}]
            resources: {requests: {cpu: 100m, memory: 128Mi}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: train, namespace: kubeflow-e2e}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: train}]
  placement:
    clusterAffinity: {clusterNames: [us-west-2]}
";

async fn binding(plane: &ControlPlane) -> Result<Value, String> {
    let out = plane
        .try_kubectl(&[
            "-n",
            NS,
            "get",
            "resourcebinding",
            "train-pytorchjob",
            "-o",
            "json",
        ])
        .await?;
    serde_json::from_str(&out).map_err(|e| e.to_string())
}

/// Writes the member PyTorchJob's status as the training operator would.
async fn operator_reports(plane: &ControlPlane, status: &str) {
    eventually("the member's PyTorchJob status written", || async {
        plane
            .try_kubectl(&[
                "--context",
                CLUSTER,
                "-n",
                NS,
                "patch",
                "pytorchjobs.kubeflow.org",
                "train",
                "--subresource=status",
                "--type=merge",
                "-p",
                status,
            ])
            .await
            .map(drop)
    })
    .await;
}

pub async fn a_pytorch_job_is_interpreted_by_the_bundled_rules(plane: &ControlPlane) {
    plane
        .apply(
            None,
            &crd("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
        )
        .await;
    eventually("PyTorchJob in the member's API enablements", || async {
        let listed = plane
            .kubectl(&[
                "get",
                "cluster",
                CLUSTER,
                "-o",
                "jsonpath={.status.apiEnablements[?(@.groupVersion==\"kubeflow.org/v1\")].resources[*].kind}",
            ])
            .await;
        if listed.split_whitespace().any(|k| k == "PyTorchJob") {
            Ok(())
        } else {
            Err(listed)
        }
    })
    .await;
    plane.kubectl(&["create", "namespace", NS]).await;
    plane.apply(None, JOB).await;

    // Components from the bundled componentResource rule, scheduled to the one cluster.
    let components = eventually("the binding's components, scheduled", || async {
        let rb = binding(plane).await?;
        let clusters: Vec<&str> = rb["spec"]["clusters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str())
            .collect();
        if clusters != [CLUSTER] {
            return Err(format!("clusters {clusters:?}"));
        }
        let components: Vec<(String, i64, String)> = rb["spec"]["components"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["name"].as_str().unwrap_or_default().to_owned(),
                    c["replicas"].as_i64().unwrap_or_default(),
                    c["replicaRequirements"]["resourceRequest"]["cpu"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        Ok(components)
    })
    .await;
    assert_eq!(
        components,
        [
            ("master".to_owned(), 1, "200m".to_owned()),
            ("worker".to_owned(), 2, "100m".to_owned()),
        ]
    );

    // The job and, through the bundled dependency rule, its ConfigMap reach the member.
    await_value("the ConfigMap in the member", "3", || {
        plane.get(Some(CLUSTER), NS, "configmap/train-env", "{.data.EPOCHS}")
    })
    .await;
    await_value("the PyTorchJob in the member", "train", || {
        plane.get(
            Some(CLUSTER),
            NS,
            "pytorchjobs.kubeflow.org/train",
            "{.metadata.name}",
        )
    })
    .await;

    // Running in the member: the template's status says so and the member counts as healthy.
    operator_reports(
        plane,
        r#"{"status":{"startTime":"2026-12-07T10:00:00Z","replicaStatuses":{"Master":{"active":1},"Worker":{"active":2}},"conditions":[{"type":"Created","status":"True","reason":"PyTorchJobCreated"},{"type":"Running","status":"True","reason":"PyTorchJobRunning","lastUpdateTime":"2026-12-07T10:01:00Z","lastTransitionTime":"2026-12-07T10:01:00Z"}]}}"#,
    )
    .await;
    await_value(
        "the template's aggregated status",
        "Created=True Running=True 2 2026-12-07T10:00:00Z",
        || {
            plane.get(
                None,
                NS,
                "pytorchjobs.kubeflow.org/train",
                "{range .status.conditions[*]}{.type}={.status} {end}{.status.replicaStatuses.Worker.active} {.status.startTime}",
            )
        },
    )
    .await;
    await_value("the member's health on the binding", "Healthy", || {
        plane.get(
            None,
            NS,
            "resourcebinding/train-pytorchjob",
            "{.status.aggregatedStatus[0].health}",
        )
    })
    .await;

    // Failed in the member: Failed names the cluster, and the member is unhealthy.
    operator_reports(
        plane,
        r#"{"status":{"completionTime":"2026-12-07T11:00:00Z","conditions":[{"type":"Created","status":"True"},{"type":"Running","status":"False"},{"type":"Failed","status":"True","reason":"PyTorchJobFailed"}]}}"#,
    )
    .await;
    await_value(
        "the template's Failed condition",
        "Failed PyTorchJob executed failed in member clusters: us-west-2",
        || {
            plane.get(
                None,
                NS,
                "pytorchjobs.kubeflow.org/train",
                "{.status.conditions[-1:].type} {.status.conditions[-1:].message}",
            )
        },
    )
    .await;
    await_value("the member's health on the binding", "Unhealthy", || {
        plane.get(
            None,
            NS,
            "resourcebinding/train-pytorchjob",
            "{.status.aggregatedStatus[0].health}",
        )
    })
    .await;

    plane
        .kubectl(&["delete", "namespace", NS, "--wait=false"])
        .await;
}
