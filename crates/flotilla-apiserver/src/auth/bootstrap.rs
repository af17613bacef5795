//! The RBAC objects every cluster starts with (see [`super::lifted::bootstrap_policy`]),
//! created on start when missing, like the system namespaces. An object that exists is left as
//! the operator made it; kube-apiserver reconciles objects annotated with
//! `rbac.authorization.kubernetes.io/autoupdate: "true"` back to the defaults, which Flotilla
//! does not yet do.

use crate::error::ApiError;
use crate::registry::{Registry, WriteOptions};

use super::lifted::bootstrap_policy::{cluster_role_bindings, cluster_roles};

pub mod aggregation;

/// Creates the default ClusterRoles and ClusterRoleBindings that do not exist yet.
pub async fn ensure_defaults(registry: &Registry) -> Result<(), ApiError> {
    let catalog = registry.catalog();
    let roles = catalog
        .get("rbac.authorization.k8s.io", "v1", "clusterroles")
        .expect("clusterroles are built in");
    let bindings = catalog
        .get("rbac.authorization.k8s.io", "v1", "clusterrolebindings")
        .expect("clusterrolebindings are built in");
    let objects = cluster_roles()
        .into_iter()
        .map(|o| (&roles, o))
        .chain(cluster_role_bindings().into_iter().map(|o| (&bindings, o)));
    for (info, object) in objects {
        match registry
            .create(info, None, object, &WriteOptions::default())
            .await
        {
            Ok(_) => {}
            Err(e) if e.reason == "AlreadyExists" => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
