//! Throwaway etcd processes for tests (feature `testing`): single members for the conformance
//! suite and multi-member clusters on loopback for failure tests.
//!
//! The binary is `$ETCD_BIN`, else `etcd` on `PATH`; without one, starting fails with a message
//! naming the package to install (tests never skip). Data lives in a temporary directory, on
//! tmpfs (`/dev/shm`) when there is one, since etcd 3.4 has no flag to skip fsync. Processes are
//! killed and their data removed on drop.

use std::ffi::OsString;
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
    #[error("ETCD_BIN is {0:?}, which is not a file: apt-get install etcd-server, or fix ETCD_BIN")]
    BadEtcdBin(PathBuf),
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
    find_etcd(std::env::var_os("ETCD_BIN"), std::env::var_os("PATH"))
}

fn find_etcd(etcd_bin: Option<OsString>, path: Option<OsString>) -> Result<PathBuf, HarnessError> {
    if let Some(binary) = etcd_bin {
        let binary = PathBuf::from(binary);
        return match binary.is_file() {
            true => Ok(binary),
            false => Err(HarnessError::BadEtcdBin(binary)),
        };
    }
    std::env::split_paths(&path.unwrap_or_default())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_etcd_is_an_error_naming_the_package() {
        let empty = tempfile::tempdir().expect("temp dir");
        let error = find_etcd(None, Some(empty.path().into())).expect_err("no etcd there");
        assert!(
            error.to_string().contains("apt-get install etcd-server"),
            "{error}"
        );
        let error =
            find_etcd(Some(empty.path().join("etcd").into()), None).expect_err("bad ETCD_BIN");
        assert!(
            error.to_string().contains("apt-get install etcd-server"),
            "{error}"
        );
    }

    #[test]
    fn etcd_bin_wins_over_path() {
        let dir = tempfile::tempdir().expect("temp dir");
        let custom = dir.path().join("my-etcd");
        std::fs::write(&custom, b"").expect("write");
        let found = find_etcd(Some(custom.clone().into()), Some(dir.path().into()));
        assert_eq!(found.expect("found"), custom);
    }
}
