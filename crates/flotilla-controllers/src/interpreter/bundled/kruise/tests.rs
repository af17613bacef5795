//! Tests of this group's bundled customizations (behaviour a user relies on, per kind).

use flotilla_api::karmada::AggregatedStatusItem;
use flotilla_api::karmada::replicas::InterpretedReplicas;
use futures::FutureExt as _;
use serde_json::{Value, json};

use super::super::tests::{aggregate, dependencies, health, item, reflect, retain, with_status};
use crate::interpreter::Customizations;

const V1ALPHA1: &str = "apps.kruise.io/v1alpha1";
const V1BETA1: &str = "apps.kruise.io/v1beta1";

/// A pod template requesting `cpu`, reading `config` (env and a volume) and `secret` (env).
fn app_template(cpu: &str, config: &str, secret: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "shop"}},
        "spec": {
            "containers": [{
                "name": "web",
                "image": "nginx:1.27",
                "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}},
                "env": [
                    {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": config, "key": "mode"}}},
                    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": "token"}}},
                ],
            }],
            "volumes": [{"name": "settings", "configMap": {"name": config}}],
        },
    })
}

/// A pod template that refers to nothing.
fn bare_template() -> Value {
    json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})
}

fn object(api_version: &str, kind: &str, spec: Value) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": "shop", "namespace": "retail", "generation": 3},
        "spec": spec,
    })
}

/// A member that reported no status.
fn silent(cluster: &str) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.into(),
        applied: true,
        ..AggregatedStatusItem::default()
    }
}

async fn replicas(object: &Value) -> InterpretedReplicas {
    Customizations::none()
        .interpret_replica(object)
        .await
        .expect("bundled")
        .expect("interprets")
}

fn revise(object: &Value, replicas: i32) -> Value {
    Customizations::none()
        .revise_replica(object, replicas)
        .expect("bundled")
        .expect("revises")
}

fn refs(expected: &[(&str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(kind, name)| ((*kind).to_owned(), "retail".to_owned(), (*name).to_owned()))
        .collect()
}

fn requests(interpreted: &InterpretedReplicas) -> Value {
    let requirements =
        serde_json::to_value(interpreted.requirements.as_ref().expect("requirements"))
            .expect("serializes");
    requirements["resourceRequest"].clone()
}

fn annotated(object: &Value, rendered: &str) -> Value {
    let mut observed = object.clone();
    observed["metadata"]["annotations"] =
        json!({"resourcetemplate.karmada.io/generation": rendered});
    observed
}

// ---------------------------------------------------------------- CloneSet

fn clone_set() -> Value {
    object(
        V1ALPHA1,
        "CloneSet",
        json!({"replicas": 4, "selector": {"matchLabels": {"app": "shop"}},
               "template": app_template("500m", "shop-config", "shop-token")}),
    )
}

#[tokio::test]
async fn a_clone_set_divides_its_replicas_and_depends_on_its_pod_template() {
    let interpreted = replicas(&clone_set()).await;
    assert_eq!(interpreted.replicas, 4);
    assert_eq!(
        requests(&interpreted),
        json!({"cpu": "500m", "memory": "128Mi"})
    );

    let revised = revise(&clone_set(), 1);
    assert_eq!(revised["spec"]["replicas"], 1);
    assert_eq!(revised["spec"]["template"], clone_set()["spec"]["template"]);

    assert_eq!(
        dependencies(&clone_set()).await,
        refs(&[("ConfigMap", "shop-config"), ("Secret", "shop-token")])
    );
    // Nothing referenced: no dependencies (Karmada's rule fails here instead).
    let mut bare = clone_set();
    bare["spec"]["template"] = bare_template();
    assert!(dependencies(&bare).await.is_empty());

    // No retention or component rule: those stay with the native interpreter.
    let customizations = Customizations::none();
    assert!(customizations.retain(&bare, &bare).await.is_none());
    assert!(
        customizations
            .interpret_components(&bare)
            .now_or_never()
            .expect("no webhook to wait for")
            .is_none()
    );
}

#[tokio::test]
async fn a_clone_set_reflects_its_counters_and_the_generation_it_was_rendered_from() {
    let observed = with_status(
        &annotated(&clone_set(), "7"),
        json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 1,
               "updatedReadyReplicas": 1, "expectedUpdatedReplicas": 2,
               "updateRevision": "shop-6d8f", "currentRevision": "shop-5c7e",
               "observedGeneration": 3, "labelSelector": "app=shop", "collisionCount": 0}),
    );
    assert_eq!(
        reflect(&observed).await,
        json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 1,
               "updatedReadyReplicas": 1, "expectedUpdatedReplicas": 2,
               "updateRevision": "shop-6d8f", "currentRevision": "shop-5c7e",
               "observedGeneration": 3, "labelSelector": "app=shop",
               "generation": 3, "resourceTemplateGeneration": 7})
    );
    // An annotation that is not a number is left out; no status reflects nothing.
    let reflected = reflect(&with_status(
        &annotated(&clone_set(), "seven"),
        json!({"replicas": 1}),
    ))
    .await;
    assert_eq!(reflected, json!({"replicas": 1, "generation": 3}));
    assert_eq!(reflect(&clone_set()).await, json!({}));
}

