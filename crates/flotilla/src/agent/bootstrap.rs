//! `flotilla agent --bootstrap-server … --token …`: the agent obtains its own control-plane
//! kubeconfig as `karmadactl register` does, then runs with it.
//!
//! 1. Read `kube-public/cluster-info` anonymously without trusting the server, check the
//!    token's signature over it and the CA's pinned hash ([`discovery`]), read it again
//!    trusting that CA and require the same kubeconfig.
//! 2. As the bootstrap token: a certificate for `system:karmada:agent:rbac-generator` (approved
//!    by `agentcsrapproving`), with which the agent's RBAC and namespaces are created (Karmada's
//!    `GenerateRBACResources`, plus the verbs Flotilla's agent uses).
//! 3. As the bootstrap token: a certificate for `system:karmada:agent:<cluster>` in
//!    `system:karmada:agents`, written with the key into the agent's kubeconfig (mode 0600).
//!
//! An existing kubeconfig whose certificate is this cluster's and still valid is used as it is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use super::discovery::{self, ClusterInfo, DiscoveryError, Pins, Token};
use crate::registration::{AGENT_GROUP, RBAC_GENERATOR_USER};

/// The signer Karmada's agent certificates ask for.
const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// The common-name prefix of agent certificates (Karmada's `ClusterPermissionPrefix`).
pub const AGENT_USER_PREFIX: &str = "system:karmada:agent:";
/// Where Karmada keeps member Secrets and agent Leases on the control plane.
const CLUSTER_NAMESPACE: &str = "karmada-cluster";
/// Karmada's name of the control plane in the kubeconfigs `register` writes.
const KUBECONFIG_CLUSTER: &str = "karmada-apiserver";
/// How often a pending request is looked at again.
const POLL: Duration = Duration::from_millis(500);
/// Karmada's `k8s.io/apimachinery/pkg/util/rand.String` alphabet (no vowels, no look-alikes).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const RBAC: &str = "rbac.authorization.k8s.io";

/// What bootstrapping needs, from the flags.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// `https://host:port` of the control plane, as the member reaches it.
    pub server: String,
    pub token: Token,
    /// Empty only with `--discovery-token-unsafe-skip-ca-verification`.
    pub pins: Pins,
    pub cluster_name: String,
    /// Where the agent's kubeconfig is (and is written).
    pub kubeconfig: PathBuf,
    /// How long discovery and each certificate may take.
    pub timeout: Duration,
    /// `expirationSeconds` of the requests (Karmada: a year).
    pub expiration_seconds: i32,
}

