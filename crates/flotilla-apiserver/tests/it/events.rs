//! core/v1 and events.k8s.io/v1 Events are one stored resource: whatever is written through one
//! group is read, listed, watched, patched and deleted through the other, converted.

use serde_json::{Value, json};

use crate::support::*;
use crate::watch::{next, open};

pub(crate) const CORE: &str = "/api/v1/namespaces/default/events";
pub(crate) const V1: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

/// An Event as client-go's legacy recorder writes it through core/v1.
pub(crate) fn core_event(name: &str, about: &str) -> Value {
    json!({
        "metadata": {"name": name, "labels": {"about": about}},
        "involvedObject": {"kind": "Deployment", "name": about, "namespace": "default",
                           "apiVersion": "apps/v1", "uid": format!("uid-{about}")},
        "reason": "ScalingReplicaSet", "message": format!("Scaled up {about}"), "type": "Normal",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1,
    })
}

/// An Event as an events.k8s.io/v1 recorder writes it.
fn v1_event(name: &str, about: &str) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name},
        "regarding": {"kind": "Pod", "name": about, "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.io/scheduler", "reportingInstance": "scheduler-1",
        "action": "Binding", "reason": "Scheduled", "type": "Normal",
        "note": format!("Assigned {about}"),
    })
}

pub(crate) fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}

fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().expect("manager").to_owned(),
                m["apiVersion"].as_str().expect("apiVersion").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_core_event_is_read_through_events_k8s_io_converted() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", CORE, &core_event("web.1", "web"))).await;
    assert_eq!(created.status, 201, "{}", created.body);

    let got = send(&cp, get(&format!("{V1}/web.1"))).await;
    assert_eq!(got.status, 200, "{}", got.body);
    let event = &got.body;
    assert_eq!(event["apiVersion"], "events.k8s.io/v1");
    assert_eq!(event["kind"], "Event");
    assert_eq!(event["metadata"]["uid"], created.body["metadata"]["uid"]);
    assert_eq!(
        event["metadata"]["resourceVersion"],
        created.body["metadata"]["resourceVersion"]
    );
    assert_eq!(event["regarding"]["name"], "web");
    assert_eq!(event["note"], "Scaled up web");
    assert_eq!(
        event["deprecatedSource"]["component"],
        "deployment-controller"
    );
    assert_eq!(event["deprecatedCount"], 1);
    assert_eq!(event["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
    assert!(event.get("message").is_none() && event.get("involvedObject").is_none());
}

#[tokio::test]
async fn an_events_k8s_io_event_is_a_core_event_with_its_manager_recorded_per_version() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", V1, &v1_event("pod.1", "pod"))).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["apiVersion"], "events.k8s.io/v1");

    let core = send(&cp, get(&format!("{CORE}/pod.1"))).await;
    assert_eq!(core.status, 200, "{}", core.body);
    assert_eq!(core.body["apiVersion"], "v1");
    assert_eq!(core.body["involvedObject"]["name"], "pod");
    assert_eq!(core.body["message"], "Assigned pod");
    assert_eq!(core.body["reportingComponent"], "example.io/scheduler");
    assert_eq!(core.body["reportingInstance"], "scheduler-1");
    assert_eq!(
        core.body["metadata"]["uid"],
        created.body["metadata"]["uid"]
    );
    assert_eq!(
        managers(&core.body),
        [("unknown".to_owned(), "events.k8s.io/v1".to_owned())]
    );

    // A core/v1 writer adds its own entry, recorded with its version; both views show both.
    let patched = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{CORE}/pod.1?fieldManager=labeller"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"seen": "yes"}}}).to_string(),
        ),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let v1 = send(&cp, get(&format!("{V1}/pod.1"))).await;
    assert_eq!(v1.body["metadata"]["labels"]["seen"], "yes");
    // (Entries are ordered by time, then manager: compare them as a set.)
    let mut entries = managers(&v1.body);
    entries.sort();
    assert_eq!(
        entries,
        [
            ("labeller".to_owned(), "v1".to_owned()),
            ("unknown".to_owned(), "events.k8s.io/v1".to_owned()),
        ]
    );
    assert_eq!(
        v1.body["metadata"]["resourceVersion"],
        patched.body["metadata"]["resourceVersion"]
    );

    // A core/v1 writer changing `message` takes `note` from the events.k8s.io/v1 manager:
    // each manager is compared in its own version's fields.
    let rewritten = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{CORE}/pod.1?fieldManager=rewriter"),
            "application/merge-patch+json",
            json!({"message": "Reassigned pod"}).to_string(),
        ),
    )
    .await;
    assert_eq!(rewritten.status, 200, "{}", rewritten.body);
    let entry = |object: &Value, manager: &str| {
        object["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .find(|m| m["manager"] == manager)
            .map(|m| m["fieldsV1"].clone())
            .unwrap_or(Value::Null)
    };
    assert!(
        entry(&rewritten.body, "unknown").get("f:note").is_none(),
        "{}",
        rewritten.body
    );
    assert!(
        entry(&rewritten.body, "unknown")
            .get("f:regarding")
            .is_some()
    );
    assert!(
        entry(&rewritten.body, "rewriter")
            .get("f:message")
            .is_some()
    );
}

