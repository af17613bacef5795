use flotilla_api::karmada::AggregatedStatusItem;
use serde_json::{Value, json};

use super::*;

mod karmada_cases;
mod karmada_pod_cases;
mod network;
mod phases;

fn item(cluster: &str, status: Option<Value>) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        status: status.map(Into::into),
        applied: true,
        health: "Healthy".to_owned(),
        ..AggregatedStatusItem::default()
    }
}

fn deployment(generation: i64, status: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "status": status})
}

fn member(
    replicas: i64,
    ready: i64,
    observed: i64,
    generation: i64,
    template_generation: i64,
) -> Value {
    json!({"replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready,
        "availableReplicas": ready, "observedGeneration": observed, "generation": generation,
        "resourceTemplateGeneration": template_generation})
}

#[test]
fn deployment_counters_are_summed_and_generation_advances_when_all_caught_up() {
    let template = deployment(3, json!({"observedGeneration": 2}));
    let items = [
        item("a", Some(member(5, 5, 4, 4, 3))),
        item("b", Some(member(3, 2, 7, 7, 3))),
    ];
    let status = aggregate_status(&template, &items).expect("deployment has a hook");
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 8, "updatedReplicas": 8,
            "readyReplicas": 7, "availableReplicas": 7})
    );
}

#[test]
fn deployment_generation_is_kept_while_a_member_lags_or_has_no_status() {
    let template = deployment(3, json!({"observedGeneration": 2}));
    // Rendered from an older template.
    let lagging = [item("a", Some(member(5, 5, 4, 4, 2)))];
    assert_eq!(
        aggregate_status(&template, &lagging).expect("hook")["observedGeneration"],
        2
    );
    // The member controller has not observed its own generation.
    let unobserved = [item("a", Some(member(5, 5, 3, 4, 3)))];
    assert_eq!(
        aggregate_status(&template, &unobserved).expect("hook")["observedGeneration"],
        2
    );
    // A cluster without a collected status counts as not caught up.
    let missing = [item("a", Some(member(5, 5, 4, 4, 3))), item("b", None)];
    let status = aggregate_status(&template, &missing).expect("hook");
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(status["replicas"], 5);
}

#[test]
fn zero_counters_are_omitted_like_go_omitempty() {
    let template = deployment(1, json!({}));
    let status =
        aggregate_status(&template, &[item("a", Some(member(0, 0, 1, 1, 1)))]).expect("hook");
    assert_eq!(status, json!({"observedGeneration": 1}));
}

#[test]
fn workloads_keep_the_fields_they_do_not_aggregate() {
    let conditions = json!([{"type": "Available", "status": "True"}]);
    let template = deployment(
        1,
        json!({"conditions": conditions, "collisionCount": 1, "replicas": 4,
            "unavailableReplicas": 2}),
    );
    let status =
        aggregate_status(&template, &[item("a", Some(member(2, 2, 1, 1, 1)))]).expect("hook");
    assert_eq!(
        status,
        json!({"conditions": conditions, "collisionCount": 1, "observedGeneration": 1,
            "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2})
    );
    let daemon_set = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"generation": 1},
        "status": {"conditions": conditions, "numberReady": 9}});
    let status =
        aggregate_status(&daemon_set, &[item("a", Some(json!({"numberReady": 1})))]).expect("hook");
    assert_eq!(status["conditions"], conditions);
    assert_eq!(status["numberReady"], 1);
}

#[test]
fn statefulset_compares_template_generation_with_the_member_generation() {
    let template = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"generation": 5}, "status": {"replicas": 0}});
    let status = aggregate_status(
        &template,
        &[item(
            "a",
            Some(
                json!({"replicas": 2, "readyReplicas": 2, "currentReplicas": 2,
            "updatedReplicas": 2, "availableReplicas": 2,
            "observedGeneration": 1, "generation": 1, "resourceTemplateGeneration": 1}),
            ),
        )],
    )
    .expect("hook");
    assert_eq!(status["observedGeneration"], 5);
    assert_eq!(status["readyReplicas"], 2);
}

#[test]
fn statefulset_writes_zero_available_replicas() {
    // `availableReplicas` has no `omitempty` in Go's StatefulSetStatus.
    let template = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"generation": 1},
        "status": {"currentRevision": "db-1", "availableReplicas": 3}});
    let status = aggregate_status(
        &template,
        &[item(
            "a",
            Some(json!({"replicas": 1, "availableReplicas": 0})),
        )],
    )
    .expect("hook");
    assert_eq!(
        status,
        json!({"currentRevision": "db-1", "observedGeneration": 1, "replicas": 1,
            "availableReplicas": 0})
    );
}

fn job_template(status: Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generation": 1},
        "status": status})
}

fn at(time: &str) -> Timestamp {
    time.parse().expect("a valid timestamp")
}

fn complete_member(start: &str, completion: &str, criteria_met: bool) -> Value {
    let mut conditions = vec![json!({"type": "Complete", "status": "True"})];
    if criteria_met {
        conditions.push(json!({"type": "SuccessCriteriaMet", "status": "True"}));
    }
    json!({"succeeded": 1, "startTime": start, "completionTime": completion,
        "conditions": conditions})
}

