//! Which lists are maps (keyed by which fields), sets or atomic, and which objects are atomic:
//! the `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`
//! information kube-apiserver reads from its OpenAPI (built-in kinds) or from a CRD's schema.
//!
//! Built-in kinds: the `+listType`/`+listMapKey`/`+structType` markers of k8s.io/api v0.32
//! (`core/v1`, `apps/v1`, `batch/v1`, `policy/v1` `types.go`) for the fields Flotilla's users
//! apply; lists without a marker are atomic, as structured-merge-diff treats them. Container
//! and Service ports are keyed by port and protocol, whose default (`TCP`) stands in when an
//! item omits it.

use serde_json::Value;

use crate::crd::schema::Node;

/// One key field of a list-map, with the default used when an item omits it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyField {
    pub name: &'static str,
    pub default: Option<&'static str>,
}

/// How a list merges and is owned.
#[derive(Debug, Clone, PartialEq)]
pub enum ListType {
    Atomic,
    Set,
    Map(Vec<KeyField>),
    /// A CRD list-map, keyed by the fields its schema names.
    CrdMap(Vec<String>),
}

/// Where a walk is in the object, and what the schema says there.
#[derive(Debug, Clone)]
pub enum Cursor<'a> {
    /// A built-in kind: `kind`, and the path from the root as field names (`[]` for items).
    Builtin { kind: &'a str, path: Vec<String> },
    /// A custom resource: the schema node here (`None` where it says nothing).
    Crd(Option<&'a Node>),
}

fn key(name: &'static str) -> KeyField {
    KeyField {
        name,
        default: None,
    }
}

fn key_or(name: &'static str, default: &'static str) -> KeyField {
    KeyField {
        name,
        default: Some(default),
    }
}

const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

impl<'a> Cursor<'a> {
    /// The root of an object of a built-in `kind`.
    pub fn builtin(kind: &'a str) -> Cursor<'a> {
        Cursor::Builtin {
            kind,
            path: Vec::new(),
        }
    }

    /// The root of a custom resource with this schema.
    pub fn crd(root: Option<&'a Node>) -> Cursor<'a> {
        Cursor::Crd(root)
    }

    pub fn field(&self, name: &str) -> Cursor<'a> {
        match self {
            Cursor::Builtin { kind, path } => {
                let mut path = path.clone();
                path.push(name.to_owned());
                Cursor::Builtin { kind, path }
            }
            Cursor::Crd(node) => {
                // `metadata` of a custom resource (and of templates it embeds) is ObjectMeta,
                // whatever its schema says.
                if name == "metadata" {
                    return Cursor::Builtin {
                        kind: "",
                        path: vec!["metadata".into()],
                    };
                }
                Cursor::Crd(node.and_then(|n| {
                    n.properties
                        .get(name)
                        .or(n.additional_properties.as_deref())
                }))
            }
        }
    }

    pub fn items(&self) -> Cursor<'a> {
        match self {
            Cursor::Builtin { kind, path } => {
                let mut path = path.clone();
                path.push("[]".into());
                Cursor::Builtin { kind, path }
            }
            Cursor::Crd(node) => Cursor::Crd(node.and_then(|n| n.items.as_deref())),
        }
    }

    /// Whether `name` is a map key rather than a declared field (such keys are members of a
    /// field set even when they hold objects).
    pub fn is_map_key(&self, name: &str) -> bool {
        match self {
            Cursor::Builtin { .. } => false,
            Cursor::Crd(Some(node)) => {
                !node.properties.contains_key(name) && node.additional_properties.is_some()
            }
            Cursor::Crd(None) => false,
        }
    }

    /// Whether the object here is owned and replaced whole.
    pub fn atomic_map(&self) -> bool {
        match self {
            Cursor::Builtin { kind, path } => {
                let Some(last) = path.last() else {
                    return false;
                };
                match last.as_str() {
                    // LabelSelector and NodeSelector are `+structType=atomic`.
                    "labelSelector" | "namespaceSelector" => true,
                    "requiredDuringSchedulingIgnoredDuringExecution" => path
                        .iter()
                        .rev()
                        .nth(1)
                        .is_some_and(|p| p == "nodeAffinity"),
                    "selector" => {
                        path.len() == 2
                            && path[0] == "spec"
                            && matches!(
                                *kind,
                                "Deployment"
                                    | "ReplicaSet"
                                    | "StatefulSet"
                                    | "DaemonSet"
                                    | "Job"
                                    | "PodDisruptionBudget"
                            )
                    }
                    _ => false,
                }
            }
            Cursor::Crd(node) => node.is_some_and(|n| n.map_type.as_deref() == Some("atomic")),
        }
    }

    /// The list type of the list here.
    pub fn list_type(&self) -> ListType {
        match self {
            Cursor::Builtin { kind, path } => builtin_list_type(kind, path),
            Cursor::Crd(Some(node)) => match node.list_type.as_deref() {
                Some("set") => ListType::Set,
                Some("map") if !node.list_map_keys.is_empty() => {
                    ListType::CrdMap(node.list_map_keys.clone())
                }
                _ => ListType::Atomic,
            },
            Cursor::Crd(None) => ListType::Atomic,
        }
    }

    /// The default of key field `name` of the items of a CRD list-map, if its schema has one.
    pub fn crd_key_default(&self, name: &str) -> Option<Value> {
        match self {
            Cursor::Crd(Some(node)) => node
                .items
                .as_deref()
                .and_then(|items| items.properties.get(name))
                .and_then(|field| field.default.clone()),
            _ => None,
        }
    }
}

fn builtin_list_type(kind: &str, path: &[String]) -> ListType {
    let Some(last) = path.last() else {
        return ListType::Atomic;
    };
    let parent = path.iter().rev().nth(1).map(String::as_str).unwrap_or("");
    let grandparent = path.iter().rev().nth(2).map(String::as_str).unwrap_or("");
    let in_container = parent == "[]" && CONTAINER_LISTS.contains(&grandparent);
    match last.as_str() {
        "finalizers" if parent == "metadata" => ListType::Set,
        "ownerReferences" if parent == "metadata" => ListType::Map(vec![key("uid")]),
        name if CONTAINER_LISTS.contains(&name) && parent == "spec" => {
            ListType::Map(vec![key("name")])
        }
        "ports" if in_container => {
            ListType::Map(vec![key("containerPort"), key_or("protocol", "TCP")])
        }
        "ports" if kind == "Service" && path.len() == 2 && parent == "spec" => {
            ListType::Map(vec![key("port"), key_or("protocol", "TCP")])
        }
        "env" if in_container => ListType::Map(vec![key("name")]),
        "volumeMounts" if in_container => ListType::Map(vec![key("mountPath")]),
        "volumeDevices" if in_container => ListType::Map(vec![key("devicePath")]),
        "resizePolicy" if in_container => ListType::Atomic,
        "volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims"
            if parent == "spec" && kind != "ServiceAccount" =>
        {
            ListType::Map(vec![key("name")])
        }
        "hostAliases" if parent == "spec" => ListType::Map(vec![key("ip")]),
        "topologySpreadConstraints" if parent == "spec" => {
            ListType::Map(vec![key("topologyKey"), key("whenUnsatisfiable")])
        }
        "conditions" if parent == "status" => ListType::Map(vec![key("type")]),
        "podCIDRs" if kind == "Node" => ListType::Set,
        _ => ListType::Atomic,
    }
}
