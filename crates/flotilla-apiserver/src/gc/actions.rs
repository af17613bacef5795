//! What the workers do: judge an item against the graph (under the lock, no I/O), then act
//! through the registry with the object's uid (and resourceVersion) as preconditions.

use std::sync::Arc;

use serde_json::Value;

use super::graph::{FOREGROUND, Node, ORPHAN};
use super::lifted::{self, Decision, Propagation};
use super::{Collector, GcError};
use crate::catalog::ResourceInfo;
use crate::object;
use crate::registry::write::Part;
use crate::registry::{DeleteOptions, WriteOptions};

/// Read-modify-write attempts before an edit is retried later.
const EDIT_ATTEMPTS: usize = 4;

/// What an `Attempt` item comes to, decided from one consistent look at the graph.
enum Plan {
    Nothing,
    /// The owner deletes in the foreground and nothing blocks it any more.
    Release(Node),
    /// The owner deletes in the foreground: these blocking dependents must go first.
    Push(Vec<String>),
    Judge(Node, Decision),
}

impl Collector {
    /// Upstream's `attemptToDeleteItem`.
    pub(super) async fn attempt(&self, uid: &str) -> Result<(), GcError> {
        match self.plan(uid) {
            Plan::Nothing | Plan::Judge(_, Decision::Keep) => Ok(()),
            Plan::Release(owner) => {
                tracing::debug!(key = %key(&owner), "no blocking dependents left");
                self.edit(&owner, "remove the foreground finalizer of", |o| {
                    remove_finalizer(o, FOREGROUND)
                })
                .await
            }
            Plan::Push(dependents) => {
                self.queue
                    .add_all(dependents.into_iter().map(super::Work::Attempt));
                Ok(())
            }
            Plan::Judge(node, Decision::RemoveReferences(owners)) => {
                tracing::debug!(key = %key(&node), ?owners, "dropping references to owners");
                self.edit(&node, "drop owner references of", |o| {
                    remove_references(o, &owners)
                })
                .await
            }
            Plan::Judge(
                node,
                Decision::Delete {
                    propagation,
                    unblock,
                },
            ) => {
                if unblock {
                    self.edit(&node, "unblock owner references of", unblock_references)
                        .await?;
                }
                tracing::debug!(key = %key(&node), propagation = propagation.as_str(), "deleting");
                self.delete(&node, propagation).await
            }
        }
    }

    fn plan(&self, uid: &str) -> Plan {
        let graph = self.graph.lock();
        let Some(node) = graph.node(uid) else {
            return Plan::Nothing;
        };
        if node.deleting_dependents() {
            let blocking = graph.blocking_dependents(uid);
            if blocking.is_empty() {
                return Plan::Release(node.clone());
            }
            return Plan::Push(
                blocking
                    .into_iter()
                    .filter(|dep| !dep.deleting_dependents())
                    .map(|dep| dep.uid.to_string())
                    .collect(),
            );
        }
        // Being deleted is a one-way trip: its dependents are handled once it is gone.
        if node.deleting || node.owners.is_empty() {
            return Plan::Nothing;
        }
        let catalog = self.registry.catalog();
        let mut states = Vec::with_capacity(node.owners.len());
        for reference in &node.owners {
            match lifted::resolve(&graph, catalog, node, reference) {
                Ok(state) => states.push((reference.uid.to_string(), state)),
                Err(reason) => {
                    tracing::debug!(key = %key(node), %reason, "leaving object alone");
                    return Plan::Nothing;
                }
            }
        }
        let has_dependents = graph.dependents_of(uid).next().is_some();
        let dependent_deleting = graph
            .dependents_of(uid)
            .filter_map(|dep| graph.node(dep))
            .any(Node::deleting_dependents);
        let decision = lifted::decide(node, &states, has_dependents, dependent_deleting);
        Plan::Judge(node.clone(), decision)
    }

    /// Upstream's `attemptToOrphanWorker`: every dependent loses its reference to the owner,
    /// then the owner loses its `orphan` finalizer.
    pub(super) async fn orphan(&self, uid: &str) -> Result<(), GcError> {
        let (owner, dependents) = {
            let graph = self.graph.lock();
            let Some(owner) = graph.node(uid).filter(|n| n.orphaning()) else {
                return Ok(());
            };
            let dependents: Vec<Node> = graph
                .dependents_of(uid)
                .filter_map(|dep| graph.node(dep).cloned())
                .collect();
            (owner.clone(), dependents)
        };
        let owners = [uid.to_owned()];
        let results = futures::future::join_all(
            dependents
                .iter()
                .map(|dep| self.edit(dep, "orphan", |o| remove_references(o, &owners))),
        )
        .await;
        results.into_iter().collect::<Result<Vec<()>, _>>()?;
        self.edit(&owner, "remove the orphan finalizer of", |o| {
            remove_finalizer(o, ORPHAN)
        })
        .await
    }

