//! Writing a kubeconfig that points kubectl (or any client-go / kube-rs client) at this server
//! with the admin client certificate, all credentials inline as base64 `*-data` fields.
//!
//! The file is replaced as a whole (mode 0600): give it a path of its own, not a shared
//! `~/.kube/config` holding other clusters.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;

use super::AuthError;
use super::files::{SECRET_MODE, ensure_private_dir, write_atomic};
use super::pki::{ADMIN_USER, Pki};

/// Names of the cluster, context and user entries.
#[derive(Debug, Clone, Copy)]
pub struct KubeconfigNames<'a> {
    pub cluster: &'a str,
    pub context: &'a str,
    pub user: &'a str,
}

impl Default for KubeconfigNames<'_> {
    /// Cluster and context `flotilla`, user `flotilla-admin`.
    fn default() -> Self {
        KubeconfigNames {
            cluster: "flotilla",
            context: "flotilla",
            user: ADMIN_USER,
        }
    }
}

/// The client's credentials and where to reach the server.
#[derive(Clone, Copy)]
pub struct KubeconfigCredentials<'a> {
    /// `https://host:port`
    pub server_url: &'a str,
    pub ca_pem: &'a str,
    pub client_cert_pem: &'a str,
    pub client_key_pem: &'a str,
}

impl<'a> KubeconfigCredentials<'a> {
    /// The PKI's admin client certificate (`flotilla-admin`, `system:masters`) for `server_url`.
    pub fn admin(pki: &'a Pki, server_url: &'a str) -> Self {
        KubeconfigCredentials {
            server_url,
            ca_pem: pki.ca_cert_pem(),
            client_cert_pem: &pki.admin().cert_pem,
            client_key_pem: &pki.admin().key_pem,
        }
    }
}

impl std::fmt::Debug for KubeconfigCredentials<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeconfigCredentials")
            .field("server_url", &self.server_url)
            .field("client_key_pem", &"[redacted]")
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig<'a> {
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    kind: &'a str,
    clusters: [Named<'a, Cluster<'a>>; 1],
    contexts: [Named<'a, Context<'a>>; 1],
    users: [Named<'a, User>; 1],
    current_context: &'a str,
    preferences: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize)]
struct Named<'a, T> {
    name: &'a str,
    #[serde(flatten)]
    value: T,
}

#[derive(Serialize)]
struct Cluster<'a> {
    cluster: ClusterInfo<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterInfo<'a> {
    server: &'a str,
    certificate_authority_data: String,
}

#[derive(Serialize)]
struct Context<'a> {
    context: ContextInfo<'a>,
}

#[derive(Serialize)]
struct ContextInfo<'a> {
    cluster: &'a str,
    user: &'a str,
}

#[derive(Serialize)]
struct User {
    user: UserCredentials,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct UserCredentials {
    client_certificate_data: String,
    client_key_data: String,
}

/// The kubeconfig YAML for `creds`, with `names` as its current context.
pub fn render_kubeconfig(
    creds: &KubeconfigCredentials<'_>,
    names: &KubeconfigNames<'_>,
) -> Result<String, AuthError> {
    let config = Kubeconfig {
        api_version: "v1",
        kind: "Config",
        clusters: [Named {
            name: names.cluster,
            value: Cluster {
                cluster: ClusterInfo {
                    server: creds.server_url,
                    certificate_authority_data: STANDARD.encode(creds.ca_pem),
                },
            },
        }],
        contexts: [Named {
            name: names.context,
            value: Context {
                context: ContextInfo {
                    cluster: names.cluster,
                    user: names.user,
                },
            },
        }],
        users: [Named {
            name: names.user,
            value: User {
                user: UserCredentials {
                    client_certificate_data: STANDARD.encode(creds.client_cert_pem),
                    client_key_data: STANDARD.encode(creds.client_key_pem),
                },
            },
        }],
        current_context: names.context,
        preferences: Default::default(),
    };
    yaml_serde::to_string(&config).map_err(AuthError::RenderKubeconfig)
}

/// Writes the kubeconfig for `creds` to `path` with mode 0600, creating the parent directory
/// (mode 0700) if needed.
pub fn write_kubeconfig(
    path: &Path,
    creds: &KubeconfigCredentials<'_>,
    names: &KubeconfigNames<'_>,
) -> Result<(), AuthError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_private_dir(parent)?;
    }
    let yaml = render_kubeconfig(creds, names)?;
    write_atomic(path, yaml.as_bytes(), SECRET_MODE)
}

#[cfg(test)]
mod tests;
