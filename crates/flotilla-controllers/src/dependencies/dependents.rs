//! Which independent bindings want which dependencies, by name and by label selector: the
//! distributor's index, consulted when a dependency appears or changes.

use std::collections::{BTreeSet, HashMap};

use flotilla_api::selector::label::LabelSelector;

/// `(kind, namespace, name)` of a dependency.
pub(super) type DependencyKey = (String, String, String);
/// `(namespace, name)` of an independent binding.
pub(super) type BindingKey = (String, String);

/// Which independent bindings want which dependencies, both ways: when a dependency appears or
/// changes, its bindings are distributed again (Karmada's distributor does the same from its
/// resource event handler).
#[derive(Default)]
pub(super) struct Dependents {
    by_dependency: HashMap<DependencyKey, BTreeSet<BindingKey>>,
    by_binding: HashMap<BindingKey, Vec<DependencyKey>>,
    /// Dependencies picked by label: binding → (kind, namespace, selector).
    selectors: HashMap<BindingKey, Vec<(String, String, LabelSelector)>>,
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
    pub(super) fn set_selectors(
        &mut self,
        binding: &BindingKey,
        selectors: Vec<(String, String, LabelSelector)>,
    ) {
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

    /// The bindings with a selector of `kind` in `namespace` matching `labels`.
    pub(super) fn selecting(
        &self,
        kind: &str,
        namespace: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Vec<BindingKey> {
        self.selectors
            .iter()
            .filter(|(_, selectors)| {
                selectors.iter().any(|(k, ns, selector)| {
                    k == kind && ns == namespace && selector.matches(labels)
                })
            })
            .map(|(binding, _)| binding.clone())
            .collect()
    }
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
            vec![("EndpointSlice".into(), "demo".into(), selector)],
        );
        let labels = [(
            "kubernetes.io/service-name".to_owned(),
            "derived-hello".to_owned(),
        )]
        .into();
        assert_eq!(
            dependents.selecting("EndpointSlice", "demo", &labels),
            vec![binding.clone()]
        );
        assert!(
            dependents
                .selecting("EndpointSlice", "other", &labels)
                .is_empty()
        );
        assert!(dependents.selecting("Service", "demo", &labels).is_empty());
        assert!(
            dependents
                .selecting("EndpointSlice", "demo", &Default::default())
                .is_empty()
        );
        dependents.set_selectors(&binding, Vec::new());
        assert!(
            dependents
                .selecting("EndpointSlice", "demo", &labels)
                .is_empty()
        );
    }
}
