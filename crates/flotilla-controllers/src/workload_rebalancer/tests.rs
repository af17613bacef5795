use std::time::Duration;

use flotilla_api::karmada::{ObservedWorkload, WorkloadRebalancerStatus, WorkloadReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

mod karmada_reconcile;

fn time(text: &str) -> Time {
    Time(text.parse().expect("timestamp"))
}

fn deployment(namespace: &str, name: &str) -> WorkloadReference {
    WorkloadReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: name.into(),
        namespace: namespace.into(),
    }
}

fn cluster_role(name: &str) -> WorkloadReference {
    WorkloadReference {
        api_version: "rbac.authorization.k8s.io/v1".into(),
        kind: "ClusterRole".into(),
        name: name.into(),
        namespace: String::new(),
    }
}

fn entry(workload: WorkloadReference, result: &str, reason: &str) -> ObservedWorkload {
    ObservedWorkload {
        workload,
        result: result.into(),
        reason: reason.into(),
    }
}

#[test]
fn new_workloads_get_empty_entries_sorted_by_api_version_kind_namespace_name() {
    let spec = [
        cluster_role("admin"),
        deployment("default", "web-2"),
        deployment("default", "web"),
        deployment("default", "web"),
    ];
    let observed = sync_observed(&spec, &[]);
    assert_eq!(
        observed,
        vec![
            entry(deployment("default", "web"), "", ""),
            entry(deployment("default", "web-2"), "", ""),
            entry(cluster_role("admin"), "", ""),
        ],
        "one entry per workload, apps/v1 before rbac…/v1"
    );
}

#[test]
fn a_spec_change_keeps_listed_entries_and_successes_and_drops_the_rest() {
    let web = deployment("default", "web");
    let missing = deployment("default", "web-2");
    let added = deployment("default", "web-3");
    let role = cluster_role("admin");
    let observed = [
        entry(web.clone(), "Successful", ""),
        entry(missing.clone(), "Failed", "ReferencedBindingNotFound"),
        entry(role.clone(), "Successful", ""),
    ];
    let next = sync_observed(&[role.clone(), added.clone()], &observed);
    assert_eq!(
        next,
        vec![
            entry(web, "Successful", ""),
            entry(added, "", ""),
            entry(role, "Successful", ""),
        ],
        "the unlisted failure goes, the unlisted success stays"
    );
}

#[test]
fn a_failed_entry_still_listed_is_kept_as_it_is() {
    let missing = deployment("default", "web-2");
    let observed = [entry(
        missing.clone(),
        "Failed",
        "ReferencedBindingNotFound",
    )];
    assert_eq!(sync_observed(&[missing], &observed), observed.to_vec());
}

#[test]
fn a_binding_is_triggered_unless_already_triggered_at_or_after_creation() {
    let created = time("2026-03-01T12:00:00Z");
    assert!(needs_trigger(&created, None));
    assert!(needs_trigger(&created, Some(&time("2026-03-01T11:59:59Z"))));
    assert!(!needs_trigger(&created, Some(&created)));
    assert!(!needs_trigger(
        &created,
        Some(&time("2026-03-01T12:00:01Z"))
    ));
}

#[test]
fn outcomes_become_results_and_only_other_errors_retry() {
    let mut ok = entry(deployment("d", "a"), "", "");
    assert!(!record(&mut ok, &Ok(())));
    assert_eq!(ok.result, "Successful");
    let mut missing = entry(deployment("d", "b"), "", "");
    assert!(!record(
        &mut missing,
        &Err(TriggerError::NotFound("b-deployment".into()))
    ));
    assert_eq!(
        (missing.result.as_str(), missing.reason.as_str()),
        ("Failed", "ReferencedBindingNotFound")
    );
    let mut later = entry(deployment("d", "c"), "", "");
    let conflict = TriggerError::Api {
        step: "update",
        binding: "c-deployment".into(),
        source: kube::Error::Api(
            kube::core::Status::failure("the object has been modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    };
    assert!(record(&mut later, &Err(conflict)));
    assert_eq!(later.result, "", "left empty to be retried");
}

#[test]
fn finish_time_is_set_when_the_status_changes_and_nothing_is_left_to_retry() {
    let now = time("2026-03-01T12:00:05Z");
    let previous = WorkloadRebalancerStatus::default();
    let mut next = WorkloadRebalancerStatus {
        observed_workloads: vec![entry(deployment("d", "a"), "Successful", "")],
        observed_generation: 1,
        finish_time: None,
    };
    assert!(finish(&previous, &mut next, 0, now.clone()));
    assert_eq!(next.finish_time, Some(now.clone()));

    // The same outcome again: nothing to write, the old finish time stays.
    let mut again = WorkloadRebalancerStatus {
        finish_time: None,
        ..next.clone()
    };
    assert!(!finish(&next, &mut again, 0, time("2026-03-01T13:00:00Z")));
    assert_eq!(again.finish_time, Some(now.clone()));

    // A change still waiting for retries: written, the previous finish time kept.
    let mut pending = WorkloadRebalancerStatus {
        observed_workloads: vec![
            entry(deployment("d", "a"), "Successful", ""),
            entry(deployment("d", "b"), "", ""),
        ],
        observed_generation: 2,
        finish_time: None,
    };
    assert!(finish(&next, &mut pending, 1, time("2026-03-01T13:00:00Z")));
    assert_eq!(pending.finish_time, Some(now));
}

#[test]
fn the_ttl_runs_from_the_finish_time() {
    let finished = time("2026-03-01T12:00:00Z");
    let now: jiff::Timestamp = "2026-03-01T12:00:02Z".parse().expect("now");
    assert_eq!(time_left(&finished, 5, now), Some(Duration::from_secs(3)));
    assert_eq!(time_left(&finished, 2, now), None);
    assert_eq!(time_left(&finished, 0, now), None);
}
