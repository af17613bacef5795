//! Token-based discovery of the control plane, the part without I/O: the bootstrap flags'
//! formats, CA public-key pins, and checking a `kube-public/cluster-info` that was read without
//! trusting the server yet.
//!
//! Follows `karmadactl register` (`retrieveValidatedConfigInfo`, `validateClusterInfoToken`,
//! `validateClusterCA`), itself kubeadm's token discovery, and `pubkeypin` (a pin is the SHA-256
//! of the CA certificate's DER SubjectPublicKeyInfo, written `sha256:<hex>`). Written anew here.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use flotilla_apiserver::auth::lifted::{bootstrap_token, jws};

/// The ConfigMap discovery reads, in [`CLUSTER_INFO_NAMESPACE`].
pub const CLUSTER_INFO: &str = "cluster-info";
pub const CLUSTER_INFO_NAMESPACE: &str = "kube-public";
/// The ConfigMap key holding the kubeconfig, and the prefix of its signatures' keys.
const KUBECONFIG_KEY: &str = "kubeconfig";
const JWS_PREFIX: &str = "jws-kubeconfig-";
/// Kubernetes' patterns of a whole token and of a token id (`cluster-bootstrap`'s).
pub const TOKEN_PATTERN: &str = r"\A([a-z0-9]{6})\.([a-z0-9]{16})\z";
pub const TOKEN_ID_PATTERN: &str = r"\A([a-z0-9]{6})\z";

/// Why discovery refused the input or the server's answer. Each names the flag to look at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    // The token itself is never echoed: its second half is a secret.
    #[error("--token: the bootstrap token was not of the form {TOKEN_PATTERN:?}")]
    TokenFormat,
    #[error("--discovery-token-ca-cert-hash: invalid discovery token CA certificate hash: {0}")]
    HashFormat(String),
    #[error(
        "--discovery-token-ca-cert-hash is needed to verify the control plane's CA (or set --discovery-token-unsafe-skip-ca-verification)"
    )]
    NoPins,
    #[error("--bootstrap-server {given:?}: {reason}")]
    Server { given: String, reason: String },
    #[error(
        "kube-public/cluster-info has no {KUBECONFIG_KEY:?}: this server is not set up for token bootstrapping"
    )]
    NoKubeconfig,
    #[error(
        "--token: token id {id:?} is invalid for this control plane or has expired (kube-public/cluster-info has no {JWS_PREFIX}{id}); run `flotilla token create` on the control plane for a new one"
    )]
    NoSignature { id: String },
    #[error(
        "--token: the JWS signature of kube-public/cluster-info does not verify with this token: refusing to trust this server"
    )]
    BadSignature,
    #[error("kube-public/cluster-info: {0}")]
    ClusterInfo(String),
    #[error(
        "--discovery-token-ca-cert-hash: the control plane's CA (public key {found}) matches none of the pinned hashes: refusing to trust this server"
    )]
    Unpinned { found: String },
}

/// A bootstrap token `<id>.<secret>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub id: String,
    pub secret: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Token {
    pub fn parse(text: &str) -> Result<Token, DiscoveryError> {
        let (id, secret) = bootstrap_token::parse_token(text).ok_or(DiscoveryError::TokenFormat)?;
        Ok(Token {
            id: id.to_owned(),
            secret: secret.to_owned(),
        })
    }

    /// `<id>.<secret>`, what a bearer token header carries.
    pub fn bearer(&self) -> String {
        format!("{}.{}", self.id, self.secret)
    }
}

/// Pinned CA public keys (lower-case hex SHA-256 of the SubjectPublicKeyInfo).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins(BTreeSet<String>);

impl Pins {
    /// Parses `sha256:<64 hex digits>` values (the format is case-insensitive, as kubeadm's).
    pub fn parse(hashes: &[String]) -> Result<Pins, DiscoveryError> {
        let mut pins = BTreeSet::new();
        for hash in hashes {
            let parts: Vec<&str> = hash.split(':').collect();
            let [format, value] = parts[..] else {
                return Err(DiscoveryError::HashFormat(
                    "expected \"format:hex-value\"; known format(s) are: sha256".into(),
                ));
            };
            if !format.eq_ignore_ascii_case("sha256") {
                return Err(DiscoveryError::HashFormat(format!(
                    "unknown hash format {format:?}; known format(s) are: sha256"
                )));
            }
            if value.len() != 64 {
                return Err(DiscoveryError::HashFormat(format!(
                    "{hash:?}: expected a 32 byte SHA-256 hash (64 hex digits), found {} digits",
                    value.len()
                )));
            }
            if !value.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(DiscoveryError::HashFormat(format!(
                    "{hash:?}: not hexadecimal"
                )));
            }
            pins.insert(value.to_ascii_lowercase());
        }
        Ok(Pins(pins))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Ok when one of `certificates` (DER) has a pinned public key.
    pub fn check_any(&self, certificates: &[Vec<u8>]) -> Result<(), DiscoveryError> {
        let mut found = Vec::new();
        for der in certificates {
            let hash = spki_hash(der).map_err(DiscoveryError::ClusterInfo)?;
            if self.0.contains(hash.trim_start_matches("sha256:")) {
                return Ok(());
            }
            found.push(hash);
        }
        Err(DiscoveryError::Unpinned {
            found: found.join(", "),
        })
    }
}

