//! Typed operations on objects (`typed.TypedValue`): the field set of an object, merging an
//! applied configuration into a live object, comparing two objects, and removing the items of a
//! set — each walking the object with the schema [`Cursor`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{PathElement, Set, display_path};
use super::schema::{Cursor, ListType};

/// An object that does not fit its schema for apply: a list-map item without its key, or two
/// items with one key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TypeError {
    pub path: String,
    pub message: String,
}

/// The path element of a list item, or why it has none.
fn item_element(
    cursor: &Cursor<'_>,
    list_type: &ListType,
    item: &Value,
    index: usize,
) -> Result<PathElement, String> {
    let keyed = |names: Vec<(String, Option<Value>)>| -> Result<PathElement, String> {
        let Value::Object(map) = item else {
            return Err(format!(
                "element {index}: associative list with keys may not have non-map elements"
            ));
        };
        let mut fields = Vec::new();
        for (name, default) in names {
            match map.get(&name).filter(|v| !v.is_null()).cloned().or(default) {
                Some(value) => fields.push((name, value)),
                None => {
                    return Err(format!(
                        "element {index}: associative list with keys has an element that omits key field \"{name}\" (and doesn't have default value)"
                    ));
                }
            }
        }
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(PathElement::Key(fields))
    };
    match list_type {
        ListType::Atomic => Ok(PathElement::Index(index as u64)),
        ListType::Set => Ok(PathElement::Value(item.clone())),
        ListType::Map(keys) => keyed(
            keys.iter()
                .map(|k| (k.name.to_owned(), k.default.map(Value::from)))
                .collect(),
        ),
        ListType::CrdMap(keys) => keyed(
            keys.iter()
                .map(|k| (k.clone(), cursor.crd_key_default(k)))
                .collect(),
        ),
    }
}

/// Items of a granular list with their path elements. `strict` refuses duplicates (an applied
/// configuration); otherwise the first item of a key wins (a live object).
fn index_items<'v>(
    cursor: &Cursor<'_>,
    list_type: &ListType,
    items: &'v [Value],
    path: &str,
    strict: bool,
) -> Result<Vec<(PathElement, &'v Value)>, TypeError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let pe = item_element(cursor, list_type, item, index).map_err(|message| TypeError {
            path: path.to_owned(),
            message,
        })?;
        if !seen.insert(pe.clone()) {
            if strict {
                return Err(TypeError {
                    path: path.to_owned(),
                    message: format!("duplicate entries for key {}", pe.display()),
                });
            }
            continue;
        }
        out.push((pe, item));
    }
    Ok(out)
}

fn child_path(path: &str, pe: &PathElement) -> String {
    format!("{path}{}", pe.display())
}

/// The fields an object sets (`ToFieldSet`): scalars, atomic lists and objects, list items,
/// empty objects and nulls, and map keys are members; declared fields holding objects or
/// lists are only parents.
pub fn to_set(value: &Value, cursor: &Cursor<'_>) -> Result<Set, TypeError> {
    let mut set = Set::default();
    fill(value, cursor, &mut set, "")?;
    Ok(set)
}

fn fill(value: &Value, cursor: &Cursor<'_>, node: &mut Set, path: &str) -> Result<(), TypeError> {
    match value {
        Value::Object(map) => {
            if cursor.atomic_map() {
                node.member = true;
                return Ok(());
            }
            for (key, child) in map {
                let pe = PathElement::Field(key.clone());
                let child_node = node.child(pe.clone());
                fill(
                    child,
                    &cursor.field(key),
                    child_node,
                    &child_path(path, &pe),
                )?;
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || cursor.is_map_key(key) {
                    child_node.member = true;
                }
            }
        }
        Value::Array(items) => {
            let list_type = cursor.list_type();
            if list_type == ListType::Atomic {
                node.member = true;
                return Ok(());
            }
            for (pe, item) in index_items(cursor, &list_type, items, path, true)? {
                let child_node = node.child(pe.clone());
                fill(item, &cursor.items(), child_node, &child_path(path, &pe))?;
                child_node.member = true;
            }
        }
        _ => node.member = true,
    }
    Ok(())
}

