//! Flotilla's scheduling extensions as the live scheduler reads them from a binding.

/// Flotilla's scheduling extensions a binding asks for through annotations its policy carried
/// (the detector copies a policy's `flotilla.io/*` annotations onto its bindings). They need the
/// accurate estimator; without it they are ignored.
#[derive(Debug, Default)]
pub(super) struct Extensions {
    pub node_count: bool,
    pub gpu_topology: Option<crate::estimator::topology::GpuTopologyLevel>,
}

impl Extensions {
    pub fn of(annotations: Option<&std::collections::BTreeMap<String, String>>) -> Self {
        let Some(annotations) = annotations else {
            return Self::default();
        };
        Self {
            node_count: annotations
                .get(REPLICA_DIVISION_ANNOTATION)
                .is_some_and(|v| v == "NodeCount"),
            gpu_topology: annotations
                .get(crate::estimator::topology::GPU_TOPOLOGY_POLICY_ANNOTATION)
                .and_then(|v| v.parse().ok()),
        }
    }
}

/// The annotation of the division-by-node-count extension.
pub const REPLICA_DIVISION_ANNOTATION: &str = "flotilla.io/replica-division";
