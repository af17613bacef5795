//! Reaching a member before anything is written: load its kubeconfig, ask `/version`, read
//! `kube-system`, and turn a failure into the one thing the user has to fix (unreachable, a
//! certificate the kubeconfig's CA does not vouch for, credentials refused, not Kubernetes).

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// How long one probe request may take (a blackholed endpoint must not hang `join`).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// A member as the control plane will reach it, plus an admin client to set it up.
#[derive(Clone)]
pub struct MemberAccess {
    /// Client with the kubeconfig's credentials (needs rights to create RBAC objects).
    pub client: kube::Client,
    /// The API server URL, without a trailing slash.
    pub endpoint: String,
    /// PEM of the CA(s) the kubeconfig trusts for this server; empty for the system roots.
    pub ca_pem: String,
    /// The kubeconfig skips TLS verification.
    pub insecure: bool,
}

impl std::fmt::Debug for MemberAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberAccess")
            .field("endpoint", &self.endpoint)
            .field("insecure", &self.insecure)
            .finish_non_exhaustive()
    }
}

/// What was learnt about a reachable member.
#[derive(Debug, Clone)]
pub struct MemberFacts {
    /// `kube-system`'s UID: the cluster's identity (`spec.id`).
    pub id: String,
    pub version: String,
}

/// Why the member cannot be joined, in the user's terms.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("cannot use the member kubeconfig {path}: {message}")]
    Kubeconfig { path: String, message: String },
    #[error("the member API server at {endpoint} is unreachable: {cause}")]
    Unreachable { endpoint: String, cause: String },
    #[error(
        "TLS with the member API server at {endpoint} failed: {cause} (does the kubeconfig hold this server's CA?)"
    )]
    Tls { endpoint: String, cause: String },
    #[error(
        "the member API server at {endpoint} rejected the credentials (401 Unauthorized): the token or client certificate is invalid, expired or revoked"
    )]
    Unauthorized { endpoint: String },
    #[error(
        "the member credentials may not {action} at {endpoint} (403 Forbidden): join needs cluster-admin in the member"
    )]
    Forbidden { endpoint: String, action: String },
    #[error("{endpoint} is not a Kubernetes API server: {detail}")]
    NotKubernetes { endpoint: String, detail: String },
    #[error("the member API server at {endpoint} failed to {action}: {cause}")]
    Failed {
        endpoint: String,
        action: String,
        cause: String,
    },
}

/// Loads `path` (context `context`, else its current context) as a member.
pub async fn load_member(path: &Path, context: Option<&str>) -> Result<MemberAccess, ProbeError> {
    let error = |message: String| ProbeError::Kubeconfig {
        path: path.display().to_string(),
        message,
    };
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| error(e.to_string()))?;
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..Default::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| error(e.to_string()))?;
    config.connect_timeout = Some(PROBE_TIMEOUT);
    config.read_timeout = Some(PROBE_TIMEOUT);
    let mut ca_der = config.root_cert.clone().unwrap_or_default();
    if let Some(file) = &config.root_cert_file {
        let pem = std::fs::read_to_string(file)
            .map_err(|e| error(format!("read {}: {e}", file.display())))?;
        return access(config.clone(), pem).map_err(error);
    }
    let ca_pem = ca_der
        .drain(..)
        .map(|der| pem("CERTIFICATE", &der))
        .collect();
    access(config, ca_pem).map_err(error)
}

fn access(config: kube::Config, ca_pem: String) -> Result<MemberAccess, String> {
    let endpoint = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_owned();
    let insecure = config.accept_invalid_certs;
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    Ok(MemberAccess {
        client,
        endpoint,
        ca_pem,
        insecure,
    })
}

/// PEM armour around DER bytes.
pub fn pem(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Asks the member who it is; every failure is classified.
pub async fn probe(member: &MemberAccess) -> Result<MemberFacts, ProbeError> {
    let endpoint = member.endpoint.clone();
    let version = match member.client.apiserver_version().await {
        Ok(info) if !info.git_version.is_empty() => info.git_version,
        Ok(_) => {
            return Err(ProbeError::NotKubernetes {
                endpoint,
                detail: "GET /version has no gitVersion".into(),
            });
        }
        Err(error) => return Err(classify(&endpoint, "answer GET /version", error)),
    };
    let namespaces: Api<Namespace> = Api::all(member.client.clone());
    let kube_system = namespaces
        .get("kube-system")
        .await
        .map_err(|e| classify(&endpoint, "get namespace kube-system", e))?;
    let id = kube_system.metadata.uid.unwrap_or_default();
    if id.is_empty() {
        return Err(ProbeError::NotKubernetes {
            endpoint,
            detail: "namespace kube-system has no uid".into(),
        });
    }
    Ok(MemberFacts { id, version })
}

/// Names the cause of a failed member request.
pub fn classify(endpoint: &str, action: &str, error: kube::Error) -> ProbeError {
    let endpoint = endpoint.to_owned();
    match &error {
        kube::Error::Api(status) if status.code == 401 => {
            return ProbeError::Unauthorized { endpoint };
        }
        kube::Error::Api(status) if status.code == 403 => {
            return ProbeError::Forbidden {
                endpoint,
                action: action.to_owned(),
            };
        }
        // Not a Kubernetes `Status` body: a web server, a proxy, anything else.
        kube::Error::Api(status) if status.reason == "Failed to parse error data" => {
            return ProbeError::NotKubernetes {
                endpoint,
                detail: format!(
                    "{action}: HTTP {} with a body that is not a Kubernetes Status",
                    status.code
                ),
            };
        }
        kube::Error::SerdeError(e) => {
            return ProbeError::NotKubernetes {
                endpoint,
                detail: format!("{action}: the answer is not a Kubernetes object ({e})"),
            };
        }
        kube::Error::Api(status) => {
            return ProbeError::Failed {
                endpoint,
                action: action.to_owned(),
                cause: format!("{} {}: {}", status.code, status.reason, status.message),
            };
        }
        _ => {}
    }
    match transport_cause(&error) {
        Transport::Tls(cause) => ProbeError::Tls { endpoint, cause },
        Transport::Unreachable(cause) => ProbeError::Unreachable { endpoint, cause },
        Transport::NotHttp(cause) => ProbeError::NotKubernetes {
            endpoint,
            detail: cause,
        },
    }
}

/// A short cause for a failed request: the API's answer, or the transport failure by name.
pub fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => {
            format!("{} {}: {}", status.code, status.reason, status.message)
        }
        kube::Error::Service(_) | kube::Error::HyperError(_) => match transport_cause(error) {
            Transport::Tls(cause) => format!("TLS failed: {cause}"),
            Transport::Unreachable(cause) => format!("unreachable: {cause}"),
            Transport::NotHttp(cause) => format!("not a Kubernetes API server: {cause}"),
        },
        other => other.to_string(),
    }
}

