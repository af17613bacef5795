//! JSON ⇄ Lua values, as Karmada's luavm converts them: arguments go in as plain tables
//! (gopher-json's decoder), results come out through gopher-json's encoder followed by the
//! empty-table fix-up (`convertEmptySliceToEmptyStructPartly`).
//!
//! Both directions recurse, so both stop at [`MAX_DEPTH`]: a script can build tables nested
//! arbitrarily deep, and the encoder must not overflow the native stack on them.

use std::collections::HashSet;
use std::ffi::c_void;

use mlua::{Lua, Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

/// Deepest nesting converted either way: serde_json's own parsing limit, so nothing deeper
/// could have come from, or be read back by, the API server (and debug builds' frames are big).
pub(super) const MAX_DEPTH: usize = 128;

/// The Lua type name of a value, as Lua's `type()` spells it (mlua splits numbers in two).
pub(super) fn type_name(value: &LuaValue) -> &'static str {
    match value {
        LuaValue::Nil => "nil",
        LuaValue::Boolean(_) => "boolean",
        LuaValue::Integer(_) | LuaValue::Number(_) => "number",
        LuaValue::String(_) => "string",
        LuaValue::Table(_) => "table",
        LuaValue::Function(_) => "function",
        LuaValue::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// A JSON value as a Lua value: objects are tables with string keys (null members left out),
/// arrays are sequences from 1 (null elements skipped, as gopher-lua's `Append` does), numbers
/// are doubles.
pub(super) fn to_lua(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    to_lua_at(lua, value, 0)
}

fn to_lua_at(lua: &Lua, value: &Value, depth: usize) -> mlua::Result<LuaValue> {
    if depth > MAX_DEPTH {
        return Err(mlua::Error::runtime(format!(
            "value nested deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(match value {
        Value::Null => LuaValue::Nil,
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Number(n) => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            let mut index = 0;
            for item in items.iter().filter(|item| !item.is_null()) {
                index += 1;
                table.raw_set(index, to_lua_at(lua, item, depth + 1)?)?;
            }
            LuaValue::Table(table)
        }
        Value::Object(members) => {
            let table = lua.create_table_with_capacity(0, members.len())?;
            for (key, member) in members {
                if !member.is_null() {
                    table.raw_set(key.as_str(), to_lua_at(lua, member, depth + 1)?)?;
                }
            }
            LuaValue::Table(table)
        }
    })
}

/// A JSON array as a Lua sequence (an empty slice is an empty table).
pub(super) fn list_to_lua(lua: &Lua, items: &[Value]) -> mlua::Result<LuaValue> {
    let table = lua.create_table_with_capacity(items.len(), 0)?;
    let mut index = 0;
    for item in items.iter().filter(|item| !item.is_null()) {
        index += 1;
        table.raw_set(index, to_lua_at(lua, item, 1)?)?;
    }
    Ok(LuaValue::Table(table))
}

/// A Lua value as JSON, following gopher-json's encoder: an empty table is `[]`, a table with
/// keys 1..n an array, one with only string keys an object (members sorted, as Go's encoder
/// writes maps); integral numbers that fit an `i64` stay integers, as Kubernetes' unstructured
/// decoding reads them back. The error is the encoder's message.
pub(super) fn to_json(value: &LuaValue) -> Result<Value, String> {
    let mut ancestors = Vec::new();
    encode(value, &mut ancestors)
}

fn encode(value: &LuaValue, ancestors: &mut Vec<*const c_void>) -> Result<Value, String> {
    match value {
        LuaValue::Nil => Ok(Value::Null),
        LuaValue::Boolean(b) => Ok(Value::Bool(*b)),
        LuaValue::Integer(i) => Ok(Value::from(*i)),
        LuaValue::Number(n) => number(*n),
        LuaValue::String(s) => Ok(Value::String(s.to_string_lossy())),
        LuaValue::Table(table) => {
            let pointer = table.to_pointer();
            if ancestors.contains(&pointer) {
                return Err("cannot encode recursively nested tables to JSON".to_owned());
            }
            if ancestors.len() >= MAX_DEPTH {
                return Err(format!(
                    "cannot encode tables nested deeper than {MAX_DEPTH} levels"
                ));
            }
            ancestors.push(pointer);
            let encoded = encode_table(table, ancestors);
            ancestors.pop();
            encoded
        }
        other => Err(format!("cannot encode {} to JSON", type_name(other))),
    }
}

/// A Lua number as Go's encoder writes a float64 and unstructured decoding reads it back.
fn number(n: f64) -> Result<Value, String> {
    if !n.is_finite() {
        let shown = if n.is_nan() {
            "NaN"
        } else if n > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        return Err(format!("json: unsupported value: {shown}"));
    }
    // 2^63 is exactly representable; every integral double in [-2^63, 2^63) fits an i64.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&n) {
        return Ok(Value::from(n as i64));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| format!("json: unsupported value: {n}"))
}

enum Keys {
    Empty,
    Strings(Vec<(String, LuaValue)>),
    Numbers(Vec<(f64, LuaValue)>),
}

fn encode_table(table: &Table, ancestors: &mut Vec<*const c_void>) -> Result<Value, String> {
    const INVALID_KEYS: &str = "cannot encode mixed or invalid key types";
    let mut keys = Keys::Empty;
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|err| err.to_string())?;
        keys = match (keys, key) {
            (Keys::Empty, LuaValue::String(s)) => Keys::Strings(vec![(s.to_string_lossy(), value)]),
            (Keys::Strings(mut members), LuaValue::String(s)) => {
                members.push((s.to_string_lossy(), value));
                Keys::Strings(members)
            }
            (Keys::Empty, LuaValue::Integer(i)) => Keys::Numbers(vec![(i as f64, value)]),
            (Keys::Empty, LuaValue::Number(n)) => Keys::Numbers(vec![(n, value)]),
            (Keys::Numbers(mut items), LuaValue::Integer(i)) => {
                items.push((i as f64, value));
                Keys::Numbers(items)
            }
            (Keys::Numbers(mut items), LuaValue::Number(n)) => {
                items.push((n, value));
                Keys::Numbers(items)
            }
            _ => return Err(INVALID_KEYS.to_owned()),
        };
    }
    match keys {
        Keys::Empty => Ok(Value::Array(Vec::new())),
        Keys::Strings(mut members) => {
            members.sort_by(|a, b| a.0.cmp(&b.0));
            let mut object = Map::with_capacity(members.len());
            for (key, value) in members {
                let encoded = encode(&value, ancestors)?;
                object.insert(key, encoded);
            }
            Ok(Value::Object(object))
        }
        Keys::Numbers(mut items) => {
            // Lua's `next` order is unspecified, so sort before checking for 1..n.
            items.sort_by(|a, b| a.0.total_cmp(&b.0));
            let sequential = items
                .iter()
                .enumerate()
                .all(|(index, (key, _))| *key == (index + 1) as f64);
            if !sequential {
                return Err("cannot encode sparse array".to_owned());
            }
            items
                .iter()
                .map(|(_, value)| encode(value, ancestors))
                .collect::<Result<_, _>>()
                .map(Value::Array)
        }
    }
}

