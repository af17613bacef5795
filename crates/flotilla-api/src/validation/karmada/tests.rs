use serde_json::{Value, json};

use super::*;
use crate::validation::FieldErrorKind;

const NOW: &str = "2026-01-02T03:04:05Z";

fn ctx(create: bool) -> Defaulting<'static> {
    Defaulting {
        create,
        fresh_id: "11111111-2222-3333-4444-555555555555",
        now: NOW,
    }
}

fn defaulted(kind: Kind, mut object: Value) -> Value {
    default_object(kind, &mut object, &ctx(true));
    object
}

/// A PropagationPolicy in `default` with `spec`, defaulted as on create.
fn pp(spec: Value) -> Value {
    defaulted(
        Kind::PropagationPolicy,
        json!({"metadata": {"name": "p", "namespace": "default"}, "spec": spec}),
    )
}

fn selector() -> Value {
    json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}])
}

/// The rendered errors (`field: body`).
fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn pp_errors(spec: Value) -> Vec<String> {
    messages(&validate(Kind::PropagationPolicy, &pp(spec), None))
}

#[test]
fn kinds_are_found_by_group_and_kind() {
    assert_eq!(
        Kind::of("policy.karmada.io", "PropagationPolicy"),
        Some(Kind::PropagationPolicy)
    );
    assert_eq!(
        Kind::of("cluster.karmada.io", "Cluster"),
        Some(Kind::Cluster)
    );
    assert_eq!(Kind::of("apps", "Deployment"), None);
}

#[test]
fn propagation_policy_gets_crd_and_webhook_defaults() {
    let policy = pp(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "placement": {
            "replicaScheduling": {},
            "spreadConstraints": [{"maxGroups": 2}, {"spreadByField": "region", "minGroups": 0}],
        },
        "failover": {"application": {"decisionConditions": {}}},
    }));
    assert_eq!(
        policy["spec"],
        json!({
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default"}],
            "placement": {
                "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
                "spreadConstraints": [
                    {"maxGroups": 2, "spreadByField": "cluster", "minGroups": 1},
                    {"spreadByField": "region", "minGroups": 1},
                ],
            },
            "failover": {"application": {
                "decisionConditions": {"tolerationSeconds": 300},
                "purgeMode": "Gracefully",
                "gracePeriodSeconds": 600,
            }},
            "priority": 0,
            "preemption": "Never",
            "schedulerName": "default-scheduler",
            "conflictResolution": "Abort",
        })
    );
    assert_eq!(
        policy["metadata"]["labels"][PP_PERMANENT_ID],
        "11111111-2222-3333-4444-555555555555"
    );
    assert_eq!(policy["metadata"]["finalizers"], json!([PP_FINALIZER]));
}

#[test]
fn duplicated_scheduling_keeps_no_preference() {
    let policy = pp(json!({
        "resourceSelectors": selector(),
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Duplicated"}},
    }));
    assert_eq!(
        policy["spec"]["placement"]["replicaScheduling"],
        json!({"replicaSchedulingType": "Duplicated"})
    );
}

