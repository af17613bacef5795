//! The RBAC authorizer: Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as the watch
//! cache holds them, evaluated per request with no store read.
//!
//! A `Policy` snapshot is compiled from the cache (roles by name, bindings indexed by the user
//! names, groups and service accounts they name) and replaced whenever an RBAC object changes
//! ([`Rbac::follow`]), so a request costs a few hash lookups for the caller's name and groups,
//! whatever the number of bindings. Matching rules are in [`crate::auth::lifted::rbac`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::authn::UserInfo;
use super::lifted::forbidden::go_quote;
use super::lifted::rbac::{
    PolicyRule, Request, Subject, applies_to, rules_allow, service_account_username,
};
use crate::cache::WatchCache;

/// The storage prefix of the RBAC group.
const PREFIX: &str = "/registry/rbac.authorization.k8s.io/";

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
    policy: RwLock<Arc<Policy>>,
}

/// The RBAC objects compiled for lookup.
#[derive(Debug, Default)]
struct Policy {
    /// (namespace, name) → rules; ClusterRoles under namespace `""`.
    roles: HashMap<(String, String), Arc<Vec<PolicyRule>>>,
    /// ClusterRoleBindings.
    cluster: Bindings,
    /// RoleBindings per namespace.
    namespaced: HashMap<String, Bindings>,
}

