//! Karmada's ResourceInterpreterCustomization webhook, in line: every script must load as Lua
//! (it is compiled, not run), and no two customizations of one target may both script the same
//! operation, `InterpretDependency` excepted (its scripts are merged). The other customizations
//! are read from the watch cache.

use flotilla_api::karmada::lua::check_script;
use flotilla_api::karmada::{Operation, ResourceInterpreterCustomization};
use serde_json::Value;

use super::Registry;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;

/// The prefix kube-apiserver puts before a validating webhook's refusal.
const DENIED_PREFIX: &str =
    "admission webhook \"resourceinterpretercustomization.karmada.io\" denied the request";

fn denied(message: String) -> ApiError {
    ApiError::new(403, "Forbidden", format!("{DENIED_PREFIX}: {message}"))
}

impl Registry {
    /// Refuses (403) a ResourceInterpreterCustomization whose scripts do not load or whose
    /// operations another customization of the same target already scripts.
    pub(super) fn check_interpreter_customization(
        &self,
        info: &ResourceInfo,
        object: &Value,
    ) -> Result<(), ApiError> {
        if info.group != "config.karmada.io" || info.kind != "ResourceInterpreterCustomization" {
            return Ok(());
        }
        // Admission already checked the object against its schema.
        let Ok(new) = serde_json::from_value::<ResourceInterpreterCustomization>(object.clone())
        else {
            return Ok(());
        };
        let (others, _) = self
            .cache
            .list(info.storage_prefix_in(None).as_bytes(), None);
        let others: Vec<ResourceInterpreterCustomization> = others
            .into_iter()
            .filter_map(|o| serde_json::from_value(o.value()).ok())
            .collect();
        admissible(&new, others).map_err(denied)
    }
}

/// Karmada's `validateResourceInterpreterCustomizations`: no conflict with any other stored
/// customization (the one of the same name is the object itself, before the update), in name
/// order, then every script loads.
fn admissible(
    new: &ResourceInterpreterCustomization,
    mut others: Vec<ResourceInterpreterCustomization>,
) -> Result<(), String> {
    others.retain(|o| o.metadata.name != new.metadata.name);
    others.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    for old in &others {
        conflict(old, new)?;
    }
    scripts_load(new)
}

