use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{KubeLibrary, LuaError, LuaInterpreter, check_script};

/// Requirements are the first container's requests; dependencies the ServiceAccount.
struct FakeKube;

impl KubeLibrary for FakeKube {
    fn pod_requirements(&self, pod_template: &Value) -> Value {
        match pod_template.pointer("/spec/containers/0/resources/requests") {
            Some(requests) => json!({ "resourceRequest": requests }),
            None => Value::Null,
        }
    }

    fn pod_dependencies(&self, pod_template: &Value, namespace: &str) -> Vec<Value> {
        pod_template
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .map(|name| {
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "namespace": namespace, "name": name})
            })
            .into_iter()
            .collect()
    }
}

fn interpreter() -> LuaInterpreter {
    LuaInterpreter::new(Arc::new(FakeKube))
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "annotations": {}},
        "spec": {
            "replicas": 3,
            "paused": true,
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "serviceAccountName": "robot",
                    "containers": [{
                        "name": "nginx",
                        "image": "nginx",
                        "args": [],
                        "resources": {"limits": {"cpu": "100m"}, "requests": {"cpu": "50m"}},
                    }],
                    "volumes": [
                        {"name": "a", "configMap": {"name": "cm-a"}},
                        {"name": "b", "emptyDir": {}},
                        {"name": "c", "configMap": {"name": "cm-c"}},
                    ],
                },
            },
        },
        "status": {"replicas": 3, "readyReplicas": 3},
    })
}

#[test]
fn interpreter_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LuaInterpreter>();
}

// Karmada's e2e scripts (test/e2e/suites/base/resourceinterpreter_test.go) as inputs.

#[test]
fn e2e_get_replicas_drops_the_empty_node_claim() {
    let script = r#"
function GetReplicas(desiredObj)
  replica = desiredObj.spec.replicas + 1
  requirement = {}
  requirement.nodeClaim = {}
  requirement.nodeClaim.nodeSelector = desiredObj.spec.template.spec.nodeSelector
  requirement.nodeClaim.tolerations = desiredObj.spec.template.spec.tolerations
  requirement.resourceRequest = desiredObj.spec.template.spec.containers[1].resources.limits
  return replica, requirement
end"#;
    let (replicas, requirements) = interpreter().get_replicas(script, &deployment()).unwrap();
    assert_eq!(replicas, 4);
    assert_eq!(
        requirements,
        Some(json!({"resourceRequest": {"cpu": "100m"}}))
    );
}

#[test]
fn e2e_revise_replica() {
    let script = r#"
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica + 1
  return obj
end"#;
    let revised = interpreter()
        .revise_replica(script, &deployment(), 2)
        .unwrap();
    let mut expected = deployment();
    expected["spec"]["replicas"] = json!(3);
    assert_eq!(revised, expected);
}

#[test]
fn e2e_retain_keeps_observed_paused() {
    let script = r#"
function Retain(desiredObj, observedObj)
  desiredObj.spec.paused = observedObj.spec.paused
  return desiredObj
end"#;
    let desired = deployment();
    let mut observed = deployment();
    observed["spec"]["paused"] = json!(false);
    let retained = interpreter().retain(script, &desired, &observed).unwrap();
    assert_eq!(retained["spec"]["paused"], json!(false));
    // Empty members of the references come back as they were.
    assert_eq!(retained["metadata"]["annotations"], json!({}));
    assert_eq!(
        retained["spec"]["template"]["spec"]["containers"][0]["args"],
        json!([])
    );
    assert_eq!(
        retained["spec"]["template"]["spec"]["volumes"][1]["emptyDir"],
        json!({})
    );
}

const E2E_AGGREGATE: &str = r#"
function AggregateStatus(desiredObj, statusItems)
	if statusItems == nil then
		return desiredObj
	end
	if desiredObj.status == nil then
		desiredObj.status = {}
	end
	replicas = 0
	for i = 1, #statusItems do
		if statusItems[i].status ~= nil and statusItems[i].status.replicas ~= nil then
			replicas = replicas + statusItems[i].status.replicas + 1
		end
	end
	desiredObj.status.replicas = replicas
	return desiredObj
end"#;