/// `sha256:<hex>` of a DER certificate's SubjectPublicKeyInfo: what
/// `--discovery-token-ca-cert-hash` pins.
pub fn spki_hash(certificate_der: &[u8]) -> Result<String, String> {
    let (_, certificate) = x509_parser::parse_x509_certificate(certificate_der)
        .map_err(|e| format!("not an X.509 certificate: {e}"))?;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        certificate.tbs_certificate.subject_pki.raw,
    );
    Ok(format!("sha256:{}", hex(digest.as_ref())))
}

/// The DER certificates of a PEM bundle; an error when it holds none or a broken one.
pub fn pem_certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut certificates = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let block = block.map_err(|e| format!("broken PEM: {e}"))?;
        if block.label == "CERTIFICATE" {
            x509_parser::parse_x509_certificate(&block.contents)
                .map_err(|e| format!("not an X.509 certificate: {e}"))?;
            certificates.push(block.contents);
        }
    }
    if certificates.is_empty() {
        return Err("no CERTIFICATE in the PEM data".into());
    }
    Ok(certificates)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The control plane's URL from `--bootstrap-server`: `host:port` (as `karmadactl register`
/// takes it) or an `https://` URL, without a path.
pub fn server_url(given: &str) -> Result<String, DiscoveryError> {
    let refuse = |reason: &str| DiscoveryError::Server {
        given: given.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = given.trim();
    let rest = match trimmed.split_once("://") {
        Some(("https", rest)) => rest,
        Some((scheme, _)) => {
            return Err(refuse(&format!(
                "scheme {scheme:?}: the control plane is reached over https"
            )));
        }
        None => trimmed,
    }
    .trim_end_matches('/');
    if rest.is_empty() || rest.ends_with(':') {
        return Err(refuse("expected HOST:PORT or https://HOST:PORT"));
    }
    if rest.contains('/') || rest.contains('?') || rest.contains('@') {
        return Err(refuse(
            "expected HOST:PORT or https://HOST:PORT, without a path",
        ));
    }
    let url = format!("https://{rest}");
    url.parse::<http::Uri>()
        .ok()
        .filter(|uri| uri.host().is_some_and(|h| !h.is_empty()))
        .ok_or_else(|| refuse("not a host name or address"))?;
    Ok(url)
}

/// What a verified `cluster-info` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterInfo {
    /// The kubeconfig text, as signed.
    pub kubeconfig: String,
    /// The server the control plane names (often one only it can reach).
    pub server: String,
    /// The CA bundle (PEM) and its certificates (DER).
    pub ca_pem: String,
    pub ca_certificates: Vec<Vec<u8>>,
}

/// Checks `cluster-info`'s data read without trusting the server: the token's detached JWS
/// over the kubeconfig, one cluster with a CA, and (unless `pins` is empty) a pinned CA key.
pub fn verify_cluster_info(
    data: &BTreeMap<String, String>,
    token: &Token,
    pins: &Pins,
) -> Result<ClusterInfo, DiscoveryError> {
    let kubeconfig = data
        .get(KUBECONFIG_KEY)
        .filter(|k| !k.is_empty())
        .ok_or(DiscoveryError::NoKubeconfig)?;
    let signature = data
        .get(&format!("{JWS_PREFIX}{}", token.id))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| DiscoveryError::NoSignature {
            id: token.id.clone(),
        })?;
    if !jws::detached_signature_is_valid(signature, kubeconfig, &token.id, &token.secret) {
        return Err(DiscoveryError::BadSignature);
    }
    let parsed = kube::config::Kubeconfig::from_yaml(kubeconfig)
        .map_err(|e| DiscoveryError::ClusterInfo(format!("not a kubeconfig: {e}")))?;
    let [cluster] = &parsed.clusters[..] else {
        return Err(DiscoveryError::ClusterInfo(format!(
            "expected a kubeconfig with a single cluster, found {}",
            parsed.clusters.len()
        )));
    };
    let cluster = cluster
        .cluster
        .as_ref()
        .ok_or_else(|| DiscoveryError::ClusterInfo("the cluster is empty".into()))?;
    let ca_data = cluster
        .certificate_authority_data
        .as_deref()
        .ok_or_else(|| DiscoveryError::ClusterInfo("no certificate-authority-data".into()))?;
    let ca_pem = base64::engine::general_purpose::STANDARD
        .decode(ca_data.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| {
            DiscoveryError::ClusterInfo("certificate-authority-data is not base64 text".into())
        })?;
    let ca_certificates = pem_certificates(ca_pem.as_bytes())
        .map_err(|e| DiscoveryError::ClusterInfo(format!("the CA: {e}")))?;
    if !pins.is_empty() {
        pins.check_any(&ca_certificates)?;
    }
    Ok(ClusterInfo {
        kubeconfig: kubeconfig.clone(),
        server: cluster.server.clone().unwrap_or_default(),
        ca_pem,
        ca_certificates,
    })
}

#[cfg(test)]
mod tests;
