//! The catalog of served resources: built-in kinds, Karmada's kinds, and CRDs added at run
//! time. Everything the server knows about a resource (names, scope, subresources, printer
//! columns, storage prefix) lives in one [`ResourceInfo`].

mod builtin;

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

pub use builtin::builtin_resources;

/// A printer column, as CRDs' `additionalPrinterColumns` describe them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    /// A simple JSONPath (`.spec.replicas`, `.status.conditions[?(@.type=="Ready")].status`).
    pub json_path: String,
    /// 0: always shown; 1: only with `-o wide`.
    pub priority: i32,
    pub description: String,
}

/// Where `/scale` reads and writes replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// Which built-in printer renders a resource's table, when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printer {
    /// Columns from [`ResourceInfo::columns`] (CRDs and Karmada kinds), NAME and AGE around them.
    Columns,
    /// A hand-written printer for a built-in kind (see `table.rs`).
    BuiltIn,
}

/// Everything about one served resource of one group-version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    /// Plural, lower case: the URL segment.
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    /// Has a `/status` subresource (status changes only through it).
    pub status: bool,
    pub scale: Option<ScalePaths>,
    pub columns: Vec<Column>,
    pub printer: Printer,
    /// `metadata.generation` is kept (bumped on spec changes).
    pub generation: bool,
    /// Served from a CustomResourceDefinition (by this name) rather than built in.
    pub crd: Option<String>,
    /// The structural schema of a CRD version (custom resources are pruned, defaulted and
    /// validated against it).
    pub schema: Option<Arc<crate::crd::schema::Schema>>,
    /// Objects are stored as another group's resource of the same plural (events.k8s.io/v1
    /// Events are core/v1 Events), converted on every read and write (see [`crate::conversion`]).
    pub storage_group: Option<String>,
}

impl ResourceInfo {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `deployments.apps`, or `pods` for the core group: how errors name the resource.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The group whose objects these are in storage: [`ResourceInfo::storage_group`], or the
    /// resource's own.
    pub fn stored_group(&self) -> &str {
        self.storage_group.as_deref().unwrap_or(&self.group)
    }

    /// The storage prefix of the resource, shared by every version of it (and by every group
    /// that serves the same objects): `/registry/<group>/<plural>/` (`core` for the core group).
    pub fn storage_prefix(&self) -> String {
        let group = match self.stored_group() {
            "" => "core",
            group => group,
        };
        format!("/registry/{group}/{}/", self.plural)
    }

    /// The storage key of one object.
    /// Built at its exact length: stores and the watch cache keep these bytes for every
    /// object (`format!` left up to half of each key's allocation spare).
    pub fn storage_key(&self, namespace: Option<&str>, name: &str) -> String {
        let group = match self.stored_group() {
            "" => "core",
            group => group,
        };
        let namespace = namespace.filter(|_| self.namespaced);
        let parts = [
            "/registry/",
            group,
            "/",
            &self.plural,
            "/",
            namespace.unwrap_or(""),
            if namespace.is_some() { "/" } else { "" },
            name,
        ];
        let mut key = String::with_capacity(parts.iter().map(|part| part.len()).sum());
        parts.iter().for_each(|part| key.push_str(part));
        key
    }

    /// The storage prefix of one namespace's objects, or of all of them.
    pub fn storage_prefix_in(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.namespaced => format!("{}{ns}/", self.storage_prefix()),
            _ => self.storage_prefix(),
        }
    }

    /// Verbs served on the main resource. Namespaces have no `deletecollection`, as in kube.
    pub fn verbs(&self) -> Vec<&'static str> {
        let mut verbs = vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        if !self.deletes_collections() {
            verbs.retain(|v| *v != "deletecollection");
        }
        verbs
    }

    /// Whether a `DELETE` of the whole collection is served (not for Namespaces: kube's
    /// namespace storage has no DeleteCollection).
    pub fn deletes_collections(&self) -> bool {
        !(self.group.is_empty() && self.kind == "Namespace")
    }
}

/// The set of served resources. Cheap to clone; CRD changes are seen by every clone.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    inner: Arc<RwLock<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// (group, version, plural) → resource.
    by_gvr: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
    /// group → versions in preference order.
    versions: BTreeMap<String, Vec<String>>,
    /// Documents derived from the served resources (aggregated discovery), encoded once and
    /// forgotten whenever the resources change, as kube-apiserver serves discovery from a
    /// cache: members' discovery is read on every Cluster status sync.
    documents: std::collections::HashMap<String, bytes::Bytes>,
    /// Counts the changes of the served resources.
    revision: u64,
}

impl Catalog {
    /// A catalog with the built-in and Karmada resources.
    pub fn with_builtins() -> Self {
        let catalog = Catalog::default();
        for info in builtin_resources() {
            catalog.insert(info);
        }
        catalog
    }

    /// Adds or replaces a resource.
    pub fn insert(&self, info: ResourceInfo) {
        let mut inner = self.inner.write();
        inner.documents.clear();
        inner.revision += 1;
        let versions = inner.versions.entry(info.group.clone()).or_default();
        if !versions.contains(&info.version) {
            versions.push(info.version.clone());
        }
        inner.by_gvr.insert(
            (
                info.group.clone(),
                info.version.clone(),
                info.plural.clone(),
            ),
            Arc::new(info),
        );
    }

