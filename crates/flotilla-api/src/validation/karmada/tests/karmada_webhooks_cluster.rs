//! Karmada's Cluster validation and mutation cases (`pkg/apis/cluster/validation/validation_test.go`,
//! `pkg/apis/cluster/mutation/mutation_test.go`), against the aggregated API server's rules.

use serde_json::{Value, json};

use super::*;

fn cluster_errors(name: &str, spec: Value) -> Vec<String> {
    messages(&validate(
        Kind::Cluster,
        &json!({"metadata": {"name": name}, "spec": spec}),
        None,
    ))
}

fn push(extra: Value) -> Value {
    let mut spec = json!({"syncMode": "Push"});
    for (k, v) in extra.as_object().expect("object") {
        spec[k] = v.clone();
    }
    spec
}

#[test]
fn cluster_names_must_be_short_dns_labels() {
    // The API server applies these through ObjectMeta validation (`ValidateClusterName`).
    assert_eq!(cluster_name_errors(""), ["must be not empty"]);
    assert!(!cluster_name_errors("^Invalid").is_empty());
    assert_eq!(
        cluster_name_errors(&"a".repeat(49)),
        ["must be no more than 48 characters"]
    );
    assert!(cluster_name_errors("foo").is_empty());
}

#[test]
fn cluster_spec_cases_are_refused_as_karmada_refuses_them() {
    // Whatever the wording of label-value problems, the same as for any label value.
    let label_value = crate::validation::is_valid_label_value("Invalid Provider").join("; ");
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "unsupported sync mode",
            json!({"syncMode": "^Invalid"}),
            vec!["spec.syncMode: Unsupported value: \"^Invalid\": supported values: \"Pull\", \"Push\"".into()],
        ),
        (
            "invalid apiEndpoint",
            push(json!({"apiEndpoint": "^Invalid"})),
            vec!["spec.apiEndpoint: Invalid value: \"\": host must be provided; desired format: hostname, hostname:port, IP or IP:port".into()],
        ),
        (
            "empty secretRef",
            push(json!({"secretRef": {}})),
            vec!["spec.secretRef.namespace: Required value".into(), "spec.secretRef.name: Required value".into()],
        ),
        (
            "empty impersonatorSecretRef",
            push(json!({"impersonatorSecretRef": {}})),
            vec![
                "spec.impersonatorSecretRef.namespace: Required value".into(),
                "spec.impersonatorSecretRef.name: Required value".into(),
            ],
        ),
        (
            "invalid proxyURL",
            push(json!({"proxyURL": "^Invalid"})),
            vec!["spec.proxyURL: Invalid value: \"^Invalid\": unsupported scheme \"\", must be http, https, or socks5".into()],
        ),
        (
            "invalid provider",
            push(json!({"provider": "Invalid Provider"})),
            vec![format!("spec.provider: Invalid value: \"Invalid Provider\": {label_value}")],
        ),
        (
            "invalid region",
            push(json!({"region": "Invalid Region"})),
            vec![format!("spec.region: Invalid value: \"Invalid Region\": {label_value}")],
        ),
        (
            "unsupported taint effect",
            push(json!({"taints": [{"key": "foo", "value": "bar", "effect": "^Invalid"}]})),
            vec!["spec.taints[0].effect: Unsupported value: \"^Invalid\": supported values: \"NoSchedule\", \"NoExecute\"".into()],
        ),
    ];
    for (case, spec, expected) in cases {
        assert_eq!(cluster_errors("foo", spec), expected, "{case}");
    }
}

#[test]
fn cluster_zone_cases_are_refused() {
    // Karmada names these paths `spec.Zone`, `spec.Zones` and `spec.spec`; Flotilla names the
    // fields (docs/karmada-api.md, "Field paths corrected").
    let zone = cluster_errors("foo", push(json!({"zone": "Invalid Zone"})));
    assert_eq!(zone.len(), 1);
    assert!(zone[0].starts_with("spec.zone: Invalid value: \"Invalid Zone\": a valid label"));
    let zones = cluster_errors("foo", push(json!({"zones": ["Invalid Zone", "Zone2"]})));
    assert_eq!(zones.len(), 1);
    assert!(zones[0].starts_with("spec.zones[0]: Invalid value: \"Invalid Zone\": a valid label"));
    let both = cluster_errors("foo", push(json!({"zone": "Zone", "zones": ["Zones"]})));
    assert_eq!(both.len(), 1);
    assert!(
        both[0].starts_with("spec.zone: Invalid value: {"),
        "{both:?}"
    );
    assert!(both[0].ends_with(": Zone and Zones cannot co-exist"));
}

fn cpu_range(min: &str, max: &str) -> Value {
    json!({"name": "cpu", "min": min, "max": max})
}

/// The error of `models` on an otherwise valid cluster.
fn model_error(models: Value) -> Option<String> {
    let errors = cluster_errors("foo", push(json!({"resourceModels": models})));
    assert!(errors.len() <= 1, "{errors:?}");
    let error = errors.into_iter().next()?;
    assert!(
        error.starts_with("spec.resourceModels: Invalid value: [{"),
        "{error}"
    );
    Some(error.rsplit(": ").next().expect("message").to_owned())
}

