//! Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`, `128974848`).
//!
//! Provenance: k8s.io/apimachinery v0.33 `pkg/api/resource` — `quantity.go` (`ParseQuantity`,
//! `CanonicalizeBytes`, `Cmp`, `Add`, `Sub`, `Value`, `MilliValue`, `ScaledValue`), `suffix.go`
//! (suffix table), `amount.go` (canonical decimal form), `math.go` (rounding of scaled values).
//!
//! A quantity is `mantissa × 10^exponent` with an `i128` mantissa, normalised (no trailing zeros),
//! plus the [`QuantityFormat`] it was written in, which picks its canonical spelling. Upstream
//! falls back to arbitrary precision; here a value needs at most 38 significant digits at nano
//! precision (parse fails beyond, arithmetic returns `None`). Other differences: `Display` is
//! always canonical (upstream's `String()` echoes a few non-canonical inputs such as `0100m`
//! verbatim), negative `as_i64`/`as_milli` round away from zero (upstream's int64 path), and
//! DecimalSI values above the `E` suffix print as a larger number before `E` (upstream prints no
//! suffix).

mod parse;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Most significant digits a quantity holds (what fits an `i128`).
const MAX_DIGITS: usize = 38;

/// How a quantity is written, which decides its canonical spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuantityFormat {
    /// Powers of ten with an exponent: `12e6`.
    DecimalExponent,
    /// Powers of two: `12Mi` (12 × 2^20).
    BinarySI,
    /// Powers of ten with SI suffixes: `12M` (12 × 10^6).
    DecimalSI,
}

/// Why a string is not a quantity. `Display` gives upstream's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The string does not have the shape of a quantity.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )]
    Format,
    /// The numeric part or exponent is out of range.
    #[error("unable to parse numeric part of quantity")]
    Numeric,
    /// The suffix is not one of the known ones.
    #[error("unable to parse quantity's suffix")]
    Suffix,
    /// More than 38 significant digits at nano precision (upstream has no such limit).
    #[error("quantity has more than 38 significant digits")]
    TooManyDigits,
}

/// A Kubernetes `resource.Quantity`. Equality, ordering and hashing are by numeric value only,
/// like upstream's `Cmp`/`Equal` (`1Ki == 1024`).
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    format: QuantityFormat,
}

impl Quantity {
    /// Zero, written in `format`.
    pub fn zero_with(format: QuantityFormat) -> Self {
        Self {
            mantissa: 0,
            exponent: 0,
            format,
        }
    }

    /// `value` (upstream's `NewQuantity`).
    pub fn from_i64(value: i64, format: QuantityFormat) -> Self {
        Self::from_parts(value.into(), 0, format)
    }

    /// `value / 1000` (upstream's `NewMilliQuantity`).
    pub fn from_milli(value: i64, format: QuantityFormat) -> Self {
        Self::from_parts(value.into(), -3, format)
    }

    /// `value × 10^scale` (upstream's `NewScaledQuantity`); finer than nano is rounded up.
    pub fn from_scaled(value: i64, scale: i32, format: QuantityFormat) -> Self {
        if scale >= -9 {
            return Self::from_parts(value.into(), scale, format);
        }
        let divisor = 10i128.checked_pow((-9 - i64::from(scale)).min(60) as u32);
        let rounded = match divisor {
            Some(divisor) => div_away_from_zero(value.into(), divisor),
            None => i128::from(value.signum()),
        };
        Self::from_parts(rounded, -9, format)
    }

    /// `mantissa × 10^exponent`, normalised.
    fn from_parts(mut mantissa: i128, mut exponent: i32, format: QuantityFormat) -> Self {
        if mantissa == 0 {
            return Self::zero_with(format);
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        Self {
            mantissa,
            exponent,
            format,
        }
    }

    /// Parses a quantity string.
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        parse::parse(input)
    }

    /// The format that decides the canonical spelling.
    pub fn format(&self) -> QuantityFormat {
        self.format
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        self.mantissa.signum() as i32
    }

    /// `self + other`, or `None` if the exact sum needs more than 38 digits. A zero `self` takes
    /// `other`'s format, as upstream.
    pub fn checked_add(&self, other: &Self) -> Option<Self> {
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        if other.is_zero() {
            return Some(Self { format, ..*self });
        }
        if self.is_zero() {
            return Some(Self { format, ..*other });
        }
        let exponent = self.exponent.min(other.exponent);
        let a = scale_up(self.mantissa, self.exponent - exponent)?;
        let b = scale_up(other.mantissa, other.exponent - exponent)?;
        let sum = a.checked_add(b).filter(|s| *s != i128::MIN)?;
        Some(Self::from_parts(sum, exponent, format))
    }

    /// `self - other`, or `None` on overflow (see [`Quantity::checked_add`]).
    pub fn checked_sub(&self, other: &Self) -> Option<Self> {
        self.checked_add(&-*other)
    }