#[test]
fn job_completes_only_when_every_member_completed() {
    let job = job_template(json!({}));
    let complete = json!({"succeeded": 2, "startTime": "2026-01-01T00:00:05Z",
        "completionTime": "2026-01-01T00:01:00Z",
        "conditions": [{"type": "Complete", "status": "True"}]});
    let running = json!({"active": 1, "startTime": "2026-01-01T00:00:01Z"});
    let status = aggregate_status(
        &job,
        &[item("a", Some(complete.clone())), item("b", Some(running))],
    )
    .expect("hook");
    assert_eq!(status["active"], 1);
    assert_eq!(status["succeeded"], 2);
    assert_eq!(status["startTime"], "2026-01-01T00:00:01Z");
    assert!(status.get("conditions").is_none());
    let status = aggregate_status(
        &job,
        &[item("a", Some(complete.clone())), item("b", Some(complete))],
    )
    .expect("hook");
    assert_eq!(status["conditions"][0]["type"], "Complete");
    assert_eq!(status["completionTime"], "2026-01-01T00:01:00Z");
}

#[test]
fn job_conditions_are_karmadas_with_success_criteria_when_every_member_met_them() {
    let now = at("2026-02-03T04:05:06.789Z");
    let job = job_template(json!({}));
    let items = [
        item(
            "a",
            Some(complete_member(
                "2026-01-01T00:00:05Z",
                "2026-01-01T00:01:00Z",
                true,
            )),
        ),
        item(
            "b",
            Some(complete_member(
                "2026-01-01T00:00:03Z",
                "2026-01-01T00:02:00Z",
                true,
            )),
        ),
    ];
    let status = aggregate_status_at(&job, &items, now).expect("hook");
    let time = "2026-02-03T04:05:06Z";
    assert_eq!(
        status,
        json!({"succeeded": 2, "startTime": "2026-01-01T00:00:03Z",
            "completionTime": "2026-01-01T00:02:00Z",
            "conditions": [
                {"type": "Complete", "status": "True", "lastProbeTime": time,
                    "lastTransitionTime": time, "reason": "Completed",
                    "message": "Job completed"},
                {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": time,
                    "lastTransitionTime": time, "reason": "CompletionsReached",
                    "message": "All member clusters have met success criteria"}]})
    );
    // One member without SuccessCriteriaMet: completed, but not reported as met.
    let items = [
        item(
            "a",
            Some(complete_member(
                "2026-01-01T00:00:05Z",
                "2026-01-01T00:01:00Z",
                true,
            )),
        ),
        item(
            "b",
            Some(complete_member(
                "2026-01-01T00:00:03Z",
                "2026-01-01T00:02:00Z",
                false,
            )),
        ),
    ];
    let status = aggregate_status_at(&job, &items, now).expect("hook");
    let kinds: Vec<&Value> = status["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .map(|c| &c["type"])
        .collect();
    assert_eq!(kinds, [&json!("Complete")]);
}

#[test]
fn job_failure_names_the_failed_members_before_completion() {
    let now = at("2026-02-03T04:05:06Z");
    let failed = json!({"failed": 1, "startTime": "2026-01-01T00:00:01Z",
        "completionTime": "2026-01-01T00:03:00Z",
        "conditions": [{"type": "Failed", "status": "True"}]});
    // The first finished condition decides (Complete here, although Failed follows).
    let first_complete = json!({"succeeded": 1, "startTime": "2026-01-01T00:00:02Z",
        "conditions": [{"type": "Complete", "status": "True"},
            {"type": "Failed", "status": "True"}]});
    let status = aggregate_status_at(
        &job_template(json!({})),
        &[
            item("a", Some(failed.clone())),
            item("b", Some(first_complete)),
            item("c", Some(failed)),
        ],
        now,
    )
    .expect("hook");
    assert_eq!(
        status["conditions"],
        json!([{"type": "Failed", "status": "True", "lastProbeTime": "2026-02-03T04:05:06Z",
            "lastTransitionTime": "2026-02-03T04:05:06Z", "reason": "JobFailed",
            "message": "Job executed failed in member clusters a,c"}])
    );
    assert_eq!(status["failed"], 2);
    assert_eq!(status["succeeded"], 1);
    // Member b has no completionTime: the template gets none.
    assert!(status.get("completionTime").is_none());
}

#[test]
fn job_completion_time_is_the_latest_once_every_member_has_one() {
    // Neither member finished (a stale or custom completionTime): Karmada still takes it.
    let member = |completion: &str| json!({"active": 1, "startTime": "2026-01-01T00:00:00Z", "completionTime": completion});
    let status = aggregate_status(
        &job_template(json!({})),
        &[
            item("a", Some(member("2026-01-01T00:05:00Z"))),
            item("b", Some(member("2026-01-01T00:07:00Z"))),
        ],
    )
    .expect("hook");
    assert_eq!(status["completionTime"], "2026-01-01T00:07:00Z");
    assert!(status.get("conditions").is_none());
    // A member without a collected status has no completion time.
    let status = aggregate_status(
        &job_template(json!({})),
        &[
            item("a", Some(member("2026-01-01T00:05:00Z"))),
            item("b", None),
        ],
    )
    .expect("hook");
    assert!(status.get("completionTime").is_none());
}

#[test]
fn job_start_time_is_the_templates_own_or_the_earliest_once_all_started() {
    let started = json!({"active": 1, "startTime": "2026-01-01T00:00:09Z"});
    let waiting = json!({"active": 0});
    // Not every member started: no start time yet.
    let status = aggregate_status(
        &job_template(json!({})),
        &[item("a", Some(started.clone())), item("b", Some(waiting))],
    )
    .expect("hook");
    assert!(status.get("startTime").is_none());
    let status = aggregate_status(
        &job_template(json!({})),
        &[item("a", Some(started.clone())), item("b", None)],
    )
    .expect("hook");
    assert!(status.get("startTime").is_none());
    // The template keeps the start time it has, even when a member started earlier.
    let earlier = json!({"active": 1, "startTime": "2026-01-01T00:00:01Z"});
    let status = aggregate_status(
        &job_template(json!({"startTime": "2026-01-01T00:00:05Z", "ready": 1})),
        &[item("a", Some(started)), item("b", Some(earlier))],
    )
    .expect("hook");
    assert_eq!(
        status,
        json!({"startTime": "2026-01-01T00:00:05Z", "active": 2})
    );
}

#[test]
fn a_finished_job_template_is_left_as_it_is() {
    let finished = job_template(json!({"succeeded": 1,
        "conditions": [{"type": "Failed", "status": "True"}]}));
    let status =
        aggregate_status(&finished, &[item("a", Some(json!({"active": 3})))]).expect("hook");
    assert_eq!(status, finished["status"]);
}

fn cron_job_template(status: Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "CronJob", "status": status})
}

