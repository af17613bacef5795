//! `flotilla token create|list|delete`: bootstrap tokens for pull-mode registration, managed as
//! `karmadactl token` does (`pkg/karmadactl/token`, `pkg/karmadactl/util/bootstraptoken`):
//! Secrets `kube-system/bootstrap-token-<id>` with a 24 h TTL, both usages and Karmada's extra
//! group by default. `create --print-register-command` prints what a member runs: the
//! `flotilla agent` bootstrap command and the equivalent `karmadactl register`.

use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use base64::Engine as _;
use flotilla_apiserver::auth::lifted::bootstrap_token as bt;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::{Value, json};

use crate::agent::discovery::{self, TOKEN_ID_PATTERN, TOKEN_PATTERN};
use crate::join::ControlPlaneArgs;
use crate::registration::TOKEN_GROUP;

/// The characters of token ids and secrets.
const TOKEN_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// The usages a token may have (`bootstrapapi.KnownTokenUsages`).
const KNOWN_USAGES: &[&str] = &["signing", "authentication"];
const KEY_DESCRIPTION: &str = "description";

/// `flotilla token`.
#[derive(Debug, clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a bootstrap token on the control plane and print it (or the register commands).
    Create(CreateArgs),
    /// List the bootstrap tokens on the control plane.
    List {
        #[command(flatten)]
        control: ControlPlaneArgs,
    },
    /// Delete bootstrap tokens, given by token id (`abcdef`) or whole token.
    Delete {
        /// Token ids or tokens.
        tokens: Vec<String>,
        #[command(flatten)]
        control: ControlPlaneArgs,
    },
}

/// Options of `flotilla token create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// Print the commands a member runs to register with this token instead of the token alone.
    #[arg(long)]
    pub print_register_command: bool,
    /// How long the token lives before the token cleaner deletes it (0: forever).
    #[arg(long, default_value = "24h", value_parser = crate::bench::parse_duration)]
    pub ttl: Duration,
    /// What the token may do: signing (cluster-info), authentication; comma separated.
    #[arg(long, value_delimiter = ',', default_value = "signing,authentication")]
    pub usages: Vec<String>,
    /// Extra groups the token authenticates as (`system:bootstrappers:…`); comma separated.
    #[arg(long, value_delimiter = ',', default_value = TOKEN_GROUP)]
    pub groups: Vec<String>,
    /// A human-friendly description of what the token is for.
    #[arg(long, default_value = "")]
    pub description: String,
    #[command(flatten)]
    pub control: ControlPlaneArgs,
}

/// `flotilla token …`.
pub async fn run(args: TokenArgs) -> anyhow::Result<()> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    match args.command {
        TokenCommand::Create(create) => run_create(create).await,
        TokenCommand::List { control } => run_list(control).await,
        TokenCommand::Delete { tokens, control } => run_delete(tokens, control).await,
    }
}

async fn run_create(args: CreateArgs) -> anyhow::Result<()> {
    validate_usages(&args.usages)?;
    validate_groups(&args.groups)?;
    let config = args.control.config().await?;
    let register = if args.print_register_command {
        Some(RegisterTarget::from_config(&config)?)
    } else {
        None
    };
    let client = kube::Client::try_from(config).context("build the control plane client")?;
    // Members are told the server `cluster-info` advertises (`up --advertise-address`), which
    // may differ from the address this kubeconfig reaches.
    let register = match register {
        Some(target) => Some(target.advertised(&client).await),
        None => None,
    };
    let id = random_chars(TOKEN_ALPHABET, 6)?;
    let secret = random_chars(TOKEN_ALPHABET, 16)?;
    let expiration = (!args.ttl.is_zero())
        .then(|| SignedDuration::try_from(args.ttl).ok())
        .flatten()
        .map(|ttl| Timestamp::now().saturating_add(ttl))
        .transpose()
        .context("--ttl is out of range")?;
    let object = token_secret(
        &id,
        &secret,
        &args.description,
        expiration,
        &args.usages,
        &args.groups,
    );
    let secrets: Api<Secret> = Api::namespaced(client, bt::NAMESPACE);
    let name = format!("{}{id}", bt::SECRET_PREFIX);
    if secrets
        .get_opt(&name)
        .await
        .context("read bootstrap tokens")?
        .is_some()
    {
        bail!("a token with id {id:?} already exists");
    }
    let object: Secret = serde_json::from_value(object).context("build the token Secret")?;
    secrets
        .create(&PostParams::default(), &object)
        .await
        .with_context(|| format!("failed to create bootstrap token with name {name}"))?;
    let token = format!("{id}.{secret}");
    match register {
        Some(target) => print!("{}", target.commands(&token)),
        None => println!("{token}"),
    }
    Ok(())
}