fn clone_set_member(
    cluster: &str,
    rendered: i64,
    observed: i64,
    ready: i64,
    revision: &str,
) -> AggregatedStatusItem {
    item(
        cluster,
        json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": ready, "availableReplicas": ready,
               "updatedReadyReplicas": ready, "expectedUpdatedReplicas": 2,
               "updateRevision": revision, "currentRevision": revision, "labelSelector": "app=shop",
               "generation": 5, "observedGeneration": observed, "resourceTemplateGeneration": rendered}),
    )
}

#[tokio::test]
async fn a_clone_set_sums_its_members_and_advances_its_generation_once_all_caught_up() {
    let template = with_status(&clone_set(), json!({"observedGeneration": 2}));
    let status = aggregate(
        &template,
        &[
            clone_set_member("us-east-1", 3, 5, 2, "shop-6d8f"),
            clone_set_member("eu-west-1", 3, 5, 1, ""),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 3,
               "availableReplicas": 3, "updatedReadyReplicas": 3, "expectedUpdatedReplicas": 4,
               "updateRevision": "shop-6d8f", "currentRevision": "shop-6d8f",
               "labelSelector": "app=shop"})
    );

    // A member whose controller has not observed its generation yet holds it back; so does
    // one rendered from an older template.
    for stale in [
        clone_set_member("eu-west-1", 3, 4, 2, "shop-6d8f"),
        clone_set_member("eu-west-1", 2, 5, 2, "shop-6d8f"),
    ] {
        let status = aggregate(
            &template,
            &[clone_set_member("us-east-1", 3, 5, 2, "shop-6d8f"), stale],
        )
        .await;
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["replicas"], 4);
    }

    // Counters a member leaves out add nothing.
    let status = aggregate(
        &clone_set(),
        &[
            item("a", json!({"replicas": 3, "readyReplicas": 1})),
            silent("b"),
        ],
    )
    .await;
    assert_eq!(
        (
            &status["replicas"],
            &status["readyReplicas"],
            &status["updatedReplicas"]
        ),
        (&json!(3), &json!(1), &json!(0))
    );
    assert_eq!(status["observedGeneration"], 0);
    assert_eq!(status["updateRevision"], "");

    // Placed nowhere: zeros, and the template's generation is observed.
    let status = aggregate(&template, &[]).await;
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(status["replicas"], 0);
    assert_eq!(status["expectedUpdatedReplicas"], 0);
    assert_eq!(status["labelSelector"], "");
}

