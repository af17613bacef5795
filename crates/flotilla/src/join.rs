//! `flotilla join` / `flotilla unjoin`: registering a member in push mode, Karmada's way. In
//! the member: namespace `karmada-cluster`, a ServiceAccount with the rights the control plane
//! needs and its token, and the impersonator ServiceAccount `karmada-impersonator` and its
//! token; on the control plane: the Secrets `karmada-cluster/<name>` (`token`, `caBundle`) and
//! `karmada-cluster/<name>-impersonator` (`token`) and a `Cluster` (`syncMode: Push`,
//! `apiEndpoint`, `secretRef`, `impersonatorSecretRef`, topology, labels, taints, `spec.id` =
//! the member's `kube-system` UID).
//!
//! [`join`] and [`unjoin`] take clients, so `up --demo` calls them in process; the CLI wrappers
//! load kubeconfigs and print the [`Report`]. Both are idempotent. Every check that can fail
//! runs before anything is written, and a later failure rolls back what this run created.
//! Tokens are never printed or logged.

pub mod control;
pub mod input;
pub mod member;
pub mod probe;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use base64::Engine as _;
use k8s_openapi::api::core::v1::{Namespace, Taint};
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

pub use probe::{MemberAccess, ProbeError};

/// How long the member may take to authorize the new service account (its RBAC cache).
const AUTHORIZE_WAIT: Duration = Duration::from_secs(15);

/// What to register (push mode).
#[derive(Debug, Clone)]
pub struct JoinRequest {
    pub name: String,
    pub region: Option<String>,
    pub zones: Vec<String>,
    pub provider: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
}

impl JoinRequest {
    /// A push join of `name` with no topology.
    pub fn push(name: impl Into<String>) -> Self {
        JoinRequest {
            name: name.into(),
            region: None,
            zones: Vec::new(),
            provider: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
        }
    }
}

/// What a run did, one line per object, in order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub lines: Vec<String>,
}

impl Report {
    pub fn did(&mut self, line: String) {
        tracing::debug!(%line, "join");
        self.lines.push(line);
    }
}

/// Something this run created, to delete again if a later step fails.
#[derive(Debug, Clone)]
pub enum Undo {
    MemberNamespace,
    MemberRole(String),
    MemberBinding(String),
    MemberAccount(String),
    MemberSecret(String),
    ControlSecret(String),
    Cluster(String),
}

/// Why `join` or `unjoin` failed. Messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error(transparent)]
    Input(#[from] input::InputError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(
        "a cluster named {name:?} is already joined and is another member (its id {existing_id:?}, this member's id {id:?}): choose another name, or unjoin {name} first"
    )]
    DuplicateName {
        name: String,
        existing_id: String,
        id: String,
    },
    #[error(
        "this member is already joined as cluster {other:?} (same id {id:?}); refusing to join it again as {name:?}: unjoin {other} first"
    )]
    DuplicateMember {
        name: String,
        other: String,
        id: String,
    },
    #[error("cluster {name:?} is already registered with syncMode {mode}: unjoin it first")]
    ModeConflict { name: String, mode: String },
    #[error("{side}: cannot {step}: {}", probe::describe(source))]
    Step {
        side: String,
        step: String,
        #[source]
        source: kube::Error,
    },
    #[error("{message}")]
    Token { message: String },
    #[error("{message}")]
    Unjoin { message: String },
    #[error("{source}\nrolled back what this run created:\n  {}", undone.join("\n  "))]
    RolledBack {
        #[source]
        source: Box<JoinError>,
        undone: Vec<String>,
    },
}