async fn run_list(control: ControlPlaneArgs) -> anyhow::Result<()> {
    let secrets: Api<Secret> = Api::namespaced(control.client().await?, bt::NAMESPACE);
    let list = secrets
        .list(&ListParams::default().fields(&format!("type={}", bt::SECRET_TYPE)))
        .await
        .context("failed to list bootstrap tokens")?;
    let now = Timestamp::now();
    let mut rows = Vec::new();
    for secret in list.items {
        let value = serde_json::to_value(&secret).context("read a token Secret")?;
        match token_row(&value, now) {
            Ok(row) => rows.push(row),
            Err(error) => eprintln!("{error}"),
        }
    }
    print!("{}", table(&rows));
    Ok(())
}

async fn run_delete(tokens: Vec<String>, control: ControlPlaneArgs) -> anyhow::Result<()> {
    if tokens.is_empty() {
        bail!("missing subcommand; 'token delete' is missing token of form {TOKEN_ID_PATTERN:?}");
    }
    let ids = tokens
        .iter()
        .map(|t| token_id(t))
        .collect::<Result<Vec<_>, _>>()?;
    let secrets: Api<Secret> = Api::namespaced(control.client().await?, bt::NAMESPACE);
    for id in ids {
        let name = format!("{}{id}", bt::SECRET_PREFIX);
        secrets
            .delete(&name, &DeleteParams::default())
            .await
            .with_context(|| format!("failed to delete secret {name:?}"))?;
        println!("bootstrap token {id:?} deleted");
    }
    Ok(())
}

/// The token id of a token id or a whole token.
pub fn token_id(given: &str) -> anyhow::Result<&str> {
    if bt::is_valid_id(given) {
        return Ok(given);
    }
    bt::parse_token(given).map(|(id, _)| id).ok_or_else(|| {
        anyhow!("given token didn't match pattern {TOKEN_ID_PATTERN:?} or {TOKEN_PATTERN:?}")
    })
}

/// kubeadm's usage check (Karmada creates whatever it is given; a token with an unknown usage
/// would silently do nothing).
fn validate_usages(usages: &[String]) -> anyhow::Result<()> {
    for usage in usages {
        if !KNOWN_USAGES.contains(&usage.as_str()) {
            bail!(
                "--usages: invalid bootstrap token usage string: {usage}, valid usage options: {}",
                KNOWN_USAGES.join(",")
            );
        }
    }
    Ok(())
}

/// kubeadm's group check: a token with a group the authenticator refuses never authenticates.
fn validate_groups(groups: &[String]) -> anyhow::Result<()> {
    for group in groups {
        let probe = json!({"data": {bt::KEY_EXTRA_GROUPS: base64::engine::general_purpose::STANDARD.encode(group)}});
        if bt::groups(&probe).is_err() {
            bail!(
                "--groups: bootstrap group {group:?} is invalid (must match system:bootstrappers:[a-z0-9:-]{{0,255}}[a-z0-9])"
            );
        }
    }
    Ok(())
}