#[tokio::test]
async fn a_clone_set_is_healthy_once_rolled_out_and_available() {
    let rolled_out = json!({"observedGeneration": 3, "updatedReplicas": 4, "availableReplicas": 4});
    assert!(health(&with_status(&clone_set(), rolled_out.clone())).await);

    let mut stale = rolled_out.clone();
    stale["observedGeneration"] = json!(2);
    assert!(!health(&with_status(&clone_set(), stale)).await);

    let mut rolling = rolled_out.clone();
    rolling["updatedReplicas"] = json!(3);
    rolling["availableReplicas"] = json!(3);
    assert!(!health(&with_status(&clone_set(), rolling)).await);

    let mut unavailable = rolled_out.clone();
    unavailable["availableReplicas"] = json!(3);
    assert!(!health(&with_status(&clone_set(), unavailable)).await);

    // Without spec.replicas only availability counts.
    let mut without_size = with_status(
        &clone_set(),
        json!({"observedGeneration": 3, "updatedReplicas": 1, "availableReplicas": 1}),
    );
    without_size["spec"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    assert!(health(&without_size).await);

    // Before its controller reports a status the script fails (the health is Unknown).
    let verdict = Customizations::none()
        .interpret_health(&clone_set())
        .await
        .expect("bundled");
    assert!(verdict.is_err());
}

// ---------------------------------------------------------------- StatefulSet (v1beta1)

fn stateful_set() -> Value {
    object(
        V1BETA1,
        "StatefulSet",
        json!({"replicas": 3, "serviceName": "shop",
               "template": app_template("1", "db-config", "db-password")}),
    )
}

#[tokio::test]
async fn an_advanced_stateful_set_divides_its_replicas_and_depends_on_its_pod_template() {
    let interpreted = replicas(&stateful_set()).await;
    assert_eq!(interpreted.replicas, 3);
    assert_eq!(requests(&interpreted)["cpu"], "1");
    let mut none = stateful_set();
    none["spec"]["replicas"] = json!(0);
    assert_eq!(replicas(&none).await.replicas, 0);

    assert_eq!(revise(&stateful_set(), 2)["spec"]["replicas"], 2);
    assert_eq!(
        dependencies(&stateful_set()).await,
        refs(&[("ConfigMap", "db-config"), ("Secret", "db-password")])
    );

    // Only v1beta1 is bundled.
    let mut older = stateful_set();
    older["apiVersion"] = json!(V1ALPHA1);
    assert!(
        Customizations::none()
            .interpret_replica(&older)
            .await
            .is_none()
    );
}

#[tokio::test]
async fn an_advanced_stateful_set_reflects_and_sums_counters_and_revisions_but_not_its_selector() {
    let observed = with_status(
        &annotated(&stateful_set(), "2"),
        json!({"replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 3,
               "availableReplicas": 2, "updatedReadyReplicas": 2, "observedGeneration": 3,
               "updateRevision": "shop-7b9", "currentRevision": "shop-7b9",
               "labelSelector": "app=shop", "collisionCount": 0}),
    );
    assert_eq!(
        reflect(&observed).await,
        json!({"replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 3,
               "availableReplicas": 2, "updatedReadyReplicas": 2, "observedGeneration": 3,
               "updateRevision": "shop-7b9", "currentRevision": "shop-7b9",
               "generation": 3, "resourceTemplateGeneration": 2})
    );

    let member = |cluster: &str, ready: i64, revision: &str| {
        item(
            cluster,
            json!({"replicas": 2, "readyReplicas": ready, "currentReplicas": 2, "updatedReplicas": 2,
                   "availableReplicas": ready, "updatedReadyReplicas": ready,
                   "updateRevision": revision, "currentRevision": revision, "labelSelector": "app=shop",
                   "generation": 1, "observedGeneration": 1, "resourceTemplateGeneration": 3}),
        )
    };
    let status = aggregate(
        &stateful_set(),
        &[member("a", 2, "shop-7b9"), member("b", 1, "shop-8c1")],
    )
    .await;
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 4, "readyReplicas": 3, "currentReplicas": 4,
               "updatedReplicas": 4, "availableReplicas": 3, "updatedReadyReplicas": 3,
               "updateRevision": "shop-8c1", "currentRevision": "shop-8c1"})
    );

    let template = with_status(&stateful_set(), json!({"observedGeneration": 2}));
    let status = aggregate(&template, &[member("a", 2, "x"), silent("b")]).await;
    assert_eq!(status["observedGeneration"], 2, "b has not reported");

    // Placed nowhere: zeros and empty revisions.
    assert_eq!(
        aggregate(&template, &[]).await,
        json!({"observedGeneration": 3, "replicas": 0, "readyReplicas": 0, "currentReplicas": 0,
               "updatedReplicas": 0, "availableReplicas": 0, "updatedReadyReplicas": 0,
               "updateRevision": "", "currentRevision": ""})
    );
}

#[tokio::test]
async fn an_advanced_stateful_set_is_healthy_once_rolled_out_and_available() {
    let status = |observed: i64, updated: i64, available: i64| {
        with_status(
            &stateful_set(),
            json!({"observedGeneration": observed, "updatedReplicas": updated, "availableReplicas": available}),
        )
    };
    assert!(health(&status(3, 3, 3)).await);
    assert!(!health(&status(2, 3, 3)).await);
    assert!(!health(&status(3, 2, 2)).await);
    assert!(!health(&status(3, 3, 2)).await);
}

