//! Karmada's descheduler (`up --enable-descheduler`, with the accurate estimator): replicas a
//! member can no longer schedule are taken from it and placed where there is room.

use crate::support::{ControlPlane, await_value};

const NS: &str = "descheduling";

/// Six replicas of 40 CPUs (one or two per simulated node), divided by available replicas.
const TRAINER: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: descheduling
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: descheduling
spec:
  replicas: 6
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: trainer
        image: vllm/vllm-openai:v0.6.3
        resources:
          requests: {cpu: "40"}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: trainer
  namespace: descheduling
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: trainer}
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        dynamicWeight: AvailableReplicas
"#;

/// `cluster:replicas` of the binding's `spec.clusters`, in order.
async fn placement(plane: &ControlPlane) -> String {
    plane
        .get(
            None,
            NS,
            "resourcebinding/trainer-deployment",
            "{range .spec.clusters[*]}{.name}:{.replicas} {end}",
        )
        .await
}

/// The pods of us-west-2 lose their nodes (cordoned, pods deleted): their replacements stay
/// Pending, the descheduler takes those replicas from us-west-2 and the scheduler gives them to
/// the other members, where they run; the decision is an Event on the binding and the template.
pub async fn unschedulable_replicas_move_to_members_with_room(plane: &ControlPlane) {
    plane.apply(None, TRAINER).await;
    await_value(
        "trainer divided 2/2/2 by available replicas",
        "cn-shanghai:2 eu-central-1:2 us-west-2:2 ",
        || placement(plane),
    )
    .await;
    await_value("trainer ready in every member", "6", || {
        plane.get(None, NS, "deployment/trainer", "{.status.readyReplicas}")
    })
    .await;
    // Nothing is unschedulable: a few passes of the descheduler change nothing.
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert_eq!(
        placement(plane).await,
        "cn-shanghai:2 eu-central-1:2 us-west-2:2 "
    );

    let nodes = plane
        .kubectl(&["--context", "us-west-2", "get", "nodes", "-o", "name"])
        .await;
    let mut cordon = vec!["--context", "us-west-2", "cordon"];
    cordon.extend(nodes.lines());
    plane.kubectl(&cordon).await;
    plane
        .kubectl(&[
            "--context",
            "us-west-2",
            "-n",
            NS,
            "delete",
            "pods",
            "-l",
            "app=trainer",
        ])
        .await;
    await_value(
        "us-west-2's replacement pods unschedulable",
        "Unschedulable Unschedulable ",
        || {
            plane.get(
                Some("us-west-2"),
                NS,
                "pods",
                "{range .items[*]}{.status.conditions[?(@.type==\"PodScheduled\")].reason} {end}",
            )
        },
    )
    .await;

    await_value(
        "us-west-2's replicas descheduled and placed on the other members",
        "cn-shanghai:3 eu-central-1:3 ",
        || placement(plane),
    )
    .await;
    await_value("trainer ready again, in two members", "6", || {
        plane.get(None, NS, "deployment/trainer", "{.status.readyReplicas}")
    })
    .await;
    await_value("the trainer gone from us-west-2", "", || {
        plane.get(
            Some("us-west-2"),
            NS,
            "deployment/trainer",
            "{.metadata.name}",
        )
    })
    .await;
    let message = "Binding has been descheduled, 2 replica(s) in cluster(us-west-2), \
                   2 total descheduled replica(s)";
    for (kind, name) in [
        ("ResourceBinding", "trainer-deployment"),
        ("Deployment", "trainer"),
    ] {
        let selector = format!(
            "involvedObject.kind={kind},involvedObject.name={name},reason=DescheduleBindingSucceed"
        );
        let events = plane
            .kubectl(&[
                "-n",
                NS,
                "get",
                "events",
                "--field-selector",
                &selector,
                "-o",
                "jsonpath={range .items[*]}{.source.component}: {.message}{\"\\n\"}{end}",
            ])
            .await;
        assert_eq!(
            events.trim(),
            format!("karmada-descheduler: {message}"),
            "the Event on the {kind}"
        );
    }
}
