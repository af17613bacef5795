//! The collector's view of the object graph: every object by uid (uid → storage key and the
//! metadata the collector reads) and, for every owner uid, the uids of the objects that name it
//! in `ownerReferences`. Fed from the watch cache; each change says which work it makes due.
//!
//! The graph holds every object of an API server (a simulated cluster: 20,000 pods, 5,000
//! nodes and their Leases), so its strings are shared: an object's uid is one allocation for
//! the index, the object and its owner's dependents, and apiVersions, kinds, namespaces and
//! the owners' names and uids are interned (the 200 pods of a ReplicaSet hold one copy).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use flotilla_store::Revision;
use serde::Deserialize;

use crate::cache::{Change, ChangeKind};
use crate::object::scan;

/// The finalizer that makes an owner wait for its blocking dependents to be deleted.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer that makes an owner release its dependents before it goes.
pub const ORPHAN: &str = "orphan";

/// One entry of `metadata.ownerReferences`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: Arc<str>,
    pub kind: Arc<str>,
    pub name: Arc<str>,
    pub uid: Arc<str>,
    pub block_owner_deletion: bool,
}

/// What the collector knows of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub uid: Arc<str>,
    pub key: Bytes,
    pub api_version: Arc<str>,
    pub kind: Arc<str>,
    pub name: Arc<str>,
    pub namespace: Option<Arc<str>>,
    /// The revision of the state seen (its resourceVersion).
    pub revision: Revision,
    pub owners: Box<[OwnerRef]>,
    /// `deletionTimestamp` is set.
    pub deleting: bool,
    pub finalizers: Box<[String]>,
}

impl Node {
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// Being deleted in the foreground: waiting for its blocking dependents to go.
    pub fn deleting_dependents(&self) -> bool {
        self.deleting && self.has_finalizer(FOREGROUND)
    }

    /// Being deleted with its dependents orphaned.
    pub fn orphaning(&self) -> bool {
        self.deleting && self.has_finalizer(ORPHAN)
    }

    /// The reference this object holds to `owner`, if any.
    pub fn reference_to(&self, owner: &str) -> Option<&OwnerRef> {
        self.owners.iter().find(|r| &*r.uid == owner)
    }

    /// Decodes the metadata the collector needs from an object's JSON; `None` when the object
    /// has no uid or is not the shape of a Kubernetes object.
    pub fn parse(key: Bytes, json: &[u8], revision: Revision) -> Option<Node> {
        Self::parse_with(key, json, revision, &mut Strings::default())
    }

    /// [`Node::parse`], with the strings objects have in common taken from `strings`.
    fn parse_with(
        key: Bytes,
        json: &[u8],
        revision: Revision,
        strings: &mut Strings,
    ) -> Option<Node> {
        let head = Head::scan(json)?;
        let meta = head.metadata?;
        let uid = meta.uid.filter(|u| !u.is_empty())?;
        let owners = meta
            .owner_references
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| {
                Some(OwnerRef {
                    api_version: strings.get(&r.api_version?),
                    kind: strings.get(&r.kind?),
                    name: strings.get(&r.name?),
                    uid: strings.get(r.uid.as_deref().filter(|u| !u.is_empty())?),
                    block_owner_deletion: r.block_owner_deletion.unwrap_or(false),
                })
            })
            .collect();
        Some(Node {
            // An owner's uid is already held by its dependents' references.
            uid: strings.existing(&uid).unwrap_or_else(|| Arc::from(uid)),
            key,
            api_version: strings.get(head.api_version.as_deref().unwrap_or_default()),
            kind: strings.get(head.kind.as_deref().unwrap_or_default()),
            name: Arc::from(meta.name.unwrap_or_default()),
            namespace: meta
                .namespace
                .filter(|n| !n.is_empty())
                .map(|n| strings.get(&n)),
            revision,
            owners,
            deleting: meta.deletion_timestamp.is_some(),
            finalizers: meta.finalizers.unwrap_or_default().into(),
        })
    }
}

/// Strings many objects hold, one copy each (see the module docs). Entries nothing else holds
/// any more are dropped whenever the set has doubled since the last sweep.
#[derive(Debug)]
pub struct Strings {
    set: HashSet<Arc<str>>,
    sweep_at: usize,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            set: HashSet::new(),
            sweep_at: 1024,
        }
    }
}

impl Strings {
    /// The shared copy of `s`.
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.set.get(s) {
            return shared.clone();
        }
        if self.set.len() >= self.sweep_at {
            self.set.retain(|s| Arc::strong_count(s) > 1);
            self.sweep_at = (self.set.len() * 2).max(1024);
        }
        let shared: Arc<str> = Arc::from(s);
        self.set.insert(shared.clone());
        shared
    }

    /// The shared copy of `s`, if there is one.
    pub fn existing(&self, s: &str) -> Option<Arc<str>> {
        self.set.get(s).cloned()
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// What the collector reads of an object, found with [`scan`] (spec, status and managedFields
/// are skipped, not decoded).
struct Head {
    api_version: Option<String>,
    kind: Option<String>,
    metadata: Option<HeadMeta>,
}

struct HeadMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    deletion_timestamp: Option<String>,
    finalizers: Option<Vec<String>>,
    owner_references: Option<Vec<HeadOwner>>,
}