// ---------------------------------------------------------------- DaemonSet

fn daemon_set() -> Value {
    object(
        V1ALPHA1,
        "DaemonSet",
        json!({"selector": {"matchLabels": {"app": "shop"}},
               "template": app_template("100m", "agent-config", "agent-key")}),
    )
}

#[tokio::test]
async fn an_advanced_daemon_set_runs_whole_in_each_member_and_depends_on_its_pod_template() {
    let customizations = Customizations::none();
    assert!(
        customizations
            .interpret_replica(&daemon_set())
            .await
            .is_none()
    );
    assert!(customizations.revise_replica(&daemon_set(), 1).is_none());
    assert_eq!(
        dependencies(&daemon_set()).await,
        refs(&[("ConfigMap", "agent-config"), ("Secret", "agent-key")])
    );
    let mut bare = daemon_set();
    bare["spec"]["template"] = bare_template();
    assert!(dependencies(&bare).await.is_empty());
}

#[tokio::test]
async fn an_advanced_daemon_set_reflects_and_sums_its_scheduling_counters() {
    let observed = with_status(
        &annotated(&daemon_set(), "3"),
        json!({"observedGeneration": 3, "currentNumberScheduled": 4, "numberMisscheduled": 1,
               "desiredNumberScheduled": 4, "numberReady": 3, "updatedNumberScheduled": 4,
               "numberAvailable": 3, "numberUnavailable": 1, "daemonSetHash": "7dd59cf749",
               "conditions": []}),
    );
    let reflected = reflect(&observed).await;
    assert_eq!(reflected["daemonSetHash"], "7dd59cf749");
    assert_eq!(reflected["numberUnavailable"], 1);
    assert_eq!(reflected["resourceTemplateGeneration"], 3);
    assert_eq!(reflected["generation"], 3);
    assert_eq!(reflected.get("conditions"), None);
    // Without metadata: the status fields only.
    let mut anonymous = observed.clone();
    anonymous.as_object_mut().unwrap().remove("metadata");
    let reflected = reflect(&anonymous).await;
    assert_eq!(reflected.get("generation"), None);
    assert_eq!(reflected["numberReady"], 3);

    let member = |cluster: &str, status: Value| item(cluster, status);
    let status = aggregate(
        &daemon_set(),
        &[
            member(
                "a",
                json!({"currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberReady": 2,
                       "updatedNumberScheduled": 2, "numberAvailable": 2, "numberMisscheduled": 0,
                       "daemonSetHash": "abc123", "generation": 2, "observedGeneration": 2,
                       "resourceTemplateGeneration": 3}),
            ),
            // Fields left out add nothing; an empty hash does not replace one.
            member(
                "b",
                json!({"currentNumberScheduled": 1, "numberReady": 1, "numberUnavailable": 1,
                       "daemonSetHash": "", "generation": 2, "observedGeneration": 2,
                       "resourceTemplateGeneration": 3}),
            ),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "currentNumberScheduled": 3, "numberMisscheduled": 0,
               "desiredNumberScheduled": 2, "numberReady": 3, "updatedNumberScheduled": 2,
               "numberAvailable": 2, "numberUnavailable": 1, "daemonSetHash": "abc123"})
    );

    // No member reports a hash (or none is placed): daemonSetHash is the number 0, as in Karmada.
    let template = with_status(&daemon_set(), json!({"observedGeneration": 1}));
    let status = aggregate(&template, &[]).await;
    assert_eq!(status["daemonSetHash"], 0);
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(status["numberAvailable"], 0);
    let status = aggregate(&template, &[item("a", json!({"numberReady": 1}))]).await;
    assert_eq!(status["daemonSetHash"], 0);
    assert_eq!(status["observedGeneration"], 1, "a has not caught up");
}

#[tokio::test]
async fn an_advanced_daemon_set_is_healthy_once_every_node_runs_an_available_updated_pod() {
    let status = |observed: i64, desired: i64, updated: i64, available: i64| {
        with_status(
            &daemon_set(),
            json!({"observedGeneration": observed, "desiredNumberScheduled": desired,
                   "updatedNumberScheduled": updated, "numberAvailable": available}),
        )
    };
    assert!(health(&status(3, 5, 5, 5)).await);
    assert!(health(&status(3, 0, 0, 0)).await, "no node to run on");
    assert!(!health(&status(2, 5, 5, 5)).await);
    assert!(!health(&status(3, 5, 3, 3)).await);
    assert!(!health(&status(3, 5, 5, 4)).await);
}

