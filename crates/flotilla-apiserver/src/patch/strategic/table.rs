//! Strategic-merge metadata of the built-in kinds Flotilla serves: which lists merge (and by
//! which key), which maps are replaced, which carry `retainKeys`. Data only; the engine in
//! `lifted` reads it through [`Cursor`].
//!
//! Provenance: the `patchStrategy`/`patchMergeKey` struct tags of k8s.io/api (`core/v1`,
//! `apps/v1`, `batch/v1`, `autoscaling/v2`, `policy/v1` `types.go`, kubernetes/api@10b39a39) and
//! of `ObjectMeta` in k8s.io/apimachinery (`pkg/apis/meta/v1/types.go`, apimachinery@eed236ce).
//! Fields without a tag need no entry: their maps merge and their lists are replaced wholesale
//! (RBAC `rules`, `tolerations`, container `args`/`command`, `Endpoints.subsets`, ...).
//! Paths are dotted JSON field names from the object root; `[]` steps into list items.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::super::GroupVersionKindRef;

/// How one field patches, as its Go struct tag says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FieldMeta {
    /// `patchStrategy: merge`: the list merges (by `merge_key` for lists of objects).
    pub merge: bool,
    /// `patchStrategy: replace`: the object is replaced, not merged.
    pub replace: bool,
    /// `patchStrategy: retainKeys`: clients may send `$retainKeys`; the engine honours the
    /// directive wherever it appears, so this flag documents intent only.
    pub retain_keys: bool,
    pub merge_key: Option<&'static str>,
}

const fn merge_by(key: &'static str) -> FieldMeta {
    FieldMeta {
        merge: true,
        replace: false,
        retain_keys: false,
        merge_key: Some(key),
    }
}

const fn merge_retain_keys_by(key: &'static str) -> FieldMeta {
    FieldMeta {
        retain_keys: true,
        ..merge_by(key)
    }
}

const MERGE_PRIMITIVES: FieldMeta = FieldMeta {
    merge: true,
    replace: false,
    retain_keys: false,
    merge_key: None,
};

const RETAIN_KEYS: FieldMeta = FieldMeta {
    merge: false,
    replace: false,
    retain_keys: true,
    merge_key: None,
};

const REPLACE: FieldMeta = FieldMeta {
    merge: false,
    replace: true,
    retain_keys: false,
    merge_key: None,
};

