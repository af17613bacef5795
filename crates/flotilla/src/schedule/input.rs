//! Reading `flotilla schedule`'s files: YAML/JSON documents and Lists, Clusters, policies, the
//! workload, the previous binding and member Nodes/Pods, and choosing the policy that claims the
//! workload as Karmada's detector would.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, anyhow, bail};
use flotilla_api::karmada::{
    Cluster, ClusterPropagationPolicy, ClusterResourceBinding, PropagationPolicy, PropagationSpec,
    ResourceBinding, ResourceBindingSpec, ResourceBindingStatus, ResourceSelector,
};
use flotilla_api::validation::invalid_message;
use flotilla_api::validation::karmada::{Defaulting, Kind, default_object, validate};
use flotilla_scheduler::AccurateEstimator;
use flotilla_scheduler::estimator::NodeIndex;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize as _;
use serde_json::Value;

use super::CLUSTER_ANNOTATION;

/// One YAML/JSON document (List items expanded).
#[derive(Debug, Clone)]
pub struct Doc {
    /// 1-based document number in the file (items of a List share it).
    pub number: usize,
    /// The object.
    pub value: Value,
    /// The `flotilla.io/cluster` annotation of an enclosing List.
    pub inherited_cluster: Option<String>,
}

impl Doc {
    /// The object's `kind`.
    pub fn kind(&self) -> &str {
        self.str_at("/kind")
    }

    /// The API group of the object's `apiVersion` (`""` for the core group).
    pub fn group(&self) -> &str {
        self.str_at("/apiVersion")
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }

    /// The string at a JSON pointer (`""` when absent).
    pub fn str_at(&self, pointer: &str) -> &str {
        self.value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `metadata.labels`.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.value
            .pointer("/metadata/labels")
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or_default()
    }
}

/// Reads every document of `path`: `---`-separated YAML or JSON, Lists expanded (`kind: List`
/// or a typed list such as `ClusterList`, whose items may omit `apiVersion` and `kind`).
pub fn load(path: &Path) -> anyhow::Result<Vec<Doc>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut docs = Vec::new();
    for (i, document) in yaml_serde::Deserializer::from_str(&text).enumerate() {
        let number = i + 1;
        let value = Value::deserialize(document)
            .with_context(|| format!("{}: document {number}: not valid YAML", path.display()))?;
        if value.is_null() {
            continue;
        }
        if !value.is_object() {
            bail!("{}: document {number}: expected an object", path.display());
        }
        let list_kind = value
            .get("kind")
            .and_then(Value::as_str)
            .and_then(|k| k.strip_suffix("List"))
            .map(str::to_owned);
        if let (Some(item_kind), Some(items)) =
            (list_kind, value.get("items").and_then(Value::as_array))
        {
            let inherited = value
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(CLUSTER_ANNOTATION))
                .and_then(Value::as_str)
                .map(str::to_owned);
            let list_api_version = value.get("apiVersion").cloned();
            for item in items {
                let mut item = item.clone();
                if let Some(object) = item.as_object_mut() {
                    // A typed list (`ClusterList`) names its items' kind and version once.
                    if !item_kind.is_empty() && !object.contains_key("kind") {
                        object.insert("kind".to_owned(), Value::String(item_kind.clone()));
                    }
                    if let Some(v) = &list_api_version
                        && !item_kind.is_empty()
                        && !object.contains_key("apiVersion")
                    {
                        object.insert("apiVersion".to_owned(), v.clone());
                    }
                }
                docs.push(Doc {
                    number,
                    value: item,
                    inherited_cluster: inherited.clone(),
                });
            }
        } else {
            docs.push(Doc {
                number,
                value,
                inherited_cluster: None,
            });
        }
    }
    Ok(docs)
}

/// Decodes a document, naming the file and document on error.
pub fn decode<T: serde::de::DeserializeOwned>(path: &Path, doc: &Doc) -> anyhow::Result<T> {
    serde_json::from_value(doc.value.clone()).map_err(|e| {
        anyhow!(
            "{}: document {} ({}): {e}",
            path.display(),
            doc.number,
            doc.kind()
        )
    })
}

/// Karmada's policies, bindings and clusters, which are never the workload (other Karmada
/// kinds, e.g. a FederatedHPA, can be propagated).
fn is_karmada_kind(doc: &Doc) -> bool {
    matches!(
        doc.group(),
        "policy.karmada.io" | "work.karmada.io" | "cluster.karmada.io"
    )
}

