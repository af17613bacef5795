use std::collections::BTreeSet;

use bytes::Bytes;
use serde_json::{Value, json};

use super::actions::{remove_finalizer, remove_references, unblock_references};
use super::graph::{Graph, Node, Work};
use super::lifted::{Decision, OwnerState, Propagation, Unresolvable, decide, resolve};
use crate::catalog::Catalog;

fn reference(kind: &str, name: &str, uid: &str, block: bool) -> Value {
    let api_version = match kind {
        "Deployment" | "ReplicaSet" => "apps/v1",
        _ => "v1",
    };
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
           "controller": true, "blockOwnerDeletion": block})
}

/// A node as the cache would show it.
fn node(key: &str, kind: &str, uid: &str, owners: &[Value], meta: Value) -> Node {
    let parts: Vec<&str> = key.trim_start_matches('/').split('/').collect();
    let (namespace, name) = match parts.as_slice() {
        [_, _, _, ns, name] => (Some(*ns), *name),
        [_, _, _, name] => (None, *name),
        _ => panic!("test key {key} has no known shape"),
    };
    let api_version = if parts[1] == "core" {
        "v1".to_owned()
    } else {
        format!("{}/v1", parts[1])
    };
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "uid": uid, "ownerReferences": owners}});
    if let Some(ns) = namespace {
        object["metadata"]["namespace"] = ns.into();
    }
    if let Some(extra) = meta.as_object() {
        for (k, v) in extra {
            object["metadata"][k] = v.clone();
        }
    }
    let bytes = serde_json::to_vec(&object).expect("test JSON serializes");
    Node::parse(Bytes::from(key.to_owned()), &bytes, 7).expect("test object parses")
}

fn deploy(uid: &str, meta: Value) -> Node {
    node(
        "/registry/apps/deployments/default/web",
        "Deployment",
        uid,
        &[],
        meta,
    )
}

fn replica_set(uid: &str, owners: &[Value]) -> Node {
    node(
        "/registry/apps/replicasets/default/web-1",
        "ReplicaSet",
        uid,
        owners,
        json!({}),
    )
}

fn pod(name: &str, uid: &str, owners: &[Value]) -> Node {
    let key = format!("/registry/core/pods/default/{name}");
    node(&key, "Pod", uid, owners, json!({}))
}

fn attempts(uids: &[&str]) -> BTreeSet<Work> {
    uids.iter().map(|u| Work::Attempt((*u).into())).collect()
}