#[test]
fn e2e_aggregate_status() {
    let mut object = deployment();
    object.as_object_mut().unwrap().remove("status");
    let items = [
        json!({"clusterName": "member1", "status": {"replicas": 2}, "applied": true, "health": "Healthy"}),
        json!({"clusterName": "member2", "applied": false, "appliedMessage": "boom"}),
        json!({"clusterName": "member3", "status": {"replicas": 1}, "applied": true}),
    ];
    let aggregated = interpreter()
        .aggregate_status(E2E_AGGREGATE, &object, &items)
        .unwrap();
    assert_eq!(aggregated["status"], json!({"replicas": 5}));
}

#[test]
fn aggregate_status_with_no_items_gets_an_empty_list() {
    let aggregated = interpreter()
        .aggregate_status(E2E_AGGREGATE, &deployment(), &[])
        .unwrap();
    assert_eq!(
        aggregated["status"],
        json!({"replicas": 0, "readyReplicas": 3})
    );
}

const E2E_REFLECT: &str = r#"
function ReflectStatus (observedObj)
	if observedObj.status == nil then
		return nil
	end
	return observedObj.status
end"#;

#[test]
fn e2e_reflect_status() {
    let status = interpreter()
        .reflect_status(E2E_REFLECT, &deployment())
        .unwrap();
    assert_eq!(status, json!({"replicas": 3, "readyReplicas": 3}));

    let mut object = deployment();
    object.as_object_mut().unwrap().remove("status");
    let err = interpreter()
        .reflect_status(E2E_REFLECT, &object)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "expect the returned replica type is table but got nil"
    );
}

#[test]
fn e2e_interpret_health() {
    let script = r#"
function InterpretHealth(observedObj)
	return observedObj.status.readyReplicas == observedObj.spec.replicas
end "#;
    let lua = interpreter();
    assert!(lua.interpret_health(script, &deployment()).unwrap());
    let mut object = deployment();
    object["status"]["readyReplicas"] = json!(1);
    assert!(!lua.interpret_health(script, &object).unwrap());
}

#[test]
fn e2e_get_dependencies() {
    let service_accounts = r#"
function GetDependencies(desiredObj)
	dependentSas = {}
	refs = {}
	if desiredObj.spec.template.spec.serviceAccountName ~= nil and desiredObj.spec.template.spec.serviceAccountName ~= 'default' then
		dependentSas[desiredObj.spec.template.spec.serviceAccountName] = true
	end
	local idx = 1
	for key, value in pairs(dependentSas) do
		dependObj = {}
		dependObj.apiVersion = 'v1'
		dependObj.kind = 'ServiceAccount'
		dependObj.name = key
		dependObj.namespace = desiredObj.metadata.namespace
		refs[idx] = dependObj
		idx = idx + 1
	end
	return refs
end "#;
    let config_maps = r#"
function GetDependencies(desiredObj)
	dependentSas = {}
	refs = {}
	if desiredObj.spec.template.spec.volumes == nil then
		return refs
	end
	local idx = 1
	for index, volume in pairs(desiredObj.spec.template.spec.volumes) do
		if volume.configMap ~= nil then
			dependObj = {}
			dependObj.apiVersion = 'v1'
			dependObj.kind = 'ConfigMap'
			dependObj.name = volume.configMap.name
			dependObj.namespace = desiredObj.metadata.namespace
			refs[idx] = dependObj
			idx = idx + 1
		end
	end
	return refs
end "#;
    let lua = interpreter();
    assert_eq!(
        lua.get_dependencies(service_accounts, &deployment())
            .unwrap(),
        vec![
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "name": "robot", "namespace": "default"})
        ]
    );
    assert_eq!(
        lua.get_dependencies(config_maps, &deployment()).unwrap(),
        vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "cm-a", "namespace": "default"}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "cm-c", "namespace": "default"}),
        ]
    );
    let mut object = deployment();
    object["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("volumes");
    assert_eq!(
        lua.get_dependencies(config_maps, &object).unwrap(),
        Vec::<Value>::new()
    );
}

// Empty tables: `{}` and `[]` are the same empty Lua table, told apart by the references.