/// Registers the member `member` as `request.name` (push mode).
pub async fn join(
    control: &kube::Client,
    member: &MemberAccess,
    request: &JoinRequest,
) -> Result<Report, JoinError> {
    input::check_cluster_name(&request.name)?;
    let facts = probe::probe(member).await?;
    let existing = control::check_duplicates(control, &request.name, &facts.id, "Push").await?;
    let mut report = Report::default();
    report.did(format!(
        "member: {} is Kubernetes {} (kube-system uid {})",
        member.endpoint, facts.version, facts.id
    ));
    let mut undo = Vec::new();
    let result = async {
        let tokens = member::ensure(&member.client, &request.name, &mut report, &mut undo).await?;
        verify_token(member, &tokens.control).await?;
        report.did("member: the control plane's token is accepted and authorized".into());
        control::ensure_secret(
            control,
            &request.name,
            &tokens.control,
            &member.ca_pem,
            &mut report,
            &mut undo,
        )
        .await?;
        control::ensure_impersonator_secret(
            control,
            &request.name,
            &tokens.impersonator,
            &mut report,
            &mut undo,
        )
        .await?;
        control::ensure_cluster(
            control,
            request,
            member,
            &facts.id,
            existing.as_ref(),
            &mut report,
            &mut undo,
        )
        .await
    }
    .await;
    match result {
        Ok(()) => Ok(report),
        Err(error) => {
            let undone = roll_back(control, &member.client, undo).await;
            if undone.is_empty() {
                Err(error)
            } else {
                Err(JoinError::RolledBack {
                    source: Box::new(error),
                    undone,
                })
            }
        }
    }
}

/// The token must work for the control plane before it is recorded there.
async fn verify_token(member: &MemberAccess, token: &str) -> Result<(), JoinError> {
    let client = probe::token_client(&member.endpoint, &member.ca_pem, member.insecure, token)
        .await
        .map_err(|message| JoinError::Token { message })?;
    let namespaces: Api<Namespace> = Api::all(client);
    let deadline = tokio::time::Instant::now() + AUTHORIZE_WAIT;
    loop {
        match namespaces.get("kube-system").await {
            Ok(_) => return Ok(()),
            // A new binding reaches the member's authorizer a moment after it is written.
            Err(kube::Error::Api(status))
                if matches!(status.code, 401 | 403) && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => {
                return Err(JoinError::Token {
                    message: format!(
                        "the member does not accept the new service account's token: {}",
                        probe::classify(&member.endpoint, "get namespace kube-system", error)
                    ),
                });
            }
        }
    }
}

async fn roll_back(control: &kube::Client, member: &kube::Client, undo: Vec<Undo>) -> Vec<String> {
    use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    let mut report = Report::default();
    for item in undo.into_iter().rev() {
        let result = match &item {
            Undo::Cluster(name) => {
                let api: Api<flotilla_api::karmada::Cluster> = Api::all(control.clone());
                member::delete("control plane", &api, name, "Cluster", &mut report).await
            }
            Undo::ControlSecret(name) => {
                let api: Api<Secret> = Api::namespaced(control.clone(), control::CONTROL_NAMESPACE);
                member::delete("control plane", &api, name, "Secret", &mut report).await
            }
            Undo::MemberSecret(name) => {
                let api: Api<Secret> = Api::namespaced(member.clone(), member::MEMBER_NAMESPACE);
                member::delete("member", &api, name, "Secret", &mut report).await
            }
            Undo::MemberAccount(name) => {
                let api: Api<ServiceAccount> =
                    Api::namespaced(member.clone(), member::MEMBER_NAMESPACE);
                member::delete("member", &api, name, "ServiceAccount", &mut report).await
            }
            Undo::MemberBinding(name) => {
                let api: Api<ClusterRoleBinding> = Api::all(member.clone());
                member::delete("member", &api, name, "ClusterRoleBinding", &mut report).await
            }
            Undo::MemberRole(name) => {
                let api: Api<ClusterRole> = Api::all(member.clone());
                member::delete("member", &api, name, "ClusterRole", &mut report).await
            }
            Undo::MemberNamespace => {
                let api: Api<Namespace> = Api::all(member.clone());
                member::delete(
                    "member",
                    &api,
                    member::MEMBER_NAMESPACE,
                    "Namespace",
                    &mut report,
                )
                .await
            }
        };
        if let Err(error) = result {
            tracing::warn!(?item, %error, "roll back");
            report.did(format!("could not undo {item:?}: {error}"));
        }
    }
    report.lines
}