fn foreground() -> Value {
    json!({"deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["foregroundDeletion"]})
}

#[test]
fn parse_reads_owner_references_and_deletion_state() {
    let rs = replica_set("rs", &[reference("Deployment", "web", "d", true)]);
    assert_eq!(rs.namespace.as_deref(), Some("default"));
    assert_eq!(&*rs.name, "web-1");
    assert_eq!(rs.owners.len(), 1);
    assert!(rs.owners[0].block_owner_deletion);
    let d = deploy("d", foreground());
    assert!(d.deleting_dependents() && !d.orphaning());
    let no_uid = Node::parse(
        Bytes::from_static(b"/k"),
        br#"{"metadata":{"name":"x"}}"#,
        1,
    );
    assert_eq!(no_uid, None);
}

#[test]
fn indexes_follow_adds_reparenting_and_removals() {
    let mut graph = Graph::default();
    assert!(graph.upsert(deploy("d", json!({}))).is_empty());
    let rs_owner = reference("Deployment", "web", "d", true);
    assert_eq!(
        graph.upsert(replica_set("rs", &[rs_owner])),
        attempts(&["rs"])
    );
    let p = [reference("ReplicaSet", "web-1", "rs", true)];
    graph.upsert(pod("a", "pa", &p));
    graph.upsert(pod("b", "pb", &p));
    assert_eq!(graph.len(), 4);
    assert_eq!(
        graph.node("pa").map(|n| n.key.clone()),
        Some(Bytes::from_static(b"/registry/core/pods/default/a"))
    );
    assert_eq!(graph.dependents_of("rs").collect::<Vec<_>>(), ["pa", "pb"]);
    assert_eq!(graph.dependents_of("d").collect::<Vec<_>>(), ["rs"]);
    // Re-parenting pod b moves it in the owner index.
    let work = graph.upsert(pod(
        "b",
        "pb",
        &[reference("Deployment", "web", "d", false)],
    ));
    assert_eq!(work, attempts(&["pb"]));
    assert_eq!(graph.dependents_of("rs").collect::<Vec<_>>(), ["pa"]);
    assert_eq!(graph.dependents_of("d").collect::<Vec<_>>(), ["pb", "rs"]);
    assert_eq!(
        graph
            .blocking_dependents("d")
            .iter()
            .map(|n| &*n.uid)
            .collect::<Vec<_>>(),
        ["rs"]
    );
    // Removing the owner makes its dependents due but keeps them indexed under its uid.
    assert_eq!(graph.remove("d"), attempts(&["pb", "rs"]));
    assert_eq!(graph.dependents_of("d").count(), 2);
    // Removing the dependents empties the index.
    graph.remove("pb");
    graph.remove("rs");
    assert_eq!(graph.dependents_of("d").count(), 0);
    assert!(graph.node("rs").is_none());
}

#[test]
fn deletion_modes_make_the_owner_and_its_dependents_due() {
    let mut graph = Graph::default();
    graph.upsert(deploy("d", json!({})));
    graph.upsert(replica_set(
        "rs",
        &[reference("Deployment", "web", "d", true)],
    ));
    assert_eq!(
        graph.upsert(deploy("d", foreground())),
        attempts(&["d", "rs"])
    );
    // The same state again makes nothing due.
    assert!(graph.upsert(deploy("d", foreground())).is_empty());
    // A blocking dependent that stops blocking (or goes) rechecks the waiting owner.
    let unblocked = graph.upsert(replica_set(
        "rs",
        &[reference("Deployment", "web", "d", false)],
    ));
    assert_eq!(unblocked, attempts(&["d", "rs"]));
    assert_eq!(graph.remove("rs"), attempts(&["d"]));

    let mut graph = Graph::default();
    graph.upsert(deploy("d", json!({})));
    let orphan = json!({"deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["orphan"]});
    let work = graph.upsert(deploy("d", orphan));
    assert_eq!(work, [Work::Orphan("d".into())].into_iter().collect());
}

#[test]
fn references_resolve_by_uid_and_coordinates() {
    let catalog = Catalog::with_builtins();
    let mut graph = Graph::default();
    graph.upsert(deploy("d", json!({})));
    graph.upsert(node("/registry/core/nodes/n1", "Node", "n", &[], json!({})));
    graph.upsert(node(
        "/registry/apps/deployments/other/web",
        "Deployment",
        "d-other",
        &[],
        json!({}),
    ));
    let rs = replica_set("rs", &[]);
    let state_in = |graph: &Graph, r: Value| {
        let node = replica_set("rs", &[r]);
        resolve(graph, &catalog, &rs, &node.owners[0])
    };
    assert_eq!(
        state_in(&graph, reference("Deployment", "web", "d", true)),
        Ok(OwnerState::Solid)
    );
    assert_eq!(
        state_in(&graph, reference("Deployment", "web", "gone", true)),
        Ok(OwnerState::Dangling)
    );
    // The uid exists but under another name, or in another namespace: dangling upstream too.
    assert_eq!(
        state_in(&graph, reference("Deployment", "api", "d", true)),
        Ok(OwnerState::Dangling)
    );
    assert_eq!(
        state_in(&graph, reference("Deployment", "web", "d-other", true)),
        Ok(OwnerState::Dangling)
    );
    // A cluster-scoped owner of a namespaced dependent is fine.
    assert_eq!(
        state_in(&graph, reference("Node", "n1", "n", false)),
        Ok(OwnerState::Solid)
    );
    assert!(matches!(
        state_in(
            &graph,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "w"})
        ),
        Err(Unresolvable::UnknownKind { .. })
    ));
    let cluster_scoped = node("/registry/core/nodes/n2", "Node", "n2", &[], json!({}));
    let to_deploy = replica_set("x", &[reference("Deployment", "web", "d", true)]);
    assert!(matches!(
        resolve(&graph, &catalog, &cluster_scoped, &to_deploy.owners[0]),
        Err(Unresolvable::NamespacedOwnerOfClusterScoped { .. })
    ));
    graph.upsert(deploy("d", foreground()));
    assert_eq!(
        state_in(&graph, reference("Deployment", "web", "d", true)),
        Ok(OwnerState::Waiting)
    );
}

#[test]
fn decisions_follow_upstream() {
    use OwnerState::*;
    let plain = pod("a", "pa", &[]);
    let states = |list: &[(&str, OwnerState)]| -> Vec<(String, OwnerState)> {
        list.iter().map(|(u, s)| ((*u).to_owned(), *s)).collect()
    };
    let background = Decision::Delete {
        propagation: Propagation::Background,
        unblock: false,
    };
    assert_eq!(decide(&plain, &[], false, false), Decision::Keep);
    assert_eq!(
        decide(&plain, &states(&[("a", Solid)]), false, false),
        Decision::Keep
    );
    assert_eq!(
        decide(
            &plain,
            &states(&[("a", Solid), ("b", Dangling), ("c", Waiting)]),
            true,
            false
        ),
        Decision::RemoveReferences(vec!["b".into(), "c".into()])
    );
    assert_eq!(
        decide(&plain, &states(&[("a", Dangling)]), true, false),
        background
    );
    // Waiting owner, no dependents of its own: a plain deletion.
    assert_eq!(
        decide(&plain, &states(&[("a", Waiting)]), false, false),
        background
    );
    assert_eq!(
        decide(
            &plain,
            &states(&[("a", Waiting), ("b", Dangling)]),
            true,
            true
        ),
        Decision::Delete {
            propagation: Propagation::Foreground,
            unblock: true
        }
    );
    let orphaning = node(
        "/registry/core/pods/default/o",
        "Pod",
        "po",
        &[],
        json!({"finalizers": ["orphan"]}),
    );
    assert_eq!(
        decide(&orphaning, &states(&[("a", Dangling)]), false, false),
        Decision::Delete {
            propagation: Propagation::Orphan,
            unblock: false
        }
    );
}

#[test]
fn edits_touch_only_what_they_name() {
    let mut object = json!({"metadata": {
        "finalizers": ["orphan", "example.com/keep"],
        "ownerReferences": [{"uid": "a", "blockOwnerDeletion": true}, {"uid": "b"}],
    }});
    assert!(remove_finalizer(&mut object, "orphan"));
    assert!(!remove_finalizer(&mut object, "orphan"));
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["example.com/keep"])
    );
    assert!(unblock_references(&mut object));
    assert!(!unblock_references(&mut object));
    assert!(remove_references(&mut object, &["a".into()]));
    assert_eq!(object["metadata"]["ownerReferences"], json!([{"uid": "b"}]));
    assert!(remove_references(&mut object, &["b".into()]));
    assert!(object["metadata"].get("ownerReferences").is_none());
}

