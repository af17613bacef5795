//! A CustomResourceDefinition as data: its defaults and validation (the minimum kubectl users
//! meet), the [`ResourceInfo`]s it serves, and the status kube-apiserver writes for it.
//!
//! Defaults and checks follow k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
//! (defaults.go) and .../validation/validation.go, in our own words.

use std::sync::Arc;

use serde_json::{Value, json};

use flotilla_api::validation::{BadValue, FieldError, FieldPath, is_dns1035_label};

use super::schema::Schema;
use crate::catalog::{Column, Printer, ResourceInfo, ScalePaths};

/// The finalizer that holds a CRD until its custom resources are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

fn str_at<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or("")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Fills in what kube-apiserver defaults in a CRD: singular and listKind names, the
/// conversion strategy, and `Age` printer columns are left to the table printer.
pub fn default_definition(object: &mut Value) {
    let spec = &mut object["spec"];
    if !spec.is_object() {
        return;
    }
    let kind = str_at(&spec["names"], "kind").to_owned();
    if !kind.is_empty() && spec["names"].is_object() {
        if str_at(&spec["names"], "singular").is_empty() {
            spec["names"]["singular"] = kind.to_lowercase().into();
        }
        if str_at(&spec["names"], "listKind").is_empty() {
            spec["names"]["listKind"] = format!("{kind}List").into();
        }
    }
    if spec.get("conversion").is_none() {
        spec["conversion"] = json!({"strategy": "None"});
    }
}

/// What is wrong with a CRD (empty when it can be served).
pub fn definition_errors(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = &object["spec"];
    let group = str_at(spec, "group");
    let names = &spec["names"];
    let plural = str_at(names, "plural");
    let name = str_at(&object["metadata"], "name");
    if name != format!("{plural}.{group}") {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errors.push(FieldError::required("spec.group", ""));
    } else if !group.contains('.') {
        errors.push(FieldError::invalid(
            "spec.group",
            group,
            "should be a domain with at least one dot",
        ));
    }
    let dns_label = |field: &str, value: &str, errors: &mut Vec<FieldError>| {
        let problems = is_dns1035_label(value);
        if !value.is_empty() && !problems.is_empty() {
            errors.push(FieldError::invalid(field, value, problems.join(",")));
        }
    };
    if plural.is_empty() {
        errors.push(FieldError::required("spec.names.plural", ""));
    }
    dns_label("spec.names.plural", plural, &mut errors);
    dns_label(
        "spec.names.singular",
        str_at(names, "singular"),
        &mut errors,
    );
    for (i, short) in strings(&names["shortNames"]).iter().enumerate() {
        dns_label(&format!("spec.names.shortNames[{i}]"), short, &mut errors);
    }
    let kind = str_at(names, "kind");
    if kind.is_empty() {
        errors.push(FieldError::required("spec.names.kind", ""));
    } else if kind == str_at(names, "listKind") {
        errors.push(FieldError::invalid(
            "spec.names.listKind",
            kind,
            "kind and listKind cannot be the same",
        ));
    }
    match str_at(spec, "scope") {
        "Namespaced" | "Cluster" => {}
        "" => errors.push(FieldError::required("spec.scope", "")),
        other => errors.push(FieldError::not_supported(
            "spec.scope",
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        errors.push(FieldError::invalid(
            "spec.versions",
            BadValue::Verbatim("[]".into()),
            "must have exactly one version marked as storage version",
        ));
    } else {
        let storage = versions.iter().filter(|v| v["storage"] == true).count();
        if storage != 1 {
            let names: Vec<String> = versions
                .iter()
                .map(|v| str_at(v, "name").to_owned())
                .collect();
            errors.push(FieldError::invalid(
                "spec.versions",
                BadValue::StrList(names),
                "must have exactly one version marked as storage version",
            ));
        }
    }
    let base = FieldPath::new("spec.versions");
    for (i, version) in versions.iter().enumerate() {
        let path = base.index(i);
        if str_at(version, "name").is_empty() {
            errors.push(FieldError::required(path.child("name").as_str(), ""));
        }
        let schema_path = path.child("schema").child("openAPIV3Schema");
        match version["schema"].get("openAPIV3Schema") {
            None | Some(Value::Null) => errors.push(FieldError::required(
                schema_path.as_str(),
                "schemas are required",
            )),
            Some(raw) => {
                if str_at(raw, "type") != "object" {
                    errors.push(FieldError::invalid(
                        schema_path.child("type").as_str(),
                        str_at(raw, "type"),
                        "must be object at the root",
                    ));
                }
                if let Err(problems) = Schema::parse(raw, &schema_path) {
                    errors.extend(problems);
                }
            }
        }
    }
    errors
}

/// The versions a CRD serves, most preferred first (Kubernetes' version priority).
fn served_versions(spec: &Value) -> Vec<&Value> {
    let mut versions: Vec<&Value> = spec["versions"]
        .as_array()
        .map(|v| v.iter().filter(|v| v["served"] != false).collect())
        .unwrap_or_default();
    versions.sort_by_key(|v| version_priority(str_at(v, "name")));
    versions
}

/// Sort key of a version name: GA before beta before alpha before anything else, higher
/// numbers first, then by name (kube's `version.CompareKubeAwareVersionStrings`).
pub fn version_priority(
    name: &str,
) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    let parsed = name.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        let (class, minor) = if tail.is_empty() {
            (0, "0")
        } else if let Some(m) = tail.strip_prefix("beta") {
            (1, m)
        } else if let Some(m) = tail.strip_prefix("alpha") {
            (2, m)
        } else {
            return None;
        };
        let minor: u64 = if minor.is_empty() {
            0
        } else {
            minor.parse().ok()?
        };
        Some((class, major, minor))
    });
    match parsed {
        Some((class, major, minor)) => (
            class,
            std::cmp::Reverse(major),
            std::cmp::Reverse(minor),
            String::new(),
        ),
        None => (
            3,
            std::cmp::Reverse(0),
            std::cmp::Reverse(0),
            name.to_owned(),
        ),
    }
}

