//! Messages whose JSON form is not an object: `Time` and `MicroTime` (RFC 3339 strings),
//! `Quantity` (its string), `IntOrString` (number or string), `FieldsV1` and `RawExtension`
//! (embedded JSON), and `ExtraValue` (a bare string list).
//!
//! The formats follow apimachinery's `MarshalJSON` methods (pkg/apis/meta/v1/time.go,
//! micro_time.go, pkg/api/resource/quantity.go, pkg/util/intstr/intstr.go, pkg/runtime/types.go).

use jiff::Timestamp;
use k8s_pb::api::{authentication, authorization};
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{FieldsV1, MicroTime, Time};
use k8s_pb::apimachinery::pkg::runtime::RawExtension;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use super::ProtobufError;
use super::json::Message;

/// A timestamp in UTC, with microseconds for `MicroTime`, as Go prints `time.RFC3339` and
/// `RFC3339Micro` after `.UTC()`. Nanoseconds outside 0..1e9 carry into seconds like `time.Unix`.
fn rfc3339(seconds: i64, nanos: i32, micros: bool) -> Result<Value, ProtobufError> {
    let invalid = || ProtobufError::InvalidTime { seconds, nanos };
    let nanos = i64::from(nanos);
    let whole = seconds
        .checked_add(nanos.div_euclid(1_000_000_000))
        .ok_or_else(invalid)?;
    let ts = Timestamp::from_second(whole).map_err(|_| invalid())?;
    let text = ts.strftime("%Y-%m-%dT%H:%M:%S");
    Ok(Value::String(if micros {
        format!("{text}.{:06}Z", nanos.rem_euclid(1_000_000_000) / 1000)
    } else {
        format!("{text}Z")
    }))
}

/// Go decodes an empty `Time` message as the zero time, which JSON writes as `null` and we omit.
impl Message for Time {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        if self.is_empty() {
            return Ok(Value::Null);
        }
        // metav1.Time drops nanoseconds when decoding protobuf, and its JSON has whole seconds.
        rfc3339(self.seconds.unwrap_or(0), 0, false)
    }
    fn is_empty(&self) -> bool {
        self.seconds.is_none() && self.nanos.is_none()
    }
}

impl Message for MicroTime {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        if self.is_empty() {
            return Ok(Value::Null);
        }
        rfc3339(self.seconds.unwrap_or(0), self.nanos.unwrap_or(0), true)
    }
    fn is_empty(&self) -> bool {
        self.seconds.is_none() && self.nanos.is_none()
    }
}

/// The wire carries the canonical string; the zero Quantity prints as "0".
impl Message for Quantity {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        Ok(Value::String(match self.string.as_deref() {
            None | Some("") => "0".to_owned(),
            Some(s) => s.to_owned(),
        }))
    }
}

/// `type` 0 is Int, 1 is String (intstr.Type).
impl Message for IntOrString {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        Ok(match self.r#type.unwrap_or(0) {
            1 => Value::String(self.str_val.clone().unwrap_or_default()),
            _ => Value::from(self.int_val.unwrap_or(0)),
        })
    }
}

fn embedded_json(raw: Option<&[u8]>, field: &'static str) -> Result<Value, ProtobufError> {
    match raw {
        None | Some([]) => Ok(Value::Null),
        Some(bytes) => serde_json::from_slice(bytes)
            .map_err(|source| ProtobufError::EmbeddedJson { field, source }),
    }
}

impl Message for FieldsV1 {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        embedded_json(self.raw.as_deref(), "FieldsV1")
    }
}

/// Embedded objects must be JSON. A nested protobuf envelope is refused rather than decoded
/// recursively: no supported kind embeds one, and recursion would let a body choose our stack
/// depth.
impl Message for RawExtension {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        embedded_json(self.raw.as_deref(), "RawExtension")
    }
}

impl Message for authentication::v1::ExtraValue {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        Ok(Value::from(self.items.clone()))
    }
}

impl Message for k8s_pb::api::certificates::v1::ExtraValue {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        Ok(Value::from(self.items.clone()))
    }
}

impl Message for authorization::v1::ExtraValue {
    fn to_json(&self) -> Result<Value, ProtobufError> {
        Ok(Value::from(self.items.clone()))
    }
}
