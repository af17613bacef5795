//! The constraints and defaults Karmada declares in its CRDs' OpenAPI schemas (kubebuilder
//! markers: `required`, `enum`, `minItems`, `minimum`, `default`, …), as a table per kind that
//! one walker applies. Errors read as kube-apiserver's CRD validation words them; defaults are
//! applied as structural defaulting does: only where the parent object exists, only where the
//! field is absent or null.

use std::collections::HashMap;
use std::sync::{LazyLock, PoisonError, RwLock};

use serde_json::{Map, Value};

use crate::Quantity;
use crate::validation::{BadValue, FieldError, FieldPath};

/// One schema rule at a path such as `spec.resourceSelectors[].kind` (`[]`: every list item,
/// `{}`: every map value).
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// The object at the path must have these keys.
    Required(&'static [&'static str]),
    /// The string at the path must be one of these.
    Enum(&'static [&'static str]),
    /// The list at the path must have at least this many items.
    MinItems(u64),
    /// The integer at the path must be at least this.
    Minimum(i64),
    /// The integer at the path must be at most this.
    Maximum(i64),
    /// The string at the path must be at least this many characters long.
    MinLength(u64),
    /// The string at the path must be at most this many characters long.
    MaxLength(u64),
    /// The string at the path must be a resource quantity (the CRDs' quantity `pattern`).
    Quantity,
    /// The field at the path defaults to this string.
    DefaultStr(&'static str),
    /// The field at the path defaults to this integer.
    DefaultInt(i64),
    /// The field at the path defaults to this boolean.
    DefaultBool(bool),
}

/// A rule and where it applies.
pub type Constraint = (&'static str, Rule);

/// The `pattern` Kubernetes' OpenAPI gives `resource.Quantity` (quoted in its error message).
const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// Every violation of `constraints` by `object`, in table order.
pub fn check(constraints: &'static [Constraint], object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for ((_, rule), segments) in constraints.iter().zip(split_table(constraints)) {
        if is_default(rule) {
            continue;
        }
        visit(object, segments, &mut Vec::new(), &mut |value, steps| {
            check_at(rule, value, steps, &mut errors)
        });
    }
    errors
}

/// [`check`] of an update: rules under a member that the update left as it was in `old` are
/// skipped, as kube-apiserver's CRD validation ratcheting (KEP-4008, on by default since
/// Kubernetes 1.30) accepts unchanged values. Members are compared at most two names deep
/// (`spec.placement`), each once.
pub fn check_update(
    constraints: &'static [Constraint],
    object: &Value,
    old: &Value,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut unchanged: Vec<(&'static [&'static str], bool)> = Vec::new();
    for ((_, rule), &segments) in constraints.iter().zip(split_table(constraints)) {
        if is_default(rule) {
            continue;
        }
        let names = segments
            .iter()
            .take(2)
            .take_while(|s| !matches!(**s, "[]" | "{}"))
            .count();
        if names > 0 {
            let prefix = &segments[..names];
            let same = match unchanged.iter().find(|(p, _)| *p == prefix) {
                Some((_, same)) => *same,
                None => {
                    let same = member(object, prefix) == member(old, prefix);
                    unchanged.push((prefix, same));
                    same
                }
            };
            if same {
                continue;
            }
        }
        visit(object, segments, &mut Vec::new(), &mut |value, steps| {
            check_at(rule, value, steps, &mut errors)
        });
    }
    errors
}

/// The segments of every path of `table` ([`split`]), in table order: split once per table
/// and kept for the life of the process (the tables are static and few; splitting them on
/// every write was a twentieth of a binding patch's cost).
fn split_table(table: &'static [Constraint]) -> &'static [&'static [&'static str]] {
    type Split = &'static [&'static [&'static str]];
    static TABLES: LazyLock<RwLock<HashMap<(usize, usize), Split>>> =
        LazyLock::new(Default::default);
    let key = (table.as_ptr() as usize, table.len());
    if let Some(split) = TABLES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return split;
    }
    let mut tables = TABLES.write().unwrap_or_else(PoisonError::into_inner);
    tables.entry(key).or_insert_with(|| {
        let split: Vec<&'static [&'static str]> = table
            .iter()
            .map(|(path, _)| &*Vec::leak(split(path)))
            .collect();
        Vec::leak(split)
    })
}

