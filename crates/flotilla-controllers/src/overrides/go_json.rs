//! The `applied-(cluster-)overrides` annotation as Karmada writes it: Go's `encoding/json` over
//! Karmada's types. Struct fields come out in declaration order and with the same omissions (the
//! API types mirror Go's tags). The JSON values a policy holds (plaintext and fieldOverrider
//! `value`s) come out as the API server hands them to Karmada: object keys sorted, numbers as
//! int64 when integral and in range, else float64 in Go's notation. Strings escape `<`, `>`, `&`,
//! U+2028 and U+2029 as `\uXXXX`, as Go does.
//!
//! Also the JSON documents fieldOverrider rewrites ([`compact`]).

use std::io;

use flotilla_api::karmada::{OverridePolicyShadow, Overriders};
use serde::Serialize;
use serde_json::{Value, ser::Formatter};

use super::ops::sorted;

/// The annotation value for `list` (in the given order).
pub fn shadows(list: &[OverridePolicyShadow]) -> String {
    let mut list = list.to_vec();
    for shadow in &mut list {
        normalize(&mut shadow.overriders);
    }
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    // Plain data into memory: serialization has no way to fail.
    if list.serialize(&mut serializer).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

fn normalize(overriders: &mut Overriders) {
    for plaintext in &mut overriders.plaintext {
        plaintext.value = plaintext.value.take().map(sorted);
    }
    for field in &mut overriders.field_overrider {
        for operation in field.json.iter_mut().chain(field.yaml.iter_mut()) {
            operation.value = operation.value.take().map(sorted);
        }
    }
}

/// `value` as compact JSON with Go's string escaping and serde's number notation: a document
/// Karmada's JSON patch library rewrote (it keeps the document's numbers as they were written,
/// which serde reads back the same for ordinary notation).
pub fn compact(value: &Value) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoEscaping);
    // Plain data into memory: serialization has no way to fail.
    if value.serialize(&mut serializer).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `fragment` of a string with `<`, `>`, `&`, U+2028 and U+2029 escaped, as Go does.
fn write_go_escaped<W: ?Sized + io::Write>(writer: &mut W, fragment: &str) -> io::Result<()> {
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        let escaped = match c {
            '<' => "\\u003c",
            '>' => "\\u003e",
            '&' => "\\u0026",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => continue,
        };
        writer.write_all(&fragment.as_bytes()[start..i])?;
        writer.write_all(escaped.as_bytes())?;
        start = i + c.len_utf8();
    }
    writer.write_all(&fragment.as_bytes()[start..])
}

/// Compact JSON with Go's string escaping only.
struct GoEscaping;

impl Formatter for GoEscaping {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_go_escaped(writer, fragment)
    }
}

/// Compact JSON with Go's string escaping and number notation.
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_go_escaped(writer, fragment)
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        if i64::try_from(value).is_ok() {
            write!(writer, "{value}")
        } else {
            // Beyond int64 the API server holds the number as a float64.
            writer.write_all(go_float(value as f64).as_bytes())
        }
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(go_float(value).as_bytes())
    }
}

/// A float64 as `encoding/json` writes it: shortest digits, plain notation for magnitudes in
/// [1e-6, 1e21), exponent notation (`1e+21`, `1.5e-7`) outside it.
pub fn go_float(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        let formatted = format!("{value:e}");
        match formatted.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                format!("{mantissa}e+{exponent}")
            }
            _ => formatted,
        }
    } else {
        format!("{value}")
    }
}
