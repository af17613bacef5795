//! The Event printer, shared by both views of Events (kube prints the internal type, so
//! `kubectl get events` and `kubectl get events.events.k8s.io` show the same columns).
//!
//! Provenance: kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (v1.32):
//! `eventColumnDefinitions`, `printEvent`, `formatEventSource`; kube-apiserver always prints
//! the wide cells and kubectl hides priority-1 columns unless `-o wide`.

use serde_json::Value;

use super::{Cells, ColumnDef};
use crate::catalog::ResourceInfo;
use crate::lifted::duration::human_duration;

fn col(name: &'static str, priority: i32) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        type_: "string",
        format: if name == "Name" { "name" } else { "" },
        priority,
        description: "",
    }
}

pub(super) fn printer(info: &ResourceInfo, now: jiff::Timestamp) -> (Vec<ColumnDef>, Cells) {
    let events_view = crate::events::is_events_view(info);
    let columns = vec![
        col("Last Seen", 0),
        col("Type", 0),
        col("Reason", 0),
        col("Object", 0),
        col("Subobject", 1),
        col("Source", 1),
        col("Message", 0),
        col("First Seen", 1),
        col("Count", 1),
        col("Name", 1),
    ];
    let cells = move |object: &Value| {
        let converted;
        let event = if events_view {
            converted = crate::events::lifted::events_to_core(object);
            &converted
        } else {
            object
        };
        cells(event, now)
    };
    (columns, Box::new(cells))
}

/// The cells of a core/v1 Event.
fn cells(event: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let text = |value: &Value| value.as_str().unwrap_or("").to_owned();
    let since = |value: &Value| {
        value
            .as_str()
            .filter(|t| !t.is_empty())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| human_duration(now.duration_since(t)))
    };
    let unknown = || "<unknown>".to_owned();
    let first_seen = since(&event["firstTimestamp"])
        .or_else(|| since(&event["eventTime"]))
        .unwrap_or_else(unknown);
    let mut last_seen = since(&event["lastTimestamp"]).unwrap_or_else(|| first_seen.clone());
    let mut count = event["count"].as_i64().unwrap_or(0);
    if event["series"].is_object() {
        last_seen = since(&event["series"]["lastObservedTime"]).unwrap_or_else(unknown);
        count = event["series"]["count"].as_i64().unwrap_or(0);
    } else if count == 0 {
        // Singleton events of the new API carry no count.
        count = 1;
    }
    let involved = &event["involvedObject"];
    let kind = text(&involved["kind"]).to_lowercase();
    let name = text(&involved["name"]);
    let object = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    let first_non_empty = |a: String, b: String| if a.is_empty() { b } else { a };
    let component = first_non_empty(
        text(&event["source"]["component"]),
        text(&event["reportingComponent"]),
    );
    let instance = first_non_empty(
        text(&event["source"]["host"]),
        text(&event["reportingInstance"]),
    );
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        last_seen.into(),
        text(&event["type"]).into(),
        text(&event["reason"]).into(),
        object.into(),
        text(&involved["fieldPath"]).into(),
        source.into(),
        text(&event["message"]).trim().to_owned().into(),
        first_seen.into(),
        count.into(),
        text(&event["metadata"]["name"]).into(),
    ]
}