/// Karmada's rule: one script per operation and target, across customizations.
fn conflict(
    old: &ResourceInterpreterCustomization,
    new: &ResourceInterpreterCustomization,
) -> Result<(), String> {
    if old.spec.target != new.spec.target {
        return Ok(());
    }
    for operation in Operation::ALL {
        if operation == Operation::InterpretDependency {
            continue;
        }
        if old.spec.customizations.script(operation).is_some()
            && new.spec.customizations.script(operation).is_some()
        {
            return Err(format!(
                "conflicting with InterpreterOperation({}) of existing ResourceInterpreterCustomization({})",
                operation.name(),
                old.metadata.name.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(())
}

fn scripts_load(customization: &ResourceInterpreterCustomization) -> Result<(), String> {
    for operation in Operation::ALL {
        if let Some(script) = customization.spec.customizations.script(operation) {
            check_script(script).map_err(|error| {
                format!(
                    "InterpreterOperation({}) Lua script error: {error}",
                    operation.name()
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn customization(name: &str, kind: &str, rules: Value) -> ResourceInterpreterCustomization {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "config.karmada.io/v1alpha1",
            "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": name},
            "spec": {"target": {"apiVersion": "apps/v1", "kind": kind}, "customizations": rules},
        }))
        .expect("customization")
    }

    const RETAIN: &str = "function Retain(d, o) return d end";
    const DEPS: &str = "function GetDependencies(o) return {} end";

    #[test]
    fn the_same_operation_twice_for_one_target_conflicts() {
        let old = customization(
            "a",
            "Deployment",
            serde_json::json!({"retention": {"luaScript": RETAIN}}),
        );
        let new = customization(
            "b",
            "Deployment",
            serde_json::json!({"retention": {"luaScript": RETAIN}}),
        );
        assert_eq!(
            conflict(&old, &new).unwrap_err(),
            "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(a)"
        );
    }

    #[test]
    fn dependencies_other_operations_and_other_targets_do_not_conflict() {
        let deps = serde_json::json!({"dependencyInterpretation": {"luaScript": DEPS}});
        let old = customization("a", "Deployment", deps.clone());
        assert!(conflict(&old, &customization("b", "Deployment", deps)).is_ok());
        let retain = serde_json::json!({"retention": {"luaScript": RETAIN}});
        assert!(conflict(&old, &customization("c", "Deployment", retain.clone())).is_ok());
        let old = customization("a", "Deployment", retain.clone());
        assert!(conflict(&old, &customization("d", "StatefulSet", retain)).is_ok());
    }

    #[test]
    fn a_script_that_does_not_load_is_named_by_its_operation() {
        let broken = customization(
            "a",
            "Deployment",
            serde_json::json!({"healthInterpretation": {"luaScript": "function InterpretHealth(o) return o.x =="}}),
        );
        let error = scripts_load(&broken).unwrap_err();
        assert!(
            error.starts_with("InterpreterOperation(InterpretHealth) Lua script error: "),
            "{error}"
        );
        let fine = customization(
            "b",
            "Deployment",
            serde_json::json!({"retention": {"luaScript": RETAIN}}),
        );
        assert!(scripts_load(&fine).is_ok());
    }

    fn targeted(kind: &str, rules: Value) -> ResourceInterpreterCustomization {
        let mut customization = customization("r", kind, rules);
        customization.spec.target.api_version = "foo/v1".into();
        customization
    }

    #[test]
    fn karmada_customization_rule_cases_conflict_only_on_one_operation_of_one_target() {
        // Karmada's Test_validateCustomizationRule: the same (non-empty) script field on the
        // same apiVersion and kind conflicts, InterpretDependency excepted.
        let script = |field: &str| serde_json::json!({field: {"luaScript": "LuaScript"}});
        let mut other_version = targeted("kind", serde_json::json!({}));
        other_version.spec.target.api_version = "foo/v2".into();
        assert!(
            conflict(
                &targeted("kind", serde_json::json!({})),
                &targeted("bar", serde_json::json!({}))
            )
            .is_ok()
        );
        assert!(conflict(&targeted("kind", serde_json::json!({})), &other_version).is_ok());
        for (field, operation) in [
            ("retention", "Retain"),
            ("replicaResource", "InterpretReplica"),
            ("replicaRevision", "ReviseReplica"),
            ("statusReflection", "InterpretStatus"),
            ("statusAggregation", "AggregateStatus"),
            ("healthInterpretation", "InterpretHealth"),
        ] {
            let error = conflict(
                &targeted("kind", script(field)),
                &targeted("kind", script(field)),
            )
            .expect_err(field);
            assert_eq!(
                error,
                format!(
                    "conflicting with InterpreterOperation({operation}) of existing ResourceInterpreterCustomization(r)"
                )
            );
        }
        let deps = script("dependencyInterpretation");
        assert!(conflict(&targeted("kind", deps.clone()), &targeted("kind", deps)).is_ok());
    }

    #[test]
    fn a_customization_is_not_checked_against_its_own_stored_version() {
        // Karmada's Test_validateResourceInterpreterCustomizations.
        let rules = serde_json::json!({"retention": {"luaScript": "function Retain(desiredObj, observedObj) end"}});
        let new = customization("test", "kind", rules.clone());
        assert!(admissible(&new, vec![customization("test", "kind", rules.clone())]).is_ok());
        assert!(admissible(&new, vec![customization("other", "kind", rules)]).is_err());
    }

    #[test]
    fn karmada_lua_check_cases_load_or_fail_per_operation() {
        // Karmada's Test_checkCustomizationsRule and TestValidatingAdmission_Handle.
        let all = serde_json::json!({
            "retention": {"luaScript": "function Retain(desiredObj, observedObj)\n  desiredObj.spec.fieldFoo = observedObj.spec.fieldFoo\n  return desiredObj\nend"},
            "replicaResource": {"luaScript": "function GetReplicas(desiredObj)\n  nodeClaim = {}\n  result = {}\n  result.replica = desiredObj.spec.replicas\n  result.resourceRequest = desiredObj.spec.template.spec.containers[0].resources.limits\n  nodeClaim.nodeSelector = desiredObj.spec.template.spec.nodeSelector\n  result.nodeClaim = nodeClaim\n  return result\nend"},
            "replicaRevision": {"luaScript": "function ReviseReplica(desiredObj, desiredReplica)\n  desiredObj.spec.replicas = desiredReplica\n  return desiredObj\nend"},
            "statusReflection": {"luaScript": "function ReflectStatus(observedObj)\n  status = {}\n  status.readyReplicas = observedObj.status.observedObj\n  return status\nend"},
            "statusAggregation": {"luaScript": "function AggregateStatus(desiredObj, statusItems)\n  for i = 1, #items do\n    desiredObj.status.readyReplicas = desiredObj.status.readyReplicas + items[i].readyReplicas\n  end\n  return desiredObj\nend"},
            "healthInterpretation": {"luaScript": "function InterpretHealth(observedObj)\n  if observedObj.status.readyReplicas == observedObj.spec.replicas then\n    return true\n  end\nend"},
            "dependencyInterpretation": {"luaScript": "function GetDependencies(desiredObj)\n  dependencies = {}\n  serviceAccountName = desiredObj.spec.template.spec.serviceAccountName\n  if serviceAccountName ~= nil and serviceAccountName ~= \"default\" then\n    dependency = {}\n    dependency.apiVersion = \"v1\"\n    dependency.kind = \"ServiceAccount\"\n    dependency.name = serviceAccountName\n    dependency.namespace = desiredObj.metadata.namespace\n    dependencies[1] = dependency\n  end\n  return dependencies\nend"},
        });
        assert_eq!(scripts_load(&customization("a", "kind", all)), Ok(()));
        for (field, header, operation) in [
            ("retention", "Retain(desiredObj, observedObj)", "Retain"),
            (
                "replicaResource",
                "GetReplicas(desiredObj)",
                "InterpretReplica",
            ),
            (
                "replicaRevision",
                "ReviseReplica(desiredObj, desiredReplica)",
                "ReviseReplica",
            ),
            (
                "statusReflection",
                "ReflectStatus(observedObj)",
                "InterpretStatus",
            ),
            (
                "statusAggregation",
                "AggregateStatus(desiredObj, statusItems)",
                "AggregateStatus",
            ),
            (
                "healthInterpretation",
                "InterpretHealth(observedObj)",
                "InterpretHealth",
            ),
            (
                "dependencyInterpretation",
                "GetDependencies(desiredObj)",
                "InterpretDependency",
            ),
        ] {
            let broken = serde_json::json!({field: {"luaScript": format!("function {header}")}});
            let error = scripts_load(&customization("a", "kind", broken)).expect_err(field);
            assert!(
                error.starts_with(&format!(
                    "InterpreterOperation({operation}) Lua script error: "
                )),
                "{error}"
            );
        }
        // A customization without scripts (Handle_ValidRequest_AllowsAdmission) is admitted.
        assert!(
            admissible(
                &customization("a", "bar", serde_json::json!({})),
                Vec::new()
            )
            .is_ok()
        );
    }
}