/// The member at `names` (plain member names) under `value`.
fn member<'v>(value: &'v Value, names: &[&str]) -> Option<&'v Value> {
    names.iter().try_fold(value, |v, name| v.get(*name))
}

/// Applies the `Default*` rules of `constraints` to `object`, parents before children (the
/// table lists them in that order).
pub fn default(constraints: &'static [Constraint], object: &mut Value) {
    for ((_, rule), segments) in constraints.iter().zip(split_table(constraints)) {
        let value = match rule {
            Rule::DefaultStr(s) => Value::from(*s),
            Rule::DefaultInt(i) => Value::from(*i),
            Rule::DefaultBool(b) => Value::from(*b),
            _ => continue,
        };
        let Some((field, parents)) = segments.split_last() else {
            continue;
        };
        visit_mut(object, parents, &mut |parent| {
            if let Some(map) = parent.as_object_mut()
                && map.get(*field).is_none_or(Value::is_null)
            {
                map.insert((*field).to_owned(), value.clone());
            }
        });
    }
}

fn is_default(rule: &Rule) -> bool {
    matches!(
        rule,
        Rule::DefaultStr(_) | Rule::DefaultInt(_) | Rule::DefaultBool(_)
    )
}

/// `a.b[].c{}` → `["a", "b", "[]", "c", "{}"]`; the empty path is the object itself.
fn split(path: &'static str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        let mut markers = Vec::new();
        loop {
            if let Some(name) = rest.strip_suffix("[]") {
                rest = name;
                markers.push("[]");
            } else if let Some(name) = rest.strip_suffix("{}") {
                rest = name;
                markers.push("{}");
            } else {
                break;
            }
        }
        out.push(rest);
        out.extend(markers.into_iter().rev());
    }
    out
}

