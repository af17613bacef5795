//! Authorization: may this user do this? For now one rule, as in kube-apiserver's privileged
//! group authorizer: members of `system:masters` may do everything. Everyone else may read the
//! discovery and health URLs (Kubernetes' default `system:discovery` binding) and nothing more;
//! a denial carries the message kube-apiserver would put in the 403 status.

use super::authn::UserInfo;
use super::lifted::bootstrap_policy::is_discovery_url;
use super::lifted::forbidden::{forbidden_message, go_quote};

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

/// The outcome of authorization. When denied, `reason` is the message for the 403 status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
}

/// Decides requests. Stateless for now; holds configuration once there is some.
#[derive(Debug, Default, Clone)]
pub struct Authorizer {}

impl Authorizer {
    pub fn new() -> Authorizer {
        Authorizer::default()
    }

    pub fn authorize(&self, attrs: &RequestAttributes<'_>) -> Decision {
        if attrs.user.groups.iter().any(|g| g == MASTERS_GROUP) {
            return Decision {
                allowed: true,
                reason: format!("user is a member of {}", go_quote(MASTERS_GROUP)),
            };
        }
        if attrs.resource.is_empty() && attrs.verb == "get" && is_discovery_url(attrs.path) {
            return Decision {
                allowed: true,
                reason: "discovery and health URLs are open to authenticated users".into(),
            };
        }
        Decision {
            allowed: false,
            reason: forbidden_message(attrs),
        }
    }
}

#[cfg(test)]
mod tests;