#[test]
fn cron_job_takes_the_latest_times_and_clears_those_no_member_reports() {
    let template = cron_job_template(json!({"lastScheduleTime": "2026-01-01T00:00:00Z",
        "lastSuccessfulTime": "2026-01-01T00:00:00Z", "active": [{"name": "old"}]}));
    let status = aggregate_status(
        &template,
        &[
            item(
                "a",
                Some(json!({"active": [{"name": "x"}],
                "lastScheduleTime": "2026-01-02T09:00:00+02:00"})),
            ),
            item(
                "b",
                Some(json!({"active": [{"name": "y"}],
                "lastScheduleTime": "2026-01-02T08:00:00Z"})),
            ),
        ],
    )
    .expect("hook");
    // 09:00+02:00 is 07:00Z: b's time is the latest instant.
    assert_eq!(
        status,
        json!({"active": [{"name": "x"}, {"name": "y"}],
            "lastScheduleTime": "2026-01-02T08:00:00Z"})
    );
}

#[test]
fn autoscaling_v2_hpa_gets_a_new_status_and_v1_has_no_hook() {
    let hpa = |api_version: &str| {
        json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler",
            "status": {"currentReplicas": 9, "desiredReplicas": 9,
                "conditions": [{"type": "AbleToScale", "status": "True"}],
                "lastScaleTime": "2026-01-01T00:00:00Z"}})
    };
    let items = [
        item(
            "a",
            Some(json!({"currentReplicas": 2, "desiredReplicas": 3})),
        ),
        item(
            "b",
            Some(json!({"currentReplicas": 4, "desiredReplicas": 4})),
        ),
        item("c", None),
    ];
    assert_eq!(
        aggregate_status(&hpa("autoscaling/v2"), &items),
        Some(json!({"currentReplicas": 6, "desiredReplicas": 7, "currentMetrics": null}))
    );
    let idle = [item("a", Some(json!({"desiredReplicas": 0})))];
    assert_eq!(
        aggregate_status(&hpa("autoscaling/v2"), &idle),
        Some(json!({"desiredReplicas": 0, "currentMetrics": null}))
    );
    assert!(aggregate_status(&hpa("autoscaling/v1"), &items).is_none());
}

#[test]
fn malformed_member_statuses_do_not_fail() {
    let odd = [
        item("a", Some(json!("not an object"))),
        item(
            "b",
            Some(json!({"replicas": "two", "startTime": "yesterday",
                "conditions": "none", "phase": 7, "containerStatuses": [1, null],
                "loadBalancer": {"ingress": [1, {"ports": [{"port": "80"}]}]},
                "disruptedPods": [], "currentReplicas": i64::MAX})),
        ),
        item("c", Some(json!({"currentReplicas": i64::MAX}))),
    ];
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("v1", "Pod"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
        ("networking.k8s.io/v1", "Ingress"),
        ("policy/v1", "PodDisruptionBudget"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ] {
        let template = json!({"apiVersion": api_version, "kind": kind, "status": "odd"});
        assert!(aggregate_status(&template, &odd).is_some(), "{kind}");
    }
}

#[test]
fn kinds_without_a_hook_are_left_alone() {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert!(aggregate_status(&config, &[item("a", Some(json!({})))]).is_none());
}
