//! The message of a 403 Forbidden status, worded as kube-apiserver words it.
//!
//! Follows `forbiddenMessage` in
//! `k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go`: the user, verb and
//! resource (with `/subresource`), the API group, then the namespace or "at the cluster scope";
//! for non-resource requests the URL path. A namespace object's own name is its namespace. Strings are quoted like Go's `%q`.

use std::fmt::Write;

use crate::auth::authz::RequestAttributes;

/// `User "alice" cannot list resource "pods" in API group "" in the namespace "default"`.
pub(crate) fn forbidden_message(attrs: &RequestAttributes<'_>) -> String {
    let user = go_quote(&attrs.user.name);
    let verb = attrs.verb;
    if attrs.resource.is_empty() {
        return format!("User {user} cannot {verb} path {}", go_quote(attrs.path));
    }
    let resource = if attrs.subresource.is_empty() {
        attrs.resource.to_string()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    let (resource, group) = (go_quote(&resource), go_quote(attrs.group));
    match attrs.effective_namespace() {
        "" => format!(
            "User {user} cannot {verb} resource {resource} in API group {group} at the cluster scope"
        ),
        ns => format!(
            "User {user} cannot {verb} resource {resource} in API group {group} in the namespace {}",
            go_quote(ns)
        ),
    }
}

/// Double-quoted with Go `strconv.Quote` escapes for quotes, backslashes and control characters.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if c.is_control() && (c as u32) < 0x80 => {
                write!(out, "\\x{:02x}", c as u32).expect("writing to a String cannot fail")
            }
            c if c.is_control() => {
                write!(out, "\\u{:04x}", c as u32).expect("writing to a String cannot fail")
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
