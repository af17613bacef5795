//! Plain data of the store model: key-values, key ranges, range requests, transactions, events.

use std::cmp::Ordering;

use bytes::Bytes;

/// The store-wide revision: one counter, bumped once per write transaction that changes
/// anything. A fresh store is at revision 1, as etcd.
pub type Revision = i64;

/// One key's value and bookkeeping at some revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub key: Bytes,
    pub value: Bytes,
    /// Revision of the write that created the key (reset when a deleted key is created again).
    pub create_revision: Revision,
    /// Revision of the last write to the key.
    pub mod_revision: Revision,
    /// Writes since creation, starting at 1.
    pub version: i64,
}

impl KeyValue {
    /// The key-value a delete event carries: the key and the deleting revision, nothing else.
    pub fn tombstone(key: Bytes, revision: Revision) -> Self {
        KeyValue {
            key,
            value: Bytes::new(),
            create_revision: 0,
            mod_revision: revision,
            version: 0,
        }
    }
}

/// A half-open key interval `[start, end)`; `end == None` means "no upper bound".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    pub start: Bytes,
    pub end: Option<Bytes>,
}

impl KeyRange {
    /// Exactly one key.
    pub fn key(key: impl Into<Bytes>) -> Self {
        let start: Bytes = key.into();
        let mut end = start.to_vec();
        end.push(0);
        KeyRange {
            start,
            end: Some(end.into()),
        }
    }

    /// Every key starting with `prefix`. An empty prefix is every key.
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let start: Bytes = prefix.into();
        let end = prefix_end(&start);
        KeyRange { start, end }
    }

    /// Every key in `[start, end)`.
    pub fn between(start: impl Into<Bytes>, end: impl Into<Bytes>) -> Self {
        KeyRange {
            start: start.into(),
            end: Some(end.into()),
        }
    }

    /// Every key.
    pub fn all() -> Self {
        KeyRange {
            start: Bytes::new(),
            end: None,
        }
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= &self.start[..] && self.end.as_ref().is_none_or(|end| key < &end[..])
    }

    /// The same range, starting at `start` instead (used to continue a paged read).
    pub fn resume_at(&self, start: impl Into<Bytes>) -> Self {
        KeyRange {
            start: start.into(),
            end: self.end.clone(),
        }
    }
}

/// The smallest key greater than every key with this prefix (`None`: no such key, unbounded).
pub fn prefix_end(prefix: &[u8]) -> Option<Bytes> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end.into());
        }
    }
    None
}

/// A read of a key range, optionally at a past revision and limited in size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeRequest {
    pub range: KeyRange,
    /// At most this many key-values (`None`: all).
    pub limit: Option<usize>,
    /// Read the store as it was at this revision (`None`: the current revision).
    pub revision: Option<Revision>,
}

impl RangeRequest {
    pub fn new(range: KeyRange) -> Self {
        RangeRequest {
            range,
            limit: None,
            revision: None,
        }
    }

    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        Self::new(KeyRange::prefix(prefix))
    }

    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    pub fn at_revision(mut self, revision: Revision) -> Self {
        self.revision = Some(revision);
        self
    }
}

/// The answer to a [`RangeRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeResponse {
    /// Matching key-values in key order, at most `limit` of them.
    pub kvs: Vec<KeyValue>,
    /// Whether keys beyond the returned ones match (the read was cut by `limit`).
    pub more: bool,
    /// How many keys match in all, ignoring `limit`.
    pub count: usize,
    /// The revision the read was made at: the requested one, or the current one.
    pub revision: Revision,
}

impl RangeResponse {
    /// The request that reads the next page at the same revision, if there is one.
    pub fn next_page(&self, request: &RangeRequest) -> Option<RangeRequest> {
        if !self.more {
            return None;
        }
        let last = self.kvs.last()?;
        let mut start = last.key.to_vec();
        start.push(0);
        Some(RangeRequest {
            range: request.range.resume_at(start),
            limit: request.limit,
            revision: Some(self.revision),
        })
    }
}

/// What a [`Compare`] looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompareTarget {
    /// The key's modification revision (0 when absent).
    ModRevision(Revision),
    /// The key's create revision (0 when absent).
    CreateRevision(Revision),
    /// The key's version (0 when absent).
    Version(i64),
    /// The key's value (an absent key compares as an empty value that is never equal).
    Value(Bytes),
}

/// How a [`Compare`] relates the key's actual value to the target (`actual <op> target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Equal,
    NotEqual,
    Less,
    Greater,
}

/// One condition of a [`Txn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compare {
    pub key: Bytes,
    pub target: CompareTarget,
    pub op: CompareOp,
}

impl Compare {
    /// `mod_revision(key) == revision`; `revision == 0` means "the key does not exist".
    pub fn mod_revision(key: impl Into<Bytes>, op: CompareOp, revision: Revision) -> Self {
        Compare {
            key: key.into(),
            target: CompareTarget::ModRevision(revision),
            op,
        }
    }

