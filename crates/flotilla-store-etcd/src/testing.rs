//! Throwaway etcd processes for tests (feature `testing`): single members for the conformance
//! suite and multi-member clusters on loopback for failure tests.
//!
//! The binary is `$ETCD_BIN`, else `etcd` on `PATH`; without one, starting fails with a message
//! naming the package to install (tests never skip). Data lives in a temporary directory, on
//! tmpfs (`/dev/shm`) when there is one, since etcd 3.4 has no flag to skip fsync. Processes are
//! killed and their data removed on drop.

use std::path::PathBuf;

use flotilla_store::conformance::Fixture;

use crate::{EtcdOptions, EtcdStore};

mod cluster;

pub use cluster::EtcdCluster;

/// Why an etcd process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("etcd not found: apt-get install etcd-server (or set ETCD_BIN to the etcd binary)")]
    NotFound,
    #[error("could not prepare etcd's {what}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("etcd member {member} exited ({status}) during start-up; its log ends with:\n{log}")]
    Exited {
        member: usize,
        status: std::process::ExitStatus,
        log: String,
    },
    #[error(
        "etcd member {member} did not become ready within {seconds} s; its log ends with:\n{log}"
    )]
    NotReady {
        member: usize,
        seconds: u64,
        log: String,
    },
}

/// The etcd binary to run: `$ETCD_BIN`, else `etcd` on `PATH`.
pub fn etcd_binary() -> Result<PathBuf, HarnessError> {
    if let Some(path) = std::env::var_os("ETCD_BIN") {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("etcd"))
        .find(|candidate| candidate.is_file())
        .ok_or(HarnessError::NotFound)
}

/// A conformance fixture: an [`EtcdStore`] on a fresh single-member etcd of its own, which the
/// fixture keeps alive. Panics with the reason when etcd cannot be started.
pub async fn fresh_fixture() -> Fixture {
    let cluster = EtcdCluster::start(1).await.expect("start etcd");
    let store = EtcdStore::connect(EtcdOptions::new(cluster.endpoints()))
        .await
        .expect("connect to the fresh etcd");
    Fixture::with_guard(store, cluster)
}