#[test]
fn retain_restores_empty_objects_and_arrays_from_either_reference() {
    let script = r#"
function Retain(desiredObj, observedObj)
  desiredObj.metadata.labels = observedObj.metadata.labels
  desiredObj.spec.finalizers = observedObj.spec.finalizers
  desiredObj.spec.addedByScript = {}
  desiredObj.spec.nested = { inner = {} }
  return desiredObj
end"#;
    let desired = json!({"kind": "Thing", "metadata": {"annotations": {}}, "spec": {"ports": []}});
    let observed = json!({"kind": "Thing", "metadata": {"labels": {}}, "spec": {"finalizers": []}});
    let retained = interpreter().retain(script, &desired, &observed).unwrap();
    assert_eq!(
        retained,
        json!({
            "kind": "Thing",
            "metadata": {"annotations": {}, "labels": {}},
            "spec": {"ports": [], "finalizers": [], "nested": {}},
        })
    );
}

#[test]
fn revise_replica_repairs_empty_members_inside_arrays_by_field_path() {
    let script = "function ReviseReplica(obj, n) obj.spec.replicas = n return obj end";
    let object = json!({
        "kind": "Thing",
        "spec": {"replicas": 1, "rules": [{"name": "a", "match": {}, "hosts": []}, {"name": "b", "match": {"x": 1}, "hosts": ["h"]}]},
    });
    let revised = interpreter().revise_replica(script, &object, 7).unwrap();
    let mut expected = object.clone();
    expected["spec"]["replicas"] = json!(7);
    assert_eq!(revised, expected);
}

#[test]
fn results_without_references_lose_every_empty_table() {
    let script = r#"
function ReflectStatus(observedObj)
  return { conditions = {}, counts = { a = 1, b = {} }, list = { {}, 2, {} } }
end"#;
    let status = interpreter().reflect_status(script, &deployment()).unwrap();
    assert_eq!(status, json!({"counts": {"a": 1}, "list": [2]}));

    let empty = "function ReflectStatus(o) return {} end";
    assert_eq!(
        interpreter().reflect_status(empty, &deployment()).unwrap(),
        json!({})
    );
    let none = "function GetDependencies(o) return {} end";
    assert_eq!(
        interpreter().get_dependencies(none, &deployment()).unwrap(),
        Vec::<Value>::new()
    );
}

#[test]
fn numbers_come_back_integral_when_they_are() {
    let script = r#"
function ReflectStatus(o)
  return { two = 4 / 2, half = 1 / 2, big = 2^53, negative = -3, huge = 1e300 }
end"#;
    let status = interpreter().reflect_status(script, &deployment()).unwrap();
    assert_eq!(
        status.to_string(),
        r#"{"big":9007199254740992,"half":0.5,"huge":1e+300,"negative":-3,"two":2}"#
    );
    assert!(status["two"].is_i64());
}

#[test]
fn unencodable_results_are_errors() {
    let lua = interpreter();
    let cases = [
        (
            "return { 1, x = 2 }",
            "encode lua result to json failed: cannot encode mixed or invalid key types",
        ),
        (
            "return { [1] = 1, [3] = 3 }",
            "encode lua result to json failed: cannot encode sparse array",
        ),
        (
            "return { f = print }",
            "encode lua result to json failed: cannot encode function to JSON",
        ),
        (
            "return { n = 0/0 }",
            "encode lua result to json failed: json: unsupported value: NaN",
        ),
        (
            "local t = {} t.self = t return t",
            "encode lua result to json failed: cannot encode recursively nested tables to JSON",
        ),
    ];
    for (body, message) in cases {
        let script = format!("function ReflectStatus(o) {body} end");
        let err = lua.reflect_status(&script, &deployment()).unwrap_err();
        assert_eq!(err.to_string(), message, "{body}");
    }
    // A table shared twice is not a cycle.
    let shared = "function ReflectStatus(o) local t = { x = 1 } return { a = t, b = t } end";
    assert_eq!(
        lua.reflect_status(shared, &deployment()).unwrap(),
        json!({"a": {"x": 1}, "b": {"x": 1}})
    );
}

#[test]
fn deeply_nested_results_are_refused_not_overflowing() {
    let script = r#"
function ReflectStatus(o)
  local t = {}
  for i = 1, 100000 do t = { t } end
  return t
end"#;
    let err = interpreter()
        .reflect_status(script, &deployment())
        .unwrap_err();
    assert!(matches!(err, LuaError::Encode(_)), "{err}");
}

