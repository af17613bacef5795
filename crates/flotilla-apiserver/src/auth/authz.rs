//! Authorization: may this user do this? Two authorizers in kube-apiserver's order: members of
//! `system:masters` may do everything (the privileged group authorizer), then RBAC
//! ([`super::rbac`]) over the Roles and bindings in the watch cache. A denial carries the message
//! kube-apiserver would put in the 403 status ([`forbidden_error`]).

use std::sync::Arc;

use super::authn::UserInfo;
use super::lifted::forbidden::{forbidden_message, go_quote};
use super::lifted::rbac::Request;
use super::rbac::{Rbac, Verdict};
use crate::error::{ApiError, Details};

/// The group whose members are allowed everything.
pub const MASTERS_GROUP: &str = "system:masters";

/// What a request wants to do, as the handler resolved it from the URL and method.
#[derive(Debug, Clone, Copy)]
pub struct RequestAttributes<'a> {
    pub user: &'a UserInfo,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, …
    pub verb: &'a str,
    /// API group, `""` for the core group.
    pub group: &'a str,
    /// Resource (plural, lower case); empty for a non-resource request such as `/version`.
    pub resource: &'a str,
    /// Subresource such as `status` or `scale`, or empty.
    pub subresource: &'a str,
    /// Namespace, for namespaced requests.
    pub namespace: Option<&'a str>,
    /// Object name, for requests on one object.
    pub name: Option<&'a str>,
    /// The URL path; what a non-resource request is judged and described by.
    pub path: &'a str,
}

impl RequestAttributes<'_> {
    /// The namespace RBAC judges the request in. A namespace is both an object and a
    /// namespace: `GET /api/v1/namespaces/foo` is in namespace `foo`, as kube-apiserver's
    /// request info resolves it.
    pub fn effective_namespace(&self) -> &str {
        match (self.namespace, self.group, self.resource, self.name) {
            (Some(ns), ..) if !ns.is_empty() => ns,
            (_, "", "namespaces", Some(name)) => name,
            _ => "",
        }
    }
}

/// The outcome of authorization. `reason` says which rule allowed the request, or why none did
/// (errors met evaluating bindings; empty when there simply is no rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// Decides requests.
#[derive(Debug, Default, Clone)]
pub struct Authorizer {
    rbac: Option<Arc<Rbac>>,
}

impl Authorizer {
    /// Only `system:masters` is allowed anything.
    pub fn new() -> Authorizer {
        Authorizer::default()
    }

    /// Also evaluates RBAC.
    pub fn with_rbac(rbac: Arc<Rbac>) -> Authorizer {
        Authorizer { rbac: Some(rbac) }
    }

    /// The RBAC evaluator, whose [`Rbac::follow`] the server runs.
    pub fn rbac(&self) -> Option<&Arc<Rbac>> {
        self.rbac.as_ref()
    }

    pub fn authorize(&self, attrs: &RequestAttributes<'_>) -> Decision {
        if attrs.user.groups.iter().any(|g| g == MASTERS_GROUP) {
            return Decision {
                allowed: true,
                reason: format!("user is a member of {}", go_quote(MASTERS_GROUP)),
            };
        }
        let Some(rbac) = &self.rbac else {
            return Decision {
                allowed: false,
                reason: String::new(),
            };
        };
        let request = if attrs.resource.is_empty() {
            Request::NonResource {
                verb: attrs.verb,
                path: attrs.path,
            }
        } else {
            Request::Resource {
                verb: attrs.verb,
                group: attrs.group,
                resource: attrs.resource,
                subresource: attrs.subresource,
                name: attrs.name.unwrap_or(""),
            }
        };
        match rbac.authorize(attrs.user, attrs.effective_namespace(), &request) {
            Verdict::Allowed(reason) => Decision {
                allowed: true,
                reason,
            },
            Verdict::NoOpinion(errors) => Decision {
                allowed: false,
                reason: match errors.as_slice() {
                    [] => String::new(),
                    [one] => format!("RBAC: {one}"),
                    many => format!("RBAC: [{}]", many.join(", ")),
                },
            },
        }
    }
}

/// The 403 a denied request gets, worded as kube-apiserver's `responsewriters.Forbidden` and
/// `errors.NewForbidden` word it: `pods "web" is forbidden: User "alice" cannot get resource
/// "pods" in API group "" in the namespace "default"`, then `: <reason>` when there is one.
pub fn forbidden_error(attrs: &RequestAttributes<'_>, decision: &Decision) -> ApiError {
    let mut message = forbidden_message(attrs);
    if !decision.reason.is_empty() {
        message = format!("{message}: {}", decision.reason);
    }
    let name = attrs.name.unwrap_or("");
    let message = match (attrs.resource, attrs.group, name) {
        ("", ..) => format!("forbidden: {message}"),
        (resource, "", "") => format!("{resource} is forbidden: {message}"),
        (resource, "", name) => format!("{resource} {} is forbidden: {message}", go_quote(name)),
        (resource, group, "") => format!("{resource}.{group} is forbidden: {message}"),
        (resource, group, name) => {
            format!(
                "{resource}.{group} {} is forbidden: {message}",
                go_quote(name)
            )
        }
    };
    ApiError::forbidden(message).with_details(Details {
        name: name.to_owned(),
        group: attrs.group.to_owned(),
        kind: attrs.resource.to_owned(),
        causes: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