enum Transport {
    Tls(String),
    Unreachable(String),
    NotHttp(String),
}

/// Walks the source chain for the innermost cause we can name: a rustls error (certificate or
/// handshake), an I/O error (refused, reset, timed out), or an HTTP parse error.
fn transport_cause(error: &(dyn std::error::Error + 'static)) -> Transport {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut last = error.to_string();
    while let Some(e) = current {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Transport::Tls(tls_cause(tls));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            // std's io::Error hides its inner error from `source()`.
            if let Some(tls) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return Transport::Tls(tls_cause(tls));
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    return Transport::Unreachable("connection refused".into());
                }
                std::io::ErrorKind::TimedOut => {
                    return Transport::Unreachable(format!(
                        "no answer within {}s",
                        PROBE_TIMEOUT.as_secs()
                    ));
                }
                _ => {}
            }
            if io.to_string().contains("InvalidContentType")
                || io.to_string().contains("CorruptMessage")
            {
                return Transport::NotHttp(format!("it does not speak TLS ({io})"));
            }
            // I/O errors nest (hyper-util wraps tokio-rustls's): descend into the inner one.
            if let Some(inner) = io.get_ref() {
                last = io.to_string();
                current = Some(inner as &(dyn std::error::Error + 'static));
                continue;
            }
        }
        if let Some(hyper) = e.downcast_ref::<hyper::Error>()
            && hyper.is_parse()
        {
            return Transport::NotHttp(format!("it does not speak HTTP ({hyper})"));
        }
        let text = e.to_string();
        if text.contains("deadline has elapsed") || text.contains("timed out") {
            return Transport::Unreachable(format!(
                "no answer within {}s",
                PROBE_TIMEOUT.as_secs()
            ));
        }
        last = text;
        current = e.source();
    }
    Transport::Unreachable(last)
}

fn tls_cause(error: &rustls::Error) -> String {
    use rustls::CertificateError;
    match error {
        // BadSignature: a CA of the same name, but not the one that signed the certificate.
        rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        ) => "the server's certificate is not signed by a CA the kubeconfig trusts".into(),
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName)
        | rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. }) => {
            "the server's certificate is not valid for this address".into()
        }
        rustls::Error::InvalidCertificate(CertificateError::Expired)
        | rustls::Error::InvalidCertificate(CertificateError::ExpiredContext { .. }) => {
            "the server's certificate has expired".into()
        }
        rustls::Error::InvalidCertificate(other) => format!("certificate rejected ({other:?})"),
        other => other.to_string(),
    }
}

/// A client for `endpoint` with a bearer token, trusting `ca_pem` (or nothing, if `insecure`).
pub async fn token_client(
    endpoint: &str,
    ca_pem: &str,
    insecure: bool,
    token: &str,
) -> Result<kube::Client, String> {
    let mut cluster = serde_json::json!({"server": endpoint});
    if insecure {
        cluster["insecure-skip-tls-verify"] = true.into();
    } else if !ca_pem.is_empty() {
        cluster["certificate-authority-data"] = super::base64(ca_pem).into();
    }
    let document = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "member", "cluster": cluster}],
        "users": [{"name": "member", "user": {"token": token}}],
        "contexts": [{"name": "member", "context": {"cluster": "member", "user": "member"}}],
        "current-context": "member",
    });
    let kubeconfig: Kubeconfig =
        serde_json::from_value(document).map_err(|e| format!("build a kubeconfig: {e}"))?;
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| format!("load the member credentials: {e}"))?;
    config.connect_timeout = Some(PROBE_TIMEOUT);
    config.read_timeout = Some(PROBE_TIMEOUT);
    kube::Client::try_from(config).map_err(|e| format!("build a member client: {e}"))
}
