//! How a template records the policy that claimed it (labels and annotations exactly as
//! Karmada writes them), and the patches that claim and unclaim it. Bindings carry the same
//! claim metadata.

use flotilla_api::validation::karmada::{CPP_PERMANENT_ID, PP_PERMANENT_ID};
use serde_json::{Map, Value, json};

/// Annotation: namespace of the claiming PropagationPolicy.
pub const PP_NAMESPACE_ANNOTATION: &str = "propagationpolicy.karmada.io/namespace";
/// Annotation: name of the claiming PropagationPolicy.
pub const PP_NAME_ANNOTATION: &str = "propagationpolicy.karmada.io/name";
/// Annotation: name of the claiming ClusterPropagationPolicy.
pub const CPP_NAME_ANNOTATION: &str = "clusterpropagationpolicy.karmada.io/name";
/// Label: the template is owned by another Karmada feature (e.g. MultiClusterService).
pub const CLAIMED_BY_LABEL: &str = "resourcetemplate.karmada.io/claimed-by";

/// The policy a template is (or is to be) claimed by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyClaim {
    Namespaced {
        namespace: String,
        name: String,
        id: String,
    },
    Cluster {
        name: String,
        id: String,
    },
}

fn meta_str<'a>(object: &'a Value, map: &str, key: &str) -> Option<&'a str> {
    object
        .get("metadata")?
        .get(map)?
        .get(key)?
        .as_str()
        .filter(|s| !s.is_empty())
}

impl PolicyClaim {
    /// The claim `object` carries: a PropagationPolicy's first, then a
    /// ClusterPropagationPolicy's.
    pub fn of(object: &Value) -> Option<Self> {
        if let (Some(namespace), Some(name), Some(id)) = (
            meta_str(object, "annotations", PP_NAMESPACE_ANNOTATION),
            meta_str(object, "annotations", PP_NAME_ANNOTATION),
            meta_str(object, "labels", PP_PERMANENT_ID),
        ) {
            return Some(Self::Namespaced {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                id: id.to_owned(),
            });
        }
        if let (Some(name), Some(id)) = (
            meta_str(object, "annotations", CPP_NAME_ANNOTATION),
            meta_str(object, "labels", CPP_PERMANENT_ID),
        ) {
            return Some(Self::Cluster {
                name: name.to_owned(),
                id: id.to_owned(),
            });
        }
        None
    }

    /// The policy's permanent id.
    pub fn id(&self) -> &str {
        match self {
            Self::Namespaced { id, .. } | Self::Cluster { id, .. } => id,
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster { .. })
    }

    /// The policy as `ApplyPolicy` events name it: `policy(ns/name)`, `cluster policy(name)`.
    pub fn describe_for_apply(&self) -> String {
        match self {
            Self::Namespaced {
                namespace, name, ..
            } => format!("policy({namespace}/{name})"),
            Self::Cluster { name, .. } => format!("cluster policy({name})"),
        }
    }

    /// The policy as preemption events name it: `propagation policy(ns/name)`, `cluster
    /// propagation policy(name)`.
    pub fn describe_for_preemption(&self) -> String {
        match self {
            Self::Namespaced {
                namespace, name, ..
            } => format!("propagation policy({namespace}/{name})"),
            Self::Cluster { name, .. } => format!("cluster propagation policy({name})"),
        }
    }