/// Makes sure `bootstrap.kubeconfig` holds a valid certificate for this cluster, bootstrapping
/// one with the token if it does not.
pub async fn ensure_kubeconfig(bootstrap: &Bootstrap) -> anyhow::Result<()> {
    let user = format!("{AGENT_USER_PREFIX}{}", bootstrap.cluster_name);
    match existing_certificate(&bootstrap.kubeconfig, &user) {
        Ok(not_after) => {
            println!(
                "using the agent kubeconfig {} (certificate for {user} valid until {not_after})",
                bootstrap.kubeconfig.display()
            );
            return Ok(());
        }
        Err(reason) if bootstrap.kubeconfig.exists() => {
            println!(
                "bootstrapping again: the agent kubeconfig {} {reason}",
                bootstrap.kubeconfig.display()
            );
        }
        Err(_) => {}
    }
    println!("[discovery] reading cluster-info from {}", bootstrap.server);
    let info = discover(bootstrap).await?;
    let ca_data = base64::engine::general_purpose::STANDARD.encode(&info.ca_pem);
    let bootstrap_client = client_from(&kubeconfig_text(
        &bootstrap.server,
        &ca_data,
        "token-bootstrap-client",
        &format!("token: {}", bootstrap.token.bearer()),
    ))
    .await?;

    println!("[rbac] requesting a certificate for {RBAC_GENERATOR_USER}");
    let generator_csr = format!(
        "agent-rbac-generator-{}{}",
        bootstrap.cluster_name,
        random_name(5)?
    );
    let generator = request_certificate(
        &bootstrap_client,
        &generator_csr,
        RBAC_GENERATOR_USER,
        bootstrap.expiration_seconds,
        bootstrap.timeout,
        refused,
    )
    .await?;
    let generator_client = client_from(&kubeconfig_text(
        &bootstrap.server,
        &ca_data,
        RBAC_GENERATOR_USER,
        &generator.user_fields(),
    ))
    .await?;
    ensure_rbac(&generator_client, &bootstrap.cluster_name).await?;
    let csrs: Api<CertificateSigningRequest> = Api::all(generator_client);
    if let Err(error) = csrs.delete(&generator_csr, &DeleteParams::default()).await {
        tracing::warn!(csr = %generator_csr, %error, "cannot delete the RBAC generator's request");
    }

    let csr = format!("{}-{}", bootstrap.cluster_name, random_name(5)?);
    println!("[csr] requesting the agent's certificate for {user} ({csr})");
    let agent = request_certificate(
        &bootstrap_client,
        &csr,
        &user,
        bootstrap.expiration_seconds,
        bootstrap.timeout,
        refused,
    )
    .await?;
    write_private(
        &bootstrap.kubeconfig,
        &kubeconfig_text(
            &bootstrap.server,
            &ca_data,
            &bootstrap.cluster_name,
            &agent.user_fields(),
        ),
    )?;
    println!(
        "[csr] certificate issued; wrote the agent kubeconfig {}",
        bootstrap.kubeconfig.display()
    );
    Ok(())
}

/// Reads `cluster-info` without trusting the server, verifies it, and reads it again trusting
/// the CA it names.
async fn discover(bootstrap: &Bootstrap) -> anyhow::Result<ClusterInfo> {
    let deadline = tokio::time::Instant::now() + bootstrap.timeout;
    let mut config = kube::Config::new(
        bootstrap
            .server
            .parse()
            .map_err(|e| anyhow!("--bootstrap-server {}: {e}", bootstrap.server))?,
    );
    config.accept_invalid_certs = true;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.read_timeout = Some(Duration::from_secs(30));
    let insecure = kube::Client::try_from(config).context("build the discovery client")?;
    let first = fetch_cluster_info(bootstrap, &insecure, deadline).await?;
    let info = discovery::verify_cluster_info(&first, &bootstrap.token, &bootstrap.pins)?;
    if bootstrap.pins.is_empty() {
        tracing::warn!(
            "--discovery-token-unsafe-skip-ca-verification: trusting the CA cluster-info names without a pinned hash"
        );
    }
    let ca_data = base64::engine::general_purpose::STANDARD.encode(&info.ca_pem);
    let secure = client_from(&format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {ca_data}\nusers:\n- name: anonymous\n  user: {{}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: anonymous}}\ncurrent-context: c\n",
        bootstrap.server
    ))
    .await?;
    let second = fetch_cluster_info(bootstrap, &secure, deadline)
        .await
        .context("reading cluster-info again, trusting the verified CA")?;
    if second.get("kubeconfig") != Some(&info.kubeconfig) {
        bail!(
            "the kubeconfig in kube-public/cluster-info read trusting the verified CA differs from the first one read"
        );
    }
    Ok(info)
}

