//! Karmada's "PodDisruptionBudget collection testing" (`resource_test.go`): a Deployment of 3
//! replicas and a `maxUnavailable: 50%` budget propagated to every member; each member's
//! disruption controller computes the budget's status there, and the template's status is
//! their sum: 3 expected pods and ceil(3 × 50 %) = 2 disruptions per member.

use crate::support::{ControlPlane, MEMBERS, await_value};

const PDB: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: e2e-pdb}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: e2e-pdb}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx-pdb}}
  template:
    metadata: {labels: {app: nginx-pdb}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27, resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: e2e-pdb}
spec:
  maxUnavailable: 50%
  selector: {matchLabels: {app: nginx-pdb}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: e2e-pdb}
spec:
  resourceSelectors:
  - {apiVersion: policy/v1, kind: PodDisruptionBudget, name: web}
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinity: {clusterNames: [cn-shanghai, us-west-2, eu-central-1]}
"#;

pub async fn pdb_status_is_collected_from_members(plane: &ControlPlane) {
    let ns = "e2e-pdb";
    plane.apply(None, PDB).await;
    let per_member: Vec<String> = MEMBERS.iter().map(|m| format!("{m}=3/2")).collect();
    await_value(
        "pdb: each member's disruption controller counts its 3 pods",
        &per_member.join("\n"),
        || {
            plane.per_member(
                ns,
                "poddisruptionbudget/web",
                "{.status.expectedPods}/{.status.disruptionsAllowed}",
            )
        },
    )
    .await;
    let members = MEMBERS.len();
    await_value(
        "pdb: the template's status sums the members'",
        &format!("{}/{}/{}", 3 * members, 2 * members, 3 * members),
        || {
            plane.get(
                None,
                ns,
                "poddisruptionbudget/web",
                "{.status.expectedPods}/{.status.disruptionsAllowed}/{.status.currentHealthy}",
            )
        },
    )
    .await;
    plane.kubectl(&["delete", "namespace", ns]).await;
    let gone: Vec<String> = MEMBERS.iter().map(|m| format!("{m}=")).collect();
    await_value(
        "pdb: the members' copies are deleted",
        &gone.join("\n"),
        || plane.per_member(ns, "deployment/web", "{.metadata.name}"),
    )
    .await;
}
