//! PropagationPolicy and OverridePolicy validation with Karmada's messages.

use serde_json::{Value, json};

use super::*;
use crate::validation::FieldErrorKind;

#[test]
fn resource_selectors_are_required_by_the_schema() {
    assert_eq!(
        pp_errors(json!({})),
        ["spec.resourceSelectors: Required value"]
    );
    assert_eq!(
        pp_errors(json!({"resourceSelectors": []})),
        [
            "spec.resourceSelectors: Invalid value: 0: spec.resourceSelectors in body should have at least 1 items"
        ]
    );
    assert_eq!(
        pp_errors(json!({"resourceSelectors": [{"name": "x"}]})),
        [
            "spec.resourceSelectors[0].apiVersion: Required value",
            "spec.resourceSelectors[0].kind: Required value"
        ]
    );
}
#[test]
fn enums_are_enforced_by_the_schema() {
    let errors = validate(
        Kind::PropagationPolicy,
        &pp(json!({
            "resourceSelectors": selector(),
            "conflictResolution": "Ignore",
            "preemption": "Sometimes",
            "placement": {
                "replicaScheduling": {"replicaSchedulingType": "Split", "replicaDivisionPreference": "Even"},
                "spreadConstraints": [{"spreadByField": "rack"}],
            },
            "failover": {"application": {"decisionConditions": {}, "purgeMode": "Immediately"}, "cluster": {"purgeMode": "Never"}},
        })),
        None,
    );
    assert!(
        errors
            .iter()
            .all(|e| e.kind == FieldErrorKind::NotSupported)
    );
    let rendered = messages(&errors);
    for expected in [
        "spec.preemption: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\"",
        "spec.placement.spreadConstraints[0].spreadByField: Unsupported value: \"rack\": supported values: \"cluster\", \"region\", \"zone\", \"provider\"",
        "spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value: \"Split\": supported values: \"Duplicated\", \"Divided\"",
        "spec.placement.replicaScheduling.replicaDivisionPreference: Unsupported value: \"Even\": supported values: \"Aggregated\", \"Weighted\"",
        "spec.failover.application.purgeMode: Unsupported value: \"Immediately\": supported values: \"Directly\", \"Gracefully\", \"Never\"",
        "spec.failover.cluster.purgeMode: Unsupported value: \"Never\": supported values: \"Directly\", \"Gracefully\"",
        "spec.conflictResolution: Unsupported value: \"Ignore\": supported values: \"Abort\", \"Overwrite\"",
    ] {
        assert!(
            rendered.contains(&expected.to_owned()),
            "missing {expected}: {rendered:?}"
        );
    }
}
#[test]
fn static_weights_must_be_positive() {
    let errors = pp_errors(
        json!({"resourceSelectors": selector(), "placement": {"replicaScheduling": {
        "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["m1"]}, "weight": 0}]}}}}),
    );
    assert_eq!(
        errors,
        [
            "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: 0: spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight in body should be greater than or equal to 1"
        ]
    );
}
#[test]
fn cluster_affinity_and_affinities_are_exclusive() {
    let errors = validate(
        Kind::PropagationPolicy,
        &pp(json!({"resourceSelectors": selector(), "placement": {
            "clusterAffinity": {"clusterNames": ["m1"]},
            "clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"]}],
        }})),
        None,
    );
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "spec.placement");
    assert!(
        errors[0]
            .to_string()
            .ends_with(": clusterAffinities cannot co-exist with clusterAffinity")
    );
}
#[test]
fn affinity_names_are_label_keys_and_unique() {
    let errors = pp_errors(
        json!({"resourceSelectors": selector(), "placement": {"clusterAffinities": [
            {"affinityName": "a b", "clusterNames": ["m1"]},
            {"affinityName": "g", "clusterNames": ["m1"]},
            {"affinityName": "g", "clusterNames": ["m2"]},
        ]}}),
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("spec.placement.clusterAffinities[0]: Invalid value: \"a b\": name part must consist of alphanumeric characters"));
    assert!(errors[1].starts_with("spec.placement.clusterAffinities: Invalid value: [{"));
    assert!(errors[1].ends_with("each affinity term in a policy must have a unique name"));
    let too_long = "a".repeat(33);
    assert_eq!(
        pp_errors(
            json!({"resourceSelectors": selector(), "placement": {"clusterAffinities": [{"affinityName": too_long}]}})
        ),
        [
            "spec.placement.clusterAffinities[0].affinityName: Too long: may not be more than 32 bytes"
        ]
    );
}
#[test]
fn field_selectors_accept_provider_region_zone_with_in_or_not_in() {
    let with = |key: &str, op: &str| {
        pp_errors(
            json!({"resourceSelectors": selector(), "placement": {"clusterAffinity": {
            "fieldSelector": {"matchExpressions": [{"key": key, "operator": op, "values": ["x"]}]}}}}),
        )
    };
    assert!(with("region", "In").is_empty());
    let errors = with("rack", "In");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with(
        "spec.placement.clusterAffinity.fieldSelector: Invalid value: {\"matchExpressions\""
    ));
    assert!(errors[0].ends_with(": unsupported key \"rack\", must be provider, region, or zone"));
    assert!(
        with("zone", "Exists")[0]
            .ends_with(": unsupported operator \"Exists\", must be In or NotIn")
    );
}
#[test]
fn overflow_affinities_need_dynamic_weight_or_aggregated() {
    let placement = |scheduling: Value| {
        pp_errors(json!({"resourceSelectors": selector(), "placement": {
            "replicaScheduling": scheduling,
            "clusterAffinities": [{"affinityName": "primary", "clusterNames": ["m1"],
                "overflowAffinities": [{"affinityName": "spill", "clusterNames": ["m2"]}]}],
        }}))
    };
    let errors = placement(json!({"replicaSchedulingType": "Duplicated"}));
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .starts_with("spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: ")
    );
    assert!(errors[0].ends_with(
        "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"
    ));
    assert!(placement(json!({"replicaDivisionPreference": "Aggregated"})).is_empty());
    assert!(
        placement(json!({"weightPreference": {"dynamicWeight": "AvailableReplicas"}})).is_empty()
    );
    assert_eq!(
        placement(
            json!({"weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 1}]}})
        )
        .len(),
        1
    );
}
#[test]
fn overflow_affinity_names_must_differ_from_the_primary() {
    let errors = pp_errors(json!({"resourceSelectors": selector(), "placement": {
        "replicaScheduling": {"replicaDivisionPreference": "Aggregated"},
        "clusterAffinities": [{"affinityName": "primary",
            "overflowAffinities": [{"affinityName": "primary", "clusterNames": ["m2"]}]}],
    }}));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].ends_with(
            "overflowAffinities can only be used together with the inline ClusterAffinity"
        )
    );
    assert_eq!(
        errors[1],
        "spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName: Invalid value: \"primary\": overflow affinity name must be unique and must not duplicate the primary group's affinityName"
    );
}
#[test]
fn spread_constraint_rules() {
    let spread = |constraints: Value| {
        pp_errors(
            json!({"resourceSelectors": selector(), "placement": {"spreadConstraints": constraints}}),
        )
    };
    assert!(
        spread(json!([{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 3}])).is_empty()
    );
    let both = spread(json!([{"spreadByField": "cluster", "spreadByLabel": "rack"}]));
    assert_eq!(both.len(), 1);
    assert!(both[0].starts_with("spec.placement.spreadConstraints[0]: Invalid value: {"));
    assert!(both[0].ends_with(": spreadByLabel should not co-exist with spreadByField"));
    let ranges = spread(
        json!([{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2}, {"spreadByLabel": "l", "minGroups": -1, "maxGroups": -1}]),
    );
    assert!(ranges[0].ends_with("maxGroups lower than minGroups is not allowed"));
    assert!(ranges[1].ends_with("minGroups lower than 0 is not allowed"));
    assert!(ranges[2].ends_with("maxGroups lower than 0 is not allowed"));
    let repeated = spread(
        json!([{"spreadByField": "cluster"}, {"spreadByField": "region"}, {"spreadByField": "region"}, {"spreadByField": "region"}]),
    );
    assert_eq!(repeated.len(), 1, "reported once: {repeated:?}");
    assert!(repeated[0].starts_with("spec.placement.spreadConstraints: Invalid value: [{"));
    assert!(repeated[0].ends_with(": multiple region spread constraints are not allowed"));
    let no_cluster = spread(json!([{"spreadByField": "region"}]));
    assert_eq!(no_cluster.len(), 1);
    assert!(no_cluster[0].ends_with("the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"));
    assert!(spread(json!([{"spreadByLabel": "rack"}])).is_empty());
}
#[test]
fn tolerations_with_lt_or_gt_are_rejected() {
    assert_eq!(
        pp_errors(
            json!({"resourceSelectors": selector(), "placement": {"clusterTolerations": [
            {"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Gt", "value": "3"}]}})
        ),
        [
            "spec.placement.clusterTolerations[1].operator: Unsupported value: \"Gt\": supported values: \"\", \"Exists\", \"Equal\""
        ]
    );
}
#[test]
fn workload_affinity_keys_are_label_keys_and_differ() {
    let errors = pp_errors(
        json!({"resourceSelectors": selector(), "placement": {"workloadAffinity": {
        "affinity": {"groupByLabelKey": "app"}, "antiAffinity": {"groupByLabelKey": "app"}}}}),
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("spec.placement.workloadAffinity: Invalid value: {"));
    assert!(errors[0].ends_with("affinity and antiAffinity must not use the same groupByLabelKey"));
}
#[test]
fn selector_namespace_must_be_the_policys() {
    assert_eq!(
        pp_errors(
            json!({"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other"}]})
        ),
        [
            "spec.resourceSelectors[0].namespace: Invalid value: \"other\": namespace of resource selector must be the same as the namespace of the policy"
        ]
    );
}
#[test]
fn preemption_always_needs_names() {
    assert_eq!(
        pp_errors(
            json!({"preemption": "Always", "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]})
        ),
        [
            "spec.resourceSelectors[0].name: Invalid value: \"\": name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption"
        ]
    );
}
#[test]
fn suspension_dispatching_excludes_dispatching_on_clusters() {
    let errors = pp_errors(json!({"resourceSelectors": selector(), "suspension": {
        "dispatching": true, "dispatchingOnClusters": {"clusterNames": ["m1"]}}}));
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("spec.suspension: Invalid value: {"));
    assert!(errors[0].ends_with(
        "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"
    ));
}
#[test]
fn application_failover_rules() {
    let failover = |application: Value, deps: bool| {
        pp_errors(
            json!({"resourceSelectors": selector(), "propagateDeps": deps, "failover": {"application": application}}),
        )
    };
    assert!(failover(json!({"decisionConditions": {}}), true).is_empty());
    assert_eq!(
        failover(json!({"decisionConditions": {}}), false),
        [
            "spec.propagateDeps: Invalid value: false: application failover is set, propagateDeps must be true"
        ]
    );
    assert_eq!(
        failover(
            json!({"decisionConditions": {"tolerationSeconds": -1}, "purgeMode": "Directly", "gracePeriodSeconds": 10}),
            true
        ),
        [
            "spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -1: must be greater than or equal to 0",
            "spec.failover.application.gracePeriodSeconds: Invalid value: 10: only takes effect when purgeMode is gracefully",
        ]
    );
    assert_eq!(
        failover(
            json!({"decisionConditions": {}, "gracePeriodSeconds": 0}),
            true
        ),
        ["spec.failover.application.gracePeriodSeconds: Invalid value: 0: must be greater than 0"]
    );
    assert_eq!(
        failover(json!({}), true),
        ["spec.failover.application.decisionConditions: Required value"]
    );
}
#[test]
fn scheduler_name_and_permanent_id_are_immutable() {
    let old = pp(json!({"resourceSelectors": selector()}));
    let mut renamed = old.clone();
    renamed["spec"]["schedulerName"] = "other".into();
    assert_eq!(
        messages(&validate(Kind::PropagationPolicy, &renamed, Some(&old))),
        ["spec.schedulerName: Forbidden: the schedulerName should not be updated"]
    );
    let mut relabelled = old.clone();
    relabelled["metadata"]["labels"][PP_PERMANENT_ID] = "mine".into();
    assert_eq!(
        messages(&validate(Kind::PropagationPolicy, &relabelled, Some(&old))),
        [
            "metadata.labels[propagationpolicy.karmada.io/permanent-id]: Forbidden: label propagationpolicy.karmada.io/permanent-id is immutable, it can only be set by the system during creation"
        ]
    );
    assert!(validate(Kind::PropagationPolicy, &old, Some(&old)).is_empty());
}
#[test]
fn override_policy_rules() {
    let op = |spec: Value| {
        let policy = defaulted(
            Kind::OverridePolicy,
            json!({"metadata": {"name": "o", "namespace": "default"}, "spec": spec}),
        );
        messages(&validate(Kind::OverridePolicy, &policy, None))
    };
    let plaintext =
        json!({"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 2}]});
    assert!(op(json!({"overrideRules": [{"targetCluster": {"clusterNames": ["m1"]}, "overriders": plaintext}]})).is_empty());
    let both = op(
        json!({"targetCluster": {"clusterNames": ["m1"]}, "overriders": plaintext, "overrideRules": []}),
    );
    assert_eq!(both.len(), 2);
    assert!(both[0].starts_with("spec.targetCluster: Invalid value: {"));
    assert!(both[0].ends_with("overrideRules and targetCluster can't co-exist"));
    assert!(both[1].ends_with("overrideRules and overriders can't co-exist"));
    assert_eq!(
        op(
            json!({"overrideRules": [{"overriders": {"plaintext": [{"path": "/x", "operator": "move"}]}}]})
        ),
        [
            "spec.overrideRules[0].overriders.plaintext[0].operator: Unsupported value: \"move\": supported values: \"add\", \"remove\", \"replace\""
        ]
    );
    assert_eq!(
        op(
            json!({"overrideRules": [{"overriders": {"imageOverrider": [{"component": "Digest", "operator": "add"}]}}]})
        ),
        [
            "spec.overrideRules[0].overriders.imageOverrider[0].component: Unsupported value: \"Digest\": supported values: \"Registry\", \"Repository\", \"Tag\""
        ]
    );
    assert_eq!(
        op(
            json!({"overrideRules": [{"overriders": {"imageOverrider": [{"component": "Tag", "operator": "add", "value": "x", "predicate": {"path": "spec/x"}}]}}]})
        ),
        [
            "spec.overrideRules[0].overriders.imageOverrider[0].predicate.path: Invalid value: \"spec/x\": JSON pointer must be empty or start with a \"/"
        ]
    );
    let field = op(json!({"overrideRules": [{"overriders": {"fieldOverrider": [
        {"fieldPath": "/data/config", "json": [{"subPath": "a", "operator": "add"}, {"subPath": "/b", "operator": "remove", "value": 1}]},
        {"fieldPath": "/data/x"},
    ]}}]}));
    assert_eq!(
        field,
        [
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath: Invalid value: \"a\": JSON pointer must be empty or start with a \"/",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[1].value: Invalid value: 1: value is not allowed for remove operation",
            "spec.overrideRules[0].overriders.fieldOverrider[1]: Required value: FieldOverrider must have either JSON or YAML set",
        ]
    );
    let labels = op(
        json!({"overrideRules": [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"bad key!": "v"}}]}}]}),
    );
    assert_eq!(labels.len(), 1);
    assert!(labels[0].starts_with(
        "spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value: \"bad key!\""
    ));
    assert_eq!(
        op(
            json!({"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "x"}]})
        ),
        [
            "spec.resourceSelectors[0].namespace: Invalid value: \"x\": namespace of resource selector must be the same as the namespace of the policy"
        ]
    );
}
