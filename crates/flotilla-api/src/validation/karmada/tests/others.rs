//! Cluster, quota, taint policy, CronFederatedHPA and binding validation with Karmada's
//! messages (FederatedHPA: `federated_hpa.rs`).

use serde_json::{Value, json};

use super::*;

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
    assert_eq!(
        cluster(json!({"syncMode": "Push", "proxyURL": "http://proxy:31 28"})),
        [
            "spec.proxyURL: Invalid value: \"http://proxy:31 28\": apiEndpoint must be a valid URL: parse \"http://proxy:31 28\": invalid port \":31 28\" after host",
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
    // With `--allow-no-execute-taint-policy` NoExecute taints are admitted.
    let allowed = flotilla_api_validate_with(json!([{"key": "a", "effect": "NoExecute"}]));
    assert!(allowed.is_empty(), "{allowed:?}");
}

fn flotilla_api_validate_with(taints: Value) -> Vec<String> {
    messages(&crate::validation::karmada::validate_with(
        Kind::ClusterTaintPolicy,
        &json!({"metadata": {"name": "t"}, "spec": {"taints": taints}}),
        None,
        crate::validation::karmada::WebhookOptions {
            allow_no_execute_taint_policy: true,
            ..Default::default()
        },
    ))
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
fn cron_federated_hpa_webhook_rules() {
    let cron = |target: Value, rules: Value| {
        messages(&validate(
            Kind::CronFederatedHpa,
            &json!({"metadata": {"name": "c", "namespace": "default"},
                "spec": {"scaleTargetRef": target, "rules": rules}}),
            None,
        ))
    };
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"});
    assert!(cron(deployment.clone(), json!([{"name": "up", "schedule": "0 8 * * MON-FRI", "targetReplicas": 5, "timeZone": "Asia/Shanghai"}])).is_empty());
    assert_eq!(
        cron(
            deployment.clone(),
            json!([{"name": "up", "schedule": "61 8 * * *", "timeZone": "Mars/Olympus"},
                   {"name": "up", "schedule": "@hourly", "targetReplicas": -1}])
        ),
        [
            "spec.rules[0].schedule: Invalid value: \"61 8 * * *\": invalid cron format",
            "spec.rules[0].timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus",
            "spec.rules[0].targetReplicas: Invalid value: \"\": targetReplicas cannot be nil if you want to scale Deployment",
            "spec.rules[1].name: Duplicate value: \"up\"",
            "spec.rules[1].targetReplicas: Invalid value: \"\": targetReplicas should be larger than or equal to 0",
        ]
    );
    let fhpa = json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "f"});
    assert_eq!(
        cron(
            fhpa.clone(),
            json!([{"name": "a", "schedule": "@daily"}, {"name": "b", "schedule": "@daily", "targetMinReplicas": 5, "targetMaxReplicas": 2}])
        ),
        [
            "spec.rules[0].targetMaxReplicas: Invalid value: \"\": targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA",
            "spec.rules[1].targetMinReplicas: Invalid value: \"\": targetMaxReplicas should be larger than or equal to targetMinReplicas",
        ]
    );
    assert_eq!(
        cron(
            json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "Widget", "name": "w"}),
            json!([{"name": "a", "schedule": "@daily", "targetReplicas": 1}])
        ),
        [
            "spec.scaleTargetRef.kind: Invalid value: \"Widget\": invalid scaleTargetRef kind: Widget, only support FederatedHPA"
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

#[test]
fn other_kinds_get_their_schema_constraints() {
    let rebalancer = json!({"metadata": {"name": "r"}, "spec": {"workloads": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}});
    assert_eq!(
        messages(&validate(Kind::WorkloadRebalancer, &rebalancer, None)),
        ["spec.workloads[0].name: Required value"]
    );
    let remedy = json!({"metadata": {"name": "r"}, "spec": {"decisionMatches": [{"clusterConditionMatch": {
        "conditionType": "ServiceDomainNameResolutionReady", "operator": "Is", "conditionStatus": "False"}}]}});
    assert_eq!(
        messages(&validate(Kind::Remedy, &remedy, None)),
        [
            "spec.decisionMatches[0].clusterConditionMatch.operator: Unsupported value: \"Is\": supported values: \"Equal\", \"NotEqual\""
        ]
    );
    let customization = json!({"metadata": {"name": "c"}, "spec": {"target": {"apiVersion": "apps/v1", "kind": "Deployment"},
        "customizations": {"replicaResource": {}}}});
    assert_eq!(
        messages(&validate(
            Kind::ResourceInterpreterCustomization,
            &customization,
            None
        )),
        ["spec.customizations.replicaResource.luaScript: Required value"]
    );
    assert_eq!(
        messages(&validate(
            Kind::MultiClusterService,
            &json!({"metadata": {"name": "s"}, "spec": {}}),
            None
        )),
        ["spec.types: Required value"]
    );
}
