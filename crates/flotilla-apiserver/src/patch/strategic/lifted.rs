//! The strategic merge patch algorithm, in kube-apiserver's apply mode.
//!
//! Provenance: follows k8s.io/apimachinery `pkg/util/strategicpatch/patch.go`
//! (apimachinery@eed236ce): `mergeMap`, `applyRetainKeysDirective`, `mergePatchIntoOriginal`,
//! `validatePatchWithSetOrderList`, `mergeSliceHandler`, `mergeSlice`,
//! `mergeSliceWithSpecialElements`, `mergeSliceWithoutSpecialElements`, `deleteFromSlice`,
//! `normalizeElementOrder`, `mergeSortedSlice`, `removeDirectives`, with the options
//! `StrategicMergeMapPatch` uses (`MergeParallelList` and `IgnoreUnmatchedNulls` on). Written
//! anew in Rust; not a translation of the Go code.
//!
//! Deliberate differences, all where upstream panics, errors for no reason, or stores debris:
//! * `$patch: merge` is accepted as "merge as usual" (upstream: unknown patch type error).
//! * Values copied from the patch (new keys, replaced lists, appended list items) are cleaned of
//!   directive keys and `null` map values; upstream leaves them for the Go decoder to drop, but
//!   Flotilla stores JSON as is.
//! * A new field whose value is `{"$patch": "replace", ...}` keeps its other keys (upstream
//!   drops the field).
//! * `$deleteFromPrimitiveList/x` against a scalar `x` leaves it alone (upstream overwrites it).
//! * Numbers compare by value when matching merge keys (`80` equals `80.0`, as in Go's float64).

use serde_json::{Map, Value};

use super::table::Cursor;
use crate::patch::PatchError;
use crate::patch::error::kind_name;

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

type Object = Map<String, Value>;

