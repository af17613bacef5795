//! The run loop's side of gate `SchedulingOvercommitProtection` ([`crate::assume`]): the
//! footprints handed to the estimators, recorded after a result is written, released as the
//! binding watch sees workloads turn Healthy or bindings go.

use std::collections::BTreeSet;

use flotilla_api::karmada::{ResourceBindingSpec, ResourceBindingStatus, TargetCluster};

use super::{BindingKey, Scheduler, lock};
use crate::assume::{AssumedByCluster, WorkloadShape};
use crate::core::Snapshot;

impl Scheduler {
    /// The live footprints in each cluster of `snapshot` (`None` without the gate).
    pub(super) fn assumed_by_cluster(&self, snapshot: &Snapshot) -> Option<AssumedByCluster> {
        self.config.overcommit_protection.then(|| {
            lock(&self.assumptions).by_cluster(
                snapshot.clusters().map(|c| c.name()),
                tokio::time::Instant::now(),
            )
        })
    }

    /// Records the footprint of `spec`'s workload in each of `clusters`, just written.
    pub(super) fn assume_placed(
        &self,
        key: &BindingKey,
        spec: &ResourceBindingSpec,
        clusters: &[TargetCluster],
    ) {
        if !self.config.overcommit_protection {
            return;
        }
        let shape = WorkloadShape {
            name: &spec.resource.name,
            namespace: &spec.resource.namespace,
            replicas: spec.replicas,
            requirements: spec.replica_requirements.as_ref(),
            components: &spec.components,
        };
        lock(&self.assumptions).record_schedule(
            &key.to_string(),
            &shape,
            &spec.clusters,
            clusters,
            tokio::time::Instant::now(),
        );
    }

    /// A binding seen by the watch: clusters newly Healthy release their footprints.
    pub(super) fn observe_health(&self, key: &BindingKey, healthy: BTreeSet<String>) {
        if self.config.overcommit_protection {
            lock(&self.assumptions).observe_health(&key.to_string(), healthy);
        }
    }

    /// A binding gone: its footprints go.
    pub(super) fn forget_assumed(&self, key: &BindingKey) {
        if self.config.overcommit_protection {
            lock(&self.assumptions).release(&key.to_string());
        }
    }
}

/// The clusters whose aggregated status reports the workload Healthy.
pub(super) fn healthy_clusters(status: Option<&ResourceBindingStatus>) -> BTreeSet<String> {
    status
        .into_iter()
        .flat_map(|s| &s.aggregated_status)
        .filter(|item| item.health == "Healthy")
        .map(|item| item.cluster_name.clone())
        .collect()
}
