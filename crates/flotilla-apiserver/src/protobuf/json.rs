//! The protobuf → JSON conversion machinery: the [`Message`] trait every supported k8s-pb message
//! implements, the [`Field`] trait that turns one struct field into an optional JSON value
//! according to its Go encoding [`Mode`], and the `message!` macro that writes a [`Message`] impl
//! from a table of fields.
//!
//! Knows nothing about particular Kubernetes kinds; the tables live in the per-group modules.

use base64::Engine as _;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::ProtobufError;

/// A k8s-pb message that has a JSON form.
pub(crate) trait Message {
    /// The JSON the Kubernetes JSON API carries for this value.
    fn to_json(&self) -> Result<Value, ProtobufError>;

    /// Whether an `omitempty` field holding this value is left out. Only the scalar-like
    /// wrappers (`Time`, `MicroTime`) are ever empty: Go's `encoding/json` never omits structs.
    fn is_empty(&self) -> bool {
        false
    }
}

/// How the Go struct tag of a field says it is written to JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `json:"x,omitempty"` on a non-pointer: zero values are left out.
    OmitEmpty,
    /// `json:"x"` on a non-pointer: always written, a missing value as its zero. Go writes an
    /// absent list or map as `null`; we write `[]`/`{}`, which every reader treats the same and
    /// which typed clients (k8s-openapi's required `Vec`s) accept.
    Always,
    /// A pointer field: written whenever the sender set it, zero or not.
    Pointer,
    /// `json:",inline"`: the message's own fields are merged into the parent object.
    Inline,
}

/// One field of a k8s-pb struct, as a JSON value (`None`: the key is left out).
pub(crate) trait Field {
    fn field(&self, mode: Mode) -> Result<Option<Value>, ProtobufError>;
}

/// A value that can sit in a repeated field or a map.
pub(crate) trait Element {
    fn element(&self) -> Result<Value, ProtobufError>;
}

/// Proto2 scalars: `Some(zero)` is what Go writes for every unset non-pointer field.
pub(crate) trait Scalar: Sized {
    fn is_zero(&self) -> bool;
    fn zero() -> Self;
    fn scalar(&self) -> Value;
}

impl Scalar for String {
    fn is_zero(&self) -> bool {
        self.is_empty()
    }
    fn zero() -> Self {
        String::new()
    }
    fn scalar(&self) -> Value {
        Value::String(self.clone())
    }
}

impl Scalar for bool {
    fn is_zero(&self) -> bool {
        !*self
    }
    fn zero() -> Self {
        false
    }
    fn scalar(&self) -> Value {
        Value::Bool(*self)
    }
}

impl Scalar for i32 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
    fn zero() -> Self {
        0
    }
    fn scalar(&self) -> Value {
        Value::from(*self)
    }
}

impl Scalar for i64 {
    fn is_zero(&self) -> bool {
        *self == 0
    }
    fn zero() -> Self {
        0
    }
    fn scalar(&self) -> Value {
        Value::from(*self)
    }
}

impl Scalar for f64 {
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
    fn zero() -> Self {
        0.0
    }
    fn scalar(&self) -> Value {
        // Non-finite numbers have no JSON form; Go's encoder refuses them as well.
        serde_json::Number::from_f64(*self).map_or(Value::Null, Value::Number)
    }
}

/// `bytes` fields are base64 in JSON, like Go's `[]byte`.
impl Scalar for Vec<u8> {
    fn is_zero(&self) -> bool {
        self.is_empty()
    }
    fn zero() -> Self {
        Vec::new()
    }
    fn scalar(&self) -> Value {
        Value::String(base64::engine::general_purpose::STANDARD.encode(self))
    }
}

fn scalar_field<S: Scalar>(value: &Option<S>, mode: Mode) -> Option<Value> {
    match (value, mode) {
        (Some(v), Mode::Pointer | Mode::Always) => Some(v.scalar()),
        (None, Mode::Always) => Some(S::zero().scalar()),
        (Some(v), Mode::OmitEmpty | Mode::Inline) if !v.is_zero() => Some(v.scalar()),
        _ => None,
    }
}