/// The applied configuration `config` merged into `live` (`TypedValue.Merge`): objects merge
/// field by field, granular lists item by item in structured-merge-diff's order, anything else
/// is replaced by the configuration.
pub fn merge(live: &Value, config: &Value, cursor: &Cursor<'_>) -> Result<Value, TypeError> {
    merge_at(live, config, cursor, "")
}

fn merge_at(
    live: &Value,
    config: &Value,
    cursor: &Cursor<'_>,
    path: &str,
) -> Result<Value, TypeError> {
    match (live, config) {
        (Value::Object(l), Value::Object(r)) if !cursor.atomic_map() => {
            let mut out = l.clone();
            for (key, rv) in r {
                if rv.is_null() {
                    // A null in the configuration clears the field (Go's zero value).
                    out.shift_remove(key);
                    continue;
                }
                let pe = PathElement::Field(key.clone());
                let merged = match l.get(key) {
                    Some(lv) => merge_at(lv, rv, &cursor.field(key), &child_path(path, &pe))?,
                    None => rv.clone(),
                };
                out.insert(key.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Value::Array(l), Value::Array(r)) => {
            let list_type = cursor.list_type();
            if list_type == ListType::Atomic {
                return Ok(config.clone());
            }
            merge_lists(l, r, cursor, &list_type, path)
        }
        _ => Ok(config.clone()),
    }
}

/// Items of both lists: shared items merged, in the order structured-merge-diff's
/// `visitListItems` produces (live order, with configuration-only items placed where the
/// configuration puts them relative to the shared ones).
fn merge_lists(
    live: &[Value],
    config: &[Value],
    cursor: &Cursor<'_>,
    list_type: &ListType,
    path: &str,
) -> Result<Value, TypeError> {
    let rhs = index_items(cursor, list_type, config, path, true)?;
    let lhs = index_items(cursor, list_type, live, path, false)?;
    let observed_lhs: BTreeMap<&PathElement, &Value> = lhs.iter().map(|(p, v)| (p, *v)).collect();
    let observed_rhs: BTreeMap<&PathElement, &Value> = rhs.iter().map(|(p, v)| (p, *v)).collect();
    let mut shared: std::collections::VecDeque<&PathElement> = rhs
        .iter()
        .map(|(p, _)| p)
        .filter(|p| observed_lhs.contains_key(p))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let items = cursor.items();
    let merge_item = |pe: &PathElement| -> Result<Value, TypeError> {
        let r = observed_rhs[pe];
        match observed_lhs.get(pe) {
            Some(l) => merge_at(l, r, &items, &child_path(path, pe)),
            None => Ok(r.clone()),
        }
    };
    let mut out = Vec::with_capacity(live.len().max(config.len()));
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let pe = &lhs[li].0;
            if *pe == rhs[ri].0 {
                merged_rhs.insert(pe);
                out.push(merge_item(pe)?);
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let pe = &lhs[li].0;
            if !observed_rhs.contains_key(pe) {
                out.push(lhs[li].1.clone());
                li += 1;
                continue;
            }
            if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let pe = &rhs[ri].0;
            merged_rhs.insert(pe);
            out.push(merge_item(pe)?);
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok(Value::Array(out))
}

/// What changed from `old` to `new` (`TypedValue.Compare`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Compares two objects: leaves (scalars, atomic lists and objects) that differ are modified;
/// every node present on one side only is added or removed, with everything under it.
pub fn compare(old: &Value, new: &Value, cursor: &Cursor<'_>) -> Result<Comparison, TypeError> {
    let mut out = Comparison::default();
    let mut path = Vec::new();
    compare_at(Some(old), Some(new), cursor, &mut path, &mut out)?;
    Ok(out)
}

/// [`compare`] of two objects whose other top-level members are equal (a status write carries
/// everything but `status` over from the stored object): only `member` is walked.
pub fn compare_member(
    old: &Value,
    new: &Value,
    cursor: &Cursor<'_>,
    member: &str,
) -> Result<Comparison, TypeError> {
    let mut out = Comparison::default();
    let mut path = vec![PathElement::Field(member.to_owned())];
    let (before, after) = (old.get(member), new.get(member));
    compare_at(before, after, &cursor.field(member), &mut path, &mut out)?;
    match (before.is_some(), after.is_some()) {
        (false, true) => out.added.insert(&path),
        (true, false) => out.removed.insert(&path),
        _ => {}
    }
    Ok(out)
}

/// The walk of [`compare`]. Messages name the path as `display_path(path)`, built only when
/// there is an error (the walk visits every node of both objects on every update).
fn compare_at(
    old: Option<&Value>,
    new: Option<&Value>,
    cursor: &Cursor<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), TypeError> {
    // An object or list left as it was adds nothing: skip its walk (most of an object on an
    // update) unless it holds something the walk would refuse, which the walk then reports.
    if let (Some(a), Some(b)) = (old, new)
        && (a.is_object() || a.is_array())
        && a == b
        && fits(a, cursor)
    {
        return Ok(());
    }
    let leaf = |out: &mut Comparison, path: &[PathElement]| match (old, new) {
        (None, Some(_)) => out.added.insert(path),
        (Some(_), None) => out.removed.insert(path),
        (Some(a), Some(b)) if a != b => out.modified.insert(path),
        _ => {}
    };
    // A null is a wildcard, as structured-merge-diff treats it: an empty object or list of
    // whatever the other side holds, present (so not added or removed itself).
    let (empty_object, empty_list) = (Value::Object(Map::new()), Value::Array(Vec::new()));
    let widen = |this: Option<&'_ Value>, other: Option<&Value>| match (this, other) {
        (Some(Value::Null), Some(Value::Object(_))) => Some(&empty_object),
        (Some(Value::Null), Some(Value::Array(_))) => Some(&empty_list),
        _ => None,
    };
    let (old, new) = match (widen(old, new), widen(new, old)) {
        (Some(o), _) => (Some(o), new),
        (_, Some(n)) => (old, Some(n)),
        _ => (old, new),
    };
    let is_object = |v: Option<&Value>| v.map(Value::is_object);
    let is_array = |v: Option<&Value>| v.map(Value::is_array);
    match (is_object(old), is_object(new)) {
        (Some(true) | None, Some(true)) | (Some(true), None) if !cursor.atomic_map() => {
            let empty = Map::new();
            let l = old.and_then(Value::as_object).unwrap_or(&empty);
            let r = new.and_then(Value::as_object).unwrap_or(&empty);
            let keys: BTreeSet<&String> = l.keys().chain(r.keys()).collect();
            for key in keys {
                path.push(PathElement::Field(key.clone()));
                compare_at(l.get(key), r.get(key), &cursor.field(key), path, out)?;
                match (l.contains_key(key), r.contains_key(key)) {
                    (false, true) => out.added.insert(path),
                    (true, false) => out.removed.insert(path),
                    _ => {}
                }
                path.pop();
            }
            return Ok(());
        }
        _ => {}
    }
    match (is_array(old), is_array(new)) {
        (Some(true) | None, Some(true)) | (Some(true), None) => {
            let list_type = cursor.list_type();
            if list_type == ListType::Atomic {
                leaf(out, path);
                return Ok(());
            }
            let empty = Vec::new();
            let l = old.and_then(Value::as_array).unwrap_or(&empty);
            let r = new.and_then(Value::as_array).unwrap_or(&empty);
            let index = |items| {
                index_items(cursor, &list_type, items, "", false).map_err(|mut error| {
                    error.path = display_path(path);
                    error
                })
            };
            let lhs: BTreeMap<PathElement, &Value> = index(l)?.into_iter().collect();
            let rhs: BTreeMap<PathElement, &Value> = index(r)?.into_iter().collect();
            let keys: BTreeSet<&PathElement> = lhs.keys().chain(rhs.keys()).collect();
            let items = cursor.items();
            for pe in keys {
                path.push(pe.clone());
                compare_at(
                    lhs.get(pe).copied(),
                    rhs.get(pe).copied(),
                    &items,
                    path,
                    out,
                )?;
                match (lhs.contains_key(pe), rhs.contains_key(pe)) {
                    (false, true) => out.added.insert(path),
                    (true, false) => out.removed.insert(path),
                    _ => {}
                }
                path.pop();
            }
            Ok(())
        }
        _ => {
            leaf(out, path);
            Ok(())
        }
    }
}

/// Whether [`compare_at`] walks `value` against itself without an error: every item of every
/// list-map it would index is an object with its keys. It may answer `false` where the walk
/// would not fail (it looks at duplicate items the walk skips), never the reverse.
fn fits(value: &Value, cursor: &Cursor<'_>) -> bool {
    match value {
        Value::Object(map) if !cursor.atomic_map() => map
            .iter()
            .all(|(key, child)| fits(child, &cursor.field(key))),
        Value::Array(items) => {
            let list_type = cursor.list_type();
            // The key fields an item must hold (`None`: a set, whose items need none); those
            // with a default may be missing.
            let required: Option<Vec<&str>> = match &list_type {
                ListType::Atomic => return true,
                ListType::Set => None,
                ListType::Map(keys) => Some(
                    keys.iter()
                        .filter(|k| k.default.is_none())
                        .map(|k| k.name)
                        .collect(),
                ),
                ListType::CrdMap(keys) => Some(
                    keys.iter()
                        .filter(|k| cursor.crd_key_default(k).is_none())
                        .map(String::as_str)
                        .collect(),
                ),
            };
            let items_cursor = cursor.items();
            items.iter().all(|item| {
                let has_keys = match &required {
                    None => true,
                    Some(required) => item.as_object().is_some_and(|map| {
                        required
                            .iter()
                            .all(|name| map.get(*name).is_some_and(|v| !v.is_null()))
                    }),
                };
                has_keys && fits(item, &items_cursor)
            })
        }
        _ => true,
    }
}

/// `value` without the members of `set` (`TypedValue.RemoveItems`): a member field or item goes
/// with everything under it; atomic lists and objects are left whole.
pub fn remove_items(value: &Value, set: &Set, cursor: &Cursor<'_>) -> Value {
    match value {
        Value::Object(map) if !map.is_empty() && !cursor.atomic_map() => {
            let mut out = Map::new();
            for (key, child) in map {
                let pe = PathElement::Field(key.clone());
                match set.children.get(&pe) {
                    Some(sub) if sub.member => {}
                    Some(sub) => {
                        out.insert(key.clone(), remove_items(child, sub, &cursor.field(key)));
                    }
                    None => {
                        out.insert(key.clone(), child.clone());
                    }
                }
            }
            if out.is_empty() {
                value.clone()
            } else {
                Value::Object(out)
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let list_type = cursor.list_type();
            if list_type == ListType::Atomic {
                return value.clone();
            }
            let item_cursor = cursor.items();
            let mut out = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let Ok(pe) = item_element(cursor, &list_type, item, index) else {
                    out.push(item.clone());
                    continue;
                };
                match set.children.get(&pe) {
                    Some(sub) if sub.member => {}
                    Some(sub) => out.push(remove_items(item, sub, &item_cursor)),
                    None => out.push(item.clone()),
                }
            }
            if out.is_empty() {
                value.clone()
            } else {
                Value::Array(out)
            }
        }
        _ => value.clone(),
    }
}

/// The path of a member for messages: `.spec.containers[name="c"].image`.
pub fn describe(path: &[PathElement]) -> String {
    display_path(path)
}

/// The `fieldsV1` an update that creates `new` records, compared with the kind's `zero`
/// object, built in one walk: the same as encoding `compare(zero, new).added ∪ modified` with
/// `update::strip` applied, without the intermediate sets (creates are the hot path).
pub fn created_fields_v1(
    zero: &Value,
    new: &Value,
    cursor: &Cursor<'_>,
) -> Result<Map<String, Value>, TypeError> {
    let mut out = Map::new();
    if let (Value::Object(new), Value::Object(zero)) = (new, zero) {
        object_fields(new, Some(zero), cursor, Depth::Root, &mut out, &Trail::Root)?;
    }
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    Root,
    Metadata,
    Other,
}

/// Where the walk of [`created_fields_v1`] is, rendered only for an error message (the walk
/// visits every field of every create; building each path as a string cost an allocation per
/// field).
enum Trail<'a> {
    Root,
    Field(&'a Trail<'a>, &'a str),
    Item(&'a Trail<'a>, &'a PathElement),
}

impl Trail<'_> {
    /// The path as [`child_path`] builds it: `.spec.containers[name="c"]`.
    fn render(&self) -> String {
        match self {
            Trail::Root => String::new(),
            Trail::Field(parent, name) => format!("{}.{name}", parent.render()),
            Trail::Item(parent, pe) => format!("{}{}", parent.render(), pe.display()),
        }
    }
}

fn object_fields(
    new: &Map<String, Value>,
    zero: Option<&Map<String, Value>>,
    cursor: &Cursor<'_>,
    depth: Depth,
    out: &mut Map<String, Value>,
    path: &Trail<'_>,
) -> Result<(), TypeError> {
    let mut keys: Vec<&String> = new.keys().collect();
    keys.sort_unstable();
    for key in keys {
        let skip = match depth {
            Depth::Root => matches!(key.as_str(), "apiVersion" | "kind" | "status"),
            Depth::Metadata => super::update::UNMANAGED_METADATA.contains(&key.as_str()),
            Depth::Other => false,
        };
        if skip {
            continue;
        }
        let child_depth = if depth == Depth::Root && key == "metadata" {
            Depth::Metadata
        } else {
            Depth::Other
        };
        let node = node_fields(
            &new[key],
            zero.map(|z| z.get(key)),
            &cursor.field(key),
            child_depth,
            &Trail::Field(path, key),
        )?;
        if let Some(node) = node {
            // `PathElement::Field(key).encode()`, without the element.
            let mut encoded = String::with_capacity(key.len() + 2);
            encoded.push_str("f:");
            encoded.push_str(key);
            out.insert(encoded, Value::Object(node));
        }
    }
    Ok(())
}

/// The encoded node of `new` (`zero` is `None` when the parent itself is new, `Some(None)` when
/// the field is absent from the zero object), or `None` when nothing under it changed.
fn node_fields(
    new: &Value,
    zero: Option<Option<&Value>>,
    cursor: &Cursor<'_>,
    depth: Depth,
    path: &Trail<'_>,
) -> Result<Option<Map<String, Value>>, TypeError> {
    let zero = zero.flatten();
    let added = zero.is_none();
    let with_dot = |children: Map<String, Value>| {
        if added && !children.is_empty() {
            let mut node = Map::with_capacity(children.len() + 1);
            node.insert(".".into(), Value::Object(Map::new()));
            node.extend(children);
            node
        } else {
            children
        }
    };
    match new {
        Value::Object(map) if !cursor.atomic_map() => {
            let zero_map = match zero {
                Some(Value::Object(z)) => Some(z),
                _ => None,
            };
            let mut children = Map::new();
            object_fields(map, zero_map, cursor, depth, &mut children, path)?;
            if children.is_empty() && !added {
                return Ok(None);
            }
            Ok(Some(with_dot(children)))
        }
        Value::Array(items) => {
            let list_type = cursor.list_type();
            if list_type == ListType::Atomic {
                return Ok((zero != Some(new)).then(Map::new));
            }
            let mut indexed = index_items(cursor, &list_type, items, &path.render(), false)?;
            indexed.sort_by(|a, b| a.0.cmp(&b.0));
            let item_cursor = cursor.items();
            let mut children = Map::with_capacity(indexed.len());
            for (pe, item) in indexed {
                let node = match item {
                    Value::Object(map) if !item_cursor.atomic_map() => {
                        let mut fields = Map::new();
                        object_fields(
                            map,
                            None,
                            &item_cursor,
                            Depth::Other,
                            &mut fields,
                            &Trail::Item(path, &pe),
                        )?;
                        let mut node = Map::with_capacity(fields.len() + 1);
                        if !fields.is_empty() {
                            node.insert(".".into(), Value::Object(Map::new()));
                        }
                        node.extend(fields);
                        node
                    }
                    _ => Map::new(),
                };
                children.insert(pe.encode(), Value::Object(node));
            }
            if children.is_empty() && !added {
                return Ok(None);
            }
            Ok(Some(with_dot(children)))
        }
        _ => Ok((zero != Some(new)).then(Map::new)),
    }
}
