//! `work.karmada.io/v1alpha1` `Work`: the manifests to apply in one member cluster (namespace
//! `karmada-es-<cluster>`), and what the execution and work-status controllers observed there.
//! Also the well-known labels and annotations Karmada stamps on member objects.

use schemars::JsonSchema;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{ApiVersion, Kind, karmada_resource};

/// Finalizer the execution controller holds on every Work.
pub const EXECUTION_CONTROLLER_FINALIZER: &str = "karmada.io/execution-controller";
/// Condition type: the manifests were applied to the member.
pub const WORK_APPLIED: &str = "Applied";
/// Condition type: the Work is (not) being dispatched.
pub const WORK_DISPATCHING: &str = "Dispatching";
/// Aliases of the two condition types.
pub const WORK_CONDITION_APPLIED: &str = WORK_APPLIED;
pub const WORK_CONDITION_DISPATCHING: &str = WORK_DISPATCHING;
/// `ManifestStatus.health` values.
pub const HEALTH_HEALTHY: &str = "Healthy";
pub const HEALTH_UNHEALTHY: &str = "Unhealthy";
pub const HEALTH_UNKNOWN: &str = "Unknown";
/// Label on member objects created by Karmada (value `true`).
pub const MANAGED_BY_KARMADA_LABEL: &str = "karmada.io/managed";
/// Annotation on member objects: the Work's namespace.
pub const WORK_NAMESPACE_ANNOTATION: &str = "work.karmada.io/namespace";
/// Annotation on member objects: the Work's name.
pub const WORK_NAME_ANNOTATION: &str = "work.karmada.io/name";
/// Annotation on manifests (and templates): `overwrite` or `abort`.
pub const CONFLICT_RESOLUTION_ANNOTATION: &str = "work.karmada.io/conflict-resolution";
/// The value of [`CONFLICT_RESOLUTION_ANNOTATION`] that takes over existing member objects.
pub const CONFLICT_RESOLUTION_OVERWRITE: &str = "overwrite";
/// Label on a Deployment template whose member replicas are owned by a member HPA.
pub const RETAIN_REPLICAS_LABEL: &str = "resourcetemplate.karmada.io/retain-replicas";
/// Annotation on member objects: the template's generation.
pub const RESOURCE_TEMPLATE_GENERATION_ANNOTATION: &str = "resourcetemplate.karmada.io/generation";
/// Annotation on member objects: the template's UID.
pub const RESOURCE_TEMPLATE_UID_ANNOTATION: &str = "resourcetemplate.karmada.io/uid";
/// Annotation on member objects: the binding's namespace.
pub const RESOURCE_BINDING_NAMESPACE_ANNOTATION: &str = "resourcebinding.karmada.io/namespace";
/// Annotation on member objects: the binding's name.
pub const RESOURCE_BINDING_NAME_ANNOTATION: &str = "resourcebinding.karmada.io/name";
/// Annotation on member objects: the ClusterResourceBinding's name.
pub const CLUSTER_RESOURCE_BINDING_NAME_ANNOTATION: &str = "clusterresourcebinding.karmada.io/name";

/// Labels Karmada puts on member objects (`util.ManagedResourceLabels`), removed when a Work
/// with `preserveResourcesOnDeletion` goes away.
pub const MANAGED_RESOURCE_LABELS: &[&str] = &[
    "resourcebinding.karmada.io/permanent-id",
    "work.karmada.io/permanent-id",
    MANAGED_BY_KARMADA_LABEL,
];
/// Annotations Karmada puts on member objects (`util.ManagedResourceAnnotations`).
pub const MANAGED_RESOURCE_ANNOTATIONS: &[&str] = &[
    "resourcetemplate.karmada.io/managed-annotations",
    "resourcetemplate.karmada.io/managed-labels",
    RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    RESOURCE_BINDING_NAME_ANNOTATION,
    RESOURCE_TEMPLATE_UID_ANNOTATION,
    RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
    WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
];
/// PropagationPolicy claim metadata (labels, annotations).
pub const PP_CLAIM_LABELS: &[&str] = &["propagationpolicy.karmada.io/permanent-id"];
pub const PP_CLAIM_ANNOTATIONS: &[&str] = &[
    "propagationpolicy.karmada.io/namespace",
    "propagationpolicy.karmada.io/name",
];
/// ClusterPropagationPolicy claim metadata (labels, annotations).
pub const CPP_CLAIM_LABELS: &[&str] = &["clusterpropagationpolicy.karmada.io/permanent-id"];
pub const CPP_CLAIM_ANNOTATIONS: &[&str] = &["clusterpropagationpolicy.karmada.io/name"];

/// A set of manifests for one member cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Work {
    /// Always `work.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<Work>,
    /// Always `Work`.
    #[serde(default)]
    pub kind: Kind<Work>,
    /// Standard object metadata (decoded here without `managedFields`: `crate::meta`).
    #[serde(default, deserialize_with = "crate::meta::without_managed_fields")]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: WorkSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WorkStatus>,
}
karmada_resource!(
    Work,
    group = "work.karmada.io",
    version = "v1alpha1",
    kind = "Work",
    plural = "works",
    scope = NamespaceResourceScope
);

/// `Work.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkSpec {
    /// The manifests.
    #[serde(default)]
    pub workload: WorkloadTemplate,
    /// Do not dispatch to the member while true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_dispatching: Option<bool>,
    /// Keep the member objects when the Work is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
}