// ---------------------------------------------------------------- BroadcastJob

fn broadcast_job() -> Value {
    object(
        V1ALPHA1,
        "BroadcastJob",
        json!({"parallelism": 3, "completionPolicy": {"type": "Always"},
               "template": app_template("250m", "job-config", "job-token")}),
    )
}

#[tokio::test]
async fn a_broadcast_job_divides_its_parallelism_and_keeps_the_members_pod_labels() {
    let interpreted = replicas(&broadcast_job()).await;
    assert_eq!(interpreted.replicas, 3);
    assert_eq!(requests(&interpreted)["cpu"], "250m");
    let mut unset = broadcast_job();
    unset["spec"].as_object_mut().unwrap().remove("parallelism");
    assert_eq!(replicas(&unset).await.replicas, 1);

    assert_eq!(revise(&broadcast_job(), 2)["spec"]["parallelism"], 2);

    let mut observed = broadcast_job();
    observed["spec"]["template"]["metadata"]["labels"] =
        json!({"app": "shop", "injected-by": "member"});
    let retained = retain(&broadcast_job(), &observed).await;
    assert_eq!(
        retained["spec"]["template"]["metadata"]["labels"],
        json!({"app": "shop", "injected-by": "member"})
    );
    // Without labels in the member, the template's stay.
    let mut unlabelled = broadcast_job();
    unlabelled["spec"]["template"]
        .as_object_mut()
        .unwrap()
        .remove("metadata");
    let retained = retain(&broadcast_job(), &unlabelled).await;
    assert_eq!(
        retained["spec"]["template"]["metadata"]["labels"],
        json!({"app": "shop"})
    );

    assert_eq!(
        dependencies(&broadcast_job()).await,
        refs(&[("ConfigMap", "job-config"), ("Secret", "job-token")])
    );
}

#[tokio::test]
async fn a_broadcast_job_reflects_its_progress_and_is_healthy_while_nothing_failed() {
    let status = json!({"active": 0, "succeeded": 1, "failed": 0, "desired": 1, "phase": "completed",
                        "startTime": "2026-03-01T10:00:00Z", "completionTime": "2026-03-01T10:01:00Z",
                        "conditions": [{"type": "Complete", "status": "True"}], "extra": 1});
    let observed = with_status(&broadcast_job(), status.clone());
    let mut expected = status.clone();
    expected.as_object_mut().unwrap().remove("extra");
    assert_eq!(reflect(&observed).await, expected);
    assert_eq!(reflect(&broadcast_job()).await, json!({}));

    let counts = |desired: i64, active: i64, succeeded: i64, failed: Value| {
        with_status(
            &broadcast_job(),
            json!({"desired": desired, "active": active, "succeeded": succeeded, "failed": failed}),
        )
    };
    assert!(health(&counts(1, 1, 0, json!(0))).await);
    assert!(health(&counts(2, 0, 2, json!(0))).await);
    assert!(!health(&counts(0, 0, 0, json!(0))).await, "nothing to run");
    assert!(!health(&counts(2, 1, 0, json!(1))).await, "a pod failed");
    assert!(!health(&counts(1, 0, 0, json!(0))).await, "nothing ran yet");
    assert!(
        !health(&counts(1, 1, 0, Value::Null)).await,
        "failed not reported"
    );
}

fn job_member(cluster: &str, kind: Option<&str>, counts: Value) -> AggregatedStatusItem {
    let mut status = counts;
    if let Some(kind) = kind {
        status["conditions"] = json!([
            {"type": "Progressing", "status": "True"},
            {"type": kind, "status": "True", "reason": kind},
        ]);
    }
    item(cluster, status)
}