/// A printer column list without the `Age` column the table printer appends anyway.
fn columns(version: &Value) -> Vec<Column> {
    version["additionalPrinterColumns"]
        .as_array()
        .map(|columns| {
            columns
                .iter()
                .filter(|c| {
                    !(str_at(c, "jsonPath") == ".metadata.creationTimestamp"
                        && str_at(c, "name").eq_ignore_ascii_case("age"))
                })
                .map(|c| Column {
                    name: str_at(c, "name").to_owned(),
                    type_: str_at(c, "type").to_owned(),
                    json_path: str_at(c, "jsonPath").to_owned(),
                    priority: c["priority"]
                        .as_i64()
                        .and_then(|p| i32::try_from(p).ok())
                        .unwrap_or(0),
                    description: str_at(c, "description").to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One [`ResourceInfo`] per served version, most preferred first; `None` if the CRD is invalid.
pub fn resource_infos(crd: &Value) -> Option<Vec<ResourceInfo>> {
    if !definition_errors(crd).is_empty() {
        return None;
    }
    let name = str_at(&crd["metadata"], "name").to_owned();
    let spec = &crd["spec"];
    let names = &spec["names"];
    let kind = str_at(names, "kind").to_owned();
    let mut infos = Vec::new();
    for version in served_versions(spec) {
        let schema = version["schema"]
            .get("openAPIV3Schema")
            .and_then(|raw| Schema::parse(raw, &FieldPath::default()).ok())
            .unwrap_or_else(Schema::preserve_all);
        let subresources = &version["subresources"];
        let scale = subresources
            .get("scale")
            .filter(|s| s.is_object())
            .map(|s| ScalePaths {
                spec_replicas: str_at(s, "specReplicasPath").to_owned(),
                status_replicas: str_at(s, "statusReplicasPath").to_owned(),
                label_selector: Some(str_at(s, "labelSelectorPath"))
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned),
            });
        infos.push(ResourceInfo {
            group: str_at(spec, "group").to_owned(),
            version: str_at(version, "name").to_owned(),
            kind: kind.clone(),
            list_kind: Some(str_at(names, "listKind"))
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{kind}List")),
            plural: str_at(names, "plural").to_owned(),
            singular: Some(str_at(names, "singular"))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| kind.to_lowercase()),
            namespaced: str_at(spec, "scope") == "Namespaced",
            short_names: strings(&names["shortNames"]),
            categories: strings(&names["categories"]),
            status: subresources.get("status").is_some_and(Value::is_object),
            scale,
            columns: columns(version),
            printer: Printer::Columns,
            generation: true,
            crd: Some(name.clone()),
            schema: Some(Arc::new(schema)),
            storage_group: None,
        });
    }
    Some(infos)
}

/// The names a CRD asks for, as `status.acceptedNames` reports them.
pub fn accepted_names(crd: &Value) -> Value {
    let names = &crd["spec"]["names"];
    let mut accepted = json!({
        "plural": str_at(names, "plural"),
        "singular": str_at(names, "singular"),
        "kind": str_at(names, "kind"),
        "listKind": str_at(names, "listKind"),
    });
    for field in ["shortNames", "categories"] {
        let values = strings(&names[field]);
        if !values.is_empty() {
            accepted[field] = values.into();
        }
    }
    accepted
}

/// A condition as kube writes it.
pub fn condition(type_: &str, status: bool, reason: &str, message: &str, now: &str) -> Value {
    json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    })
}

/// Sets `condition` in `status.conditions`, keeping the transition time when the status did
/// not change.
pub fn set_condition(status: &mut Value, condition: Value) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"]
        .as_array_mut()
        .expect("conditions was just made an array");
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        Some(existing) => {
            let time = if existing["status"] == condition["status"] {
                existing["lastTransitionTime"].clone()
            } else {
                condition["lastTransitionTime"].clone()
            };
            *existing = condition;
            existing["lastTransitionTime"] = time;
        }
        None => conditions.push(condition),
    }
}

/// The status of an established CRD: names accepted, established, stored versions.
pub fn established_status(crd: &Value, now: &str) -> Value {
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    if !status.is_object() {
        status = json!({});
    }
    status["acceptedNames"] = accepted_names(crd);
    set_condition(
        &mut status,
        condition(
            "NamesAccepted",
            true,
            "NoConflicts",
            "no conflicts found",
            now,
        ),
    );
    set_condition(
        &mut status,
        condition(
            "Established",
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
            now,
        ),
    );
    let mut stored = strings(&status["storedVersions"]);
    if let Some(storage) = crd["spec"]["versions"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["storage"] == true))
    {
        let name = str_at(storage, "name").to_owned();
        if !stored.contains(&name) {
            stored.push(name);
        }
    }
    status["storedVersions"] = stored.into();
    status
}
