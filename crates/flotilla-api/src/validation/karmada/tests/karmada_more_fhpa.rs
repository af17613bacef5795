//! Karmada's FederatedHPA and CronFederatedHPA cases not already in `federated_hpa.rs` /
//! `others.rs`: `pkg/util/lifted/validatingfhpa_test.go` (whose cases only say whether errors
//! are expected), `pkg/webhook/federatedhpa/validating_test.go` and
//! `pkg/webhook/cronfederatedhpa/validating_test.go`. Each sub-rule case is wrapped in the
//! smallest FederatedHPA that reaches it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::*;
use crate::validation::{FieldPath, NameRule, validate_object_meta};

fn fhpa_errors(spec: Value) -> Vec<String> {
    messages(&validate(
        Kind::FederatedHpa,
        &json!({"metadata": {"name": "test-fhpa", "namespace": "default"}, "spec": spec}),
        None,
    ))
}

fn spec(extra: Value) -> Value {
    let mut spec = json!({
        "scaleTargetRef": {"kind": "Deployment", "name": "test-deployment"},
        "minReplicas": 1,
        "maxReplicas": 10,
    });
    for (key, value) in extra.as_object().expect("an object") {
        spec[key] = value.clone();
    }
    spec
}

fn metric(metric: Value) -> Value {
    spec(json!({"metrics": [metric]}))
}

fn resource(name: &str, target: Value) -> Value {
    metric(json!({"type": "Resource", "resource": {"name": name, "target": target}}))
}

fn object_source(source: Value) -> Value {
    metric(json!({"type": "Object", "object": source}))
}

fn pods(source: Value) -> Value {
    metric(json!({"type": "Pods", "pods": source}))
}

fn container(source: Value) -> Value {
    metric(json!({"type": "ContainerResource", "containerResource": source}))
}

fn utilization(percent: i64) -> Value {
    json!({"type": "Utilization", "averageUtilization": percent})
}

fn service() -> Value {
    json!({"kind": "Service", "name": "my-service"})
}

fn rps() -> Value {
    json!({"name": "requests-per-second"})
}

fn value(quantity: &str) -> Value {
    json!({"type": "Value", "value": quantity})
}

fn average(quantity: &str) -> Value {
    json!({"type": "AverageValue", "averageValue": quantity})
}

fn rules(direction: &str, rules: Value) -> Value {
    spec(json!({"behavior": {direction: rules}}))
}

fn one_policy(kind: &str, value: i64, period: i64) -> Value {
    rules(
        "scaleUp",
        json!({"policies": [{"type": kind, "value": value, "periodSeconds": period}]}),
    )
}

fn percent_policy() -> Value {
    json!([{"type": "Percent", "value": 100, "periodSeconds": 15}])
}

