//! Size limits every backend enforces before it writes anything.

use std::collections::HashSet;

use crate::error::display_key;
use crate::{Op, StoreError, Txn};

/// Limits on keys, values and transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Longest key accepted, in bytes.
    pub max_key_bytes: usize,
    /// Largest value accepted, in bytes. Default 1.5 MiB, as Kubernetes/etcd.
    pub max_value_bytes: usize,
    /// Most operations in one transaction branch. Default 128, as etcd's `--max-txn-ops`.
    pub max_txn_ops: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            max_key_bytes: 4096,
            max_value_bytes: 3 * 512 * 1024,
            max_txn_ops: 128,
        }
    }
}

impl StoreLimits {
    /// Checks a key used by a single-key operation.
    pub fn check_key(&self, key: &[u8]) -> Result<(), StoreError> {
        if key.is_empty() {
            return Err(StoreError::InvalidKey {
                reason: "key must not be empty".into(),
            });
        }
        if key.len() > self.max_key_bytes {
            return Err(StoreError::InvalidKey {
                reason: format!(
                    "key of {} bytes is over the limit of {} bytes",
                    key.len(),
                    self.max_key_bytes
                ),
            });
        }
        Ok(())
    }

    /// Checks a value about to be written under `key`.
    pub fn check_value(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        if value.len() > self.max_value_bytes {
            return Err(StoreError::ValueTooLarge {
                key: display_key(key),
                size: value.len(),
                limit: self.max_value_bytes,
            });
        }
        Ok(())
    }

    /// Checks a whole transaction: keys, values, op count, and no key written twice in a branch.
    pub fn check_txn(&self, txn: &Txn) -> Result<(), StoreError> {
        for compare in &txn.compares {
            self.check_key(&compare.key)?;
        }
        for branch in [&txn.success, &txn.failure] {
            if branch.len() > self.max_txn_ops {
                return Err(StoreError::InvalidTxn {
                    reason: format!(
                        "{} operations in one branch, over the limit of {}",
                        branch.len(),
                        self.max_txn_ops
                    ),
                });
            }
            let mut written = HashSet::new();
            for op in branch {
                self.check_key(op.key())?;
                if let Op::Put { key, value } = op {
                    self.check_value(key, value)?;
                }
                if !matches!(op, Op::Get { .. }) && !written.insert(op.key()) {
                    return Err(StoreError::InvalidTxn {
                        reason: format!("key {:?} written twice", display_key(op.key())),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_and_oversized_keys_and_values() {
        let limits = StoreLimits::default();
        assert!(matches!(
            limits.check_key(b""),
            Err(StoreError::InvalidKey { .. })
        ));
        assert!(limits.check_key(&vec![b'k'; 4097]).is_err());
        assert!(limits.check_key(&vec![b'k'; 4096]).is_ok());
        let big = vec![0u8; 1_572_865];
        assert!(matches!(
            limits.check_value(b"k", &big),
            Err(StoreError::ValueTooLarge {
                size: 1_572_865,
                limit: 1_572_864,
                ..
            })
        ));
    }

    #[test]
    fn rejects_a_key_written_twice_in_one_branch() {
        let txn = Txn::new().and_then([Op::put("a", "1"), Op::delete("a")]);
        assert!(matches!(
            StoreLimits::default().check_txn(&txn),
            Err(StoreError::InvalidTxn { .. })
        ));
        let reads = Txn::new().and_then([Op::get("a"), Op::put("a", "1")]);
        assert!(StoreLimits::default().check_txn(&reads).is_ok());
    }
}
