//! One sandboxed Lua 5.1 state and a single protected call into it.
//!
//! The state's real globals never reach a script: each call gets a fresh environment built by
//! the prelude below from private copies of what Karmada's `setLib` leaves open (base without
//! `coroutine`, `table`, `math`, `string` without `gsub`/`rep`/`dump`, `os.time`/`os.date`, a
//! `package` that only knows the preloaded `kube`), with the unsafe base functions replaced by
//! Karmada's refusals. So a script can neither see another script's globals nor leave anything
//! behind for the next call on the same state, which is what lets states be pooled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mlua::{
    ChunkMode, Function, HookTriggers, Lua, LuaOptions, StdLib, Value as LuaValue, VmState,
};

use super::{KubeLibrary, LuaError, kube};

/// Most memory one state may hold; a script doubling a string a few dozen times stops here.
pub(super) const MEMORY_LIMIT: usize = 128 << 20;

/// Instructions between two looks at the clock.
const CLOCK_INTERVAL: u32 = 1_000;

/// The chunk name gopher-lua's `DoString` gives scripts, so messages read `<string>:3: …`.
const SCRIPT_NAME: &str = "=<string>";

/// Karmada defines its refusals with a one-line `DoString` and `error` at level 1, so they read
/// `<string>:1: call function X is not supported …`; this factory keeps that position.
const REFUSAL: &str = "local error = error return function(name) return function() error('call function ' .. name .. ' is not supported in karmada customized resourceinterpreter.') end end";

/// Runs once per state in its real globals; returns the function that builds a call's
/// environment. Takes the refusal factory and the native `kube` functions.
const PRELUDE: &str = r#"
local refusal, native = ...
local error, ipairs, pairs, tostring, type = error, ipairs, pairs, tostring, type

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local function karmada_unsupported(name)
  local message = "The Lua function string." .. name .. " is not supported by Karmada. "
    .. "If you believe this function is essential for your use case, please submit an issue "
    .. "to let us know why you need it."
  return function() error(message, 2) end
end

-- The real string table is also the strings' metatable index ("x"):rep(n), so it is patched
-- too, not just the copies scripts get.
for _, name in ipairs({ "gsub", "rep", "dump" }) do string[name] = karmada_unsupported(name) end
string.gfind = string.gmatch

local base = {}
for _, name in ipairs({ "assert", "error", "ipairs", "next", "pairs", "pcall", "select",
    "tonumber", "tostring", "type", "unpack", "xpcall" }) do
  base[name] = _G[name]
end
-- A script's output has nowhere to go: the control plane's stdout is not its console.
base.print = function() end
base._VERSION = _VERSION
for _, name in ipairs({ "collectgarbage", "dofile", "getfenv", "getmetatable", "load",
    "loadfile", "loadstring", "rawequal", "rawget", "rawset", "setfenv", "setmetatable",
    "module", "newproxy" }) do
  base[name] = refusal(name)
end

local libraries = {
  string = copy(string),
  table = copy(table),
  math = copy(math),
  os = { time = os.time, date = os.date },
}

local kube = {}
for name, f in pairs(native) do
  kube[name] = function(...)
    local ok, value = f(...)
    if not ok then error(value, 2) end
    return value
  end
end

local function loadlib() error("loadlib is not supported", 2) end

-- Lua 5.1's require over this call's package table, whose only loader is the preload one.
local function new_package()
  local package = { loadlib = loadlib, loaded = {} }
  package.preload = { kube = function() return copy(kube) end }
  package.loaders = {
    function(name)
      local preload = package.preload
      if type(preload) ~= "table" then error("'package.preload' must be a table", 2) end
      local loader = preload[name]
      if loader == nil then return "\n\tno field package.preload['" .. name .. "']" end
      return loader
    end,
  }
  local loading = {}
  local function require(name)
    if type(name) == "number" then name = tostring(name) end
    if type(name) ~= "string" then
      error("bad argument #1 to 'require' (string expected, got "
        .. (name == nil and "no value" or type(name)) .. ")", 2)
    end
    local loaded = package.loaded
    local module = loaded[name]
    if module == loading then error("loop or previous error loading module '" .. name .. "'", 2) end
    if module then return module end
    local loaders = package.loaders
    if type(loaders) ~= "table" then error("'package.loaders' must be a table", 2) end
    local tried, loader = ""
    for _, search in ipairs(loaders) do
      local found = search(name)
      if type(found) == "function" then loader = found break end
      if type(found) == "string" then tried = tried .. found end
    end
    if loader == nil then error("module '" .. name .. "' not found:" .. tried, 2) end
    loaded[name] = loading
    local result = loader(name)
    if result ~= nil then loaded[name] = result end
    if loaded[name] == loading then loaded[name] = true end
    return loaded[name]
  end
  return package, require
end

return function()
  local env = copy(base)
  local package, require = new_package()
  for name, library in pairs(libraries) do
    env[name] = copy(library)
    package.loaded[name] = env[name]
  end
  env.package, env.require, env._G = package, require, env
  package.loaded.package, package.loaded._G = package, env
  return env
end
"#;

/// A sandboxed state and its environment factory.
pub(super) struct Sandbox {
    lua: Lua,
    new_env: Function,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").finish_non_exhaustive()
    }
}

/// A bare state: only base, which every mlua state has, plus what the prelude copies.
fn bare_state() -> mlua::Result<Lua> {
    Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS,
        LuaOptions::new(),
    )
}