#[tokio::test]
async fn lists_page_and_select_across_views() {
    let cp = control_plane().await;
    for (name, about) in [("a", "web"), ("b", "db"), ("c", "web")] {
        let created = send(&cp, json("POST", CORE, &core_event(name, about))).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let created = send(&cp, json("POST", V1, &v1_event("d", "web"))).await;
    assert_eq!(created.status, 201, "{}", created.body);

    let all = send(&cp, get(V1)).await;
    assert_eq!(all.body["kind"], "EventList");
    assert_eq!(all.body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(names(&all.body), ["a", "b", "c", "d"]);
    assert!(
        all.body["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["apiVersion"] == "events.k8s.io/v1" && i.get("note").is_some())
    );

    let first = send(&cp, get(&format!("{V1}?limit=2"))).await;
    assert_eq!(names(&first.body), ["a", "b"]);
    let token = first.body["metadata"]["continue"]
        .as_str()
        .expect("a continue token");
    let rest = send(&cp, get(&format!("{V1}?limit=2&continue={token}"))).await;
    assert_eq!(names(&rest.body), ["c", "d"]);
    assert_eq!(rest.body["items"][0]["note"], "Scaled up web");

    // events.k8s.io/v1 field labels, translated to the core fields.
    let web = send(
        &cp,
        get(&format!("{V1}?fieldSelector=regarding.name%3Dweb")),
    )
    .await;
    assert_eq!(names(&web.body), ["a", "c", "d"]);
    let scheduler = send(
        &cp,
        get(&format!(
            "{V1}?fieldSelector=reportingController%3Dexample.io%2Fscheduler"
        )),
    )
    .await;
    assert_eq!(names(&scheduler.body), ["d"]);
    let by_source = send(
        &cp,
        get(&format!(
            "{V1}?fieldSelector=source%3Ddeployment-controller"
        )),
    )
    .await;
    assert_eq!(names(&by_source.body), ["a", "b", "c"]);
    // A paged, selected list read from the store (continue) selects the same way.
    let paged = send(
        &cp,
        get(&format!("{V1}?fieldSelector=regarding.name%3Dweb&limit=1")),
    )
    .await;
    assert_eq!(names(&paged.body), ["a"]);
    let token = paged.body["metadata"]["continue"]
        .as_str()
        .expect("continue");
    let paged = send(
        &cp,
        get(&format!(
            "{V1}?fieldSelector=regarding.name%3Dweb&continue={token}"
        )),
    )
    .await;
    assert_eq!(names(&paged.body), ["c", "d"]);
    // core/v1's labels are not events.k8s.io/v1's.
    let wrong = send(
        &cp,
        get(&format!("{V1}?fieldSelector=involvedObject.name%3Dweb")),
    )
    .await;
    assert_eq!(wrong.status, 400);
    assert_eq!(
        wrong.body["message"],
        "field label not supported: involvedObject.name"
    );
    let core = send(
        &cp,
        get(&format!("{CORE}?fieldSelector=involvedObject.name%3Dweb")),
    )
    .await;
    assert_eq!(names(&core.body), ["a", "c", "d"]);
    let labelled = send(&cp, get(&format!("{V1}?labelSelector=about%3Ddb"))).await;
    assert_eq!(names(&labelled.body), ["b"]);
}

#[tokio::test]
async fn watches_through_events_k8s_io_see_core_writes() {
    let cp = control_plane().await;
    send(&cp, json("POST", CORE, &core_event("old", "web"))).await;
    let (status, mut events) = open(
        &cp,
        &format!("{V1}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true"),
    )
    .await;
    assert_eq!(status, 200);
    let initial = next(&mut events).await;
    assert_eq!(initial["type"], "ADDED");
    assert_eq!(initial["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(initial["object"]["note"], "Scaled up web");
    let bookmark = next(&mut events).await;
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(bookmark["object"]["apiVersion"], "events.k8s.io/v1");

    let created = send(&cp, json("POST", CORE, &core_event("new", "db"))).await;
    let added = next(&mut events).await;
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["regarding"]["name"], "db");
    assert_eq!(
        added["object"]["metadata"]["resourceVersion"],
        created.body["metadata"]["resourceVersion"]
    );

    // A selected watch: only events about `db`.
    let rv = created.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let (_, mut selected) = open(
        &cp,
        &format!("{V1}?watch=true&resourceVersion={rv}&fieldSelector=regarding.name%3Ddb"),
    )
    .await;
    send(&cp, json("POST", CORE, &core_event("skip", "web"))).await;
    send(&cp, json("POST", V1, &v1_event("hit", "db"))).await;
    let hit = next(&mut selected).await;
    assert_eq!(hit["type"], "ADDED");
    assert_eq!(hit["object"]["metadata"]["name"], "hit");
    let deleted = send(&cp, json("DELETE", &format!("{CORE}/hit"), &json!({}))).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let gone = next(&mut selected).await;
    assert_eq!(gone["type"], "DELETED");
    assert_eq!(gone["object"]["note"], "Assigned db");
}

#[tokio::test]
async fn events_k8s_io_creates_are_validated_by_request_version() {
    let cp = control_plane().await;
    let mut event = v1_event("bad", "pod");
    event.as_object_mut().expect("object").remove("eventTime");
    event["deprecatedCount"] = 3.into();
    let refused = send(&cp, json("POST", V1, &event)).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Invalid");
    assert_eq!(
        refused.body["message"],
        "Event.events.k8s.io \"bad\" is invalid: [eventTime: Required value, count: Invalid value: \"\": needs to be unset]"
    );
    let fields: Vec<&str> = refused.body["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| c["field"].as_str().expect("field"))
        .collect();
    assert_eq!(fields, ["eventTime", "count"]);

    let mut long = v1_event("long", "pod");
    long["action"] = "a".repeat(129).into();
    let refused = send(&cp, json("POST", V1, &long)).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.body["message"],
        "Event.events.k8s.io \"long\" is invalid: action: Invalid value: \"\": can have at most 128 characters"
    );

    // The same old-style Event through core/v1 passes (legacy rules only).
    let legacy = send(&cp, json("POST", CORE, &core_event("ok", "web"))).await;
    assert_eq!(legacy.status, 201, "{}", legacy.body);
    // ... unless it is about an object in another namespace.
    let mut elsewhere = core_event("elsewhere", "web");
    elsewhere["involvedObject"]["namespace"] = "kube-system".into();
    let refused = send(&cp, json("POST", CORE, &elsewhere)).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.body["message"],
        "Event \"elsewhere\" is invalid: involvedObject.namespace: Invalid value: \"kube-system\": does not match event.namespace"
    );
    // Nothing refused was stored.
    let list = send(&cp, get(CORE)).await;
    assert_eq!(names(&list.body), ["ok"]);
}

#[tokio::test]
async fn events_k8s_io_updates_may_not_change_the_event() {
    let cp = control_plane().await;
    send(&cp, json("POST", CORE, &core_event("e", "web"))).await;
    let mut event = send(&cp, get(&format!("{V1}/e"))).await.body;
    event["note"] = "rewritten".into();
    let refused = send(&cp, json("PUT", &format!("{V1}/e"), &event)).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "Event.events.k8s.io \"e\" is invalid: message: Invalid value: \"rewritten\": field is immutable"
    );
    // Labels may change through events.k8s.io/v1; anything through core/v1.
    event["note"] = "Scaled up web".into();
    event["metadata"]["labels"]["extra"] = "1".into();
    let updated = send(&cp, json("PUT", &format!("{V1}/e"), &event)).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    let mut core = send(&cp, get(&format!("{CORE}/e"))).await.body;
    assert_eq!(core["metadata"]["labels"]["extra"], "1");
    core["count"] = 2.into();
    core["message"] = "Scaled up web again".into();
    let updated = send(&cp, json("PUT", &format!("{CORE}/e"), &core)).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    let v1 = send(&cp, get(&format!("{V1}/e"))).await.body;
    assert_eq!(v1["deprecatedCount"], 2);
    assert_eq!(v1["note"], "Scaled up web again");
}

#[tokio::test]
async fn every_patch_type_works_through_events_k8s_io() {
    let cp = control_plane().await;
    send(&cp, json("POST", CORE, &core_event("e", "web"))).await;
    let patch = |kind: &'static str, body: Value, query: &'static str| {
        with_body("PATCH", &format!("{V1}/e{query}"), kind, body.to_string())
    };
    let json_patch = send(
        &cp,
        patch(
            "application/json-patch+json",
            json!([{"op": "add", "path": "/metadata/labels/json", "value": "1"}]),
            "",
        ),
    )
    .await;
    assert_eq!(json_patch.status, 200, "{}", json_patch.body);
    let strategic = send(
        &cp,
        patch(
            "application/strategic-merge-patch+json",
            json!({"metadata": {"labels": {"strategic": "1"}}}),
            "",
        ),
    )
    .await;
    assert_eq!(strategic.status, 200, "{}", strategic.body);
    let applied = send(
        &cp,
        patch(
            "application/apply-patch+yaml",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                   "metadata": {"name": "e", "annotations": {"applied": "1"}}}),
            "?fieldManager=applier",
        ),
    )
    .await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(applied.body["note"], "Scaled up web");
    let core = send(&cp, get(&format!("{CORE}/e"))).await.body;
    assert_eq!(core["metadata"]["labels"]["json"], "1");
    assert_eq!(core["metadata"]["labels"]["strategic"], "1");
    assert_eq!(core["metadata"]["annotations"]["applied"], "1");
    assert_eq!(core["message"], "Scaled up web");
    assert!(managers(&core).contains(&("applier".to_owned(), "events.k8s.io/v1".to_owned())));
    // A JSON patch addresses the events.k8s.io/v1 fields.
    let immutable = send(
        &cp,
        patch(
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/note", "value": "x"}]),
            "",
        ),
    )
    .await;
    assert_eq!(immutable.status, 422, "{}", immutable.body);

    // Apply creates through events.k8s.io/v1 too.
    let created = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{V1}/applied?fieldManager=applier"),
            "application/apply-patch+yaml",
            v1_event("applied", "pod").to_string(),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let core = send(&cp, get(&format!("{CORE}/applied"))).await.body;
    assert_eq!(core["message"], "Assigned pod");
}

