//! Defaults of rbac.authorization.k8s.io/v1 bindings.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/rbac/v1/defaults.go at v1.32:
//! `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` (roleRef in the RBAC group) and
//! `SetDefaults_Subject` (Users and Groups in the RBAC group, ServiceAccounts in the core one).

use super::fields::{Obj, child, items, or_insert_str, str_of};

const GROUP: &str = "rbac.authorization.k8s.io";

/// A RoleBinding or a ClusterRoleBinding.
pub fn binding(binding: &mut Obj) {
    if let Some(role_ref) = child(binding, "roleRef") {
        or_insert_str(role_ref, "apiGroup", GROUP);
    }
    for subject in items(binding, "subjects") {
        if matches!(str_of(subject, "kind"), "User" | "Group") {
            or_insert_str(subject, "apiGroup", GROUP);
        }
    }
}
