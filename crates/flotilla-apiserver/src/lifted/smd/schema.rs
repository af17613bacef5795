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
    /// A built-in kind: `kind`, and where in it (the rules look at most three names up).
    Builtin {
        kind: &'a str,
        path: BuiltinPath<'a>,
    },
    /// A custom resource: the schema node here (`None` where it says nothing).
    Crd(Option<&'a Node>),
}

/// The path of a built-in cursor from the root as field names (`[]` for items): its depth and
/// its last three names, borrowed (a walk makes a cursor per node, so nothing is copied).
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinPath<'a> {
    depth: usize,
    /// The last name, its parent, its grandparent (`""` above the root).
    tail: [&'a str; 3],
}

impl<'a> BuiltinPath<'a> {
    fn push(self, name: &'a str) -> Self {
        BuiltinPath {
            depth: self.depth + 1,
            tail: [name, self.tail[0], self.tail[1]],
        }
    }

    fn last(&self) -> Option<&'a str> {
        (self.depth > 0).then_some(self.tail[0])
    }

    fn parent(&self) -> &'a str {
        self.tail[1]
    }

    fn grandparent(&self) -> &'a str {
        self.tail[2]
    }
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
            path: BuiltinPath::default(),
        }
    }

    /// The root of a custom resource with this schema.
    pub fn crd(root: Option<&'a Node>) -> Cursor<'a> {
        Cursor::Crd(root)
    }

    pub fn field(&self, name: &'a str) -> Cursor<'a> {
        match self {
            Cursor::Builtin { kind, path } => Cursor::Builtin {
                kind,
                path: path.push(name),
            },
            Cursor::Crd(node) => {
                // `metadata` of a custom resource (and of templates it embeds) is ObjectMeta,
                // whatever its schema says.
                if name == "metadata" {
                    return Cursor::Builtin {
                        kind: "",
                        path: BuiltinPath::default().push("metadata"),
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
            Cursor::Builtin { kind, path } => Cursor::Builtin {
                kind,
                path: path.push("[]"),
            },
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
                match last {
                    // LabelSelector and NodeSelector are `+structType=atomic`.
                    "labelSelector" | "namespaceSelector" => true,
                    "requiredDuringSchedulingIgnoredDuringExecution" => {
                        path.parent() == "nodeAffinity"
                    }
                    "selector" => {
                        path.depth == 2
                            && path.parent() == "spec"
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

fn builtin_list_type(kind: &str, path: &BuiltinPath<'_>) -> ListType {
    let Some(last) = path.last() else {
        return ListType::Atomic;
    };
    let parent = path.parent();
    let grandparent = path.grandparent();
    let in_container = parent == "[]" && CONTAINER_LISTS.contains(&grandparent);
    match last {
        "finalizers" if parent == "metadata" => ListType::Set,
        "ownerReferences" if parent == "metadata" => ListType::Map(vec![key("uid")]),
        name if CONTAINER_LISTS.contains(&name) && parent == "spec" => {
            ListType::Map(vec![key("name")])
        }
        "ports" if in_container => {
            ListType::Map(vec![key("containerPort"), key_or("protocol", "TCP")])
        }
        "ports" if kind == "Service" && path.depth == 2 && parent == "spec" => {
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
