//! Where an update starts: the watch cache's copy of the object, or the store's.
//!
//! Provenance: kube-apiserver's update loop (k8s.io/apiserver, `storage/cacher/cacher.go`
//! `GuaranteedUpdate`, which hands the cached object to `storage/etcd3/store.go`
//! `GuaranteedUpdate` as `cachedExistingObject`; Kubernetes v1.32). The first attempt of a write
//! starts from the cache's copy, which may lag behind the store: the store's compare-and-swap on
//! the revision refuses it if it is not current, and anything else the attempt leads to (an
//! error, or finding nothing to change) is decided again from a fresh read (`origStateIsCurrent`).

use flotilla_store::{KeyValue, Revision};

/// The version of the object a write starts from.
#[derive(Debug, Clone, Copy)]
pub struct Current {
    /// Its revision: the store takes the write only while the object is still at it.
    pub revision: Revision,
    /// Read from the store just now: an error the attempt leads to, or finding nothing to
    /// change, is the answer. Not so for the cache's copy, which may lag.
    pub fresh: bool,
}

impl Current {
    /// The object as just read from the store.
    pub fn read(kv: &KeyValue) -> Self {
        Current {
            revision: kv.mod_revision,
            fresh: true,
        }
    }

    /// The watch cache's copy, at `revision`.
    pub fn cached(revision: Revision) -> Self {
        Current {
            revision,
            fresh: false,
        }
    }

    /// Whether an attempt that failed, or found nothing to change, is the write's answer (or is
    /// to be tried again from the store).
    pub fn settles(&self) -> bool {
        self.fresh
    }
}
