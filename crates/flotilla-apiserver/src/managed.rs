//! `metadata.managedFields`: which manager owns which fields, as field paths. An update gives
//! its manager the fields it changed (taking them from others); an apply gives its manager
//! exactly the fields of the applied configuration. Lists are owned whole (atomic).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field path: object keys from the root.
pub type Path = Vec<String>;

/// Metadata fields that belong to nobody (identity and bookkeeping).
const UNMANAGED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

/// Every leaf path of an object: scalars, lists and empty objects are leaves.
pub fn leaf_paths(object: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    let mut path = Vec::new();
    collect(object, &mut path, &mut out);
    out
}

fn collect(value: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let skip = match path.as_slice() {
                    [] => matches!(key.as_str(), "apiVersion" | "kind" | "status"),
                    [meta] if meta == "metadata" => UNMANAGED_METADATA.contains(&key.as_str()),
                    _ => false,
                };
                if skip {
                    continue;
                }
                path.push(key.clone());
                collect(child, path, out);
                path.pop();
            }
        }
        _ if !path.is_empty() => {
            out.insert(path.clone());
        }
        _ => {}
    }
}

/// The value at a path.
pub fn value_at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// Removes the value at a path (and parents left empty by it).
pub fn remove_at(value: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    if let Some(parent) = parents
        .iter()
        .try_fold(&mut *value, |v, key| v.get_mut(key))
        .and_then(Value::as_object_mut)
    {
        parent.remove(last);
        if parent.is_empty() && !parents.is_empty() {
            remove_at(value, parents);
        }
    }
}

/// The `fieldsV1` form of a set of paths.
pub fn to_fields_v1(paths: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for key in path {
            let entry = node
                .entry(format!("f:{key}"))
                .or_insert_with(|| Value::Object(Map::new()));
            node = entry.as_object_mut().expect("fieldsV1 nodes are objects");
        }
    }
    Value::Object(root)
}

/// The paths of a `fieldsV1` set (its leaves; `.` markers and `k:`/`v:` items are folded into
/// the list field that holds them).
pub fn from_fields_v1(fields: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    walk_fields(fields, &mut Vec::new(), &mut out);
    out
}

fn walk_fields(node: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
    let children: Vec<(&String, &Value)> = node
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.starts_with("f:")).collect())
        .unwrap_or_default();
    let has_items = node.as_object().is_some_and(|m| {
        m.keys()
            .any(|k| k.starts_with("k:") || k.starts_with("v:") || k.starts_with("i:"))
    });
    if (children.is_empty() || has_items) && !path.is_empty() {
        out.insert(path.clone());
        return;
    }
    for (key, child) in children {
        path.push(key[2..].to_owned());
        walk_fields(child, path, out);
        path.pop();
    }
}

/// Whether `owned` covers `path` (equal, or one is a prefix of the other).
pub fn overlaps(owned: &BTreeSet<Path>, path: &[String]) -> bool {
    owned
        .iter()
        .any(|p| p.starts_with(path) || path.starts_with(p))
}

/// Records an update by `manager`: it owns what it changed from `old` (everything when
/// creating), and other managers lose those fields.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    time: &str,
) {
    let Some(old) = old else {
        // Creating: the manager owns every field, and there is nobody to take them from.
        let fields = fields_v1_of(new);
        let entries = if fields.is_empty() {
            Vec::new()
        } else {
            vec![entry_with_fields(
                manager,
                "Update",
                api_version,
                time,
                Value::Object(fields),
            )]
        };
        restore(new, entries);
        return;
    };
    let mut entries: Vec<Value> = old["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let new_paths = leaf_paths(new);
    let old_paths = leaf_paths(old);
    let changed: BTreeSet<Path> = new_paths
        .iter()
        .filter(|p| value_at(old, p) != value_at(new, p))
        .chain(old_paths.iter().filter(|p| value_at(new, p).is_none()))
        .cloned()
        .collect();
    if changed.is_empty() {
        restore(new, entries);
        return;
    }
    let mut mine = BTreeSet::new();
    for entry in entries.iter_mut() {
        let mut owned = from_fields_v1(&entry["fieldsV1"]);
        if entry["manager"] == manager && entry["operation"] == "Update" {
            mine = owned;
            continue;
        }
        let before = owned.len();
        owned.retain(|p| !changed.iter().any(|c| p.starts_with(c) || c.starts_with(p)));
        if owned.len() != before {
            entry["fieldsV1"] = to_fields_v1(&owned);
        }
    }
    entries.retain(|e| !(e["manager"] == manager && e["operation"] == "Update"));
    mine.extend(changed.into_iter().filter(|p| value_at(new, p).is_some()));
    mine.retain(|p| value_at(new, p).is_some());
    entries.retain(|e| !from_fields_v1(&e["fieldsV1"]).is_empty());
    if !mine.is_empty() {
        entries.push(entry(manager, "Update", api_version, time, &mine));
    }
    restore(new, entries);
}

/// One managed-fields entry.
pub fn entry(
    manager: &str,
    operation: &str,
    api_version: &str,
    time: &str,
    paths: &BTreeSet<Path>,
) -> Value {
    entry_with_fields(manager, operation, api_version, time, to_fields_v1(paths))
}

fn entry_with_fields(
    manager: &str,
    operation: &str,
    api_version: &str,
    time: &str,
    fields: Value,
) -> Value {
    json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    })
}

