use flotilla_api::karmada::Cluster;
use serde_json::json;

use super::*;
use crate::select::sort_candidates;

// Karmada's own unit-test cases for assignment and Webster, restated.
mod karmada_cases;
mod karmada_common;
mod karmada_webster;

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"syncMode": "Push"}}))
        .expect("cluster")
}

struct Case {
    clusters: Vec<Cluster>,
}

impl Case {
    fn new(names: &[&str]) -> Self {
        Self {
            clusters: names.iter().map(|n| cluster(n)).collect(),
        }
    }

    /// Candidates with allocatable replicas; available = allocatable + previous.
    fn candidates(
        &self,
        allocatable: &[i32],
        spec: &ResourceBindingSpec,
    ) -> Vec<ClusterDetail<'_>> {
        let mut out: Vec<_> = self
            .clusters
            .iter()
            .zip(allocatable)
            .map(|(c, a)| ClusterDetail {
                name: c.name(),
                score: 0,
                overflow_order: 0,
                available_replicas: i64::from(*a)
                    + i64::from(spec.assigned_replicas_for_cluster(c.name())),
                allocatable_replicas: *a,
                cluster: c,
            })
            .collect();
        sort_candidates(&mut out);
        out
    }
}

fn placement(kind: &str) -> Placement {
    let value = match kind {
        "duplicated" => json!({}),
        "dynamic" => json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted", "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}),
        "aggregated" => json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated"}}),
        "static" => json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted", "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["member1"]}, "weight": 3},
                {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2},
                {"targetCluster": {"clusterNames": ["member3"]}, "weight": 1}]}}}),
        other => panic!("unknown placement {other}"),
    };
    serde_json::from_value(value).expect("placement")
}

fn spec(replicas: i32, previous: &[(&str, i32)]) -> ResourceBindingSpec {
    ResourceBindingSpec {
        replicas,
        clusters: previous
            .iter()
            .map(|(n, r)| TargetCluster::new(*n, *r))
            .collect(),
        ..ResourceBindingSpec::default()
    }
}

fn run(
    case: &Case,
    kind: &str,
    allocatable: &[i32],
    spec: &ResourceBindingSpec,
    mode: Mode,
) -> Result<Vec<(String, i32)>, ScheduleError> {
    let p = placement(kind);
    let candidates = case.candidates(allocatable, spec);
    let mut out = assign_replicas(AssignInput {
        candidates: &candidates,
        spec,
        status: &ResourceBindingStatus::default(),
        placement: &p,
        mode,
        node_weights: None,
    })?;
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out.into_iter().map(|c| (c.name, c.replicas)).collect())
}

fn pairs(p: &[(&str, i32)]) -> Vec<(String, i32)> {
    p.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect()
}

const M: [&str; 3] = ["member1", "member2", "member3"];

#[test]
fn duplicated_gives_everyone_everything() {
    let case = Case::new(&M);
    let got = run(&case, "duplicated", &[0, 0, 0], &spec(4, &[]), Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 4), ("member2", 4), ("member3", 4)])
    );
}

#[test]
fn static_weights_are_stateless() {
    let case = Case::new(&M);
    for (replicas, want) in [(12, [6, 4, 2]), (13, [7, 4, 2]), (14, [7, 5, 2])] {
        let prev = spec(replicas, &[("member3", 9)]);
        let got = run(&case, "static", &[0, 0, 0], &prev, Mode::Steady).expect("assign");
        let want: Vec<_> = M
            .iter()
            .zip(want)
            .map(|(n, r)| ((*n).to_owned(), r))
            .collect();
        assert_eq!(got, want, "{replicas}");
    }
}

#[test]
fn static_weights_drop_unweighted_and_zero_results() {
    let case = Case::new(&["member1", "member4"]);
    let got = run(&case, "static", &[0, 0], &spec(3, &[]), Mode::Steady).expect("assign");
    assert_eq!(got, pairs(&[("member1", 3)]));
    // Nobody weighted: everyone weighs 1.
    let case = Case::new(&["x", "y"]);
    let got = run(&case, "static", &[0, 0], &spec(3, &[]), Mode::Steady).expect("assign");
    assert_eq!(got, pairs(&[("x", 2), ("y", 1)]));
    // A single replica over three equal clusters: zero-replica clusters are removed.
    let case = Case::new(&["x", "y", "z"]);
    let got = run(&case, "static", &[0, 0, 0], &spec(1, &[]), Mode::Steady).expect("assign");
    assert_eq!(got, pairs(&[("x", 1)]));
}