#[tokio::test]
async fn a_broadcast_job_names_the_members_it_failed_in_and_completes_when_all_did() {
    let status = aggregate(
        &broadcast_job(),
        &[
            job_member(
                "us-east-1",
                Some("Failed"),
                json!({"desired": 2, "failed": 1, "succeeded": 1, "active": 0, "phase": "failed"}),
            ),
            job_member(
                "eu-west-1",
                Some("Complete"),
                json!({"desired": 2, "succeeded": 2, "phase": "completed"}),
            ),
            job_member(
                "ap-south-1",
                Some("Failed"),
                json!({"desired": 1, "failed": 1}),
            ),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"active": 0, "succeeded": 3, "failed": 2, "desired": 5, "phase": "completed",
               "conditions": [{"type": "Failed", "status": "True", "reason": "JobFailed",
                               "message": "Job executed failed in member clusters: us-east-1, ap-south-1"}]})
    );

    let status = aggregate(
        &broadcast_job(),
        &[
            job_member("a", Some("Complete"), json!({"desired": 1, "succeeded": 1})),
            job_member("b", Some("Complete"), json!({"desired": 1, "succeeded": 1})),
        ],
    )
    .await;
    assert_eq!(
        status["conditions"],
        json!([{"type": "Completed", "status": "True", "reason": "Completed", "message": "Job completed"}])
    );
    assert_eq!(status["phase"], "", "no member reported a phase");

    // Still running: counters only, no conditions.
    let template = with_status(
        &broadcast_job(),
        json!({"startTime": "2026-03-01T10:00:00Z", "conditions": [{"type": "Failed", "status": "True"}]}),
    );
    let status = aggregate(
        &template,
        &[
            job_member("a", None, json!({"desired": 1, "active": 1})),
            job_member("b", None, json!({"desired": 1, "succeeded": 1})),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"startTime": "2026-03-01T10:00:00Z", "active": 1, "succeeded": 1, "failed": 0,
               "desired": 2, "phase": ""})
    );

    // A member without a terminal condition counts as the member before it did (Karmada's rule).
    let status = aggregate(
        &broadcast_job(),
        &[
            job_member("a", Some("Complete"), json!({"succeeded": 1})),
            job_member("b", None, json!({"active": 1})),
        ],
    )
    .await;
    assert_eq!(status["conditions"][0]["type"], "Completed");

    // Placed nowhere: zero counters, no conditions, the rest of the template's status kept.
    assert_eq!(
        aggregate(&template, &[]).await,
        json!({"startTime": "2026-03-01T10:00:00Z", "active": 0, "succeeded": 0, "failed": 0,
               "desired": 0, "phase": ""})
    );
}

// ---------------------------------------------------------------- AdvancedCronJob

fn advanced_cron_job(template: Value) -> Value {
    object(
        V1ALPHA1,
        "AdvancedCronJob",
        json!({"schedule": "*/5 * * * *", "template": template}),
    )
}

fn active_job(cluster: &str, name: &str) -> Value {
    json!({"apiVersion": V1ALPHA1, "kind": "BroadcastJob", "namespace": "retail", "name": name,
           "uid": format!("{cluster}-{name}")})
}

#[tokio::test]
async fn an_advanced_cron_job_lists_every_members_active_jobs() {
    let cron = advanced_cron_job(
        json!({"broadcastJobTemplate": {"spec": {"template": app_template("1", "c", "s")}}}),
    );
    let customizations = Customizations::none();
    assert!(customizations.interpret_replica(&cron).await.is_none());
    assert!(customizations.interpret_health(&cron).await.is_none());

    let status = aggregate(
        &cron,
        &[
            item(
                "a",
                json!({"active": [active_job("a", "shop-1"), active_job("a", "shop-2")],
                       "type": "BroadcastJob", "lastScheduleTime": "2026-03-01T10:00:00Z"}),
            ),
            item("b", json!({})),
            silent("c"),
            item(
                "d",
                json!({"active": [active_job("d", "shop-2")], "type": "BroadcastJob",
                       "lastScheduleTime": "2026-03-01T10:05:00Z"}),
            ),
            item("e", json!({"type": "BroadcastJob"})),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"active": [active_job("a", "shop-1"), active_job("a", "shop-2"), active_job("d", "shop-2")],
               "type": "BroadcastJob", "lastScheduleTime": "2026-03-01T10:05:00Z"})
    );

    // Placed nowhere: `type` empty, no active jobs and no schedule time (an old one is dropped).
    let template = with_status(
        &cron,
        json!({"lastScheduleTime": "2026-02-01T00:00:00Z", "active": [active_job("a", "old")]}),
    );
    assert_eq!(aggregate(&template, &[]).await, json!({"type": ""}));
}

