//! The declarative Lua interpreter of Karmada's ResourceInterpreterCustomization: runs a
//! customization's script operation (`GetReplicas`, `ReviseReplica`, `Retain`,
//! `AggregateStatus`, `ReflectStatus`, `InterpretHealth`, `GetDependencies`) on JSON objects.
//!
//! Provenance: Karmada `pkg/resourceinterpreter/customized/declarative/luavm` (`lua.go` the
//! call sequence and result checks, `lua_convert.go` the result encoding and its empty-table
//! fix-up, `kube.go` the `kube` library) and `pkg/util/lifted/lua` (which library functions a
//! script keeps). Karmada runs gopher-lua, a Lua 5.1 VM; this runs Lua 5.1 itself (mlua,
//! vendored). Differences: each call gets a fresh global environment, so scripts never see each
//! other's globals; `print` prints nothing; a state also has a memory limit; the string library
//! is Lua's own (gopher-lua's `string.format` is Go's `Sprintf`), without Karmada's 1,000,000-byte
//! argument limit; syntax errors read as Lua's (`<string>:1: '=' expected near 'x'`).
//!
//! Pure: no I/O (the `kube` library's pod helpers come in through [`KubeLibrary`]), no async.

mod convert;
mod kube;
mod sandbox;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mlua::Value as LuaValue;
use serde_json::Value;

use convert::Target;
use sandbox::Sandbox;

/// What one call may take, as Karmada's context timeout.
const TIMEOUT: Duration = Duration::from_secs(1);

/// States kept for reuse; more are created under contention and dropped afterwards.
const POOL_SIZE: usize = 4;

/// Native helpers the `kube` library calls back into (the controllers implement it with their
/// native interpreter; tests use a fake).
pub trait KubeLibrary: Send + Sync {
    /// `kube.accuratePodRequirements(podTemplate)`: the ReplicaRequirements JSON (camelCase, e.g.
    /// {"resourceRequest": {"cpu": "100m"}, "nodeClaim": {...}, "priorityClassName": ...}) of a PodTemplateSpec JSON.
    fn pod_requirements(&self, pod_template: &Value) -> Value;
    /// `kube.getPodDependencies(podTemplate, namespace)`: DependentObjectReference JSONs
    /// ({"apiVersion","kind","namespace","name"}) of the pod template's ConfigMaps, Secrets, ServiceAccount, PVCs.
    fn pod_dependencies(&self, pod_template: &Value, namespace: &str) -> Vec<Value>;
}

/// Why a script operation failed. Messages follow Karmada's luavm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LuaError {
    /// The script defines no global of the operation's name.
    #[error("not found function {0}")]
    FunctionNotFound(String),
    /// The operation's global is not a function.
    #[error("{name} is not a function: {found}")]
    NotAFunction {
        /// The operation (`GetReplicas`, …).
        name: String,
        /// The Lua type it has instead.
        found: &'static str,
    },
    /// The script failed to compile or raised an error: Lua's message.
    #[error("{0}")]
    Script(String),
    /// The call ran past its time.
    #[error("lua script timed out")]
    Timeout,
    /// The script allocated past the state's memory limit.
    #[error("lua script exceeded the memory limit of {} MiB", sandbox::MEMORY_LIMIT >> 20)]
    Memory,
    /// A scalar result of the wrong Lua type.
    #[error("result type {found} is not {expected}")]
    ResultType {
        /// `number` or `bool`.
        expected: &'static str,
        /// The Lua type returned.
        found: &'static str,
    },
    /// A result that must be a table is not (`what` is Karmada's word for it: `requires` or
    /// `replica`).
    #[error("expect the returned {what} type is table but got {found}")]
    NotATable {
        /// The noun of Karmada's message.
        what: &'static str,
        /// The Lua type returned.
        found: &'static str,
    },
    /// The returned table has no JSON form (mixed keys, a function, a cycle, NaN, …).
    #[error("encode lua result to json failed: {0}")]
    Encode(String),
    /// The returned JSON does not have the shape the operation returns.
    #[error("json unmarshal obj failed: {0}")]
    Decode(String),
    /// An argument could not be made a Lua value.
    #[error("convert argument to lua value failed: {0}")]
    Argument(String),
    /// A Lua state could not be set up.
    #[error("create lua state failed: {0}")]
    State(String),
}

/// Runs customization scripts on a small pool of sandboxed Lua states.
pub struct LuaInterpreter {
    kube: Arc<dyn KubeLibrary>,
    pool: Mutex<Vec<Sandbox>>,
    timeout: Duration,
}