/// `Work.spec.workload`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadTemplate {
    /// Raw member objects (Karmada writes exactly one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Manifest>,
}

impl WorkloadTemplate {
    /// Every manifest, parsed.
    pub fn values(&self) -> Vec<Value> {
        self.manifests.iter().map(Manifest::to_value).collect()
    }
}

/// One raw member object of a Work, held as its compact JSON text (as Karmada holds a
/// `runtime.RawExtension`'s bytes).
///
/// Every controller's cache of Works holds one per Work: parsed into a `Value` tree a Deployment
/// costs ~20 KB, as text its JSON (1–3 KB).
pub type Manifest = JsonText;

/// A JSON document held as its compact text, parsed when read: a Work's manifests, the member
/// statuses a Work and a binding carry (a Deployment's reflected status is ~150 bytes of text
/// and ~900 as a `Value` tree, held once per Work and once per binding in every cache).
///
/// Read it with [`JsonText::to_value`] (parses) or [`JsonText::parse`] (only the fields a type
/// names). Two are equal when their JSON documents are (key order aside), as two `Value`s are.
#[derive(Clone)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The document `value`.
    pub fn new(value: &Value) -> Self {
        // A `Value` always serializes (its map keys are strings).
        Self(serde_json::value::to_raw_value(value).unwrap_or_else(|_| null()))
    }

    /// The document as compact JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The document, parsed.
    pub fn to_value(&self) -> Value {
        // Valid JSON no deeper than the decoder's limit (it was decoded to build this).
        serde_json::from_str(self.json()).unwrap_or(Value::Null)
    }

    /// The fields of the document `T` names.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.json())
    }
}

fn null() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).expect("`null` is JSON")
}

/// Any JSON document (Karmada's `runtime.RawExtension`): a schema that keeps every field.
impl schemars::JsonSchema for JsonText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonText".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> Self {
        Self::new(&value)
    }
}

impl From<&Value> for JsonText {
    fn from(value: &Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.json() == other.json() || self.to_value() == other.to_value()
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.json())
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    /// Written out as JSON text while it is read, with no `Value` tree in between, from any
    /// self-describing deserializer (a `RawValue` would need serde_json's own, and not behind
    /// serde's buffering of untagged or flattened content).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut text = Vec::with_capacity(1024);
        Transcode(&mut text).deserialize(deserializer)?;
        let text = String::from_utf8(text).map_err(de::Error::custom)?;
        RawValue::from_string(text)
            .map(Self)
            .map_err(de::Error::custom)
    }
}

/// Writes the value it deserializes as compact JSON (as `serde_json` would write the `Value`).
struct Transcode<'a>(&'a mut Vec<u8>);

impl Transcode<'_> {
    fn write<T: Serialize + ?Sized, E: de::Error>(self, value: &T) -> Result<(), E> {
        serde_json::to_writer(&mut *self.0, value).map_err(E::custom)
    }
}

impl<'de> DeserializeSeed<'de> for Transcode<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Transcode<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<(), E> {
        self.write(&v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        // As a `Value` holds it: a float that is not finite is `null`.
        self.write(&Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.write(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.0.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.push(b'[');
        let mut first = true;
        loop {
            let mark = self.0.len();
            if !first {
                self.0.push(b',');
            }
            if seq.next_element_seed(Transcode(&mut *self.0))?.is_none() {
                self.0.truncate(mark);
                break;
            }
            first = false;
        }
        self.0.push(b']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.push(b'{');
        let mut first = true;
        loop {
            let mark = self.0.len();
            if !first {
                self.0.push(b',');
            }
            if map.next_key_seed(Key(&mut *self.0))?.is_none() {
                self.0.truncate(mark);
                break;
            }
            self.0.push(b':');
            map.next_value_seed(Transcode(&mut *self.0))?;
            first = false;
        }
        self.0.push(b'}');
        Ok(())
    }
}

/// Writes a map key, which JSON requires to be a string.
struct Key<'a>(&'a mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        serde_json::to_writer(&mut *self.0, v).map_err(E::custom)
    }
}

/// `Work.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkStatus {
    /// `Applied`, `Dispatching`, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Status reflected from the member objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_statuses: Vec<ManifestStatus>,
}

/// One member object's reflected status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestStatus {
    /// Which manifest.
    #[serde(default)]
    pub identifier: ResourceIdentifier,
    /// What the interpreter reflected (absent: not collected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<JsonText>,
    /// `Healthy`, `Unhealthy` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub health: String,
}

/// Identifies a manifest of a Work.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceIdentifier {
    /// Index in `spec.workload.manifests`.
    #[serde(default)]
    pub ordinal: i32,
    /// API group (`json:"group,omitempty"` in Karmada).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Resource (plural); Karmada leaves it empty.
    #[serde(default)]
    pub resource: String,
    /// Namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
}

impl Work {
    /// Whether `spec.suspendDispatching` is true.
    pub fn is_suspended(&self) -> bool {
        self.spec.suspend_dispatching == Some(true)
    }

    /// Whether the Work is being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// The condition of `type_`, if any.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
    }

    /// Karmada's `IsResourceApplied`: the `Applied` condition is True.
    pub fn is_applied(&self) -> bool {
        self.condition(WORK_APPLIED)
            .is_some_and(|c| c.status == "True")
    }
}
