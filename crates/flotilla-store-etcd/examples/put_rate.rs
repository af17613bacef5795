//! Puts per second of the store against etcd-client alone: `cargo run -p flotilla-store-etcd
//! --features testing --example put_rate`. Runs on a throwaway etcd (tmpfs data directory), or
//! on the etcd at `$ETCD_ENDPOINTS` (comma-separated client URLs). Prints the rates and their
//! ratio for 1 and 64 writers with 2 KiB values; asserts nothing.

use std::sync::Arc;
use std::time::Duration;

use flotilla_store_etcd::testing::EtcdCluster;
use flotilla_store_etcd::{EtcdOptions, EtcdStore, raw_put_baseline, store_put_rate};

const VALUE: usize = 2048;
const ROUND: Duration = Duration::from_secs(4);

#[tokio::main]
async fn main() {
    let (_cluster, endpoints) = match std::env::var("ETCD_ENDPOINTS") {
        Ok(list) => (None, list.split(',').map(str::to_owned).collect()),
        Err(_) => {
            let cluster = EtcdCluster::start(1).await.expect("start etcd");
            let endpoints = cluster.endpoints();
            (Some(cluster), endpoints)
        }
    };
    let store = Arc::new(
        EtcdStore::connect(EtcdOptions::new(endpoints.clone()))
            .await
            .expect("connect"),
    );
    for writers in [1, 64] {
        // Alternate, twice each, so drift on a noisy machine hits both sides.
        let (mut raw, mut ours) = (0.0, 0.0);
        for _ in 0..2 {
            raw += raw_put_baseline(&endpoints, writers, VALUE, ROUND)
                .await
                .expect("raw puts");
            ours += store_put_rate(store.clone(), writers, VALUE, ROUND)
                .await
                .expect("store puts");
        }
        println!(
            "{writers:>2} writers, {VALUE} B values: etcd-client {:.0}/s, EtcdStore {:.0}/s, ratio {:.2}",
            raw / 2.0,
            ours / 2.0,
            ours / raw
        );
    }
}
