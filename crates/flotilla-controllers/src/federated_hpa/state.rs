//! The status conditions and the scaling rules of a FederatedHPA, and the normalization of a
//! proposal into the replicas to set (bounds, rates, stabilization), over the HPA arithmetic
//! shared with the simulated members' HPAs ([`hpa::normalize`]).

use flotilla_api::karmada::FederatedHPA;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{Controller, Key};
use crate::lifted::hpa::{self, Rules, Tunables};

pub(super) use hpa::normalize::set_condition;

/// The scale-up and scale-down rules, when the FederatedHPA has a behavior.
pub(super) fn rules(fhpa: &FederatedHPA, tunables: &Tunables) -> Option<(Rules, Rules)> {
    hpa::normalize::rules(fhpa.spec.behavior.as_ref(), tunables)
}

impl Controller {
    /// Karmada's `normalizeDesiredReplicas` / `normalizeDesiredReplicasWithBehaviors`, with the
    /// conditions they set.
    pub(super) fn normalize(
        &self,
        key: &Key,
        fhpa: &mut FederatedHPA,
        current: i32,
        proposed: i32,
        min: i32,
        now: &Time,
    ) -> i32 {
        let tunables = self.options.tunables;
        let max = fhpa.spec.max_replicas;
        let rules = rules(fhpa, &tunables);
        let mut histories = self.histories.lock();
        let history = histories.entry(key.clone()).or_default();
        let status = fhpa.status.get_or_insert_with(Default::default);
        hpa::normalize::normalize(
            history, status, rules, &tunables, current, proposed, min, max, now,
        )
    }
}
