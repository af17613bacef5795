//! The revisions of this server's recent writes, per key, approximately: which watch-cache
//! copies a write should not start from.
//!
//! A write that starts from the cache's copy of an object (`lifted::guaranteed_update`) is
//! wasted when that copy is older than the store's, and under a burst of writes the copy of an
//! object this server has just written often is: the store's watch reaches the cache a little
//! later. Each key hashes to one of [`SLOTS`] slots holding the highest revision this server
//! wrote to any key of that slot; a cached copy older than its slot's revision may be stale, and
//! the write reads the store instead. Keys sharing a slot only make that more frequent, never
//! wrong: the store's compare-and-swap decides in every case.

use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicI64, Ordering};

use flotilla_store::Revision;

/// How many slots: 64 KiB of revisions.
const SLOTS: usize = 8192;

#[derive(Debug)]
pub(crate) struct RecentWrites {
    slots: Box<[AtomicI64]>,
}

impl Default for RecentWrites {
    fn default() -> Self {
        RecentWrites {
            slots: (0..SLOTS).map(|_| AtomicI64::new(0)).collect(),
        }
    }
}

impl RecentWrites {
    fn slot(&self, key: &[u8]) -> &AtomicI64 {
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(key);
        &self.slots[(hash as usize) % SLOTS]
    }

    /// Notes this server's write of `key` at `revision`.
    pub(crate) fn note(&self, key: &[u8], revision: Revision) {
        self.slot(key).fetch_max(revision, Ordering::Relaxed);
    }

    /// Whether a copy of `key` at `revision` may be older than a write this server made.
    pub(crate) fn may_be_newer(&self, key: &[u8], revision: Revision) -> bool {
        self.slot(key).load(Ordering::Relaxed) > revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_older_than_the_last_write_of_its_key_may_be_stale() {
        let recent = RecentWrites::default();
        assert!(!recent.may_be_newer(b"/registry/core/configmaps/ns/a", 5));
        recent.note(b"/registry/core/configmaps/ns/a", 7);
        assert!(recent.may_be_newer(b"/registry/core/configmaps/ns/a", 5));
        assert!(!recent.may_be_newer(b"/registry/core/configmaps/ns/a", 7));
        // An older write noted late does not hide the newer one.
        recent.note(b"/registry/core/configmaps/ns/a", 6);
        assert!(recent.may_be_newer(b"/registry/core/configmaps/ns/a", 6));
    }

    #[test]
    fn most_keys_do_not_share_a_slot() {
        let recent = RecentWrites::default();
        recent.note(b"/registry/core/configmaps/ns/written", 100);
        let shared = (0..1000)
            .filter(|i| {
                recent.may_be_newer(format!("/registry/core/configmaps/ns/{i}").as_bytes(), 1)
            })
            .count();
        assert!(
            shared < 10,
            "{shared} of 1000 keys share the written key's slot"
        );
    }
}
