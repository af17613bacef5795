//! Validation of a custom resource against its structural schema.
//!
//! Follows k8s.io/kube-openapi/pkg/validation (validate/*_validator.go for the checks,
//! errors/schema.go for the wording) and the conversion of those errors to field errors in
//! k8s.io/apiextensions-apiserver/pkg/apiserver/validation/validation.go
//! (`ConvertToFieldErrors`: type errors → TypeInvalid, enum → NotSupported, required →
//! Required, maxLength → TooLong, maxItems → TooMany, everything else → Invalid).

use serde_json::Value;

use flotilla_api::validation::{BadValue, FieldError, FieldPath};

use crate::crd::schema::{Node, Schema};

/// Every way `object` breaks `schema` (metadata is validated elsewhere).
pub fn validate(schema: &Schema, object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    check(
        &schema.root,
        object,
        &FieldPath::default(),
        true,
        &mut errors,
    );
    errors
}

/// The JSON type name kube-openapi reports for a value.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn has_type(value: &Value, type_: &str) -> bool {
    match type_ {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => is_integer(value),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => true,
    }
}

/// How Go's `%v` prints a value in an error.
fn bad_value(value: &Value) -> BadValue {
    match value {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Bool(b) => BadValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => BadValue::Int(i),
            None => BadValue::Verbatim(go_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::Null => BadValue::Null,
        other => BadValue::Verbatim(other.to_string()),
    }
}

/// Go's `%v` of a float64 (strconv 'g', shortest): exponent form below 1e-4 and from 1e6 on.
pub fn go_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let exponent = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exponent) {
        return format!("{f}");
    }
    let formatted = format!("{f:e}");
    let (mantissa, exp) = formatted.split_once('e').unwrap_or((&formatted, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

fn name(path: &FieldPath) -> &str {
    path.as_str()
}

fn check(node: &Node, value: &Value, path: &FieldPath, root: bool, errors: &mut Vec<FieldError>) {
    if value.is_null() {
        if !node.nullable
            && let Some(type_) = &node.type_
        {
            errors.push(FieldError::type_invalid(
                name(path),
                "null",
                format!("{} in body must be of type {type_}: \"null\"", name(path)),
            ));
        }
        return;
    }
    if node.int_or_string {
        if !is_integer(value) && !value.is_string() {
            let actual = type_name(value);
            errors.push(FieldError::type_invalid(
                name(path),
                actual,
                format!(
                    "{} in body must be of type integer-or-string: \"{actual}\"",
                    name(path)
                ),
            ));
            return;
        }
    } else if let Some(type_) = &node.type_
        && !has_type(value, type_)
    {
        let actual = type_name(value);
        errors.push(FieldError::type_invalid(
            name(path),
            actual,
            format!(
                "{} in body must be of type {type_}: \"{actual}\"",
                name(path)
            ),
        ));
        return;
    }
    if let Some(values) = &node.enum_values
        && !values.iter().any(|allowed| allowed == value)
    {
        let supported: Vec<String> = values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        errors.push(FieldError::not_supported(
            name(path),
            bad_value(value),
            &supported,
        ));
    }
    match value {
        Value::Number(n) => check_number(node, n.as_f64().unwrap_or(0.0), value, path, errors),
        Value::String(s) => check_string(node, s, path, errors),
        Value::Array(items) => check_array(node, items, path, errors),
        Value::Object(map) => check_object(node, map, path, root, errors),
        _ => {}
    }
}

fn check_number(
    node: &Node,
    n: f64,
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) {
    let field = name(path);
    let mut invalid = |detail: String| {
        errors.push(FieldError::invalid(field, bad_value(value), detail));
    };
    if let Some(max) = node.maximum {
        if node.exclusive_maximum && n >= max {
            invalid(format!(
                "{field} in body should be less than {}",
                go_float(max)
            ));
        } else if !node.exclusive_maximum && n > max {
            invalid(format!(
                "{field} in body should be less than or equal to {}",
                go_float(max)
            ));
        }
    }
    if let Some(min) = node.minimum {
        if node.exclusive_minimum && n <= min {
            invalid(format!(
                "{field} in body should be greater than {}",
                go_float(min)
            ));
        } else if !node.exclusive_minimum && n < min {
            invalid(format!(
                "{field} in body should be greater than or equal to {}",
                go_float(min)
            ));
        }
    }
    if let Some(factor) = node.multiple_of
        && factor > 0.0
        && (n / factor).fract() != 0.0
    {
        invalid(format!(
            "{field} in body should be a multiple of {}",
            go_float(factor)
        ));
    }
}

fn check_string(node: &Node, s: &str, path: &FieldPath, errors: &mut Vec<FieldError>) {
    let field = name(path);
    let chars = s.chars().count() as u64;
    if let Some(max) = node.max_length
        && chars > max
    {
        errors.push(FieldError::too_long(field, usize::try_from(max).ok()));
    }
    if let Some(min) = node.min_length
        && chars < min
    {
        errors.push(FieldError::invalid(
            field,
            s,
            format!("{field} in body should be at least {min} chars long"),
        ));
    }
    if let Some(pattern) = &node.pattern
        && !pattern.regex.is_match(s)
    {
        errors.push(FieldError::invalid(
            field,
            s,
            format!("{field} in body should match '{}'", pattern.source),
        ));
    }
}

fn check_array(node: &Node, items: &[Value], path: &FieldPath, errors: &mut Vec<FieldError>) {
    let field = name(path);
    let len = items.len() as u64;
    if let Some(max) = node.max_items
        && len > max
    {
        errors.push(FieldError::too_many(
            field,
            Some(items.len()),
            usize::try_from(max).ok(),
        ));
    }
    if let Some(min) = node.min_items
        && len < min
    {
        errors.push(FieldError::invalid(
            field,
            BadValue::Int(i64::try_from(len).unwrap_or(i64::MAX)),
            format!("{field} in body should have at least {min} items"),
        ));
    }
    if let Some(item_node) = &node.items {
        for (i, item) in items.iter().enumerate() {
            check(item_node, item, &path.index(i), false, errors);
        }
    }
}

fn check_object(
    node: &Node,
    map: &serde_json::Map<String, Value>,
    path: &FieldPath,
    root: bool,
    errors: &mut Vec<FieldError>,
) {
    let field = name(path);
    let len = map.len() as u64;
    if let Some(max) = node.max_properties
        && len > max
    {
        errors.push(FieldError::too_many(
            field,
            Some(map.len()),
            usize::try_from(max).ok(),
        ));
    }
    if let Some(min) = node.min_properties
        && len < min
    {
        errors.push(FieldError::invalid(
            field,
            BadValue::Int(i64::try_from(len).unwrap_or(i64::MAX)),
            format!("{field} in body should have at least {min} properties"),
        ));
    }
    for required in &node.required {
        if !map.contains_key(required) {
            errors.push(FieldError::required(path.child(required).as_str(), ""));
        }
    }
    let resource = root || node.embedded_resource;
    for (key, child) in map {
        // ObjectMeta has its own validation.
        if resource && key == "metadata" {
            continue;
        }
        let schema = node
            .properties
            .get(key)
            .or(node.additional_properties.as_deref());
        if let Some(schema) = schema {
            check(schema, child, &path.child(key), false, errors);
        }
    }
}
