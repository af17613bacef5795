//! [`SecretMemberClients`]: member clients built the way Karmada's controller manager builds
//! them for `Push` clusters — the Cluster's `apiEndpoint`, `insecureSkipTLSVerification` and
//! `proxyURL`, and the Secret named by `spec.secretRef` (`token`, `caBundle`), both read from
//! the control plane through watches. A client is built once and reused until the Cluster's
//! connection fields or the Secret change, or [`MemberClients::invalidate`] is called.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::Cluster;
use flotilla_runtime::{Informers, Shared, Shutdown};
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::ObjectRef;

use crate::{MemberClients, MemberError};

/// How long `client()` waits for the first list of Clusters or Secrets.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Secret key of the bearer token.
pub const SECRET_TOKEN_KEY: &str = "token";
/// Secret key of the CA bundle (PEM).
pub const SECRET_CA_KEY: &str = "caBundle";

/// Everything a built client depends on; a change means a rebuild.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    endpoint: String,
    insecure: bool,
    proxy_url: String,
    secret: (String, String),
    secret_version: Option<String>,
}

struct Cached {
    fingerprint: Fingerprint,
    client: kube::Client,
    generation: u64,
}

/// Member clients from Cluster + Secret (see the module docs).
pub struct SecretMemberClients {
    /// The Cluster and (per namespace, on first use) Secret watches. Their readiness is the
    /// informers' own: kube's `Store::wait_until_ready` wakes only one of several waiting tasks,
    /// and every worker of a controller asks for a client at once after a restart (all but one
    /// sat out [`SYNC_TIMEOUT`], so pending Works were applied 30 s late).
    informers: Informers,
    clusters: Shared<Cluster>,
    cache: parking_lot::Mutex<HashMap<String, Cached>>,
    /// The impersonator clients of the cluster proxy, rebuilt when what they are built from
    /// changes (the Cluster's endpoint settings or either Secret).
    impersonators: parking_lot::Mutex<HashMap<String, (ImpersonatorFingerprint, kube::Client)>>,
    generations: std::sync::atomic::AtomicU64,
}

/// What an impersonator client is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ImpersonatorFingerprint {
    endpoint: String,
    insecure: bool,
    proxy_url: String,
    proxy_header: std::collections::BTreeMap<String, String>,
    secret_version: Option<String>,
    impersonator_version: Option<String>,
}

impl fmt::Debug for SecretMemberClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cached: Vec<String> = self.cache.lock().keys().cloned().collect();
        cached.sort();
        f.debug_struct("SecretMemberClients")
            .field("cached", &cached)
            .finish_non_exhaustive()
    }
}

impl SecretMemberClients {
    /// Starts watching Clusters (and, on first use, Secrets of the namespaces `secretRef`s name)
    /// through `control`; the watches stop with `shutdown`.
    pub fn start(control: kube::Client, shutdown: Shutdown) -> Arc<Self> {
        let informers = Informers::new(control);
        let clusters = informers.all::<Cluster>();
        let watches = informers.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            watches.stop();
        });
        Arc::new(Self {
            informers,
            clusters,
            cache: parking_lot::Mutex::new(HashMap::new()),
            impersonators: parking_lot::Mutex::new(HashMap::new()),
            generations: std::sync::atomic::AtomicU64::new(0),
        })
    }

    async fn ready<K>(shared: &Shared<K>, what: &str, cluster: &str) -> Result<(), MemberError>
    where
        K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        match tokio::time::timeout(SYNC_TIMEOUT, shared.wait_until_ready()).await {
            Ok(()) => Ok(()),
            Err(_) => Err(MemberError::Config {
                cluster: cluster.to_owned(),
                message: format!("the control plane's {what} could not be read"),
            }),
        }
    }

    /// The Cluster `name` once the Clusters are listed.
    async fn known_cluster(&self, name: &str) -> Result<Arc<Cluster>, MemberError> {
        Self::ready(&self.clusters, "clusters", name).await?;
        self.clusters
            .store()
            .get(&ObjectRef::new(name))
            .ok_or_else(|| MemberError::UnknownCluster {
                cluster: name.to_owned(),
            })
    }

    /// The Cluster as last seen (for callers that want the spec without another request).
    pub fn cluster(&self, name: &str) -> Option<Arc<Cluster>> {
        self.clusters.store().get(&ObjectRef::new(name))
    }
}