// The kube library.

#[test]
fn kube_resource_add_and_quantity() {
    let script = r#"
local kube = require("kube")
function ReflectStatus(o)
  return {
    milli = kube.resourceAdd("100m", "200m"),
    mixed = kube.resourceAdd("1", "500m"),
    binary = kube.resourceAdd("1Gi", "1Gi"),
    withNil = kube.resourceAdd(nil, "1.2G", "100M"),
    none = kube.resourceAdd(),
    cpu = kube.getResourceQuantity("1500m"),
    memory = kube.getResourceQuantity("1Gi"),
  }
end"#;
    let status = interpreter().reflect_status(script, &deployment()).unwrap();
    assert_eq!(
        status,
        json!({
            "binary": "2Gi", "cpu": 1.5, "memory": 1073741824, "milli": "300m",
            "mixed": "1500m", "none": "0", "withNil": "1300M",
        })
    );
}

#[test]
fn kube_errors_name_the_script_line() {
    let lua = interpreter();
    let cases = [
        (
            "kube.resourceAdd('1', 2)",
            "<string>:4: bad argument #2 to resourceAdd (string expected, got number)",
        ),
        (
            "kube.resourceAdd('abc')",
            "<string>:4: cannot parse 'abc': quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            "kube.getResourceQuantity('-1')",
            "<string>:4: int approximation unexpectedly returned a negative value: -1",
        ),
        (
            "kube.getResourceQuantity('1', '2')",
            "<string>:4: getResourceQuantity only accepts one argument",
        ),
        (
            "kube.accuratePodRequirements()",
            "<string>:4: getPodRequirements only accepts one argument",
        ),
        (
            "kube.accuratePodRequirements('x')",
            "<string>:4: bad argument #1 to accuratePodRequirements (table expected, got string)",
        ),
        (
            "kube.getPodDependencies({})",
            "<string>:4: getPodDependencies only accepts two argument",
        ),
        (
            "kube.getPodDependencies({}, {})",
            "<string>:4: bad argument #2 to getPodDependencies (string expected, got table)",
        ),
    ];
    for (call, message) in cases {
        let script = format!(
            "local kube = require('kube')\nfunction ReflectStatus(o)\n  local x\n  x = {call}\n  return {{}}\nend"
        );
        let err = lua.reflect_status(&script, &deployment()).unwrap_err();
        assert_eq!(err, LuaError::Script(message.to_owned()), "{call}");
    }
}

#[test]
fn kube_pod_helpers_call_the_native_library() {
    let script = r#"
local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end
function GetDependencies(obj)
  return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace) or {}
end"#;
    let lua = interpreter();
    let (replicas, requirements) = lua.get_replicas(script, &deployment()).unwrap();
    assert_eq!(
        (replicas, requirements),
        (3, Some(json!({"resourceRequest": {"cpu": "50m"}})))
    );
    assert_eq!(
        lua.get_dependencies(script, &deployment()).unwrap(),
        vec![
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "name": "robot", "namespace": "default"})
        ]
    );
    // No dependencies: Karmada hands nil over, hence the script's `or {}`.
    let mut object = deployment();
    object["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("serviceAccountName");
    assert_eq!(
        lua.get_dependencies(script, &object).unwrap(),
        Vec::<Value>::new()
    );
    // A nil namespace is "default"; requirements are nil without requests.
    let script = r#"
local kube = require("kube")
function GetDependencies(obj)
  return kube.getPodDependencies(obj.spec.template, nil)
end
function GetReplicas(obj)
  return 1, kube.accuratePodRequirements({ spec = {} })
end"#;
    assert_eq!(
        lua.get_dependencies(script, &deployment()).unwrap()[0]["namespace"],
        json!("default")
    );
    assert_eq!(lua.get_replicas(script, &deployment()).unwrap(), (1, None));
}

// The sandbox.

