//! Decoding a body into a `serde_json::Value` while noting duplicate keys (serde_json keeps the
//! last one silently) and, given a schema, undeclared fields — in document order, as Go's strict
//! decoder meets them. Undeclared fields are left out of the value.
//!
//! One `DeserializeSeed` serves JSON and YAML: the seed carries the field path and the schema
//! of the value it is about to read.

use std::fmt::{self, Write as _};

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::Finding;
use super::schema::{self, Field, JsonKind, TypeMismatch};

/// Decodes JSON. With a schema, unknown fields are reported (and dropped) interleaved with
/// duplicates, in document order, like kube-apiserver's typed decoding. A field that is both
/// unknown and repeated is reported once, as unknown.
pub fn decode_json(
    bytes: &[u8],
    schema: Option<&Value>,
) -> Result<(Value, Vec<Finding>), serde_json::Error> {
    decode_json_checked(bytes, schema).map(|(value, findings, _)| (value, findings))
}

/// [`decode_json`], also returning the first value whose type its field cannot hold (what
/// kube-apiserver's typed decoding refuses whatever `fieldValidation` says).
#[allow(clippy::type_complexity)]
pub fn decode_json_checked(
    bytes: &[u8],
    schema: Option<&Value>,
) -> Result<(Value, Vec<Finding>, Option<TypeMismatch>), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut ctx = Ctx::default();
    let value = ValueSeed {
        ctx: &mut ctx,
        schema,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, ctx.findings, ctx.mismatch))
}

/// Decodes one YAML document. Duplicates come first, then unknown fields in sorted order: what
/// kube-apiserver reports for YAML, which it converts to JSON before decoding.
pub fn decode_yaml(
    text: &str,
    schema: Option<&Value>,
) -> Result<(Value, Vec<Finding>), yaml_serde::Error> {
    let mut ctx = Ctx::default();
    let de = yaml_serde::Deserializer::from_str(text);
    let mut value = ValueSeed {
        ctx: &mut ctx,
        schema: None,
    }
    .deserialize(de)?;
    let mut findings = ctx.findings;
    if let Some(schema) = schema {
        findings.extend(schema::strip_unknown(&mut value, schema));
    }
    Ok((value, findings))
}

#[derive(Default)]
struct Ctx {
    path: String,
    /// The path as Go's decoder names it (struct fields only), for type mismatches.
    go_path: String,
    findings: Vec<Finding>,
    mismatch: Option<TypeMismatch>,
}

impl Ctx {
    /// Notes a value of `kind` where `schema` applies, if it is the first that does not fit.
    fn check(&mut self, schema: Option<&Value>, kind: JsonKind) {
        if self.mismatch.is_none()
            && let Some(schema) = schema
        {
            self.mismatch = schema::mismatch_at(schema, kind, &self.go_path);
        }
    }
}

struct ValueSeed<'c, 's> {
    ctx: &'c mut Ctx,
    schema: Option<&'s Value>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::Bool);
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::Integer);
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::Integer);
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::Float(v));
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::String);
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        self.ctx.check(self.schema, JsonKind::String);
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.ctx.check(self.schema, JsonKind::Array);
        let items = self.schema.and_then(schema::items);
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            let base = self.ctx.path.len();
            // Written in place: a `format!` per item allocated on every decode.
            let _ = write!(self.ctx.path, "[{}]", out.len());
            let next = seq.next_element_seed(ValueSeed {
                ctx: &mut *self.ctx,
                schema: items,
            });
            self.ctx.path.truncate(base);
            match next? {
                Some(value) => out.push(value),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.ctx.check(self.schema, JsonKind::Object);
        let mut out = Map::new();
        // Undeclared keys are not kept; remember them so a repeat is not reported again.
        let mut unknown: Vec<String> = Vec::new();
        let lookup = self.schema.map(schema::Lookup::new);
        while let Some(key) = map.next_key::<String>()? {
            let base = self.ctx.path.len();
            if base > 0 {
                self.ctx.path.push('.');
            }
            self.ctx.path.push_str(&key);
            let found = match &lookup {
                Some(lookup) => lookup.field(&key),
                None => Field::Known(None),
            };
            match found {
                Field::Unknown => {
                    if !unknown.contains(&key) {
                        self.ctx
                            .findings
                            .push(Finding::unknown(self.ctx.path.as_str()));
                        unknown.push(key);
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Field::Known(child) => {
                    // A repeat is reported before what its value holds: where the findings
                    // stood when its value began.
                    let before = self.ctx.findings.len();
                    let go_base = self.ctx.go_path.len();
                    if let (Some(lookup), Some(child)) = (&lookup, child)
                        && !lookup.is_entry(child)
                    {
                        if go_base > 0 {
                            self.ctx.go_path.push('.');
                        }
                        self.ctx.go_path.push_str(&key);
                    }
                    let value = map.next_value_seed(ValueSeed {
                        ctx: &mut *self.ctx,
                        schema: child,
                    })?;
                    self.ctx.go_path.truncate(go_base);
                    // The last of duplicate keys wins, in the first one's place (as in Go).
                    if out.insert(key, value).is_some() {
                        self.ctx
                            .findings
                            .insert(before, Finding::duplicate(self.ctx.path.as_str()));
                    }
                }
            }
            self.ctx.path.truncate(base);
        }
        Ok(Value::Object(out))
    }
}
