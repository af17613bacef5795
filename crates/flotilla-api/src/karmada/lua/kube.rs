//! The native half of the `kube` library scripts `require`: quantity arithmetic here, pod
//! requirements and dependencies through [`KubeLibrary`].
//!
//! Each function answers `(true, value)` or `(false, message)`; the Lua wrapper in the sandbox
//! raises the message at the script's line, as gopher-lua's `RaiseError` does, so no native
//! error crosses back through Lua.

use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, Value as LuaValue};

use super::KubeLibrary;
use super::convert::{self, Target};
use crate::lifted::quantity::{Quantity, QuantityFormat};

type Answer = mlua::Result<(bool, LuaValue)>;

/// The native functions, by the names scripts call them.
pub(super) fn functions(lua: &Lua, kube: Arc<dyn KubeLibrary>) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.raw_set(
        "resourceAdd",
        lua.create_function(|lua, args: MultiValue| answer(lua, resource_add(lua, &args)))?,
    )?;
    table.raw_set(
        "getResourceQuantity",
        lua.create_function(|lua, args: MultiValue| answer(lua, resource_quantity(&args)))?,
    )?;
    let requirements = Arc::clone(&kube);
    table.raw_set(
        "accuratePodRequirements",
        lua.create_function(move |lua, args: MultiValue| {
            answer(lua, pod_requirements(lua, requirements.as_ref(), &args))
        })?,
    )?;
    table.raw_set(
        "getPodDependencies",
        lua.create_function(move |lua, args: MultiValue| {
            answer(lua, pod_dependencies(lua, kube.as_ref(), &args))
        })?,
    )?;
    Ok(table)
}

fn answer(lua: &Lua, outcome: Result<LuaValue, String>) -> Answer {
    match outcome {
        Ok(value) => Ok((true, value)),
        Err(message) => Ok((false, LuaValue::String(lua.create_string(message)?))),
    }
}

/// gopher-lua's `TypeError` wording.
fn bad_argument(position: usize, function: &str, expected: &str, got: &LuaValue) -> String {
    format!(
        "bad argument #{position} to {function} ({expected} expected, got {})",
        convert::type_name(got)
    )
}

/// A quantity argument: nil is zero, a string is parsed, anything else is a type error.
fn quantity_argument(args: &MultiValue, index: usize, function: &str) -> Result<Quantity, String> {
    match args.get(index) {
        None | Some(LuaValue::Nil) => Ok(Quantity::zero_with(QuantityFormat::DecimalSI)),
        Some(LuaValue::String(s)) => {
            let text = s.to_string_lossy();
            Quantity::parse(&text).map_err(|err| format!("cannot parse '{text}': {err}"))
        }
        Some(other) => Err(bad_argument(index + 1, function, "string", other)),
    }
}

/// `kube.resourceAdd(q1, q2, …)`: the canonical spelling of the sum.
fn resource_add(lua: &Lua, args: &MultiValue) -> Result<LuaValue, String> {
    let mut sum = Quantity::zero_with(QuantityFormat::DecimalSI);
    for index in 0..args.len() {
        let quantity = quantity_argument(args, index, "resourceAdd")?;
        sum = sum
            .checked_add(&quantity)
            .ok_or_else(|| "resourceAdd: the sum has too many significant digits".to_owned())?;
    }
    lua.create_string(sum.to_string())
        .map(LuaValue::String)
        .map_err(|err| err.to_string())
}

/// `kube.getResourceQuantity(q)`: the quantity as an approximate number.
fn resource_quantity(args: &MultiValue) -> Result<LuaValue, String> {
    if args.len() != 1 {
        return Err("getResourceQuantity only accepts one argument".to_owned());
    }
    let quantity = quantity_argument(args, 0, "getResourceQuantity")?;
    let value = quantity.as_f64();
    if value < 0.0 {
        return Err(format!(
            "int approximation unexpectedly returned a negative value: {quantity}"
        ));
    }
    if value.is_infinite() {
        return Err(format!(
            "int approximation unexpectedly returned an infinite value: {quantity}"
        ));
    }
    Ok(LuaValue::Number(value))
}

/// The pod template argument as JSON, converted as results are (no references: empty tables go).
fn pod_template(args: &MultiValue, function: &str) -> Result<serde_json::Value, String> {
    let template = match args.front() {
        Some(LuaValue::Table(table)) => LuaValue::Table(table.clone()),
        other => {
            return Err(bad_argument(
                1,
                function,
                "table",
                other.unwrap_or(&LuaValue::Nil),
            ));
        }
    };
    let fail = |err: String| format!("fail to convert lua value to PodTemplateSpec: {err}");
    let json = convert::to_json(&template).map_err(fail)?;
    let json = convert::fix_empty_tables(json, Target::Object, &[]);
    if !json.is_object() {
        return Err(fail("expected an object".to_owned()));
    }
    Ok(json)
}

/// `kube.accuratePodRequirements(podTemplate)`: the template's ReplicaRequirements.
fn pod_requirements(
    lua: &Lua,
    kube: &dyn KubeLibrary,
    args: &MultiValue,
) -> Result<LuaValue, String> {
    if args.len() != 1 {
        return Err("getPodRequirements only accepts one argument".to_owned());
    }
    let template = pod_template(args, "accuratePodRequirements")?;
    let requirements = kube.pod_requirements(&template);
    convert::to_lua(lua, &requirements)
        .map_err(|err| format!("fail to convert to Lua value: {err}"))
}

/// `kube.getPodDependencies(podTemplate, namespace)`: the template's dependencies, nil when it
/// has none (Karmada hands a nil slice over).
fn pod_dependencies(
    lua: &Lua,
    kube: &dyn KubeLibrary,
    args: &MultiValue,
) -> Result<LuaValue, String> {
    if args.len() != 2 {
        return Err("getPodDependencies only accepts two argument".to_owned());
    }
    let template = pod_template(args, "getPodDependencies")?;
    let namespace = match args.get(1) {
        None | Some(LuaValue::Nil) => "default".to_owned(),
        Some(LuaValue::String(s)) => s.to_string_lossy(),
        Some(LuaValue::Integer(i)) => i.to_string(),
        Some(LuaValue::Number(n)) => n.to_string(),
        Some(other) => return Err(bad_argument(2, "getPodDependencies", "string", other)),
    };
    let dependencies = kube.pod_dependencies(&template, &namespace);
    if dependencies.is_empty() {
        return Ok(LuaValue::Nil);
    }
    convert::list_to_lua(lua, &dependencies)
        .map_err(|err| format!("fail to convert to Lua value: {err}"))
}
