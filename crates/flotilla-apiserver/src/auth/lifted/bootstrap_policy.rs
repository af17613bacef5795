//! The non-resource URLs every authenticated user may GET in a fresh Kubernetes cluster.
//!
//! Follows the `system:discovery` and `system:public-info-viewer` ClusterRoles in
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`, bound to `system:authenticated`
//! by default, and RBAC's non-resource URL matching (`/foo/*` is a prefix match on `/foo/`).

const DISCOVERY_URLS: [&str; 11] = [
    "/livez",
    "/readyz",
    "/healthz",
    "/version",
    "/version/",
    "/openapi",
    "/openapi/*",
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
];

/// Whether `path` is a discovery or health URL open to every authenticated user for `get`.
pub(crate) fn is_discovery_url(path: &str) -> bool {
    DISCOVERY_URLS
        .iter()
        .any(|rule| match rule.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => path == *rule,
        })
}