#[test]
fn dynamic_first_schedule_and_aggregated() {
    let case = Case::new(&M);
    let got = run(&case, "dynamic", &[6, 8, 10], &spec(12, &[]), Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 3), ("member2", 4), ("member3", 5)])
    );
    let got = run(
        &case,
        "aggregated",
        &[6, 8, 10],
        &spec(12, &[]),
        Mode::Steady,
    )
    .expect("assign");
    assert_eq!(got, pairs(&[("member2", 5), ("member3", 7)]));
}

#[test]
fn dynamic_scale_up_divides_only_the_increment() {
    let case = Case::new(&M);
    let prev = spec(24, &[("member1", 2), ("member2", 4), ("member3", 6)]);
    let got = run(&case, "dynamic", &[10, 10, 10], &prev, Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 6), ("member2", 8), ("member3", 10)])
    );
}

#[test]
fn dynamic_scale_down_uses_previous_counts() {
    let case = Case::new(&M);
    let prev = spec(6, &[("member1", 2), ("member2", 4), ("member3", 6)]);
    let got = run(&case, "dynamic", &[10, 10, 10], &prev, Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 1), ("member2", 2), ("member3", 3)])
    );
}

#[test]
fn dynamic_unchanged_keeps_the_previous_result() {
    let case = Case::new(&M);
    let prev = spec(12, &[("member1", 2), ("member2", 4), ("member3", 6)]);
    let got = run(&case, "dynamic", &[0, 0, 0], &prev, Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 2), ("member2", 4), ("member3", 6)])
    );
}

#[test]
fn fresh_recomputes_everything() {
    let case = Case::new(&M);
    let prev = spec(12, &[("member1", 2), ("member2", 4), ("member3", 6)]);
    // Weights = allocatable + previous = 12, 4, 6; Webster's exact ties (4/1 = 12/3 and
    // 4/3 = 12/9) go to the party with fewer seats.
    let got = run(&case, "dynamic", &[10, 0, 0], &prev, Mode::Fresh).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 7), ("member2", 2), ("member3", 3)])
    );
}

#[test]
fn aggregated_scale_up_prefers_clusters_in_use() {
    let case = Case::new(&M);
    let prev = spec(24, &[("member1", 4), ("member2", 8)]);
    let got = run(&case, "aggregated", &[6, 6, 20], &prev, Mode::Steady).expect("assign");
    assert_eq!(got, pairs(&[("member1", 10), ("member2", 14)]));
}

#[test]
fn test_dynamic_scale_worked_example() {
    // Reference §7.1: member2 (8 replicas) is no longer a candidate.
    let case = Case::new(&["member1", "member3", "member4"]);
    let prev = spec(24, &[("member1", 4), ("member2", 8)]);
    let got = run(&case, "aggregated", &[4, 8, 12], &prev, Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 7), ("member3", 7), ("member4", 10)])
    );
}

#[test]
fn insufficient_capacity_is_unschedulable_with_karmadas_message() {
    let case = Case::new(&M);
    let err = run(&case, "dynamic", &[2, 3, 4], &spec(12, &[]), Mode::Steady).expect_err("short");
    assert_eq!(
        err,
        ScheduleError::Unschedulable(
            "failed to scale up: Clusters available replicas 9 are not enough to schedule.".into()
        )
    );
    let err = run(&case, "aggregated", &[2, 3, 4], &spec(12, &[]), Mode::Fresh).expect_err("short");
    assert_eq!(
        err.to_string(),
        "failed to do fresh scale: Clusters available replicas 9 are not enough to schedule."
    );
}

#[test]
fn non_workloads_keep_every_candidate_with_zero() {
    let case = Case::new(&M);
    let got = run(&case, "dynamic", &[0, 0, 0], &spec(0, &[]), Mode::Steady).expect("assign");
    assert_eq!(
        got,
        pairs(&[("member1", 0), ("member2", 0), ("member3", 0)])
    );
}

#[test]
fn unsupported_strategy_message() {
    let p: Placement = serde_json::from_value(json!({"replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Even"}}))
    .expect("placement");
    assert_eq!(
        strategy(&p).expect_err("unsupported").to_string(),
        "unsupported replica scheduling strategy, replicaSchedulingType: Divided, \
         replicaDivisionPreference: Even, please try another scheduling strategy"
    );
}

#[test]
fn merge_sums_per_cluster() {
    let old = vec![TargetCluster::new("a", 1), TargetCluster::new("b", 2)];
    let new = vec![TargetCluster::new("b", 3), TargetCluster::new("c", 4)];
    let mut merged = merge_target_clusters(old, new);
    merged.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        merged,
        [
            TargetCluster::new("a", 1),
            TargetCluster::new("b", 5),
            TargetCluster::new("c", 4)
        ]
    );
}

