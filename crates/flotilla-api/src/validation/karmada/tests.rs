//! Defaults of every kind; the validation rules are in `tests/`.

mod federated_hpa;
mod karmada_mci_spec;
mod karmada_mci_webhook;
mod karmada_more_fhpa;
mod karmada_more_interpreter_webhooks;
mod karmada_more_taints;
mod karmada_policy_defaults;
mod karmada_validation_override_spec;
mod karmada_validation_placement_failover;
mod karmada_validation_policy_webhooks;
mod karmada_validation_propagation_spec;
mod karmada_webhooks_bindings;
mod karmada_webhooks_cluster;
mod karmada_webhooks_networking;
mod karmada_webhooks_quota;
mod karmada_work_mutating;
mod karmada_work_prune;
mod others;
mod policies;
mod resource_registry;

use serde_json::{Value, json};

use super::*;

pub(super) const NOW: &str = "2026-01-02T03:04:05Z";

pub(super) fn ctx(create: bool) -> Defaulting<'static> {
    Defaulting {
        create,
        fresh_id: "11111111-2222-3333-4444-555555555555",
        now: NOW,
    }
}

pub(super) fn defaulted(kind: Kind, mut object: Value) -> Value {
    default_object(kind, &mut object, &ctx(true));
    object
}

/// A PropagationPolicy in `default` with `spec`, defaulted as on create.
pub(super) fn pp(spec: Value) -> Value {
    defaulted(
        Kind::PropagationPolicy,
        json!({"metadata": {"name": "p", "namespace": "default"}, "spec": spec}),
    )
}

pub(super) fn selector() -> Value {
    json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}])
}

/// The rendered errors (`field: body`).
pub(super) fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

pub(super) fn pp_errors(spec: Value) -> Vec<String> {
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