#[tokio::test]
async fn an_advanced_cron_job_depends_on_the_pod_template_of_the_job_it_creates() {
    let broadcast = advanced_cron_job(
        json!({"broadcastJobTemplate": {"spec": {"template": app_template("1", "bcast-config", "bcast-token")}}}),
    );
    assert_eq!(
        dependencies(&broadcast).await,
        refs(&[("ConfigMap", "bcast-config"), ("Secret", "bcast-token")])
    );
    let job = advanced_cron_job(
        json!({"jobTemplate": {"spec": {"template": app_template("1", "job-config", "job-token")}}}),
    );
    assert_eq!(
        dependencies(&job).await,
        refs(&[("ConfigMap", "job-config"), ("Secret", "job-token")])
    );
    let bare = advanced_cron_job(json!({"jobTemplate": {"spec": {"template": bare_template()}}}));
    assert!(dependencies(&bare).await.is_empty());
}

// ---------------------------------------------------------------- SidecarSet

fn sidecar_set() -> Value {
    object(
        V1ALPHA1,
        "SidecarSet",
        json!({
            "selector": {"matchLabels": {"app": "shop"}},
            "containers": [{
                "name": "proxy",
                "image": "envoy:1.31",
                "env": [
                    {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "proxy-config", "key": "a"}}},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "proxy-cert", "key": "b"}}},
                    {"name": "C", "value": "plain"},
                ],
                "envFrom": [{"configMapRef": {"name": "proxy-env"}}, {"secretRef": {"name": "proxy-env-secret"}}],
            }],
            "initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "not-read"}}]}],
            "volumes": [
                {"name": "config", "configMap": {"name": "proxy-config"}},
                {"name": "certs", "secret": {"secretName": "proxy-cert"}},
                {"name": "bundle", "projected": {"sources": [
                    {"configMap": {"name": "ca-bundle"}},
                    {"secret": {"name": "client-key"}},
                ]}},
            ],
        }),
    )
}

#[tokio::test]
async fn a_sidecar_set_has_no_replicas_and_keeps_nothing_of_the_member() {
    let interpreted = replicas(&sidecar_set()).await;
    assert_eq!(interpreted.replicas, 0);
    assert!(interpreted.requirements.is_none());
    assert!(
        Customizations::none()
            .revise_replica(&sidecar_set(), 2)
            .is_none()
    );

    let mut observed = with_status(&sidecar_set(), json!({"matchedPods": 2}));
    observed["spec"]["containers"][0]["image"] = json!("envoy:1.30");
    assert_eq!(retain(&sidecar_set(), &observed).await, sidecar_set());
}

#[tokio::test]
async fn a_sidecar_set_depends_on_what_its_containers_and_volumes_read() {
    assert_eq!(
        dependencies(&sidecar_set()).await,
        refs(&[
            ("ConfigMap", "ca-bundle"),
            ("ConfigMap", "proxy-config"),
            ("ConfigMap", "proxy-env"),
            ("Secret", "client-key"),
            ("Secret", "proxy-cert"),
            ("Secret", "proxy-env-secret"),
        ])
    );
    let mut bare = sidecar_set();
    bare["spec"] = json!({"containers": [{"name": "proxy", "image": "envoy:1.31"}]});
    assert!(dependencies(&bare).await.is_empty());
}

#[tokio::test]
async fn a_sidecar_set_counts_pods_and_is_healthy_when_every_matched_pod_is_updated() {
    let observed = with_status(
        &sidecar_set(),
        json!({"matchedPods": 3, "observedGeneration": 3}),
    );
    assert_eq!(
        reflect(&observed).await,
        json!({"matchedPods": 3, "updatedPods": 0, "readyPods": 0})
    );
    assert_eq!(reflect(&sidecar_set()).await, json!({}));

    let template = with_status(
        &sidecar_set(),
        json!({"observedGeneration": 1, "matchedPods": 9}),
    );
    let status = aggregate(
        &template,
        &[
            item(
                "a",
                json!({"matchedPods": 2, "updatedPods": 2, "readyPods": 1}),
            ),
            item("b", json!({"matchedPods": 1})),
            silent("c"),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"matchedPods": 3, "updatedPods": 2, "readyPods": 1})
    );
    assert_eq!(
        aggregate(&template, &[]).await,
        json!({"matchedPods": 0, "updatedPods": 0, "readyPods": 0})
    );

    let pods = |matched: i64, updated: i64| {
        with_status(
            &sidecar_set(),
            json!({"matchedPods": matched, "updatedPods": updated}),
        )
    };
    assert!(health(&pods(3, 3)).await);
    assert!(health(&pods(0, 0)).await, "no pod to update");
    assert!(!health(&pods(3, 2)).await);
    assert!(!health(&sidecar_set()).await, "no status yet");
    assert!(health(&with_status(&sidecar_set(), json!({}))).await);
}