impl Sandbox {
    pub(super) fn new(kube: Arc<dyn KubeLibrary>) -> Result<Sandbox, LuaError> {
        let setup = || -> mlua::Result<Sandbox> {
            let lua = bare_state()?;
            let refusal: Function = lua
                .load(REFUSAL)
                .set_name(SCRIPT_NAME)
                .set_mode(ChunkMode::Text)
                .eval()?;
            let native = kube::functions(&lua, kube)?;
            let new_env: Function = lua
                .load(PRELUDE)
                .set_name("=flotilla lua sandbox")
                .set_mode(ChunkMode::Text)
                .call((refusal, native))?;
            lua.set_memory_limit(MEMORY_LIMIT)?;
            Ok(Sandbox { lua, new_env })
        };
        setup().map_err(|err| LuaError::State(err.to_string()))
    }

    /// Runs `script` in a fresh environment, then calls its global `function` with the
    /// arguments `args` builds, all within `timeout`; hands the first `results` return values
    /// (nil-padded) to `finish`, which converts them while the state is still held.
    pub(super) fn call<T>(
        &self,
        script: &str,
        function: &str,
        results: usize,
        timeout: Duration,
        args: impl FnOnce(&Lua) -> Result<Vec<LuaValue>, LuaError>,
        finish: impl FnOnce(Vec<LuaValue>) -> Result<T, LuaError>,
    ) -> Result<T, LuaError> {
        let timed_out = Arc::new(AtomicBool::new(false));
        self.arm_clock(Instant::now() + timeout, Arc::clone(&timed_out))?;
        let outcome = self.run(script, function, results, args);
        self.lua.remove_global_hook();
        self.lua.remove_hook();
        if timed_out.load(Ordering::Relaxed) {
            return Err(LuaError::Timeout);
        }
        finish(outcome?)
    }

    fn run(
        &self,
        script: &str,
        function: &str,
        results: usize,
        args: impl FnOnce(&Lua) -> Result<Vec<LuaValue>, LuaError>,
    ) -> Result<Vec<LuaValue>, LuaError> {
        let env: mlua::Table = self.new_env.call(()).map_err(script_error)?;
        self.lua
            .load(script)
            .set_name(SCRIPT_NAME)
            .set_mode(ChunkMode::Text)
            .set_environment(env.clone())
            .exec()
            .map_err(script_error)?;
        let args = args(&self.lua)?;
        let callee = match env.raw_get::<LuaValue>(function).map_err(script_error)? {
            LuaValue::Function(callee) => callee,
            LuaValue::Nil => return Err(LuaError::FunctionNotFound(function.to_owned())),
            other => {
                return Err(LuaError::NotAFunction {
                    name: function.to_owned(),
                    found: super::convert::type_name(&other),
                });
            }
        };
        let returned: mlua::MultiValue = callee
            .call(mlua::MultiValue::from_vec(args))
            .map_err(script_error)?;
        let mut returned = returned.into_vec();
        returned.resize(results, LuaValue::Nil);
        Ok(returned)
    }

    /// Raises an error every [`CLOCK_INTERVAL`] instructions once `deadline` has passed, then on
    /// every instruction, so a script that catches the error with `pcall` fails on its next step.
    fn arm_clock(&self, deadline: Instant, timed_out: Arc<AtomicBool>) -> Result<(), LuaError> {
        let triggers = HookTriggers::new().every_nth_instruction(CLOCK_INTERVAL);
        self.lua
            .set_global_hook(triggers, move |lua, _| {
                if Instant::now() < deadline {
                    return Ok(VmState::Continue);
                }
                timed_out.store(true, Ordering::Relaxed);
                let every = HookTriggers::new().every_nth_instruction(1);
                lua.set_global_hook(every, |_, _| Err(timeout_error()))?;
                Err(timeout_error())
            })
            .map_err(|err| LuaError::State(err.to_string()))
    }
}

fn timeout_error() -> mlua::Error {
    mlua::Error::runtime("lua script timed out")
}

/// A Lua failure as the message Lua gave, without mlua's wrapping and traceback.
pub(super) fn script_error(err: mlua::Error) -> LuaError {
    match err {
        mlua::Error::CallbackError { cause, .. } => script_error((*cause).clone()),
        mlua::Error::WithContext { cause, .. } => script_error((*cause).clone()),
        mlua::Error::MemoryError(_) => LuaError::Memory,
        mlua::Error::RuntimeError(message) => LuaError::Script(strip_traceback(message)),
        mlua::Error::SyntaxError { message, .. } => LuaError::Script(message),
        other => LuaError::Script(other.to_string()),
    }
}

fn strip_traceback(mut message: String) -> String {
    if let Some(at) = message.find("\nstack traceback:") {
        message.truncate(at);
    }
    message
}

/// Compiles `script` without running it; the syntax error's message otherwise.
pub(super) fn compile(script: &str) -> Result<(), String> {
    let lua = Lua::new_with(StdLib::NONE, LuaOptions::new()).map_err(|err| err.to_string())?;
    lua.set_memory_limit(MEMORY_LIMIT)
        .map_err(|err| err.to_string())?;
    let compiled = lua
        .load(script)
        .set_name(SCRIPT_NAME)
        .set_mode(ChunkMode::Text)
        .into_function();
    match compiled {
        Ok(_) => Ok(()),
        Err(err) => Err(match script_error(err) {
            LuaError::Script(message) => message,
            other => other.to_string(),
        }),
    }
}
