//! Which apiVersion/kind pairs can arrive as protobuf, and the k8s-pb struct each decodes into.
//!
//! Covers the kinds kubectl's typed commands send (`create namespace|configmap|secret|
//! deployment|service|serviceaccount|job|cronjob|role|clusterrole|rolebinding|
//! clusterrolebinding|quota|priorityclass|poddisruptionbudget|ingress|token`, `auth can-i`,
//! `auth whoami`, `drain`, `certificate approve|deny`) plus the other built-in workloads and reviews whose messages were
//! already needed for those.

use k8s_pb::api::{
    apps, authentication, authorization, autoscaling, batch, certificates, coordination, core,
    networking, policy, rbac, scheduling,
};
use k8s_pb::apimachinery::pkg::apis::meta;
use serde_json::{Map, Value};

use super::ProtobufError;
use super::json::Message;

type Converter = fn(api_version: &str, kind: &str, raw: &[u8]) -> Result<Value, ProtobufError>;

/// Decodes `raw` as `M` and writes its JSON after `apiVersion` and `kind`.
fn object<M: prost::Message + Default + Message>(
    api_version: &str,
    kind: &str,
    raw: &[u8],
) -> Result<Value, ProtobufError> {
    let message = M::decode(raw).map_err(|source| ProtobufError::Object {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        source,
    })?;
    let mut out = Map::new();
    out.insert(
        "apiVersion".to_owned(),
        Value::String(api_version.to_owned()),
    );
    out.insert("kind".to_owned(), Value::String(kind.to_owned()));
    if let Value::Object(fields) = message.to_json()? {
        out.extend(fields);
    }
    Ok(Value::Object(out))
}

macro_rules! kinds {
    ($($api_version:literal => $module:path { $($kind:ident),* $(,)? })*) => {
        const KINDS: &[(&str, &str, Converter)] = &[
            $($( ($api_version, stringify!($kind), { use $module as m; object::<m::$kind> }), )*)*
        ];
    };
}

kinds! {
    "v1" => core::v1 {
        Namespace, ConfigMap, Secret, Service, ServiceAccount, ResourceQuota, LimitRange, Pod, PodTemplate,
        PersistentVolumeClaim, ReplicationController, Endpoints, Node,
    }
    "apps/v1" => apps::v1 { Deployment, StatefulSet, DaemonSet, ReplicaSet }
    "batch/v1" => batch::v1 { Job, CronJob }
    "rbac.authorization.k8s.io/v1" => rbac::v1 { Role, ClusterRole, RoleBinding, ClusterRoleBinding }
    "networking.k8s.io/v1" => networking::v1 { Ingress, IngressClass, NetworkPolicy }
    "policy/v1" => policy::v1 { PodDisruptionBudget, Eviction }
    "scheduling.k8s.io/v1" => scheduling::v1 { PriorityClass }
    "authentication.k8s.io/v1" => authentication::v1 { TokenRequest, TokenReview, SelfSubjectReview }
    "authorization.k8s.io/v1" => authorization::v1 {
        SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview,
    }
    "coordination.k8s.io/v1" => coordination::v1 { Lease }
    "certificates.k8s.io/v1" => certificates::v1 { CertificateSigningRequest }
    "autoscaling/v1" => autoscaling::v1 { Scale }
}

/// `DeleteOptions` is registered in every group version: a typed client's DELETE carries its
/// own group version.
const ANY_VERSION: &[(&str, Converter)] = &[("DeleteOptions", object::<meta::v1::DeleteOptions>)];

fn converter(api_version: &str, kind: &str) -> Option<Converter> {
    KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
        .map(|(_, _, c)| *c)
        .or_else(|| {
            ANY_VERSION
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, c)| *c)
        })
}

/// Whether a protobuf body of this apiVersion and kind can be decoded.
pub fn is_supported(api_version: &str, kind: &str) -> bool {
    converter(api_version, kind).is_some()
}

/// The apiVersion/kind pairs [`super::decode`] reads (`DeleteOptions` is accepted in any
/// apiVersion and listed once, as `meta.k8s.io/v1`).
pub fn supported_kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    KINDS
        .iter()
        .map(|(v, k, _)| (*v, *k))
        .chain(ANY_VERSION.iter().map(|(k, _)| ("meta.k8s.io/v1", *k)))
}

pub(crate) fn convert(api_version: &str, kind: &str, raw: &[u8]) -> Result<Value, ProtobufError> {
    let convert = converter(api_version, kind).ok_or_else(|| ProtobufError::UnsupportedKind {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
    })?;
    convert(api_version, kind, raw)
}