/// `to_fields_v1(&leaf_paths(object))` in one walk of the object, without the set of paths:
/// children in key order (the order of the sorted paths), leaves as empty objects, and objects
/// none of whose fields are managed left out.
pub fn fields_v1_of(object: &Value) -> Map<String, Value> {
    fn walk(value: &Map<String, Value>, depth: Depth, out: &mut Map<String, Value>) {
        let mut children: Vec<(&String, &Value)> = value
            .iter()
            .filter(|(key, _)| match depth {
                Depth::Root => !matches!(key.as_str(), "apiVersion" | "kind" | "status"),
                Depth::Metadata => !UNMANAGED_METADATA.contains(&key.as_str()),
                Depth::Other => true,
            })
            .collect();
        children.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (key, child) in children {
            let node = match child {
                Value::Object(map) if !map.is_empty() => {
                    let mut node = Map::new();
                    let depth = if depth == Depth::Root && key == "metadata" {
                        Depth::Metadata
                    } else {
                        Depth::Other
                    };
                    walk(map, depth, &mut node);
                    if node.is_empty() {
                        continue;
                    }
                    node
                }
                _ => Map::new(),
            };
            out.insert(format!("f:{key}"), Value::Object(node));
        }
    }
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Depth {
        Root,
        Metadata,
        Other,
    }
    let mut out = Map::new();
    if let Value::Object(map) = object {
        walk(map, Depth::Root, &mut out);
    }
    out
}

fn restore(object: &mut Value, entries: Vec<Value>) {
    let meta = crate::object::metadata_mut(object);
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}

/// The manager name kube-apiserver derives from a User-Agent when a write names none:
/// the part before the first `/` (`kubectl.1.33/v1.33.1 (linux/amd64)` → `kubectl.1.33`).
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let name = user_agent.split('/').next().unwrap_or("").trim();
    let name: String = name.chars().take(128).collect();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_round_trips_and_skips_identity() {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "uid": "u", "labels": {"x": "1"}},
            "data": {"k": "v"}, "list": [1, 2]
        });
        let paths = leaf_paths(&object);
        let expected: BTreeSet<Path> = [
            vec!["data".to_owned(), "k".to_owned()],
            vec!["list".to_owned()],
            vec!["metadata".to_owned(), "labels".to_owned(), "x".to_owned()],
        ]
        .into();
        assert_eq!(paths, expected);
        assert_eq!(from_fields_v1(&to_fields_v1(&paths)), paths);
    }

    #[test]
    fn fields_of_an_object_are_the_fields_of_its_leaf_paths() {
        let objects = [
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "a", "namespace": "n", "uid": "u", "labels": {"z": "1", "a": "2"},
                    "annotations": {}, "managedFields": [{"manager": "x"}]},
                "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}},
                    "selector": {"matchLabels": {"app": "x"}}, "b": null, "empty": {}},
                "status": {"replicas": 1}
            }),
            json!({"metadata": {"name": "only-identity"}, "data": {"k": "v", "K": "w", "k2": ""}}),
            json!({"kind": "Namespace", "metadata": {}}),
            json!({"apiVersion": "v1"}),
            json!("not an object"),
        ];
        for object in objects {
            assert_eq!(
                Value::Object(fields_v1_of(&object)),
                to_fields_v1(&leaf_paths(&object)),
                "{object}"
            );
            // Same members in the same order.
            assert_eq!(
                serde_json::to_string(&Value::Object(fields_v1_of(&object))).expect("JSON"),
                serde_json::to_string(&to_fields_v1(&leaf_paths(&object))).expect("JSON")
            );
        }
    }

    #[test]
    fn a_create_gives_its_manager_every_field() {
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}});
        record_update(None, &mut object, "alice", "v1", "t0");
        let entries = object["metadata"]["managedFields"]
            .as_array()
            .expect("entries");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["manager"], "alice");
        assert_eq!(entries[0]["operation"], "Update");
        assert_eq!(entries[0]["time"], "t0");
        assert_eq!(
            entries[0]["fieldsV1"],
            json!({"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:x": {}}}})
        );
        let mut bare = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b",
            "managedFields": [{"manager": "sent-by-the-client"}]}});
        record_update(None, &mut bare, "alice", "v1", "t0");
        assert!(bare["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn an_update_takes_changed_fields_from_other_managers() {
        let old_plain =
            json!({"metadata": {"name": "a"}, "spec": {"replicas": 2, "paused": false}});
        let mut old = old_plain.clone();
        record_update(None, &mut old, "alice", "apps/v1", "t0");
        let mut new = old.clone();
        new["spec"]["replicas"] = 5.into();
        record_update(Some(&old), &mut new, "bob", "apps/v1", "t1");
        let entries = new["metadata"]["managedFields"]
            .as_array()
            .expect("entries");
        let alice = entries
            .iter()
            .find(|e| e["manager"] == "alice")
            .expect("alice");
        let bob = entries.iter().find(|e| e["manager"] == "bob").expect("bob");
        assert_eq!(
            from_fields_v1(&alice["fieldsV1"]),
            [vec!["spec".to_owned(), "paused".to_owned()]].into()
        );
        assert_eq!(
            from_fields_v1(&bob["fieldsV1"]),
            [vec!["spec".to_owned(), "replicas".to_owned()]].into()
        );
    }

    #[test]
    fn manager_names_come_from_the_user_agent() {
        assert_eq!(
            manager_from_user_agent("kubectl.1.33/v1.33.1 (linux/amd64) kubernetes/abc"),
            "kubectl.1.33"
        );
        assert_eq!(manager_from_user_agent(""), "unknown");
    }
}
