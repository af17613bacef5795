//! Karmada's admission for Karmada's kinds: what a Karmada control plane does with CRD
//! defaults, karmada-webhook and its aggregated API server's Cluster strategy, done in line.
//! The rules live in [`flotilla_api::validation::karmada`]; this module supplies what they
//! need from the server (a fresh UUID, the time) and the autoscaling/v2 defaults FederatedHPA
//! borrows.

use serde_json::Value;

use flotilla_api::validation::FieldError;
use flotilla_api::validation::karmada::{self, Defaulting, Kind, WebhookOptions};

use crate::catalog::ResourceInfo;

fn kind(info: &ResourceInfo) -> Option<Kind> {
    Kind::of(&info.group, &info.kind)
}

/// Applies the Karmada defaults of `info`'s kind (nothing for other kinds).
pub fn default(info: &ResourceInfo, object: &mut Value, create: bool) {
    let Some(kind) = kind(info) else {
        return;
    };
    if kind == Kind::FederatedHpa {
        // Karmada lifts the HPA defaults (`lifted.SetDefaultsFederatedHPA`).
        crate::defaults::apply("autoscaling", "v2", "HorizontalPodAutoscaler", object);
    }
    let fresh_id = uuid::Uuid::new_v4().to_string();
    let now = crate::registry::format_time(jiff::Timestamp::now());
    let ctx = Defaulting {
        create,
        fresh_id: &fresh_id,
        now: &now,
    };
    karmada::default_object(kind, object, &ctx);
}

/// The Karmada rules `object` breaks (`old`: the stored object on update).
pub fn errors(
    info: &ResourceInfo,
    object: &Value,
    old: Option<&Value>,
    webhook: WebhookOptions,
) -> Vec<FieldError> {
    match kind(info) {
        Some(kind) => karmada::validate_with(kind, object, old, webhook),
        None => Vec::new(),
    }
}
