//! A cached pod's metadata: what is its own (name, namespace, uid, resourceVersion, the two
//! timestamps the loops read) and, shared, what it has in common with its siblings.
//!
//! Decoded into `ObjectMeta`, a pod's labels are a `BTreeMap` (one 540-byte node plus a string
//! per key and value) and its ownerReference four more strings: about 1 KiB per pod, the same
//! for the 200 pods of a ReplicaSet. Here labels, annotations and ownerReferences are interned
//! together: every pod with the same three holds one [`Shared`]. `generateName`, `finalizers`
//! and the other fields no loop reads are not kept.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use parking_lot::Mutex;

use crate::intern::{Table, hash_of};

/// The metadata of a cached pod (see the module docs); fields named as in `ObjectMeta`.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub creation_timestamp: Option<Time>,
    pub deletion_timestamp: Option<Time>,
    shared: Arc<Shared>,
}

/// What pods of one template and owner have in common.
#[derive(Debug, Default, PartialEq)]
pub struct Shared {
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
    owner_references: Option<Vec<OwnerReference>>,
}

impl Meta {
    /// `metadata.labels`.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.shared.labels.as_ref()
    }

    /// `metadata.annotations`.
    pub fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        self.shared.annotations.as_ref()
    }

    /// `metadata.ownerReferences`.
    pub fn owner_references(&self) -> Option<&[OwnerReference]> {
        self.shared.owner_references.as_deref()
    }

    /// Whether `self` and `other` hold the same shared part (not only equal ones).
    pub fn shares_with(&self, other: &Meta) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl From<ObjectMeta> for Meta {
    fn from(meta: ObjectMeta) -> Self {
        Meta {
            name: meta.name,
            namespace: meta.namespace,
            uid: meta.uid,
            resource_version: meta.resource_version,
            creation_timestamp: meta.creation_timestamp,
            deletion_timestamp: meta.deletion_timestamp,
            shared: intern(Shared {
                labels: meta.labels.filter(|l| !l.is_empty()),
                annotations: meta.annotations.filter(|a| !a.is_empty()),
                owner_references: meta.owner_references.filter(|o| !o.is_empty()),
            }),
        }
    }
}

impl Hash for Shared {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.labels.hash(state);
        self.annotations.hash(state);
        for owner in self.owner_references.iter().flatten() {
            owner.api_version.hash(state);
            owner.kind.hash(state);
            owner.name.hash(state);
            owner.uid.hash(state);
            owner.controller.hash(state);
            owner.block_owner_deletion.hash(state);
        }
    }
}

/// The shared parts in use. One table for the process (owner uids differ between clusters, so
/// in practice pods share within their ReplicaSet, Job, StatefulSet…).
static TABLE: LazyLock<Mutex<Table<Shared>>> = LazyLock::new(Mutex::default);

/// Pods without labels, annotations or owners.
static NONE: LazyLock<Arc<Shared>> = LazyLock::new(Arc::default);

fn intern(shared: Shared) -> Arc<Shared> {
    if shared == Shared::default() {
        return NONE.clone();
    }
    let hash = hash_of(&shared);
    let mut table = TABLE.lock();
    if let Some(found) = table.find(hash, &shared) {
        return found;
    }
    let shared = Arc::new(shared);
    table.insert(hash, &shared);
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, labels: &[(&str, &str)], owner_uid: &str) -> Meta {
        Meta::from(ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            uid: Some(format!("uid-{name}")),
            generate_name: Some("rs-".to_owned()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".to_owned(),
                kind: "ReplicaSet".to_owned(),
                name: "rs".to_owned(),
                uid: owner_uid.to_owned(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..Default::default()
        })
    }

    #[test]
    fn siblings_share_labels_and_owners_and_keep_their_own_names() {
        let a = meta("a", &[("app", "x"), ("pod-template-hash", "1")], "rs-uid");
        let b = meta("b", &[("app", "x"), ("pod-template-hash", "1")], "rs-uid");
        assert!(a.shares_with(&b));
        assert_eq!(a.name.as_deref(), Some("a"));
        assert_eq!(b.uid.as_deref(), Some("uid-b"));
        assert_eq!(b.labels().expect("labels")["pod-template-hash"], "1");
        assert_eq!(b.owner_references().expect("owners")[0].uid, "rs-uid");
        assert_eq!(b.annotations(), None);
    }

    #[test]
    fn a_different_label_or_owner_is_not_shared() {
        let a = meta("a", &[("app", "x")], "rs-uid");
        let other_label = meta("b", &[("app", "y")], "rs-uid");
        let other_owner = meta("c", &[("app", "x")], "other-uid");
        assert!(!a.shares_with(&other_label));
        assert!(!a.shares_with(&other_owner));
        assert_eq!(other_label.labels().expect("labels")["app"], "y");
        assert_eq!(
            other_owner.owner_references().expect("owners")[0].uid,
            "other-uid"
        );
    }

    #[test]
    fn empty_maps_read_as_absent() {
        let bare = Meta::from(ObjectMeta {
            name: Some("p".to_owned()),
            labels: Some(BTreeMap::new()),
            owner_references: Some(Vec::new()),
            ..Default::default()
        });
        assert_eq!(bare.labels(), None);
        assert_eq!(bare.owner_references(), None);
        assert!(bare.shares_with(&Meta::from(ObjectMeta::default())));
    }

    #[test]
    fn entries_no_pod_holds_are_swept() {
        // Far more distinct shared parts than the first sweep threshold, none kept alive.
        for i in 0..3000 {
            drop(meta("p", &[("sweep-test", &i.to_string())], "u"));
        }
        let kept = meta("p", &[("sweep-test", "kept")], "u");
        let table = TABLE.lock();
        assert!(
            table.len() < 2100,
            "dead entries were not swept: {}",
            table.len()
        );
        drop(table);
        assert_eq!(kept.labels().expect("labels")["sweep-test"], "kept");
    }
}