/// The Clusters of `path`, normalised as Karmada's API server stores them.
pub fn load_clusters(path: &Path) -> anyhow::Result<Vec<Cluster>> {
    let mut clusters: Vec<Cluster> = Vec::new();
    for doc in load(path)? {
        if doc.kind() != "Cluster" {
            bail!(
                "{}: document {}: kind is {:?}, expected Cluster",
                path.display(),
                doc.number,
                doc.kind()
            );
        }
        let mut cluster: Cluster = decode(path, &doc)?;
        // As Karmada's API server stores it: zone → zones, default/standard resource models.
        cluster.apply_server_defaults();
        if cluster.name().is_empty() {
            bail!(
                "{}: document {}: Cluster has no metadata.name",
                path.display(),
                doc.number
            );
        }
        if clusters.iter().any(|c| c.name() == cluster.name()) {
            bail!(
                "{}: document {}: metadata.name {:?} appears twice",
                path.display(),
                doc.number,
                cluster.name()
            );
        }
        clusters.push(cluster);
    }
    Ok(clusters)
}

/// A (Cluster)PropagationPolicy with Karmada's defaults applied.
#[derive(Debug, Clone)]
pub struct Policy {
    /// A ClusterPropagationPolicy.
    pub cluster_scoped: bool,
    /// Its metadata.
    pub metadata: ObjectMeta,
    /// Its spec, defaulted.
    pub spec: PropagationSpec,
    /// Karmada's validation message when its webhook would reject the policy.
    pub invalid: Option<String>,
}

impl Policy {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

/// Every (Cluster)PropagationPolicy in `path`; other documents (the workload in the same file,
/// OverridePolicies, …) are skipped. CRD and webhook defaults are applied, and Karmada's
/// validation runs (its verdict is reported, not enforced).
pub fn load_policies(path: &Path) -> anyhow::Result<Vec<Policy>> {
    let mut policies = Vec::new();
    for doc in load(path)? {
        let kind = match (doc.group(), doc.kind()) {
            ("policy.karmada.io", "PropagationPolicy") => Kind::PropagationPolicy,
            ("policy.karmada.io", "ClusterPropagationPolicy") => Kind::ClusterPropagationPolicy,
            _ => continue,
        };
        let mut value = doc.value.clone();
        default_object(
            kind,
            &mut value,
            &Defaulting {
                create: true,
                fresh_id: "00000000-0000-0000-0000-000000000000",
                now: "1970-01-01T00:00:00Z",
            },
        );
        let errors = validate(kind, &value, None);
        let invalid = (!errors.is_empty()).then(|| {
            invalid_message(
                "policy.karmada.io",
                doc.kind(),
                doc.str_at("/metadata/name"),
                &errors,
            )
        });
        let defaulted = Doc {
            value,
            ..doc.clone()
        };
        let (metadata, mut spec) = if kind == Kind::PropagationPolicy {
            let p: PropagationPolicy = decode(path, &defaulted)?;
            (p.metadata, p.spec)
        } else {
            let p: ClusterPropagationPolicy = decode(path, &defaulted)?;
            (p.metadata, p.spec)
        };
        spec.apply_defaults();
        // `clusterAffinities` is omitempty in Karmada: an empty list never reaches a binding.
        if spec
            .placement
            .cluster_affinities
            .as_ref()
            .is_some_and(Vec::is_empty)
        {
            spec.placement.cluster_affinities = None;
        }
        // The metadata as written (the defaulting pass added a placeholder permanent id).
        let original: ObjectMeta = doc
            .value
            .get("metadata")
            .map(|m| serde_json::from_value(m.clone()))
            .transpose()
            .map_err(|e| anyhow!("{}: document {}: metadata: {e}", path.display(), doc.number))?
            .unwrap_or(metadata);
        policies.push(Policy {
            cluster_scoped: kind == Kind::ClusterPropagationPolicy,
            metadata: original,
            spec,
            invalid,
        });
    }
    if policies.is_empty() {
        bail!(
            "{}: no PropagationPolicy or ClusterPropagationPolicy (policy.karmada.io/v1alpha1)",
            path.display()
        );
    }
    Ok(policies)
}

/// The documents of `path` that can be the workload (anything but Karmada's policies, bindings
/// and clusters).
pub fn load_workloads(path: &Path) -> anyhow::Result<Vec<Doc>> {
    let docs: Vec<Doc> = load(path)?
        .into_iter()
        .filter(|d| !is_karmada_kind(d))
        .collect();
    if docs.is_empty() {
        bail!(
            "{}: no workload object (only Karmada policies, bindings or clusters)",
            path.display()
        );
    }
    Ok(docs)
}

/// What a policy selector is matched against.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// `apiVersion`.
    pub api_version: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// Namespace (`""` for cluster-scoped objects).
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// Labels.
    pub labels: &'a BTreeMap<String, String>,
}

