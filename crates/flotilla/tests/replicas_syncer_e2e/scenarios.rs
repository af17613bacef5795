//! The cases, each in its own namespace of the shared control plane. Karmada's numbering
//! (`deploymentreplicassyncer_test.go`, Case 1–5) is kept in the comments.

use crate::support::{ControlPlane, await_value, eventually};

/// The two members every case places on (Karmada's e2e takes two cluster names, sorted).
const TARGETS: [&str; 2] = ["cn-shanghai", "eu-central-1"];

/// The label `hpaScaleTargetMarker` writes, as a kubectl JSONPath.
const RETAIN_LABEL: &str = "{.metadata.labels.resourcetemplate\\.karmada\\.io/retain-replicas}";

#[derive(Clone, Copy)]
enum Scheduling {
    Duplicated,
    /// Static weights 1:1 over [`TARGETS`].
    Divided,
}

/// Namespace `ns`, Deployment `web` with `replicas`, HPA `web` (`minReplicas: min`) scaling
/// it, and the PropagationPolicy `web` placing both on [`TARGETS`].
fn manifests(ns: &str, replicas: i32, min: i32, scheduling: Scheduling) -> String {
    let [a, b] = TARGETS;
    let replica_scheduling = match scheduling {
        Scheduling::Duplicated => String::new(),
        Scheduling::Divided => format!(
            "    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {{clusterNames: [{a}]}}
          weight: 1
        - targetCluster: {{clusterNames: [{b}]}}
          weight: 1
"
        ),
    };
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
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    name: web
  placement:
    clusterAffinity:
      clusterNames: [{a}, {b}]
{replica_scheduling}---
{deployment}---
{hpa}",
        deployment = deployment(ns, "web", replicas),
        hpa = hpa(ns, "web", "web", min),
    )
}

fn deployment(ns: &str, name: &str, replicas: i32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {ns}
  labels: {{app: {name}}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: {name}
        image: nginx:1.27
        resources:
          requests: {{cpu: 10m, memory: 16Mi}}
"
    )
}

fn hpa(ns: &str, name: &str, target: &str, min: i32) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {name}
  namespace: {ns}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {target}
  minReplicas: {min}
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {{type: Utilization, averageUtilization: 80}}
"
    )
}

/// `member=value` lines for [`TARGETS`] (`None`: the member has no such Deployment).
fn per_target(values: [Option<i32>; 2]) -> String {
    TARGETS
        .iter()
        .zip(values)
        .map(|(member, value)| {
            format!(
                "{member}={}",
                value.map_or(String::new(), |v| v.to_string())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `jsonpath` of Deployment `name` in each of [`TARGETS`], as `member=value` lines.
async fn in_targets(plane: &ControlPlane, ns: &str, name: &str, jsonpath: &str) -> String {
    let mut lines = Vec::new();
    for member in TARGETS {
        let value = plane
            .get(Some(member), ns, &format!("deployment/{name}"), jsonpath)
            .await;
        lines.push(format!("{member}={value}"));
    }
    lines.join("\n")
}

/// Who last wrote the template's `spec` after a user's scale from generation `before`.
#[derive(Clone, Copy, Debug)]
enum Writer {
    /// Not checked.
    Anyone,
    /// The user only: the syncer left the scaled template alone.
    User { before: i64 },
    /// The syncer rewrote `spec.replicas` after the user.
    Syncer { before: i64 },
}

/// Waits until the members of Deployment `web` run
/// `members`, the template asks for `replicas` (with its status observing its generation, as
/// Karmada's assertion requires) and its generation shows `writer`.
async fn await_replicas(
    plane: &ControlPlane,
    ns: &str,
    members: [Option<i32>; 2],
    replicas: i32,
    writer: Writer,
) {
    let want_members = per_target(members);
    eventually(
        &format!("{ns}: members {members:?}, template {replicas} ({writer:?})"),
        || async {
            let got_members = in_targets(plane, ns, "web", "{.spec.replicas}").await;
            let template = plane
                .get(
                    None,
                    ns,
                    "deployment/web",
                    "{.spec.replicas} {.metadata.generation} {.status.observedGeneration}",
                )
                .await;
            let numbers: Vec<i64> = template
                .split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect();
            let template_ok = match numbers[..] {
                [spec, generation, observed] => {
                    spec == i64::from(replicas)
                        && generation == observed
                        && match writer {
                            Writer::Anyone => true,
                            Writer::User { before } => generation == before + 1,
                            Writer::Syncer { before } => generation >= before + 2,
                        }
                }
                _ => false,
            };
            if got_members == want_members && template_ok {
                Ok(())
            } else {
                Err(format!(
                    "members:\n{got_members}\ntemplate spec.replicas generation observedGeneration: {template}"
                ))
            }
        },
    )
    .await;
}

/// The template's `metadata.generation`.
async fn generation(plane: &ControlPlane, ns: &str) -> i64 {
    let text = plane
        .get(None, ns, "deployment/web", "{.metadata.generation}")
        .await;
    text.parse()
        .unwrap_or_else(|_| panic!("a generation, got {text:?}"))
}

/// `kubectl scale` of the template to `replicas`; returns the generation before it.
async fn scale_template(plane: &ControlPlane, ns: &str, replicas: i32) -> i64 {
    let before = generation(plane, ns).await;
    plane
        .kubectl(&[
            "-n",
            ns,
            "scale",
            "deployment/web",
            &format!("--replicas={replicas}"),
        ])
        .await;
    before
}

/// What Karmada's `UpdateHPAWithMinReplicas` does: a new `minReplicas` on the template HPA
/// (propagated to the members, whose HPAs the test then plays).
async fn set_min_replicas(plane: &ControlPlane, ns: &str, min: i32) {
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "hpa",
            "web",
            "--type=merge",
            "-p",
            &format!("{{\"spec\":{{\"minReplicas\":{min}}}}}"),
        ])
        .await;
}

/// Applies [`manifests`] and waits until the HPA marked the template and the members' copies.
async fn propagate(
    plane: &ControlPlane,
    ns: &str,
    replicas: i32,
    min: i32,
    scheduling: Scheduling,
) {
    plane
        .apply(None, &manifests(ns, replicas, min, scheduling))
        .await;
    await_value(&format!("{ns}: the HPA marks its template"), "true", || {
        plane.get(None, ns, "deployment/web", RETAIN_LABEL)
    })
    .await;
}

/// Members whose replicas a user's scale of the template must not touch: their generations
/// before and after are the same (their `spec` was never rewritten).
async fn member_generations(plane: &ControlPlane, ns: &str) -> String {
    in_targets(plane, ns, "web", "{.metadata.generation}").await
}

/// Case 1: Duplicated, 2 replicas, HPA minReplicas 2. The member HPAs raise both to 3 and the
/// template keeps 2; the user scales the template to 4, then 1: the template takes it, the
/// members keep 3.
pub async fn duplicated_members_keep_their_replicas_and_the_template_its_own(plane: &ControlPlane) {
    let ns = "e2e-hpa-duplicated";
    propagate(plane, ns, 2, 2, Scheduling::Duplicated).await;
    await_replicas(plane, ns, [Some(2), Some(2)], 2, Writer::Anyone).await;

    set_min_replicas(plane, ns, 3).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 2, Writer::Anyone).await;

    let members_before = member_generations(plane, ns).await;
    let before = scale_template(plane, ns, 4).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 4, Writer::User { before }).await;
    let before = scale_template(plane, ns, 1).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 1, Writer::User { before }).await;
    assert_eq!(
        member_generations(plane, ns).await,
        members_before,
        "the members' replicas were never rewritten"
    );
}

