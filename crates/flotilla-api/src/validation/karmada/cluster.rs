//! Cluster validation, as Karmada's aggregated API server runs it
//! (pkg/apis/cluster/validation/validation.go, `lifted.ValidateClusterTaints`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::go_url::GoUrl;
use super::policy::{items, label_key_errors, webhook_wording};
use super::{shown, str_field};
use crate::Quantity;
use crate::validation::{FieldError, FieldPath, is_dns1123_label, is_valid_label_value};

/// Longest cluster name Karmada accepts.
pub const CLUSTER_NAME_MAX_LENGTH: usize = 48;

/// `ValidateClusterName`: messages for a name that is not a valid cluster name.
pub fn cluster_name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["must be not empty".into()];
    }
    if name.len() > CLUSTER_NAME_MAX_LENGTH {
        return vec![format!(
            "must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"
        )];
    }
    is_dns1123_label(name)
}

/// `IsValidLabelValue` as Karmada's apimachinery v0.36 words it (lengths in bytes): the
/// aggregated API server is Karmada's own build, like karmada-webhook.
fn label_value_errors(value: &str) -> Vec<String> {
    is_valid_label_value(value)
        .into_iter()
        .map(webhook_wording)
        .collect()
}

/// The spec rules (metadata is the API server's business, except the length limit of names).
pub fn cluster(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if name.len() > CLUSTER_NAME_MAX_LENGTH {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"),
        ));
    }
    let spec = &object["spec"];
    let path = FieldPath::new("spec");
    let sync_mode = str_field(spec, "syncMode");
    if sync_mode.is_empty() {
        errors.push(FieldError::required(path.child("syncMode"), ""));
    }
    if !matches!(sync_mode, "Pull" | "Push") {
        errors.push(FieldError::not_supported(
            path.child("syncMode"),
            sync_mode,
            &["Pull", "Push"],
        ));
    }
    let endpoint = str_field(spec, "apiEndpoint");
    if !endpoint.is_empty() {
        errors.extend(api_endpoint(endpoint, &path.child("apiEndpoint")));
    }
    for secret in ["secretRef", "impersonatorSecretRef"] {
        let reference = &spec[secret];
        if reference.is_null() {
            continue;
        }
        for field in ["namespace", "name"] {
            if str_field(reference, field).is_empty() {
                errors.push(FieldError::required(path.child(secret).child(field), ""));
            }
        }
    }
    let proxy = str_field(spec, "proxyURL");
    if !proxy.is_empty() {
        // Karmada's message for a proxy that does not parse names the API endpoint.
        let message = match GoUrl::parse(proxy) {
            Err(error) => Some(format!("apiEndpoint must be a valid URL: {error}")),
            Ok(url) if !matches!(url.scheme.as_str(), "http" | "https" | "socks5") => {
                Some(format!(
                    "unsupported scheme {:?}, must be http, https, or socks5",
                    url.scheme
                ))
            }
            Ok(_) => None,
        };
        if let Some(message) = message {
            errors.push(FieldError::invalid(path.child("proxyURL"), proxy, message));
        }
    }
    errors.extend(topology(spec, &path));
    errors.extend(taints(&spec["taints"], &path.child("taints")));
    if spec["resourceModels"]
        .as_array()
        .is_some_and(|m| !m.is_empty())
        && let Some(error) = resource_models(&spec["resourceModels"], &path.child("resourceModels"))
    {
        errors.push(error);
    }
    errors
}