/// Removes the member `name`: what `join` made in the member (with `member`'s admin
/// credentials when given, else with the control plane's stored token), then the Cluster, its
/// execution namespace, its Secret and any agent Lease on the control plane.
pub async fn unjoin(
    control: &kube::Client,
    name: &str,
    member: Option<&MemberAccess>,
) -> Result<Report, JoinError> {
    input::check_cluster_name(name)?;
    let mut report = Report::default();
    let clusters: Api<flotilla_api::karmada::Cluster> = Api::all(control.clone());
    let cluster = clusters
        .get_opt(name)
        .await
        .map_err(|source| JoinError::Step {
            side: "control plane".into(),
            step: "read the Cluster".into(),
            source,
        })?;
    // As karmadactl unjoin: the Cluster goes first, while the member still accepts the
    // credentials the control plane holds, so the controllers can remove what they put there
    // (Works' objects, propagated namespaces) before its finalizer lets it go; only then do the
    // member's ServiceAccount, RBAC and token go. The stored token is read before the Secret is
    // deleted with the Cluster.
    let stored = match (&member, &cluster) {
        (None, Some(cluster)) if cluster.spec.sync_mode != "Pull" => {
            Some(stored_token_client(control, cluster).await)
        }
        _ => None,
    };
    control::remove(control, name, &mut report).await?;
    match (member, &cluster) {
        (Some(member), _) => member::remove(&member.client, name, true, &mut report).await?,
        (None, Some(cluster)) if cluster.spec.sync_mode == "Pull" => report.did(format!(
            "member: {name} is a pull-mode cluster: stop its agent to disconnect it"
        )),
        (None, Some(_)) => match stored {
            Some(Ok(client)) => {
                if let Err(error) = member::remove(&client, name, false, &mut report).await {
                    report.did(format!(
                        "member: cleanup failed ({error}); remove ClusterRole {} in the member by hand or rerun with --cluster-kubeconfig",
                        member::role_name(name)
                    ));
                }
            }
            Some(Err(message)) => report.did(format!(
                "member: not cleaned up ({message}); rerun with --cluster-kubeconfig to remove ClusterRole {}",
                member::role_name(name)
            )),
            None => {}
        },
        (None, None) => {}
    }
    Ok(report)
}

/// A client for the member with the credentials the control plane stored at join.
async fn stored_token_client(
    control: &kube::Client,
    cluster: &flotilla_api::karmada::Cluster,
) -> Result<kube::Client, String> {
    let reference = cluster
        .spec
        .secret_ref
        .as_ref()
        .ok_or("the Cluster has no secretRef")?;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(control.clone(), &reference.namespace);
    let secret = secrets.get(&reference.name).await.map_err(|e| {
        format!(
            "cannot read Secret {}/{}: {e}",
            reference.namespace, reference.name
        )
    })?;
    let data = secret.data.unwrap_or_default();
    let field = |key: &str| {
        data.get(key)
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            .unwrap_or_default()
    };
    probe::token_client(
        &cluster.spec.api_endpoint,
        &field("caBundle"),
        cluster.spec.insecure_skip_tls_verification,
        &field("token"),
    )
    .await
}