#[test]
fn federated_hpa_lifted_cases_are_refused_or_admitted_as_in_karmada() {
    // TestValidateFederatedHPA (spec part), TestValidateFederatedHPASpec,
    // TestValidateCrossVersionObjectReference, TestValidateBehavior, TestValidateScalingRules,
    // TestValidateScalingPolicy, TestValidateMetricSpec, TestValidateObjectSource,
    // TestValidatePodsSource, TestValidateContainerResourceSource, TestValidateResourceSource,
    // TestValidateMetricTarget, TestValidateMetricIdentifier.
    let cases: Vec<(&str, Value, bool)> = vec![
        (
            "valid FederatedHPA",
            resource("cpu", utilization(50)),
            false,
        ),
        (
            "spec: min 0, max 0, no target",
            json!({"minReplicas": 0, "maxReplicas": 0, "scaleTargetRef": {"kind": "", "name": ""}}),
            true,
        ),
        ("spec: minReplicas 0", spec(json!({"minReplicas": 0})), true),
        (
            "spec: max below min",
            spec(json!({"minReplicas": 5, "maxReplicas": 3})),
            true,
        ),
        (
            "spec: empty target kind",
            spec(json!({"scaleTargetRef": {"kind": "", "name": "test-deployment"}})),
            true,
        ),
        (
            "spec: metric without its source",
            metric(json!({"type": "Resource"})),
            true,
        ),
        (
            "spec: negative scale-down window",
            rules("scaleDown", json!({"stabilizationWindowSeconds": -1})),
            true,
        ),
        ("spec: maxReplicas 0", spec(json!({"maxReplicas": 0})), true),
        (
            "spec: min equals max",
            spec(json!({"minReplicas": 5, "maxReplicas": 5})),
            false,
        ),
        (
            "reference: valid",
            spec(json!({"scaleTargetRef": {"kind": "Deployment", "name": "my-deployment"}})),
            false,
        ),
        (
            "reference: no kind",
            spec(json!({"scaleTargetRef": {"kind": "", "name": "my-deployment"}})),
            true,
        ),
        (
            "reference: no name",
            spec(json!({"scaleTargetRef": {"kind": "Deployment", "name": ""}})),
            true,
        ),
        (
            "reference: kind with a slash",
            spec(json!({"scaleTargetRef": {"kind": "Invalid/Kind", "name": "my-deployment"}})),
            true,
        ),
        (
            "reference: name with a slash",
            spec(json!({"scaleTargetRef": {"kind": "Deployment", "name": "my/deployment"}})),
            true,
        ),
        (
            "behavior: valid",
            spec(json!({"behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 60, "policies": percent_policy()},
                "scaleDown": {"stabilizationWindowSeconds": 300, "policies": percent_policy()}}})),
            false,
        ),
        (
            "behavior: negative scale-up window",
            rules("scaleUp", json!({"stabilizationWindowSeconds": -1})),
            true,
        ),
        (
            "behavior: negative policy value",
            rules(
                "scaleDown",
                json!({"policies": [{"type": "Percent", "value": -1, "periodSeconds": 15}]}),
            ),
            true,
        ),
        ("behavior: none", spec(json!({})), false),
        (
            "rules: Max",
            rules(
                "scaleUp",
                json!({"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": percent_policy()}),
            ),
            false,
        ),
        (
            "rules: Min",
            rules(
                "scaleUp",
                json!({"stabilizationWindowSeconds": 300, "selectPolicy": "Min", "policies": percent_policy()}),
            ),
            false,
        ),
        (
            "rules: Disabled",
            rules(
                "scaleUp",
                json!({"stabilizationWindowSeconds": 300, "selectPolicy": "Disabled", "policies": percent_policy()}),
            ),
            false,
        ),
        (
            "rules: negative window",
            rules(
                "scaleUp",
                json!({"stabilizationWindowSeconds": -1, "policies": percent_policy()}),
            ),
            true,
        ),
        (
            "rules: window over 3600",
            rules(
                "scaleUp",
                json!({"stabilizationWindowSeconds": 3601, "policies": percent_policy()}),
            ),
            true,
        ),
        (
            "rules: unknown select policy",
            rules(
                "scaleUp",
                json!({"selectPolicy": "InvalidPolicy", "policies": percent_policy()}),
            ),
            true,
        ),
        (
            "rules: no policies",
            rules("scaleUp", json!({"policies": []})),
            true,
        ),
        (
            "rules: bad policy",
            rules(
                "scaleUp",
                json!({"policies": [{"type": "InvalidType", "value": 0, "periodSeconds": 0}]}),
            ),
            true,
        ),
        ("policy: valid Pods", one_policy("Pods", 1, 15), false),
        (
            "policy: valid Percent",
            one_policy("Percent", 10, 15),
            false,
        ),
        (
            "policy: unknown type",
            one_policy("InvalidType", 1, 15),
            true,
        ),
        ("policy: zero value", one_policy("Pods", 0, 15), true),
        ("policy: negative value", one_policy("Pods", -1, 15), true),
        ("policy: zero period", one_policy("Pods", 1, 0), true),
        ("policy: negative period", one_policy("Pods", 1, -1), true),
        (
            "policy: period over 1800",
            one_policy("Pods", 1, 1801),
            true,
        ),
        ("metric: empty", metric(json!({"type": ""})), true),
        (
            "metric: unknown type",
            metric(json!({"type": "InvalidType"})),
            true,
        ),
        (
            "metric: Object without object",
            metric(json!({"type": "Object"})),
            true,
        ),
        (
            "metric: Pods without pods",
            metric(json!({"type": "Pods"})),
            true,
        ),
        (
            "metric: ContainerResource without it",
            metric(json!({"type": "ContainerResource"})),
            true,
        ),
        (
            "metric: resource and an empty pods source",
            metric(
                json!({"type": "Resource", "resource": {"name": "cpu", "target": utilization(50)},
                "pods": {"metric": {"name": ""}, "target": {"type": ""}}}),
            ),
            true,
        ),
        (
            "metric: valid object",
            object_source(
                json!({"describedObject": service(), "metric": rps(), "target": value("100")}),
            ),
            false,
        ),
        (
            "metric: valid container resource",
            container(json!({"name": "cpu", "container": "app", "target": utilization(50)})),
            false,
        ),
        (
            "metric: object and container resource",
            metric(json!({"type": "Object",
                "object": {"describedObject": service(), "metric": rps(), "target": value("100")},
                "containerResource": {"name": "cpu", "container": "app", "target": utilization(50)}})),
            true,
        ),
        (
            "metric: every source",
            metric(json!({"type": "Object",
                "object": {"describedObject": service(), "metric": rps(), "target": value("100")},
                "pods": {"metric": {"name": "packets-per-second"}, "target": average("1k")},
                "resource": {"name": "cpu", "target": utilization(50)},
                "containerResource": {"name": "memory", "container": "app", "target": utilization(60)}})),
            true,
        ),
        (
            "metric: Pods type with an object source",
            metric(json!({"type": "Pods",
                "object": {"describedObject": service(), "metric": rps(), "target": value("100")}})),
            true,
        ),
        (
            "metric: Resource type with a container resource source",
            metric(json!({"type": "Resource",
                "containerResource": {"name": "cpu", "container": "app", "target": utilization(50)}})),
            true,
        ),
        (
            "object: no described object",
            object_source(
                json!({"describedObject": {"kind": "", "name": ""}, "metric": rps(), "target": value("100")}),
            ),
            true,
        ),
        (
            "object: no metric name",
            object_source(
                json!({"describedObject": service(), "metric": {"name": ""}, "target": value("100")}),
            ),
            true,
        ),
        (
            "object: no value",
            object_source(
                json!({"describedObject": service(), "metric": rps(), "target": {"type": "Value"}}),
            ),
            true,
        ),
        (
            "pods: valid",
            pods(json!({"metric": {"name": "packets-per-second"}, "target": average("1k")})),
            false,
        ),
        (
            "pods: valid with a selector",
            pods(
                json!({"metric": {"name": "packets-per-second", "selector": {"matchLabels": {"app": "web"}}}, "target": average("1k")}),
            ),
            false,
        ),
        (
            "pods: no metric name",
            pods(json!({"metric": {"name": ""}, "target": average("1k")})),
            true,
        ),
        (
            "pods: no average value",
            pods(
                json!({"metric": {"name": "packets-per-second"}, "target": {"type": "AverageValue"}}),
            ),
            true,
        ),
        (
            "pods: utilization with a raw value",
            pods(
                json!({"metric": {"name": "packets-per-second"}, "target": {"type": "Utilization", "value": "1k"}}),
            ),
            true,
        ),
        (
            "container: no resource name",
            container(json!({"name": "", "container": "app", "target": utilization(50)})),
            true,
        ),
        (
            "container: no container",
            container(json!({"name": "cpu", "container": "", "target": utilization(50)})),
            true,
        ),
        (
            "container: utilization and average value",
            container(json!({"name": "cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "100m"}})),
            true,
        ),
        (
            "container: neither",
            container(
                json!({"name": "cpu", "container": "app", "target": {"type": "Utilization"}}),
            ),
            true,
        ),
        (
            "resource: utilization",
            resource("cpu", utilization(50)),
            false,
        ),
        (
            "resource: average value",
            resource("memory", average("100Mi")),
            false,
        ),
        ("resource: empty name", resource("", utilization(50)), true),
        (
            "resource: empty target",
            resource("cpu", json!({"type": ""})),
            true,
        ),
        (
            "resource: both",
            resource(
                "cpu",
                json!({"type": "Utilization", "averageUtilization": 50, "averageValue": "100m"}),
            ),
            true,
        ),
        (
            "resource: neither",
            resource("cpu", json!({"type": "Utilization"})),
            true,
        ),
        (
            "target: utilization",
            resource("cpu", utilization(80)),
            false,
        ),
        (
            "target: value",
            object_source(
                json!({"describedObject": service(), "metric": rps(), "target": value("100")}),
            ),
            false,
        ),
        (
            "target: average value",
            pods(json!({"metric": rps(), "target": average("50")})),
            false,
        ),
        (
            "target: no type",
            resource("cpu", json!({"type": "", "averageUtilization": 80})),
            true,
        ),
        (
            "target: unknown type",
            resource(
                "cpu",
                json!({"type": "InvalidType", "averageUtilization": 80}),
            ),
            true,
        ),
        (
            "target: negative utilization",
            resource("cpu", utilization(-1)),
            true,
        ),
        (
            "target: negative value",
            object_source(
                json!({"describedObject": service(), "metric": rps(), "target": value("-100")}),
            ),
            true,
        ),
        (
            "target: negative average value",
            pods(json!({"metric": rps(), "target": average("-50")})),
            true,
        ),
        (
            "identifier: valid",
            pods(json!({"metric": {"name": "my-metric"}, "target": average("1")})),
            false,
        ),
        (
            "identifier: empty",
            pods(json!({"metric": {"name": ""}, "target": average("1")})),
            true,
        ),
        (
            "identifier: with a slash",
            pods(json!({"metric": {"name": "my/metric"}, "target": average("1")})),
            true,
        ),
    ];
    for (name, spec, refused) in cases {
        let errors = fhpa_errors(spec);
        assert_eq!(!errors.is_empty(), refused, "{name}: {errors:?}");
    }
}

#[test]
fn federated_hpa_status_counts_must_not_be_negative() {
    // TestValidateFederatedHPAStatus
    for (current, desired, refused) in [(3, 5, false), (-1, 5, true), (3, -1, true)] {
        let errors = messages(&validate(
            Kind::FederatedHpa,
            &json!({"metadata": {"name": "h", "namespace": "default"}, "spec": spec(json!({})),
                "status": {"currentReplicas": current, "desiredReplicas": desired}}),
            None,
        ));
        assert_eq!(
            !errors.is_empty(),
            refused,
            "{current}/{desired}: {errors:?}"
        );
    }
}

#[test]
fn federated_hpa_metadata_is_checked_by_the_api_server() {
    // TestValidateFederatedHPA "invalid name" and "missing namespace": Karmada's webhook
    // repeats ObjectMeta validation, which Flotilla's API server does for every kind.
    let meta = |name: &str, namespace: Option<&str>| {
        let meta = ObjectMeta {
            name: Some(name.into()),
            namespace: namespace.map(Into::into),
            ..Default::default()
        };
        validate_object_meta(
            &meta,
            true,
            NameRule::Dns1123Subdomain,
            &FieldPath::new("metadata"),
        )
    };
    assert!(meta("test-fhpa", Some("default")).is_empty());
    assert!(!meta("invalid/name", Some("default")).is_empty());
    assert_eq!(
        messages(&meta("test-fhpa", None)),
        ["metadata.namespace: Required value"]
    );
}

#[test]
fn federated_hpa_webhook_denies_min_replicas_zero_and_admits_a_pods_value_target() {
    // TestValidatingAdmission_Handle (the decode-error case is Go plumbing). A Pods metric whose
    // target type is Value but which sets averageValue is admitted.
    let handled = |min: i64| {
        fhpa_errors(json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test-app"},
            "minReplicas": min,
            "maxReplicas": 10,
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0, "policies": [
                    {"periodSeconds": 15, "type": "Pods", "value": 4},
                    {"periodSeconds": 15, "type": "Percent", "value": 100}]},
                "scaleDown": {"stabilizationWindowSeconds": 300, "policies": percent_policy()},
            },
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "http_requests"},
                "target": {"averageValue": "700m", "type": "Value"}}}],
        }))
    };
    let denied = handled(0);
    assert!(
        denied[0].starts_with("spec.minReplicas: Invalid value: 0"),
        "{denied:?}"
    );
    assert_eq!(handled(1), Vec::<String>::new());
}

