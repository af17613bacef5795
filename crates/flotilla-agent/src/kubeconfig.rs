//! Kubeconfig files the agent follows: loading a client from one, and a fingerprint of the file
//! and every file it names (CA bundle, client certificate and key, token file), so a rotation
//! of any of them is noticed and the clients are rebuilt.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long connecting may take before the attempt counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The `User-Agent` of the agent's requests, to the control plane and to its member.
pub const USER_AGENT: &str = concat!("karmada-agent/v", env!("CARGO_PKG_VERSION"), " (flotilla)");

/// A kubeconfig file and the context to use (default: its current context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeconfigSource {
    pub path: PathBuf,
    pub context: Option<String>,
}

/// Why a kubeconfig could not be used.
#[derive(Debug, thiserror::Error)]
#[error("kubeconfig {path}: {message}")]
pub struct KubeconfigError {
    pub path: String,
    pub message: String,
}

/// A client and the server it talks to.
#[derive(Clone)]
pub struct Loaded {
    pub client: kube::Client,
    /// The server URL, without a trailing slash.
    pub endpoint: String,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loaded")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl KubeconfigSource {
    pub fn new(path: impl Into<PathBuf>, context: Option<String>) -> Self {
        KubeconfigSource {
            path: path.into(),
            context,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> KubeconfigError {
        KubeconfigError {
            path: self.path.display().to_string(),
            message: message.to_string(),
        }
    }

    /// Reads the file now and builds a client (its `User-Agent` is [`USER_AGENT`]).
    pub async fn load(&self) -> Result<Loaded, KubeconfigError> {
        let kubeconfig = Kubeconfig::read_from(&self.path).map_err(|e| self.error(e))?;
        let options = KubeConfigOptions {
            context: self.context.clone(),
            ..Default::default()
        };
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| self.error(e))?;
        config.connect_timeout = Some(CONNECT_TIMEOUT);
        // Named like Karmada's agent: its writes' field manager is `karmada-agent`.
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static(USER_AGENT),
        ));
        let endpoint = config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_owned();
        let client = kube::Client::try_from(config).map_err(|e| self.error(e))?;
        Ok(Loaded { client, endpoint })
    }

    /// A hash of the kubeconfig and of every file it refers to; changes when any of them does
    /// (an unreadable file hashes as its error, so it changing back is noticed too).
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        let text = std::fs::read(&self.path);
        hash_read(&text, &mut hasher);
        let Ok(bytes) = text else {
            return hasher.finish();
        };
        let Ok(kubeconfig) = Kubeconfig::from_yaml(&String::from_utf8_lossy(&bytes)) else {
            return hasher.finish();
        };
        let base = self.path.parent().unwrap_or(Path::new("."));
        let mut files: Vec<&str> = Vec::new();
        for cluster in kubeconfig
            .clusters
            .iter()
            .filter_map(|c| c.cluster.as_ref())
        {
            files.extend(cluster.certificate_authority.as_deref());
        }
        for user in kubeconfig
            .auth_infos
            .iter()
            .filter_map(|a| a.auth_info.as_ref())
        {
            files.extend(user.client_certificate.as_deref());
            files.extend(user.client_key.as_deref());
            files.extend(user.token_file.as_deref());
        }
        for file in files {
            let path = base.join(file);
            file.hash(&mut hasher);
            hash_read(&std::fs::read(path), &mut hasher);
        }
        hasher.finish()
    }
}

fn hash_read(read: &std::io::Result<Vec<u8>>, hasher: &mut DefaultHasher) {
    match read {
        Ok(bytes) => bytes.hash(hasher),
        Err(error) => error.kind().to_string().hash(hasher),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_the_kubeconfig_and_the_files_it_names() {
        let dir = std::env::temp_dir().join(format!("flotilla-agent-fp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let kubeconfig = dir.join("config");
        let write_config = |server: &str| {
            std::fs::write(
                &kubeconfig,
                format!(
                    "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{server}', certificate-authority: ca.pem}}\nusers:\n- name: u\n  user: {{tokenFile: token}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
                ),
            )
            .expect("write");
        };
        write_config("https://a:6443");
        std::fs::write(dir.join("ca.pem"), "ca-1").expect("write");
        std::fs::write(dir.join("token"), "t-1").expect("write");
        let source = KubeconfigSource::new(&kubeconfig, None);
        let first = source.fingerprint();
        assert_eq!(source.fingerprint(), first, "stable while nothing changes");
        std::fs::write(dir.join("ca.pem"), "ca-2").expect("write");
        let rotated_ca = source.fingerprint();
        assert_ne!(rotated_ca, first);
        std::fs::write(dir.join("token"), "t-2").expect("write");
        let rotated_token = source.fingerprint();
        assert_ne!(rotated_token, rotated_ca);
        write_config("https://b:6443");
        assert_ne!(source.fingerprint(), rotated_token);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
