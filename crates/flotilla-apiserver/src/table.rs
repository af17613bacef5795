//! `Table` responses (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns
//! kubectl users know for built-in kinds, printer columns for Karmada kinds and CRDs.

mod event;
mod jsonpath;
mod printers;

use serde_json::{Value, json};

use crate::catalog::{Printer, ResourceInfo};
use crate::lifted::duration::human_duration;

pub use jsonpath::evaluate as jsonpath;
pub(crate) use printers::selector_text;

/// Whether the Accept header asks for a Table first.
pub fn wants_table(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.replace(' ', "").contains("as=Table"))
}

/// One column definition and how to compute its cell.
pub(crate) struct ColumnDef {
    pub name: String,
    pub type_: &'static str,
    pub format: &'static str,
    pub priority: i32,
    pub description: &'static str,
}

fn age(object: &Value, now: jiff::Timestamp) -> String {
    object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|created| human_duration(now.duration_since(created)))
        .unwrap_or_else(|| "<unknown>".into())
}

/// Renders objects as a Table.
pub fn render(
    info: &ResourceInfo,
    items: &[Value],
    revision: i64,
    continue_token: Option<&str>,
    now: jiff::Timestamp,
    include_object: Option<&str>,
) -> Value {
    let (columns, cells): (Vec<ColumnDef>, Cells) = match info.printer {
        Printer::BuiltIn => match printers::builtin(info, now) {
            Some(printer) => printer,
            None => columns_printer(info, now),
        },
        Printer::Columns => columns_printer(info, now),
    };
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let object = match include_object {
                Some("None") => Value::Null,
                Some("Object") => item.clone(),
                _ => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": item["metadata"],
                }),
            };
            json!({"cells": cells(item), "object": object})
        })
        .collect();
    let definitions: Vec<Value> = columns
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.type_,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            })
        })
        .collect();
    let mut metadata = json!({});
    if revision > 0 {
        metadata["resourceVersion"] = revision.to_string().into();
    }
    if let Some(token) = continue_token {
        metadata["continue"] = token.into();
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

type Cells = Box<dyn Fn(&Value) -> Vec<Value>>;

/// NAME, the resource's printer columns, AGE (how kube-apiserver prints CRDs).
fn columns_printer(info: &ResourceInfo, now: jiff::Timestamp) -> (Vec<ColumnDef>, Cells) {
    let mut defs = vec![ColumnDef {
        name: "Name".into(),
        type_: "string",
        format: "name",
        priority: 0,
        description: "Name must be unique within a namespace.",
    }];
    let columns = info.columns.clone();
    for column in &columns {
        defs.push(ColumnDef {
            name: column.name.clone(),
            type_: match column.type_.as_str() {
                "integer" => "integer",
                "number" => "number",
                "boolean" => "boolean",
                "date" => "date",
                _ => "string",
            },
            format: "",
            priority: column.priority,
            description: "",
        });
    }
    defs.push(ColumnDef {
        name: "Age".into(),
        type_: "date",
        format: "",
        priority: 0,
        description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
    });
    let cells = move |object: &Value| {
        let mut row = vec![object["metadata"]["name"].clone()];
        for column in &columns {
            let values = jsonpath::evaluate(object, &column.json_path);
            let cell = match (column.type_.as_str(), values.as_slice()) {
                (_, []) => Value::Null,
                ("date", [Value::String(t)]) => t
                    .parse::<jiff::Timestamp>()
                    .map(|t| Value::from(human_duration(now.duration_since(t))))
                    .unwrap_or(Value::Null),
                (_, [one]) => one.clone(),
                (_, many) => Value::from(
                    many.iter()
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                ),
            };
            row.push(cell);
        }
        row.push(age(object, now).into());
        row
    };
    (defs, Box::new(cells))
}
