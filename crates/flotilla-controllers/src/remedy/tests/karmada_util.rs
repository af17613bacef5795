//! Karmada's `remediation/util_test.go` (`isRemedyWorkOnCluster`, `remedyDecisionMatchWithCluster`,
//! `calculateActions`, `getClusterRelatedRemedies`) and the pure part of
//! `remedy_controller_test.go` (`TestReconcile`): [`applies_to`], [`decision_holds`],
//! [`desired_actions`].

use super::*;

const EQUAL: &str = "Equal";
const NOT_EQUAL: &str = "NotEqual";

/// The conditions most Karmada cases give the cluster: not Ready, DNS resolution not ready.
fn both_false() -> Vec<Condition> {
    vec![condition("Ready", "False"), condition(DNS, "False")]
}

fn dns_true() -> Option<Vec<DecisionMatch>> {
    Some(vec![test(DNS, EQUAL, "True")])
}

#[test]
fn a_remedy_works_on_a_cluster_when_it_has_no_affinity_or_its_affinity_names_it() {
    for (case, names, cluster, expected) in [
        ("no clusterAffinity", None, "member1", true),
        (
            "clusterAffinity without clusterNames",
            Some(&[][..]),
            "member1",
            false,
        ),
        (
            "clusterNames contain the cluster",
            Some(&["member1", "member2"][..]),
            "member1",
            true,
        ),
        (
            "clusterNames do not contain the cluster",
            Some(&["member1", "member2"][..]),
            "no-exist",
            false,
        ),
    ] {
        let remedy = remedy(names, dns_true(), &["TrafficControl"]);
        assert_eq!(applies_to(&remedy.spec, cluster), expected, "{case}");
    }
}

#[test]
fn the_cluster_related_remedies_are_those_working_on_it() {
    let named = |name: &str, mut remedy: Remedy| {
        remedy.metadata.name = Some(name.to_owned());
        remedy
    };
    let remedies = [
        named("nil-clusteraffinity", remedy(None, None, &[])),
        named("contains-member1", remedy(Some(&["member1"]), None, &[])),
        named(
            "do-not-contains-member1",
            remedy(Some(&["member2"]), None, &[]),
        ),
    ];
    let mut related: Vec<&str> = remedies
        .iter()
        .filter(|r| applies_to(&r.spec, "member1"))
        .filter_map(|r| r.metadata.name.as_deref())
        .collect();
    related.sort_unstable();
    assert_eq!(related, ["contains-member1", "nil-clusteraffinity"]);
}

#[test]
fn decision_matches_against_cluster_conditions() {
    let dont_care = |status: &str| test("DoNotCareType", EQUAL, status);
    for (case, matches, conditions, expected) in [
        ("no decisionMatches", None, vec![], true),
        ("no conditions", dns_true(), vec![], false),
        (
            "only entries without clusterConditionMatch",
            Some(vec![DecisionMatch {
                cluster_condition_match: None,
            }]),
            both_false(),
            false,
        ),
        (
            "one entry holds under Equal",
            Some(vec![test(DNS, EQUAL, "False"), dont_care("True")]),
            both_false(),
            true,
        ),
        (
            "one entry holds under NotEqual",
            Some(vec![test(DNS, NOT_EQUAL, "True"), dont_care("True")]),
            both_false(),
            true,
        ),
        (
            "no entry holds",
            Some(vec![test(DNS, EQUAL, "False"), dont_care("False")]),
            vec![condition("Ready", "True"), condition(DNS, "True")],
            false,
        ),
    ] {
        assert_eq!(
            decision_holds(matches.as_deref(), &conditions),
            expected,
            "{case}"
        );
    }
}

#[test]
fn actions_are_the_sorted_union_of_the_remedies_whose_decisions_hold() {
    let member1 = cluster("member1", both_false());
    assert!(desired_actions(&member1, &[]).is_empty());
    let remedies = [
        remedy(
            None,
            Some(vec![test(DNS, EQUAL, "False")]),
            &["TrafficControl"],
        ),
        remedy(
            None,
            Some(vec![test("Ready", EQUAL, "False")]),
            &["IsolateSchedule"],
        ),
    ];
    assert_eq!(
        desired_actions(&member1, &remedies),
        ["IsolateSchedule", "TrafficControl"]
    );
}

#[test]
fn a_ready_cluster_without_remedies_gets_no_actions() {
    // TestReconcile's "Cluster with no matching remedies".
    let ready = cluster("test-cluster", vec![condition("Ready", "True")]);
    assert!(desired_actions(&ready, &[]).is_empty());
}
