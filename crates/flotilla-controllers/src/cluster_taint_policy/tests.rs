use std::sync::Arc;

use flotilla_api::karmada::{
    Cluster, ClusterAffinity, ClusterStatus, ClusterTaintPolicy, ClusterTaintPolicySpec,
    MatchCondition, PolicyTaint,
};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use super::*;

fn time(text: &str) -> Time {
    Time(text.parse().expect("timestamp"))
}

fn condition(type_: &str, status: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        last_transition_time: time("2026-01-01T00:00:00Z"),
        message: String::new(),
        observed_generation: None,
        reason: String::new(),
    }
}

fn test(type_: &str, operator: &str, values: &[&str]) -> MatchCondition {
    MatchCondition {
        condition_type: type_.to_owned(),
        operator: operator.to_owned(),
        status_values: values.iter().map(|v| (*v).to_owned()).collect(),
    }
}

fn policy_taint(key: &str, effect: &str, value: &str) -> PolicyTaint {
    PolicyTaint {
        key: key.to_owned(),
        effect: effect.to_owned(),
        value: value.to_owned(),
    }
}

fn taint(key: &str, effect: &str, added: Option<&str>) -> Taint {
    Taint {
        key: key.to_owned(),
        effect: effect.to_owned(),
        value: None,
        time_added: added.map(time),
    }
}

#[test]
fn an_empty_condition_list_never_matches() {
    assert!(!conditions_match(&[condition("Ready", "True")], &[]));
}

#[test]
fn in_and_not_in_compare_the_condition_status() {
    let ready_false = [condition("Ready", "False")];
    assert!(conditions_match(
        &[condition("Ready", "True")],
        &[test("Ready", "In", &["True"])]
    ));
    assert!(!conditions_match(
        &ready_false,
        &[test("Ready", "In", &["True"])]
    ));
    assert!(conditions_match(
        &ready_false,
        &[test("Ready", "NotIn", &["True", "Unknown"])]
    ));
    assert!(!conditions_match(
        &ready_false,
        &[test("Ready", "NotIn", &["False"])]
    ));
}

#[test]
fn a_missing_condition_fails_in_and_not_in_alike() {
    let only_ready = [condition("Ready", "True")];
    assert!(!conditions_match(
        &only_ready,
        &[test("NetworkReady", "In", &["False"])]
    ));
    assert!(
        !conditions_match(&only_ready, &[test("NetworkReady", "NotIn", &["True"])]),
        "NotIn needs the condition to be there"
    );
}

#[test]
fn tests_are_anded() {
    let conditions = [
        condition("Ready", "Unknown"),
        condition("NetworkReady", "False"),
        condition("StorageReady", "True"),
    ];
    let both = [
        test("Ready", "In", &["False", "Unknown"]),
        test("NetworkReady", "NotIn", &["True"]),
    ];
    assert!(conditions_match(&conditions, &both));
    let conditions = [
        condition("Ready", "True"),
        condition("NetworkReady", "False"),
    ];
    assert!(!conditions_match(&conditions, &both));
}

#[test]
fn an_unsupported_operator_fails_the_whole_list() {
    let conditions = [condition("Ready", "True")];
    assert!(!conditions_match(
        &conditions,
        &[test("Ready", "In", &["True"]), test("Ready", "Exists", &[])]
    ));
}

#[test]
fn a_repeated_condition_type_matches_in_on_any_and_not_in_on_the_last() {
    let conditions = [condition("Ready", "True"), condition("Ready", "False")];
    assert!(conditions_match(
        &conditions,
        &[test("Ready", "In", &["True"])]
    ));
    assert!(conditions_match(
        &conditions,
        &[test("Ready", "NotIn", &["True"])]
    ));
    assert!(!conditions_match(
        &conditions,
        &[test("Ready", "NotIn", &["False"])]
    ));
}

#[test]
fn added_taints_are_stamped_whatever_their_effect_and_existing_ones_kept() {
    let now = time("2026-02-02T10:00:00Z");
    let current = [taint("key1", "NoSchedule", Some("2026-02-02T09:59:00Z"))];
    let added = add_taints(
        &current,
        &[
            policy_taint("key1", "NoSchedule", "other-value"),
            policy_taint("key2", "NoSchedule", "v2"),
            policy_taint("key3", "NoExecute", ""),
        ],
        &now,
    );
    assert_eq!(added.len(), 3);
    assert_eq!(added[0], current[0], "same key and effect: kept as it was");
    assert_eq!(added[1].key, "key2");
    assert_eq!(added[1].value.as_deref(), Some("v2"));
    assert_eq!(added[1].time_added, Some(now.clone()));
    assert_eq!(added[2].value, None);
    assert_eq!(added[2].time_added, Some(now));
}

#[test]
fn a_taint_of_the_same_key_with_another_effect_is_added() {
    let now = time("2026-02-02T10:00:00Z");
    let current = [taint("key1", "NoSchedule", None)];
    let added = add_taints(&current, &[policy_taint("key1", "NoExecute", "")], &now);
    assert_eq!(added.len(), 2);
}

