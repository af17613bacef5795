//! User impersonation (`kubectl --as`, `--as-group`, `--as-uid`): the `Impersonate-*` headers
//! replace the caller's identity for the rest of the request once the caller is authorized to
//! `impersonate` each requested user, service account, group, extra value and UID — the rules of
//! kube-apiserver's impersonation filter (k8s.io/apiserver/pkg/endpoints/filters/impersonation.go,
//! v1.32), including its messages.

use std::collections::BTreeMap;

use http::HeaderMap;

use super::authn::{AUTHENTICATED_GROUP, UserInfo};
use super::authz::{Authorizer, RequestAttributes, forbidden_error};
use crate::error::ApiError;

pub const IMPERSONATE_USER: &str = "impersonate-user";
pub const IMPERSONATE_UID: &str = "impersonate-uid";
pub const IMPERSONATE_GROUP: &str = "impersonate-group";
pub const IMPERSONATE_EXTRA_PREFIX: &str = "impersonate-extra-";

const ANONYMOUS: &str = "system:anonymous";
const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";

/// One thing the caller asks to act as, and the authorization check it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Wanted {
    User(String),
    ServiceAccount { namespace: String, name: String },
    Group(String),
    Extra { key: String, value: String },
    Uid(String),
}

impl Wanted {
    /// (group, resource, subresource, namespace, name) of the `impersonate` check.
    fn attributes(&self) -> (&str, &str, &str, Option<&str>, &str) {
        match self {
            Wanted::User(name) => ("", "users", "", None, name),
            Wanted::ServiceAccount { namespace, name } => {
                ("", "serviceaccounts", "", Some(namespace), name)
            }
            Wanted::Group(name) => ("", "groups", "", None, name),
            Wanted::Extra { key, value } => {
                ("authentication.k8s.io", "userextras", key, None, value)
            }
            Wanted::Uid(uid) => ("authentication.k8s.io", "uids", "", None, uid),
        }
    }

    /// Go's `%v` of an `ObjectReference` in the "without impersonating a user" message.
    fn describe(&self) -> String {
        let (api_version, kind, namespace, name, field) = match self {
            Wanted::User(name) => ("", "User", "", name.as_str(), ""),
            Wanted::ServiceAccount { namespace, name } => {
                ("", "ServiceAccount", namespace.as_str(), name.as_str(), "")
            }
            Wanted::Group(name) => ("", "Group", "", name.as_str(), ""),
            Wanted::Extra { key, value } => (
                "authentication.k8s.io/v1",
                "UserExtra",
                "",
                value.as_str(),
                key.as_str(),
            ),
            Wanted::Uid(uid) => ("authentication.k8s.io/v1", "UID", "", uid.as_str(), ""),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field}}}")
    }
}

/// Percent-decodes an extra key from its header name (`Impersonate-Extra-<key>`), lower case as
/// Go's canonical header handling leaves it.
fn unescape_extra_key(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).to_lowercase()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_owned)
        .collect()
}

/// What the headers ask for, in kube-apiserver's order (user, groups, extras, UID).
fn wanted(headers: &HeaderMap) -> Result<Vec<Wanted>, ApiError> {
    let mut out = Vec::new();
    let user = headers
        .get(IMPERSONATE_USER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let has_user = !user.is_empty();
    if has_user {
        match user
            .strip_prefix(SERVICE_ACCOUNT_PREFIX)
            .and_then(|rest| rest.split_once(':'))
            .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains(':'))
        {
            Some((namespace, name)) => out.push(Wanted::ServiceAccount {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            }),
            None => out.push(Wanted::User(user)),
        }
    }
    for group in values(headers, IMPERSONATE_GROUP) {
        out.push(Wanted::Group(group));
    }
    let mut extras: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(IMPERSONATE_EXTRA_PREFIX)
            && let Ok(value) = value.to_str()
        {
            extras
                .entry(unescape_extra_key(key))
                .or_default()
                .push(value.to_owned());
        }
    }
    for (key, values) in extras {
        for value in values {
            out.push(Wanted::Extra {
                key: key.clone(),
                value,
            });
        }
    }
    if let Some(uid) = headers.get(IMPERSONATE_UID).and_then(|v| v.to_str().ok())
        && !uid.is_empty()
    {
        out.push(Wanted::Uid(uid.to_owned()));
    }
    if !has_user && !out.is_empty() {
        let list: Vec<String> = out.iter().map(Wanted::describe).collect();
        return Err(ApiError::internal(format!(
            "requested [{}] without impersonating a user",
            list.join(" ")
        )));
    }
    Ok(out)
}

/// Whether the request carries any impersonation header.
pub fn requested(headers: &HeaderMap) -> bool {
    headers.contains_key(IMPERSONATE_USER)
        || headers.contains_key(IMPERSONATE_GROUP)
        || headers.contains_key(IMPERSONATE_UID)
        || headers
            .keys()
            .any(|k| k.as_str().starts_with(IMPERSONATE_EXTRA_PREFIX))
}

/// The identity the request acts as: `caller` itself without impersonation headers, otherwise
/// the impersonated user once every part is authorized (403 naming the first refused part).
pub fn impersonate(
    authorizer: &Authorizer,
    caller: UserInfo,
    headers: &HeaderMap,
    path: &str,
) -> Result<UserInfo, ApiError> {
    let wanted = wanted(headers)?;
    if wanted.is_empty() {
        return Ok(caller);
    }
    let mut user = UserInfo::default();
    let mut groups_given = false;
    let mut sa_namespace = None;
    for item in &wanted {
        let (group, resource, subresource, namespace, name) = item.attributes();
        let attributes = RequestAttributes {
            user: &caller,
            verb: "impersonate",
            group,
            resource,
            subresource,
            namespace,
            name: Some(name),
            path,
        };
        let decision = authorizer.authorize(&attributes);
        if !decision.allowed {
            return Err(forbidden_error(&attributes, &decision));
        }
        match item {
            Wanted::User(name) => user.name.clone_from(name),
            Wanted::ServiceAccount { namespace, name } => {
                user.name = format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}");
                sa_namespace = Some(namespace.clone());
            }
            Wanted::Group(group) => {
                groups_given = true;
                user.groups.push(group.clone());
            }
            Wanted::Extra { key, value } => {
                user.extra
                    .entry(key.clone())
                    .or_default()
                    .push(value.clone());
            }
            Wanted::Uid(uid) => user.uid = Some(uid.clone()),
        }
    }
    if let Some(namespace) = sa_namespace
        && !groups_given
    {
        user.groups = vec![
            SERVICE_ACCOUNTS_GROUP.to_owned(),
            format!("{SERVICE_ACCOUNTS_GROUP}:{namespace}"),
        ];
    }
    let implied = if user.name == ANONYMOUS {
        UNAUTHENTICATED_GROUP
    } else {
        AUTHENTICATED_GROUP
    };
    if !user.groups.iter().any(|g| g == implied) {
        user.groups.push(implied.to_owned());
    }
    Ok(user)
}

#[cfg(test)]
mod tests;
