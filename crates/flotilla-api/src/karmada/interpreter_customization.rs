//! `config.karmada.io/v1alpha1` `ResourceInterpreterCustomization`: Lua rules that replace the
//! native interpreter's operations for one kind (Karmada's declarative interpreter). The Lua
//! runtime is [`super::lua`]; the controllers pick the rules (`interpreter/customized.rs`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, karmada_resource};

/// A cluster-scoped set of Lua rules for one target kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterCustomization {
    /// Always `config.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ResourceInterpreterCustomization>,
    /// Always `ResourceInterpreterCustomization`.
    #[serde(default)]
    pub kind: Kind<ResourceInterpreterCustomization>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The target and its rules.
    #[serde(default)]
    pub spec: ResourceInterpreterCustomizationSpec,
}
karmada_resource!(
    ResourceInterpreterCustomization,
    group = "config.karmada.io",
    version = "v1alpha1",
    kind = "ResourceInterpreterCustomization",
    plural = "resourceinterpretercustomizations",
    scope = ClusterResourceScope
);

/// `ResourceInterpreterCustomization.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterCustomizationSpec {
    /// The kind the rules are for.
    #[serde(default)]
    pub target: CustomizationTarget,
    /// The rules, one optional script per operation.
    #[serde(default)]
    pub customizations: CustomizationRules,
}

/// `spec.target`: `apiVersion` and `kind` of the objects the rules interpret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomizationTarget {
    /// `group/version` (`v1` for the core group).
    #[serde(default)]
    pub api_version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
}

/// One operation's rule: its Lua script.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LuaRule {
    /// The script; it defines the operation's global function.
    #[serde(default)]
    pub lua_script: String,
}

/// `spec.customizations`: which operations the resource's rules replace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomizationRules {
    /// `Retain(desiredObj, observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<LuaRule>,
    /// `GetReplicas(desiredObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_resource: Option<LuaRule>,
    /// `GetComponents(desiredObj)` (multi-component scheduling, gate `MultiplePodTemplatesScheduling`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_resource: Option<LuaRule>,
    /// `ReviseReplica(desiredObj, desiredReplica)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_revision: Option<LuaRule>,
    /// `ReflectStatus(observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reflection: Option<LuaRule>,
    /// `AggregateStatus(desiredObj, statusItems)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_aggregation: Option<LuaRule>,
    /// `InterpretHealth(observedObj)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_interpretation: Option<LuaRule>,
    /// `GetDependencies(desiredObj)`; the only operation several customizations of one kind
    /// may each define (their results are merged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_interpretation: Option<LuaRule>,
}

/// An operation a customization may replace, with Karmada's `InterpreterOperation` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// `Retain`.
    Retain,
    /// `InterpretReplica`.
    InterpretReplica,
    /// `InterpretComponent`.
    InterpretComponent,
    /// `ReviseReplica`.
    ReviseReplica,
    /// `InterpretStatus`.
    InterpretStatus,
    /// `AggregateStatus`.
    AggregateStatus,
    /// `InterpretHealth`.
    InterpretHealth,
    /// `InterpretDependency`.
    InterpretDependency,
}

impl Operation {
    /// Every operation, in Karmada's rule order.
    pub const ALL: [Operation; 8] = [
        Operation::Retain,
        Operation::InterpretReplica,
        Operation::InterpretComponent,
        Operation::ReviseReplica,
        Operation::InterpretStatus,
        Operation::AggregateStatus,
        Operation::InterpretHealth,
        Operation::InterpretDependency,
    ];

    /// Karmada's name of the operation.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Retain => "Retain",
            Operation::InterpretReplica => "InterpretReplica",
            Operation::InterpretComponent => "InterpretComponent",
            Operation::ReviseReplica => "ReviseReplica",
            Operation::InterpretStatus => "InterpretStatus",
            Operation::AggregateStatus => "AggregateStatus",
            Operation::InterpretHealth => "InterpretHealth",
            Operation::InterpretDependency => "InterpretDependency",
        }
    }
}

impl CustomizationRules {
    /// The script of `operation` (`None` when absent or empty).
    pub fn script(&self, operation: Operation) -> Option<&str> {
        let rule = match operation {
            Operation::Retain => &self.retention,
            Operation::InterpretReplica => &self.replica_resource,
            Operation::InterpretComponent => &self.component_resource,
            Operation::ReviseReplica => &self.replica_revision,
            Operation::InterpretStatus => &self.status_reflection,
            Operation::AggregateStatus => &self.status_aggregation,
            Operation::InterpretHealth => &self.health_interpretation,
            Operation::InterpretDependency => &self.dependency_interpretation,
        };
        rule.as_ref()
            .map(|r| r.lua_script.as_str())
            .filter(|s| !s.is_empty())
    }
}