    /// Removes every version of the resources served by CRD `crd_name`.
    pub fn remove_crd(&self, crd_name: &str) {
        self.replace_crd(crd_name, Vec::new());
    }

    /// Replaces the resources served by CRD `crd_name` with `infos` in one step. A resource
    /// already built in is never shadowed by a CRD (Karmada's CRDs applied to Flotilla).
    pub fn replace_crd(&self, crd_name: &str, infos: Vec<ResourceInfo>) {
        let mut inner = self.inner.write();
        inner.documents.clear();
        inner.revision += 1;
        inner
            .by_gvr
            .retain(|_, info| info.crd.as_deref() != Some(crd_name));
        for info in infos {
            let key = (
                info.group.clone(),
                info.version.clone(),
                info.plural.clone(),
            );
            if inner.by_gvr.contains_key(&key) {
                continue;
            }
            let versions = inner.versions.entry(info.group.clone()).or_default();
            if !versions.contains(&info.version) {
                versions.push(info.version.clone());
            }
            inner.by_gvr.insert(key, Arc::new(info));
        }
        let served: Vec<(String, String)> = inner
            .by_gvr
            .keys()
            .map(|(g, v, _)| (g.clone(), v.clone()))
            .collect();
        for (group, versions) in inner.versions.iter_mut() {
            versions.retain(|v| served.iter().any(|(g, sv)| g == group && sv == v));
        }
        inner.versions.retain(|_, versions| !versions.is_empty());
    }

    /// The document named `key` derived from the served resources: `build` runs when it is not
    /// remembered since they last changed.
    pub fn document(
        &self,
        key: &str,
        build: impl FnOnce(&Catalog) -> bytes::Bytes,
    ) -> bytes::Bytes {
        let seen = {
            let inner = self.inner.read();
            if let Some(bytes) = inner.documents.get(key) {
                return bytes.clone();
            }
            inner.revision
        };
        let built = build(self);
        // Not kept if the resources changed while it was built (it may describe the old ones).
        let mut inner = self.inner.write();
        if inner.revision == seen {
            inner.documents.insert(key.to_owned(), built.clone());
        }
        built
    }

    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.inner
            .read()
            .by_gvr
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
            .cloned()
    }

    /// The resource of a kind in a group-version.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        self.inner
            .read()
            .by_gvr
            .values()
            .find(|info| info.group == group && info.version == version && info.kind == kind)
            .cloned()
    }

    /// Whether a group-version is served at all.
    pub fn serves(&self, group: &str, version: &str) -> bool {
        self.inner
            .read()
            .versions
            .get(group)
            .is_some_and(|versions| versions.iter().any(|v| v == version))
    }

    /// Groups in discovery order (core first, then built-ins in insertion order is not kept by a
    /// map, so sorted by name), each with its versions in preference order.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let inner = self.inner.read();
        inner
            .versions
            .iter()
            .map(|(group, versions)| (group.clone(), versions.clone()))
            .collect()
    }

    /// Resources of one group-version, sorted by plural.
    pub fn resources(&self, group: &str, version: &str) -> Vec<Arc<ResourceInfo>> {
        self.inner
            .read()
            .by_gvr
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, info)| info.clone())
            .collect()
    }

    /// Every resource, sorted by group, version and plural.
    pub fn all(&self) -> Vec<Arc<ResourceInfo>> {
        self.inner.read().by_gvr.values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Catalog;

    #[test]
    fn storage_keys_are_the_prefix_and_name_at_their_exact_length() {
        let catalog = Catalog::with_builtins();
        for (group, version, plural, namespace, expected) in [
            (
                "",
                "v1",
                "pods",
                Some("default"),
                "/registry/core/pods/default/web-0",
            ),
            (
                "",
                "v1",
                "nodes",
                Some("ignored"),
                "/registry/core/nodes/web-0",
            ),
            (
                "apps",
                "v1",
                "deployments",
                None,
                "/registry/apps/deployments/web-0",
            ),
        ] {
            let info = catalog.get(group, version, plural).expect("built in");
            let key = info.storage_key(namespace, "web-0");
            assert_eq!(key, expected);
            assert_eq!(key, format!("{}web-0", info.storage_prefix_in(namespace)));
            assert_eq!(key.capacity(), key.len());
        }
    }

    /// Discovery documents are built once and built again after the served resources change
    /// (a CRD established or removed).
    #[test]
    fn documents_are_remembered_until_the_resources_change() {
        let catalog = Catalog::with_builtins();
        let builds = std::cell::Cell::new(0);
        let document = || {
            catalog.document("aggregated/v2/false", |catalog| {
                builds.set(builds.get() + 1);
                serde_json::to_vec(&crate::discovery::aggregated(catalog, false, "v2"))
                    .expect("JSON")
                    .into()
            })
        };
        let first = document();
        assert_eq!(document(), first);
        assert_eq!(builds.get(), 1);
        let mut widget = (*catalog.get("apps", "v1", "deployments").expect("built in")).clone();
        widget.group = "example.com".into();
        widget.kind = "Widget".into();
        widget.plural = "widgets".into();
        widget.crd = Some("widgets.example.com".into());
        catalog.replace_crd("widgets.example.com", vec![widget]);
        let with_crd = document();
        assert_eq!(builds.get(), 2);
        assert!(String::from_utf8_lossy(&with_crd).contains("\"widgets\""));
        catalog.remove_crd("widgets.example.com");
        assert_eq!(document(), first);
        assert_eq!(builds.get(), 3);
    }
}
