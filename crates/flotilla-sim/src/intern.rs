//! Values many cached objects hold alike, shared: a table of weak references by hash, so an
//! entry costs no copy of its key and goes once no object holds it (dead entries are swept
//! whenever the table has doubled since the last sweep).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Weak};

/// Shared values of type `T`, found by a hash the caller computes (see [`hash_of`]).
#[derive(Debug)]
pub struct Table<T: ?Sized> {
    by_hash: HashMap<u64, Vec<Weak<T>>>,
    entries: usize,
    sweep_at: usize,
}

impl<T: ?Sized> Default for Table<T> {
    fn default() -> Self {
        Table {
            by_hash: HashMap::new(),
            entries: 0,
            sweep_at: 1024,
        }
    }
}

impl<T: ?Sized + PartialEq> Table<T> {
    /// The shared value equal to `value` (whose hash is `hash`), or `make()`'s, now shared.
    pub fn get(&mut self, hash: u64, value: &T, make: impl FnOnce() -> Arc<T>) -> Arc<T> {
        if let Some(found) = self.find(hash, value) {
            return found;
        }
        let shared = make();
        self.insert(hash, &shared);
        shared
    }

    /// The shared value equal to `value`, if any.
    pub fn find(&self, hash: u64, value: &T) -> Option<Arc<T>> {
        self.by_hash
            .get(&hash)
            .into_iter()
            .flatten()
            .filter_map(Weak::upgrade)
            .find(|candidate| **candidate == *value)
    }

    /// Shares `shared` (found by `hash`) from now on.
    pub fn insert(&mut self, hash: u64, shared: &Arc<T>) {
        if self.entries >= self.sweep_at {
            self.by_hash.retain(|_, bucket| {
                bucket.retain(|entry| entry.strong_count() > 0);
                !bucket.is_empty()
            });
            self.entries = self.by_hash.values().map(Vec::len).sum();
            self.sweep_at = (self.entries * 2).max(1024);
        }
        self.by_hash
            .entry(hash)
            .or_default()
            .push(Arc::downgrade(shared));
        self.entries += 1;
    }

    /// Entries, live or not yet swept.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
}

/// A hash for [`Table::get`].
pub fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_are_shared_and_dead_ones_swept() {
        let mut table: Table<str> = Table::default();
        let a = table.get(hash_of(&"x"), "x", || Arc::from("x"));
        let b = table.get(hash_of(&"x"), "x", || Arc::from("x"));
        assert!(Arc::ptr_eq(&a, &b));
        // A hash collision does not confuse different values.
        let c = table.get(hash_of(&"x"), "y", || Arc::from("y"));
        assert_eq!(&*c, "y");
        for i in 0..3000 {
            let s = i.to_string();
            drop(table.get(hash_of(&s), &s, || Arc::from(s.as_str())));
        }
        assert!(table.len() < 1100, "dead entries kept: {}", table.len());
        let again = table.get(hash_of(&"x"), "x", || Arc::from("x"));
        assert!(Arc::ptr_eq(&a, &again));
    }
}