/// The value of a member `span` of `json` (`null` or absent: `None`); `Err` when it is not a `T`.
fn member<T: serde::de::DeserializeOwned>(
    json: &[u8],
    span: Option<std::ops::Range<usize>>,
) -> Result<Option<T>, serde_json::Error> {
    match span {
        Some(span) => serde_json::from_slice(&json[span]),
        None => Ok(None),
    }
}

/// The members of metadata [`Head`] reads.
const HEAD_META: [&str; 6] = [
    "name",
    "namespace",
    "uid",
    "deletionTimestamp",
    "finalizers",
    "ownerReferences",
];

impl Head {
    /// The uid of an object whose `apiVersion`, `kind` and the metadata members the collector
    /// reads are the same bytes in `before` and `after` (a write that changed something else);
    /// `None` otherwise, or when either is not laid out as the server writes objects.
    fn unchanged_uid(before: &[u8], after: &[u8]) -> Option<String> {
        let head = |json| scan::pick_nested(json, ["apiVersion", "kind"], "metadata", HEAD_META);
        let (types_before, _, meta_before) = head(before)?;
        let (types_after, _, meta_after) = head(after)?;
        let same = |a: &[Option<std::ops::Range<usize>>], b: &[Option<std::ops::Range<usize>>]| {
            a.iter().zip(b).all(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => before[a.clone()] == after[b.clone()],
                (None, None) => true,
                _ => false,
            })
        };
        if types_before.iter().any(Option::is_none)
            || !same(&types_before, &types_after)
            || !same(&meta_before, &meta_after)
        {
            return None;
        }
        member::<String>(after, meta_after[2].clone())
            .ok()
            .flatten()
            .filter(|uid| !uid.is_empty())
    }

    /// `None` when `json` is not an object or a member the collector reads has the wrong type.
    /// One pass up to the end of `metadata` when `apiVersion` and `kind` come before it (as the
    /// server writes objects); otherwise the whole object is walked.
    fn scan(json: &[u8]) -> Option<Head> {
        let (api_version, kind, meta) =
            match scan::pick_nested(json, ["apiVersion", "kind"], "metadata", HEAD_META) {
                Some(([Some(api_version), Some(kind)], span, found)) => {
                    (Some(api_version), Some(kind), Some((span, found)))
                }
                _ => {
                    let [api_version, kind, metadata] =
                        scan::pick(json, ["apiVersion", "kind", "metadata"])?;
                    let meta = match metadata {
                        Some(span) if &json[span.clone()] != b"null" => {
                            let found = scan::pick(&json[span.clone()], HEAD_META)?
                                .map(|f| f.map(|r| r.start + span.start..r.end + span.start));
                            Some((span, found))
                        }
                        _ => None,
                    };
                    (api_version, kind, meta)
                }
            };
        let metadata = match meta {
            Some((_, [name, namespace, uid, deletion, finalizers, owners])) => Some(HeadMeta {
                name: member(json, name).ok()?,
                namespace: member(json, namespace).ok()?,
                uid: member(json, uid).ok()?,
                deletion_timestamp: member(json, deletion).ok()?,
                finalizers: member(json, finalizers).ok()?,
                owner_references: member(json, owners).ok()?,
            }),
            None => None,
        };
        Some(Head {
            api_version: member(json, api_version).ok()?,
            kind: member(json, kind).ok()?,
            metadata,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadOwner {
    api_version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    uid: Option<String>,
    block_owner_deletion: Option<bool>,
}

/// Work the collector owes one object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Work {
    /// Decide whether the object goes (its owners are gone or deleting it in the foreground),
    /// or, for an owner deleting its dependents, whether it may go now.
    Attempt(String),
    /// Release the object's dependents, then drop its `orphan` finalizer.
    Orphan(String),
}

/// The two indexes.
#[derive(Debug, Default)]
pub struct Graph {
    /// uid → object (boxed: the table has room for up to twice the objects it holds).
    nodes: HashMap<Arc<str>, Box<Node>>,
    /// owner uid → uids of the objects referring to it (whether or not the owner exists).
    dependents: HashMap<Arc<str>, BTreeSet<Arc<str>>>,
    strings: Strings,
}

impl Graph {
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid).map(|node| &**node)
    }

    /// The interned strings (for tests: what the graph shares).
    pub fn strings(&self) -> &Strings {
        &self.strings
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The uids of the objects that name `owner` as an owner, in uid order.
    pub fn dependents_of(&self, owner: &str) -> impl Iterator<Item = &str> {
        self.dependents
            .get(owner)
            .into_iter()
            .flatten()
            .map(|uid| &**uid)
    }

    /// Dependents whose reference to `owner` has `blockOwnerDeletion: true`.
    pub fn blocking_dependents(&self, owner: &str) -> Vec<&Node> {
        self.dependents_of(owner)
            .filter_map(|uid| self.node(uid))
            .filter(|dep| {
                dep.reference_to(owner)
                    .is_some_and(|r| r.block_owner_deletion)
            })
            .collect()
    }

    /// Folds one change into the indexes and returns the work it makes due, in order.
    pub fn observe(&mut self, change: &Change) -> BTreeSet<Work> {
        // Most changes are status writes: what the collector reads is as it was, byte for
        // byte, and only the revision moves (nothing decoded, nothing relinked).
        if change.kind == ChangeKind::Modified
            && let Some(prev) = &change.prev
            && let Some(uid) = Head::unchanged_uid(&prev.raw(), &change.object.raw())
            && let Some(node) = self.nodes.get_mut(uid.as_str())
            && node.key == change.object.key
        {
            node.revision = change.revision;
            return BTreeSet::new();
        }
        let Some(node) = Node::parse_with(
            change.object.key.clone(),
            &change.object.raw(),
            change.revision,
            &mut self.strings,
        ) else {
            return BTreeSet::new();
        };
        match change.kind {
            ChangeKind::Deleted => self.remove(&node.uid),
            ChangeKind::Added | ChangeKind::Modified => self.upsert(node),
        }
    }

    /// Records an object's current state. What becomes due follows the graph builder's
    /// transitions upstream (see `lifted`): a new or re-parented dependent is checked, an owner
    /// that starts a foreground or orphan deletion is processed, and an owner deleting in the
    /// foreground is rechecked when a dependent stops blocking it.
    pub fn upsert(&mut self, node: Node) -> BTreeSet<Work> {
        let mut work = BTreeSet::new();
        let old = self.nodes.remove(&*node.uid);
        // One allocation of the uid for the index, the object and its owners' dependents.
        let mut node = node;
        if let Some(old) = &old {
            self.unlink(old);
            if old.uid == node.uid {
                node.uid = old.uid.clone();
            }
        }
        let uid_key = node.uid.clone();
        let uid = node.uid.to_string();
        self.link(&node);
        match &old {
            None if !node.owners.is_empty() => {
                work.insert(Work::Attempt(uid.clone()));
            }
            Some(old) if old.owners != node.owners => {
                if !node.owners.is_empty() {
                    work.insert(Work::Attempt(uid.clone()));
                }
                for before in &old.owners {
                    let still_blocks = node
                        .reference_to(&before.uid)
                        .is_some_and(|r| r.block_owner_deletion);
                    if before.block_owner_deletion && !still_blocks {
                        self.recheck_owner(&before.uid, &mut work);
                    }
                }
            }
            None | Some(_) => {}
        }
        if node.deleting_dependents() && !old.as_ref().is_some_and(|old| old.deleting_dependents())
        {
            work.insert(Work::Attempt(uid.clone()));
            for dependent in self.dependents_of(&uid) {
                work.insert(Work::Attempt(dependent.to_owned()));
            }
        }
        if node.orphaning() && !old.as_ref().is_some_and(|old| old.orphaning()) {
            work.insert(Work::Orphan(uid.clone()));
        }
        self.nodes.insert(uid_key, Box::new(node));
        work
    }

    /// Forgets an object: its dependents are checked, and owners deleting in the foreground
    /// see one dependent fewer.
    pub fn remove(&mut self, uid: &str) -> BTreeSet<Work> {
        let mut work = BTreeSet::new();
        let Some(old) = self.nodes.remove(uid) else {
            return work;
        };
        self.unlink(&old);
        for dependent in self.dependents_of(uid) {
            work.insert(Work::Attempt(dependent.to_owned()));
        }
        for owner in &old.owners {
            self.recheck_owner(&owner.uid, &mut work);
        }
        work
    }

    fn recheck_owner(&self, owner: &str, work: &mut BTreeSet<Work>) {
        if self.node(owner).is_some_and(Node::deleting_dependents) {
            work.insert(Work::Attempt(owner.to_owned()));
        }
    }

    fn link(&mut self, node: &Node) {
        for owner in &node.owners {
            self.dependents
                .entry(owner.uid.clone())
                .or_default()
                .insert(node.uid.clone());
        }
    }

    fn unlink(&mut self, node: &Node) {
        for owner in &node.owners {
            if let Some(set) = self.dependents.get_mut(&*owner.uid) {
                set.remove(&*node.uid);
                if set.is_empty() {
                    self.dependents.remove(&*owner.uid);
                }
            }
        }
    }
}
