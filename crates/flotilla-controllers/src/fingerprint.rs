//! Hashes of JSON documents, fed to the hasher as they serialize (no string is built): the
//! controllers compare them to tell a real change from a repeat.

use std::hash::Hasher as _;

/// A hash of `value`'s JSON.
pub(crate) fn hash_of(value: &impl serde::Serialize) -> u64 {
    let mut hasher = HashWriter(std::collections::hash_map::DefaultHasher::new());
    // Writing into a hasher cannot fail; a value that cannot serialize hashes what was written.
    let _ = serde_json::to_writer(&mut hasher, value);
    hasher.0.finish()
}

/// Feeds `value` into `hasher` with every object's keys in sorted order: two documents that
/// differ only in key order (one client writes `spec` as it was created, another in its
/// typed field order) hash alike.
pub(crate) fn hash_canonical(value: &serde_json::Value, hasher: &mut impl std::hash::Hasher) {
    use serde_json::Value;
    use std::hash::Hash as _;
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(b) => (1u8, b).hash(hasher),
        Value::Number(n) => (2u8, n.to_string()).hash(hasher),
        Value::String(s) => (3u8, s).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            for item in items {
                hash_canonical(item, hasher);
            }
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(hasher);
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            for key in keys {
                key.hash(hasher);
                hash_canonical(&map[key], hasher);
            }
        }
    }
}

/// Feeds serialized bytes straight into a hasher.
struct HashWriter(std::collections::hash_map::DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::hash::Hasher as _;

    use serde_json::json;

    fn canonical(value: &serde_json::Value) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        super::hash_canonical(value, &mut hasher);
        hasher.finish()
    }

    #[test]
    fn key_order_does_not_matter_but_content_does() {
        let a: serde_json::Value = serde_json::from_str(
            r#"{"replicas": 2, "selector": {"b": 1, "a": [1, {"y": 0, "x": 1}]}}"#,
        )
        .expect("json");
        let b: serde_json::Value = serde_json::from_str(
            r#"{"selector": {"a": [1, {"x": 1, "y": 0}], "b": 1}, "replicas": 2}"#,
        )
        .expect("json");
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(
            canonical(&a),
            canonical(&json!({"replicas": 3, "selector": a["selector"]}))
        );
        // Array order is content; types are told apart.
        assert_ne!(canonical(&json!([1, 2])), canonical(&json!([2, 1])));
        assert_ne!(canonical(&json!("1")), canonical(&json!(1)));
        assert_ne!(canonical(&json!({"a": null})), canonical(&json!({})));
    }
}