#[tokio::test]
async fn the_queue_holds_an_item_once_and_never_hands_it_out_twice_at_once() {
    let queue = super::queue::Queue::<u32>::default();
    queue.add_all([1, 2, 1]);
    let first = queue.next().await;
    assert_eq!(first, 1);
    // Added while held: queued again only once the holder is done.
    queue.add(1);
    assert_eq!(queue.next().await, 2);
    queue.done(&2);
    queue.done(&1);
    assert_eq!(queue.next().await, 1);
}

/// Feeds `object` (stored under `key`) to the graph as the watch cache would.
fn observe(graph: &mut Graph, key: &str, object: &Value, kind: crate::cache::ChangeKind) {
    let bytes = Bytes::from(serde_json::to_vec(object).expect("test JSON serializes"));
    let cached = crate::cache::CachedObject::from_stored(Bytes::from(key.to_owned()), &bytes, 7)
        .expect("a cached object");
    graph.observe(&crate::cache::Change {
        kind,
        revision: 7,
        object: std::sync::Arc::new(cached),
        prev: None,
    });
}

fn pod_object(name: &str, uid: &str, owner: &str, owner_uid: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
        "uid": uid, "ownerReferences": [reference("ReplicaSet", owner, owner_uid, true)]}})
}

#[test]
fn siblings_share_their_owners_strings_and_unused_ones_are_swept() {
    use crate::cache::ChangeKind::{Added, Deleted};
    use std::sync::Arc;
    let mut graph = Graph::default();
    for (name, uid) in [("a", "pa"), ("b", "pb")] {
        let pod = pod_object(name, uid, "web-1", "rs");
        observe(
            &mut graph,
            &format!("/registry/core/pods/default/{name}"),
            &pod,
            Added,
        );
    }
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "default", "uid": "rs"}});
    observe(
        &mut graph,
        "/registry/apps/replicasets/default/web-1",
        &rs,
        Added,
    );
    let (a, b) = (graph.node("pa").expect("a"), graph.node("pb").expect("b"));
    let rs = graph.node("rs").expect("the ReplicaSet");
    assert_eq!(&*a.owners[0].uid, "rs");
    assert!(Arc::ptr_eq(&a.owners[0].uid, &b.owners[0].uid));
    assert!(Arc::ptr_eq(&a.owners[0].name, &b.owners[0].name));
    assert!(Arc::ptr_eq(&a.kind, &b.kind));
    let (na, nb) = (a.namespace.as_ref(), b.namespace.as_ref());
    assert!(Arc::ptr_eq(
        na.expect("namespaced"),
        nb.expect("namespaced")
    ));
    // The owner's own uid is the copy its dependents hold.
    assert!(Arc::ptr_eq(&rs.uid, &a.owners[0].uid));
    assert_eq!(graph.dependents_of("rs").collect::<Vec<_>>(), ["pa", "pb"]);

    // Owners that come and go do not pile up in the shared strings.
    for i in 0..3000 {
        let (name, uid, owner) = (format!("p{i}"), format!("u{i}"), format!("o{i}"));
        let key = format!("/registry/core/pods/default/{name}");
        let pod = pod_object(&name, &uid, &owner, &format!("ou{i}"));
        observe(&mut graph, &key, &pod, Added);
        observe(&mut graph, &key, &pod, Deleted);
    }
    assert!(
        graph.strings().len() < 2100,
        "unused strings were kept: {}",
        graph.strings().len()
    );
    assert_eq!(&*graph.node("pa").expect("a").owners[0].name, "web-1");
}