/// Builds a client for `cluster` from its spec and Secret. Errors say what is wrong, never the
/// token.
pub fn build_client(cluster: &Cluster, secret: &Secret) -> Result<kube::Client, MemberError> {
    let name = cluster.name();
    let config_error = |message: String| MemberError::Config {
        cluster: name.to_owned(),
        message,
    };
    let secret_name = format!(
        "{}/{}",
        secret.metadata.namespace.as_deref().unwrap_or_default(),
        secret.metadata.name.as_deref().unwrap_or_default()
    );
    let data = secret.data.clone().unwrap_or_default();
    let token = data
        .get(SECRET_TOKEN_KEY)
        .map(|t| String::from_utf8_lossy(&t.0).trim().to_owned())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| config_error(format!("secret {secret_name} has no {SECRET_TOKEN_KEY:?}")))?;
    let endpoint: http::Uri = cluster.spec.api_endpoint.parse().map_err(|_| {
        config_error(format!(
            "spec.apiEndpoint {:?} is not a URL",
            cluster.spec.api_endpoint
        ))
    })?;
    if cluster.spec.api_endpoint.is_empty() || endpoint.host().is_none() {
        return Err(config_error(format!(
            "spec.apiEndpoint {:?} is not a URL",
            cluster.spec.api_endpoint
        )));
    }
    let mut config = kube::Config::new(endpoint);
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(crate::CONTROLLER_MANAGER_USER_AGENT),
    ));
    config.connect_timeout = Some(Duration::from_secs(10));
    config.accept_invalid_certs = cluster.spec.insecure_skip_tls_verification;
    if let Some(ca) = data.get(SECRET_CA_KEY).filter(|ca| !ca.0.is_empty()) {
        let mut reader = std::io::BufReader::new(ca.0.as_slice());
        let certs: Result<Vec<_>, _> = rustls_pemfile::certs(&mut reader).collect();
        let certs = certs.map_err(|e| {
            config_error(format!(
                "{SECRET_CA_KEY:?} of secret {secret_name} is not a PEM bundle: {e}"
            ))
        })?;
        if certs.is_empty() {
            return Err(config_error(format!(
                "{SECRET_CA_KEY:?} of secret {secret_name} holds no certificate"
            )));
        }
        config.root_cert = Some(certs.into_iter().map(|c| c.to_vec()).collect());
    }
    if !cluster.spec.proxy_url.is_empty() {
        let proxy: http::Uri = cluster.spec.proxy_url.parse().map_err(|_| {
            config_error(format!(
                "spec.proxyURL {:?} is not a URL",
                cluster.spec.proxy_url
            ))
        })?;
        match proxy.scheme_str() {
            Some("http") | Some("socks5") => config.proxy_url = Some(proxy),
            other => {
                return Err(config_error(format!(
                    "spec.proxyURL scheme {:?} is not supported (http, socks5)",
                    other.unwrap_or("")
                )));
            }
        }
        for (key, value) in &cluster.spec.proxy_header {
            let header = http::HeaderName::try_from(key.as_str());
            let value = http::HeaderValue::try_from(value.as_str());
            match (header, value) {
                (Ok(h), Ok(v)) => config.headers.push((h, v)),
                _ => {
                    return Err(config_error(format!(
                        "spec.proxyHeader {key:?} is not a valid header"
                    )));
                }
            }
        }
    }
    config.auth_info.token = Some(secrecy::SecretString::from(token));
    kube::Client::try_from(config).map_err(|source| MemberError::Kube {
        cluster: name.to_owned(),
        source,
    })
}

