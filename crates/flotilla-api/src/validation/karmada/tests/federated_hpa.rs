//! FederatedHPA validation: the CRD schema and the webhook's replica, metric, behavior and
//! status rules, with Karmada's messages. Cases follow Karmada's
//! `pkg/util/lifted/validatingfhpa_test.go` and Kubernetes' autoscaling validation tests, with
//! the exact errors Karmada's code yields for each.

use serde_json::{Value, json};

use super::*;

/// The errors of a FederatedHPA in `default` with `spec`.
fn fhpa(spec: Value) -> Vec<String> {
    fhpa_object(json!({"metadata": {"name": "h", "namespace": "default"}, "spec": spec}))
}

fn fhpa_object(object: Value) -> Vec<String> {
    messages(&validate(Kind::FederatedHpa, &object, None))
}

/// A valid spec (as defaulting leaves one without metrics or behavior) with `extra`'s fields
/// added or replaced.
fn spec_with(extra: Value) -> Value {
    let mut spec = json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1,
        "maxReplicas": 10,
    });
    for (key, value) in extra.as_object().expect("an object") {
        spec[key] = value.clone();
    }
    spec
}

/// A spec with the one metric `metric`.
fn one_metric(metric: Value) -> Value {
    spec_with(json!({"metrics": [metric]}))
}

fn cpu_utilization(percent: i64) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": percent}}})
}

/// `behavior` as the autoscaling/v2 defaults complete it, with `scale_up` and `scale_down`
/// merged over each direction.
fn behavior(scale_up: Value, scale_down: Value) -> Value {
    let mut up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    let mut down = json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]});
    for (rules, over) in [(&mut up, scale_up), (&mut down, scale_down)] {
        for (key, value) in over.as_object().expect("an object") {
            rules[key] = value.clone();
        }
    }
    spec_with(json!({"behavior": {"scaleUp": up, "scaleDown": down}}))
}

#[test]
fn federated_hpa_replicas_and_target() {
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
    assert_eq!(
        fhpa(
            json!({"minReplicas": 5, "maxReplicas": 5, "scaleTargetRef": {"kind": "Deployment", "name": ".."}})
        ),
        ["spec.scaleTargetRef.name: Invalid value: \"..\": may not be '..'"]
    );
}