#[tokio::test]
async fn deletes_through_one_view_remove_the_event_from_both() {
    let cp = control_plane().await;
    for (name, about) in [("a", "web"), ("b", "db"), ("c", "web")] {
        send(&cp, json("POST", CORE, &core_event(name, about))).await;
    }
    let deleted = send(&cp, json("DELETE", &format!("{V1}/a"), &json!({}))).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(send(&cp, get(&format!("{CORE}/a"))).await.status, 404);
    let missing = send(&cp, get(&format!("{V1}/a"))).await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.body["message"],
        "events.events.k8s.io \"a\" not found"
    );

    let collection = send(
        &cp,
        json(
            "DELETE",
            &format!("{V1}?fieldSelector=regarding.name%3Dweb"),
            &json!({}),
        ),
    )
    .await;
    assert_eq!(collection.status, 200, "{}", collection.body);
    assert_eq!(names(&collection.body), ["c"]);
    assert_eq!(names(&send(&cp, get(CORE)).await.body), ["b"]);
}

#[tokio::test]
async fn kube_rs_sees_the_same_events_through_both_apis() {
    use k8s_openapi::api::core::v1::{Event as CoreEvent, ObjectReference};
    use k8s_openapi::api::events::v1::Event as EventV1;
    use kube::api::{Api, ListParams, PostParams};
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};

    let cp = control_plane().await;
    let client = flotilla_apiserver::client::in_process(&cp.server, admin());
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");

    // kube-runtime's recorder writes events.k8s.io/v1 (a create, then a merge patch of the series).
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "example-controller".into(),
            instance: Some("example-controller-0".into()),
        },
    );
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        name: Some("settings".into()),
        namespace: Some("default".into()),
        uid: Some("cm-uid".into()),
        ..Default::default()
    };
    let event = Event {
        type_: EventType::Warning,
        reason: "Invalid".into(),
        note: Some("settings are invalid".into()),
        action: "Validate".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &reference)
        .await
        .expect("first publish");
    recorder
        .publish(&event, &reference)
        .await
        .expect("repeat publish");

    let listed = core.list(&ListParams::default()).await.expect("core list");
    assert_eq!(listed.items.len(), 1);
    let seen = &listed.items[0];
    assert_eq!(seen.message.as_deref(), Some("settings are invalid"));
    assert_eq!(seen.involved_object.name.as_deref(), Some("settings"));
    assert_eq!(
        seen.reporting_component.as_deref(),
        Some("example-controller")
    );
    assert_eq!(seen.series.as_ref().and_then(|s| s.count), Some(2));
    assert_eq!(seen.type_.as_deref(), Some("Warning"));

    // A core/v1 Event (what flotilla's controllers write) read through events.k8s.io/v1.
    let legacy: CoreEvent = serde_json::from_value(core_event("web.1", "web")).expect("typed");
    let created = core
        .create(&PostParams::default(), &legacy)
        .await
        .expect("core create");
    let read = v1.get("web.1").await.expect("events.k8s.io get");
    assert_eq!(read.metadata.uid, created.metadata.uid);
    assert_eq!(
        read.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(read.note.as_deref(), Some("Scaled up web"));
    assert_eq!(read.deprecated_count, Some(1));
    assert_eq!(
        read.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("web")
    );
    let selected = v1
        .list(&ListParams::default().fields("regarding.name=web"))
        .await
        .expect("selected list");
    assert_eq!(selected.items.len(), 1);
    assert_eq!(selected.items[0].metadata.name.as_deref(), Some("web.1"));
}