/// What the converted result is decoded into, which decides what a bare `[]` becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// A Go struct or unstructured object: a bare `[]` is `{}`.
    Object,
    /// A Go slice: a bare `[]` stays `[]`.
    List,
}

/// Karmada's repair of empty tables, which encode as `[]` whatever they were. With `references`
/// (the objects the result was made from), an empty array at a field path that held `{}` in a
/// reference becomes `{}`, one that held `[]` stays, and one found in neither is removed. Paths
/// are field names only: array elements add no segment (`spec.containers.ports`).
pub(super) fn fix_empty_tables(result: Value, target: Target, references: &[&Value]) -> Value {
    if result.as_array().is_some_and(Vec::is_empty) {
        return match target {
            Target::Object => Value::Object(Map::new()),
            Target::List => result,
        };
    }
    let mut empty = EmptyFields::default();
    for reference in references {
        empty.collect(reference, &mut Vec::new());
    }
    let mut result = result;
    empty.repair(&mut result, &mut Vec::new());
    result
}

/// Field paths holding empty arrays and empty objects in the reference objects.
#[derive(Default)]
struct EmptyFields {
    arrays: HashSet<Vec<String>>,
    objects: HashSet<Vec<String>>,
}

impl EmptyFields {
    fn collect(&mut self, value: &Value, path: &mut Vec<String>) {
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    path.push(key.clone());
                    self.collect_member(member, path);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.collect_member(item, path);
                }
            }
            _ => {}
        }
    }

    fn collect_member(&mut self, member: &Value, path: &mut Vec<String>) {
        match member {
            Value::Array(items) if items.is_empty() => {
                self.arrays.insert(path.clone());
            }
            Value::Object(members) if members.is_empty() => {
                self.objects.insert(path.clone());
            }
            Value::Array(_) | Value::Object(_) => self.collect(member, path),
            _ => {}
        }
    }

    /// What becomes of an empty array at `path`.
    fn decide(&self, path: &[String]) -> Repair {
        if self.objects.contains(path) {
            Repair::Object
        } else if self.arrays.contains(path) {
            Repair::Keep
        } else {
            Repair::Remove
        }
    }

    fn repair(&self, value: &mut Value, path: &mut Vec<String>) {
        match value {
            Value::Object(members) => {
                members.retain(|key, member| {
                    path.push(key.clone());
                    let keep = self.repair_member(member, path);
                    path.pop();
                    keep
                });
            }
            Value::Array(items) => items.retain_mut(|item| self.repair_member(item, path)),
            _ => {}
        }
    }

    /// Repairs one member in place; false when it is to be removed.
    fn repair_member(&self, member: &mut Value, path: &mut Vec<String>) -> bool {
        match member {
            Value::Array(items) if items.is_empty() => match self.decide(path) {
                Repair::Object => {
                    *member = Value::Object(Map::new());
                    true
                }
                Repair::Keep => true,
                Repair::Remove => false,
            },
            Value::Array(_) | Value::Object(_) => {
                self.repair(member, path);
                true
            }
            _ => true,
        }
    }
}

enum Repair {
    Object,
    Keep,
    Remove,
}