/// The token's Secret (`ConvertBootstrapTokenToSecret`).
pub fn token_secret(
    id: &str,
    secret: &str,
    description: &str,
    expiration: Option<Timestamp>,
    usages: &[String],
    groups: &[String],
) -> Value {
    let b64 = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let mut data = serde_json::Map::new();
    data.insert(bt::KEY_TOKEN_ID.into(), b64(id).into());
    data.insert(bt::KEY_TOKEN_SECRET.into(), b64(secret).into());
    if !description.is_empty() {
        data.insert(KEY_DESCRIPTION.into(), b64(description).into());
    }
    if let Some(at) = expiration {
        let text = at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        data.insert(bt::KEY_EXPIRATION.into(), b64(&text).into());
    }
    for usage in usages {
        data.insert(format!("usage-bootstrap-{usage}"), b64("true").into());
    }
    if !groups.is_empty() {
        data.insert(bt::KEY_EXTRA_GROUPS.into(), b64(&groups.join(",")).into());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": format!("{}{id}", bt::SECRET_PREFIX), "namespace": bt::NAMESPACE},
        "type": bt::SECRET_TYPE,
        "data": data,
    })
}

/// One line of `token list`: TOKEN, TTL, EXPIRES, USAGES, DESCRIPTION, EXTRA GROUPS.
pub type Row = [String; 6];

/// The row of a token Secret (`GetBootstrapTokenFromSecret`), or why it is not a token.
pub fn token_row(secret: &Value, now: Timestamp) -> Result<Row, String> {
    let name = secret["metadata"]["name"].as_str().unwrap_or_default();
    let id = bt::data(secret, bt::KEY_TOKEN_ID);
    if id.is_empty() {
        return Err(format!(
            "bootstrap Token Secret has no token-id data: {name}"
        ));
    }
    let expected = format!("{}{id}", bt::SECRET_PREFIX);
    if name != expected {
        return Err(format!(
            "bootstrap token name is not of the form '{}(token-id)'. Actual: {name:?}. Expected: {expected:?}",
            bt::SECRET_PREFIX
        ));
    }
    let token_secret = bt::data(secret, bt::KEY_TOKEN_SECRET);
    if token_secret.is_empty() {
        return Err(format!(
            "bootstrap Token Secret has no token-secret data: {name}"
        ));
    }
    let token = format!("{id}.{token_secret}");
    if bt::parse_token(&token).is_none() {
        return Err(format!(
            "bootstrap Token Secret is invalid and couldn't be parsed: {name} is not of the form {TOKEN_PATTERN:?}"
        ));
    }
    let expiration = bt::data(secret, bt::KEY_EXPIRATION);
    let (ttl, expires) = if expiration.is_empty() {
        ("<forever>".to_owned(), "<never>".to_owned())
    } else {
        let at: Timestamp = expiration.parse().map_err(|e| {
            format!("can't parse expiration time of bootstrap token {name:?}, err: {e}")
        })?;
        (
            short_human_duration(at.duration_since(now)),
            at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        )
    };
    let mut usages: Vec<String> = secret["data"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, _)| key.strip_prefix("usage-bootstrap-"))
        .filter(|usage| bt::data(secret, &format!("usage-bootstrap-{usage}")) == "true")
        .map(str::to_owned)
        .collect();
    usages.sort();
    let or_none = |text: String| {
        if text.is_empty() {
            "<none>".to_owned()
        } else {
            text
        }
    };
    Ok([
        token,
        ttl,
        expires,
        or_none(usages.join(",")),
        or_none(bt::data(secret, KEY_DESCRIPTION)),
        or_none(bt::data(secret, bt::KEY_EXTRA_GROUPS)),
    ])
}

