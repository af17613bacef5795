//! RBAC escalation prevention, as kube-apiserver's RBAC storage enforces it: a Role or
//! ClusterRole may only grant what its writer already holds (or the writer has `escalate` on
//! it), and a RoleBinding or ClusterRoleBinding may only bind a role whose permissions its writer
//! holds (or the writer has `bind` on that role). Members of `system:masters` are exempt.
//!
//! Follows `pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go`
//! and `pkg/registry/rbac/escalation_check.go` (Kubernetes v1.32); the rule comparison is in
//! [`super::lifted::escalation`].

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::authn::UserInfo;
use super::authz::{Authorizer, MASTERS_GROUP, RequestAttributes};
use super::lifted::escalation::{escalation_message, full_authority, uncovered};
use super::lifted::forbidden::go_quote;
use super::lifted::rbac::PolicyRule;
use crate::catalog::ResourceInfo;
use crate::error::{ApiError, Details};
use crate::registry::{Registry, WriteGuard};

const GROUP: &str = "rbac.authorization.k8s.io";

/// The escalation check of one request by `user` on an RBAC resource.
#[derive(Debug)]
pub struct EscalationGuard {
    user: UserInfo,
    authorizer: Authorizer,
    /// The request's URL path, namespace and name (what `escalate` is authorized against).
    path: String,
    namespace: Option<String>,
    name: Option<String>,
}

impl EscalationGuard {
    /// The guard for a write to `info`, or `None` when the resource is not an RBAC role or
    /// binding or the user is exempt.
    pub fn for_request(
        info: &ResourceInfo,
        user: &UserInfo,
        authorizer: &Authorizer,
        path: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Option<Arc<dyn WriteGuard>> {
        let guarded = info.group == GROUP
            && info.crd.is_none()
            && matches!(
                info.plural.as_str(),
                "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings"
            );
        if !guarded || user.groups.iter().any(|g| g == MASTERS_GROUP) {
            return None;
        }
        Some(Arc::new(EscalationGuard {
            user: user.clone(),
            authorizer: authorizer.clone(),
            path: path.to_owned(),
            namespace: namespace.filter(|_| info.namespaced).map(str::to_owned),
            name: name.map(str::to_owned),
        }))
    }

    fn allowed(&self, verb: &str, resource: &str, namespace: &str, name: &str) -> bool {
        let attributes = RequestAttributes {
            user: &self.user,
            verb,
            group: GROUP,
            resource,
            subresource: "",
            namespace: Some(namespace).filter(|ns| !ns.is_empty()),
            name: Some(name).filter(|n| !n.is_empty()),
            path: &self.path,
        };
        self.authorizer.authorize(&attributes).allowed
    }

    /// Refuses `rules` unless the user holds them all (`ConfirmNoEscalation`).
    fn confirm_no_escalation(&self, rules: &[PolicyRule]) -> Result<(), String> {
        let namespace = self.namespace.as_deref().unwrap_or("");
        let (owned, errors) = match self.authorizer.rbac() {
            Some(rbac) => rbac.rules_for(&self.user, namespace),
            None => (Vec::new(), Vec::new()),
        };
        let missing = uncovered(&owned, rules);
        if missing.is_empty() {
            return Ok(());
        }
        Err(escalation_message(
            &self.user.name,
            &self.user.groups,
            missing,
            &errors,
        ))
    }

    fn check_role(&self, info: &ResourceInfo, new: &Value) -> Result<(), String> {
        let namespace = self.namespace.as_deref().unwrap_or("");
        if self.allowed(
            "escalate",
            &info.plural,
            namespace,
            self.name.as_deref().unwrap_or(""),
        ) {
            return Ok(());
        }
        let role: RoleBody = serde_json::from_value(new.clone()).unwrap_or_default();
        self.confirm_no_escalation(&role.rules.unwrap_or_default())?;
        if info.plural == "clusterroles" && role.aggregation_rule.is_some_and(|r| !r.is_null()) {
            self.confirm_no_escalation(&full_authority())
                .map_err(|_| "must have cluster-admin privileges to use the aggregationRule")?;
        }
        Ok(())
    }

    fn check_binding(&self, new: &Value) -> Result<(), String> {
        let namespace = self.namespace.as_deref().unwrap_or("");
        let binding: BindingBody = serde_json::from_value(new.clone()).unwrap_or_default();
        let role_ref = binding.role_ref;
        let resource = match role_ref.kind.as_str() {
            "ClusterRole" => "clusterroles",
            "Role" => "roles",
            other => {
                return Err(format!(
                    "unsupported role reference kind: {}",
                    go_quote(other)
                ));
            }
        };
        if role_ref.api_group == GROUP && self.allowed("bind", resource, namespace, &role_ref.name)
        {
            return Ok(());
        }
        let role_namespace = if resource == "roles" { namespace } else { "" };
        let rules = self
            .authorizer
            .rbac()
            .and_then(|rbac| rbac.role_rules(role_namespace, &role_ref.name))
            .ok_or_else(|| format!("{resource}.{GROUP} {} not found", go_quote(&role_ref.name)))?;
        self.confirm_no_escalation(&rules)
    }
}

/// Brings the RBAC policy up to every write acknowledged before this request, as kube-apiserver's
/// escalation check reads roles and bindings from storage: a Role created just before a
/// RoleBinding to it is found.
pub async fn catch_up(registry: &Registry, authorizer: &Authorizer) -> Result<(), ApiError> {
    registry.cache_is_current().await?;
    if let Some(rbac) = authorizer.rbac() {
        rbac.refresh();
    }
    Ok(())
}

impl WriteGuard for EscalationGuard {
    fn check(&self, info: &ResourceInfo, new: &Value, old: Option<&Value>) -> Result<(), ApiError> {
        if old.is_some_and(|old| only_gc_fields_change(new, old)) {
            return Ok(());
        }
        let outcome = match info.plural.as_str() {
            "roles" | "clusterroles" => self.check_role(info, new),
            _ => self.check_binding(new),
        };
        outcome.map_err(|reason| forbidden(info, new, &reason))
    }
}

/// An update that only touches owner references, finalizers or managed fields is how the
/// garbage collector finishes a deletion; kube lets it through (`IsOnlyMutatingGCFields`).
fn only_gc_fields_change(new: &Value, old: &Value) -> bool {
    let strip = |object: &Value| {
        let mut object = object.clone();
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in [
                "ownerReferences",
                "finalizers",
                "selfLink",
                "managedFields",
                "resourceVersion",
            ] {
                meta.remove(field);
            }
        }
        object
    };
    strip(new) == strip(old)
}

/// `roles.rbac.authorization.k8s.io "name" is forbidden: <reason>` (`errors.NewForbidden`).
fn forbidden(info: &ResourceInfo, object: &Value, reason: &str) -> ApiError {
    let name = crate::object::name(object).unwrap_or("").to_owned();
    let resource = info.qualified_plural();
    let message = if name.is_empty() {
        format!("{resource} is forbidden: {reason}")
    } else {
        format!("{resource} {} is forbidden: {reason}", go_quote(&name))
    };
    ApiError::forbidden(message).with_details(Details {
        name,
        group: info.group.clone(),
        kind: info.plural.clone(),
        causes: Vec::new(),
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RoleBody {
    rules: Option<Vec<PolicyRule>>,
    aggregation_rule: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct BindingBody {
    role_ref: RoleRefBody,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct RoleRefBody {
    api_group: String,
    kind: String,
    name: String,
}