#[tokio::test]
async fn both_views_print_the_event_columns_kubectl_shows() {
    let cp = control_plane().await;
    send(&cp, json("POST", CORE, &core_event("a", "web"))).await;
    send(&cp, json("POST", V1, &v1_event("b", "pod"))).await;
    let table = |uri: &str| {
        let mut request = get(uri);
        request.headers_mut().insert(
            http::header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
                .parse()
                .expect("header"),
        );
        request
    };
    let core = send(&cp, table(CORE)).await.body;
    let v1 = send(&cp, table(V1)).await.body;
    assert_eq!(v1["kind"], "Table");
    let columns: Vec<(&str, i64)> = v1["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("name"),
                c["priority"].as_i64().expect("priority"),
            )
        })
        .collect();
    assert_eq!(
        columns,
        [
            ("Last Seen", 0),
            ("Type", 0),
            ("Reason", 0),
            ("Object", 0),
            ("Subobject", 1),
            ("Source", 1),
            ("Message", 0),
            ("First Seen", 1),
            ("Count", 1),
            ("Name", 1),
        ]
    );
    let cells = |table: &Value, row: usize| table["rows"][row]["cells"].clone();
    assert_eq!(cells(&core, 0), cells(&v1, 0));
    assert_eq!(cells(&core, 1), cells(&v1, 1));
    let legacy = cells(&v1, 0);
    assert_eq!(legacy[1], "Normal");
    assert_eq!(legacy[2], "ScalingReplicaSet");
    assert_eq!(legacy[3], "deployment/web");
    assert_eq!(legacy[5], "deployment-controller");
    assert_eq!(legacy[6], "Scaled up web");
    assert_eq!(legacy[8], 1);
    let new_style = cells(&v1, 1);
    assert_eq!(new_style[3], "pod/pod");
    assert_eq!(new_style[5], "example.io/scheduler, scheduler-1");
    assert_eq!(new_style[6], "Assigned pod");
    assert_eq!(new_style[9], "b");
}

