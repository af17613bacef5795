//! Karmada's `TestRebalancerController_Reconcile` (`workloadrebalancer_controller_test.go`),
//! replayed through the pure steps of a reconcile: [`sync_observed`], [`needs_trigger`] and
//! [`record`] per workload (a binding exists or not), [`finish`] and [`time_left`].

use super::*;

const CREATED: &str = "2026-03-01T12:00:00Z";
const NOW: &str = "2026-03-01T13:00:00Z";

/// One reconcile: `bindings` are the workloads whose binding exists. Returns the status to
/// write (if any) and the workloads whose binding got `rescheduleTriggeredAt`.
fn reconcile(
    spec: &[WorkloadReference],
    previous: &WorkloadRebalancerStatus,
    bindings: &[WorkloadReference],
) -> (Option<WorkloadRebalancerStatus>, Vec<WorkloadReference>) {
    let created = time(CREATED);
    let mut status = WorkloadRebalancerStatus {
        observed_workloads: sync_observed(spec, &previous.observed_workloads),
        ..WorkloadRebalancerStatus::default()
    };
    let mut triggered = Vec::new();
    let mut retries = 0;
    for entry in &mut status.observed_workloads {
        if !entry.result.is_empty() {
            continue;
        }
        let outcome = if bindings.contains(&entry.workload) {
            if needs_trigger(&created, None) {
                triggered.push(entry.workload.clone());
            }
            Ok(())
        } else {
            Err(TriggerError::NotFound("binding".into()))
        };
        if record(entry, &outcome) {
            retries += 1;
        }
    }
    let written = finish(previous, &mut status, retries, time(NOW));
    (written.then_some(status), triggered)
}

fn observed(entries: Vec<ObservedWorkload>) -> WorkloadRebalancerStatus {
    WorkloadRebalancerStatus {
        observed_workloads: entries,
        ..WorkloadRebalancerStatus::default()
    }
}

fn test_deployments() -> [WorkloadReference; 3] {
    [
        deployment("test-ns", "test-1-abc"),
        deployment("test-ns", "test-2-abc"),
        deployment("test-ns", "test-3-abc"),
    ]
}

const OK: &str = "Successful";
const FAILED: &str = "Failed";
const NOT_FOUND: &str = "ReferencedBindingNotFound";

#[test]
fn a_pending_rebalancer_triggers_found_bindings_and_fails_missing_ones_sorted() {
    let [d1, d2, _] = test_deployments();
    let (status, triggered) = reconcile(
        &[d2.clone(), d1.clone()],
        &WorkloadRebalancerStatus::default(),
        std::slice::from_ref(&d1),
    );
    let status = status.expect("written");
    assert_eq!(
        status.observed_workloads,
        [entry(d1.clone(), OK, ""), entry(d2, FAILED, NOT_FOUND)]
    );
    assert_eq!(status.finish_time, Some(time(NOW)));
    assert_eq!(triggered, [d1]);
}

#[test]
fn settled_rebalancers_are_left_as_they_are() {
    let [d1, d2, _] = test_deployments();
    // Succeeded, and not found: nothing triggered, nothing written.
    for (spec, entries, bindings) in [
        (
            d1.clone(),
            vec![entry(d1.clone(), OK, "")],
            vec![d1.clone()],
        ),
        (
            d2.clone(),
            vec![entry(d2.clone(), FAILED, NOT_FOUND)],
            vec![],
        ),
    ] {
        let previous = observed(entries);
        let (status, triggered) = reconcile(&[spec], &previous, &bindings);
        assert_eq!(status, None);
        assert!(triggered.is_empty());
    }
}

#[test]
fn an_entry_without_result_is_retried_until_it_succeeds() {
    let [d1, ..] = test_deployments();
    let previous = observed(vec![entry(d1.clone(), "", "")]);
    let (status, triggered) = reconcile(
        std::slice::from_ref(&d1),
        &previous,
        std::slice::from_ref(&d1),
    );
    assert_eq!(
        status.expect("written").observed_workloads,
        [entry(d1.clone(), OK, "")]
    );
    assert_eq!(triggered, [d1]);
}

#[test]
fn a_modified_rebalancer_keeps_old_successes_and_handles_new_workloads() {
    let [d1, d2, d3] = test_deployments();
    let previous = observed(vec![
        entry(d1.clone(), OK, ""),
        entry(d2, FAILED, NOT_FOUND),
    ]);
    let (status, triggered) = reconcile(
        std::slice::from_ref(&d3),
        &previous,
        &[d1.clone(), d3.clone()],
    );
    assert_eq!(
        status.expect("written").observed_workloads,
        [entry(d1, OK, ""), entry(d3.clone(), OK, "")]
    );
    assert_eq!(triggered, [d3]);
}

#[test]
fn a_cluster_scoped_workload_is_rebalanced_through_its_cluster_binding() {
    let role = cluster_role("test-cluster-role-abc");
    let (status, triggered) = reconcile(
        std::slice::from_ref(&role),
        &WorkloadRebalancerStatus::default(),
        std::slice::from_ref(&role),
    );
    assert_eq!(
        status.expect("written").observed_workloads,
        [entry(role.clone(), OK, "")]
    );
    assert_eq!(triggered, [role]);
}

#[test]
fn a_rebalancer_finished_longer_ago_than_its_ttl_is_deleted() {
    // Finished an hour ago with a five-second TTL.
    let finished = time(CREATED);
    assert_eq!(time_left(&finished, 5, NOW.parse().unwrap()), None);
}

#[test]
fn the_written_status_replaces_the_previous_one() {
    // `updateWorkloadRebalancerStatus`: pending or failed entries become the new status.
    let [d1, ..] = test_deployments();
    let new = observed(vec![entry(d1.clone(), OK, "")]);
    for previous in [
        WorkloadRebalancerStatus::default(),
        observed(vec![entry(d1.clone(), "", "")]),
    ] {
        let mut next = new.clone();
        assert!(finish(&previous, &mut next, 0, time(NOW)));
        assert_eq!(next.observed_workloads, new.observed_workloads);
    }
}