/// Merges `patch` into `original`, the object at `cursor`.
pub(crate) fn merge_map(
    mut original: Object,
    mut patch: Object,
    cursor: &Cursor<'_>,
) -> Result<Object, PatchError> {
    if let Some(directive) = patch.shift_remove(PATCH) {
        match directive.as_str() {
            Some("replace") => return Ok(materialize_object(patch)),
            Some("delete") => return Ok(Object::new()),
            Some("merge") => {}
            _ => return Err(unknown_patch_type(&directive)),
        }
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_ordered_lists(&mut original, &mut patch, cursor)?;
    for (key, value) in patch {
        let (field, delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            Some(field) => (field.to_string(), true),
            None => (key, false),
        };
        if value.is_null() {
            original.shift_remove(&field);
            continue;
        }
        let Some(slot) = original.get_mut(&field) else {
            if !delete_list && let Some(value) = materialize(value) {
                original.insert(field, value);
            }
            continue;
        };
        let current = std::mem::take(slot);
        let merged = merge_value(current, value, &cursor.field(&field), delete_list)
            .map_err(|e| e.within(&field))?;
        match merged {
            Some(merged) => *slot = merged,
            None => {
                original.shift_remove(&field);
            }
        }
    }
    Ok(original)
}

/// Merges the patch value of one field into its current value; `None` removes the field.
fn merge_value(
    current: Value,
    patch: Value,
    cursor: &Cursor<'_>,
    delete_list: bool,
) -> Result<Option<Value>, PatchError> {
    match (current, patch) {
        (Value::Object(current), Value::Object(patch)) => {
            if cursor.meta().replace {
                Ok(materialize(Value::Object(patch)))
            } else {
                merge_map(current, patch, cursor).map(|m| Some(Value::Object(m)))
            }
        }
        (Value::Array(current), Value::Array(patch)) => {
            merge_list(current, patch, cursor, delete_list).map(|l| Some(Value::Array(l)))
        }
        (current, _) if delete_list => Ok(Some(current)),
        (_, patch) => Ok(materialize(patch)),
    }
}

/// `$retainKeys: [..]` clears every key of `original` not listed, after checking that the
/// patch sets no field outside the list.
fn apply_retain_keys(original: &mut Object, patch: &mut Object) -> Result<(), PatchError> {
    let Some(retain) = patch.shift_remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(invalid_directive(
            RETAIN_KEYS,
            "must be a list of field names",
        ));
    };
    let retained = |key: &str| retain.iter().any(|r| r.as_str() == Some(key));
    for (key, value) in patch.iter() {
        let directive =
            key.starts_with(DELETE_FROM_PRIMITIVE_LIST) || key.starts_with(SET_ELEMENT_ORDER);
        if !value.is_null() && !directive && !retained(key) {
            return Err(invalid_directive(
                RETAIN_KEYS,
                &format!("the patch sets {key:?}, which is not in the list"),
            ));
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// Handles each `$setElementOrder/<list>` with its list: merges the list, then orders the items
/// named in the directive as it says, server-only items staying near their old neighbours.
fn merge_ordered_lists(
    original: &mut Object,
    patch: &mut Object,
    cursor: &Cursor<'_>,
) -> Result<(), PatchError> {
    let directives: Vec<String> = patch
        .keys()
        .filter(|key| key.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for directive in directives {
        let field = directive[SET_ELEMENT_ORDER.len()..].to_string();
        merge_ordered_list(original, patch, &directive, &field, &cursor.field(&field))
            .map_err(|e| e.within(&field))?;
    }
    Ok(())
}

fn merge_ordered_list(
    original: &mut Object,
    patch: &mut Object,
    directive: &str,
    field: &str,
    cursor: &Cursor<'_>,
) -> Result<(), PatchError> {
    let Some(Value::Array(order)) = patch.shift_remove(directive) else {
        return Err(invalid_directive(directive, "must be a list"));
    };
    let original_list = match original.get(field) {
        None => None,
        Some(Value::Array(items)) => Some(items.clone()),
        Some(other) => return Err(type_mismatch("list", other)),
    };
    let patch_list = match patch.shift_remove(field) {
        None => None,
        Some(Value::Array(items)) => Some(items),
        Some(other) => return Err(type_mismatch("list", &other)),
    };
    let key = cursor.meta().merge_key;
    validate_order(
        patch_list.as_deref().unwrap_or_default(),
        &order,
        key,
        directive,
    )?;
    let server_order = lenient_ids(original_list.as_deref().unwrap_or_default(), key);
    let merged = match (original_list, patch_list) {
        (Some(original), None) => original,
        (None, Some(patch)) => materialize_list(patch),
        (Some(original), Some(patch)) => merge_list(original, patch, cursor, false)?,
        (None, None) => return Ok(()),
    };
    let order = ids(&order, key)?;
    let (ordered, server_only) = partition(merged, &order, key)?;
    let items = normalize_element_order(ordered, server_only, &order, &server_order, key)?;
    original.insert(field.to_string(), Value::Array(items));
    Ok(())
}

/// The items of the patch list (deletions and directive markers aside) must appear in the
/// `$setElementOrder` list, in the same relative order.
fn validate_order(
    patch: &[Value],
    order: &[Value],
    key: Option<&str>,
    directive: &str,
) -> Result<(), PatchError> {
    if patch.is_empty() || order.is_empty() {
        return Ok(());
    }
    let mut items = Vec::with_capacity(patch.len());
    for item in patch {
        if key.is_some() && !item.is_object() {
            return Err(type_mismatch("object", item));
        }
        if directive_of(item) != Some("delete") {
            items.push(item);
        }
    }
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if directive_of(items[p]).is_some() {
            p += 1;
            continue;
        }
        if same_identity(items[p], &order[o], key)? {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() {
        return Err(PatchError::SetElementOrderMismatch {
            path: String::new(),
            directive: directive.to_string(),
        });
    }
    Ok(())
}

/// Merges one list: by merge key, as a set of scalars, or (no merge strategy) by replacement.
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    cursor: &Cursor<'_>,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    let meta = cursor.meta();
    if !meta.merge && !delete_list {
        return Ok(materialize_list(patch));
    }
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let objects = elements_are_objects(&original, &patch)?;
    let (merged, server_order, patch_order, key) = if objects {
        let Some(key) = meta.merge_key else {
            return Err(PatchError::NoMergeKey {
                path: String::new(),
            });
        };
        let (original, patch) = apply_list_directives(original, patch, key)?;
        let server_order = lenient_ids(&original, Some(key));
        let patch_order = ids(&patch, Some(key))?;
        let merged = merge_by_key(original, patch, key, &cursor.items())?;
        (merged, server_order, patch_order, Some(key))
    } else if delete_list {
        return Ok(original
            .into_iter()
            .filter(|item| !patch.iter().any(|gone| same_value(item, gone)))
            .collect());
    } else {
        let server_order = original.clone();
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for item in original.into_iter().chain(patch.iter().cloned()) {
            if !merged.iter().any(|seen| same_value(seen, &item)) {
                merged.push(item);
            }
        }
        (merged, server_order, patch, None)
    };
    let (in_patch, server_only) = partition(merged, &patch_order, key)?;
    normalize_element_order(in_patch, server_only, &patch_order, &server_order, key)
}

/// Whether the items of both lists are objects (`true`) or scalars (`false`); lists of lists and
/// mixed lists are errors.
fn elements_are_objects(original: &[Value], patch: &[Value]) -> Result<bool, PatchError> {
    let mut first: Option<&Value> = None;
    for item in original.iter().chain(patch) {
        if item.is_array() {
            return Err(type_mismatch("objects or scalars in the list", item));
        }
        match first {
            None => first = Some(item),
            Some(first) if kind_name(first) != kind_name(item) => {
                return Err(PatchError::TypeMismatch {
                    path: String::new(),
                    expected: kind_name(first),
                    found: kind_name(item),
                });
            }
            Some(_) => {}
        }
    }
    Ok(first.is_some_and(Value::is_object))
}

/// Applies `$patch` list items: `delete` removes the items with that key, `replace` makes the
/// rest of the patch the whole list. Returns the new original and the plain patch items.
fn apply_list_directives(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Value::Object(mut item) = item else {
            return Err(type_mismatch("object", &item));
        };
        let Some(directive) = item.get(PATCH) else {
            plain.push(Value::Object(item));
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(gone) = item.get(key) else {
                    return Err(missing_merge_key(key));
                };
                original.retain(|o| !key_matches(o, key, gone));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                item.shift_remove(PATCH);
                if !item.is_empty() {
                    plain.push(Value::Object(item));
                }
            }
            _ => return Err(unknown_patch_type(directive)),
        }
    }
    if replace {
        Ok((materialize_list(plain), Vec::new()))
    } else {
        Ok((original, plain))
    }
}

/// Merges each patch item into the original item with the same key, or appends it.
fn merge_by_key(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
    items: &Cursor<'_>,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(item) = item else {
            return Err(type_mismatch("object", &item));
        };
        let Some(id) = item.get(key) else {
            return Err(missing_merge_key(key));
        };
        match original.iter().position(|o| key_matches(o, key, id)) {
            Some(at) => {
                let segment = item_segment(key, id);
                let current = match std::mem::take(&mut original[at]) {
                    Value::Object(current) => current,
                    other => return Err(type_mismatch("object", &other)),
                };
                let merged = merge_map(current, item, items).map_err(|e| e.within(&segment))?;
                original[at] = Value::Object(merged);
            }
            None => original.extend(materialize(Value::Object(item))),
        }
    }
    Ok(original)
}

