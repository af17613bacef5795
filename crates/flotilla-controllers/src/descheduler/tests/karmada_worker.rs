//! Karmada's `descheduler_test.go` `TestDescheduler_worker` cases with the gRPC estimators
//! replaced by the members' answers: which clusters are asked ([`ClusterReplicas::short`]) and
//! how the binding's `spec.clusters` changes ([`plan`]), plus the Event message
//! (`updateScheduleResult`).

use super::*;

/// A binding scheduled to `target` whose members report `ready` ready replicas.
fn scheduled(target: &[(&str, i32)], ready: &[(&str, i32)]) -> ResourceBinding {
    let clusters: Vec<serde_json::Value> = target
        .iter()
        .map(|(name, replicas)| json!({"name": name, "replicas": replicas}))
        .collect();
    let items: Vec<serde_json::Value> = ready
        .iter()
        .map(|(name, replicas)| {
            json!({"clusterName": name, "status": {"readyReplicas": replicas}, "applied": true})
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": "foo", "namespace": "default"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "foo"},
            "clusters": clusters},
        "status": {"aggregatedStatus": items},
    }))
    .expect("binding")
}

/// One pass of the worker: only the short clusters are asked; each answers from `answers`.
/// Returns the binding's clusters afterwards (unchanged when there is no plan).
fn deschedule(binding: &ResourceBinding, answers: &[(&str, i32)]) -> Vec<(String, i32)> {
    let mut replicas = cluster_replicas(binding);
    for cluster in replicas.iter_mut().filter(|r| r.short()) {
        cluster.unschedulable = answers
            .iter()
            .find(|(name, _)| *name == cluster.cluster)
            .map_or(0, |&(_, n)| n);
    }
    let clusters = match plan(&binding.spec.clusters, &replicas) {
        Some(plan) => plan.clusters,
        None => binding.spec.clusters.clone(),
    };
    clusters.into_iter().map(|t| (t.name, t.replicas)).collect()
}

fn expect(rows: &[(&str, i32)]) -> Vec<(String, i32)> {
    rows.iter().map(|&(n, r)| (n.to_owned(), r)).collect()
}

#[test]
fn unschedulable_replicas_are_taken_from_the_clusters_that_cannot_run_them() {
    type Rows = &'static [(&'static str, i32)];
    let cases: [(&str, Rows, Rows, Rows, Rows); 10] = [
        (
            "1 cluster without unschedulable replicas",
            &[("member1", 5)],
            &[("member1", 5)],
            &[("member1", 0)],
            &[("member1", 5)],
        ),
        (
            "1 cluster with 1 unschedulable replica",
            &[("member1", 5)],
            &[("member1", 4)],
            &[("member1", 1)],
            &[("member1", 4)],
        ),
        (
            "1 cluster with all replicas unschedulable",
            &[("member1", 5)],
            &[("member1", 0)],
            &[("member1", 5)],
            &[("member1", 0)],
        ),
        (
            "4 ready and 2 unschedulable: never below the ready ones",
            &[("member1", 5)],
            &[("member1", 4)],
            &[("member1", 2)],
            &[("member1", 4)],
        ),
        (
            "0 ready and 2 unschedulable",
            &[("member1", 5)],
            &[("member1", 0)],
            &[("member1", 2)],
            &[("member1", 3)],
        ),
        (
            "6 ready of 5 (not short, not asked)",
            &[("member1", 5)],
            &[("member1", 6)],
            &[("member1", 2)],
            &[("member1", 5)],
        ),
        (
            "2 clusters without unschedulable replicas",
            &[("member1", 5), ("member2", 10)],
            &[("member1", 5), ("member2", 10)],
            &[("member1", 0), ("member2", 0)],
            &[("member1", 5), ("member2", 10)],
        ),
        (
            "2 clusters, 1 unschedulable replica in one",
            &[("member1", 5), ("member2", 10)],
            &[("member1", 5), ("member2", 9)],
            &[("member1", 0), ("member2", 1)],
            &[("member1", 5), ("member2", 9)],
        ),
        (
            "2 clusters with unschedulable replicas in each",
            &[("member1", 5), ("member2", 10)],
            &[("member1", 2), ("member2", 3)],
            &[("member1", 3), ("member2", 7)],
            &[("member1", 2), ("member2", 3)],
        ),
        (
            "2 clusters, one without a status (unknown ready replicas)",
            &[("member1", 5), ("member2", 10)],
            &[("member1", 2)],
            &[("member1", 3), ("member2", 7)],
            &[("member1", 2), ("member2", 3)],
        ),
    ];
    for (case, target, ready, answers, expected) in cases {
        let binding = scheduled(target, ready);
        assert_eq!(deschedule(&binding, answers), expect(expected), "{case}");
    }
}

#[test]
fn a_cluster_that_is_not_short_is_not_asked() {
    let binding = scheduled(
        &[("member1", 5), ("member2", 10)],
        &[("member1", 6), ("member2", 3)],
    );
    let asked: Vec<String> = cluster_replicas(&binding)
        .into_iter()
        .filter(ClusterReplicas::short)
        .map(|r| r.cluster)
        .collect();
    assert_eq!(asked, ["member2"]);
}

#[test]
fn a_cluster_without_an_answer_keeps_its_replicas() {
    // Karmada's `FillUnschedulableReplicas`: an unauthentic (-1) answer for one cluster counts as
    // none there, while the others are still descheduled; a failing estimator leaves all at 0.
    let binding = scheduled(
        &[("cluster1", 3), ("cluster2", 2)],
        &[("cluster1", 2), ("cluster2", 1)],
    );
    assert_eq!(
        deschedule(&binding, &[("cluster1", 1), ("cluster2", 0)]),
        expect(&[("cluster1", 2), ("cluster2", 2)])
    );
    assert_eq!(
        deschedule(&binding, &[]),
        expect(&[("cluster1", 3), ("cluster2", 2)])
    );
    assert_eq!(
        deschedule(&binding, &[("cluster1", 1), ("cluster2", 1)]),
        expect(&[("cluster1", 2), ("cluster2", 1)])
    );
}

#[test]
fn the_event_names_the_replicas_taken_per_cluster_and_in_total() {
    let binding = scheduled(
        &[("member1", 5), ("member2", 10)],
        &[("member1", 0), ("member2", 3)],
    );
    let mut replicas = cluster_replicas(&binding);
    replicas[0].unschedulable = 2;
    replicas[1].unschedulable = 7;
    let plan = plan(&binding.spec.clusters, &replicas).expect("a plan");
    assert_eq!(plan.taken, 9);
    assert_eq!(
        plan.message,
        "Binding has been descheduled, 2 replica(s) in cluster(member1), \
         7 replica(s) in cluster(member2), 9 total descheduled replica(s)"
    );
    // Both the binding and its template get it, Normal on success, Warning on failure.
    assert_eq!(REASON_SUCCEED, "DescheduleBindingSucceed");
    assert_eq!(REASON_FAILED, "DescheduleBindingFailed");
}
