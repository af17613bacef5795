//! Parsing of quantity strings, following upstream's `parseQuantityString` (token rules),
//! `quantitySuffixer.interpret` (suffix table) and `ParseQuantity` (precision: anything finer
//! than 1n is rounded up, away from zero; BinarySI values are capped at 2^63-1).
//!
//! The arithmetic runs on a decimal digit vector, so any input length is exact until the final
//! conversion to an `i128` mantissa.

use super::{MAX_DIGITS, Quantity, QuantityError, QuantityFormat};

/// What the suffix says: multiply by `base^exponent` and keep `format`.
struct Suffix {
    binary: bool,
    exponent: i64,
    format: QuantityFormat,
}

fn interpret_suffix(suffix: &str) -> Option<Suffix> {
    let decimal = |exponent| {
        Some(Suffix {
            binary: false,
            exponent,
            format: QuantityFormat::DecimalSI,
        })
    };
    let binary = |exponent| {
        Some(Suffix {
            binary: true,
            exponent,
            format: QuantityFormat::BinarySI,
        })
    };
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E']).filter(|r| !r.is_empty())?;
            let exponent = rest.parse::<i64>().ok()?;
            Some(Suffix {
                binary: false,
                exponent,
                format: QuantityFormat::DecimalExponent,
            })
        }
    }
}

/// The parts of a quantity string: sign, integer digits (leading zeros dropped), fraction digits
/// and suffix. Mirrors upstream's scanner, including its leniencies (`"-"`, `"."` and `"+"` read
/// as zero).
fn split(input: &str) -> Result<(bool, &str, &str, &str), QuantityError> {
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut negative = false;
    match bytes.first() {
        Some(b'-') => {
            negative = true;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while pos < bytes.len() && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos == bytes.len() {
        return Ok((negative, "", "", ""));
    }
    let digits_end = |from: usize| {
        (from..bytes.len())
            .find(|&i| !bytes[i].is_ascii_digit())
            .unwrap_or(bytes.len())
    };
    let num_end = digits_end(pos);
    let num = &input[pos..num_end];
    pos = num_end;
    let mut denom = "";
    if pos < bytes.len() && bytes[pos] == b'.' {
        let denom_end = digits_end(pos + 1);
        denom = &input[pos + 1..denom_end];
        pos = denom_end;
    }
    let suffix_start = pos;
    while pos < bytes.len() && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < bytes.len() && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    if digits_end(pos) != bytes.len() {
        return Err(QuantityError::Format);
    }
    Ok((negative, num, denom, &input[suffix_start..]))
}

/// Parses a quantity (upstream's `ParseQuantity`).
pub(super) fn parse(input: &str) -> Result<Quantity, QuantityError> {
    if input.is_empty() {
        return Err(QuantityError::Format);
    }
    let (negative, num, denom, suffix) = split(input)?;
    let suffix = interpret_suffix(suffix).ok_or(QuantityError::Suffix)?;
    let mut digits: Vec<u8> = num.bytes().chain(denom.bytes()).map(|b| b - b'0').collect();
    let denom_len = i64::try_from(denom.len()).map_err(|_| QuantityError::Numeric)?;
    let mut exponent = if suffix.binary { 0 } else { suffix.exponent } - denom_len;
    if suffix.binary {
        for _ in 0..suffix.exponent {
            double(&mut digits);
        }
    }
    // Round up (away from zero) to nano precision.
    if exponent < -9 {
        let drop = usize::try_from(-9 - exponent)
            .unwrap_or(usize::MAX)
            .min(digits.len());
        let inexact = digits[digits.len() - drop..].iter().any(|&d| d != 0);
        digits.truncate(digits.len() - drop);
        if inexact {
            increment(&mut digits);
        }
        exponent = -9;
    }
    while digits.last() == Some(&0) {
        digits.pop();
        exponent += 1;
    }
    let first_nonzero = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    digits.drain(..first_nonzero);
    let mut format = suffix.format;
    if digits.is_empty() {
        let format = if input == "0" {
            QuantityFormat::DecimalSI
        } else {
            format
        };
        return Ok(Quantity::zero_with(format));
    }
    if digits.len() > MAX_DIGITS {
        return Err(QuantityError::TooManyDigits);
    }
    let exponent = i32::try_from(exponent).map_err(|_| QuantityError::Numeric)?;
    let magnitude = digits
        .iter()
        .fold(0i128, |acc, &d| acc * 10 + i128::from(d));
    let mut quantity = Quantity::from_parts(
        if negative { -magnitude } else { magnitude },
        exponent,
        format,
    );
    if format == QuantityFormat::BinarySI {
        let max = Quantity::from_parts(i128::from(i64::MAX), 0, format);
        if quantity.abs_cmp(&max).is_gt() {
            quantity = if negative { -max } else { max };
        }
        if quantity.exponent < 0
            && quantity
                .abs_cmp(&Quantity::from_parts(1, 0, format))
                .is_lt()
        {
            format = QuantityFormat::DecimalSI;
            quantity.format = format;
        }
    }
    Ok(quantity)
}

/// Multiplies a big-endian decimal digit vector by two.
fn double(digits: &mut Vec<u8>) {
    let mut carry = 0;
    for d in digits.iter_mut().rev() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.insert(0, carry);
    }
}

/// Adds one to a big-endian decimal digit vector.
fn increment(digits: &mut Vec<u8>) {
    for d in digits.iter_mut().rev() {
        if *d < 9 {
            *d += 1;
            return;
        }
        *d = 0;
    }
    digits.insert(0, 1);
}
