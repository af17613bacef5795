//! Many simulated clusters in one process: started together, listed as a table, written into
//! one kubeconfig.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use futures::StreamExt;

use crate::cluster::SimCluster;
use crate::config::SimSpec;
use crate::error::SimError;
use crate::network::Network;

/// Clusters started at once.
const START_CONCURRENCY: usize = 8;

/// A running simulation.
#[derive(Debug)]
pub struct Sim {
    pub clusters: Vec<SimCluster>,
    by_name: BTreeMap<String, usize>,
    /// What the clusters' pods reach with `nc` ([`crate::network`]).
    pub network: Arc<Network>,
}

impl Sim {
    /// Starts every cluster of `spec` on `ip`, credentials under `dir`.
    pub async fn start(spec: &SimSpec, ip: IpAddr, dir: &Path) -> Result<Sim, SimError> {
        let network = Network::new();
        let started: Vec<Result<SimCluster, SimError>> =
            futures::stream::iter(spec.clusters.iter())
                .map(|c| SimCluster::start(c, &spec.settings, ip, dir, &network))
                .buffered(START_CONCURRENCY)
                .collect()
                .await;
        let clusters = started.into_iter().collect::<Result<Vec<_>, _>>()?;
        let by_name = clusters
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        Ok(Sim {
            clusters,
            by_name,
            network,
        })
    }

    pub fn cluster(&self, name: &str) -> Option<&SimCluster> {
        self.by_name.get(name).map(|i| &self.clusters[*i])
    }

    /// `CLUSTER  ENDPOINT  NODES` table.
    pub fn table(&self) -> String {
        let width = self
            .clusters
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(0)
            .max(7);
        let url_width = self
            .clusters
            .iter()
            .map(|c| c.url.len())
            .max()
            .unwrap_or(0)
            .max(8);
        let mut out = format!(
            "{:<width$}   {:<url_width$}   NODES\n",
            "CLUSTER", "ENDPOINT"
        );
        for c in &self.clusters {
            out.push_str(&format!(
                "{:<width$}   {:<url_width$}   {}\n",
                c.name,
                c.url,
                c.nodes.nodes.len()
            ));
        }
        out
    }
}