/// `cluster-info`'s data, once it carries this token's signature (the signer adds it shortly
/// after the token is created); unreachable servers and error answers are retried until
/// `deadline`.
async fn fetch_cluster_info(
    bootstrap: &Bootstrap,
    client: &kube::Client,
    deadline: tokio::time::Instant,
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), discovery::CLUSTER_INFO_NAMESPACE);
    let signature = format!("jws-kubeconfig-{}", bootstrap.token.id);
    loop {
        let last = match maps.get(discovery::CLUSTER_INFO).await {
            Ok(map) => {
                let data = map.data.unwrap_or_default();
                if data.contains_key(&signature) {
                    return Ok(data);
                }
                anyhow::Error::new(DiscoveryError::NoSignature {
                    id: bootstrap.token.id.clone(),
                })
            }
            Err(error) => anyhow!(
                "--bootstrap-server {}: cannot read kube-public/cluster-info within {:?}: {error}",
                bootstrap.server,
                bootstrap.timeout
            ),
        };
        if tokio::time::Instant::now() + POLL > deadline {
            return Err(last);
        }
        tracing::debug!(error = %last, "cluster-info not readable yet; retrying");
        tokio::time::sleep(POLL).await;
    }
}

/// A key and its issued certificate (PEM).
pub(super) struct Issued {
    pub(super) key_pem: String,
    pub(super) certificate_pem: String,
}

impl Issued {
    /// The kubeconfig `user` fields for this certificate.
    fn user_fields(&self) -> String {
        let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        format!(
            "client-certificate-data: {}\n    client-key-data: {}",
            b64(&self.certificate_pem),
            b64(&self.key_pem)
        )
    }
}

/// Posts a CSR named `name` for `common_name` in [`AGENT_GROUP`] with a fresh ECDSA P-256 key
/// (asking for `expiration_seconds`) and waits up to `timeout` for its certificate; `refused`
/// explains a failed create.
pub(super) async fn request_certificate(
    client: &kube::Client,
    name: &str,
    common_name: &str,
    expiration_seconds: i32,
    timeout: Duration,
    refused: fn(kube::Error, &str) -> anyhow::Error,
) -> anyhow::Result<Issued> {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .context("generate an ECDSA P-256 key")?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, AGENT_GROUP);
    let request = params
        .serialize_request(&key)
        .and_then(|csr| csr.pem())
        .context("build the certificate request")?;
    let csr: CertificateSigningRequest = serde_json::from_value(json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name, "labels": {"karmada.io/system": "true"}},
        "spec": {
            "request": base64::engine::general_purpose::STANDARD.encode(&request),
            "signerName": SIGNER,
            "expirationSeconds": expiration_seconds,
            "usages": ["digital signature", "key encipherment", "client auth"],
        },
    }))
    .context("build the CertificateSigningRequest")?;
    let csrs: Api<CertificateSigningRequest> = Api::all(client.clone());
    csrs.create(&PostParams::default(), &csr)
        .await
        .map_err(|error| refused(error, name))?;
    let certificate = wait_for_certificate(&csrs, name, timeout).await?;
    Ok(Issued {
        key_pem: key.serialize_pem(),
        certificate_pem: certificate,
    })
}

fn refused(error: kube::Error, name: &str) -> anyhow::Error {
    match &error {
        kube::Error::Api(status) if status.code == 401 => anyhow!(
            "--token: the control plane refused the bootstrap token (expired or deleted?): {error}"
        ),
        _ => anyhow!("create CertificateSigningRequest {name}: {error}"),
    }
}