#[test]
fn refused_base_functions_raise_karmadas_message() {
    let lua = interpreter();
    for name in [
        "loadstring",
        "setmetatable",
        "getmetatable",
        "rawget",
        "dofile",
        "load",
        "getfenv",
    ] {
        let script = format!("function InterpretHealth(o) {name}('x') return true end");
        let err = lua.interpret_health(&script, &deployment()).unwrap_err();
        assert_eq!(
            err,
            LuaError::Script(format!(
                "<string>:1: call function {name} is not supported in karmada customized resourceinterpreter."
            ))
        );
    }
}

#[test]
fn unsafe_libraries_are_absent() {
    let script = r#"
function ReflectStatus(o)
  return {
    io = type(io), debug = type(debug), coroutine = type(coroutine),
    execute = type(os.execute), exit = type(os.exit), getenv = type(os.getenv),
    time = type(os.time), date = type(os.date), loadlib = type(package.loadlib),
    path = type(package.path), cpath = type(package.cpath), version = _VERSION,
  }
end"#;
    let status = interpreter().reflect_status(script, &deployment()).unwrap();
    assert_eq!(
        status,
        json!({"io": "nil", "debug": "nil", "coroutine": "nil", "execute": "nil", "exit": "nil",
               "getenv": "nil", "time": "function", "date": "function", "loadlib": "function",
               "path": "nil", "cpath": "nil", "version": "Lua 5.1"})
    );
    let lua = interpreter();
    let call = |body: &str| {
        let script = format!("function InterpretHealth(o) {body} return true end");
        lua.interpret_health(&script, &deployment())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        call("os.execute('true')"),
        "<string>:1: attempt to call field 'execute' (a nil value)"
    );
    assert_eq!(
        call("io.open('/etc/passwd')"),
        "<string>:1: attempt to index global 'io' (a nil value)"
    );
    assert_eq!(
        call("require('io')"),
        "<string>:1: module 'io' not found:\n\tno field package.preload['io']"
    );
    assert_eq!(
        call("package.loadlib('x', 'y')"),
        "<string>:1: loadlib is not supported"
    );
    let rep = "<string>:1: The Lua function string.rep is not supported by Karmada. If you believe this function is essential for your use case, please submit an issue to let us know why you need it.";
    assert_eq!(call("string.rep('x', 3)"), rep);
    // Also through the strings' metatable.
    assert_eq!(call("local s = ('x'):rep(3)"), rep);
}

#[test]
fn scripts_do_not_share_globals() {
    let lua = interpreter();
    let polluter = r#"
Leftover = 1
string.upper = nil
package.preload.kube = function() return {} end
function GetReplicas(o) return 1 end
function InterpretHealth(o) return true end"#;
    assert!(lua.interpret_health(polluter, &deployment()).unwrap());
    let reader = r#"
local kube = require("kube")
function InterpretHealth(o)
  return Leftover == nil and string.upper("a") == "A" and kube.resourceAdd("1") == "1"
end"#;
    assert!(lua.interpret_health(reader, &deployment()).unwrap());
    // The previous script's GetReplicas is gone too.
    assert_eq!(
        lua.get_replicas(reader, &deployment()).unwrap_err(),
        LuaError::FunctionNotFound("GetReplicas".to_owned())
    );
}

