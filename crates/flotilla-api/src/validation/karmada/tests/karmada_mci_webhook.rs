//! Karmada's MultiClusterIngress webhook cases
//! (`pkg/webhook/multiclusteringress/validating_test.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::*;
use crate::validation::{FieldPath, aggregate_message, validate_object_meta_update};

fn mci(name: &str, version: &str, backend: &str, host: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": "test-namespace", "resourceVersion": version},
        "spec": {
            "defaultBackend": {"service": {"name": backend, "port": {"name": "", "number": 80}}},
            "rules": [{"host": host}],
        },
    })
}

fn aggregate(object: &Value, old: Option<&Value>) -> String {
    aggregate_message(&validate(Kind::MultiClusterIngress, object, old))
}

#[test]
fn validating_admission_handle() {
    // TestValidatingAdmission_Handle. The two decoding cases (a body or old object that does not
    // decode) are the API server's request decoding here, not this module's.
    let old = mci("test-mci", "1000", "test-backend", "127.0.0.1");
    let update = mci("test-mci", "1001", "test-new-backend", "10.0.0.5");
    assert!(
        aggregate(&update, Some(&old))
            .contains("Invalid value: \"10.0.0.5\": must be a DNS name, not an IP address")
    );
    assert_eq!(
        messages(&validate(Kind::MultiClusterIngress, &update, Some(&old))),
        ["spec.rules[0].host: Invalid value: \"10.0.0.5\": must be a DNS name, not an IP address"]
    );
    let empty = json!({"metadata": {"name": "test-mci", "namespace": "test-namespace", "resourceVersion": "1000"}, "spec": {}});
    assert!(
        aggregate(&empty, None).contains("either `defaultBackend` or `rules` must be specified")
    );
    let old = mci("test-mci", "1000", "test-backend", "test-backend.com");
    let update = mci(
        "test-mci",
        "1001",
        "test-new-backend",
        "test-new-backend.com",
    );
    assert!(validate(Kind::MultiClusterIngress, &update, Some(&old)).is_empty());
}

#[test]
fn validating_spec_validate_mci_update() {
    // TestValidatingSpec_validateMCIUpdate.
    let mut old = mci("test-mci", "1000", "test-backend", "test-backend.com");
    old["metadata"]["labels"] = json!({"key": "oldValue"});
    let mut new = mci(
        "test-mci",
        "1001",
        "test-new-backend",
        "test-new-backend.com",
    );
    new["metadata"]["labels"] = json!({"key": "oldValue"});
    assert!(validate(Kind::MultiClusterIngress, &new, Some(&old)).is_empty());

    // A renamed object: `metadata` is checked by the API server for every kind.
    let meta = |name: &str, version: &str| -> ObjectMeta {
        serde_json::from_value(
            json!({"name": name, "namespace": "test-namespace", "resourceVersion": version}),
        )
        .unwrap()
    };
    let errs = validate_object_meta_update(
        &meta("mutated-name", "1001"),
        &meta("test-mci", "1000"),
        &FieldPath::new("metadata"),
    );
    assert!(aggregate_message(&errs).contains("metadata.name: Invalid value: \"mutated-name\""));

    // An invalid load-balancer status on update.
    let mut old = mci("test-mci", "1000", "test-backend", "test-backend.com");
    old["status"] =
        json!({"loadBalancer": {"ingress": [{"ip": "127.0.0.1", "hostname": "test-backend.com"}]}});
    let mut new = mci(
        "test-mci",
        "1001",
        "test-new-backend",
        "test-new-backend.com",
    );
    new["status"] = json!({"loadBalancer": {"ingress": [{"ip": "test-new-backend.com", "hostname": "test-new-backend.com"}]}});
    assert!(
        aggregate(&new, Some(&old))
            .contains("Invalid value: \"test-new-backend.com\": must be a valid IP address")
    );
}