#[test]
fn cluster_resource_model_cases() {
    // Karmada's model cases set no syncMode, so each is refused for that alone as well.
    let two_grades = json!([
        {"grade": 1, "ranges": [cpu_range("0", "2")]},
        {"grade": 2, "ranges": [cpu_range("2", MAX_INT64)]},
    ]);
    let no_sync = cluster_errors("foo", json!({"resourceModels": two_grades}));
    assert_eq!(no_sync[0], "spec.syncMode: Required value");
    // "with the same grade" has grades 1 and 2: the models themselves are valid.
    assert_eq!(model_error(two_grades), None);
    let cases = [
        (
            json!([
                {"grade": 1, "ranges": [cpu_range("0", "2")]},
                {"grade": 2, "ranges": [cpu_range("2", MAX_INT64),
                    {"name": "memory", "min": "2", "max": MAX_INT64}]},
            ]),
            "The number of resource types should be the same",
        ),
        (
            json!([{"grade": 1, "ranges": [cpu_range("2", "0")]}]),
            "The max value of each resource must be greater than the min value",
        ),
        (
            json!([{"grade": 1, "ranges": [cpu_range("1", MAX_INT64)]}]),
            "The min value of each resource in the first model should be 0",
        ),
        (
            json!([{"grade": 1, "ranges": [cpu_range("0", "2")]}]),
            "The max value of each resource in the last model should be MaxInt64",
        ),
        (
            json!([
                {"grade": 1, "ranges": [cpu_range("0", "2")]},
                {"grade": 2, "ranges": [{"name": "memory", "min": "2", "max": MAX_INT64}]},
            ]),
            "The resource types of each models should be the same",
        ),
        (
            json!([
                {"grade": 1, "ranges": [cpu_range("0", "2")]},
                {"grade": 2, "ranges": [cpu_range("1", MAX_INT64)]},
            ]),
            "Model intervals for resources must be contiguous and non-overlapping",
        ),
    ];
    for (models, message) in cases {
        assert_eq!(model_error(models).as_deref(), Some(message), "{message}");
    }
    // Karmada does not check range names: "test" is refused only for the missing syncMode.
    let named = json!([{"grade": 1, "ranges": [{"name": "test", "min": "0", "max": MAX_INT64}]}]);
    assert_eq!(model_error(named), None);
}

#[test]
fn cluster_mutation_adds_taint_times_and_moves_zone() {
    let cluster = defaulted(
        Kind::Cluster,
        json!({"metadata": {"name": "foo"}, "spec": {"syncMode": "Push", "zone": "zone1", "taints": [
            {"key": "foo", "value": "abc", "effect": "NoSchedule"},
            {"key": "bar", "effect": "NoExecute"},
        ]}}),
    );
    assert!(cluster["spec"]["taints"][0].get("timeAdded").is_none());
    assert_eq!(cluster["spec"]["taints"][1]["timeAdded"], NOW);
    assert_eq!(cluster["spec"]["zones"], json!(["zone1"]));
}

fn standardized(models: Value) -> Value {
    let mut cluster = json!({"metadata": {"name": "foo"}, "spec": {"syncMode": "Push", "resourceModels": models}});
    default_object(Kind::Cluster, &mut cluster, &ctx(false));
    cluster["spec"]["resourceModels"].clone()
}

#[test]
fn cluster_resource_models_are_standardized() {
    // TestStandardizeClusterResourceModels
    let low = json!({"grade": 1, "ranges": [cpu_range("0", "2")]});
    let high = json!({"grade": 2, "ranges": [cpu_range("2", MAX_INT64)]});
    assert_eq!(
        standardized(json!([high.clone(), low.clone()])),
        json!([low, high])
    );
    assert_eq!(
        standardized(json!([{"grade": 1, "ranges": [cpu_range("1", MAX_INT64)]}])),
        json!([{"grade": 1, "ranges": [cpu_range("0", MAX_INT64)]}])
    );
    assert_eq!(
        standardized(json!([{"grade": 1, "ranges": [cpu_range("0", "2")]}])),
        json!([{"grade": 1, "ranges": [cpu_range("0", MAX_INT64)]}])
    );
}

#[test]
fn cluster_default_resource_models_are_karmadas_nine_grades() {
    // TestSetDefaultClusterResourceModels
    let cpu = ["0", "1", "2", "4", "8", "16", "32", "64", "128", MAX_INT64];
    let memory = [
        "0", "4Gi", "16Gi", "32Gi", "64Gi", "128Gi", "256Gi", "512Gi", "1Ti", MAX_INT64,
    ];
    let expected: Vec<Value> = (0..9)
        .map(|grade| {
            json!({"grade": grade, "ranges": [
                {"name": "cpu", "min": cpu[grade], "max": cpu[grade + 1]},
                {"name": "memory", "min": memory[grade], "max": memory[grade + 1]},
            ]})
        })
        .collect();
    assert_eq!(default_resource_models(), Value::Array(expected.clone()));
    let created = defaulted(
        Kind::Cluster,
        json!({"metadata": {"name": "foo"}, "spec": {"syncMode": "Push"}}),
    );
    assert_eq!(created["spec"]["resourceModels"], Value::Array(expected));
}