#[test]
fn cluster_propagation_policy_keeps_selector_namespaces_and_uses_cluster_names() {
    let policy = defaulted(
        Kind::ClusterPropagationPolicy,
        json!({"metadata": {"name": "c"}, "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "Namespace"}]}}),
    );
    assert!(
        policy["spec"]["resourceSelectors"][0]
            .get("namespace")
            .is_none()
    );
    assert!(policy["metadata"]["labels"].get(CPP_PERMANENT_ID).is_some());
    assert_eq!(policy["metadata"]["finalizers"], json!([CPP_FINALIZER]));
    assert!(validate(Kind::ClusterPropagationPolicy, &policy, None).is_empty());
}

#[test]
fn service_import_selectors_force_propagate_deps() {
    let policy = pp(json!({"resourceSelectors": [
        {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport", "name": "s"}
    ]}));
    assert_eq!(policy["spec"]["propagateDeps"], true);
}

#[test]
fn defaults_are_idempotent_and_updates_keep_ids() {
    let samples = [
        (
            Kind::PropagationPolicy,
            pp(
                json!({"resourceSelectors": selector(), "placement": {"replicaScheduling": {}, "spreadConstraints": [{}]}}),
            ),
        ),
        (
            Kind::Cluster,
            defaulted(
                Kind::Cluster,
                json!({"metadata": {"name": "m1"}, "spec": {"syncMode": "Push", "zone": "z1", "taints": [{"key": "k", "effect": "NoExecute"}]}}),
            ),
        ),
        (
            Kind::Work,
            defaulted(
                Kind::Work,
                json!({"metadata": {"name": "w", "namespace": "karmada-es-m1"}, "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "x"}}]}}}),
            ),
        ),
        (
            Kind::ResourceBinding,
            defaulted(
                Kind::ResourceBinding,
                json!({"metadata": {"name": "b", "namespace": "default"}, "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "n"}}}),
            ),
        ),
    ];
    for (kind, once) in samples {
        let mut twice = once.clone();
        let other = Defaulting {
            create: false,
            fresh_id: "another-id",
            now: "2030-01-01T00:00:00Z",
        };
        default_object(kind, &mut twice, &other);
        assert_eq!(twice, once, "{kind:?}");
    }
}

#[test]
fn overridepolicy_selectors_get_the_policy_namespace() {
    let policy = defaulted(
        Kind::OverridePolicy,
        json!({"metadata": {"name": "o", "namespace": "ns1"}, "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]}}),
    );
    assert_eq!(policy["spec"]["resourceSelectors"][0]["namespace"], "ns1");
    let cop = defaulted(
        Kind::ClusterOverridePolicy,
        json!({"metadata": {"name": "o"}, "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}]}}),
    );
    assert!(
        cop["spec"]["resourceSelectors"][0]
            .get("namespace")
            .is_none()
    );
}

#[test]
fn bindings_get_ids_only_on_create_and_crd_defaults() {
    let mut binding = json!({"metadata": {"name": "b"}, "spec": {"resource": {"apiVersion": "v1", "kind": "Namespace", "name": "n"}, "schedulePriority": {}}});
    default_object(Kind::ClusterResourceBinding, &mut binding, &ctx(false));
    assert!(binding["metadata"].get("labels").is_none());
    assert_eq!(binding["spec"]["conflictResolution"], "Abort");
    assert_eq!(binding["spec"]["schedulePriority"]["priority"], 0);
    default_object(Kind::ClusterResourceBinding, &mut binding, &ctx(true));
    assert!(
        binding["metadata"]["labels"]
            .get(CRB_PERMANENT_ID)
            .is_some()
    );
}

#[test]
fn work_manifests_are_pruned_and_stamped() {
    let work = defaulted(
        Kind::Work,
        json!({"metadata": {"name": "w"}, "spec": {"workload": {"manifests": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
                "name": "d", "uid": "u", "resourceVersion": "5", "generation": 2, "creationTimestamp": "t",
                "managedFields": [], "ownerReferences": [], "finalizers": ["f"],
                "labels": {"app": "d"},
                "annotations": {"deployment.kubernetes.io/revision": "3", "keep": "yes"}},
             "spec": {"replicas": 1}, "status": {"replicas": 1}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"]}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "h"}, "spec": {"clusterIP": "None"}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {
                "ttlSecondsAfterFinished": 5,
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
                "template": {"metadata": {"labels": {"job-name": "j", "app": "j"}}}}},
        ]}}}),
    );
    let id = "11111111-2222-3333-4444-555555555555";
    assert_eq!(work["metadata"]["labels"][WORK_PERMANENT_ID], id);
    let manifests = &work["spec"]["workload"]["manifests"];
    assert_eq!(
        manifests[0],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
            "name": "d",
            "labels": {"app": "d", WORK_PERMANENT_ID: id},
            "annotations": {
                "keep": "yes",
                MANAGED_ANNOTATIONS: "keep,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
                MANAGED_LABELS: "app,work.karmada.io/permanent-id",
            }},
         "spec": {"replicas": 1}})
    );
    assert!(manifests[1]["spec"].get("clusterIP").is_none());
    assert!(manifests[1]["spec"].get("clusterIPs").is_none());
    assert_eq!(manifests[2]["spec"]["clusterIP"], "None");
    assert_eq!(manifests[3]["spec"]["selector"]["matchLabels"], json!({}));
    assert_eq!(
        manifests[3]["spec"]["template"]["metadata"]["labels"],
        json!({"app": "j"})
    );
    assert!(
        manifests[3]["spec"]
            .get("ttlSecondsAfterFinished")
            .is_none()
    );
}

#[test]
fn cluster_strategy_defaults() {
    let cluster = defaulted(
        Kind::Cluster,
        json!({"metadata": {"name": "m1"}, "spec": {"syncMode": "Push", "zone": "z1",
            "taints": [{"key": "a", "effect": "NoExecute"}, {"key": "b", "effect": "NoSchedule"}]}}),
    );
    let spec = &cluster["spec"];
    assert_eq!(spec["zones"], json!(["z1"]));
    assert!(spec.get("zone").is_none());
    assert_eq!(spec["taints"][0]["timeAdded"], NOW);
    assert!(spec["taints"][1].get("timeAdded").is_none());
    let models = spec["resourceModels"].as_array().expect("default models");
    assert_eq!(models.len(), 9);
    assert_eq!(
        models[0]["ranges"][1],
        json!({"name": "memory", "min": "0", "max": "4Gi"})
    );
    assert_eq!(
        models[2]["ranges"][0],
        json!({"name": "cpu", "min": "2", "max": "4"})
    );
    assert_eq!(
        models[2]["ranges"][1],
        json!({"name": "memory", "min": "16Gi", "max": "32Gi"})
    );
    assert_eq!(
        models[7]["ranges"][1],
        json!({"name": "memory", "min": "512Gi", "max": "1Ti"})
    );
    assert_eq!(
        models[8]["ranges"][0],
        json!({"name": "cpu", "min": "128", "max": MAX_INT64})
    );
    assert!(validate(Kind::Cluster, &cluster, None).is_empty());
}

#[test]
fn cluster_models_are_standardized_and_not_defaulted_on_update() {
    let mut cluster = json!({"metadata": {"name": "m1"}, "spec": {"syncMode": "Pull", "resourceModels": [
        {"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": "8"}]},
        {"grade": 0, "ranges": [{"name": "cpu", "min": "1", "max": "2"}]},
    ]}});
    default_object(Kind::Cluster, &mut cluster, &ctx(false));
    assert_eq!(
        cluster["spec"]["resourceModels"],
        json!([
            {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "2"}]},
            {"grade": 1, "ranges": [{"name": "cpu", "min": "2", "max": MAX_INT64}]},
        ])
    );
    assert!(validate(Kind::Cluster, &cluster, None).is_empty());
    let mut bare = json!({"metadata": {"name": "m1"}, "spec": {"syncMode": "Pull"}});
    default_object(Kind::Cluster, &mut bare, &ctx(false));
    assert!(bare["spec"].get("resourceModels").is_none());
}

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

