//! Gate `WorkloadAffinity`: gathering a ResourceBinding's group peers for the WorkloadAffinity
//! and WorkloadAntiAffinity filters, and the results the scheduler wrote that its binding watch
//! has not brought back yet (Karmada's `AssigningResourceBindingCache`).
//!
//! Bindings in a group are scheduled one at a time (the run loop holds one lock from reading
//! the peers to writing the result), and each written result is remembered until the watch
//! catches up: two workloads of one anti-affinity group created together never land on the same
//! cluster, whichever worker takes them.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::{ResourceBinding, WorkloadAffinityGroups};
use kube::runtime::reflector::Store;

use crate::framework::WorkloadPeers;

/// Results written but perhaps not yet in the binding cache: (namespace, name) → the binding's
/// resourceVersion after the write and the clusters written.
#[derive(Debug, Default)]
pub(super) struct Assigning {
    written: HashMap<(String, String), (u64, Vec<String>)>,
}

fn version(binding: &ResourceBinding) -> u64 {
    binding
        .metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

impl Assigning {
    /// Remembers a result written at `resource_version` (unparsable versions are not kept: the
    /// watch's copy will be used).
    pub fn record(
        &mut self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        clusters: Vec<String>,
    ) {
        if let Some(version) = resource_version.and_then(|rv| rv.parse().ok()) {
            self.written
                .insert((namespace.to_owned(), name.to_owned()), (version, clusters));
        }
    }

    /// The peers of the binding `namespace/name` with `groups`, from every cached
    /// ResourceBinding, each at its newest version known here. Forgets results the cache has
    /// caught up with (or whose binding is gone).
    pub fn peers(
        &mut self,
        bindings: &Store<ResourceBinding>,
        namespace: &str,
        name: &str,
        groups: &WorkloadAffinityGroups,
    ) -> WorkloadPeers {
        let all: Vec<Arc<ResourceBinding>> = bindings.state();
        let mut current: HashMap<(&str, &str), u64> = HashMap::with_capacity(all.len());
        let mut peers = WorkloadPeers::default();
        for binding in &all {
            let (Some(their_namespace), Some(their_name)) = (
                binding.metadata.namespace.as_deref(),
                binding.metadata.name.as_deref(),
            ) else {
                continue;
            };
            current.insert((their_namespace, their_name), version(binding));
            if their_namespace != namespace || their_name == name {
                continue;
            }
            let Some(theirs) = binding.spec.workload_affinity_groups.as_ref() else {
                continue;
            };
            let same_affinity =
                !groups.affinity_group.is_empty() && theirs.affinity_group == groups.affinity_group;
            let same_anti = !groups.anti_affinity_group.is_empty()
                && theirs.anti_affinity_group == groups.anti_affinity_group;
            if !same_affinity && !same_anti {
                continue;
            }
            let clusters: BTreeSet<String> = match self
                .written
                .get(&(their_namespace.to_owned(), their_name.to_owned()))
            {
                Some((written, clusters)) if *written > version(binding) => {
                    clusters.iter().cloned().collect()
                }
                _ => binding
                    .spec
                    .clusters
                    .iter()
                    .map(|c| c.name.clone())
                    .collect(),
            };
            if same_affinity && !clusters.is_empty() {
                peers.affinity.push(clusters.clone());
            }
            if same_anti {
                peers.anti_affinity.extend(clusters);
            }
        }
        self.written.retain(|(ns, n), (written, _)| {
            current
                .get(&(ns.as_str(), n.as_str()))
                .is_some_and(|cached| cached < written)
        });
        peers
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector::{self, store::Writer};
    use kube::runtime::watcher;
    use serde_json::json;

    use super::*;

    fn binding(
        name: &str,
        namespace: &str,
        rv: u64,
        groups: serde_json::Value,
        clusters: &[&str],
    ) -> ResourceBinding {
        serde_json::from_value(json!({
            "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv.to_string()},
            "spec": {
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                "workloadAffinityGroups": groups,
                "clusters": clusters.iter().map(|c| json!({"name": c})).collect::<Vec<_>>(),
            }
        }))
        .expect("a binding")
    }

    fn store(bindings: Vec<ResourceBinding>) -> (Store<ResourceBinding>, Writer<ResourceBinding>) {
        let (reader, mut writer) = reflector::store();
        for b in bindings {
            writer.apply_watcher_event(&watcher::Event::Apply(b));
        }
        (reader, writer)
    }

    fn groups(affinity: &str, anti: &str) -> WorkloadAffinityGroups {
        WorkloadAffinityGroups {
            affinity_group: affinity.into(),
            anti_affinity_group: anti.into(),
        }
    }

    #[test]
    fn peers_are_the_same_groups_in_the_same_namespace_but_not_the_binding_itself() {
        let (bindings, _writer) = store(vec![
            binding(
                "me",
                "ns",
                1,
                json!({"affinityGroup": "a=1", "antiAffinityGroup": "b=1"}),
                &["m9"],
            ),
            binding(
                "p1",
                "ns",
                2,
                json!({"affinityGroup": "a=1"}),
                &["m1", "m2"],
            ),
            binding("p2", "ns", 3, json!({"affinityGroup": "a=1"}), &[]),
            binding("p3", "ns", 4, json!({"antiAffinityGroup": "b=1"}), &["m3"]),
            binding(
                "other-value",
                "ns",
                5,
                json!({"affinityGroup": "a=2", "antiAffinityGroup": "b=2"}),
                &["m4"],
            ),
            binding(
                "other-ns",
                "elsewhere",
                6,
                json!({"affinityGroup": "a=1", "antiAffinityGroup": "b=1"}),
                &["m5"],
            ),
        ]);
        let peers = Assigning::default().peers(&bindings, "ns", "me", &groups("a=1", "b=1"));
        // p2 has no schedule yet: it does not constrain affinity.
        assert_eq!(
            peers.affinity,
            vec![BTreeSet::from(["m1".to_owned(), "m2".to_owned()])]
        );
        assert_eq!(peers.anti_affinity, BTreeSet::from(["m3".to_owned()]));
    }

    #[test]
    fn a_result_written_counts_until_the_cache_catches_up() {
        let (bindings, mut writer) = store(vec![binding(
            "first",
            "ns",
            10,
            json!({"antiAffinityGroup": "b=1"}),
            &[],
        )]);
        let mut assigning = Assigning::default();
        assigning.record("ns", "first", Some("11"), vec!["m1".to_owned()]);
        let peers = assigning.peers(&bindings, "ns", "second", &groups("", "b=1"));
        assert_eq!(peers.anti_affinity, BTreeSet::from(["m1".to_owned()]));
        assert_eq!(assigning.written.len(), 1);
        // The watch brings the result: the cache's copy is used and the note forgotten.
        writer.apply_watcher_event(&watcher::Event::Apply(binding(
            "first",
            "ns",
            11,
            json!({"antiAffinityGroup": "b=1"}),
            &["m1"],
        )));
        let peers = assigning.peers(&bindings, "ns", "second", &groups("", "b=1"));
        assert_eq!(peers.anti_affinity, BTreeSet::from(["m1".to_owned()]));
        assert!(assigning.written.is_empty());
        // A note about a binding that is gone is forgotten too.
        assigning.record("ns", "gone", Some("12"), vec!["m2".to_owned()]);
        assigning.peers(&bindings, "ns", "second", &groups("", "b=1"));
        assert!(assigning.written.is_empty());
    }
}