/// Case 2: Divided 1:1, 4 replicas, HPA minReplicas 2. The member HPAs raise both to 3: the
/// template becomes 6. The user scales the template to 10, then 2: the members keep 3 each and
/// the template goes back to 6.
pub async fn divided_template_follows_the_member_hpas(plane: &ControlPlane) {
    let ns = "e2e-hpa-divided";
    propagate(plane, ns, 4, 2, Scheduling::Divided).await;
    await_replicas(plane, ns, [Some(2), Some(2)], 4, Writer::Anyone).await;

    set_min_replicas(plane, ns, 3).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 6, Writer::Anyone).await;

    let members_before = member_generations(plane, ns).await;
    let before = scale_template(plane, ns, 10).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 6, Writer::Syncer { before }).await;
    let before = scale_template(plane, ns, 2).await;
    await_replicas(plane, ns, [Some(3), Some(3)], 6, Writer::Syncer { before }).await;
    assert_eq!(
        member_generations(plane, ns).await,
        members_before,
        "the members' replicas were never rewritten"
    );
}

/// Case 3: Divided 1:1, 1 replica (one member has none), HPA minReplicas 1. The user scales
/// the template to 2: each member runs 1 and the template keeps 2.
pub async fn divided_scale_up_from_one_member_to_two(plane: &ControlPlane) {
    let ns = "e2e-hpa-zero-to-one";
    propagate(plane, ns, 1, 1, Scheduling::Divided).await;
    await_replicas_total(plane, ns, 1).await;

    scale_template(plane, ns, 2).await;
    await_replicas(plane, ns, [Some(1), Some(1)], 2, Writer::Anyone).await;
}

/// Case 3's first step: the template asks for `replicas` and the members run them in all
/// (which member gets a lone replica is the scheduler's choice).
async fn await_replicas_total(plane: &ControlPlane, ns: &str, replicas: i32) {
    eventually(&format!("{ns}: {replicas} replicas in all"), || async {
        let members = in_targets(plane, ns, "web", "{.spec.replicas}").await;
        let total: i32 = members
            .lines()
            .filter_map(|line| line.split_once('=')?.1.parse::<i32>().ok())
            .sum();
        let template = plane
            .get(
                None,
                ns,
                "deployment/web",
                "{.spec.replicas} {.metadata.generation} {.status.observedGeneration}",
            )
            .await;
        let parts: Vec<&str> = template.split_whitespace().collect();
        let ok = total == replicas
            && parts.len() == 3
            && parts[0] == replicas.to_string()
            && parts[1] == parts[2];
        if ok {
            Ok(())
        } else {
            Err(format!("members:\n{members}\ntemplate: {template}"))
        }
    })
    .await;
}

