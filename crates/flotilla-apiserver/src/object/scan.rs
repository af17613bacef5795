//! Finding members of a stored JSON object without decoding it: one pass over the bytes that
//! skips values by their structure (strings to their closing quote, objects and arrays to the
//! matching bracket) and allocates nothing. The watch cache and the garbage collector read a few
//! metadata fields of every object written; decoding them with serde meant walking spec, status
//! and managedFields at serde's pace just to ignore them.
//!
//! The bytes are the store's, which only this server's encoder writes, so they are JSON; the
//! scan still never panics on anything else, and what does not look like an object (or a key
//! with an escape in it, or a member given twice) gives `None`, for the caller's decoding path.

use std::ops::Range;

/// The spans of the members named in `names`, in that order, of the JSON object `bytes` (spans
/// index into `bytes`; `None` for a member that is absent). `None` when `bytes` is not one object,
/// when one of `names` appears twice, or when any key holds an escape.
pub fn pick<const N: usize>(bytes: &[u8], names: [&str; N]) -> Option<[Option<Range<usize>>; N]> {
    let (found, end) = members(bytes, skip_whitespace(bytes, 0), names)?;
    (skip_whitespace(bytes, end) == bytes.len()).then_some(found)
}

/// The span of the first top-level member `outer` of the JSON object `bytes`, which must be an
/// object, the spans of its members `names` (as [`pick`] gives them), and the spans of the
/// top-level members `before` that precede it, in one pass that stops at the end of `outer`:
/// what follows it is not looked at, so a second `outer` after it goes unnoticed. Meant for the
/// store's bytes, which this server's encoder wrote from maps (unique keys); `None` when `outer`
/// is absent or not an object, or on anything [`pick`] refuses up to there.
#[allow(clippy::type_complexity)]
pub fn pick_nested<const M: usize, const N: usize>(
    bytes: &[u8],
    before: [&str; M],
    outer: &str,
    names: [&str; N],
) -> Option<(
    [Option<Range<usize>>; M],
    Range<usize>,
    [Option<Range<usize>>; N],
)> {
    let mut preceding: [Option<Range<usize>>; M] = std::array::from_fn(|_| None);
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_whitespace(bytes, at + 1);
    loop {
        let (key, start) = key_at(bytes, at)?;
        if key == outer.as_bytes() {
            let (found, end) = members(bytes, start, names)?;
            return Some((preceding, start..end, found));
        }
        let end = value_end(bytes, start)?;
        if let Some(slot) = before.iter().position(|name| name.as_bytes() == key) {
            if preceding[slot].is_some() {
                return None;
            }
            preceding[slot] = Some(start..end);
        }
        at = skip_whitespace(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_whitespace(bytes, at + 1),
            _ => return None,
        }
    }
}