fn cron_errors(target: Value, rules: Value) -> Vec<String> {
    messages(&validate(
        Kind::CronFederatedHpa,
        &json!({"metadata": {"name": "c", "namespace": "default"},
            "spec": {"scaleTargetRef": target, "rules": rules}}),
        None,
    ))
}

#[test]
fn cron_federated_hpa_spec_cases_report_karmadas_messages() {
    // Test_validateCronFederatedHPASpec: Karmada checks its aggregate contains the message.
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "foo"});
    let fhpa = json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "bar"});
    let foo = json!({"kind": "foo", "name": "bar"});
    let rule = |extra: Value| {
        let mut rule = json!({"name": "bar", "schedule": "0 0 13 * 1"});
        for (key, value) in extra.as_object().expect("an object") {
            rule[key] = value.clone();
        }
        rule
    };
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "normal Deployment",
            deployment,
            json!([rule(json!({"schedule": "0 0 13 * 5", "targetReplicas": 1}))]),
            "",
        ),
        (
            "normal FederatedHPA",
            fhpa.clone(),
            json!([{"name": "foo", "schedule": "0 0 13 * 1", "targetReplicas": 2, "targetMinReplicas": 1, "targetMaxReplicas": 3}]),
            "",
        ),
        (
            "a Karmada autoscaling kind other than FederatedHPA",
            json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "Test", "name": "foo"}),
            json!([rule(json!({"targetReplicas": 1}))]),
            "invalid scaleTargetRef kind: Test, only support FederatedHPA",
        ),
        (
            "no target kind",
            json!({"kind": "", "name": "foo"}),
            json!([rule(json!({"targetReplicas": 1}))]),
            "spec.scaleTargetRef.kind: Required value",
        ),
        (
            "no target name",
            json!({"kind": "foo", "name": ""}),
            json!([rule(json!({"targetReplicas": 1}))]),
            "spec.scaleTargetRef.name: Required value",
        ),
        (
            "duplicated rule names",
            foo.clone(),
            json!([
                rule(json!({"targetReplicas": 1})),
                rule(json!({"targetReplicas": 1}))
            ]),
            "Duplicate value: \"bar\"",
        ),
        (
            "four-field cron",
            foo.clone(),
            json!([rule(json!({"schedule": "0 0 13 *", "targetReplicas": 1}))]),
            "invalid cron format",
        ),
        (
            "unknown time zone",
            foo.clone(),
            json!([rule(json!({"timeZone": "A/B", "targetReplicas": 1}))]),
            "unknown time zone A/B",
        ),
        (
            "no targetReplicas",
            foo.clone(),
            json!([rule(json!({}))]),
            "targetReplicas cannot be nil if you want to scale foo",
        ),
        (
            "negative targetReplicas",
            foo,
            json!([rule(json!({"targetReplicas": -1}))]),
            "targetReplicas should be larger than or equal to 0",
        ),
        (
            "FederatedHPA without min and max",
            fhpa.clone(),
            json!([rule(json!({"targetReplicas": -1}))]),
            "targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA",
        ),
        (
            "FederatedHPA with a negative min",
            fhpa.clone(),
            json!([rule(json!({"targetMinReplicas": -1, "targetReplicas": 1}))]),
            "targetMinReplicas should be larger than 0",
        ),
        (
            "FederatedHPA with a negative max",
            fhpa.clone(),
            json!([rule(json!({"targetMaxReplicas": -1, "targetReplicas": 1}))]),
            "targetMaxReplicas should be larger than 0",
        ),
        (
            "FederatedHPA with max below min",
            fhpa,
            json!([rule(
                json!({"targetMinReplicas": 3, "targetMaxReplicas": 1, "targetReplicas": 1})
            )]),
            "targetMaxReplicas should be larger than or equal to targetMinReplicas",
        ),
    ];
    for (name, target, rules, expected) in cases {
        let errors = cron_errors(target, rules);
        if expected.is_empty() {
            assert!(errors.is_empty(), "{name}: {errors:?}");
        } else {
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "{name}: {errors:?}"
            );
        }
    }
}