#[test]
fn cluster_rules() {
    let cluster = |spec: Value| {
        messages(&validate(
            Kind::Cluster,
            &json!({"metadata": {"name": "m1"}, "spec": spec}),
            None,
        ))
    };
    assert_eq!(
        cluster(json!({})),
        [
            "spec.syncMode: Required value",
            "spec.syncMode: Unsupported value: \"\": supported values: \"Pull\", \"Push\""
        ]
    );
    assert_eq!(
        cluster(json!({"syncMode": "Push", "apiEndpoint": "https://user@host:6443/?a=b#f"})),
        [
            "spec.apiEndpoint: Invalid value: \"user\": user information is not permitted in the URL",
            "spec.apiEndpoint: Invalid value: \"f\": fragments are not permitted in the URL",
            "spec.apiEndpoint: Invalid value: \"a=b\": query parameters are not permitted in the URL",
        ]
    );
    assert_eq!(
        cluster(json!({"syncMode": "Push", "apiEndpoint": "member1"})),
        [
            "spec.apiEndpoint: Invalid value: \"\": host must be provided; desired format: hostname, hostname:port, IP or IP:port"
        ]
    );
    assert_eq!(
        cluster(json!({"syncMode": "Push", "secretRef": {"name": "s"}, "proxyURL": "ftp://p"})),
        [
            "spec.secretRef.namespace: Required value",
            "spec.proxyURL: Invalid value: \"ftp://p\": unsupported scheme \"ftp\", must be http, https, or socks5",
        ]
    );
    let taints = cluster(json!({"syncMode": "Push", "taints": [
        {"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"}, {"key": "c"}]}));
    assert_eq!(taints.len(), 3, "{taints:?}");
    assert!(taints[0].starts_with("spec.taints[1]: Duplicate value: {"));
    assert!(taints[0].ends_with(": taints must be unique by key and effect pair"));
    assert_eq!(
        taints[1],
        "spec.taints[2].effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoSchedule\", \"NoExecute\""
    );
    assert_eq!(taints[2], "spec.taints[3].effect: Required value");
    let long = "a".repeat(49);
    assert_eq!(
        messages(&validate(
            Kind::Cluster,
            &json!({"metadata": {"name": long}, "spec": {"syncMode": "Push"}}),
            None
        )),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 48 characters"
        )]
    );
}