/// The key of the member at `at` (a string without escapes) and where its value starts.
fn key_at(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let key_end = string_end(bytes, at)?;
    let key = &bytes[at + 1..key_end - 1];
    if key.contains(&b'\\') {
        return None;
    }
    let colon = skip_whitespace(bytes, key_end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    Some((key, skip_whitespace(bytes, colon + 1)))
}

/// The spans of `names` in the object starting at `at`, and the index just past it.
fn members<const N: usize>(
    bytes: &[u8],
    at: usize,
    names: [&str; N],
) -> Option<([Option<Range<usize>>; N], usize)> {
    let mut found: [Option<Range<usize>>; N] = std::array::from_fn(|_| None);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let mut at = skip_whitespace(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some((found, at + 1));
    }
    loop {
        let (key, start) = key_at(bytes, at)?;
        let end = value_end(bytes, start)?;
        if let Some(slot) = names.iter().position(|name| name.as_bytes() == key) {
            if found[slot].is_some() {
                return None;
            }
            found[slot] = Some(start..end);
        }
        at = skip_whitespace(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_whitespace(bytes, at + 1),
            Some(b'}') => return Some((found, at + 1)),
            _ => return None,
        }
    }
}

/// Whether the JSON object `bytes` has no members (`None`: not an object).
pub fn is_empty_object(bytes: &[u8]) -> Option<bool> {
    let at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    Some(bytes.get(skip_whitespace(bytes, at + 1)) == Some(&b'}'))
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Just past the closing quote of the string opening at `at`. Most strings in objects are
/// short keys, where a byte loop beats setting up a vectorised search; past 16 bytes, `memchr`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    let short = (i + 16).min(bytes.len());
    while i < short {
        match bytes[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    loop {
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// Bytes that matter inside an object or array: quotes start strings, brackets nest.
static STRUCTURAL: [bool; 256] = {
    let mut table = [false; 256];
    table[b'"' as usize] = true;
    table[b'{' as usize] = true;
    table[b'[' as usize] = true;
    table[b'}' as usize] = true;
    table[b']' as usize] = true;
    table
};

/// Just past the value starting at `at`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                i += bytes
                    .get(i..)?
                    .iter()
                    .position(|&byte| STRUCTURAL[byte as usize])?;
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                }
                i += 1;
            }
        }
        // A number or a literal: up to the next delimiter.
        _ => {
            let mut i = at;
            while let Some(byte) = bytes.get(i) {
                if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text<'a>(bytes: &'a str, span: &Option<Range<usize>>) -> Option<&'a str> {
        span.clone().map(|span| &bytes[span])
    }

    #[test]
    fn finds_members_and_skips_nested_values() {
        let json = r#"{"apiVersion":"v1","spec":{"a":[1,{"metadata":"no"}],"s":"}]\"{"},"metadata":{"name":"x","labels":{"a":"b"}} , "n": -1.5e3,"t":true}"#;
        let [metadata, spec, n, t, missing] =
            pick(json.as_bytes(), ["metadata", "spec", "n", "t", "missing"]).unwrap();
        assert_eq!(
            text(json, &metadata),
            Some(r#"{"name":"x","labels":{"a":"b"}}"#)
        );
        assert_eq!(
            text(json, &spec),
            Some(r#"{"a":[1,{"metadata":"no"}],"s":"}]\"{"}"#)
        );
        assert_eq!(text(json, &n), Some("-1.5e3"));
        assert_eq!(text(json, &t), Some("true"));
        assert_eq!(missing, None);
    }

    #[test]
    fn nested_members_in_one_pass_that_stops_after_the_outer_member() {
        let json = r#"{"kind":"X","metadata":{"name":"a","labels":{"k":"v"},"managedFields":[{"f:spec":{}}]},"spec":{"x":"#;
        let ([kind, spec], span, [labels, version]) = pick_nested(
            json.as_bytes(),
            ["kind", "spec"],
            "metadata",
            ["labels", "resourceVersion"],
        )
        .unwrap();
        assert_eq!(text(json, &kind), Some(r#""X""#));
        assert_eq!(spec, None, "after metadata: not looked at");
        assert!(json[span].ends_with("}]}"));
        assert_eq!(text(json, &labels), Some(r#"{"k":"v"}"#));
        assert_eq!(version, None);
        for bad in [
            r#"{"kind":"X"}"#,
            r#"{"metadata":null}"#,
            r#"{"metadata":{"labels":1,"labels":2}}"#,
            r#"{"metadata":{"name":"a""#,
            r#"["metadata"]"#,
        ] {
            assert_eq!(
                pick_nested(bad.as_bytes(), [], "metadata", ["labels"]),
                None,
                "{bad}"
            );
        }
        let twice = br#"{"kind":"X","kind":"Y","metadata":{}}"#;
        assert_eq!(pick_nested(twice, ["kind"], "metadata", ["labels"]), None);
    }

    #[test]
    fn long_strings_with_escapes() {
        let long = format!(r#"{{"a":"{}\"{}","b":1}}"#, "x".repeat(40), "y".repeat(40));
        let [a, b] = pick(long.as_bytes(), ["a", "b"]).unwrap();
        assert_eq!(a.map(|a| a.len()), Some(84));
        assert_eq!(text(&long, &b), Some("1"));
    }

    #[test]
    fn whitespace_and_empty_objects() {
        let json = " { \"a\" : { } ,\n\"b\":\t[ ]\r} ";
        let [a, b] = pick(json.as_bytes(), ["a", "b"]).unwrap();
        assert_eq!(text(json, &a), Some("{ }"));
        assert_eq!(text(json, &b), Some("[ ]"));
        assert_eq!(is_empty_object(b"{ }"), Some(true));
        assert_eq!(is_empty_object(br#"{"a":1}"#), Some(false));
        assert_eq!(is_empty_object(b"[]"), None);
        assert_eq!(pick(b" {} ", ["a"]), Some([None]));
    }

    #[test]
    fn unusual_input_gives_none_never_a_panic() {
        for bad in [
            "",
            "[]",
            "\"x\"",
            "{",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,}",
            "{\"a\":\"unterminated}",
            "{\"a\":{\"b\":[1,2}",
            "{\"a\":1}{",
            "{\"a\":1} x",
            "{a:1}",
            "{\"a\" 1}",
            "{\"m\\u0061\":1}",
            "{\"a\":\"\\",
        ] {
            assert_eq!(pick(bad.as_bytes(), ["a"]), None, "{bad:?}");
        }
        // A member given twice is left to the decoding path; an unrequested one is not looked at.
        assert_eq!(pick(br#"{"a":1,"a":2}"#, ["a"]), None);
        assert!(pick(br#"{"b":1,"b":2,"a":3}"#, ["a"]).is_some());
    }
}