/// One line of a fragment: a tagged field, or another fragment embedded at a path.
#[derive(Debug)]
enum Entry {
    Field(&'static str, FieldMeta),
    Embed(&'static str, &'static [Entry]),
}

use Entry::{Embed, Field};

// ---- shared fragments (Go types that are embedded in many kinds) ----

static OBJECT_META: &[Entry] = &[
    Field("finalizers", MERGE_PRIMITIVES),
    Field("ownerReferences", merge_by("uid")),
];

/// `Container` and `EphemeralContainerCommon` carry the same tags.
static CONTAINER: &[Entry] = &[
    Field("ports", merge_by("containerPort")),
    Field("env", merge_by("name")),
    Field("volumeMounts", merge_by("mountPath")),
    Field("volumeDevices", merge_by("devicePath")),
];

static PVC_STATUS: &[Entry] = &[Field("conditions", merge_by("type"))];

/// A `PersistentVolumeClaim` as embedded in `StatefulSetSpec.volumeClaimTemplates`.
static PVC: &[Entry] = &[Embed("metadata", OBJECT_META), Embed("status", PVC_STATUS)];

static POD_SPEC: &[Entry] = &[
    Field("volumes", merge_retain_keys_by("name")),
    Embed(
        "volumes[].ephemeral.volumeClaimTemplate.metadata",
        OBJECT_META,
    ),
    Field("initContainers", merge_by("name")),
    Embed("initContainers[]", CONTAINER),
    Field("containers", merge_by("name")),
    Embed("containers[]", CONTAINER),
    Field("ephemeralContainers", merge_by("name")),
    Embed("ephemeralContainers[]", CONTAINER),
    Field("imagePullSecrets", merge_by("name")),
    Field("hostAliases", merge_by("ip")),
    Field("topologySpreadConstraints", merge_by("topologyKey")),
    Field("schedulingGates", merge_by("name")),
    Field("resourceClaims", merge_retain_keys_by("name")),
];

static POD_STATUS: &[Entry] = &[
    Field("conditions", merge_by("type")),
    Field("hostIPs", merge_by("ip")),
    Field("podIPs", merge_by("ip")),
    Field("resourceClaimStatuses", merge_retain_keys_by("name")),
];

static POD_TEMPLATE_SPEC: &[Entry] = &[Embed("metadata", OBJECT_META), Embed("spec", POD_SPEC)];

/// Status of the workload kinds: `conditions` merge by `type`.
static CONDITIONS_BY_TYPE: &[Entry] = &[Field("conditions", merge_by("type"))];

// ---- per-kind roots (every kind also gets `metadata` as ObjectMeta) ----

static POD: &[Entry] = &[Embed("spec", POD_SPEC), Embed("status", POD_STATUS)];
static POD_TEMPLATE: &[Entry] = &[Embed("template", POD_TEMPLATE_SPEC)];
static REPLICATION_CONTROLLER: &[Entry] = &[
    Embed("spec.template", POD_TEMPLATE_SPEC),
    Embed("status", CONDITIONS_BY_TYPE),
];
/// `ServicePort` merges by `port` alone, so one port number served over both TCP and UDP cannot
/// be told apart by a strategic merge patch (a known upstream limitation; server-side apply keys
/// on port + protocol instead).
static SERVICE: &[Entry] = &[
    Field("spec.ports", merge_by("port")),
    Embed("status", CONDITIONS_BY_TYPE),
];
static SERVICE_ACCOUNT: &[Entry] = &[
    Field("secrets", merge_by("name")),
    // `imagePullSecrets` carries no tag on ServiceAccount (unlike PodSpec): replaced wholesale.
];
static NODE: &[Entry] = &[
    Field("spec.podCIDRs", MERGE_PRIMITIVES),
    Field("status.conditions", merge_by("type")),
    Field("status.addresses", merge_by("type")),
];
static PVC_KIND: &[Entry] = &[Embed("status", PVC_STATUS)];
static NAMESPACE: &[Entry] = &[Embed("status", CONDITIONS_BY_TYPE)];

static DEPLOYMENT: &[Entry] = &[
    Embed("spec.template", POD_TEMPLATE_SPEC),
    Field("spec.strategy", RETAIN_KEYS),
    Embed("status", CONDITIONS_BY_TYPE),
];
static STATEFUL_SET: &[Entry] = &[
    Embed("spec.template", POD_TEMPLATE_SPEC),
    Embed("spec.volumeClaimTemplates[]", PVC),
    Embed("status", CONDITIONS_BY_TYPE),
];
/// DaemonSet, ReplicaSet and Job: a pod template and conditions by type.
static TEMPLATED_WORKLOAD: &[Entry] = &[
    Embed("spec.template", POD_TEMPLATE_SPEC),
    Embed("status", CONDITIONS_BY_TYPE),
];
static CRON_JOB: &[Entry] = &[
    Embed("spec.jobTemplate.metadata", OBJECT_META),
    Embed("spec.jobTemplate.spec.template", POD_TEMPLATE_SPEC),
];
static HPA_V2: &[Entry] = &[Embed("status", CONDITIONS_BY_TYPE)];
static PDB: &[Entry] = &[
    Field("spec.selector", REPLACE),
    Embed("status", CONDITIONS_BY_TYPE),
];
/// Kinds whose only tagged fields are in `metadata`.
static METADATA_ONLY: &[Entry] = &[];

/// Every kind strategic merge patch is served for. Anything else (custom resources, Karmada
/// kinds) is answered 415 by the server, as kube-apiserver does for custom resources.
static KINDS: &[(&str, &str, &str, &[Entry])] = &[
    ("", "v1", "Pod", POD),
    ("", "v1", "PodTemplate", POD_TEMPLATE),
    ("", "v1", "ReplicationController", REPLICATION_CONTROLLER),
    ("", "v1", "Service", SERVICE),
    ("", "v1", "ConfigMap", METADATA_ONLY),
    ("", "v1", "Secret", METADATA_ONLY),
    ("", "v1", "Namespace", NAMESPACE),
    ("", "v1", "Node", NODE),
    ("", "v1", "Endpoints", METADATA_ONLY),
    ("", "v1", "PersistentVolumeClaim", PVC_KIND),
    ("", "v1", "ServiceAccount", SERVICE_ACCOUNT),
    ("", "v1", "Event", METADATA_ONLY),
    ("", "v1", "LimitRange", METADATA_ONLY),
    ("", "v1", "ResourceQuota", METADATA_ONLY),
    ("apps", "v1", "Deployment", DEPLOYMENT),
    ("apps", "v1", "StatefulSet", STATEFUL_SET),
    ("apps", "v1", "DaemonSet", TEMPLATED_WORKLOAD),
    ("apps", "v1", "ReplicaSet", TEMPLATED_WORKLOAD),
    ("apps", "v1", "ControllerRevision", METADATA_ONLY),
    ("batch", "v1", "Job", TEMPLATED_WORKLOAD),
    ("batch", "v1", "CronJob", CRON_JOB),
    ("networking.k8s.io", "v1", "NetworkPolicy", METADATA_ONLY),
    ("networking.k8s.io", "v1", "Ingress", METADATA_ONLY),
    ("networking.k8s.io", "v1", "IngressClass", METADATA_ONLY),
    ("scheduling.k8s.io", "v1", "PriorityClass", METADATA_ONLY),
    ("apiregistration.k8s.io", "v1", "APIService", METADATA_ONLY),
    ("rbac.authorization.k8s.io", "v1", "Role", METADATA_ONLY),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        METADATA_ONLY,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        METADATA_ONLY,
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        METADATA_ONLY,
    ),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", HPA_V2),
    (
        "autoscaling",
        "v1",
        "HorizontalPodAutoscaler",
        METADATA_ONLY,
    ),
    ("policy", "v1", "PodDisruptionBudget", PDB),
    ("coordination.k8s.io", "v1", "Lease", METADATA_ONLY),
    ("events.k8s.io", "v1", "Event", METADATA_ONLY),
    ("discovery.k8s.io", "v1", "EndpointSlice", METADATA_ONLY),
];

