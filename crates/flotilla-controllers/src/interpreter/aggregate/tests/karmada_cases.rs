//! The cases of Karmada's `aggregatestatus_test.go` (pkg/resourceinterpreter/default/native)
//! for the workloads, Job, CronJob, HorizontalPodAutoscaler, Service and Ingress: the same
//! inputs, Karmada's expected status. Karmada's "ignore update … as up to date" rows return the
//! object unchanged; here they are the rows whose template already carries the expected status.

use serde_json::{Value, json};

use super::{aggregate_status, aggregate_status_at, at, item};

fn template(api_version: &str, kind: &str, status: Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "status": status})
}

/// Every member reports `status`, as Karmada's tables do (`member1`, `member2`).
fn members(statuses: &[Value]) -> Vec<flotilla_api::karmada::AggregatedStatusItem> {
    statuses
        .iter()
        .enumerate()
        .map(|(i, s)| item(&format!("member{}", i + 1), Some(s.clone())))
        .collect()
}

/// Asserts the aggregated status of a template with `old` status is `expected`, for Karmada's
/// "update" row (from an empty status) and its "up to date" row (from `expected` itself).
fn assert_update_and_up_to_date(api_version: &str, kind: &str, member: Value, expected: Value) {
    let items = members(&[member.clone(), member]);
    for old in [json!({}), expected.clone()] {
        let status = aggregate_status(&template(api_version, kind, old.clone()), &items)
            .expect("the kind has a hook");
        assert_eq!(status, expected, "{kind} from {old}");
    }
}

#[test]
fn workload_counters_of_two_members_are_summed() {
    assert_update_and_up_to_date(
        "apps/v1",
        "Deployment",
        json!({"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
            "unavailableReplicas": 0}),
        // Zero unavailableReplicas and observedGeneration are omitted as Go omits them.
        json!({"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2, "availableReplicas": 2}),
    );
    assert_update_and_up_to_date(
        "apps/v1",
        "DaemonSet",
        json!({"currentNumberScheduled": 1, "numberMisscheduled": 0, "desiredNumberScheduled": 1,
            "numberReady": 1, "updatedNumberScheduled": 1, "numberAvailable": 1,
            "numberUnavailable": 0}),
        json!({"currentNumberScheduled": 2, "numberMisscheduled": 0, "desiredNumberScheduled": 2,
            "numberReady": 2, "updatedNumberScheduled": 2, "numberAvailable": 2}),
    );
    assert_update_and_up_to_date(
        "apps/v1",
        "StatefulSet",
        json!({"replicas": 1, "readyReplicas": 1, "currentReplicas": 1, "updatedReplicas": 1,
            "availableReplicas": 1}),
        json!({"replicas": 2, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2,
            "availableReplicas": 2}),
    );
}

#[test]
fn load_balancer_service_and_ingress_collect_member_ingress() {
    let member = json!({"loadBalancer": {"ingress": [{"ip": "8.8.8.8"}]}});
    let expected = json!({"loadBalancer": {"ingress": [{"ip": "8.8.8.8"}]}});
    let items = members(&[member]);
    for old in [json!({}), expected.clone()] {
        let service = json!({"apiVersion": "v1", "kind": "Service",
            "spec": {"type": "LoadBalancer"}, "status": old.clone()});
        assert_eq!(aggregate_status(&service, &items), Some(expected.clone()));
        let ingress = template("networking.k8s.io/v1", "Ingress", old);
        assert_eq!(aggregate_status(&ingress, &items), Some(expected.clone()));
    }
}

#[test]
fn services_other_than_load_balancers_are_left_alone() {
    let items = members(&[json!({})]);
    for service_type in ["ClusterIP", "NodePort", "ExternalName"] {
        let service = json!({"apiVersion": "v1", "kind": "Service",
            "spec": {"type": service_type}});
        assert_eq!(aggregate_status(&service, &items), None, "{service_type}");
    }
}

const START: &str = "2024-05-06T07:08:09Z";

fn job_member(conditions: Value, succeeded: i64, failed: i64) -> Value {
    json!({"active": 0, "succeeded": succeeded, "failed": failed, "startTime": START,
        "completionTime": START, "conditions": conditions})
}

fn job_condition(kind: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": kind, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
        "reason": reason, "message": message})
}