#[async_trait::async_trait]
impl MemberClients for SecretMemberClients {
    async fn client(&self, name: &str) -> Result<kube::Client, MemberError> {
        let cluster = self.known_cluster(name).await?;
        let secret_ref = cluster
            .spec
            .secret_ref
            .clone()
            .ok_or_else(|| MemberError::Config {
                cluster: name.to_owned(),
                message: "spec.secretRef is not set".into(),
            })?;
        let secrets = self.informers.namespaced::<Secret>(&secret_ref.namespace);
        Self::ready(&secrets, "secrets", name).await?;
        let secret = secrets
            .store()
            .get(&ObjectRef::new(&secret_ref.name).within(&secret_ref.namespace))
            .ok_or_else(|| MemberError::Config {
                cluster: name.to_owned(),
                message: format!(
                    "secret {}/{} (spec.secretRef) does not exist",
                    secret_ref.namespace, secret_ref.name
                ),
            })?;
        let fingerprint = Fingerprint {
            endpoint: cluster.spec.api_endpoint.clone(),
            insecure: cluster.spec.insecure_skip_tls_verification,
            proxy_url: cluster.spec.proxy_url.clone(),
            secret: (secret_ref.namespace.clone(), secret_ref.name.clone()),
            secret_version: secret.metadata.resource_version.clone(),
        };
        if let Some(cached) = self.cache.lock().get(name)
            && cached.fingerprint == fingerprint
        {
            return Ok(cached.client.clone());
        }
        let client = build_client(&cluster, &secret)?;
        tracing::debug!(cluster = name, endpoint = %fingerprint.endpoint, "built a member client");
        self.cache.lock().insert(
            name.to_owned(),
            Cached {
                fingerprint,
                client: client.clone(),
                generation: self
                    .generations
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1,
            },
        );
        Ok(client)
    }

    fn invalidate(&self, cluster: &str) {
        self.cache.lock().remove(cluster);
        self.impersonators.lock().remove(cluster);
    }

    async fn impersonator_client(&self, name: &str) -> Result<Option<kube::Client>, MemberError> {
        let cluster = self.known_cluster(name).await?;
        let Some(impersonator) = cluster.spec.impersonator_secret_ref.clone() else {
            return Ok(None);
        };
        let missing = |what: &str, namespace: &str, secret: &str| MemberError::Config {
            cluster: name.to_owned(),
            message: format!("secret {namespace}/{secret} ({what}) does not exist"),
        };
        let read = |namespace: String, secret: String, what: &'static str| {
            let secrets = self.informers.namespaced::<Secret>(&namespace);
            async move {
                Self::ready(&secrets, "secrets", name).await?;
                secrets
                    .store()
                    .get(&ObjectRef::new(&secret).within(&namespace))
                    .ok_or_else(|| missing(what, &namespace, &secret))
            }
        };
        let token = read(
            impersonator.namespace.clone(),
            impersonator.name.clone(),
            "spec.impersonatorSecretRef",
        )
        .await?;
        // The CA and endpoint are the member's own (spec.secretRef); only the token differs.
        let mut secret = match cluster.spec.secret_ref.clone() {
            Some(r) => (*read(r.namespace, r.name, "spec.secretRef").await?).clone(),
            None => Secret::default(),
        };
        let fingerprint = ImpersonatorFingerprint {
            endpoint: cluster.spec.api_endpoint.clone(),
            insecure: cluster.spec.insecure_skip_tls_verification,
            proxy_url: cluster.spec.proxy_url.clone(),
            proxy_header: cluster.spec.proxy_header.clone(),
            secret_version: secret.metadata.resource_version.clone(),
            impersonator_version: token.metadata.resource_version.clone(),
        };
        if let Some((cached, client)) = self.impersonators.lock().get(name)
            && *cached == fingerprint
        {
            return Ok(Some(client.clone()));
        }
        let mut data = secret.data.take().unwrap_or_default();
        match token.data.as_ref().and_then(|d| d.get(SECRET_TOKEN_KEY)) {
            Some(value) => data.insert(SECRET_TOKEN_KEY.to_owned(), value.clone()),
            None => data.remove(SECRET_TOKEN_KEY),
        };
        secret.data = Some(data);
        secret.metadata.namespace = Some(impersonator.namespace);
        secret.metadata.name = Some(impersonator.name);
        let client = build_client(&cluster, &secret)?;
        self.impersonators
            .lock()
            .insert(name.to_owned(), (fingerprint, client.clone()));
        Ok(Some(client))
    }

    fn client_generation(&self, cluster: &str) -> u64 {
        self.cache.lock().get(cluster).map_or(0, |c| c.generation)
    }
}

#[cfg(test)]
mod tests;
