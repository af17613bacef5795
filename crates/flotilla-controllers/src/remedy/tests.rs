use flotilla_api::karmada::{
    Cluster, ClusterConditionRequirement, ClusterStatus, DecisionMatch, Remedy,
    RemedyClusterAffinity, RemedySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::*;

mod karmada_util;

fn condition(type_: &str, status: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_transition_time: Time("2026-01-01T00:00:00Z".parse().expect("timestamp")),
        message: String::new(),
        observed_generation: None,
        reason: String::new(),
    }
}

fn test(type_: &str, operator: &str, status: &str) -> DecisionMatch {
    DecisionMatch {
        cluster_condition_match: Some(ClusterConditionRequirement {
            condition_type: type_.to_owned(),
            operator: operator.to_owned(),
            condition_status: status.to_owned(),
        }),
    }
}

fn cluster(name: &str, conditions: Vec<Condition>) -> Cluster {
    let mut cluster = Cluster::default();
    cluster.metadata.name = Some(name.to_owned());
    cluster.status = Some(ClusterStatus {
        conditions,
        ..ClusterStatus::default()
    });
    cluster
}

fn remedy(names: Option<&[&str]>, matches: Option<Vec<DecisionMatch>>, actions: &[&str]) -> Remedy {
    Remedy {
        spec: RemedySpec {
            cluster_affinity: names.map(|names| RemedyClusterAffinity {
                cluster_names: names.iter().map(|n| (*n).to_owned()).collect(),
            }),
            decision_matches: matches,
            actions: actions.iter().map(|a| (*a).to_owned()).collect(),
        },
        ..Remedy::default()
    }
}

const DNS: &str = "ServiceDomainNameResolutionReady";

#[test]
fn no_affinity_looks_at_every_cluster_and_an_affinity_only_at_the_named_ones() {
    let all = remedy(None, None, &["TrafficControl"]).spec;
    assert!(applies_to(&all, "member1"));
    let named = remedy(Some(&["member1"]), None, &[]).spec;
    assert!(applies_to(&named, "member1"));
    assert!(!applies_to(&named, "member2"));
    // Unlike a placement's affinity, naming no cluster looks at none.
    let none = remedy(Some(&[]), None, &[]).spec;
    assert!(!applies_to(&none, "member1"));
}

#[test]
fn absent_decision_matches_hold_at_once_and_an_empty_list_never() {
    assert!(decision_holds(None, &[]));
    assert!(decision_holds(None, &[condition("Ready", "True")]));
    assert!(!decision_holds(Some(&[]), &[condition("Ready", "True")]));
    assert!(!decision_holds(Some(&[]), &[]));
}

#[test]
fn equal_and_not_equal_compare_the_status_of_the_condition() {
    let dns_false = [condition("Ready", "True"), condition(DNS, "False")];
    assert!(decision_holds(
        Some(&[test(DNS, "Equal", "False")]),
        &dns_false
    ));
    assert!(!decision_holds(
        Some(&[test(DNS, "Equal", "True")]),
        &dns_false
    ));
    assert!(decision_holds(
        Some(&[test(DNS, "NotEqual", "True")]),
        &dns_false
    ));
    assert!(!decision_holds(
        Some(&[test(DNS, "NotEqual", "False")]),
        &dns_false
    ));
    // Status comparison is exact.
    assert!(!decision_holds(
        Some(&[test(DNS, "Equal", "false")]),
        &dns_false
    ));
}

#[test]
fn a_missing_condition_an_empty_entry_or_an_unknown_operator_never_holds() {
    let ready = [condition("Ready", "True")];
    assert!(!decision_holds(
        Some(&[test(DNS, "NotEqual", "True")]),
        &ready
    ));
    assert!(!decision_holds(Some(&[test(DNS, "Equal", "False")]), &[]));
    assert!(!decision_holds(Some(&[DecisionMatch::default()]), &ready));
    assert!(!decision_holds(
        Some(&[test("Ready", "In", "True")]),
        &ready
    ));
}

#[test]
fn any_one_holding_entry_is_enough() {
    let conditions = [condition("Ready", "True"), condition(DNS, "True")];
    let matches = [
        test(DNS, "Equal", "False"),
        DecisionMatch::default(),
        test("Ready", "Equal", "True"),
    ];
    assert!(decision_holds(Some(&matches), &conditions));
    assert!(!decision_holds(Some(&matches[..2]), &conditions));
}

#[test]
fn a_type_reported_twice_is_tested_on_its_first_entry() {
    let conditions = [condition(DNS, "True"), condition(DNS, "False")];
    assert!(!decision_holds(
        Some(&[test(DNS, "Equal", "False")]),
        &conditions
    ));
    assert!(decision_holds(
        Some(&[test(DNS, "Equal", "True")]),
        &conditions
    ));
}

#[test]
fn actions_are_the_sorted_union_of_the_matching_remedies() {
    let member1 = cluster(
        "member1",
        vec![condition("Ready", "True"), condition(DNS, "False")],
    );
    let remedies = [
        remedy(
            Some(&["member1"]),
            Some(vec![test(DNS, "Equal", "False")]),
            &["TrafficControl", "IsolateSchedule"],
        ),
        remedy(None, None, &["TrafficControl", "Alert"]),
        // Matches the conditions but not the cluster.
        remedy(Some(&["member2"]), None, &["Other"]),
        // Looks at the cluster but its test fails.
        remedy(
            None,
            Some(vec![test("Ready", "Equal", "False")]),
            &["Drain"],
        ),
    ];
    assert_eq!(
        desired_actions(&member1, &remedies),
        ["Alert", "IsolateSchedule", "TrafficControl"]
    );
}

#[test]
fn nothing_matching_means_no_actions() {
    let member1 = cluster("member1", vec![condition(DNS, "True")]);
    let remedies = [remedy(
        None,
        Some(vec![test(DNS, "Equal", "False")]),
        &["TrafficControl"],
    )];
    assert!(desired_actions(&member1, &remedies).is_empty());
    assert!(desired_actions(&member1, &[]).is_empty());
    // A cluster without any status is only acted on by Remedies without tests.
    let mut bare = cluster("member1", Vec::new());
    bare.status = None;
    assert!(desired_actions(&bare, &remedies).is_empty());
    let immediate = [remedy(Some(&["member1"]), None, &["TrafficControl"])];
    assert_eq!(desired_actions(&bare, &immediate), ["TrafficControl"]);
}

#[test]
fn decision_matches_keep_absent_apart_from_empty_in_json() {
    let absent: Remedy = serde_json::from_value(serde_json::json!({
        "apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy",
        "metadata": {"name": "r"}, "spec": {"actions": ["TrafficControl"]}}))
    .expect("remedy");
    assert_eq!(absent.spec.decision_matches, None);
    let empty: Remedy = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "r"}, "spec": {"decisionMatches": [], "actions": ["TrafficControl"]}}))
    .expect("remedy");
    assert_eq!(empty.spec.decision_matches, Some(Vec::new()));
    let written = serde_json::to_value(&empty).expect("json");
    assert_eq!(written["spec"]["decisionMatches"], serde_json::json!([]));
}
