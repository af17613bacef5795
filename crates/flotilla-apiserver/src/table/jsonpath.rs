//! The JSONPath subset printer columns use: `.a.b`, `.a[0]`, `.a[*].b`,
//! `.a[?(@.type=="Ready")].status`.

use serde_json::Value;

/// Every value the path selects, in document order.
pub fn evaluate(root: &Value, path: &str) -> Vec<Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let path = path.strip_prefix('$').unwrap_or(path);
    let mut current = vec![root.clone()];
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let field = &after[..end];
            rest = &after[end..];
            if field.is_empty() {
                continue;
            }
            current = current
                .iter()
                .filter_map(|v| v.get(field).cloned())
                .collect();
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = find_close(after) else {
                return Vec::new();
            };
            let selector = &after[..end];
            rest = &after[end + 1..];
            current = current.iter().flat_map(|v| select(v, selector)).collect();
        } else {
            return Vec::new();
        }
    }
    current.into_iter().filter(|v| !v.is_null()).collect()
}

fn find_close(text: &str) -> Option<usize> {
    let mut depth = 0;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('[', None) => depth += 1,
            (']', None) if depth == 0 => return Some(i),
            (']', None) => depth -= 1,
            _ => {}
        }
    }
    None
}

fn select(value: &Value, selector: &str) -> Vec<Value> {
    let Some(items) = value.as_array() else {
        return Vec::new();
    };
    if selector == "*" {
        return items.clone();
    }
    if let Ok(index) = selector.parse::<i64>() {
        let index = if index < 0 {
            items.len() as i64 + index
        } else {
            index
        };
        return items
            .get(usize::try_from(index).unwrap_or(usize::MAX))
            .cloned()
            .into_iter()
            .collect();
    }
    // ?(@.field=="value") or ?(@.field)
    let Some(filter) = selector
        .strip_prefix("?(")
        .and_then(|s| s.strip_suffix(')'))
    else {
        return Vec::new();
    };
    let filter = filter.trim();
    let (lhs, expected) = match filter.split_once("==") {
        Some((lhs, rhs)) => (lhs.trim(), Some(rhs.trim().trim_matches(['"', '\'']))),
        None => (filter, None),
    };
    let Some(field_path) = lhs.strip_prefix('@') else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|item| {
            let found = evaluate(item, field_path);
            match expected {
                Some(expected) => found.iter().any(|v| match v {
                    Value::String(s) => s == expected,
                    other => {
                        let text = other.to_string();
                        text == expected
                    }
                }),
                None => !found.is_empty(),
            }
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::evaluate;

    #[test]
    fn selects_fields_indexes_wildcards_and_filters() {
        let doc = json!({
            "spec": {"replicas": 3, "workload": {"manifests": [{"kind": "Deployment"}, {"kind": "Service"}]}},
            "status": {"conditions": [
                {"type": "Scheduled", "status": "True"},
                {"type": "FullyApplied", "status": "False"}
            ]}
        });
        assert_eq!(evaluate(&doc, ".spec.replicas"), vec![json!(3)]);
        assert_eq!(
            evaluate(&doc, ".spec.workload.manifests[*].kind"),
            vec![json!("Deployment"), json!("Service")]
        );
        assert_eq!(
            evaluate(&doc, ".spec.workload.manifests[1].kind"),
            vec![json!("Service")]
        );
        assert_eq!(
            evaluate(
                &doc,
                ".status.conditions[?(@.type==\"FullyApplied\")].status"
            ),
            vec![json!("False")]
        );
        assert!(evaluate(&doc, ".status.missing").is_empty());
        assert!(evaluate(&doc, ".spec.replicas[0]").is_empty());
    }
}
