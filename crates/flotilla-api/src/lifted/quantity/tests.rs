use proptest::prelude::*;

use super::*;
use QuantityFormat::{BinarySI, DecimalExponent, DecimalSI};

fn q(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn parts(mantissa: i128, exponent: i32, format: QuantityFormat) -> Quantity {
    Quantity::from_parts(mantissa, exponent, format)
}

/// Upstream's `TestQuantityParse` table: input, value, format.
#[test]
fn parse_values_and_formats_match_upstream() {
    let table: &[(&str, i128, i32, QuantityFormat)] = &[
        ("0", 0, 0, DecimalSI),
        ("0n", 0, 0, DecimalSI),
        ("0Ki", 0, 0, BinarySI),
        ("0M", 0, 0, DecimalSI),
        ("1", 1, 0, DecimalSI),
        ("1Ki", 1024, 0, BinarySI),
        ("8Ki", 8 * 1024, 0, BinarySI),
        ("7Mi", 7 << 20, 0, BinarySI),
        ("6Gi", 6 << 30, 0, BinarySI),
        ("5Ti", 5 << 40, 0, BinarySI),
        ("4Pi", 4 << 50, 0, BinarySI),
        ("3Ei", 3 << 60, 0, BinarySI),
        ("100Ti", 100 << 40, 0, BinarySI),
        ("5n", 5, -9, DecimalSI),
        ("4u", 4, -6, DecimalSI),
        ("3m", 3, -3, DecimalSI),
        ("50k", 5, 4, DecimalSI),
        ("300T", 3, 14, DecimalSI),
        ("1E", 1, 18, DecimalSI),
        ("12E", 12, 18, DecimalSI),
        ("1E-3", 1, -3, DecimalExponent),
        ("1e3", 1, 3, DecimalExponent),
        ("1E18", 1, 18, DecimalExponent),
        ("100.035k", 100035, 0, DecimalSI),
        ("0.0005k", 5, -1, DecimalSI),
        ("0.00500", 5, -3, DecimalSI),
        ("0.5e-2", 5, -3, DecimalExponent),
        ("10.035M", 10035, 3, DecimalSI),
        ("1.3E+6", 13, 5, DecimalExponent),
        ("1.7E18", 17, 17, DecimalExponent),
        ("6.987654321G", 6987654321, 0, DecimalSI),
        ("1.01E", 101, 16, DecimalSI),
        ("3.001n", 4, -9, DecimalSI),
        ("1.1E-9", 2, -9, DecimalExponent),
        ("0.0000000001", 1, -9, DecimalSI),
        ("0.5e-9", 1, -9, DecimalExponent),
        ("0.9n", 1, -9, DecimalSI),
        ("0.00000012354", 124, -9, DecimalSI),
        ("9Ei", i64::MAX as i128, 0, BinarySI),
        ("9223372036854775807Ki", i64::MAX as i128, 0, BinarySI),
        ("100.035Ki", 10243584, -2, BinarySI),
        ("0.5Mi", 524288, 0, BinarySI),
        ("0.05Gi", 536870912, -1, BinarySI),
        ("0.000000000001Ki", 2, -9, DecimalSI),
        (".001", 1, -3, DecimalSI),
        (".0001k", 100, -3, DecimalSI),
        ("1.", 1, 0, DecimalSI),
        ("1.G", 1, 9, DecimalSI),
        (
            "1.0000000000000000000000000000000000000000001",
            1000000001,
            -9,
            DecimalSI,
        ),
    ];
    for &(input, mantissa, exponent, format) in table {
        for (sign, s) in [
            (1, input.to_owned()),
            (-1, format!("-{input}")),
            (1, format!("+{input}")),
        ] {
            let got = q(&s);
            assert_eq!(got, parts(sign * mantissa, exponent, format), "{s}");
            assert_eq!(got.format(), format, "{s}");
        }
    }
}

#[test]
fn invalid_strings_fail_like_upstream() {
    for bad in [
        "", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1",
        "1 ", "1e", "1K", "1kk",
    ] {
        assert!(Quantity::parse(bad).is_err(), "{bad:?}");
    }
    assert_eq!(Quantity::parse("1.1.M"), Err(QuantityError::Format));
    assert_eq!(Quantity::parse("1kk"), Err(QuantityError::Suffix));
    assert_eq!(
        QuantityError::Format.to_string(),
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    assert_eq!(
        Quantity::parse(&"9".repeat(39)),
        Err(QuantityError::TooManyDigits)
    );
    // Upstream's scanner reads a bare sign or dot as zero.
    for zero in ["-", "+", ".", "00", "-0.0"] {
        assert!(q(zero).is_zero(), "{zero}");
    }
}

/// Upstream's `TestQuantityString` and `TestQuantityParseEmit`: canonical spellings.
#[test]
fn canonical_strings_match_upstream() {
    let table: &[(Quantity, &str, &str)] = &[
        (parts(1 << 30, 0, BinarySI), "1Gi", "1024Mi"),
        (parts(300 << 20, 0, BinarySI), "300Mi", "307200Ki"),
        (parts(6 * 1024, 0, BinarySI), "6Ki", ""),
        (parts(1001 << 30, 0, BinarySI), "1001Gi", "1025024Mi"),
        (parts(1 << 40, 0, BinarySI), "1Ti", "1024Gi"),
        (parts(5, 0, BinarySI), "5", "5000m"),
        (parts(500, -3, BinarySI), "500m", "0.5"),
        (parts(1, 9, DecimalSI), "1G", "1000M"),
        (parts(1000, 6, DecimalSI), "1G", "0.001T"),
        (parts(1, -3, DecimalSI), "1m", "1000u"),
        (parts(1080, -3, DecimalSI), "1080m", "1.08"),
        (parts(108, -2, DecimalSI), "1080m", "1080000000n"),
        (parts(1234567, 6, DecimalSI), "1234567M", ""),
        (parts(1234567, -3, BinarySI), "1234567m", ""),
        (parts(1025, 0, BinarySI), "1025", ""),
        (parts(0, 0, BinarySI), "0", ""),
        (parts(1, 9, DecimalExponent), "1e9", ".001e12"),
        (parts(1, -3, DecimalExponent), "1e-3", "0.001e0"),
        (parts(1, -9, DecimalExponent), "1e-9", "1000e-12"),
        (parts(80, -3, DecimalExponent), "80e-3", ""),
        (parts(300, 6, DecimalExponent), "300e6", ""),
        (parts(0, 0, DecimalExponent), "0", "00"),
        (parts(108, -8, DecimalSI), "1080n", ""),
        (parts(1080, -6, DecimalSI), "1080u", ""),
    ];
    for (quantity, expect, alternate) in table {
        assert_eq!(quantity.to_string(), *expect, "{quantity:?}");
        assert_eq!(q(expect).to_string(), *expect);
        if !alternate.is_empty() {
            assert_eq!(q(alternate).to_string(), *expect, "alternate {alternate}");
        }
        if !quantity.is_zero() {
            assert_eq!((-*quantity).to_string(), format!("-{expect}"));
        }
    }
    for (input, expect) in [
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("128974848", "128974848"),
        ("1.5Gi", "1536Mi"),
        ("2e3", "2e3"),
        ("100m", "100m"),
        ("0.1", "100m"),
        ("1000E", "1000E"),
        ("9Ei", "9223372036854775807"),
    ] {
        assert_eq!(q(input).to_string(), expect, "{input}");
        assert_eq!(
            q(&format!("-{input}")).to_string(),
            format!("-{expect}"),
            "-{input}"
        );
    }
}

#[test]
fn comparison_is_by_value() {
    assert!(q("100m") > q("50m"));
    assert!(q("10000T") > q("100Gi"));
    assert_eq!(q("1Ki"), q("1024"));
    assert_eq!(q("0"), q("0Mi"));
    assert!(q("-1") < q("0.5"));
    assert!(q("-2") < q("-1"));
    assert!(q("1e100") > q("9Ei"));
    assert!(q("999m") < q("1"));
}

#[test]
fn add_and_sub_are_exact_and_keep_the_left_format() {
    assert_eq!(
        q("1Gi").checked_add(&q("512Mi")).map(|s| s.to_string()),
        Some("1536Mi".to_owned())
    );
    assert_eq!(
        q("100m").checked_add(&q("1")).map(|s| s.to_string()),
        Some("1100m".to_owned())
    );
    assert_eq!(
        q("1").checked_sub(&q("1500m")).map(|s| s.to_string()),
        Some("-500m".to_owned())
    );
    // A zero left side takes the right side's format (upstream's AddZeroPreservesSuffix).
    let sum = Quantity::default().checked_add(&q("1Ki")).expect("small");
    assert_eq!(
        (sum.format(), sum.to_string()),
        (BinarySI, "1Ki".to_owned())
    );
    let diff = q("0").checked_sub(&q("1Ki")).expect("small");
    assert_eq!(diff.to_string(), "-1Ki");
    assert_eq!(
        q("1Ki").checked_add(&q("0")).map(|s| s.format()),
        Some(BinarySI)
    );
    assert_eq!(q("1e30").checked_add(&q("1n")), None, "needs 40 digits");
}

#[test]
fn values_round_up_like_value_and_milli_value() {
    assert_eq!(q("1500m").as_i64(), Some(2));
    assert_eq!(q("1").as_i64(), Some(1));
    assert_eq!(q("1n").as_i64(), Some(1));
    assert_eq!(q("1n").as_milli(), Some(1));
    assert_eq!(q("1.5").as_milli(), Some(1500));
    assert_eq!(q("1Gi").as_i64(), Some(1 << 30));
    assert_eq!(q("-1500m").as_i64(), Some(-2));
    assert_eq!(q("9Ei").as_i64(), Some(i64::MAX));
    assert_eq!(q("9Ei").as_milli(), None);
    assert_eq!(q("1e100").as_i64(), None);
    // Upstream's TestScaledValue.
    for (from, to, expected) in [
        (-9, -9, 1),
        (-9, 0, 1),
        (-6, -9, 1000),
        (-3, -6, 1000),
        (0, -9, 1_000_000_000),
        (2, -2, 10_000),
    ] {
        assert_eq!(
            Quantity::from_scaled(1, from, DecimalSI).scaled_value(to),
            Some(expected),
            "{from}->{to}"
        );
    }
    assert_eq!(Quantity::from_scaled(15, -10, DecimalSI).to_string(), "2n");
    assert_eq!(Quantity::from_milli(1500, DecimalSI).to_string(), "1500m");
    assert_eq!(Quantity::from_i64(2048, BinarySI).to_string(), "2Ki");
}

#[test]
fn serde_reads_strings_and_numbers_and_writes_canonical_strings() {
    let parsed: Vec<Quantity> =
        serde_json::from_str(r#"["1.5Gi", " 100m ", 2, 0.5, 1e3]"#).expect("valid quantities");
    assert_eq!(
        serde_json::to_string(&parsed).expect("serializable"),
        r#"["1536Mi","100m","2","500m","1k"]"#
    );
    assert!(serde_json::from_str::<Quantity>(r#""1.1.M""#).is_err());
    let api = k8s_openapi::apimachinery::pkg::api::resource::Quantity("2Gi".into());
    let ours = Quantity::try_from(&api).expect("valid");
    assert_eq!(
        k8s_openapi::apimachinery::pkg::api::resource::Quantity::from(ours).0,
        "2Gi"
    );
}

// ---- property tests ----

fn format() -> impl Strategy<Value = QuantityFormat> {
    prop_oneof![Just(DecimalSI), Just(BinarySI), Just(DecimalExponent)]
}

/// Values small enough that `mantissa × 10^(exponent + 9)` fits an i128 for the reference.
fn quantity() -> impl Strategy<Value = Quantity> {
    (-999_999_999_999i64..=999_999_999_999, -9i32..=15, format()).prop_map(|(m, e, f)| {
        let q = parts(m.into(), e, f);
        // BinarySI quantities are capped at 2^63-1 by parsing, so none larger exist.
        if f == BinarySI && nanos(&q).abs() > i128::from(i64::MAX) * 1_000_000_000 {
            parts(m.into(), e, DecimalSI)
        } else {
            q
        }
    })
}

fn nanos(q: &Quantity) -> i128 {
    q.mantissa * 10i128.pow((q.exponent + 9) as u32)
}

proptest! {
    #[test]
    fn parse_of_display_is_identity(x in quantity()) {
        let printed = x.to_string();
        let back = Quantity::parse(&printed);
        prop_assert_eq!(back, Ok(x), "printed {}", printed);
        // A BinarySI integer with no power-of-1024 factor prints bare and re-parses as DecimalSI
        // (upstream too: 9223373000 BinarySI prints "9223373000", which reads back as "9223373k"),
        // so the spelling is stable from the second round on.
        let again = Quantity::parse(&printed).map(|b| b.to_string()).expect("canonical parses");
        prop_assert_eq!(Quantity::parse(&again).map(|b| b.to_string()), Ok(again.clone()));
        if x.format() != BinarySI {
            prop_assert_eq!(again, printed);
        }
    }

    #[test]
    fn ordering_agrees_with_numeric_value(a in quantity(), b in quantity()) {
        prop_assert_eq!(a.cmp(&b), nanos(&a).cmp(&nanos(&b)));
        prop_assert_eq!(a == b, nanos(&a) == nanos(&b));
    }

    #[test]
    fn arithmetic_agrees_with_numeric_value(a in quantity(), b in quantity()) {
        let sum = a.checked_add(&b).expect("small values cannot overflow");
        prop_assert_eq!(nanos(&sum), nanos(&a) + nanos(&b));
        let difference = a.checked_sub(&b).expect("small values cannot overflow");
        prop_assert_eq!(nanos(&difference), nanos(&a) - nanos(&b));
    }

    #[test]
    fn scaled_values_round_away_from_zero(a in quantity()) {
        let n = nanos(&a);
        let ceil = |divisor: i128| { let q = n / divisor; if n % divisor == 0 { q } else { q + n.signum() } };
        prop_assert_eq!(a.as_i64().map(i128::from), i64::try_from(ceil(1_000_000_000)).ok().map(i128::from));
        prop_assert_eq!(a.as_milli().map(i128::from), i64::try_from(ceil(1_000_000)).ok().map(i128::from));
    }

    #[test]
    fn parse_never_panics(input in "[-+]?[0-9.]{0,30}([eEinumkKMGTP]{0,2}[-+]?[0-9]{0,4})?") {
        let _ = Quantity::parse(&input);
    }
}
