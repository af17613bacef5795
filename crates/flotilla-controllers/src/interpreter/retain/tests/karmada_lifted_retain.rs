//! The cases of Karmada's lifted `retain_test.go` (`pkg/util/lifted`, from kubefed):
//! `RetainServiceFields` (`healthCheckNodePort`, `clusterIP`) and `RetainServiceAccountFields`
//! (`secrets`, `imagePullSecrets`), with Karmada's desired and observed objects and expected
//! values. Where Karmada fails on a member value of the wrong type (which no API server returns
//! for a Service), Flotilla retains nothing and leaves the desired object as it is.

use serde_json::{Value, json};

use super::lifted::{retain_service_account_fields, retain_service_fields};

fn service_retained(observed: Value) -> Value {
    let mut desired = json!({});
    retain_service_fields(&mut desired, &observed);
    desired
}

#[test]
fn a_services_allocated_health_check_node_port_is_kept() {
    let rows = [
        ("no healthCheckNodePort", json!({}), None),
        (
            "not a number",
            json!({"spec": {"healthCheckNodePort": "invalid string"}}),
            None,
        ),
        ("zero", json!({"spec": {"healthCheckNodePort": 0}}), None),
        (
            "1000",
            json!({"spec": {"healthCheckNodePort": 1000}}),
            Some(1000),
        ),
    ];
    for (desc, observed, want) in rows {
        let desired = service_retained(observed);
        assert_eq!(
            desired["spec"]["healthCheckNodePort"].as_i64(),
            want,
            "{desc}"
        );
    }
}

#[test]
fn a_services_allocated_cluster_ip_is_kept() {
    let rows = [
        ("no clusterIP", json!({}), None),
        ("not a string", json!({"spec": {"clusterIP": -1000}}), None),
        (
            "valid",
            json!({"spec": {"clusterIP": "1.2.3.4"}}),
            Some("1.2.3.4"),
        ),
    ];
    for (desc, observed, want) in rows {
        let desired = service_retained(observed);
        assert_eq!(desired["spec"]["clusterIP"].as_str(), want, "{desc}");
    }
}

#[test]
fn service_account_secrets_are_the_desired_ones_plus_the_members_others() {
    let named = |names: &[&str]| -> Value { names.iter().map(|n| json!({"name": n})).collect() };
    type Row = (&'static str, Value, Value, Value, Value);
    let rows: Vec<Row> = vec![
        (
            "neither has secrets",
            json!({}),
            json!({}),
            Value::Null,
            Value::Null,
        ),
        (
            "the same secrets",
            json!({"secrets": named(&["test"])}),
            json!({"secrets": named(&["test"])}),
            named(&["test"]),
            Value::Null,
        ),
        (
            "the member has one more",
            json!({"secrets": named(&["test"])}),
            json!({"secrets": named(&["test", "test-token"])}),
            named(&["test", "test-token"]),
            Value::Null,
        ),
        (
            "only the member has imagePullSecrets",
            json!({"secrets": named(&["test"])}),
            json!({"secrets": named(&["test"]), "imagePullSecrets": named(&["foo"])}),
            named(&["test"]),
            named(&["foo"]),
        ),
    ];
    for (desc, mut desired, observed, secrets, pull) in rows {
        retain_service_account_fields(&mut desired, &observed);
        assert_eq!(desired["secrets"], secrets, "{desc}: secrets");
        assert_eq!(
            desired["imagePullSecrets"], pull,
            "{desc}: imagePullSecrets"
        );
    }
}