/// Implements [`Field`] and [`Element`] for concrete scalar types. Concrete impls (rather than
/// one over `S: Scalar`) keep them coherent with the blanket impls over [`Message`].
macro_rules! scalar_impls {
    ($($t:ty),*) => {$(
        impl Field for Option<$t> {
            fn field(&self, mode: Mode) -> Result<Option<Value>, ProtobufError> {
                Ok(scalar_field(self, mode))
            }
        }
        impl Element for $t {
            fn element(&self) -> Result<Value, ProtobufError> {
                Ok(self.scalar())
            }
        }
    )*};
}
scalar_impls!(String, bool, i32, i64, f64, Vec<u8>);

/// Message-typed fields (always `Option` in prost) are written when the sender wrote them:
/// Go writes every non-pointer struct, so this matches `encoding/json`, which never omits one.
impl<M: Message> Field for Option<M> {
    fn field(&self, mode: Mode) -> Result<Option<Value>, ProtobufError> {
        match self {
            Some(m) if mode == Mode::Pointer || !m.is_empty() => m.to_json().map(Some),
            _ => Ok(None),
        }
    }
}

impl<M: Message> Element for M {
    fn element(&self) -> Result<Value, ProtobufError> {
        self.to_json()
    }
}

impl<E: Element> Field for Vec<E> {
    fn field(&self, mode: Mode) -> Result<Option<Value>, ProtobufError> {
        if self.is_empty() && mode != Mode::Always {
            return Ok(None);
        }
        let items = self
            .iter()
            .map(Element::element)
            .collect::<Result<_, _>>()?;
        Ok(Some(Value::Array(items)))
    }
}

impl<E: Element> Field for BTreeMap<String, E> {
    fn field(&self, mode: Mode) -> Result<Option<Value>, ProtobufError> {
        if self.is_empty() && mode != Mode::Always {
            return Ok(None);
        }
        let mut out = Map::new();
        for (k, v) in self {
            out.insert(k.clone(), v.element()?);
        }
        Ok(Some(Value::Object(out)))
    }
}

/// Adds one converted field to `out`; inline fields merge their object into it.
pub(crate) fn put(out: &mut Map<String, Value>, key: &str, value: Option<Value>, mode: Mode) {
    match (value, mode) {
        (Some(Value::Object(inner)), Mode::Inline) => out.extend(inner),
        (Some(v), _) => {
            out.insert(key.to_owned(), v);
        }
        (None, _) => {}
    }
}

/// Writes a [`Message`] impl for a k8s-pb struct from its field table, one line per field:
/// `opt`/`req`/`ptr` (see [`Mode`]) with the Rust field and its JSON key, `inline` with the
/// field alone, or `skip` for a field JSON never carries. The destructuring `let Self { .. }`
/// has no `..`, so a field missing from the table is a compile error.
macro_rules! message {
    ($ty:ty { $($mode:ident $field:ident $($key:literal)?,)* }) => {
        impl $crate::protobuf::json::Message for $ty {
            fn to_json(&self) -> ::std::result::Result<::serde_json::Value, $crate::protobuf::ProtobufError> {
                #[allow(unused_imports)]
                use $crate::protobuf::json::Field as _;
                let Self { $($field),* } = self;
                let mut out = ::serde_json::Map::new();
                $( $crate::protobuf::json::message!(@field out $mode $field $($key)?); )*
                Ok(::serde_json::Value::Object(out))
            }
        }
    };
    (@field $out:ident skip $field:ident) => { let _ = $field; };
    (@field $out:ident inline $field:ident) => {
        $crate::protobuf::json::put(&mut $out, "", $field.field($crate::protobuf::json::Mode::Inline)?, $crate::protobuf::json::Mode::Inline)
    };
    (@field $out:ident opt $field:ident $key:literal) => {
        $crate::protobuf::json::put(&mut $out, $key, $field.field($crate::protobuf::json::Mode::OmitEmpty)?, $crate::protobuf::json::Mode::OmitEmpty)
    };
    (@field $out:ident req $field:ident $key:literal) => {
        $crate::protobuf::json::put(&mut $out, $key, $field.field($crate::protobuf::json::Mode::Always)?, $crate::protobuf::json::Mode::Always)
    };
    (@field $out:ident ptr $field:ident $key:literal) => {
        $crate::protobuf::json::put(&mut $out, $key, $field.field($crate::protobuf::json::Mode::Pointer)?, $crate::protobuf::json::Mode::Pointer)
    };
}
pub(crate) use message;