/// Whether `KINDS` lists this group/version/kind.
pub(crate) fn position(gvk: &GroupVersionKindRef<'_>) -> Option<usize> {
    KINDS
        .iter()
        .position(|(g, v, k, _)| *g == gvk.group && *v == gvk.version && *k == gvk.kind)
}

/// The flattened table of one kind: every tagged path, and every prefix of one (so the walk
/// can stop tracking paths as soon as it leaves the tagged part of the object).
#[derive(Debug, Default)]
pub(crate) struct KindIndex {
    paths: HashMap<String, Option<FieldMeta>>,
}

impl KindIndex {
    fn build(entries: &[Entry]) -> Self {
        let mut index = Self::default();
        index.insert("metadata", None);
        index.add_fragment("metadata", OBJECT_META);
        index.add_fragment("", entries);
        index
    }

    fn add_fragment(&mut self, prefix: &str, entries: &[Entry]) {
        for entry in entries {
            match entry {
                Field(path, meta) => {
                    let full = join(prefix, path);
                    self.insert(&full, Some(*meta));
                }
                Embed(path, fragment) => {
                    let full = join(prefix, path);
                    self.insert(&full, None);
                    self.add_fragment(&full, fragment);
                }
            }
        }
    }

    /// Records `path` (with its meta, if a field) and all its prefixes as interior nodes.
    fn insert(&mut self, path: &str, meta: Option<FieldMeta>) {
        for (end, _) in path.match_indices(['.', '[']) {
            self.paths.entry(path[..end].to_string()).or_insert(None);
        }
        for (end, _) in path.match_indices("[]") {
            self.paths
                .entry(path[..end + 2].to_string())
                .or_insert(None);
        }
        let slot = self.paths.entry(path.to_string()).or_insert(None);
        if meta.is_some() {
            *slot = meta;
        }
    }
}

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.starts_with('[')) {
        (true, _) => path.to_string(),
        (false, true) => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

fn indexes() -> &'static [KindIndex] {
    static INDEXES: OnceLock<Vec<KindIndex>> = OnceLock::new();
    INDEXES.get_or_init(|| {
        KINDS
            .iter()
            .map(|(_, _, _, entries)| KindIndex::build(entries))
            .collect()
    })
}

