//! The order in which go-yaml v2 writes a map's keys, which is how Karmada's fieldOverrider
//! writes a YAML document back (`sigs.k8s.io/yaml`'s `JSONToYAML` marshals through its fork of
//! go-yaml v2).
//!
//! Provenance: `sigs.k8s.io/yaml` v1.4 `goyaml.v2/sorter.go` (`keyList.Less`, string keys
//! only: a JSON document's keys are always strings). Written from the documented ordering and
//! its tests, not copied; the comparison assumes no total order and cannot panic.

use serde_json::Value;

/// Every map's keys in the order go-yaml v2 writes them, which is how Karmada writes a YAML
/// document back: character by character, a letter after anything that is not a letter, and
/// runs of digits compared as numbers (`item2` before `item10`, `_x` before `Name`).
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = Vec::with_capacity(map.len());
            for (key, value) in map {
                // Insertion after every key that does not sort after this one: no total order
                // is assumed of the comparison, so nothing can panic.
                let at = entries.partition_point(|(other, _)| !key_less(&key, other));
                entries.insert(at, (key, sorted(value)));
            }
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// go-yaml v2's ordering of two string keys.
fn key_less(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (a_letter, b_letter) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if a_letter && b_letter {
            return a[i] < b[i];
        }
        if a_letter || b_letter {
            return b_letter;
        }
        // Neither is a letter: the digit runs from here on compared as numbers. Inside a number
        // (a non-zero digit before), leading zeros count.
        let inside_number = (a[i] == '0' || b[i] == '0')
            && a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .any(|&c| c != '0');
        let number = |s: &[char]| {
            let mut n = i64::from(inside_number);
            let mut end = i;
            while end < s.len() && s[end].is_ascii_digit() {
                n = n
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(s[end] as u8 - b'0'));
                end += 1;
            }
            (n, end)
        };
        let ((a_number, a_end), (b_number, b_end)) = (number(&a), number(&b));
        if a_number != b_number {
            return a_number < b_number;
        }
        if a_end != b_end {
            return a_end < b_end;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}