/// Splits `merged` into the items whose identity is in `order` and the others, keeping order.
fn partition(
    merged: Vec<Value>,
    order: &[Value],
    key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut listed = Vec::new();
    let mut others = Vec::new();
    for item in merged {
        let id = identity(&item, key)?;
        if order.iter().any(|o| same_value(o, id)) {
            listed.push(item);
        } else {
            others.push(item);
        }
    }
    Ok((listed, others))
}

/// Sorts the patch items by the patch (or `$setElementOrder`) order and the server-only items by
/// the live order, then interleaves them: a server-only item goes before a patch item only when
/// both were in the live list and it came first there.
fn normalize_element_order(
    mut listed: Vec<Value>,
    mut others: Vec<Value>,
    order: &[Value],
    server_order: &[Value],
    key: Option<&str>,
) -> Result<Vec<Value>, PatchError> {
    sort_by_order(&mut listed, order, key)?;
    sort_by_order(&mut others, server_order, key)?;
    let rank = |item: &Value| {
        identity(item, key)
            .ok()
            .and_then(|id| server_order.iter().position(|o| same_value(o, id)))
    };
    let mut out = Vec::with_capacity(listed.len() + others.len());
    let mut listed = listed.into_iter().peekable();
    let mut others = others.into_iter().peekable();
    loop {
        let take_other = match (others.peek(), listed.peek()) {
            (Some(other), Some(item)) => {
                matches!((rank(other), rank(item)), (Some(a), Some(b)) if a < b)
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_other {
            others.next()
        } else {
            listed.next()
        };
        out.extend(next);
    }
    Ok(out)
}

fn sort_by_order(
    items: &mut [Value],
    order: &[Value],
    key: Option<&str>,
) -> Result<(), PatchError> {
    let mut ranked = Vec::with_capacity(items.len());
    for item in items.iter() {
        let id = identity(item, key)?;
        ranked.push(
            order
                .iter()
                .position(|o| same_value(o, id))
                .unwrap_or(usize::MAX),
        );
    }
    let mut positions: Vec<usize> = (0..items.len()).collect();
    positions.sort_by_key(|&i| ranked[i]);
    let sorted: Vec<Value> = positions
        .iter()
        .map(|&i| std::mem::take(&mut items[i]))
        .collect();
    for (slot, item) in items.iter_mut().zip(sorted) {
        *slot = item;
    }
    Ok(())
}

/// What identifies a list item: its merge key value, or the item itself for scalar lists.
fn identity<'v>(item: &'v Value, key: Option<&str>) -> Result<&'v Value, PatchError> {
    match key {
        None => Ok(item),
        Some(key) => match item {
            Value::Object(map) => map.get(key).ok_or_else(|| missing_merge_key(key)),
            other => Err(type_mismatch("object", other)),
        },
    }
}