/// Where the merge is in the object, as far as the table is concerned. Once the walk leaves the
/// tagged part of the object (labels, data, any untagged subtree) it stops building paths.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    index: Option<&'a KindIndex>,
    path: String,
}

impl Cursor<'static> {
    /// The cursor at the root of an object of the kind at `position`.
    pub(crate) fn root(position: usize) -> Self {
        Self {
            index: indexes().get(position),
            path: String::new(),
        }
    }
}

impl<'a> Cursor<'a> {
    /// The cursor at field `key` of the object at this cursor.
    pub(crate) fn field(&self, key: &str) -> Cursor<'a> {
        self.step(|path| join(path, key))
    }

    /// The cursor at the items of the list at this cursor.
    pub(crate) fn items(&self) -> Cursor<'a> {
        self.step(|path| format!("{path}[]"))
    }

    fn step(&self, next: impl FnOnce(&str) -> String) -> Cursor<'a> {
        let Some(index) = self.index else {
            return self.untracked();
        };
        let path = next(&self.path);
        if index.paths.contains_key(&path) {
            Cursor {
                index: Some(index),
                path,
            }
        } else {
            self.untracked()
        }
    }

    fn untracked(&self) -> Cursor<'a> {
        Cursor {
            index: None,
            path: String::new(),
        }
    }

    /// The patch metadata of the field at this cursor; untagged fields get the default
    /// (maps merge, lists are replaced).
    pub(crate) fn meta(&self) -> FieldMeta {
        self.index
            .and_then(|index| index.paths.get(&self.path).copied().flatten())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_at(kind: (&str, &str, &str), path: &[&str]) -> FieldMeta {
        let position = position(&GroupVersionKindRef::new(kind.0, kind.1, kind.2))
            .expect("kind is in the table");
        let mut cursor = Cursor::root(position);
        for step in path {
            cursor = if *step == "[]" {
                cursor.items()
            } else {
                cursor.field(step)
            };
        }
        cursor.meta()
    }

    #[test]
    fn pod_template_containers_merge_by_name_in_every_workload() {
        let deployment = ("apps", "v1", "Deployment");
        let cron_job = ("batch", "v1", "CronJob");
        let containers = ["spec", "template", "spec", "containers"];
        assert_eq!(meta_at(deployment, &containers), merge_by("name"));
        let nested = [
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "containers",
            "[]",
            "env",
        ];
        assert_eq!(meta_at(cron_job, &nested), merge_by("name"));
    }

    #[test]
    fn object_meta_is_everywhere_and_untagged_paths_default() {
        let finalizers = meta_at(("", "v1", "ConfigMap"), &["metadata", "finalizers"]);
        assert_eq!(finalizers, MERGE_PRIMITIVES);
        let labels = meta_at(("", "v1", "Pod"), &["metadata", "labels", "finalizers"]);
        assert_eq!(labels, FieldMeta::default());
        let args = ["spec", "containers", "[]", "args"];
        assert_eq!(meta_at(("", "v1", "Pod"), &args), FieldMeta::default());
    }

    #[test]
    fn custom_resources_are_not_in_the_table() {
        let gvk = GroupVersionKindRef::new("policy.karmada.io", "v1alpha1", "PropagationPolicy");
        assert_eq!(position(&gvk), None);
    }
}