/// Karmada's implicit priority of a selector against an object (`ResourceSelectorPriority`):
/// 0 no match, 1 match-all, 2 label selector, 3 name.
fn selector_priority(selector: &ResourceSelector, target: &Target<'_>) -> u8 {
    if selector.api_version != target.api_version || selector.kind != target.kind {
        return 0;
    }
    if !selector.namespace.is_empty() && selector.namespace != target.namespace {
        return 0;
    }
    if !selector.name.is_empty() {
        return if selector.name == target.name { 3 } else { 0 };
    }
    match &selector.label_selector {
        None => 1,
        Some(s) => {
            if flotilla_api::selector::label::api_selector_matches(Some(s), target.labels)
                .unwrap_or(false)
            {
                2
            } else {
                0
            }
        }
    }
}

/// The highest implicit priority of a policy's selectors for `target` (0: not selected). A
/// PropagationPolicy only selects objects of its own namespace (one written without a namespace
/// is taken to be applied in the target's, as `kubectl apply` of both files would do); its
/// selectors' empty namespaces are its own (the webhook's default).
pub fn policy_priority(policy: &Policy, target: &Target<'_>) -> u8 {
    let namespace = match policy.namespace() {
        "" => target.namespace,
        ns => ns,
    };
    if !policy.cluster_scoped && namespace != target.namespace {
        return 0;
    }
    policy
        .spec
        .resource_selectors
        .iter()
        .map(|s| {
            if !policy.cluster_scoped && s.namespace.is_empty() {
                let mut s = s.clone();
                s.namespace = namespace.to_owned();
                selector_priority(&s, target)
            } else {
                selector_priority(s, target)
            }
        })
        .max()
        .unwrap_or(0)
}

/// The policy Karmada's detector would bind `target` with: PropagationPolicies before
/// ClusterPropagationPolicies, then the higher explicit `priority`, then the higher implicit
/// priority (name > label selector > match-all), then the smaller name. `None` when no policy
/// selects the target.
pub fn choose_policy<'p>(policies: &'p [Policy], target: &Target<'_>) -> Option<&'p Policy> {
    policies
        .iter()
        .filter_map(|p| {
            let implicit = policy_priority(p, target);
            (implicit > 0).then_some((p, implicit))
        })
        .min_by(|(a, ai), (b, bi)| {
            a.cluster_scoped
                .cmp(&b.cluster_scoped)
                .then(
                    b.spec
                        .priority
                        .unwrap_or(0)
                        .cmp(&a.spec.priority.unwrap_or(0)),
                )
                .then(bi.cmp(ai))
                .then(a.name().cmp(b.name()))
        })
        .map(|(p, _)| p)
}

/// The previous binding, whichever kind.
#[derive(Debug, Clone)]
pub struct Previous {
    /// Its metadata.
    pub metadata: ObjectMeta,
    /// Its spec (`clusters` = the previous result).
    pub spec: ResourceBindingSpec,
    /// Its status.
    pub status: ResourceBindingStatus,
}

/// The one ResourceBinding or ClusterResourceBinding of `path`.
pub fn load_binding(path: &Path) -> anyhow::Result<Previous> {
    let docs: Vec<Doc> = load(path)?
        .into_iter()
        .filter(|d| matches!(d.kind(), "ResourceBinding" | "ClusterResourceBinding"))
        .collect();
    let [doc] = docs.as_slice() else {
        bail!(
            "{}: expected exactly one ResourceBinding or ClusterResourceBinding, found {}",
            path.display(),
            docs.len()
        );
    };
    let (metadata, spec, status) = if doc.kind() == "ResourceBinding" {
        let b: ResourceBinding = decode(path, doc)?;
        (b.metadata, b.spec, b.status)
    } else {
        let b: ClusterResourceBinding = decode(path, doc)?;
        (b.metadata, b.spec, b.status)
    };
    Ok(Previous {
        metadata,
        spec,
        status: status.unwrap_or_default(),
    })
}

