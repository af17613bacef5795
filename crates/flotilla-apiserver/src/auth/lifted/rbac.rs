//! RBAC rule matching and subject matching.
//!
//! Follows Kubernetes v1.32: `pkg/apis/rbac/v1/evaluation_helpers.go` (`VerbMatches`,
//! `APIGroupMatches`, `ResourceMatches`, `ResourceNameMatches`, `NonResourceURLMatches`),
//! `plugin/pkg/auth/authorizer/rbac/rbac.go` (`RuleAllows`: a resource request is matched on
//! verb, group, `resource/subresource` and name; a non-resource request on verb and path) and
//! `pkg/registry/rbac/validation/rule.go` (`appliesToUser`: a ServiceAccount subject without a
//! namespace takes the binding's). Written anew from reading those files.

use serde::{Deserialize, Deserializer};

use crate::auth::authn::UserInfo;

/// Matches every verb, group, resource or URL.
const ALL: &str = "*";

/// One rule of a Role or ClusterRole. Absent lists are empty (which match nothing, except
/// `resource_names`, where empty means every name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    #[serde(deserialize_with = "nullable")]
    pub verbs: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    pub api_groups: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    pub resources: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    pub resource_names: Vec<String>,
    #[serde(rename = "nonResourceURLs", deserialize_with = "nullable")]
    pub non_resource_urls: Vec<String>,
}

/// A list that may be written as `null`.
fn nullable<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A subject of a RoleBinding or ClusterRoleBinding.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// What is being asked, in the terms rules speak.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    Resource {
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: &'a str,
        name: &'a str,
    },
    NonResource {
        verb: &'a str,
        path: &'a str,
    },
}

/// The user name of a service account: `system:serviceaccount:<namespace>:<name>`.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// Whether `rule` allows `request` (upstream `RuleAllows`).
pub fn rule_allows(rule: &PolicyRule, request: &Request<'_>) -> bool {
    match *request {
        Request::Resource {
            verb,
            group,
            resource,
            subresource,
            name,
        } => {
            let combined;
            let resource = if subresource.is_empty() {
                resource
            } else {
                combined = format!("{resource}/{subresource}");
                &combined
            };
            verb_matches(rule, verb)
                && api_group_matches(rule, group)
                && resource_matches(rule, resource, subresource)
                && resource_name_matches(rule, name)
        }
        Request::NonResource { verb, path } => {
            verb_matches(rule, verb) && non_resource_url_matches(rule, path)
        }
    }
}

/// Whether any rule allows the request.
pub fn rules_allow(rules: &[PolicyRule], request: &Request<'_>) -> bool {
    rules.iter().any(|rule| rule_allows(rule, request))
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups.iter().any(|g| g == ALL || g == group)
}

/// `combined` is `resource` or `resource/subresource`; `*/<subresource>` matches that
/// subresource of every resource.
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    rule.resources.iter().any(|r| {
        r == ALL
            || r == combined
            || (!subresource.is_empty()
                && r.strip_prefix("*/").is_some_and(|sub| sub == subresource))
    })
}

/// An empty list allows every name; otherwise the request must name one of them (a list or a
/// create, which names nothing, is not allowed by a rule with names).
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.iter().any(|n| n == name)
}

/// Exact match, `*`, or a trailing `*` as a prefix match.
fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().any(|url| {
        url == ALL
            || url == path
            || url
                .strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix))
    })
}

/// Whether a binding's subject names `user`. `binding_namespace` is the RoleBinding's namespace,
/// empty for a ClusterRoleBinding.
pub fn applies_to(user: &UserInfo, subject: &Subject, binding_namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.groups.contains(&subject.name),
        "ServiceAccount" => {
            let namespace = if subject.namespace.is_empty() {
                binding_namespace
            } else {
                &subject.namespace
            };
            !namespace.is_empty() && user.name == service_account_username(namespace, &subject.name)
        }
        _ => false,
    }
}

/// Appends the rules of `from` that `into` does not hold yet, in order (how the ClusterRole
/// aggregation controller in `pkg/controller/clusterroleaggregation` merges rules: roles sorted
/// by name, duplicates dropped by deep equality).
pub fn merge_rules(into: &mut Vec<PolicyRule>, from: &[PolicyRule]) {
    for rule in from {
        if !into.contains(rule) {
            into.push(rule.clone());
        }
    }
}

#[cfg(test)]
mod tests;