/// One step of the path [`visit`] is at: rendered into a [`FieldPath`] only for an error.
#[derive(Debug, Clone, Copy)]
enum Step<'v> {
    Field(&'v str),
    Index(usize),
    Key(&'v str),
}

fn render(steps: &[Step<'_>]) -> FieldPath {
    steps
        .iter()
        .fold(FieldPath::default(), |at, step| match *step {
            Step::Field(name) => at.child(name),
            Step::Index(i) => at.index(i),
            Step::Key(key) => at.key(key),
        })
}

/// Calls `f` with every non-null value at `segments` under `value` and the steps to it.
fn visit<'v>(
    value: &'v Value,
    segments: &[&'v str],
    steps: &mut Vec<Step<'v>>,
    f: &mut dyn FnMut(&Value, &[Step<'v>]),
) {
    let Some((first, rest)) = segments.split_first() else {
        if !value.is_null() {
            f(value, steps);
        }
        return;
    };
    match *first {
        "[]" => {
            for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                steps.push(Step::Index(i));
                visit(item, rest, steps, f);
                steps.pop();
            }
        }
        "{}" => {
            for (key, item) in value.as_object().into_iter().flatten() {
                steps.push(Step::Key(key));
                visit(item, rest, steps, f);
                steps.pop();
            }
        }
        name => {
            if let Some(child) = value.get(name) {
                steps.push(Step::Field(name));
                visit(child, rest, steps, f);
                steps.pop();
            }
        }
    }
}

/// Whether `value` meets `rule` (what [`apply_check`] accepts without an error).
fn satisfies(rule: &Rule, value: &Value) -> bool {
    match *rule {
        Rule::Required(keys) => value.as_object().is_some_and(|map| {
            keys.iter()
                .all(|k| map.get(*k).is_some_and(|v| !v.is_null()))
        }),
        Rule::Enum(allowed) => value.as_str().is_some_and(|s| allowed.contains(&s)),
        Rule::MinItems(min) => value.as_array().is_some_and(|a| a.len() as u64 >= min),
        Rule::Minimum(min) => value.as_i64().is_some_and(|n| n >= min),
        Rule::Maximum(max) => value.as_i64().is_some_and(|n| n <= max),
        Rule::MinLength(min) => value
            .as_str()
            .is_some_and(|s| s.chars().count() as u64 >= min),
        Rule::MaxLength(max) => value
            .as_str()
            .is_some_and(|s| s.chars().count() as u64 <= max),
        Rule::Quantity => match value {
            Value::String(s) => Quantity::parse(s).is_ok(),
            Value::Number(_) => true,
            _ => false,
        },
        Rule::DefaultStr(_) | Rule::DefaultInt(_) | Rule::DefaultBool(_) => true,
    }
}

/// [`apply_check`] on the value at `steps`, the path rendered only when the rule is broken.
fn check_at(rule: &Rule, value: &Value, steps: &[Step<'_>], errors: &mut Vec<FieldError>) {
    if !satisfies(rule, value) {
        apply_check(rule, value, &render(steps), errors);
    }
}

fn visit_mut(value: &mut Value, segments: &[&str], f: &mut dyn FnMut(&mut Value)) {
    let Some((first, rest)) = segments.split_first() else {
        f(value);
        return;
    };
    match *first {
        "[]" => {
            for item in value.as_array_mut().into_iter().flatten() {
                visit_mut(item, rest, f);
            }
        }
        "{}" => {
            for (_, item) in value.as_object_mut().into_iter().flatten() {
                visit_mut(item, rest, f);
            }
        }
        name => {
            if let Some(child) = value.get_mut(name) {
                visit_mut(child, rest, f);
            }
        }
    }
}

fn type_error(at: &FieldPath, value: &Value, want: &str) -> FieldError {
    let actual = json_type(value);
    FieldError::type_invalid(
        at.as_str(),
        actual,
        format!("{at} in body must be of type {want}: \"{actual}\""),
    )
}

fn json_type(value: &Value) -> &'static str {
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

fn apply_check(rule: &Rule, value: &Value, at: &FieldPath, errors: &mut Vec<FieldError>) {
    match *rule {
        Rule::Required(keys) => {
            let Some(map) = value.as_object() else {
                errors.push(type_error(at, value, "object"));
                return;
            };
            for key in keys {
                if map.get(*key).is_none_or(Value::is_null) {
                    errors.push(FieldError::required(at.child(key).as_str(), ""));
                }
            }
        }
        Rule::Enum(allowed) => match value.as_str() {
            Some(s) if allowed.contains(&s) => {}
            Some(s) => errors.push(FieldError::not_supported(at.as_str(), s, allowed)),
            None => errors.push(type_error(at, value, "string")),
        },
        Rule::MinItems(min) => match value.as_array() {
            Some(items) if items.len() as u64 >= min => {}
            Some(items) => errors.push(FieldError::invalid(
                at.as_str(),
                BadValue::Int(i64::try_from(items.len()).unwrap_or(i64::MAX)),
                format!("{at} in body should have at least {min} items"),
            )),
            None => errors.push(type_error(at, value, "array")),
        },
        Rule::Minimum(min) => match value.as_i64() {
            Some(n) if n >= min => {}
            Some(n) => errors.push(FieldError::invalid(
                at.as_str(),
                n,
                format!("{at} in body should be greater than or equal to {min}"),
            )),
            None => errors.push(type_error(at, value, "integer")),
        },
        Rule::Maximum(max) => match value.as_i64() {
            Some(n) if n <= max => {}
            Some(n) => errors.push(FieldError::invalid(
                at.as_str(),
                n,
                format!("{at} in body should be less than or equal to {max}"),
            )),
            None => errors.push(type_error(at, value, "integer")),
        },
        Rule::MinLength(min) => match value.as_str() {
            Some(s) if s.chars().count() as u64 >= min => {}
            Some(s) => errors.push(FieldError::invalid(
                at.as_str(),
                s,
                format!("{at} in body should be at least {min} chars long"),
            )),
            None => errors.push(type_error(at, value, "string")),
        },
        Rule::MaxLength(max) => match value.as_str() {
            Some(s) if s.chars().count() as u64 <= max => {}
            Some(_) => errors.push(FieldError::too_long(at.as_str(), usize::try_from(max).ok())),
            None => errors.push(type_error(at, value, "string")),
        },
        Rule::Quantity => match value {
            Value::String(s) if Quantity::parse(s).is_ok() => {}
            Value::Number(_) => {}
            Value::String(s) => errors.push(FieldError::invalid(
                at.as_str(),
                s.as_str(),
                format!("{at} in body should match '{QUANTITY_PATTERN}'"),
            )),
            other => errors.push(type_error(at, other, "string")),
        },
        Rule::DefaultStr(_) | Rule::DefaultInt(_) | Rule::DefaultBool(_) => {}
    }
}

/// A JSON object's string field, `""` when absent or not a string.
pub fn str_at<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rule_is_satisfied_exactly_when_checking_it_reports_nothing() {
        let rules = [
            Rule::Required(&["a", "b"]),
            Rule::Enum(&["x", "y"]),
            Rule::MinItems(2),
            Rule::Minimum(1),
            Rule::Maximum(3),
            Rule::MinLength(2),
            Rule::MaxLength(3),
            Rule::Quantity,
            Rule::DefaultStr("d"),
        ];
        let values = [
            json!({"a": 1, "b": 2}),
            json!({"a": 1, "b": null}),
            json!({"a": 1}),
            json!("x"),
            json!("z"),
            json!("héé"),
            json!("hééé"),
            json!("1Gi"),
            json!("1Gx"),
            json!([1]),
            json!([1, 2]),
            json!(0),
            json!(2),
            json!(4),
            json!(1.5),
            json!(true),
            json!(null),
        ];
        for rule in &rules {
            for value in &values {
                let mut errors = Vec::new();
                apply_check(rule, value, &FieldPath::new("spec"), &mut errors);
                assert_eq!(
                    satisfies(rule, value),
                    errors.is_empty(),
                    "{rule:?} {value}"
                );
            }
        }
    }

    #[test]
    fn error_paths_name_list_items_and_map_keys() {
        let table: &'static [Constraint] = &[("spec.a[].m{}.n", Rule::Minimum(1))];
        let object = json!({"spec": {"a": [{"m": {"k": {"n": 1}}}, {"m": {"k": {"n": 0}}}]}});
        let errors = check(table, &object);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "spec.a[1].m[k].n");
    }

    #[test]
    fn split_marks_lists_and_maps() {
        assert_eq!(split("spec.a[].b{}"), vec!["spec", "a", "[]", "b", "{}"]);
        assert_eq!(split("a[].b.c"), vec!["a", "[]", "b", "c"]);
        assert_eq!(split(""), Vec::<&str>::new());
    }

    #[test]
    fn an_update_checks_only_what_it_changed() {
        let table: &[Constraint] = &[
            ("", Rule::Required(&["spec"])),
            ("spec.a", Rule::Enum(&["x"])),
            ("spec.b[]", Rule::Required(&["name"])),
            ("status.c", Rule::Minimum(1)),
        ];
        let old = json!({"spec": {"a": "bad", "b": [{}]}, "status": {"c": 0}});
        // Unchanged invalid members are accepted (ratcheting); the whole object is not.
        assert_eq!(check_update(table, &old, &old), Vec::new());
        assert_eq!(check(table, &old).len(), 3);
        // A changed member is checked again, in full.
        let new = json!({"spec": {"a": "bad", "b": [{}, {"name": "n"}]}, "status": {"c": 0}});
        let paths: Vec<String> = check_update(table, &new, &old)
            .iter()
            .map(|e| e.field.to_string())
            .collect();
        assert_eq!(paths, vec!["spec.b[0].name"]);
        let new = json!({"status": {"c": 0}});
        assert_eq!(check_update(table, &new, &old).len(), 1);
    }

    #[test]
    fn defaults_only_fill_existing_parents() {
        let table: &[Constraint] = &[
            ("spec.x.y", Rule::DefaultInt(3)),
            ("spec.list[].z", Rule::DefaultStr("d")),
        ];
        let mut object = json!({"spec": {"list": [{}, {"z": "keep"}]}});
        default(table, &mut object);
        assert_eq!(
            object,
            json!({"spec": {"list": [{"z": "d"}, {"z": "keep"}]}})
        );
    }
}
