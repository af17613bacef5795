//! ResourceRegistry validation, as karmada-search's API server runs it on create and update
//! (pkg/apis/search/validation/validation.go): the target clusters' affinity as a policy's,
//! each selector's `apiVersion` and `namespace`, the OpenSearch addresses. The name (a DNS
//! subdomain) is the API server's metadata check, as for every kind.
//!
//! karmada-search serves the kind from its own API server, not from a CRD: no schema is
//! enforced, so absent selectors, an empty `kind` or `apiVersion` and an empty selector list
//! are all accepted there, and here.

use serde_json::Value;

use super::go_url::GoUrl;
use super::policy::{cluster_affinity, items};
use super::str_field;
use crate::validation::{FieldError, FieldPath, is_dns1123_label};

/// The spec rules of a ResourceRegistry.
pub fn resource_registry(object: &Value) -> Vec<FieldError> {
    let spec = &object["spec"];
    let path = FieldPath::new("spec");
    let mut errors = cluster_affinity(&spec["targetCluster"], &path.child("targetCluster"));
    let selectors = path.child("resourceSelectors");
    for (i, selector) in items(&spec["resourceSelectors"]) {
        let at = selectors.index(i);
        let api_version = str_field(selector, "apiVersion");
        if let Err(message) = parse_group_version(api_version) {
            errors.push(FieldError::invalid(
                at.child("apiVersion"),
                api_version,
                message,
            ));
        }
        // `ValidateNamespaceName`: a DNS-1123 label, one error per problem.
        let namespace = str_field(selector, "namespace");
        if !namespace.is_empty() {
            for message in is_dns1123_label(namespace) {
                errors.push(FieldError::invalid(
                    at.child("namespace"),
                    namespace,
                    message,
                ));
            }
        }
    }
    let addresses = path
        .child("backendStore")
        .child("openSearch")
        .child("addresses");
    for (i, address) in items(&spec["backendStore"]["openSearch"]["addresses"]) {
        let address = address.as_str().unwrap_or("");
        let message = match GoUrl::parse(address) {
            Err(error) => error,
            Ok(url) if matches!(url.scheme.as_str(), "http" | "https") && !url.host.is_empty() => {
                continue;
            }
            Ok(_) => "must be a valid http or https URL with non-empty scheme and host".into(),
        };
        errors.push(FieldError::invalid(addresses.index(i), address, message));
    }
    errors
}

/// Go's `schema.ParseGroupVersion`: `""`, `"/"`, `version` or `group/version`.
fn parse_group_version(api_version: &str) -> Result<(), String> {
    if api_version == "/" || api_version.matches('/').count() <= 1 {
        Ok(())
    } else {
        Err(format!("unexpected GroupVersion string: {api_version}"))
    }
}
