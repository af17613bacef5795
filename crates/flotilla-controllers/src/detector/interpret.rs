//! Karmada's `applyReplicaInterpretation`: the replicas and per-replica requirements (or, with
//! gate `MultiplePodTemplatesScheduling`, the components) a template's binding gets, from a
//! customization or webhook first, then the bundled third-party rules, then the native
//! interpreter, and the `GetReplicas…`/`GetComponents…` events Karmada records about it.

use flotilla_api::karmada::Component;
use flotilla_api::karmada::replicas::InterpretedReplicas;
use flotilla_runtime::events::EventType;
use kube::api::DynamicObject;
use serde_json::Value;

use super::{Detector, DetectorError, TemplateKey, build};
use crate::interpreter;

/// An interpretation's success event: reason and note.
pub(super) type SuccessEvent = (&'static str, &'static str);

impl Detector {
    /// The template's replicas (zero when it has components), its components, and the success
    /// event to record when a hook interpreted it; failures are recorded here.
    pub(super) async fn interpret_replicas(
        &self,
        key: &TemplateKey,
        object: &DynamicObject,
        template: &Value,
    ) -> Result<
        (
            InterpretedReplicas,
            Option<Vec<Component>>,
            Option<SuccessEvent>,
        ),
        DetectorError,
    > {
        let mut reported = None;
        // Karmada's `applyReplicaInterpretation`: with gate `MultiplePodTemplatesScheduling`, a
        // kind with components gets them instead of replicas. Each interpretation a hook
        // exists for is reported on the template (`GetComponents…`, `GetReplicas…`).
        let components = if self.multiple_templates {
            match self.interpreter.interpret_components(template).await {
                Some(Ok(components)) => Some(components),
                Some(Err(error)) => {
                    let note = error.to_string();
                    self.publish(key, object, EventType::Warning, "GetComponentsFailed", note)
                        .await;
                    return Err(error.into());
                }
                None => None,
            }
        } else {
            None
        };
        if components.is_some() {
            reported = Some((
                "GetComponentsSucceed",
                "Get components of resource template successfully.",
            ));
        }
        let customized = match components {
            Some(_) => None,
            None => self.interpreter.interpret_replica(template).await,
        };
        let native = customized.is_none();
        let hooked = customized.is_some() || replica_hook(template);
        let interpreted = match (&components, customized) {
            (Some(_), _) => Ok(flotilla_api::karmada::replicas::InterpretedReplicas {
                replicas: 0,
                requirements: None,
            }),
            (None, Some(customized)) => customized.map_err(DetectorError::from),
            (None, None) => interpreter::interpret_replica(template).map_err(DetectorError::from),
        };
        if components.is_none() && hooked {
            match &interpreted {
                Ok(_) => {
                    reported = Some((
                        "GetReplicasSucceed",
                        "Get replicas of resource template successfully.",
                    ))
                }
                Err(error) => {
                    let note = error.to_string();
                    self.publish(key, object, EventType::Warning, "GetReplicasFailed", note)
                        .await;
                }
            }
        }
        let mut interpreted = interpreted?;
        if self.quota_estimate && components.is_none() {
            build::quota_estimate_requirements(template, &mut interpreted, native);
        }
        Ok((interpreted, components, reported))
    }
}

/// Whether Karmada's native interpreter has a replica rule for `template` (Deployment,
/// ReplicaSet, StatefulSet, Job, Pod); customizations and the bundled third-party rules are
/// hooks of their own.
fn replica_hook(template: &Value) -> bool {
    let api_version = template["apiVersion"].as_str().unwrap_or("");
    let kind = template["kind"].as_str().unwrap_or("");
    matches!(
        (api_version, kind),
        ("apps/v1", "Deployment" | "ReplicaSet" | "StatefulSet")
            | ("batch/v1", "Job")
            | ("v1", "Pod")
    )
}