    /// Claim labels.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Namespaced { id, .. } => vec![(PP_PERMANENT_ID, id.clone())],
            Self::Cluster { id, .. } => vec![(CPP_PERMANENT_ID, id.clone())],
        }
    }

    /// Claim annotations.
    pub fn annotations(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Namespaced {
                namespace, name, ..
            } => vec![
                (PP_NAMESPACE_ANNOTATION, namespace.clone()),
                (PP_NAME_ANNOTATION, name.clone()),
            ],
            Self::Cluster { name, .. } => vec![(CPP_NAME_ANNOTATION, name.clone())],
        }
    }

    /// Whether `object` already carries exactly this claim (and no other kind's).
    pub fn is_on(&self, object: &Value) -> bool {
        Self::of(object).as_ref() == Some(self)
            && match self {
                Self::Namespaced { .. } => {
                    meta_str(object, "labels", CPP_PERMANENT_ID).is_none()
                        && meta_str(object, "annotations", CPP_NAME_ANNOTATION).is_none()
                }
                Self::Cluster { .. } => true,
            }
    }

    /// Whether `object` still carries this policy's claim: its permanent-id label of this
    /// policy's kind is this policy's id (Karmada's `NeedCleanupClaimMetadata`). Only then does
    /// deleting the policy unclaim it: a template meanwhile claimed by another policy (e.g. one
    /// deleted and recreated under the same name) keeps that claim.
    pub fn held_by(&self, object: &Value) -> bool {
        self.labels().iter().all(|(key, id)| {
            object
                .pointer("/metadata/labels")
                .and_then(|labels| labels.get(*key))
                .and_then(Value::as_str)
                .unwrap_or("")
                == id
        })
    }

    /// A merge patch writing this claim and removing the other kind's.
    pub fn claim_patch(&self) -> Value {
        let mut labels = Map::new();
        let mut annotations = Map::new();
        for key in [PP_PERMANENT_ID, CPP_PERMANENT_ID] {
            labels.insert(key.into(), Value::Null);
        }
        for key in [
            PP_NAMESPACE_ANNOTATION,
            PP_NAME_ANNOTATION,
            CPP_NAME_ANNOTATION,
        ] {
            annotations.insert(key.into(), Value::Null);
        }
        for (k, v) in self.labels() {
            labels.insert(k.into(), v.into());
        }
        for (k, v) in self.annotations() {
            annotations.insert(k.into(), v.into());
        }
        json!({"metadata": {"labels": labels, "annotations": annotations}})
    }
}

/// The event of a preemption, worded as Karmada's detector words it (`PreemptPolicySucceed`,
/// or `PreemptPolicyFailed` with the error of the claim).
pub(super) fn preemption_event(
    claim: &PolicyClaim,
    previous: &PolicyClaim,
    error: Option<&super::DetectorError>,
) -> (flotilla_runtime::events::EventType, &'static str, String) {
    let (by, of) = (
        claim.describe_for_preemption(),
        previous.describe_for_preemption(),
    );
    match error {
        None => (
            flotilla_runtime::events::EventType::Normal,
            "PreemptPolicySucceed",
            format!("{} preempted {of} successfully", capitalized(&by)),
        ),
        Some(error) => (
            flotilla_runtime::events::EventType::Warning,
            "PreemptPolicyFailed",
            format!("{} failed to preempt {of}: {error}", capitalized(&by)),
        ),
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A merge patch removing the claim of `claim`'s kind.
pub fn unclaim_patch(claim: &PolicyClaim) -> Value {
    let mut labels = Map::new();
    let mut annotations = Map::new();
    for (k, _) in claim.labels() {
        labels.insert(k.into(), Value::Null);
    }
    for (k, _) in claim.annotations() {
        annotations.insert(k.into(), Value::Null);
    }
    json!({"metadata": {"labels": labels, "annotations": annotations}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_through_metadata() {
        let claim = PolicyClaim::Namespaced {
            namespace: "default".into(),
            name: "vllm-propagation".into(),
            id: "1234".into(),
        };
        let mut object = json!({"metadata": {"name": "x", "labels": {"app": "x"}}});
        json_patch::merge(&mut object, &claim.claim_patch());
        assert_eq!(
            object["metadata"],
            json!({"name": "x",
                "labels": {"app": "x", "propagationpolicy.karmada.io/permanent-id": "1234"},
                "annotations": {"propagationpolicy.karmada.io/namespace": "default",
                    "propagationpolicy.karmada.io/name": "vllm-propagation"}})
        );
        assert_eq!(PolicyClaim::of(&object), Some(claim.clone()));
        assert!(claim.is_on(&object));
        json_patch::merge(&mut object, &unclaim_patch(&claim));
        assert_eq!(PolicyClaim::of(&object), None);
        assert_eq!(object["metadata"]["labels"], json!({"app": "x"}));
    }

    mod karmada_claim;
}
