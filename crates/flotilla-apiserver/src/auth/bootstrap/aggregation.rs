//! ClusterRole aggregation (kube-controller-manager's `clusterrole-aggregation` controller): a
//! ClusterRole with an `aggregationRule` gets, as its `rules`, the rules of every other
//! ClusterRole its selectors match, roles taken in name order and duplicate rules dropped
//! ([`crate::auth::lifted::rbac::merge_rules`]). Any ClusterRole change re-evaluates every
//! aggregated role; a write happens only when the rules differ.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_api::LabelSelector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use crate::auth::lifted::rbac::{PolicyRule, merge_rules};
use crate::registry::write::Part;
use crate::registry::{Registry, WriteOptions};

const PREFIX: &str = "/registry/rbac.authorization.k8s.io/clusterroles/";
/// Writes that conflict are retried this many times per pass.
const ATTEMPTS: usize = 5;

/// Runs until dropped.
pub async fn run(registry: Registry) {
    loop {
        let subscription = match registry.cache().subscribe(PREFIX.as_bytes(), None) {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        let mut live = subscription.live;
        aggregate_all(&registry).await;
        loop {
            match live.recv().await {
                Ok(change) if change.object.key.starts_with(PREFIX.as_bytes()) => {
                    // Coalesce a burst of changes into one pass.
                    while let Ok(more) = live.try_recv() {
                        drop(more);
                    }
                    aggregate_all(&registry).await;
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// One role as the aggregation reads it.
struct Role {
    name: String,
    labels: BTreeMap<String, String>,
    rules: Vec<PolicyRule>,
    selectors: Option<Vec<LabelSelector>>,
}

/// Recomputes every aggregated ClusterRole and writes those whose rules changed.
pub async fn aggregate_all(registry: &Registry) {
    for _ in 0..ATTEMPTS {
        let (objects, _) = registry.cache().list(PREFIX.as_bytes(), None);
        let roles: Vec<Role> = objects.iter().filter_map(|o| parse(&o.value())).collect();
        let mut conflicted = false;
        for role in roles.iter().filter(|r| r.selectors.is_some()) {
            let selectors = role.selectors.as_deref().unwrap_or_default();
            let mut rules = Vec::new();
            // `roles` is in key order, which is name order.
            for selector in selectors {
                for source in roles.iter().filter(|r| r.name != role.name) {
                    if selector.matches(&source.labels) {
                        merge_rules(&mut rules, &source.rules);
                    }
                }
            }
            if rules == role.rules {
                continue;
            }
            match write_rules(registry, &role.name, &rules).await {
                Ok(()) => {
                    tracing::debug!(cluster_role = %role.name, rules = rules.len(), "aggregated ClusterRole rules")
                }
                Err(e) if e.code == 409 => conflicted = true,
                Err(e) if e.code == 404 => {}
                Err(error) => {
                    tracing::warn!(cluster_role = %role.name, %error, "cannot aggregate ClusterRole rules")
                }
            }
        }
        if !conflicted {
            return;
        }
    }
}

fn parse(object: &Value) -> Option<Role> {
    let name = crate::object::name(object)?.to_owned();
    let rules = serde_json::from_value(object.get("rules").cloned().unwrap_or(Value::Null))
        .unwrap_or_default();
    let selectors = object
        .get("aggregationRule")
        .filter(|r| !r.is_null())
        .map(|rule| {
            let api: Vec<metav1::LabelSelector> =
                serde_json::from_value(rule["clusterRoleSelectors"].clone()).unwrap_or_default();
            api.iter()
                .filter_map(|s| LabelSelector::try_from(s).ok())
                .collect()
        });
    Some(Role {
        name,
        labels: crate::object::labels(object),
        rules,
        selectors,
    })
}

async fn write_rules(
    registry: &Registry,
    name: &str,
    rules: &[PolicyRule],
) -> Result<(), crate::error::ApiError> {
    let info = registry
        .catalog()
        .get("rbac.authorization.k8s.io", "v1", "clusterroles")
        .expect("clusterroles are built in");
    let mut current = registry.get(&info, None, name).await?;
    current["rules"] = rules.iter().map(rule_json).collect();
    let options = WriteOptions {
        field_manager: Some("clusterrole-aggregation-controller".to_owned()),
        ..WriteOptions::default()
    };
    registry
        .update(&info, None, name, current, Part::Main, &options)
        .await
        .map(|_| ())
}

/// A rule as Kubernetes serializes it (empty lists left out).
fn rule_json(rule: &PolicyRule) -> Value {
    let mut out = serde_json::Map::new();
    for (field, values) in [
        ("verbs", &rule.verbs),
        ("apiGroups", &rule.api_groups),
        ("resources", &rule.resources),
        ("resourceNames", &rule.resource_names),
        ("nonResourceURLs", &rule.non_resource_urls),
    ] {
        if !values.is_empty() || field == "verbs" {
            out.insert(field.into(), values.clone().into());
        }
    }
    Value::Object(out)
}