    /// The value rounded up to an integer (upstream's `Value()`), or `None` if it does not fit an
    /// `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        self.scaled_value(0)
    }

    /// The value in thousandths, rounded up (upstream's `MilliValue()`), or `None` if it does not
    /// fit an `i64`.
    pub fn as_milli(&self) -> Option<i64> {
        self.scaled_value(-3)
    }

    /// `self / 10^scale` rounded up, away from zero (upstream's `ScaledValue`), or `None` if it
    /// does not fit an `i64`.
    pub fn scaled_value(&self, scale: i32) -> Option<i64> {
        if self.is_zero() {
            return Some(0);
        }
        let shift = i64::from(self.exponent) - i64::from(scale);
        let value = if shift >= 0 {
            scale_up(self.mantissa, i32::try_from(shift).ok()?)?
        } else {
            match u32::try_from(-shift)
                .ok()
                .and_then(|s| 10i128.checked_pow(s))
            {
                Some(divisor) => div_away_from_zero(self.mantissa, divisor),
                None => self.mantissa.signum(),
            }
        };
        i64::try_from(value).ok()
    }

    /// The value as an approximate `f64`.
    pub fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// Compares magnitudes, ignoring signs.
    fn abs_cmp(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let (a, b) = (
            self.mantissa.unsigned_abs().to_string(),
            other.mantissa.unsigned_abs().to_string(),
        );
        // Same count of integer digits, then digit by digit (no trailing zeros, so a prefix is
        // smaller).
        let magnitude = |digits: &str, exponent: i32| i64::from(exponent) + digits.len() as i64;
        magnitude(&a, self.exponent)
            .cmp(&magnitude(&b, other.exponent))
            .then_with(|| a.cmp(&b))
    }

    /// The canonical number and suffix (upstream's `CanonicalizeBytes`).
    fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_owned();
        }
        let sign = if self.mantissa < 0 { "-" } else { "" };
        let one_kibi = Self::from_parts(1024, 0, self.format);
        let binary = self.format == QuantityFormat::BinarySI
            && self.abs_cmp(&one_kibi).is_ge()
            && self.exponent >= 0;
        if binary && let Some(value) = scale_up(self.mantissa.abs(), self.exponent) {
            return format!("{sign}{}", base1024(value));
        }
        let format = match self.format {
            QuantityFormat::BinarySI => QuantityFormat::DecimalSI,
            other => other,
        };
        let digits = self.mantissa.unsigned_abs().to_string();
        let mut exponent = self.exponent;
        let mut zeros = exponent.rem_euclid(3) as usize;
        exponent -= zeros as i32;
        if format == QuantityFormat::DecimalSI && exponent > 18 {
            if exponent - 18 > 64 {
                return format!("{sign}{digits}{}e{exponent}", "0".repeat(zeros));
            }
            zeros += (exponent - 18) as usize;
            exponent = 18;
        }
        let suffix = match (format, exponent) {
            (QuantityFormat::DecimalExponent, 0) => String::new(),
            (QuantityFormat::DecimalExponent, e) => format!("e{e}"),
            (_, e) => decimal_si_suffix(e).to_owned(),
        };
        format!("{sign}{digits}{}{suffix}", "0".repeat(zeros))
    }
}

/// The BinarySI spelling of a positive integer: largest power-of-1024 suffix that divides it.
fn base1024(mut value: i128) -> String {
    const SUFFIXES: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut power = 0;
    while power < SUFFIXES.len() - 1 && value % 1024 == 0 {
        value /= 1024;
        power += 1;
    }
    format!("{value}{}", SUFFIXES[power])
}

fn decimal_si_suffix(exponent: i32) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    }
}

/// `mantissa × 10^shift` for `shift >= 0`, or `None` on overflow.
fn scale_up(mantissa: i128, shift: i32) -> Option<i128> {
    mantissa.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)
}

/// `value / divisor` rounded away from zero.
fn div_away_from_zero(value: i128, divisor: i128) -> i128 {
    let quotient = value / divisor;
    if value % divisor == 0 {
        quotient
    } else {
        quotient + value.signum()
    }
}

impl std::ops::Neg for Quantity {
    type Output = Self;

    /// The negated value, same format.
    fn neg(self) -> Self {
        Self {
            mantissa: -self.mantissa,
            ..self
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.mantissa == other.mantissa && self.exponent == other.exponent
    }
}

impl Eq for Quantity {}

impl Hash for Quantity {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.mantissa.hash(state);
        self.exponent.hash(state);
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.mantissa
            .signum()
            .cmp(&other.mantissa.signum())
            .then_with(|| {
                let magnitude = self.abs_cmp(other);
                if self.mantissa < 0 {
                    magnitude.reverse()
                } else {
                    magnitude
                }
            })
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Default for Quantity {
    fn default() -> Self {
        Self::zero_with(QuantityFormat::DecimalSI)
    }
}

impl fmt::Display for Quantity {
    /// The canonical form: no fractional digits, the largest suffix that keeps the value exact.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    type Error = QuantityError;

    fn try_from(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Self, Self::Error> {
        Self::parse(q.0.trim())
    }
}

impl From<Quantity> for k8s_openapi::apimachinery::pkg::api::resource::Quantity {
    fn from(q: Quantity) -> Self {
        Self(q.to_string())
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.canonical())
    }
}

impl<'de> Deserialize<'de> for Quantity {
    /// Accepts a string or a JSON number, as upstream's `UnmarshalJSON` does.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QuantityVisitor)
    }
}

struct QuantityVisitor;

impl Visitor<'_> for QuantityVisitor {
    type Value = Quantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a quantity string such as \"100m\" or a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
        Quantity::parse(v.trim()).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
        Ok(Quantity::from_i64(v, QuantityFormat::DecimalSI))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
        Ok(Quantity::from_parts(v.into(), 0, QuantityFormat::DecimalSI))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
        Quantity::parse(&v.to_string()).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests;

/// The schema of a quantity: a number or a string (`x-kubernetes-int-or-string`), as
/// k8s-openapi describes its own `Quantity`.
impl schemars::JsonSchema for Quantity {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <k8s_openapi::apimachinery::pkg::api::resource::Quantity as schemars::JsonSchema>::schema_name()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <k8s_openapi::apimachinery::pkg::api::resource::Quantity as schemars::JsonSchema>::json_schema(generator)
    }
}