#[test]
fn cluster_resource_models_must_be_contiguous() {
    let models = |models: Value| {
        messages(&validate(
            Kind::Cluster,
            &json!({"metadata": {"name": "m"}, "spec": {"syncMode": "Push", "resourceModels": models}}),
            None,
        ))
    };
    let gap = models(json!([
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "2"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "3", "max": MAX_INT64}]},
    ]));
    assert_eq!(gap.len(), 1);
    assert!(gap[0].starts_with("spec.resourceModels: Invalid value: [{"));
    assert!(
        gap[0].ends_with(": Model intervals for resources must be contiguous and non-overlapping")
    );
    let same = models(json!([
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "2"}]},
        {"grade": 0, "ranges": [{"name": "cpu", "min": "2", "max": MAX_INT64}]},
    ]));
    assert!(same[0].ends_with("The grade of each models should not be the same"));
    let units = models(json!([
        {"grade": 0, "ranges": [{"name": "memory", "min": "0", "max": "1Gi"}]},
        {"grade": 1, "ranges": [{"name": "memory", "min": "1073741824", "max": MAX_INT64}]},
    ]));
    assert!(units.is_empty(), "{units:?}");
    let inverted =
        models(json!([{"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "0"}]}]));
    assert!(
        inverted[0].ends_with("The max value of each resource must be greater than the min value")
    );
}

#[test]
fn federated_resource_quota_rules() {
    let frq = |spec: Value| {
        messages(&validate(
            Kind::FederatedResourceQuota,
            &json!({"metadata": {"name": "q", "namespace": "default"}, "spec": spec}),
            None,
        ))
    };
    assert!(frq(json!({"overall": {"cpu": "10", "nvidia.com/gpu": "4"}, "staticAssignments": [{"clusterName": "m1", "hard": {"cpu": "4"}}]})).is_empty());
    assert_eq!(frq(json!({})), ["spec.overall: Required value"]);
    assert_eq!(
        frq(
            json!({"overall": {"cpu": "2"}, "staticAssignments": [{"clusterName": "m1", "hard": {"cpu": "3", "memory": "1Gi"}}]})
        ),
        [
            "spec.overall[cpu]: Invalid value: \"2\": overall is less than assignments",
            "spec.staticAssignments[0].hard[memory]: Invalid value: \"memory\": assignment resourceName is not exist in overall",
        ]
    );
    assert_eq!(
        frq(json!({"overall": {"pods": "1500m", "cpu": "-1", "widgets": "1"}})),
        [
            "spec.overall[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
            "spec.overall[pods]: Invalid value: \"1500m\": must be an integer",
            "spec.overall[widgets]: Invalid value: \"widgets\": must be a standard resource type or fully qualified",
            "spec.overall[widgets]: Invalid value: \"widgets\": must be a standard resource for quota",
            "spec.overall[cpu]: Invalid value: \"-1\": overall is less than assignments",
        ]
    );
    assert_eq!(
        frq(json!({"overall": {"cpu": "lots"}})),
        [format!(
            "spec.overall[cpu]: Invalid value: \"lots\": spec.overall[cpu] in body should match '{}'",
            r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
        )]
    );
}

#[test]
fn cluster_taint_policy_rules() {
    let ctp = |taints: Value| {
        messages(&validate(
            Kind::ClusterTaintPolicy,
            &json!({"metadata": {"name": "t"}, "spec": {"taints": taints}}),
            None,
        ))
    };
    assert_eq!(
        ctp(json!([])),
        ["spec.taints: Invalid value: 0: spec.taints in body should have at least 1 items"]
    );
    assert_eq!(
        ctp(
            json!([{"key": "a", "effect": "NoExecute"}, {"key": "b", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}])
        ),
        [
            "spec.taints[0]: Forbidden: Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators through command-line flags",
            "spec.taints[1]: Duplicate value: \"Duplicate taint with the same key(b) and effect(NoSchedule) is not allowed\"",
        ]
    );
}

#[test]
fn federated_hpa_rules() {
    let fhpa = |spec: Value| {
        messages(&validate(
            Kind::FederatedHpa,
            &json!({"metadata": {"name": "h", "namespace": "default"}, "spec": spec}),
            None,
        ))
    };
    assert_eq!(
        fhpa(json!({})),
        [
            "spec.maxReplicas: Required value",
            "spec.scaleTargetRef: Required value"
        ]
    );
    assert_eq!(
        fhpa(
            json!({"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": {"kind": "Deployment", "name": "a/b"}})
        ),
        [
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
        ]
    );
    assert_eq!(
        fhpa(
            json!({"minReplicas": 5, "maxReplicas": 3, "scaleTargetRef": {"kind": "Deployment", "name": "d"}})
        ),
        ["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]
    );
}

#[test]
fn cron_federated_hpa_rule_defaults_and_bounds() {
    let mut cron = json!({"metadata": {"name": "c", "namespace": "default"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "d"},
        "rules": [{"name": "up", "schedule": "0 8 * * *", "targetReplicas": 5}]}});
    default_object(Kind::CronFederatedHpa, &mut cron, &ctx(true));
    assert_eq!(
        cron["spec"]["rules"][0],
        json!({"name": "up", "schedule": "0 8 * * *", "targetReplicas": 5,
               "failedHistoryLimit": 3, "successfulHistoryLimit": 3, "suspend": false})
    );
    cron["spec"]["rules"][0]["successfulHistoryLimit"] = 0.into();
    assert_eq!(
        messages(&validate(Kind::CronFederatedHpa, &cron, None)),
        [
            "spec.rules[0].successfulHistoryLimit: Invalid value: 0: spec.rules[0].successfulHistoryLimit in body should be greater than or equal to 1"
        ]
    );
}

#[test]
fn bindings_need_a_resource() {
    let binding = defaulted(
        Kind::ResourceBinding,
        json!({"metadata": {"name": "b", "namespace": "default"}, "spec": {"resource": {"kind": "Deployment"}}}),
    );
    assert_eq!(
        messages(&validate(Kind::ResourceBinding, &binding, None)),
        [
            "spec.resource.apiVersion: Required value",
            "spec.resource.name: Required value"
        ]
    );
}
