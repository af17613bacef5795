//! The simulator's kubeconfig: one cluster, user and context per simulated cluster (each named
//! after it, the admin client certificate inline), plus a top-level extension
//! `flotilla.io/sim` recording the fault control endpoint and its token, so the file is all
//! `flotilla sim fault` needs. kubectl and client-go keep unknown extensions untouched.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::cluster::SimCluster;
use crate::error::SimError;

/// Name of the kubeconfig extension that records the control endpoint.
pub const EXTENSION: &str = "flotilla.io/sim";

/// Where faults are sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlAddress {
    /// `http://127.0.0.1:<port>`
    pub url: String,
    pub token: String,
}

/// The kubeconfig document for `clusters`.
pub fn render(clusters: &[SimCluster], control: Option<&ControlAddress>) -> Value {
    let mut doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "current-context": clusters.first().map(|c| c.name.clone()).unwrap_or_default(),
        "clusters": clusters.iter().map(|c| json!({
            "name": c.name,
            "cluster": {"server": c.url, "certificate-authority-data": STANDARD.encode(c.pki.ca_cert_pem())},
        })).collect::<Vec<_>>(),
        "users": clusters.iter().map(|c| json!({
            "name": format!("{}-admin", c.name),
            "user": {
                "client-certificate-data": STANDARD.encode(&c.pki.admin().cert_pem),
                "client-key-data": STANDARD.encode(&c.pki.admin().key_pem),
            },
        })).collect::<Vec<_>>(),
        "contexts": clusters.iter().map(|c| json!({
            "name": c.name,
            "context": {"cluster": c.name, "user": format!("{}-admin", c.name)},
        })).collect::<Vec<_>>(),
    });
    if let Some(control) = control {
        doc["extensions"] = json!([{
            "name": EXTENSION,
            "extension": {"control": control.url, "token": control.token},
        }]);
    }
    doc
}

/// Writes the kubeconfig with mode 0600, replacing the file atomically.
pub fn write(
    path: &Path,
    clusters: &[SimCluster],
    control: Option<&ControlAddress>,
) -> Result<(), SimError> {
    let yaml = yaml_serde::to_string(&render(clusters, control))
        .map_err(|e| SimError::internal(format!("render the kubeconfig: {e}")))?;
    let io = |what, source| SimError::Io {
        what,
        path: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| io("create the directory of", e))?;
    }
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| io("write", e))?;
    file.write_all(yaml.as_bytes())
        .map_err(|e| io("write", e))?;
    file.sync_all().map_err(|e| io("write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| io("write", e))?;
    Ok(())
}

/// Reads the control endpoint recorded in a kubeconfig written by [`write`].
pub fn read_control(path: &Path) -> Result<ControlAddress, SimError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Io {
        what: "read",
        path: path.to_owned(),
        source,
    })?;
    let doc: Value = yaml_serde::from_str(&text)
        .map_err(|e| SimError::Control(format!("{} is not a kubeconfig: {e}", path.display())))?;
    let extension = doc["extensions"]
        .as_array()
        .and_then(|list| list.iter().find(|e| e["name"] == EXTENSION))
        .map(|e| &e["extension"])
        .ok_or_else(|| {
            SimError::Control(format!(
                "{} has no {EXTENSION} extension: was it written by `flotilla sim --kubeconfig-out`?",
                path.display()
            ))
        })?;
    match (extension["control"].as_str(), extension["token"].as_str()) {
        (Some(url), Some(token)) => Ok(ControlAddress {
            url: url.to_owned(),
            token: token.to_owned(),
        }),
        _ => Err(SimError::Control(format!(
            "the {EXTENSION} extension in {} lacks control or token",
            path.display()
        ))),
    }
}