/// The issued certificate of `name`; an error naming the request when it is denied or failed,
/// or not issued within `timeout`.
async fn wait_for_certificate(
    csrs: &Api<CertificateSigningRequest>,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<String> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        match csrs.get(name).await {
            Ok(csr) => {
                let status = csr.status.unwrap_or_default();
                for condition in status.conditions.iter().flatten() {
                    if matches!(condition.type_.as_str(), "Denied" | "Failed") {
                        bail!(
                            "CertificateSigningRequest {name} was {}: {}: {}",
                            condition.type_.to_lowercase(),
                            condition.reason.as_deref().unwrap_or(""),
                            condition.message.as_deref().unwrap_or("")
                        );
                    }
                }
                if let Some(ByteString(bytes)) = status.certificate.filter(|c| !c.0.is_empty()) {
                    return String::from_utf8(bytes).map_err(|_| {
                        anyhow!("CertificateSigningRequest {name}: the certificate is not PEM text")
                    });
                }
            }
            Err(error) => tracing::debug!(csr = name, %error, "cannot read the request; retrying"),
        }
        if tokio::time::Instant::now() + POLL > deadline {
            bail!(
                "CertificateSigningRequest {name} was not issued within {timeout:?}: approve it on the control plane (kubectl certificate approve {name}) or enable the agentcsrapproving controller"
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The agent's RBAC on the control plane: Karmada's `GenerateRBACResources` for the cluster
/// (`system:karmada:<cluster>:agent` ClusterRole and binding, the `agent-secret` Role in
/// `karmada-cluster`, the `agent-work` Role in the execution namespace), with the verbs
/// Flotilla's agent uses besides (`patch` on its Lease and Works, `update` on its Cluster).
/// Objects and namespaces that exist are left alone.
async fn ensure_rbac(client: &kube::Client, cluster: &str) -> anyhow::Result<()> {
    let user = format!("{AGENT_USER_PREFIX}{cluster}");
    let execution_space = flotilla_api::karmada::names::execution_space_name(cluster);
    let subject = json!([{"apiGroup": RBAC, "kind": "User", "name": user}]);
    let agent_role = format!("system:karmada:{cluster}:agent");
    create::<ClusterRole>(
        Api::all(client.clone()),
        json!({
            "metadata": {"name": agent_role},
            "rules": [
                {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "resourceNames": [cluster], "verbs": ["get", "delete", "update"]},
                {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["create", "list", "watch"]},
                {"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/status"], "resourceNames": [cluster], "verbs": ["update"]},
                {"apiGroups": ["config.karmada.io"], "resources": ["resourceinterpreterwebhookconfigurations", "resourceinterpretercustomizations"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update", "patch"]},
                {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get", "create"]},
                {"apiGroups": [""], "resources": ["services"], "verbs": ["list", "watch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["patch", "create", "update"]},
            ],
        }),
    )
    .await?;
    create::<ClusterRoleBinding>(
        Api::all(client.clone()),
        json!({
            "metadata": {"name": agent_role},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": agent_role},
            "subjects": subject,
        }),
    )
    .await?;
    let secret_role = format!("system:karmada:{cluster}:agent-secret");
    let work_role = format!("system:karmada:{cluster}:agent-work");
    let roles = [
        (
            CLUSTER_NAMESPACE.to_owned(),
            secret_role,
            json!([
                {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [cluster, format!("{cluster}-impersonator")], "verbs": ["get", "patch"]},
                {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
            ]),
        ),
        (
            execution_space,
            work_role,
            json!([
                {"apiGroups": ["work.karmada.io"], "resources": ["works"], "verbs": ["get", "create", "list", "watch", "update", "patch", "delete"]},
                {"apiGroups": ["work.karmada.io"], "resources": ["works/status"], "verbs": ["patch", "update"]},
            ]),
        ),
    ];
    for (namespace, name, rules) in roles {
        create::<Namespace>(
            Api::all(client.clone()),
            json!({"metadata": {"name": namespace, "labels": {"karmada.io/system": "true"}}}),
        )
        .await?;
        create::<Role>(
            Api::namespaced(client.clone(), &namespace),
            json!({"metadata": {"name": name, "namespace": namespace}, "rules": rules}),
        )
        .await?;
        create::<RoleBinding>(
            Api::namespaced(client.clone(), &namespace),
            json!({
                "metadata": {"name": name, "namespace": namespace},
                "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name},
                "subjects": subject,
            }),
        )
        .await?;
    }
    Ok(())
}

/// Creates `object` unless one of its name exists.
async fn create<K>(api: Api<K>, mut object: Value) -> anyhow::Result<()>
where
    K: kube::Resource<DynamicType = ()>
        + k8s_openapi::Resource
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    object["apiVersion"] = <K as k8s_openapi::Resource>::API_VERSION.into();
    object["kind"] = <K as k8s_openapi::Resource>::KIND.into();
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let typed: K = serde_json::from_value(object)
        .with_context(|| format!("build {} {name}", <K as k8s_openapi::Resource>::KIND))?;
    match api.create(&PostParams::default(), &typed).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error)
            .with_context(|| format!("create {} {name}", <K as k8s_openapi::Resource>::KIND)),
    }
}

/// A one-context kubeconfig for `server` trusting the CA (`ca_data`, base64 PEM), with the
/// user fields given (Karmada's names: cluster `karmada-apiserver`, context `<user>@<cluster>`).
fn kubeconfig_text(server: &str, ca_data: &str, user: &str, user_fields: &str) -> String {
    let context = format!("{user}@{KUBECONFIG_CLUSTER}");
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {KUBECONFIG_CLUSTER}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca_data}\nusers:\n- name: '{user}'\n  user:\n    {user_fields}\ncontexts:\n- name: '{context}'\n  context:\n    cluster: {KUBECONFIG_CLUSTER}\n    user: '{user}'\ncurrent-context: '{context}'\n"
    )
}

async fn client_from(text: &str) -> anyhow::Result<kube::Client> {
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(text).context("build a bootstrap kubeconfig")?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .context("load a bootstrap kubeconfig")?;
    config.connect_timeout = Some(Duration::from_secs(10));
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(flotilla_agent::kubeconfig::USER_AGENT),
    ));
    kube::Client::try_from(config).context("build a bootstrap client")
}

/// Writes `text` to `path` readable by its owner only (its directory created `0700`), replacing
/// any previous file at once (written beside it, then renamed).
pub(super) fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    #[cfg(unix)]
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(0o700);
    builder
        .create(dir)
        .with_context(|| format!("create {}", dir.display()))?;
    let temporary = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let mut file = options
        .open(&temporary)
        .with_context(|| format!("write {}", temporary.display()))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("write {}", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("move {} to {}", temporary.display(), path.display()))
}