#[tokio::test]
async fn a_put_of_an_event_that_does_not_exist_creates_it_through_either_view() {
    let cp = control_plane().await;
    // client-go's legacy recorder updates an Event it believes exists; kube creates it.
    let created = send(
        &cp,
        json("PUT", &format!("{CORE}/new.1"), &core_event("new.1", "web")),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["metadata"]["name"], "new.1");
    assert!(created.body["metadata"]["uid"].is_string());
    let got = send(&cp, get(&format!("{CORE}/new.1"))).await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["message"], "Scaled up web");

    // A second PUT of the same name updates it.
    let mut changed = core_event("new.1", "web");
    changed["count"] = json!(2);
    let updated = send(&cp, json("PUT", &format!("{CORE}/new.1"), &changed)).await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(updated.body["count"], 2);
    assert_eq!(
        updated.body["metadata"]["uid"],
        created.body["metadata"]["uid"]
    );

    let v1 = send(
        &cp,
        json("PUT", &format!("{V1}/new.2"), &v1_event("new.2", "pod")),
    )
    .await;
    assert_eq!(v1.status, 201, "{}", v1.body);
    assert_eq!(v1.body["apiVersion"], "events.k8s.io/v1");
    let core = send(&cp, get(&format!("{CORE}/new.2"))).await;
    assert_eq!(core.status, 200, "{}", core.body);
    assert_eq!(core.body["message"], "Assigned pod");
}

#[tokio::test]
async fn a_put_of_another_kind_that_does_not_exist_is_not_found() {
    let cp = control_plane().await;
    let config = json!({"metadata": {"name": "absent"}, "data": {"a": "b"}});
    let put = send(
        &cp,
        json(
            "PUT",
            "/api/v1/namespaces/default/configmaps/absent",
            &config,
        ),
    )
    .await;
    assert_eq!(put.status, 404, "{}", put.body);
    let got = send(&cp, get("/api/v1/namespaces/default/configmaps/absent")).await;
    assert_eq!(got.status, 404);
}
