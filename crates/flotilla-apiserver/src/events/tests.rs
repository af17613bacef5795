use serde_json::json;

use super::lifted;
use super::*;
use crate::catalog::Catalog;

fn events_view() -> std::sync::Arc<ResourceInfo> {
    Catalog::with_builtins()
        .get(GROUP, "v1", "events")
        .expect("events.k8s.io/v1 is built in")
}

fn core_view() -> std::sync::Arc<ResourceInfo> {
    Catalog::with_builtins()
        .get("", "v1", "events")
        .expect("core events are built in")
}

fn core_event() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
        "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "ns", "uid": "d1"},
        "reason": "ScalingReplicaSet", "message": "Scaled up", "type": "Normal",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:01:00Z",
        "count": 3, "reportingComponent": "deployment-controller", "reportingInstance": "cp-1",
        "action": "Scale", "eventTime": null,
        "related": {"kind": "ReplicaSet", "name": "web-1"},
        "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
    })
}

#[test]
fn both_views_share_the_core_storage_prefix() {
    assert_eq!(events_view().storage_prefix(), core_view().storage_prefix());
    assert_eq!(core_view().storage_prefix(), STORAGE_PREFIX);
    assert_eq!(
        events_view().storage_key(Some("ns"), "e"),
        "/registry/core/events/ns/e"
    );
}

#[test]
fn core_events_read_through_events_k8s_io_with_renamed_fields() {
    let mut event = core_event();
    to_served(&events_view(), &mut event);
    assert_eq!(event["apiVersion"], "events.k8s.io/v1");
    assert_eq!(event["metadata"]["uid"], "u");
    assert_eq!(event["metadata"]["resourceVersion"], "7");
    assert_eq!(event["regarding"]["name"], "web");
    assert_eq!(event["note"], "Scaled up");
    assert_eq!(
        event["deprecatedSource"]["component"],
        "deployment-controller"
    );
    assert_eq!(event["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
    assert_eq!(event["deprecatedLastTimestamp"], "2026-01-01T00:01:00Z");
    assert_eq!(event["deprecatedCount"], 3);
    assert_eq!(event["reportingController"], "deployment-controller");
    assert_eq!(event["reportingInstance"], "cp-1");
    assert_eq!(event["action"], "Scale");
    assert_eq!(event["related"]["name"], "web-1");
    assert_eq!(event["series"]["count"], 2);
    for core_only in [
        "involvedObject",
        "message",
        "source",
        "count",
        "reportingComponent",
    ] {
        assert!(
            event.get(core_only).is_none(),
            "{core_only} is not events.k8s.io/v1"
        );
    }
}

#[test]
fn conversion_round_trips_both_ways() {
    let core = core_event();
    let back = lifted::events_to_core(&lifted::core_to_events(&core));
    assert_eq!(back, core);
    let event = lifted::core_to_events(&core);
    assert_eq!(
        lifted::core_to_events(&lifted::events_to_core(&event)),
        event
    );
    // The core view is untouched by `to_served`.
    let mut same = core_event();
    to_served(&core_view(), &mut same);
    assert_eq!(same, core);
}

#[test]
fn unknown_fields_do_not_survive_conversion_and_references_always_exist() {
    let stored = lifted::events_to_core(&json!({"note": "n", "bogus": 1}));
    assert_eq!(
        stored,
        json!({"apiVersion": "v1", "kind": "Event", "message": "n", "involvedObject": {}})
    );
}

#[test]
fn events_k8s_io_field_labels_select_the_core_fields() {
    let selector = flotilla_api::selector::field::parse(
        "regarding.name=web,reportingController=c,source=s,metadata.name=x",
    )
    .expect("parses");
    let converted = field_selector_to_stored(&events_view(), selector).expect("supported");
    assert_eq!(
        converted.to_string(),
        "involvedObject.name=web,metadata.name=x,reportingComponent=c,source=s"
    );
    let core_label =
        flotilla_api::selector::field::parse("involvedObject.name=web").expect("parses");
    let error = field_selector_to_stored(&events_view(), core_label).unwrap_err();
    assert_eq!(error.code, 400);
    assert_eq!(
        error.message,
        "field label not supported: involvedObject.name"
    );
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn events_k8s_io_creates_need_event_time_and_no_deprecated_fields() {
    let event = json!({
        "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
        "reason": "Pulled", "type": "Normal",
        "deprecatedCount": 2,
    });
    let errors = errors(&events_view(), &event, None);
    assert_eq!(
        messages(&errors),
        vec![
            "eventTime: Required value".to_owned(),
            "count: Invalid value: \"\": needs to be unset".to_owned(),
        ]
    );
    // Through core/v1 the same object is fine (legacy rules only).
    let core = lifted::events_to_core(&event);
    assert!(super::errors(&core_view(), &core, None).is_empty());
}

#[test]
fn new_style_events_need_their_reporter_action_and_reason() {
    let event = json!({
        "metadata": {"name": "e", "namespace": "ns"},
        "regarding": {"kind": "Pod", "name": "p", "namespace": "ns"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "type": "Sideways",
        "reason": "r".repeat(129),
    });
    let messages = messages(&errors(&events_view(), &event, None));
    // kube also reports the empty controller as an invalid qualified name.
    assert_eq!(messages[0], "reportingController: Required value");
    assert!(
        messages[1]
            .starts_with("reportingController: Invalid value: \"\": name part must be non-empty")
    );
    assert_eq!(
        messages[3..],
        vec![
            "reportingInstance: Required value".to_owned(),
            "action: Required value".to_owned(),
            "reason: Invalid value: \"\": can have at most 128 characters".to_owned(),
            "type: Invalid value: \"\": has invalid value: Sideways".to_owned(),
        ]
    );
}

#[test]
fn old_style_events_live_in_their_objects_namespace() {
    let event = json!({
        "metadata": {"name": "e", "namespace": "other"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
    });
    assert_eq!(
        messages(&errors(&core_view(), &event, None)),
        vec!["involvedObject.namespace: Invalid value: \"ns\": does not match event.namespace"]
    );
    let cluster_scoped = json!({
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "n"},
    });
    assert!(errors(&core_view(), &cluster_scoped, None).is_empty());
}

#[test]
fn events_k8s_io_updates_keep_the_event_immutable() {
    let old = lifted::core_to_events(&core_event());
    let mut new = old.clone();
    new["note"] = "changed".into();
    new["metadata"]["labels"] = json!({"a": "b"});
    assert_eq!(
        messages(&errors(&events_view(), &new, Some(&old))),
        vec!["message: Invalid value: \"changed\": field is immutable"]
    );
    // core/v1 writes may change anything (the legacy recorder bumps count and lastTimestamp).
    let mut core = core_event();
    core["count"] = 4.into();
    assert!(errors(&core_view(), &core, Some(&core_event())).is_empty());
}