#[test]
fn federated_hpa_valid_specs_pass() {
    let cases = [
        ("no metrics, no behavior", spec_with(json!({}))),
        ("cpu utilization", one_metric(cpu_utilization(50))),
        (
            "memory average value",
            one_metric(json!({"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "100Mi"}}})),
        ),
        (
            "pods metric with a selector",
            one_metric(json!({"type": "Pods", "pods": {
                "metric": {"name": "packets-per-second", "selector": {"matchLabels": {"app": "web"}}},
                "target": {"type": "AverageValue", "averageValue": "1k"}}})),
        ),
        (
            "object metric value",
            one_metric(json!({"type": "Object", "object": {
                "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                "metric": {"name": "requests-per-second"},
                "target": {"type": "Value", "value": "100"}}})),
        ),
        (
            "object metric average value as a number",
            one_metric(json!({"type": "Object", "object": {
                "describedObject": {"kind": "Ingress", "name": "main"},
                "metric": {"name": "hits"},
                "target": {"type": "AverageValue", "averageValue": 10}}})),
        ),
        (
            "container resource utilization",
            one_metric(json!({"type": "ContainerResource", "containerResource": {
                "name": "cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 60}}})),
        ),
        (
            "container huge pages and extended resources",
            spec_with(json!({"metrics": [
                {"type": "ContainerResource", "containerResource": {"name": "hugepages-2Mi",
                    "container": "app", "target": {"type": "AverageValue", "averageValue": "1Mi"}}},
                {"type": "ContainerResource", "containerResource": {"name": "example.com/gpu",
                    "container": "app", "target": {"type": "AverageValue", "averageValue": "1"}}},
                {"type": "ContainerResource", "containerResource": {"name": "kubernetes.io/anything",
                    "container": "app", "target": {"type": "AverageValue", "averageValue": "1"}}},
            ]})),
        ),
        (
            // Karmada does not track `external` among the sources, so one set next to the
            // typed source is neither validated nor forbidden.
            "external source beside a resource metric",
            one_metric(json!({"type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "-1"}}})),
        ),
        ("defaulted behavior", behavior(json!({}), json!({}))),
        (
            "behavior at its bounds",
            behavior(
                json!({"stabilizationWindowSeconds": 3600, "selectPolicy": "Min",
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]}),
                json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Disabled",
                    "policies": [{"type": "Percent", "value": 1, "periodSeconds": 1}]}),
            ),
        ),
        (
            "empty behavior, not defaulted",
            spec_with(json!({"behavior": {}})),
        ),
    ];
    for (name, spec) in cases {
        assert_eq!(fhpa(spec), Vec::<String>::new(), "{name}");
    }
}

#[test]
fn federated_hpa_metric_sources() {
    let cases = [
        (
            "type without its source",
            json!({"type": "Resource"}),
            vec![
                "spec.metrics[0].resource: Required value: must populate information for the given metric source",
            ],
        ),
        (
            "External is not supported",
            json!({"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "Value", "value": "1"}}}),
            vec![
                "spec.metrics[0].type: Unsupported value: \"External\": supported values: \"ContainerResource\", \"Object\", \"Pods\", \"Resource\"",
            ],
        ),
        (
            "empty type",
            json!({"type": "", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}),
            vec![
                "spec.metrics[0].type: Required value: must specify a metric source type",
                "spec.metrics[0].type: Unsupported value: \"\": supported values: \"ContainerResource\", \"Object\", \"Pods\", \"Resource\"",
            ],
        ),
        (
            "the source of another type",
            json!({"type": "Pods", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}),
            vec![
                "spec.metrics[0].pods: Required value: must populate information for the given metric source",
            ],
        ),
        (
            "extra sources are forbidden, sorted",
            json!({"type": "Object",
                "object": {"describedObject": {"kind": "Service", "name": "web"},
                    "metric": {"name": "rps"}, "target": {"type": "Value", "value": "100"}},
                "pods": {"metric": {"name": "pps"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
                "containerResource": {"name": "cpu", "container": "app",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}),
            vec![
                "spec.metrics[0].containerResource: Forbidden: must populate the given metric source only",
                "spec.metrics[0].pods: Forbidden: must populate the given metric source only",
            ],
        ),
        (
            // The first source set (object, pods, resource, containerResource) is the one
            // validated, even when the type names another: the resource's zero utilization
            // goes unreported.
            "only the first source set is validated",
            json!({"type": "Resource",
                "object": {"describedObject": {"kind": "Service", "name": "web"},
                    "metric": {"name": ""}, "target": {"type": "Value", "value": "100"}},
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 0}}}),
            vec![
                "spec.metrics[0].object.metric.name: Required value: must specify a metric name",
                "spec.metrics[0].object: Forbidden: must populate the given metric source only",
            ],
        ),
    ];
    for (name, metric, want) in cases {
        assert_eq!(fhpa(one_metric(metric)), want, "{name}");
    }
}

#[test]
fn federated_hpa_metric_targets() {
    let cases = [
        (
            "object source",
            json!({"type": "Object", "object": {
                "describedObject": {"kind": "Service", "name": "a/b"},
                "metric": {"name": "my/metric"},
                "target": {"type": "Value"}}}),
            vec![
                "spec.metrics[0].object.describedObject.name: Invalid value: \"a/b\": may not contain '/'",
                "spec.metrics[0].object.metric.name: Invalid value: \"my/metric\": may not contain '/'",
                "spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue",
            ],
        ),
        (
            "pods source needs an average value",
            json!({"type": "Pods", "pods": {"metric": {"name": "pps"},
                "target": {"type": "AverageValue", "value": "5"}}}),
            vec![
                "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
            ],
        ),
        (
            "unknown target type, zero utilization",
            json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Percent", "averageUtilization": 0}}}),
            vec![
                "spec.metrics[0].resource.target.type: Invalid value: \"Percent\": must be either Utilization, Value, or AverageValue",
                "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
            ],
        ),
        (
            "empty target type",
            json!({"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "", "averageValue": "1"}}}),
            vec![
                "spec.metrics[0].resource.target.type: Required value: must specify a metric target type",
                "spec.metrics[0].resource.target.type: Invalid value: \"\": must be either Utilization, Value, or AverageValue",
            ],
        ),
        (
            "negative average value, shown canonical",
            json!({"type": "Pods", "pods": {"metric": {"name": "pps"},
                "target": {"type": "AverageValue", "averageValue": "-1.5"}}}),
            vec![
                "spec.metrics[0].pods.target.averageValue: Invalid value: \"-1500m\": must be positive",
            ],
        ),
        (
            "zero and negative number values",
            json!({"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "web"},
                "metric": {"name": "rps"}, "target": {"type": "Value", "value": "0", "averageValue": -3}}}),
            vec![
                "spec.metrics[0].object.target.value: Invalid value: \"0\": must be positive",
                "spec.metrics[0].object.target.averageValue: Invalid value: \"-3\": must be positive",
            ],
        ),
        (
            "resource: empty name, both targets",
            json!({"type": "Resource", "resource": {"name": "",
                "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "100m"}}}),
            vec![
                "spec.metrics[0].resource.name: Required value: must specify a resource name",
                "spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
            ],
        ),
        (
            "resource: neither target",
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Value", "value": "1"}}}),
            vec![
                "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
            ],
        ),
        (
            "container resource: empty names, neither target",
            json!({"type": "ContainerResource", "containerResource": {"name": "", "container": "",
                "target": {"type": "Utilization"}}}),
            vec![
                "spec.metrics[0].containerResource.name: Required value: must specify a resource name",
                "spec.metrics[0].containerResource.container: Required value: must specify a container",
                "spec.metrics[0].containerResource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
            ],
        ),
        (
            "container resource: unknown resource, dotted container, both targets",
            json!({"type": "ContainerResource", "containerResource": {"name": "gpu", "container": "web.app",
                "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}}}),
            vec![
                "spec.metrics[0].containerResource.name: Invalid value: \"gpu\": must be a standard resource type or fully qualified",
                "spec.metrics[0].containerResource.name: Invalid value: \"gpu\": must be a standard resource for containers",
                "spec.metrics[0].containerResource.container: Invalid value: \"web.app\": must not contain dots",
                "spec.metrics[0].containerResource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
            ],
        ),
        (
            "container resource: a quota-only name",
            json!({"type": "ContainerResource", "containerResource": {"name": "requests.cpu", "container": "app",
                "target": {"type": "Utilization", "averageUtilization": 50}}}),
            vec![
                "spec.metrics[0].containerResource.name: Invalid value: \"requests.cpu\": must be a standard resource for containers",
            ],
        ),
        (
            "container resource: not an extended resource",
            json!({"type": "ContainerResource", "containerResource": {"name": "requests.example.com/gpu",
                "container": "app", "target": {"type": "AverageValue", "averageValue": "1"}}}),
            vec![
                "spec.metrics[0].containerResource.name: Invalid value: \"requests.example.com/gpu\": doesn't follow extended resource name standard",
            ],
        ),
    ];
    for (name, metric, want) in cases {
        assert_eq!(fhpa(one_metric(metric)), want, "{name}");
    }
}

#[test]
fn federated_hpa_later_metrics_are_indexed() {
    assert_eq!(
        fhpa(spec_with(
            json!({"metrics": [cpu_utilization(50), cpu_utilization(-1)]})
        )),
        [
            "spec.metrics[1].resource.target.averageUtilization: Invalid value: -1: must be greater than 0"
        ]
    );
}

#[test]
fn federated_hpa_behavior() {
    let cases = [
        (
            "scale up: negative window, unknown select policy, no policies",
            behavior(
                json!({"stabilizationWindowSeconds": -1, "selectPolicy": "Fastest", "policies": []}),
                json!({}),
            ),
            vec![
                "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
                "spec.behavior.scaleUp.selectPolicy: Unsupported value: \"Fastest\": supported values: \"Disabled\", \"Max\", \"Min\"",
                "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
            ],
        ),
        (
            "scale down: long window, bad policies",
            behavior(
                json!({}),
                json!({"stabilizationWindowSeconds": 3601, "policies": [
                    {"type": "Pod", "value": 0, "periodSeconds": 0},
                    {"type": "Percent", "value": -5, "periodSeconds": 1801}]}),
            ),
            vec![
                "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
                "spec.behavior.scaleDown.policies[0].type: Unsupported value: \"Pod\": supported values: \"Percent\", \"Pods\"",
                "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleDown.policies[1].value: Invalid value: -5: must be greater than zero",
                "spec.behavior.scaleDown.policies[1].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
            ],
        ),
        (
            // Go shows the named string type as JSON, escaping HTML characters.
            "select policy shown as Go's JSON",
            behavior(json!({"selectPolicy": "<Max>"}), json!({})),
            vec![
                r#"spec.behavior.scaleUp.selectPolicy: Unsupported value: "\u003cMax\u003e": supported values: "Disabled", "Max", "Min""#,
            ],
        ),
        (
            // Without the defaults (which fill in the policies) one direction alone is checked.
            "undefaulted direction without policies",
            spec_with(json!({"behavior": {"scaleDown": {"selectPolicy": "Min"}}})),
            vec![
                "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
            ],
        ),
    ];
    for (name, spec, want) in cases {
        assert_eq!(fhpa(spec), want, "{name}");
    }
}

#[test]
fn federated_hpa_status_counts() {
    let object = |status: Value| {
        fhpa_object(
            json!({"metadata": {"name": "h", "namespace": "default"}, "spec": spec_with(json!({})), "status": status}),
        )
    };
    assert_eq!(
        object(json!({"currentReplicas": 3, "desiredReplicas": 0})),
        Vec::<String>::new()
    );
    assert_eq!(
        object(json!({"currentReplicas": -1, "desiredReplicas": -2})),
        [
            "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
            "status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0",
        ]
    );
}

#[test]
fn federated_hpa_schema_comes_first() {
    let cases = [
        (
            "metric without a type",
            one_metric(json!({"resource": {"name": "cpu"}})),
            vec![
                "spec.metrics[0].type: Required value",
                "spec.metrics[0].resource.target: Required value",
            ],
        ),
        (
            "object source parts",
            one_metric(
                json!({"type": "Object", "object": {"describedObject": {"kind": "Service"},
                "metric": {"selector": {"matchExpressions": [{"key": "a"}]}}, "target": {}}}),
            ),
            vec![
                "spec.metrics[0].object.describedObject.name: Required value",
                "spec.metrics[0].object.metric.name: Required value",
                "spec.metrics[0].object.metric.selector.matchExpressions[0].operator: Required value",
                "spec.metrics[0].object.target.type: Required value",
            ],
        ),
        (
            "policy fields",
            behavior(json!({"policies": [{"type": "Pods"}]}), json!({})),
            vec![
                "spec.behavior.scaleUp.policies[0].periodSeconds: Required value",
                "spec.behavior.scaleUp.policies[0].value: Required value",
            ],
        ),
    ];
    for (name, spec, want) in cases {
        assert_eq!(fhpa(spec), want, "{name}");
    }
    let quantity = fhpa(one_metric(
        json!({"type": "Pods", "pods": {"metric": {"name": "pps"},
        "target": {"type": "AverageValue", "averageValue": "lots"}}}),
    ));
    assert_eq!(quantity.len(), 1, "{quantity:?}");
    assert!(
        quantity[0].starts_with(
            "spec.metrics[0].pods.target.averageValue: Invalid value: \"lots\": spec.metrics[0].pods.target.averageValue in body should match '^(\\+|-)?"
        ),
        "{quantity:?}"
    );
}