/// Bindings in key (name) order, and which of them name a user or a group: entries are
/// (binding index, subject index).
#[derive(Debug, Default)]
struct Bindings {
    list: Vec<Binding>,
    by_user: HashMap<String, Vec<(usize, usize)>>,
    by_group: HashMap<String, Vec<(usize, usize)>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Binding {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    role_ref: RoleRef,
    #[serde(default, deserialize_with = "nullable_subjects")]
    subjects: Vec<Subject>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Metadata {
    name: String,
    namespace: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RoleRef {
    kind: String,
    name: String,
}

#[derive(Debug, Deserialize)]
struct Role {
    #[serde(default)]
    metadata: Metadata,
    #[serde(default, deserialize_with = "nullable_rules")]
    rules: Vec<PolicyRule>,
}

fn nullable_subjects<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Subject>, D::Error> {
    Ok(Option::<Vec<Subject>>::deserialize(d)?.unwrap_or_default())
}

fn nullable_rules<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PolicyRule>, D::Error> {
    Ok(Option::<Vec<PolicyRule>>::deserialize(d)?.unwrap_or_default())
}

impl Rbac {
    /// An authorizer over what `cache` holds now; [`Rbac::follow`] keeps it current.
    pub fn new(cache: Arc<WatchCache>) -> Rbac {
        let policy = Arc::new(Policy::compile(&cache));
        Rbac {
            cache,
            policy: RwLock::new(policy),
        }
    }

    /// Recompiles the policy whenever an RBAC object changes; runs until dropped. A burst of
    /// changes costs one recompilation.
    pub async fn follow(self: Arc<Self>) {
        loop {
            let Ok(subscription) = self.cache.subscribe(PREFIX.as_bytes(), None) else {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            };
            let mut live = subscription.live;
            self.recompile();
            loop {
                match live.recv().await {
                    Ok(change) if change.object.key.starts_with(PREFIX.as_bytes()) => {
                        while live.try_recv().is_ok() {}
                        self.recompile();
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return,
                }
            }
        }
    }

    /// Recompiles the policy from the cache now, without waiting for [`Rbac::follow`].
    pub fn refresh(&self) {
        self.recompile();
    }

    fn recompile(&self) {
        let policy = Arc::new(Policy::compile(&self.cache));
        *self.policy.write() = policy;
    }

    /// Whether a ClusterRoleBinding, or a RoleBinding in `namespace` (empty for cluster-scoped
    /// requests), grants `user` the request.
    pub fn authorize(&self, user: &UserInfo, namespace: &str, request: &Request<'_>) -> Verdict {
        let policy = self.policy.read().clone();
        let mut errors = Vec::new();
        if let Some(reason) = policy.allows(&policy.cluster, user, "", request, &mut errors) {
            return Verdict::Allowed(reason);
        }
        if !namespace.is_empty()
            && let Some(bindings) = policy.namespaced.get(namespace)
            && let Some(reason) = policy.allows(bindings, user, namespace, request, &mut errors)
        {
            return Verdict::Allowed(reason);
        }
        Verdict::NoOpinion(errors)
    }
}

impl Rbac {
    /// Every rule granted to `user` in `namespace` (cluster-wide ones included), in binding
    /// order, and the errors met (bindings to missing roles): what a SelfSubjectRulesReview
    /// reports, as upstream's `RulesFor`.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let policy = self.policy.read().clone();
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        policy.collect(&policy.cluster, user, "", &mut rules, &mut errors);
        if !namespace.is_empty()
            && let Some(bindings) = policy.namespaced.get(namespace)
        {
            policy.collect(bindings, user, namespace, &mut rules, &mut errors);
        }
        (rules, errors)
    }
}

impl Rbac {
    /// The rules of Role `namespace/name`, or of ClusterRole `name` when `namespace` is empty.
    pub fn role_rules(&self, namespace: &str, name: &str) -> Option<Arc<Vec<PolicyRule>>> {
        let policy = self.policy.read().clone();
        policy
            .roles
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }
}

impl Policy {
    fn compile(cache: &WatchCache) -> Policy {
        let mut policy = Policy::default();
        for (plural, namespaced) in [("clusterroles", false), ("roles", true)] {
            let (objects, _) = cache.list(format!("{PREFIX}{plural}/").as_bytes(), None);
            for object in objects {
                let Some(role) = decode::<Role>(&object.key, &object.raw()) else {
                    continue;
                };
                let namespace = if namespaced {
                    role.metadata.namespace
                } else {
                    String::new()
                };
                policy
                    .roles
                    .insert((namespace, role.metadata.name), Arc::new(role.rules));
            }
        }
        for (plural, namespaced) in [("clusterrolebindings", false), ("rolebindings", true)] {
            let (objects, _) = cache.list(format!("{PREFIX}{plural}/").as_bytes(), None);
            for object in objects {
                let Some(binding) = decode::<Binding>(&object.key, &object.raw()) else {
                    continue;
                };
                let bindings = if namespaced {
                    policy
                        .namespaced
                        .entry(binding.metadata.namespace.clone())
                        .or_default()
                } else {
                    &mut policy.cluster
                };
                bindings.add(binding, namespaced);
            }
        }
        policy
    }

    /// The first binding in `bindings` that names `user` and whose role allows the request.
    fn allows(
        &self,
        bindings: &Bindings,
        user: &UserInfo,
        namespace: &str,
        request: &Request<'_>,
        errors: &mut Vec<String>,
    ) -> Option<String> {
        self.applicable(bindings, user, namespace, errors)
            .find(|(_, _, rules)| rules_allow(rules, request))
            .map(|(binding, subject, _)| describe(binding, subject, namespace))
    }

    /// Appends the rules of every binding in `bindings` that names `user`.
    fn collect(
        &self,
        bindings: &Bindings,
        user: &UserInfo,
        namespace: &str,
        rules: &mut Vec<PolicyRule>,
        errors: &mut Vec<String>,
    ) {
        for (_, _, granted) in self.applicable(bindings, user, namespace, errors) {
            rules.extend(granted.iter().cloned());
        }
    }

    /// The bindings that name `user`, in binding order, each with its first subject naming the
    /// user (upstream's `appliesTo`) and its role's rules. A missing role is an error, not a
    /// binding.
    fn applicable<'p>(
        &'p self,
        bindings: &'p Bindings,
        user: &'p UserInfo,
        namespace: &'p str,
        errors: &'p mut Vec<String>,
    ) -> impl Iterator<Item = (&'p Binding, &'p Subject, &'p Arc<Vec<PolicyRule>>)> + 'p {
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        candidates.extend(bindings.by_user.get(&user.name).into_iter().flatten());
        for group in &user.groups {
            candidates.extend(bindings.by_group.get(group).into_iter().flatten());
        }
        candidates.sort_unstable();
        candidates.dedup_by_key(|(binding, _)| *binding);
        candidates
            .into_iter()
            .filter_map(move |(index, subject_index)| {
                let binding = &bindings.list[index];
                let subject = &binding.subjects[subject_index];
                if !applies_to(user, subject, namespace) {
                    return None;
                }
                let role_key = match binding.role_ref.kind.as_str() {
                    "ClusterRole" => (String::new(), binding.role_ref.name.clone()),
                    "Role" if !namespace.is_empty() => {
                        (namespace.to_owned(), binding.role_ref.name.clone())
                    }
                    _ => return None,
                };
                let Some(rules) = self.roles.get(&role_key) else {
                    let singular = if role_key.0.is_empty() {
                        "clusterrole"
                    } else {
                        "role"
                    };
                    errors.push(format!(
                        "{singular}.rbac.authorization.k8s.io {} not found",
                        go_quote(&binding.role_ref.name)
                    ));
                    return None;
                };
                Some((binding, subject, rules))
            })
    }
}

impl Bindings {
    fn add(&mut self, binding: Binding, namespaced: bool) {
        let index = self.list.len();
        for (subject_index, subject) in binding.subjects.iter().enumerate() {
            let entry = (index, subject_index);
            match subject.kind.as_str() {
                "User" => self
                    .by_user
                    .entry(subject.name.clone())
                    .or_default()
                    .push(entry),
                "Group" => self
                    .by_group
                    .entry(subject.name.clone())
                    .or_default()
                    .push(entry),
                "ServiceAccount" => {
                    let namespace = if !subject.namespace.is_empty() {
                        &subject.namespace
                    } else if namespaced {
                        &binding.metadata.namespace
                    } else {
                        continue;
                    };
                    if namespace.is_empty() {
                        continue;
                    }
                    self.by_user
                        .entry(service_account_username(namespace, &subject.name))
                        .or_default()
                        .push(entry);
                }
                _ => {}
            }
        }
        self.list.push(binding);
    }
}

/// Why a request was allowed, worded as upstream's binding describers in
/// `pkg/registry/rbac/validation/rule.go`.
fn describe(binding: &Binding, subject: &Subject, namespace: &str) -> String {
    let by = if namespace.is_empty() {
        format!("ClusterRoleBinding {}", go_quote(&binding.metadata.name))
    } else {
        format!(
            "RoleBinding {}",
            go_quote(&format!("{}/{namespace}", binding.metadata.name))
        )
    };
    let subject_name = match subject.kind.as_str() {
        "ServiceAccount" if !subject.namespace.is_empty() => {
            format!("{}/{}", subject.name, subject.namespace)
        }
        "ServiceAccount" => format!("{}/{namespace}", subject.name),
        _ => subject.name.clone(),
    };
    format!(
        "RBAC: allowed by {by} of {} {} to {} {}",
        binding.role_ref.kind,
        go_quote(&binding.role_ref.name),
        subject.kind,
        go_quote(&subject_name)
    )
}

fn decode<T: serde::de::DeserializeOwned>(key: &[u8], json: &[u8]) -> Option<T> {
    serde_json::from_slice(json)
        .inspect_err(|error| {
            tracing::warn!(key = %String::from_utf8_lossy(key), %error, "ignoring an undecodable RBAC object");
        })
        .ok()
}

#[cfg(test)]
mod tests;
