//! `flotilla up --demo`: an in-process `flotilla sim` with three GPU clusters — `cn-shanghai`
//! (aliyun), `us-west-2` and `eu-central-1` (aws), each with a few dozen `gpu-a100` nodes
//! labelled with their region and zone — joined in push mode through the same code as
//! `flotilla join`, and one kubeconfig with the contexts `flotilla`, `cn-shanghai`, `us-west-2`
//! and `eu-central-1` (plus the sim's fault endpoint, so `flotilla sim fault --kubeconfig` works).

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use flotilla_sim::{Sim, SimConfig};
use serde_json::Value;

use crate::join::{self, JoinRequest};

/// The demo's clusters: name, provider, zones.
pub const CLUSTERS: &[(&str, &str, &[&str])] = &[
    ("cn-shanghai", "aliyun", &["cn-shanghai-a", "cn-shanghai-b"]),
    (
        "us-west-2",
        "aws",
        &["us-west-2a", "us-west-2b", "us-west-2c"],
    ),
    ("eu-central-1", "aws", &["eu-central-1a", "eu-central-1b"]),
];

/// GPU nodes per demo cluster.
pub const NODES_PER_CLUSTER: usize = 24;

/// The running demo members; dropping it stops them.
#[derive(Debug)]
pub struct Demo {
    pub sim: Arc<Sim>,
    _control: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Drop for Demo {
    fn drop(&mut self) {
        self._control.abort();
    }
}

fn config() -> anyhow::Result<SimConfig> {
    let mut yaml = String::from("seed: 1\nsystemComponents: true\nclusters:\n");
    for (name, provider, zones) in CLUSTERS {
        yaml.push_str(&format!(
            "- name: {name}\n  region: {name}\n  provider: {provider}\n  zones: [{}]\n  nodePools: [{{name: a100, count: {NODES_PER_CLUSTER}, profile: gpu-a100}}]\n",
            zones.join(", ")
        ));
    }
    SimConfig::from_yaml(&yaml).context("the demo's sim configuration")
}

/// Starts the members, joins them to `control`, and writes `kubeconfig` (which already holds
/// the `flotilla` context) with one context per member added.
pub async fn start(control: &kube::Client, kubeconfig: &Path) -> anyhow::Result<Demo> {
    let spec = config()?
        .validate()
        .context("the demo's sim configuration")?;
    let dir = tempfile::tempdir().context("create a directory for the demo members")?;
    let sim = Arc::new(
        Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir.path())
            .await
            .context("start the demo members")?,
    );
    let (address, control_task) = flotilla_sim::control::start(sim.clone())
        .await
        .context("start the sim's fault endpoint")?;
    let members: PathBuf = dir.path().join("members.kubeconfig");
    flotilla_sim::kubeconfig::write(&members, &sim.clusters, Some(&address))
        .context("write the members' kubeconfig")?;
    for (name, provider, zones) in CLUSTERS {
        let member = join::probe::load_member(&members, Some(name)).await?;
        // A durable store remembers the members of an earlier demo run: they are gone (new
        // simulated clusters, new ids), so their registrations go first.
        let clusters: kube::Api<flotilla_api::karmada::Cluster> = kube::Api::all(control.clone());
        if clusters
            .get_opt(name)
            .await
            .with_context(|| format!("read Cluster {name}"))?
            .is_some()
        {
            join::unjoin(control, name, None)
                .await
                .with_context(|| format!("remove the earlier demo member {name}"))?;
        }
        let mut request = JoinRequest::push(*name);
        request.region = Some((*name).to_owned());
        request.provider = Some((*provider).to_owned());
        request.zones = zones.iter().map(|z| (*z).to_owned()).collect();
        let report = join::join(control, &member, &request)
            .await
            .with_context(|| format!("join the demo member {name}"))?;
        tracing::info!(
            cluster = name,
            steps = report.lines.len(),
            "demo member joined"
        );
    }
    merge_kubeconfig(kubeconfig, &members)?;
    Ok(Demo {
        sim,
        _control: control_task,
        _dir: dir,
    })
}

/// Appends the members' clusters, users and contexts (and the sim extension) to `path`,
/// keeping its current context.
fn merge_kubeconfig(path: &Path, members: &Path) -> anyhow::Result<()> {
    let read = |p: &Path| -> anyhow::Result<Value> {
        let text = std::fs::read_to_string(p).with_context(|| format!("read {}", p.display()))?;
        yaml_serde::from_str(&text).with_context(|| format!("parse {}", p.display()))
    };
    let mut doc = read(path)?;
    let members = read(members)?;
    for list in ["clusters", "users", "contexts", "extensions"] {
        let extra = members[list].as_array().cloned().unwrap_or_default();
        match doc[list].as_array_mut() {
            Some(items) => items.extend(extra),
            None => doc[list] = Value::Array(extra),
        }
    }
    let yaml = yaml_serde::to_string(&doc).context("render the demo kubeconfig")?;
    let tmp = path.with_extension("tmp");
    {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("write {}", tmp.display()))?;
        file.write_all(yaml.as_bytes())
            .with_context(|| format!("write {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("write {}", path.display()))?;
    Ok(())
}