/// Feeds a change from `prev` to `object` at `revision`, as the watch cache would.
fn observe_change(
    graph: &mut Graph,
    key: &str,
    prev: &Value,
    object: &Value,
    revision: i64,
) -> BTreeSet<Work> {
    let cached = |value: &Value, revision| {
        let bytes = Bytes::from(serde_json::to_vec(value).expect("test JSON serializes"));
        std::sync::Arc::new(
            crate::cache::CachedObject::from_stored(Bytes::from(key.to_owned()), &bytes, revision)
                .expect("a cached object"),
        )
    };
    graph.observe(&crate::cache::Change {
        kind: crate::cache::ChangeKind::Modified,
        revision,
        object: cached(object, revision),
        prev: Some(cached(prev, revision - 1)),
    })
}

#[test]
fn a_write_that_leaves_what_the_collector_reads_only_moves_the_revision() {
    use crate::cache::ChangeKind::Added;
    let mut graph = Graph::default();
    let key = "/registry/core/pods/default/a";
    let pod = pod_object("a", "pa", "web-1", "rs");
    observe(&mut graph, key, &pod, Added);
    assert_eq!(graph.dependents_of("rs").collect::<Vec<_>>(), ["pa"]);

    let name = graph.node("pa").expect("the pod").name.clone();
    let mut running = pod.clone();
    running["status"] = json!({"phase": "Running"});
    running["metadata"]["labels"] = json!({"ready": "true"});
    assert!(observe_change(&mut graph, key, &pod, &running, 8).is_empty());
    let node = graph.node("pa").expect("the pod");
    assert_eq!(node.revision, 8);
    assert_eq!(&*node.owners[0].uid, "rs");
    // Not decoded again: the node is the one built when the pod was added.
    assert!(std::sync::Arc::ptr_eq(&node.name, &name));

    // A change to what the collector reads is read.
    let mut deleting = running.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-12-05T00:00:00Z");
    deleting["metadata"]["finalizers"] = json!([super::graph::FOREGROUND]);
    let work = observe_change(&mut graph, key, &running, &deleting, 9);
    assert!(work.contains(&Work::Attempt("pa".into())), "{work:?}");
    assert!(graph.node("pa").expect("the pod").deleting_dependents());
    let mut orphaned = deleting.clone();
    orphaned["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("ownerReferences");
    observe_change(&mut graph, key, &deleting, &orphaned, 10);
    assert_eq!(graph.dependents_of("rs").count(), 0);
    assert_eq!(graph.node("pa").expect("the pod").revision, 10);
}
