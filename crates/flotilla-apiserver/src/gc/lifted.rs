//! The garbage collector's decisions, ported from kube-controller-manager.
//!
//! Provenance: k8s.io/kubernetes pkg/controller/garbagecollector/garbagecollector.go
//! (`isDangling`, `classifyReferences`, `attemptToDeleteItem`, `processDeletingDependentsItem`)
//! as of Kubernetes v1.32, written in our own code over the collector's graph instead of live
//! API lookups: an owner reference resolves by uid, then must name the same storage key
//! (group, kind, name and — for a namespaced owner — the dependent's namespace) to count.

use super::graph::{FOREGROUND, Graph, Node, ORPHAN, OwnerRef};
use crate::catalog::Catalog;

/// What one owner reference points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerState {
    /// The owner exists and is not deleting its dependents.
    Solid,
    /// The owner does not exist (or the uid names another object): a dangling reference.
    Dangling,
    /// The owner is being deleted in the foreground and waits for its dependents.
    Waiting,
}

/// Why a reference cannot be judged; the dependent is then left alone, as upstream does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unresolvable {
    #[error("owner kind {kind} of {api_version} is not served")]
    UnknownKind { api_version: String, kind: String },
    #[error("a cluster-scoped object cannot have a namespaced owner ({kind} {name})")]
    NamespacedOwnerOfClusterScoped { kind: String, name: String },
}

/// How a dependent goes when the collector deletes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Background => "Background",
            Propagation::Foreground => "Foreground",
            Propagation::Orphan => "Orphan",
        }
    }
}

/// What to do with a dependent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It has a live owner and no reference to drop, or no owners at all.
    Keep,
    /// It has a live owner: drop the references to these (dangling or waiting) owner uids.
    RemoveReferences(Vec<String>),
    /// Delete it. `unblock` first clears `blockOwnerDeletion` on its references (upstream's
    /// guard against a foreground deletion cycle).
    Delete {
        propagation: Propagation,
        unblock: bool,
    },
}

/// Classifies `reference`, held by `dependent`, against the graph.
pub fn resolve(
    graph: &Graph,
    catalog: &Catalog,
    dependent: &Node,
    reference: &OwnerRef,
) -> Result<OwnerState, Unresolvable> {
    let (group, version) = match reference.api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", &*reference.api_version),
    };
    let info = catalog
        .by_kind(group, version, &reference.kind)
        .ok_or_else(|| Unresolvable::UnknownKind {
            api_version: reference.api_version.to_string(),
            kind: reference.kind.to_string(),
        })?;
    if info.namespaced && dependent.namespace.is_none() {
        return Err(Unresolvable::NamespacedOwnerOfClusterScoped {
            kind: reference.kind.to_string(),
            name: reference.name.to_string(),
        });
    }
    // A namespaced owner is looked for in the dependent's namespace only.
    let expected = info.storage_key(dependent.namespace.as_deref(), &reference.name);
    match graph.node(&reference.uid) {
        Some(owner) if owner.key.as_ref() == expected.as_bytes() => {
            if owner.deleting_dependents() {
                Ok(OwnerState::Waiting)
            } else {
                Ok(OwnerState::Solid)
            }
        }
        _ => Ok(OwnerState::Dangling),
    }
}

/// Decides a dependent's fate from its classified references (upstream's
/// `attemptToDeleteItem` after `classifyReferences`).
///
/// `has_dependents`: the dependent owns objects itself; `dependent_deleting_dependents`: one
/// of those is itself deleting in the foreground.
pub fn decide(
    dependent: &Node,
    states: &[(String, OwnerState)],
    has_dependents: bool,
    dependent_deleting_dependents: bool,
) -> Decision {
    if states.is_empty() {
        return Decision::Keep;
    }
    let solid = states.iter().any(|(_, s)| *s == OwnerState::Solid);
    let waiting = states.iter().any(|(_, s)| *s == OwnerState::Waiting);
    if solid {
        let drop: Vec<String> = states
            .iter()
            .filter(|(_, s)| *s != OwnerState::Solid)
            .map(|(uid, _)| uid.clone())
            .collect();
        return if drop.is_empty() {
            Decision::Keep
        } else {
            Decision::RemoveReferences(drop)
        };
    }
    if waiting && has_dependents {
        // An owner waits for this object, which has dependents of its own: delete it in the
        // foreground so the wait covers the whole subtree.
        return Decision::Delete {
            propagation: Propagation::Foreground,
            unblock: dependent_deleting_dependents,
        };
    }
    // Every owner is gone (or waiting, with nothing below this object): honour a deletion
    // mode already requested through the object's finalizers.
    let propagation = if dependent.has_finalizer(ORPHAN) {
        Propagation::Orphan
    } else if dependent.has_finalizer(FOREGROUND) {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    Decision::Delete {
        propagation,
        unblock: false,
    }
}