#[test]
fn removal_matches_key_and_effect_only() {
    let current = [
        taint("key1", "NoSchedule", None),
        taint("key1", "NoExecute", None),
        taint("key2", "NoSchedule", None),
    ];
    let left = remove_taints(
        &current,
        &[
            policy_taint("key1", "NoExecute", "some-value"),
            policy_taint("absent", "NoSchedule", ""),
        ],
    );
    assert_eq!(
        left,
        vec![
            taint("key1", "NoSchedule", None),
            taint("key2", "NoSchedule", None)
        ]
    );
}

fn cluster(name: &str, conditions: Vec<Condition>, taints: Vec<Taint>) -> Cluster {
    let mut cluster = Cluster::default();
    cluster.metadata.name = Some(name.to_owned());
    cluster.spec.taints = taints;
    cluster.status = Some(ClusterStatus {
        conditions,
        ..ClusterStatus::default()
    });
    cluster
}

fn policy(
    name: &str,
    created: &str,
    targets: Option<&[&str]>,
    add: Vec<MatchCondition>,
    remove: Vec<MatchCondition>,
    taints: Vec<PolicyTaint>,
) -> Arc<ClusterTaintPolicy> {
    let mut policy = ClusterTaintPolicy::default();
    policy.metadata.name = Some(name.to_owned());
    policy.metadata.creation_timestamp = Some(time(created));
    policy.spec = ClusterTaintPolicySpec {
        target_clusters: targets.map(|names| ClusterAffinity {
            cluster_names: names.iter().map(|n| (*n).to_owned()).collect(),
            ..ClusterAffinity::default()
        }),
        add_on_conditions: add,
        remove_on_conditions: remove,
        taints,
    };
    Arc::new(policy)
}

#[test]
fn only_targeted_clusters_get_the_taints() {
    let now = time("2026-02-02T10:00:00Z");
    let policies = [policy(
        "p",
        "2026-01-01T00:00:00Z",
        Some(&["member1"]),
        vec![test("Ready", "In", &["False"])],
        vec![test("Ready", "In", &["True"])],
        vec![policy_taint("not-ready", "NoSchedule", "")],
    )];
    let targeted = cluster("member1", vec![condition("Ready", "False")], vec![]);
    let other = cluster("member2", vec![condition("Ready", "False")], vec![]);
    assert_eq!(
        desired_taints(&targeted, &policies, &now),
        vec![taint(
            "not-ready",
            "NoSchedule",
            Some("2026-02-02T10:00:00Z")
        )]
    );
    assert!(desired_taints(&other, &policies, &now).is_empty());
}

#[test]
fn policies_apply_oldest_first_so_a_later_one_can_remove_what_an_earlier_added() {
    let now = time("2026-02-02T10:00:00Z");
    let conditions = vec![condition("Ready", "False")];
    let adds = policy(
        "b-adds",
        "2026-01-01T00:00:00Z",
        None,
        vec![test("Ready", "In", &["False"])],
        vec![],
        vec![policy_taint("k", "NoSchedule", "")],
    );
    let removes = policy(
        "a-removes",
        "2026-01-02T00:00:00Z",
        None,
        vec![],
        vec![test("Ready", "NotIn", &["True"])],
        vec![policy_taint("k", "NoSchedule", "")],
    );
    let policies = ordered(vec![removes.clone(), adds.clone()]);
    assert_eq!(policies[0].metadata.name.as_deref(), Some("b-adds"));
    let target = cluster("m", conditions, vec![]);
    assert!(desired_taints(&target, &policies, &now).is_empty());
    // Created in the same second: by name.
    let mut same = (*removes).clone();
    same.metadata.creation_timestamp = adds.metadata.creation_timestamp.clone();
    let policies = ordered(vec![adds, Arc::new(same)]);
    assert_eq!(policies[0].metadata.name.as_deref(), Some("a-removes"));
    assert_eq!(desired_taints(&target, &policies, &now).len(), 1);
}

#[test]
fn a_policy_adding_and_removing_on_the_same_conditions_removes() {
    let now = time("2026-02-02T10:00:00Z");
    let ready = [test("Ready", "In", &["True"])];
    let policies = [policy(
        "p",
        "2026-01-01T00:00:00Z",
        None,
        ready.to_vec(),
        ready.to_vec(),
        vec![policy_taint("k", "NoSchedule", "")],
    )];
    let target = cluster(
        "m",
        vec![condition("Ready", "True")],
        vec![taint("k", "NoSchedule", None)],
    );
    assert!(desired_taints(&target, &policies, &now).is_empty());
}

#[test]
fn the_success_note_lists_the_taints_as_karmada_does() {
    let mut with_value = taint("a", "NoSchedule", None);
    with_value.value = Some("v".into());
    assert_eq!(
        succeed_message("member1", &[with_value, taint("b", "NoExecute", None)]),
        "Update Cluster(member1) with taints(cluster now has taints([{Key:a,Value:v,Effect:NoSchedule},{Key:b,Effect:NoExecute}])) succeed"
    );
    assert_eq!(
        succeed_message("member1", &[]),
        "Update Cluster(member1) with taints(cluster now does not have taints) succeed"
    );
}