    /// `version(key) <op> version`.
    pub fn version(key: impl Into<Bytes>, op: CompareOp, version: i64) -> Self {
        Compare {
            key: key.into(),
            target: CompareTarget::Version(version),
            op,
        }
    }

    /// Evaluates the compare against the key's current state (`None`: absent).
    pub fn evaluate(&self, current: Option<&KeyValue>) -> bool {
        let ordering = match &self.target {
            CompareTarget::ModRevision(r) => current.map_or(0, |kv| kv.mod_revision).cmp(r),
            CompareTarget::CreateRevision(r) => current.map_or(0, |kv| kv.create_revision).cmp(r),
            CompareTarget::Version(v) => current.map_or(0, |kv| kv.version).cmp(v),
            CompareTarget::Value(v) => match current {
                Some(kv) => kv.value.as_ref().cmp(v.as_ref()),
                // etcd: a value compare on a missing key fails whatever the operator.
                None => return false,
            },
        };
        match self.op {
            CompareOp::Equal => ordering == Ordering::Equal,
            CompareOp::NotEqual => ordering != Ordering::Equal,
            CompareOp::Less => ordering == Ordering::Less,
            CompareOp::Greater => ordering == Ordering::Greater,
        }
    }
}

/// One operation of a [`Txn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put { key: Bytes, value: Bytes },
    Delete { key: Bytes },
    Get { key: Bytes },
}

impl Op {
    pub fn put(key: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Op::Put {
            key: key.into(),
            value: value.into(),
        }
    }

    pub fn delete(key: impl Into<Bytes>) -> Self {
        Op::Delete { key: key.into() }
    }

    pub fn get(key: impl Into<Bytes>) -> Self {
        Op::Get { key: key.into() }
    }

    pub fn key(&self) -> &Bytes {
        match self {
            Op::Put { key, .. } | Op::Delete { key } | Op::Get { key } => key,
        }
    }
}

/// An all-or-nothing transaction: if every compare holds, run `success`, else `failure`.
/// Every write of one transaction shares one new revision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Txn {
    pub compares: Vec<Compare>,
    pub success: Vec<Op>,
    pub failure: Vec<Op>,
}

impl Txn {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn when(mut self, compares: impl IntoIterator<Item = Compare>) -> Self {
        self.compares.extend(compares);
        self
    }

    pub fn and_then(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.success.extend(ops);
        self
    }

    pub fn or_else(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.failure.extend(ops);
        self
    }
}

/// The result of one [`Op`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpResult {
    /// The new key-value and the one it replaced.
    Put {
        kv: KeyValue,
        prev: Option<KeyValue>,
    },
    /// The deleted key-value, if there was one.
    Delete { prev: Option<KeyValue> },
    /// The key-value read, if present.
    Get(Option<KeyValue>),
}

/// The answer to a [`Txn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnResponse {
    /// Whether the compares held (and `success` ran).
    pub succeeded: bool,
    /// The store revision after the transaction (new only if it wrote something).
    pub revision: Revision,
    /// One result per operation of the branch that ran.
    pub results: Vec<OpResult>,
}

/// Whether an [`Event`] is a write or a deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    Put,
    Delete,
}

/// One change seen by a watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// For a put, the new key-value. For a delete, the key with an empty value, version 0 and
    /// `mod_revision` set to the deleting revision.
    pub kv: KeyValue,
    /// The key-value before this change (`None` for a creation).
    pub prev: Option<KeyValue>,
}

impl Event {
    /// The revision of the transaction that made this change.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }
}

/// The store's current and compacted revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStatus {
    pub revision: Revision,
    /// History below this revision is gone (0: nothing compacted yet).
    pub compacted_revision: Revision,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_increments_the_last_byte_below_ff() {
        assert_eq!(prefix_end(b"/a/b"), Some(Bytes::from_static(b"/a/c")));
        assert_eq!(prefix_end(b"a\xff"), Some(Bytes::from_static(b"b")));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn key_range_contains_only_what_it_names() {
        let one = KeyRange::key("a");
        assert!(one.contains(b"a"));
        assert!(!one.contains(b"a0"));
        assert!(!one.contains(b"b"));
        let p = KeyRange::prefix("/registry/pods/");
        assert!(p.contains(b"/registry/pods/default/x"));
        assert!(!p.contains(b"/registry/pods"));
        assert!(!p.contains(b"/registry/podsx"));
        assert!(KeyRange::all().contains(b"\xff\xff"));
    }

    #[test]
    fn compare_on_missing_key_sees_zero_revisions() {
        assert!(Compare::mod_revision("k", CompareOp::Equal, 0).evaluate(None));
        assert!(!Compare::mod_revision("k", CompareOp::Equal, 3).evaluate(None));
        let value = Compare {
            key: "k".into(),
            target: CompareTarget::Value(Bytes::new()),
            op: CompareOp::NotEqual,
        };
        assert!(!value.evaluate(None));
    }
}