/// The `not after` of the kubeconfig's client certificate when it is for `user` and valid now;
/// otherwise why it cannot be used.
pub fn existing_certificate(path: &Path, user: &str) -> Result<jiff::Timestamp, String> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|e| e.to_string())?;
    let data = kubeconfig
        .auth_infos
        .iter()
        .filter_map(|a| a.auth_info.as_ref())
        .find_map(|a| a.client_certificate_data.clone())
        .ok_or("has no client-certificate-data")?;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|_| "has client-certificate-data that is not base64")?;
    certificate_for(&pem, user, jiff::Timestamp::now())
}

/// The `not after` of the first certificate in `pem` when its common name is `user` and `now`
/// is within its validity.
pub fn certificate_for(
    pem: &[u8],
    user: &str,
    now: jiff::Timestamp,
) -> Result<jiff::Timestamp, String> {
    let ders =
        discovery::pem_certificates(pem).map_err(|e| format!("has a broken certificate: {e}"))?;
    let (_, certificate) = x509_parser::parse_x509_certificate(&ders[0])
        .map_err(|e| format!("has a broken certificate: {e}"))?;
    let common_name = certificate
        .subject()
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default();
    if common_name != user {
        return Err(format!(
            "holds a certificate for {common_name:?}, not {user:?}"
        ));
    }
    let validity = certificate.validity();
    let at = |t: x509_parser::time::ASN1Time| {
        jiff::Timestamp::from_second(t.timestamp()).unwrap_or(jiff::Timestamp::MIN)
    };
    let (not_before, not_after) = (at(validity.not_before), at(validity.not_after));
    if now < not_before || now >= not_after {
        return Err(format!(
            "holds a certificate valid from {not_before} to {not_after} only"
        ));
    }
    Ok(not_after)
}

/// `len` random characters of [`NAME_ALPHABET`].
pub(super) fn random_name(len: usize) -> anyhow::Result<String> {
    crate::token::random_chars(NAME_ALPHABET, len)
}

#[cfg(test)]
mod tests;