#[test]
fn endless_loops_time_out() {
    let lua = LuaInterpreter::with_timeout(Arc::new(FakeKube), Duration::from_millis(50));
    for body in [
        "while true do end",
        // Catching the timeout does not escape it.
        "while true do pcall(function() while true do end end) end",
    ] {
        let script = format!("function InterpretHealth(o) {body} end");
        let started = Instant::now();
        let err = lua.interpret_health(&script, &deployment()).unwrap_err();
        assert_eq!(err, LuaError::Timeout, "{body}");
        assert_eq!(err.to_string(), "lua script timed out");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    // Top-level code is on the clock too, and the interpreter still works afterwards.
    assert_eq!(
        lua.interpret_health("while true do end", &deployment())
            .unwrap_err(),
        LuaError::Timeout
    );
    assert!(
        lua.interpret_health("function InterpretHealth(o) return true end", &deployment())
            .unwrap()
    );
}

#[test]
fn runaway_memory_is_an_error() {
    let script = r#"
function InterpretHealth(o)
  local s = "xxxxxxxxxxxxxxxx"
  for i = 1, 40 do s = s .. s end
  return true
end"#;
    let err = interpreter()
        .interpret_health(script, &deployment())
        .unwrap_err();
    assert_eq!(err, LuaError::Memory);
}

#[test]
fn check_script_reports_syntax_errors() {
    assert_eq!(check_script("function GetReplicas(o) return 1 end"), Ok(()));
    // Compiling runs nothing.
    assert_eq!(check_script("while true do end"), Ok(()));
    assert_eq!(
        check_script("function GetReplicas(o) retur 1 end"),
        Err("<string>:1: '=' expected near '1'".to_owned())
    );
    // Precompiled chunks are refused.
    assert!(check_script("\x1bLua").is_err());
}

#[test]
fn missing_and_wrong_functions() {
    let lua = interpreter();
    let object = deployment();
    assert_eq!(
        lua.get_replicas("x = 1", &object).unwrap_err().to_string(),
        "not found function GetReplicas"
    );
    assert_eq!(
        lua.get_replicas("GetReplicas = 1", &object)
            .unwrap_err()
            .to_string(),
        "GetReplicas is not a function: number"
    );
    assert_eq!(
        lua.get_replicas("function GetReplicas(o) error('boom') end", &object)
            .unwrap_err()
            .to_string(),
        "<string>:1: boom"
    );
    assert_eq!(
        lua.get_replicas(
            "function GetReplicas(o) return o.spec.missing.x end",
            &object
        )
        .unwrap_err()
        .to_string(),
        "<string>:1: attempt to index field 'missing' (a nil value)"
    );
    assert!(matches!(
        lua.get_replicas("function GetReplicas(o) return 1 end end", &object),
        Err(LuaError::Script(_))
    ));
}

#[test]
fn wrong_result_types() {
    let lua = interpreter();
    let object = deployment();
    let err = |result: Result<_, LuaError>| result.unwrap_err().to_string();
    assert_eq!(
        err(lua
            .get_replicas("function GetReplicas(o) return '3' end", &object)
            .map(|_| ())),
        "result type string is not number"
    );
    assert_eq!(
        err(lua
            .get_replicas("function GetReplicas(o) return 3, 'x' end", &object)
            .map(|_| ())),
        "expect the returned requires type is table but got string"
    );
    assert_eq!(
        lua.get_replicas("function GetReplicas(o) return 3.9 end", &object)
            .unwrap(),
        (3, None)
    );
    assert_eq!(
        err(lua
            .interpret_health("function InterpretHealth(o) return 1 end", &object)
            .map(|_| ())),
        "result type number is not bool"
    );
    assert_eq!(
        err(lua
            .interpret_health("function InterpretHealth(o) end", &object)
            .map(|_| ())),
        "result type nil is not bool"
    );
    assert_eq!(
        err(lua
            .retain("function Retain(d, o) return nil end", &object, &object)
            .map(|_| ())),
        "expect the returned requires type is table but got nil"
    );
    assert_eq!(
        err(lua
            .revise_replica(
                "function ReviseReplica(o, n) return { spec = {} } end",
                &object,
                1
            )
            .map(|_| ())),
        "json unmarshal obj failed: Object 'Kind' is missing in '{}'"
    );
    assert!(matches!(
        lua.get_dependencies("function GetDependencies(o) return { a = 1 } end", &object),
        Err(LuaError::Decode(_))
    ));
}

#[test]
fn states_are_reused_across_calls_and_threads() {
    let lua = Arc::new(interpreter());
    let script = "function InterpretHealth(o) return o.spec.replicas == 3 end";
    for _ in 0..10 {
        assert!(lua.interpret_health(script, &deployment()).unwrap());
    }
    assert_eq!(lua.pool.lock().unwrap().len(), 1);

    let threads: Vec<_> = (0..2)
        .map(|n| {
            let lua = Arc::clone(&lua);
            std::thread::spawn(move || {
                let script =
                    format!("function ReviseReplica(o, r) o.spec.replicas = r + {n} return o end");
                for replicas in 0..50 {
                    let revised = lua
                        .revise_replica(&script, &deployment(), replicas)
                        .unwrap();
                    assert_eq!(revised["spec"]["replicas"], json!(replicas + n));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let pooled = lua.pool.lock().unwrap().len();
    assert!((1..=2).contains(&pooled), "{pooled}");
}