/// Options of `flotilla join`.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// Name of the cluster on the control plane.
    pub name: String,
    /// Kubeconfig of the member (admin credentials: join creates RBAC objects there).
    #[arg(long)]
    pub cluster_kubeconfig: PathBuf,
    /// Context of the member kubeconfig (default: its current context).
    #[arg(long)]
    pub cluster_context: Option<String>,
    /// Region of the member (`spec.region`).
    #[arg(long)]
    pub region: Option<String>,
    /// Availability zone (`spec.zones`); repeat or separate with commas.
    #[arg(long = "zone", value_delimiter = ',')]
    pub zones: Vec<String>,
    /// Cloud provider (`spec.provider`).
    #[arg(long)]
    pub provider: Option<String>,
    /// Label of the Cluster, `key=value`; repeatable.
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// Taint of the Cluster, `key[=value]:Effect`; repeatable.
    #[arg(long = "taint")]
    pub taints: Vec<String>,
    #[command(flatten)]
    pub control: ControlPlaneArgs,
}

/// Options of `flotilla unjoin`.
#[derive(Debug, Clone, clap::Args)]
pub struct UnjoinArgs {
    /// Name of the cluster on the control plane.
    pub name: String,
    /// Kubeconfig of the member, to remove join's objects with admin rights (default: with the
    /// control plane's stored token).
    #[arg(long)]
    pub cluster_kubeconfig: Option<PathBuf>,
    /// Context of the member kubeconfig.
    #[arg(long)]
    pub cluster_context: Option<String>,
    #[command(flatten)]
    pub control: ControlPlaneArgs,
}

/// Where the control plane is.
#[derive(Debug, Clone, clap::Args)]
pub struct ControlPlaneArgs {
    /// Kubeconfig of the control plane (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the control plane kubeconfig.
    #[arg(long)]
    pub context: Option<String>,
}

impl ControlPlaneArgs {
    /// A client of the control plane.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let config = self.config().await?;
        kube::Client::try_from(config).context("build the control plane client")
    }

    /// The client configuration of the control plane (server, CA, credentials).
    pub async fn config(&self) -> anyhow::Result<kube::Config> {
        let kubeconfig = match &self.kubeconfig {
            Some(path) => Kubeconfig::read_from(path)
                .with_context(|| format!("read the kubeconfig {}", path.display()))?,
            None => Kubeconfig::read()
                .context("read the control plane kubeconfig ($KUBECONFIG or ~/.kube/config; or pass --kubeconfig)")?,
        };
        let options = KubeConfigOptions {
            context: self.context.clone(),
            ..Default::default()
        };
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .context("load the control plane kubeconfig")?;
        config.connect_timeout = Some(probe::PROBE_TIMEOUT);
        Ok(config)
    }
}

/// `flotilla join`.
pub async fn run_join(args: JoinArgs) -> anyhow::Result<()> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let request = JoinRequest {
        name: args.name.clone(),
        region: args.region.clone(),
        zones: args
            .zones
            .iter()
            .filter(|z| !z.is_empty())
            .cloned()
            .collect(),
        provider: args.provider.clone(),
        labels: input::parse_labels(&args.labels)?,
        taints: input::parse_taints(&args.taints)?,
    };
    input::check_cluster_name(&request.name)?;
    let member =
        probe::load_member(&args.cluster_kubeconfig, args.cluster_context.as_deref()).await?;
    let control = args.control.client().await?;
    let report = join(&control, &member, &request)
        .await
        .with_context(|| format!("join {}", request.name))?;
    for line in &report.lines {
        println!("{line}");
    }
    println!("cluster {} joined (Push)", request.name);
    Ok(())
}

/// `flotilla unjoin`.
pub async fn run_unjoin(args: UnjoinArgs) -> anyhow::Result<()> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let member = match &args.cluster_kubeconfig {
        Some(path) => Some(probe::load_member(path, args.cluster_context.as_deref()).await?),
        None => None,
    };
    let control = args.control.client().await?;
    let report = unjoin(&control, &args.name, member.as_ref())
        .await
        .with_context(|| format!("unjoin {}", args.name))?;
    for line in &report.lines {
        println!("{line}");
    }
    println!("cluster {} unjoined", args.name);
    Ok(())
}

/// base64 of PEM text, as kubeconfigs embed CAs.
pub(crate) fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}