#[test]
fn job_of_two_completed_members_is_complete_and_meets_its_success_criteria() {
    let now = at("2024-05-06T08:00:00Z");
    let stamp = "2024-05-06T08:00:00Z";
    let complete = job_member(
        json!([{"type": "Complete", "status": "True"},
            {"type": "SuccessCriteriaMet", "status": "True"}]),
        1,
        0,
    );
    let job = template("batch/v1", "Job", json!({}));
    let status =
        aggregate_status_at(&job, &members(&[complete.clone(), complete]), now).expect("hook");
    // Karmada's test blanks the condition times before comparing; here they are `now`.
    let expected = json!({"succeeded": 2, "startTime": START, "completionTime": START,
        "conditions": [
            job_condition("Complete", "Completed", "Job completed", stamp),
            job_condition("SuccessCriteriaMet", "CompletionsReached",
                "All member clusters have met success criteria", stamp)]});
    assert_eq!(status, expected);
    // Finished: left as it is.
    let finished = template("batch/v1", "Job", expected.clone());
    let later = at("2024-05-06T09:00:00Z");
    let again = job_member(json!([{"type": "Complete", "status": "True"}]), 1, 0);
    assert_eq!(
        aggregate_status_at(&finished, &members(&[again.clone(), again]), later),
        Some(expected)
    );
}

#[test]
fn job_with_a_failed_member_names_it() {
    let now = at("2024-05-06T08:00:00Z");
    let complete = job_member(
        json!([{"type": "Complete", "status": "True"},
            {"type": "SuccessCriteriaMet", "status": "True"}]),
        1,
        0,
    );
    let failed = job_member(json!([{"type": "Failed", "status": "True"}]), 0, 1);
    let job = template("batch/v1", "Job", json!({}));
    let status = aggregate_status_at(&job, &members(&[complete, failed]), now).expect("hook");
    assert_eq!(
        status,
        json!({"succeeded": 1, "failed": 1, "startTime": START, "completionTime": START,
            "conditions": [job_condition("Failed", "JobFailed",
                "Job executed failed in member clusters member2", "2024-05-06T08:00:00Z")]})
    );
}

#[test]
fn cron_job_concatenates_active_jobs_and_takes_the_latest_times() {
    let reference = json!({"apiVersion": "batch/v1", "kind": "Job", "name": "foo",
        "namespace": "default", "resourceVersion": "1",
        "uid": "1d5db04f-f2e8-4807-b6d4-7b78f402250d"});
    let items = members(&[
        json!({"active": [reference.clone()], "lastScheduleTime": "2023-02-08T07:16:00Z",
            "lastSuccessfulTime": null}),
        json!({"active": [reference.clone()], "lastScheduleTime": "2023-02-08T07:17:00Z",
            "lastSuccessfulTime": "2023-02-08T07:17:00Z"}),
    ]);
    let cron_job = template("batch/v1", "CronJob", json!({}));
    assert_eq!(
        aggregate_status(&cron_job, &items),
        Some(json!({"active": [reference.clone(), reference],
            "lastScheduleTime": "2023-02-08T07:17:00Z",
            "lastSuccessfulTime": "2023-02-08T07:17:00Z"}))
    );
}

#[test]
fn hpa_sums_replicas_and_skips_members_without_status() {
    let mut items = members(&[
        json!({"currentReplicas": 2, "desiredReplicas": 2}),
        json!({"currentReplicas": 4, "desiredReplicas": 4}),
    ]);
    items.push(item("member3", None));
    let expected = json!({"currentReplicas": 6, "desiredReplicas": 6, "currentMetrics": null});
    for old in [json!({"desiredReplicas": 0}), expected.clone()] {
        let hpa = template("autoscaling/v2", "HorizontalPodAutoscaler", old);
        assert_eq!(aggregate_status(&hpa, &items), Some(expected.clone()));
    }
}

#[test]
fn the_kinds_with_an_aggregation_hook_are_karmadas() {
    let items = members(&[json!({})]);
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("v1", "Pod"),
        ("networking.k8s.io/v1", "Ingress"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
        ("policy/v1", "PodDisruptionBudget"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ] {
        let object = template(api_version, kind, json!({}));
        assert!(
            aggregate_status(&object, &items).is_some(),
            "{api_version} {kind}"
        );
    }
    let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}});
    assert!(aggregate_status(&service, &items).is_some());
    let config_map = template("v1", "ConfigMap", json!({}));
    assert_eq!(aggregate_status(&config_map, &items), None);
}