/// Member Nodes and Pods for the accurate estimator.
pub fn load_nodes(path: &Path, clusters: &[Cluster]) -> anyhow::Result<AccurateEstimator> {
    let mut nodes: BTreeMap<String, (Vec<Node>, Vec<Pod>)> = BTreeMap::new();
    for doc in load(path)? {
        let own = doc
            .value
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(CLUSTER_ANNOTATION))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let name = doc.str_at("/metadata/name");
        let Some(cluster) = own.or_else(|| doc.inherited_cluster.clone()) else {
            bail!(
                "{}: document {}: {} {name:?} has no metadata.annotations[{CLUSTER_ANNOTATION:?}] naming its cluster",
                path.display(),
                doc.number,
                doc.kind()
            );
        };
        if !clusters.iter().any(|c| c.name() == cluster) {
            bail!(
                "{}: document {}: metadata.annotations[{CLUSTER_ANNOTATION:?}] names cluster {cluster:?}, which is not in the clusters file",
                path.display(),
                doc.number
            );
        }
        let entry = nodes.entry(cluster).or_default();
        match doc.kind() {
            "Node" => entry.0.push(decode(path, &doc)?),
            "Pod" => entry.1.push(decode(path, &doc)?),
            other => bail!(
                "{}: document {}: kind is {other:?}, expected Node or Pod",
                path.display(),
                doc.number
            ),
        }
    }
    let mut estimator = AccurateEstimator::default();
    for (cluster, (n, p)) in nodes {
        let index = NodeIndex::new(&n, &p)
            .with_context(|| format!("{}: cluster {cluster}", path.display()))?;
        estimator.insert(cluster, index);
    }
    Ok(estimator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(kind: &str, name: &str, namespace: &str, spec: Value) -> Policy {
        let cluster_scoped = kind == "ClusterPropagationPolicy";
        Policy {
            cluster_scoped,
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: (!cluster_scoped).then(|| namespace.to_owned()),
                ..ObjectMeta::default()
            },
            spec: serde_json::from_value(spec).expect("spec"),
            invalid: None,
        }
    }

    #[test]
    fn the_detectors_choice_of_policy() {
        let labels: BTreeMap<String, String> = [("app".to_owned(), "web".to_owned())].into();
        let target = Target {
            api_version: "apps/v1",
            kind: "Deployment",
            namespace: "default",
            name: "web",
            labels: &labels,
        };
        let all = json_selectors(None, None);
        let by_label = json_selectors(None, Some("web"));
        let by_name = json_selectors(Some("web"), None);
        let policies = vec![
            policy("ClusterPropagationPolicy", "a-cpp", "", by_name.clone()),
            policy("PropagationPolicy", "b-all", "default", all.clone()),
            policy("PropagationPolicy", "c-label", "default", by_label.clone()),
            policy("PropagationPolicy", "d-name", "other", by_name.clone()),
        ];
        // A PP of the workload's namespace beats any CPP; the label selector beats match-all;
        // the PP in another namespace does not count.
        let chosen = choose_policy(&policies, &target).expect("a policy");
        assert_eq!(chosen.name(), "c-label");
        // Explicit priority first.
        let mut prioritized = policies.clone();
        prioritized[1].spec.priority = Some(5);
        assert_eq!(
            choose_policy(&prioritized, &target)
                .expect("a policy")
                .name(),
            "b-all"
        );
        // Equal priorities: the smaller name.
        let twins = vec![
            policy("PropagationPolicy", "z", "default", by_name.clone()),
            policy("PropagationPolicy", "y", "default", by_name),
        ];
        assert_eq!(
            choose_policy(&twins, &target).expect("a policy").name(),
            "y"
        );
        // Only CPPs: the CPP.
        let cpp = vec![policy("ClusterPropagationPolicy", "c", "", all)];
        assert_eq!(choose_policy(&cpp, &target).expect("a policy").name(), "c");
        // Nothing selects another kind.
        let job = Target {
            kind: "Job",
            api_version: "batch/v1",
            ..target
        };
        assert!(choose_policy(&policies, &job).is_none());
    }

    fn json_selectors(name: Option<&str>, label: Option<&str>) -> Value {
        let mut selector = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        if let Some(n) = name {
            selector["name"] = n.into();
        }
        if let Some(l) = label {
            selector["labelSelector"] = serde_json::json!({"matchLabels": {"app": l}});
        }
        serde_json::json!({"resourceSelectors": [selector], "placement": {}})
    }

    #[test]
    fn typed_lists_name_their_items_kind() {
        let dir =
            std::env::temp_dir().join(format!("flotilla-schedule-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("clusters.yaml");
        std::fs::write(
            &path,
            "apiVersion: cluster.karmada.io/v1alpha1\nkind: ClusterList\nitems:\n- metadata: {name: m1}\n  spec: {syncMode: Push}\n",
        )
        .expect("write");
        let docs = load(&path).expect("load");
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].kind(), "Cluster");
        assert_eq!(docs[0].group(), "cluster.karmada.io");
        let clusters = load_clusters(&path).expect("clusters");
        assert_eq!(clusters[0].name(), "m1");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