/// Case 4: Divided 1:1, 2 replicas, HPA minReplicas 1. The user scales the template to 1: one
/// member keeps the Deployment, the binding aggregates one cluster, the template keeps 1.
pub async fn divided_scale_down_to_one_member(plane: &ControlPlane) {
    let ns = "e2e-hpa-one-to-zero";
    propagate(plane, ns, 2, 1, Scheduling::Divided).await;
    await_replicas(plane, ns, [Some(1), Some(1)], 2, Writer::Anyone).await;

    scale_template(plane, ns, 1).await;
    let aggregated = eventually(&format!("{ns}: one cluster aggregated"), || async {
        let names = plane
            .get(
                None,
                ns,
                "resourcebinding/web-deployment",
                "{.status.aggregatedStatus[*].clusterName}",
            )
            .await;
        if names.split_whitespace().count() == 1 {
            Ok(names)
        } else {
            Err(names)
        }
    })
    .await;
    assert!(
        TARGETS.contains(&aggregated.as_str()),
        "one of the targets: {aggregated}"
    );
    await_replicas_total(plane, ns, 1).await;
}

/// Case 5: Divided 1:1, 1 replica, HPA minReplicas 2. The member with the replica is raised to
/// 2, the template follows (2), the other member gets 1 and is raised to 2, the template
/// follows again: 2 and 2 in the members, 4 in the template.
pub async fn divided_one_replica_with_min_two_settles_at_two_each(plane: &ControlPlane) {
    let ns = "e2e-hpa-min-two";
    propagate(plane, ns, 1, 2, Scheduling::Divided).await;
    await_replicas(plane, ns, [Some(2), Some(2)], 4, Writer::Anyone).await;
}

/// The marker on its own: an HPA retargeted from `web` to `api` moves the label (and `web`'s
/// members go back to the template's replicas), an HPA no policy propagates marks nothing,
/// and a deleted HPA takes the label with it.
pub async fn the_label_follows_the_hpa(plane: &ControlPlane) {
    let ns = "e2e-hpa-marker";
    let [a, b] = TARGETS;
    let yaml = format!(
        "apiVersion: v1
kind: Namespace
metadata:
  name: {ns}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: apps
  namespace: {ns}
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  - apiVersion: apps/v1
    kind: Deployment
    name: api
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    name: web
  placement:
    clusterAffinity:
      clusterNames: [{a}, {b}]
---
{web}---
{api}---
{other}---
{loose}---
{hpa}",
        web = deployment(ns, "web", 2),
        api = deployment(ns, "api", 2),
        other = deployment(ns, "other", 1),
        // No policy selects this HPA: it marks nothing.
        loose = hpa(ns, "loose", "other", 3),
        hpa = hpa(ns, "web", "web", 3),
    );
    plane.apply(None, &yaml).await;
    let labels = || async {
        let mut out = Vec::new();
        for name in ["web", "api", "other"] {
            let value = plane
                .get(None, ns, &format!("deployment/{name}"), RETAIN_LABEL)
                .await;
            out.push(format!("{name}={value}"));
        }
        out.join(" ")
    };
    await_value("marker: web is marked", "web=true api= other=", labels).await;
    // Marked members keep what their HPA sets.
    await_value(
        "marker: web's members keep what their HPA set",
        &per_target([Some(3), Some(3)]),
        || async { in_targets(plane, ns, "web", "{.spec.replicas}").await },
    )
    .await;

    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "hpa",
            "web",
            "--type=merge",
            "-p",
            "{\"spec\":{\"scaleTargetRef\":{\"name\":\"api\"}}}",
        ])
        .await;
    await_value(
        "marker: the label moves to api",
        "web= api=true other=",
        labels,
    )
    .await;
    // Without the label the template owns web's replicas again, in the members too.
    await_value(
        "marker: web's members back to the template's 2",
        &per_target([Some(2), Some(2)]),
        || in_targets(plane, ns, "web", "{.spec.replicas}"),
    )
    .await;
    await_value(
        "marker: api's members keep what their HPA set",
        &per_target([Some(3), Some(3)]),
        || async { in_targets(plane, ns, "api", "{.spec.replicas}").await },
    )
    .await;

    plane.kubectl(&["-n", ns, "delete", "hpa", "web"]).await;
    await_value(
        "marker: the deleted HPA unmarks api",
        "web= api= other=",
        labels,
    )
    .await;
    await_value(
        "marker: api's members back to the template's 2",
        &per_target([Some(2), Some(2)]),
        || in_targets(plane, ns, "api", "{.spec.replicas}"),
    )
    .await;
}
