//! The revisions of this server's recent writes, per key, until the watch cache reflects them:
//! which watch-cache copies a write should not start from.
//!
//! A write that starts from the cache's copy of an object (`lifted::guaranteed_update`) is
//! wasted when that copy is older than the store's, and under a burst of writes the copy of an
//! object this server has just written often is: the store's watch reaches the cache a little
//! later. Each write is remembered (by a hash of its key) until the cache has reached its
//! revision; a cached copy older than a remembered write of its key may be stale, and the write
//! reads the store instead. Every other cached copy is as new as the store's for this server's
//! own writes.
//!
//! Approximate on the safe side only in what it costs: keys sharing a hash, or writes
//! forgotten when more than [`MOST`] wait for the cache, make a write start from the store, or
//! from a stale copy that the store's compare-and-swap then refuses.
//!
//! (It held one revision per slot of 8,192 before. Every slot then saw a newer write within
//! seconds under a burst, so any copy older than that was read from the store again: most
//! status writes of the propagation burst, whose objects were written seconds to minutes
//! earlier.)

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

use flotilla_store::Revision;
use parking_lot::Mutex;

/// The most writes remembered while the cache has not reflected them.
const MOST: usize = 1 << 16;

#[derive(Debug, Default)]
pub(crate) struct RecentWrites(Mutex<Recent>);

#[derive(Debug, Default)]
struct Recent {
    /// The highest revision written per key hash.
    latest: HashMap<u64, Revision>,
    /// Writes in the order they were noted (about revision order).
    order: VecDeque<(Revision, u64)>,
}

fn hash(key: &[u8]) -> u64 {
    BuildHasherDefault::<DefaultHasher>::default().hash_one(key)
}

impl RecentWrites {
    /// Notes this server's write of `key` at `revision`; `reflected` is the revision the watch
    /// cache reflects now: writes up to it are forgotten.
    pub(crate) fn note(&self, key: &[u8], revision: Revision, reflected: Revision) {
        let hash = hash(key);
        let mut recent = self.0.lock();
        if revision > reflected {
            let latest = recent.latest.entry(hash).or_insert(revision);
            *latest = (*latest).max(revision);
            recent.order.push_back((revision, hash));
        }
        recent.forget_through(reflected);
    }

    /// Whether a copy of `key` at `revision` may be older than a write this server made.
    pub(crate) fn may_be_newer(&self, key: &[u8], revision: Revision) -> bool {
        self.0
            .lock()
            .latest
            .get(&hash(key))
            .is_some_and(|latest| *latest > revision)
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.0.lock().latest.len()
    }
}

impl Recent {
    fn forget_through(&mut self, reflected: Revision) {
        while let Some(&(revision, hash)) = self.order.front() {
            if revision > reflected && self.order.len() <= MOST {
                break;
            }
            self.order.pop_front();
            if let Entry::Occupied(latest) = self.latest.entry(hash)
                && *latest.get() <= revision
            {
                latest.remove();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &[u8] = b"/registry/core/configmaps/ns/a";

    #[test]
    fn a_copy_older_than_a_write_the_cache_has_not_reflected_may_be_stale() {
        let recent = RecentWrites::default();
        assert!(!recent.may_be_newer(A, 5));
        recent.note(A, 7, 4);
        assert!(recent.may_be_newer(A, 5));
        assert!(!recent.may_be_newer(A, 7));
        // An older write noted late does not hide the newer one.
        recent.note(A, 6, 4);
        assert!(recent.may_be_newer(A, 6));
        // Once the cache reflects revision 7, its copy is the newest: nothing is remembered.
        recent.note(b"/registry/core/configmaps/ns/b", 8, 7);
        assert!(!recent.may_be_newer(A, 7));
        assert_eq!(recent.remembered(), 1);
        // A write the cache reflects already is not remembered at all.
        recent.note(A, 9, 9);
        assert_eq!(recent.remembered(), 0);
    }

    #[test]
    fn other_keys_are_not_suspected() {
        let recent = RecentWrites::default();
        recent.note(b"/registry/core/configmaps/ns/written", 100, 1);
        let suspected = (0..10_000)
            .filter(|i| {
                recent.may_be_newer(format!("/registry/core/configmaps/ns/{i}").as_bytes(), 1)
            })
            .count();
        assert_eq!(suspected, 0);
    }

    #[test]
    fn a_cache_that_does_not_follow_costs_bounded_memory() {
        let recent = RecentWrites::default();
        for revision in 1..=(MOST as i64 + 100) {
            recent.note(format!("/k/{revision}").as_bytes(), revision, 0);
        }
        assert_eq!(recent.remembered(), MOST);
        // The oldest are forgotten: a write from their cached copy is refused by the store.
        assert!(!recent.may_be_newer(b"/k/1", 0));
        assert!(recent.may_be_newer(format!("/k/{}", MOST + 100).as_bytes(), 0));
    }
}