#[test]
fn karmada_dynamic_scale_table() {
    // Karmada's Test_dynamicScale cases (previous result, allocatable, expected or error).
    type Row<'a> = (
        &'a str,
        i32,
        &'a [(&'a str, i32)],
        &'a [i32],
        Option<&'a [(&'a str, i32)]>,
    );
    let table: [Row<'_>; 6] = [
        (
            "dynamic",
            6,
            &[("member1", 2), ("member2", 4), ("member3", 6)],
            &[1, 1, 1],
            Some(&[("member1", 1), ("member2", 2), ("member3", 3)]),
        ),
        (
            "dynamic",
            24,
            &[("member1", 2), ("member2", 4), ("member3", 6)],
            &[1, 1, 1],
            None,
        ),
        (
            "aggregated",
            6,
            &[("member1", 4), ("member2", 8)],
            &[1, 1, 1],
            Some(&[("member2", 6)]),
        ),
        (
            "aggregated",
            8,
            &[("member1", 4), ("member2", 8)],
            &[100, 100, 0],
            Some(&[("member2", 8)]),
        ),
        (
            "aggregated",
            24,
            &[("member1", 4), ("member2", 8)],
            &[4, 6, 8],
            Some(&[("member1", 7), ("member2", 12), ("member3", 5)]),
        ),
        (
            "aggregated",
            24,
            &[("member1", 4), ("member2", 8)],
            &[1, 1, 1],
            None,
        ),
    ];
    let case = Case::new(&M);
    for (kind, replicas, previous, allocatable, want) in table {
        let got = run(
            &case,
            kind,
            allocatable,
            &spec(replicas, previous),
            Mode::Steady,
        );
        match want {
            Some(want) => assert_eq!(
                got.expect("assign"),
                pairs(want),
                "{kind} {replicas} {previous:?}"
            ),
            None => assert!(
                matches!(got, Err(ScheduleError::Unschedulable(_))),
                "{kind} {replicas} {previous:?}: {got:?}"
            ),
        }
    }
}

#[test]
fn node_count_division_weights_by_fitting_nodes() {
    let case = Case::new(&M);
    let p = placement("static");
    let s = spec(9, &[]);
    let candidates = case.candidates(&[0, 0, 0], &s);
    let weights: BTreeMap<String, i64> = [("member1".to_owned(), 1), ("member2".to_owned(), 2)]
        .into_iter()
        .collect();
    let run = |weights: &BTreeMap<String, i64>| {
        assign_replicas(AssignInput {
            candidates: &candidates,
            spec: &s,
            status: &ResourceBindingStatus::default(),
            placement: &p,
            mode: Mode::Steady,
            node_weights: Some(weights),
        })
    };
    let mut got = run(&weights).expect("assign");
    got.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        got,
        [
            TargetCluster::new("member1", 3),
            TargetCluster::new("member2", 6)
        ]
    );
    assert_eq!(
        run(&BTreeMap::new()).expect_err("no nodes").to_string(),
        "no node of the selected clusters fits a replica"
    );
}

#[test]
fn multi_component_workloads_on_one_cluster_record_their_components() {
    use flotilla_api::karmada::Component;
    let case = Case::new(&M[..1]);
    let mut spec = spec(0, &[]);
    spec.components = vec![
        Component {
            name: "jobmanager".into(),
            replicas: 1,
            replica_requirements: None,
        },
        Component {
            name: "taskmanager".into(),
            replicas: 3,
            replica_requirements: None,
        },
    ];
    let assign = |spec: &ResourceBindingSpec| {
        let candidates = case.candidates(&[0], spec);
        assign_replicas(AssignInput {
            candidates: &candidates,
            spec,
            status: &ResourceBindingStatus::default(),
            placement: spec.placement.as_ref().expect("a placement"),
            mode: Mode::Steady,
            node_weights: None,
        })
        .expect("assign")
    };
    // Without a spread constraint to exactly one cluster: no component results.
    spec.placement = Some(placement("duplicated"));
    assert_eq!(assign(&spec)[0].components, []);
    let mut one: Placement = placement("duplicated");
    one.spread_constraints = serde_json::from_value(json!([
        {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}
    ]))
    .expect("constraints");
    spec.placement = Some(one);
    let got = assign(&spec);
    assert_eq!(got[0].replicas, 0);
    assert_eq!(
        got[0].components,
        [
            TargetComponent {
                name: "jobmanager".into(),
                replicas: 1
            },
            TargetComponent {
                name: "taskmanager".into(),
                replicas: 3
            },
        ]
    );
}
