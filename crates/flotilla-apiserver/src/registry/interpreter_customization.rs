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
        let mut others: Vec<ResourceInterpreterCustomization> = others
            .into_iter()
            .filter_map(|o| serde_json::from_value(o.value()).ok())
            .filter(|o: &ResourceInterpreterCustomization| o.metadata.name != new.metadata.name)
            .collect();
        others.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        for old in &others {
            conflict(old, &new).map_err(denied)?;
        }
        scripts_load(&new).map_err(denied)
    }
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
}
