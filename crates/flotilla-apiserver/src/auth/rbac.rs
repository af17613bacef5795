//! The RBAC authorizer: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as the watch
//! cache holds them, evaluated per request with no store read.
//!
//! Each object is parsed once per revision and kept in a small memo keyed by storage key, so a
//! request costs a walk over the bindings that could apply (all ClusterRoleBindings, the
//! RoleBindings of the request's namespace) and a lookup of each matching role. Matching rules
//! are in [`crate::auth::lifted::rbac`].

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use flotilla_store::Revision;
use parking_lot::RwLock;
use serde::Deserialize;

use super::authn::UserInfo;
use super::lifted::forbidden::go_quote;
use super::lifted::rbac::{PolicyRule, Request, Subject, applies_to, rules_allow};
use crate::cache::{CachedObject, WatchCache};

/// The storage prefix of the RBAC group.
const PREFIX: &str = "/registry/rbac.authorization.k8s.io/";
/// Above this many memo entries, entries whose object is gone are dropped.
const MEMO_PRUNE_AT: usize = 4096;

/// What RBAC concluded about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed, with the binding and role that allowed it.
    Allowed(String),
    /// No rule allows it; the reasons are errors met on the way (a binding to a missing role),
    /// which kube-apiserver appends to the 403 message.
    NoOpinion(Vec<String>),
}

/// Evaluates requests against the RBAC objects in the watch cache.
#[derive(Debug)]
pub struct Rbac {
    cache: Arc<WatchCache>,
    memo: RwLock<HashMap<Bytes, (Revision, Arc<Parsed>)>>,
}

#[derive(Debug)]
enum Parsed {
    Role(Vec<PolicyRule>),
    Binding(Binding),
    /// Undecodable; grants nothing.
    Invalid,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Binding {
    #[serde(default)]
    role_ref: RoleRef,
    #[serde(default, deserialize_with = "nullable_subjects")]
    subjects: Vec<Subject>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoleRef {
    kind: String,
    name: String,
}

#[derive(Debug, Deserialize)]
struct RoleBody {
    #[serde(default, deserialize_with = "nullable_rules")]
    rules: Vec<PolicyRule>,
}

fn nullable_subjects<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Subject>, D::Error> {
    Ok(Option::<Vec<Subject>>::deserialize(d)?.unwrap_or_default())
}

fn nullable_rules<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PolicyRule>, D::Error> {
    Ok(Option::<Vec<PolicyRule>>::deserialize(d)?.unwrap_or_default())
}

/// Storage key prefix of `plural` in the RBAC group, optionally in one namespace.
fn key(plural: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{PREFIX}{plural}/{ns}/{name}"),
        None => format!("{PREFIX}{plural}/{name}"),
    }
}

impl Rbac {
    pub fn new(cache: Arc<WatchCache>) -> Rbac {
        Rbac {
            cache,
            memo: RwLock::new(HashMap::new()),
        }
    }

    /// Whether a ClusterRoleBinding, or a RoleBinding in `namespace` (empty for cluster-scoped
    /// requests), grants `user` the request.
    pub fn authorize(&self, user: &UserInfo, namespace: &str, request: &Request<'_>) -> Verdict {
        let mut errors = Vec::new();
        let (bindings, _) = self
            .cache
            .list(key("clusterrolebindings", None, "").as_bytes(), None);
        for object in &bindings {
            if let Some(reason) = self.binding_allows(object, user, "", request, &mut errors) {
                return Verdict::Allowed(reason);
            }
        }
        if !namespace.is_empty() {
            let prefix = key("rolebindings", Some(namespace), "");
            let (bindings, _) = self.cache.list(prefix.as_bytes(), None);
            for object in &bindings {
                if let Some(reason) =
                    self.binding_allows(object, user, namespace, request, &mut errors)
                {
                    return Verdict::Allowed(reason);
                }
            }
        }
        Verdict::NoOpinion(errors)
    }

    fn binding_allows(
        &self,
        object: &Arc<CachedObject>,
        user: &UserInfo,
        namespace: &str,
        request: &Request<'_>,
        errors: &mut Vec<String>,
    ) -> Option<String> {
        let parsed = self.parsed(object);
        let Parsed::Binding(binding) = parsed.as_ref() else {
            return None;
        };
        let subject = binding
            .subjects
            .iter()
            .find(|s| applies_to(user, s, namespace))?;
        let (role_key, missing) = match binding.role_ref.kind.as_str() {
            "ClusterRole" => (
                key("clusterroles", None, &binding.role_ref.name),
                "clusterrole",
            ),
            "Role" if !namespace.is_empty() => (
                key("roles", Some(namespace), &binding.role_ref.name),
                "role",
            ),
            _ => return None,
        };
        let Some(role) = self.cache.get(role_key.as_bytes()) else {
            errors.push(format!(
                "{missing}.rbac.authorization.k8s.io {} not found",
                go_quote(&binding.role_ref.name)
            ));
            return None;
        };
        let role = self.parsed(&role);
        let Parsed::Role(rules) = role.as_ref() else {
            return None;
        };
        if !rules_allow(rules, request) {
            return None;
        }
        // Worded as upstream's binding describers in pkg/registry/rbac/validation/rule.go.
        let binding_name = object_name(object);
        let by = if namespace.is_empty() {
            format!("ClusterRoleBinding {}", go_quote(&binding_name))
        } else {
            format!(
                "RoleBinding {}",
                go_quote(&format!("{binding_name}/{namespace}"))
            )
        };
        let subject_name = match subject.kind.as_str() {
            "ServiceAccount" if !subject.namespace.is_empty() => {
                format!("{}/{}", subject.name, subject.namespace)
            }
            "ServiceAccount" => format!("{}/{namespace}", subject.name),
            _ => subject.name.clone(),
        };
        Some(format!(
            "RBAC: allowed by {by} of {} {} to {} {}",
            binding.role_ref.kind,
            go_quote(&binding.role_ref.name),
            subject.kind,
            go_quote(&subject_name)
        ))
    }

    /// The parsed form of a cached RBAC object, memoized per revision.
    fn parsed(&self, object: &Arc<CachedObject>) -> Arc<Parsed> {
        if let Some((revision, parsed)) = self.memo.read().get(&object.key)
            && *revision == object.revision
        {
            return parsed.clone();
        }
        let parsed = Arc::new(parse(object));
        let mut memo = self.memo.write();
        if memo.len() >= MEMO_PRUNE_AT {
            memo.retain(|key, _| self.cache.get(key).is_some());
        }
        memo.insert(object.key.clone(), (object.revision, parsed.clone()));
        parsed
    }
}

fn parse(object: &CachedObject) -> Parsed {
    let is_binding = object
        .key
        .starts_with(key("rolebindings", None, "").as_bytes())
        || object
            .key
            .starts_with(key("clusterrolebindings", None, "").as_bytes());
    let result = if is_binding {
        serde_json::from_slice::<Binding>(&object.json).map(Parsed::Binding)
    } else {
        serde_json::from_slice::<RoleBody>(&object.json).map(|r| Parsed::Role(r.rules))
    };
    result.unwrap_or_else(|error| {
        tracing::warn!(key = %String::from_utf8_lossy(&object.key), %error, "ignoring an undecodable RBAC object");
        Parsed::Invalid
    })
}

fn object_name(object: &CachedObject) -> String {
    let key = String::from_utf8_lossy(&object.key);
    key.rsplit('/').next().unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests;
