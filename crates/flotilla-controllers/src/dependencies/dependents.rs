//! Which independent bindings want which dependencies, by name and by label selector: the
//! distributor's index, consulted when a dependency appears or changes.

use std::collections::{BTreeSet, HashMap};

use flotilla_api::selector::label::LabelSelector;

use crate::interpreter::DependentObjectReference;

/// `(apiVersion, kind, namespace, name)` of a dependency.
pub(super) type DependencyKey = (String, String, String, String);
/// `(namespace, name)` of an independent binding.
pub(super) type BindingKey = (String, String);

/// `(apiVersion, kind, namespace, selector)` of dependencies picked by label.
pub(super) type SelectorKey = (String, String, String, LabelSelector);

/// Which independent bindings want which dependencies, both ways: when a dependency appears or
/// changes, its bindings are distributed again (Karmada's distributor does the same from its
/// resource event handler).
#[derive(Default)]
pub(super) struct Dependents {
    by_dependency: HashMap<DependencyKey, BTreeSet<BindingKey>>,
    by_binding: HashMap<BindingKey, Vec<DependencyKey>>,
    /// Dependencies picked by label: binding → (apiVersion, kind, namespace, selector).
    selectors: HashMap<BindingKey, Vec<SelectorKey>>,
}

impl Dependents {
    /// Records that `binding` wants exactly `wanted` (none: forgets it).
    pub(super) fn set(&mut self, binding: &BindingKey, wanted: Vec<DependencyKey>) {
        for old in self.by_binding.remove(binding).unwrap_or_default() {
            if let Some(set) = self.by_dependency.get_mut(&old) {
                set.remove(binding);
                if set.is_empty() {
                    self.by_dependency.remove(&old);
                }
            }
        }
        for dependency in &wanted {
            self.by_dependency
                .entry(dependency.clone())
                .or_default()
                .insert(binding.clone());
        }
        if !wanted.is_empty() {
            self.by_binding.insert(binding.clone(), wanted);
        }
    }

    /// The bindings that want `dependency`.
    pub(super) fn of(&self, dependency: &DependencyKey) -> Vec<BindingKey> {
        self.by_dependency
            .get(dependency)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records the label-selected dependencies of `binding` (none: forgets them).
    pub(super) fn set_selectors(&mut self, binding: &BindingKey, selectors: Vec<SelectorKey>) {
        if selectors.is_empty() {
            self.selectors.remove(binding);
        } else {
            self.selectors.insert(binding.clone(), selectors);
        }
    }

    /// The bindings that pick dependencies by label.
    pub(super) fn with_selectors(&self) -> impl Iterator<Item = &BindingKey> {
        self.selectors.keys()
    }

    /// The bindings with a selector of `apiVersion`/`kind` in `namespace` matching `labels`.
    pub(super) fn selecting(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Vec<BindingKey> {
        self.selectors
            .iter()
            .filter(|(_, selectors)| {
                selectors.iter().any(|(v, k, ns, selector)| {
                    v == api_version && k == kind && ns == namespace && selector.matches(labels)
                })
            })
            .map(|(binding, _)| binding.clone())
            .collect()
    }

    /// The bindings to distribute again when the object `(apiVersion, kind, namespace, name)`
    /// with `labels` appears or changes: those wanting it by name, and those whose selector of
    /// its apiVersion, kind and namespace matches its labels (Karmada's
    /// `matchesWithBindingDependencies`, from the object's side).
    pub(super) fn wanting(
        &self,
        object: &DependencyKey,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> BTreeSet<BindingKey> {
        let mut wanting: BTreeSet<BindingKey> = self.of(object).into_iter().collect();
        wanting.extend(self.selecting(&object.0, &object.1, &object.2, labels));
        wanting
    }
}

/// How `wanted` is indexed: the named dependencies as keys, and the label-selected ones (name
/// empty, as Karmada ignores a selector next to a name) with their parsed selectors; a
/// selector that does not parse is left out (distributing the binding fails on it).
pub(super) fn index_of(
    wanted: &[DependentObjectReference],
) -> (Vec<DependencyKey>, Vec<SelectorKey>) {
    let mut named = Vec::new();
    let mut selectors = Vec::new();
    for dependency in wanted {
        match &dependency.label_selector {
            Some(selector) if dependency.name.is_empty() => {
                if let Ok(parsed) = LabelSelector::try_from(selector) {
                    selectors.push((
                        dependency.api_version.clone(),
                        dependency.kind.clone(),
                        dependency.namespace.clone(),
                        parsed,
                    ));
                }
            }
            _ => named.push(key_of(dependency)),
        }
    }
    (named, selectors)
}

/// The index key of a named dependency.
pub(super) fn key_of(dependency: &DependentObjectReference) -> DependencyKey {
    (
        dependency.api_version.clone(),
        dependency.kind.clone(),
        dependency.namespace.clone(),
        dependency.name.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_selected_dependencies_find_their_bindings() {
        let mut dependents = Dependents::default();
        let binding = ("demo".to_owned(), "hello-serviceimport".to_owned());
        let selector = LabelSelector::parse("kubernetes.io/service-name=derived-hello").unwrap();
        dependents.set_selectors(
            &binding,
            vec![(
                "discovery.k8s.io/v1".into(),
                "EndpointSlice".into(),
                "demo".into(),
                selector,
            )],
        );
        let labels = [(
            "kubernetes.io/service-name".to_owned(),
            "derived-hello".to_owned(),
        )]
        .into();
        assert_eq!(
            dependents.selecting("discovery.k8s.io/v1", "EndpointSlice", "demo", &labels),
            vec![binding.clone()]
        );
        assert!(
            dependents
                .selecting("discovery.k8s.io/v1", "EndpointSlice", "other", &labels)
                .is_empty()
        );
        assert!(
            dependents
                .selecting("v1", "Service", "demo", &labels)
                .is_empty()
        );
        assert!(
            dependents
                .selecting(
                    "discovery.k8s.io/v1",
                    "EndpointSlice",
                    "demo",
                    &Default::default()
                )
                .is_empty()
        );
        dependents.set_selectors(&binding, Vec::new());
        assert!(
            dependents
                .selecting("discovery.k8s.io/v1", "EndpointSlice", "demo", &labels)
                .is_empty()
        );
    }

    mod karmada_dependents;
}