    /// Reads the object, lets `change` edit it (false: nothing to do) and writes it back with
    /// its resourceVersion; a vanished object or one with another uid is left alone.
    async fn edit(
        &self,
        node: &Node,
        step: &'static str,
        change: impl Fn(&mut Value) -> bool,
    ) -> Result<(), GcError> {
        let info = self.resource(node)?;
        let namespace = node.namespace.as_deref();
        for _ in 0..EDIT_ATTEMPTS {
            let mut current = match self.registry.get(&info, namespace, &node.name).await {
                Ok(current) => current,
                Err(e) if e.code == 404 => return Ok(()),
                Err(source) => return Err(write_error(step, node, source)),
            };
            if object::meta_str(&current, "uid") != Some(&*node.uid) || !change(&mut current) {
                return Ok(());
            }
            let options = WriteOptions::default();
            match (self.registry)
                .update(&info, namespace, &node.name, current, Part::Main, &options)
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) if e.code == 404 => return Ok(()),
                Err(e) if e.code == 409 => continue,
                Err(source) => return Err(write_error(step, node, source)),
            }
        }
        Err(GcError::Conflict { key: key(node) })
    }

    /// Deletes the object as judged at `node.revision`. If it changed since, the judgement
    /// still holds when its owner references did not (upstream's `deleteObject`).
    async fn delete(&self, node: &Node, propagation: Propagation) -> Result<(), GcError> {
        let info = self.resource(node)?;
        let namespace = node.namespace.as_deref();
        let mut options = DeleteOptions {
            propagation_policy: Some(propagation.as_str().into()),
            precondition_uid: Some(node.uid.to_string()),
            precondition_resource_version: Some(node.revision.to_string()),
            ..Default::default()
        };
        match self
            .registry
            .delete(&info, namespace, &node.name, &options)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if e.code == 404 => return Ok(()),
            Err(e) if e.code == 409 => {}
            Err(source) => return Err(write_error("delete", node, source)),
        }
        let current = match self.registry.get(&info, namespace, &node.name).await {
            Ok(current) => current,
            Err(e) if e.code == 404 => return Ok(()),
            Err(source) => return Err(write_error("delete", node, source)),
        };
        let bytes = serde_json::to_vec(&current).unwrap_or_default();
        let Some(now) = Node::parse(node.key.clone(), &bytes, node.revision) else {
            return Ok(());
        };
        if now.uid != node.uid {
            return Ok(());
        }
        if now.owners != node.owners {
            return Err(GcError::Conflict { key: key(node) });
        }
        options.precondition_resource_version = None;
        match self
            .registry
            .delete(&info, namespace, &node.name, &options)
            .await
        {
            Ok(_) => Ok(()),
            // 409 now means another object took the name: ours is gone.
            Err(e) if e.code == 404 || e.code == 409 => Ok(()),
            Err(source) => Err(write_error("delete", node, source)),
        }
    }

    fn resource(&self, node: &Node) -> Result<Arc<ResourceInfo>, GcError> {
        let catalog = self.registry.catalog();
        let (group, version) = match node.api_version.split_once('/') {
            Some(split) => split,
            None => ("", &*node.api_version),
        };
        catalog
            .by_kind(group, version, &node.kind)
            .or_else(|| {
                // The version it was written in may no longer be served; every version of a
                // resource shares its storage prefix.
                catalog.all().into_iter().find(|info| {
                    *info.kind == *node.kind
                        && node.key.starts_with(info.storage_prefix().as_bytes())
                })
            })
            .ok_or_else(|| GcError::UnknownResource { key: key(node) })
    }
}

fn key(node: &Node) -> String {
    String::from_utf8_lossy(&node.key).into_owned()
}

fn write_error(step: &'static str, node: &Node, source: crate::ApiError) -> GcError {
    GcError::Write {
        step,
        key: key(node),
        source,
    }
}

/// Drops `finalizer`; false when it is not there.
pub(super) fn remove_finalizer(object: &mut Value, finalizer: &str) -> bool {
    let Some(list) = object["metadata"]
        .get_mut("finalizers")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let before = list.len();
    list.retain(|f| f.as_str() != Some(finalizer));
    before != list.len()
}

/// Drops the owner references to `owners` (by uid); false when there are none.
pub(super) fn remove_references(object: &mut Value, owners: &[String]) -> bool {
    let Some(list) = object["metadata"]
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let before = list.len();
    list.retain(|r| {
        !r["uid"]
            .as_str()
            .is_some_and(|uid| owners.iter().any(|o| o == uid))
    });
    let changed = before != list.len();
    if list.is_empty() {
        object::metadata_mut(object).remove("ownerReferences");
    }
    changed
}

/// Sets `blockOwnerDeletion: false` on every reference that blocks; false when none does.
pub(super) fn unblock_references(object: &mut Value) -> bool {
    let Some(list) = object["metadata"]
        .get_mut("ownerReferences")
        .and_then(Value::as_array_mut)
    else {
        return false;
    };
    let mut changed = false;
    for reference in list.iter_mut() {
        if reference["blockOwnerDeletion"] == Value::Bool(true) {
            reference["blockOwnerDeletion"] = Value::Bool(false);
            changed = true;
        }
    }
    changed
}