fn ids(items: &[Value], key: Option<&str>) -> Result<Vec<Value>, PatchError> {
    items
        .iter()
        .map(|item| identity(item, key).cloned())
        .collect()
}

/// Identities of live items, which are not validated: an item without the key ranks nowhere.
fn lenient_ids(items: &[Value], key: Option<&str>) -> Vec<Value> {
    items
        .iter()
        .map(|item| identity(item, key).cloned().unwrap_or(Value::Null))
        .collect()
}

fn same_identity(left: &Value, right: &Value, key: Option<&str>) -> Result<bool, PatchError> {
    Ok(same_value(identity(left, key)?, identity(right, key)?))
}

fn key_matches(item: &Value, key: &str, id: &Value) -> bool {
    item.get(key).is_some_and(|v| same_value(v, id))
}

/// Equality as Go's `==` on decoded JSON: all numbers are float64.
fn same_value(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(l), Value::Number(r)) => l == r || l.as_f64() == r.as_f64(),
        _ => left == right,
    }
}

fn directive_of(item: &Value) -> Option<&str> {
    item.get(PATCH).map(|d| d.as_str().unwrap_or(""))
}

/// A value copied from the patch into the object, cleaned of directives (see the module docs);
/// `None` when it is a deletion.
fn materialize(value: Value) -> Option<Value> {
    match value {
        Value::Object(mut map) => {
            if map.shift_remove(PATCH).is_some_and(|d| d == "delete") {
                return None;
            }
            Some(Value::Object(materialize_object(map)))
        }
        Value::Array(items) => Some(Value::Array(materialize_list(items))),
        scalar => Some(scalar),
    }
}

fn materialize_object(map: Object) -> Object {
    map.into_iter()
        .filter(|(key, value)| !value.is_null() && !is_directive_key(key))
        .filter_map(|(key, value)| materialize(value).map(|value| (key, value)))
        .collect()
}

/// List items carrying `$patch` are dropped, as upstream's `removeDirectives` does.
fn materialize_list(items: Vec<Value>) -> Vec<Value> {
    items
        .into_iter()
        .filter(|item| directive_of(item).is_none())
        .filter_map(materialize)
        .collect()
}

fn is_directive_key(key: &str) -> bool {
    key == PATCH
        || key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

fn item_segment(key: &str, id: &Value) -> String {
    match id.as_str() {
        Some(id) => format!("[{key}={id}]"),
        None => format!("[{key}={id}]"),
    }
}

fn invalid_directive(directive: &str, reason: &str) -> PatchError {
    PatchError::InvalidDirective {
        path: String::new(),
        directive: directive.to_string(),
        reason: reason.to_string(),
    }
}

fn unknown_patch_type(directive: &Value) -> PatchError {
    invalid_directive(
        PATCH,
        &format!("unknown patch type {directive}; expected replace, delete or merge"),
    )
}

fn type_mismatch(expected: &'static str, found: &Value) -> PatchError {
    PatchError::TypeMismatch {
        path: String::new(),
        expected,
        found: kind_name(found),
    }
}

fn missing_merge_key(key: &str) -> PatchError {
    PatchError::MissingMergeKey {
        path: String::new(),
        key: key.to_string(),
    }
}
