//! The collector's view of the object graph: every object by uid (uid → storage key and the
//! metadata the collector reads) and, for every owner uid, the uids of the objects that name it
//! in `ownerReferences`. Fed from the watch cache; each change says which work it makes due.

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use flotilla_store::Revision;
use serde::Deserialize;

use crate::cache::{Change, ChangeKind};

/// The finalizer that makes an owner wait for its blocking dependents to be deleted.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer that makes an owner release its dependents before it goes.
pub const ORPHAN: &str = "orphan";

/// One entry of `metadata.ownerReferences`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub block_owner_deletion: bool,
}

/// What the collector knows of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub uid: String,
    pub key: Bytes,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    /// The revision of the state seen (its resourceVersion).
    pub revision: Revision,
    pub owners: Vec<OwnerRef>,
    /// `deletionTimestamp` is set.
    pub deleting: bool,
    pub finalizers: Vec<String>,
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
        self.owners.iter().find(|r| r.uid == owner)
    }

    /// Decodes the metadata the collector needs from an object's JSON; `None` when the object
    /// has no uid or is not the shape of a Kubernetes object.
    pub fn parse(key: Bytes, json: &[u8], revision: Revision) -> Option<Node> {
        let head: Head = serde_json::from_slice(json).ok()?;
        let meta = head.metadata?;
        let uid = meta.uid.filter(|u| !u.is_empty())?;
        let owners = meta
            .owner_references
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| {
                Some(OwnerRef {
                    api_version: r.api_version?,
                    kind: r.kind?,
                    name: r.name?,
                    uid: r.uid.filter(|u| !u.is_empty())?,
                    block_owner_deletion: r.block_owner_deletion.unwrap_or(false),
                })
            })
            .collect();
        Some(Node {
            uid,
            key,
            api_version: head.api_version.unwrap_or_default(),
            kind: head.kind.unwrap_or_default(),
            name: meta.name.unwrap_or_default(),
            namespace: meta.namespace.filter(|n| !n.is_empty()),
            revision,
            owners,
            deleting: meta.deletion_timestamp.is_some(),
            finalizers: meta.finalizers.unwrap_or_default(),
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    api_version: Option<String>,
    kind: Option<String>,
    metadata: Option<HeadMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    deletion_timestamp: Option<String>,
    finalizers: Option<Vec<String>>,
    owner_references: Option<Vec<HeadOwner>>,
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
    /// uid → object.
    nodes: HashMap<String, Node>,
    /// owner uid → uids of the objects referring to it (whether or not the owner exists).
    dependents: HashMap<String, BTreeSet<String>>,
}

impl Graph {
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
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
            .map(String::as_str)
    }

    /// Dependents whose reference to `owner` has `blockOwnerDeletion: true`.
    pub fn blocking_dependents(&self, owner: &str) -> Vec<&Node> {
        self.dependents_of(owner)
            .filter_map(|uid| self.nodes.get(uid))
            .filter(|dep| {
                dep.reference_to(owner)
                    .is_some_and(|r| r.block_owner_deletion)
            })
            .collect()
    }

    /// Folds one change into the indexes and returns the work it makes due, in order.
    pub fn observe(&mut self, change: &Change) -> BTreeSet<Work> {
        let Some(node) = Node::parse(
            change.object.key.clone(),
            change.object.raw(),
            change.revision,
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
        let uid = node.uid.clone();
        let old = self.nodes.remove(&uid);
        if let Some(old) = &old {
            self.unlink(old);
        }
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
        if node.deleting_dependents() && !old.as_ref().is_some_and(Node::deleting_dependents) {
            work.insert(Work::Attempt(uid.clone()));
            for dependent in self.dependents_of(&uid) {
                work.insert(Work::Attempt(dependent.to_owned()));
            }
        }
        if node.orphaning() && !old.as_ref().is_some_and(Node::orphaning) {
            work.insert(Work::Orphan(uid.clone()));
        }
        self.nodes.insert(uid, node);
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
        if self.nodes.get(owner).is_some_and(Node::deleting_dependents) {
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
            if let Some(set) = self.dependents.get_mut(&owner.uid) {
                set.remove(&node.uid);
                if set.is_empty() {
                    self.dependents.remove(&owner.uid);
                }
            }
        }
    }
}