/// The rows under kubectl's table header, columns three spaces apart.
pub fn table(rows: &[Row]) -> String {
    let header: Row = [
        "TOKEN",
        "TTL",
        "EXPIRES",
        "USAGES",
        "DESCRIPTION",
        "EXTRA GROUPS",
    ]
    .map(str::to_owned);
    let lines: Vec<&Row> = std::iter::once(&header).chain(rows).collect();
    let mut widths = [0usize; 6];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line.iter()) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in lines {
        let mut text = String::new();
        for (i, cell) in line.iter().enumerate() {
            if i + 1 < line.len() {
                text.push_str(&format!("{cell:<width$}   ", width = widths[i]));
            } else {
                text.push_str(cell);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

/// `k8s.io/apimachinery/pkg/util/duration.ShortHumanDuration`.
pub fn short_human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 60 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 24 {
        return format!("{hours}h");
    }
    if hours < 24 * 365 {
        return format!("{}d", hours / 24);
    }
    format!("{}y", hours / 24 / 365)
}

/// The control plane as a member is told to reach it: `host:port` and the CA pins, from the
/// kubeconfig `token create` uses (as `GenerateRegisterCommand` reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterTarget {
    pub address: String,
    pub pins: Vec<String>,
}

impl RegisterTarget {
    fn from_config(config: &kube::Config) -> anyhow::Result<RegisterTarget> {
        let address = config
            .cluster_url
            .authority()
            .map(|a| a.to_string())
            .ok_or_else(|| anyhow!("the kubeconfig's server {} has no host", config.cluster_url))?;
        let certificates = config
            .root_cert
            .as_ref()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| anyhow!("no CA certificates found in the kubeconfig"))?;
        let pins = certificates
            .iter()
            .map(|der| discovery::spki_hash(der))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow!("the kubeconfig's CA: {e}"))?;
        Ok(RegisterTarget { address, pins })
    }

    /// The same target at the server `kube-public/cluster-info` names, when it names one with a
    /// host (kept as it is otherwise: `cluster-info` is what a member verifies, but an older
    /// control plane may not have it).
    async fn advertised(self, client: &kube::Client) -> RegisterTarget {
        let configmaps: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(client.clone(), "kube-public");
        let server = configmaps
            .get_opt("cluster-info")
            .await
            .ok()
            .flatten()
            .and_then(|cm| cm.data?.remove("kubeconfig"))
            .and_then(|text| kube::config::Kubeconfig::from_yaml(&text).ok())
            .and_then(|k| k.clusters.into_iter().next()?.cluster?.server);
        let authority = server
            .and_then(|s| s.parse::<http::Uri>().ok())
            .and_then(|uri| uri.authority().map(|a| a.to_string()));
        match authority {
            Some(address) => RegisterTarget { address, ..self },
            None => self,
        }
    }

    /// The `flotilla agent` command, then `karmadactl register`'s, one per line.
    pub fn commands(&self, token: &str) -> String {
        let pins = self.pins.join(",");
        format!(
            "flotilla agent --bootstrap-server {address} --token {token} --discovery-token-ca-cert-hash {pins} --cluster-name <CLUSTER_NAME> --cluster-kubeconfig <MEMBER_KUBECONFIG>\nkarmadactl register {address} --token {token} --discovery-token-ca-cert-hash {pins}\n",
            address = self.address
        )
    }
}

/// `len` characters drawn uniformly from `alphabet` with the system's secure random generator.
pub fn random_chars(alphabet: &[u8], len: usize) -> anyhow::Result<String> {
    use ring::rand::SecureRandom as _;
    let random = ring::rand::SystemRandom::new();
    // Bytes at or above the largest multiple of the alphabet's size are dropped: no bias.
    let limit = 256 - 256 % alphabet.len();
    let mut out = String::with_capacity(len);
    let mut bytes = [0u8; 32];
    while out.len() < len {
        random
            .fill(&mut bytes)
            .map_err(|_| anyhow!("the system's random number generator failed"))?;
        for byte in bytes.iter().map(|&b| usize::from(b)) {
            if byte < limit && out.len() < len {
                out.push(char::from(alphabet[byte % alphabet.len()]));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