// ---------------------------------------------------------------- UnitedDeployment

fn united_deployment() -> Value {
    object(
        V1ALPHA1,
        "UnitedDeployment",
        json!({"replicas": 6, "selector": {"matchLabels": {"app": "shop"}},
               "template": app_template("2", "ud-config", "ud-token")}),
    )
}

fn condition(kind: &str, status: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "message": message})
}

#[tokio::test]
async fn a_united_deployment_divides_its_replicas_and_depends_on_its_template() {
    let interpreted = replicas(&united_deployment()).await;
    assert_eq!(interpreted.replicas, 6);
    assert_eq!(requests(&interpreted)["cpu"], "2");
    let revised = revise(&united_deployment(), 4);
    assert_eq!(revised["spec"]["replicas"], 4);
    assert_eq!(
        dependencies(&united_deployment()).await,
        refs(&[("ConfigMap", "ud-config"), ("Secret", "ud-token")])
    );
}

#[tokio::test]
async fn a_united_deployment_reflects_counters_and_conditions() {
    let conditions = json!([condition("Available", "True", "ok")]);
    let observed = with_status(
        &annotated(&united_deployment(), "5"),
        json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 2,
               "unavailableReplicas": 1, "observedGeneration": 3, "conditions": conditions,
               "collisionCount": 0, "subsetReplicas": {"a": 3}}),
    );
    assert_eq!(
        reflect(&observed).await,
        json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 2,
               "unavailableReplicas": 1, "observedGeneration": 3, "conditions": conditions,
               "generation": 3, "resourceTemplateGeneration": 5})
    );
}

#[tokio::test]
async fn a_united_deployment_sums_members_and_keeps_the_last_condition_of_each_type() {
    let member = |observed: i64, conditions: Value| {
        json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 2, "availableReplicas": 2,
               "unavailableReplicas": 1, "generation": 4, "observedGeneration": observed,
               "resourceTemplateGeneration": 3, "conditions": conditions})
    };
    let template = with_status(
        &united_deployment(),
        json!({"observedGeneration": 2, "conditions": [condition("Old", "True", "template")]}),
    );
    let status = aggregate(
        &template,
        &[
            item(
                "a",
                member(
                    4,
                    json!([
                        condition("Progressing", "True", "a"),
                        condition("Available", "True", "a")
                    ]),
                ),
            ),
            item(
                "b",
                member(
                    4,
                    json!([
                        condition("Available", "False", "b"),
                        condition("Degraded", "True", "b")
                    ]),
                ),
            ),
        ],
    )
    .await;
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 6, "updatedReplicas": 6, "readyReplicas": 4,
               "availableReplicas": 4, "unavailableReplicas": 2,
               // Sorted by type (Karmada's order depends on Lua table iteration).
               "conditions": [condition("Available", "False", "b"), condition("Degraded", "True", "b"),
                              condition("Progressing", "True", "a")]})
    );

    // No member condition: the template's stay. A member without status holds the
    // generation back.
    let status = aggregate(&template, &[item("a", member(4, Value::Null)), silent("b")]).await;
    assert_eq!(
        status["conditions"],
        json!([condition("Old", "True", "template")])
    );
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(status["replicas"], 3);

    // Placed nowhere: zeros, the template's generation observed.
    let status = aggregate(&template, &[]).await;
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(status["unavailableReplicas"], 0);
}

#[tokio::test]
async fn a_united_deployment_is_healthy_once_rolled_out_and_available() {
    let status = |observed: i64, updated: i64, available: i64| {
        with_status(
            &united_deployment(),
            json!({"observedGeneration": observed, "updatedReplicas": updated, "availableReplicas": available}),
        )
    };
    assert!(health(&status(3, 6, 6)).await);
    assert!(!health(&status(2, 6, 6)).await);
    assert!(!health(&status(3, 5, 5)).await);
    assert!(!health(&status(3, 6, 5)).await);
    assert!(!health(&united_deployment()).await, "no status yet");
    let mut specless = status(3, 6, 6);
    specless.as_object_mut().unwrap().remove("spec");
    assert!(!health(&specless).await);
}