impl std::fmt::Debug for LuaInterpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pooled = self.pool.lock().map_or(0, |pool| pool.len());
        f.debug_struct("LuaInterpreter")
            .field("pooled", &pooled)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// One argument of an operation.
enum Arg<'a> {
    Object(&'a Value),
    List(&'a [Value]),
    Number(f64),
}

impl LuaInterpreter {
    pub fn new(kube: Arc<dyn KubeLibrary>) -> LuaInterpreter {
        LuaInterpreter {
            kube,
            pool: Mutex::new(Vec::new()),
            timeout: TIMEOUT,
        }
    }

    /// An interpreter whose calls time out sooner (tests).
    #[cfg(test)]
    pub(crate) fn with_timeout(kube: Arc<dyn KubeLibrary>, timeout: Duration) -> LuaInterpreter {
        LuaInterpreter {
            timeout,
            ..LuaInterpreter::new(kube)
        }
    }

    /// `GetReplicas(obj)` → (replicas, requirements). Requirements: None when the script returned nil.
    pub fn get_replicas(
        &self,
        script: &str,
        object: &Value,
    ) -> Result<(i32, Option<Value>), LuaError> {
        self.run(
            script,
            "GetReplicas",
            2,
            &[Arg::Object(object)],
            |results| {
                let replicas = match &results[0] {
                    LuaValue::Integer(i) => (*i).clamp(i32::MIN.into(), i32::MAX.into()) as i32,
                    // Truncates toward zero, as Go's int32(float64).
                    LuaValue::Number(n) => *n as i32,
                    other => {
                        return Err(LuaError::ResultType {
                            expected: "number",
                            found: convert::type_name(other),
                        });
                    }
                };
                let requirements = match &results[1] {
                    LuaValue::Nil => None,
                    table @ LuaValue::Table(_) => Some(expect_object(table_result(table, &[])?)?),
                    other => {
                        return Err(LuaError::NotATable {
                            what: "requires",
                            found: convert::type_name(other),
                        });
                    }
                };
                Ok((replicas, requirements))
            },
        )
    }

    /// `ReviseReplica(obj, replicas)` → the revised object.
    pub fn revise_replica(
        &self,
        script: &str,
        object: &Value,
        replicas: i64,
    ) -> Result<Value, LuaError> {
        let args = [Arg::Object(object), Arg::Number(replicas as f64)];
        self.run(script, "ReviseReplica", 1, &args, |results| {
            unstructured(table_result(
                expect_table(&results[0], "requires")?,
                &[object],
            )?)
        })
    }

    /// `Retain(desired, observed)` → the object to apply.
    pub fn retain(
        &self,
        script: &str,
        desired: &Value,
        observed: &Value,
    ) -> Result<Value, LuaError> {
        let args = [Arg::Object(desired), Arg::Object(observed)];
        self.run(script, "Retain", 1, &args, |results| {
            let table = expect_table(&results[0], "requires")?;
            unstructured(table_result(table, &[desired, observed])?)
        })
    }

    /// `AggregateStatus(obj, statusItems)` → the object with its new status. `items` are Karmada
    /// AggregatedStatusItem JSONs ({"clusterName","status","applied","appliedMessage","health"}).
    pub fn aggregate_status(
        &self,
        script: &str,
        object: &Value,
        items: &[Value],
    ) -> Result<Value, LuaError> {
        let args = [Arg::Object(object), Arg::List(items)];
        self.run(script, "AggregateStatus", 1, &args, |results| {
            unstructured(table_result(expect_table(&results[0], "requires")?, &[])?)
        })
    }

    /// `ReflectStatus(observed)` → the status to record.
    pub fn reflect_status(&self, script: &str, object: &Value) -> Result<Value, LuaError> {
        self.run(
            script,
            "ReflectStatus",
            1,
            &[Arg::Object(object)],
            |results| table_result(expect_table(&results[0], "replica")?, &[]),
        )
    }

    /// `InterpretHealth(observed)` → healthy or not.
    pub fn interpret_health(&self, script: &str, object: &Value) -> Result<bool, LuaError> {
        self.run(
            script,
            "InterpretHealth",
            1,
            &[Arg::Object(object)],
            |results| match &results[0] {
                LuaValue::Boolean(healthy) => Ok(*healthy),
                other => Err(LuaError::ResultType {
                    expected: "bool",
                    found: convert::type_name(other),
                }),
            },
        )
    }

    /// `GetDependencies(obj)` → DependentObjectReference JSONs, as returned (the caller validates and merges).
    pub fn get_dependencies(&self, script: &str, object: &Value) -> Result<Vec<Value>, LuaError> {
        self.run(
            script,
            "GetDependencies",
            1,
            &[Arg::Object(object)],
            |results| {
                let table = expect_table(&results[0], "requires")?;
                let json = convert::to_json(table).map_err(LuaError::Encode)?;
                match convert::fix_empty_tables(json, Target::List, &[]) {
                    Value::Array(items) if items.iter().all(Value::is_object) => Ok(items),
                    Value::Array(_) => Err(LuaError::Decode(
                        "a dependency is not a DependentObjectReference object".to_owned(),
                    )),
                    _ => Err(LuaError::Decode(
                        "cannot unmarshal an object into a list of DependentObjectReference"
                            .to_owned(),
                    )),
                }
            },
        )
    }

    /// `GetComponents(obj)` → the components (each `{name, replicas, replicaRequirements}`).
    pub fn get_components(&self, script: &str, object: &Value) -> Result<Vec<Value>, LuaError> {
        self.run(
            script,
            "GetComponents",
            1,
            &[Arg::Object(object)],
            |results| {
                let table = expect_table(&results[0], "components")?;
                let json = convert::to_json(table).map_err(LuaError::Encode)?;
                match convert::fix_empty_tables(json, Target::List, &[]) {
                    Value::Array(items) if items.iter().all(Value::is_object) => Ok(items),
                    Value::Array(_) => Err(LuaError::Decode(
                        "a component is not a Component object".to_owned(),
                    )),
                    _ => Err(LuaError::Decode(
                        "cannot unmarshal an object into a list of Component".to_owned(),
                    )),
                }
            },
        )
    }

    /// Takes a state, runs the operation, gives the state back unless the call overran it.
    fn run<T>(
        &self,
        script: &str,
        function: &str,
        results: usize,
        args: &[Arg<'_>],
        finish: impl FnOnce(Vec<LuaValue>) -> Result<T, LuaError>,
    ) -> Result<T, LuaError> {
        let pooled = self
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let sandbox = match pooled {
            Some(sandbox) => sandbox,
            None => Sandbox::new(Arc::clone(&self.kube))?,
        };
        let outcome = sandbox.call(
            script,
            function,
            results,
            self.timeout,
            |lua| {
                args.iter()
                    .map(|arg| match arg {
                        Arg::Object(value) => convert::to_lua(lua, value),
                        Arg::List(items) => convert::list_to_lua(lua, items),
                        Arg::Number(n) => Ok(LuaValue::Number(*n)),
                    })
                    .collect::<mlua::Result<Vec<_>>>()
                    .map_err(|err| match sandbox::script_error(err) {
                        LuaError::Script(message) => LuaError::Argument(message),
                        other => other,
                    })
            },
            finish,
        );
        // A state stopped mid-way (clock or memory) may hold half-built garbage: not reused.
        if !matches!(outcome, Err(LuaError::Timeout | LuaError::Memory)) {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            if pool.len() < POOL_SIZE {
                pool.push(sandbox);
            }
        }
        outcome
    }
}

/// Compiles (loads without running) `script` in a sandboxed state, as Karmada's validating webhook
/// does; Err carries Lua's syntax error message.
pub fn check_script(script: &str) -> Result<(), String> {
    sandbox::compile(script)
}

fn expect_table<'a>(value: &'a LuaValue, what: &'static str) -> Result<&'a LuaValue, LuaError> {
    match value {
        LuaValue::Table(_) => Ok(value),
        other => Err(LuaError::NotATable {
            what,
            found: convert::type_name(other),
        }),
    }
}

/// A returned table as JSON decoded into an object type, empty tables repaired from
/// `references`.
fn table_result(table: &LuaValue, references: &[&Value]) -> Result<Value, LuaError> {
    let json = convert::to_json(table).map_err(LuaError::Encode)?;
    Ok(convert::fix_empty_tables(json, Target::Object, references))
}

fn expect_object(json: Value) -> Result<Value, LuaError> {
    if json.is_object() {
        Ok(json)
    } else {
        Err(LuaError::Decode(format!(
            "cannot unmarshal {} into an object",
            json_type(&json)
        )))
    }
}

/// What Kubernetes' unstructured decoding accepts: an object with a kind.
fn unstructured(json: Value) -> Result<Value, LuaError> {
    let json = expect_object(json)?;
    match json.get("kind") {
        Some(Value::String(kind)) if !kind.is_empty() => Ok(json),
        _ => Err(LuaError::Decode(format!(
            "Object 'Kind' is missing in '{json}'"
        ))),
    }
}

fn json_type(json: &Value) -> &'static str {
    match json {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
