//! The key space: our keys under the configured prefix, and our ranges as etcd ranges confined
//! to it.

use bytes::Bytes;
use flotilla_store::{KeyRange, StoreError};

/// etcd's "no upper bound" range end (`range_end = "\0"`).
const FROM_KEY: &[u8] = b"\0";

/// Maps keys between the store's key space and etcd's, under a fixed prefix.
#[derive(Debug, Clone)]
pub(crate) struct Namespace {
    prefix: Bytes,
}

/// A key range as etcd takes it: `key` and `range_end` (`"\0"` meaning unbounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EtcdRange {
    /// `[key, range_end)`, never empty in etcd's encoding.
    Span { key: Vec<u8>, range_end: Vec<u8> },
    /// The range holds no key at all (its end is not above its start); etcd has no encoding for
    /// that (an empty `range_end` means "exactly `key`").
    Empty,
}

impl Namespace {
    pub(crate) fn new(prefix: Bytes) -> Self {
        Namespace { prefix }
    }

    /// The etcd key of `key`.
    pub(crate) fn key(&self, key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.prefix.len() + key.len());
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(key);
        out
    }

    /// The etcd key of `key`, reusing the allocation when there is no prefix.
    pub(crate) fn owned_key(&self, key: Bytes) -> Vec<u8> {
        if self.prefix.is_empty() {
            Vec::from(key)
        } else {
            self.key(&key)
        }
    }

    /// A key to aim reads at that need a key but not its value (status probes).
    pub(crate) fn probe_key(&self) -> Vec<u8> {
        if self.prefix.is_empty() {
            FROM_KEY.to_vec()
        } else {
            self.prefix.to_vec()
        }
    }

    /// `range`, confined to the prefix, in etcd's encoding.
    pub(crate) fn range(&self, range: &KeyRange) -> EtcdRange {
        if let Some(end) = &range.end
            && end[..] <= range.start[..]
        {
            return EtcdRange::Empty;
        }
        let mut key = self.key(&range.start);
        if key.is_empty() {
            // etcd refuses an empty key; "\0" is the smallest key there can be.
            key = FROM_KEY.to_vec();
        }
        let range_end = match &range.end {
            Some(end) => {
                let end = self.key(end);
                if end == FROM_KEY {
                    // Without a prefix, `[start, "\0")` can hold only the empty key: nothing.
                    return EtcdRange::Empty;
                }
                end
            }
            None => match KeyRange::prefix(self.prefix.clone()).end {
                Some(end) => end.to_vec(),
                None => FROM_KEY.to_vec(),
            },
        };
        EtcdRange::Span { key, range_end }
    }

    /// Our key of an etcd key read back (the prefix removed, without copying).
    pub(crate) fn strip(&self, key: Vec<u8>) -> Result<Bytes, StoreError> {
        let key = Bytes::from(key);
        if self.prefix.is_empty() {
            return Ok(key);
        }
        if !key.starts_with(&self.prefix) {
            return Err(StoreError::Backend {
                message: format!(
                    "etcd returned key {:?} outside the prefix {:?}",
                    flotilla_store::display_key(&key),
                    flotilla_store::display_key(&self.prefix)
                ),
                source: None,
            });
        }
        Ok(key.slice(self.prefix.len()..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(key: &[u8], range_end: &[u8]) -> EtcdRange {
        EtcdRange::Span {
            key: key.to_vec(),
            range_end: range_end.to_vec(),
        }
    }

    #[test]
    fn ranges_without_a_prefix_use_etcd_encoding() {
        let ns = Namespace::new(Bytes::new());
        assert_eq!(ns.range(&KeyRange::all()), span(b"\0", b"\0"));
        assert_eq!(ns.range(&KeyRange::prefix("/a/")), span(b"/a/", b"/a0"));
        assert_eq!(ns.range(&KeyRange::key("k")), span(b"k", b"k\0"));
        assert_eq!(
            ns.range(&KeyRange::prefix(&b"\xff"[..])),
            span(b"\xff", b"\0")
        );
        assert_eq!(ns.range(&KeyRange::between("b", "a")), EtcdRange::Empty);
        assert_eq!(ns.range(&KeyRange::between("", "\0")), EtcdRange::Empty);
    }

    #[test]
    fn ranges_with_a_prefix_stay_inside_it() {
        let ns = Namespace::new(Bytes::from_static(b"/t1"));
        assert_eq!(ns.range(&KeyRange::all()), span(b"/t1", b"/t2"));
        assert_eq!(
            ns.range(&KeyRange::prefix("/a/")),
            span(b"/t1/a/", b"/t1/a0")
        );
        assert_eq!(
            ns.range(&KeyRange::between("", "\0")),
            span(b"/t1", b"/t1\0")
        );
        let ff = Namespace::new(Bytes::from_static(b"\xff"));
        assert_eq!(ff.range(&KeyRange::all()), span(b"\xff", b"\0"));
    }

    #[test]
    fn strip_removes_the_prefix_and_refuses_foreign_keys() {
        let ns = Namespace::new(Bytes::from_static(b"/t1"));
        assert_eq!(ns.key(b"/a"), b"/t1/a".to_vec());
        assert_eq!(
            ns.strip(b"/t1/a".to_vec()).expect("inside"),
            Bytes::from("/a")
        );
        assert!(matches!(
            ns.strip(b"/t2/a".to_vec()),
            Err(StoreError::Backend { .. })
        ));
    }
}