fn topology(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in ["provider", "region"] {
        let value = str_field(spec, field);
        let messages = label_value_errors(value);
        if !messages.is_empty() {
            errors.push(FieldError::invalid(
                path.child(field),
                value,
                messages.join("; "),
            ));
        }
    }
    let zone = str_field(spec, "zone");
    let zones = spec["zones"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !zone.is_empty() && !zones.is_empty() {
        errors.push(FieldError::type_invalid(
            path.child("zone"),
            shown(spec),
            "Zone and Zones cannot co-exist",
        ));
        return errors;
    }
    if !zone.is_empty() {
        let messages = label_value_errors(zone);
        if !messages.is_empty() {
            errors.push(FieldError::invalid(
                path.child("zone"),
                zone,
                messages.join("; "),
            ));
        }
        return errors;
    }
    for (i, value) in zones.iter().enumerate() {
        let value = value.as_str().unwrap_or("");
        let messages = label_value_errors(value);
        if !messages.is_empty() {
            errors.push(FieldError::invalid(
                path.child("zones").index(i),
                value,
                messages.join("; "),
            ));
        }
    }
    errors
}

/// `ValidateClusterTaints`: label-like keys and values, NoSchedule or NoExecute, unique by key
/// and effect. Key and value messages are worded as Karmada's apimachinery v0.36 words them
/// (lengths in bytes, "a valid label key").
pub fn taints(taints: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, taint) in items(taints) {
        let at = path.index(i);
        let key = str_field(taint, "key");
        for message in label_key_errors(key) {
            errors.push(FieldError::invalid(at.child("key"), key, message));
        }
        let value = str_field(taint, "value");
        let messages = label_value_errors(value);
        if !messages.is_empty() {
            errors.push(FieldError::invalid(
                at.child("value"),
                value,
                messages.join(";"),
            ));
        }
        let effect = str_field(taint, "effect");
        if effect.is_empty() {
            errors.push(FieldError::required(at.child("effect"), ""));
        } else if !matches!(effect, "NoSchedule" | "NoExecute") {
            errors.push(FieldError::not_supported(
                at.child("effect"),
                effect,
                &["NoSchedule", "NoExecute"],
            ));
        }
        if !seen.insert((effect, key)) {
            let mut duplicate = FieldError::duplicate(&at, shown(taint));
            duplicate.detail = "taints must be unique by key and effect pair".into();
            errors.push(duplicate);
        }
    }
    errors
}

fn quantity(value: &Value) -> Option<Quantity> {
    match value {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        Value::Null => Quantity::parse("0").ok(),
        _ => None,
    }
}

/// `ValidateClusterResourceModels`: the first failure only, as Karmada reports it.
pub fn resource_models(models: &Value, path: &FieldPath) -> Option<FieldError> {
    let list = models.as_array()?;
    let invalid = |message: &str| Some(FieldError::invalid(path, shown(models), message));
    let max_int = Quantity::from_i64(i64::MAX, crate::QuantityFormat::DecimalSI);
    for (i, model) in list.iter().enumerate() {
        let ranges = model["ranges"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let previous = i.checked_sub(1).map(|p| &list[p]);
        if let Some(previous) = previous {
            if previous["grade"] == model["grade"] {
                return invalid("The grade of each models should not be the same");
            }
            if previous["ranges"].as_array().map_or(0, Vec::len) != ranges.len() {
                return invalid("The number of resource types should be the same");
            }
        }
        for (j, range) in ranges.iter().enumerate() {
            let (Some(min), Some(max)) = (quantity(&range["min"]), quantity(&range["max"])) else {
                return invalid(
                    "The max value of each resource must be greater than the min value",
                );
            };
            if max <= min {
                return invalid(
                    "The max value of each resource must be greater than the min value",
                );
            }
            match previous {
                None if !min.is_zero() => {
                    return invalid(
                        "The min value of each resource in the first model should be 0",
                    );
                }
                None => {}
                Some(previous) => {
                    let before = &previous["ranges"][j];
                    if before["name"] != range["name"] {
                        return invalid("The resource types of each models should be the same");
                    }
                    if quantity(&before["max"]).as_ref() != Some(&min) {
                        return invalid(
                            "Model intervals for resources must be contiguous and non-overlapping",
                        );
                    }
                }
            }
            if i == list.len() - 1 && max < max_int {
                return invalid(
                    "The max value of each resource in the last model should be MaxInt64",
                );
            }
        }
    }
    None
}

/// `ValidateClusterAPIEndpoint` (HTTPS not forced).
pub fn api_endpoint(endpoint: &str, path: &FieldPath) -> Vec<FieldError> {
    const FORM: &str = "; desired format: hostname, hostname:port, IP or IP:port";
    let url = match GoUrl::parse(endpoint) {
        Ok(url) => url,
        Err(error) => {
            return vec![FieldError::invalid(
                path,
                endpoint,
                format!("apiEndpoint must be a valid URL: {error}{FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if url.host.is_empty() {
        errors.push(FieldError::invalid(
            path,
            "",
            format!("host must be provided{FORM}"),
        ));
    }
    errors.extend(url.forbidden_parts(path));
    errors
}
