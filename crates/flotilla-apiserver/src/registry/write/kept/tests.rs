use serde_json::json;

use super::{Kept, put_back, take};

const STORED: &[u8] = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":[{"manager":"cp","operation":"Update","fieldsV1":{"f:spec":{"f:replicas":{}}}}],"uid":"u"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":1}}"#;

#[test]
fn entries_are_cut_out_and_put_back_byte_for_byte() {
    let (without, kept) = take(STORED, true, false).expect("entries taken");
    assert!(kept.spec.is_none());
    let decoded: serde_json::Value = serde_json::from_slice(&without).expect("JSON");
    assert_eq!(decoded["metadata"]["managedFields"], json!(0));
    assert_eq!(decoded["metadata"]["uid"], "u");
    assert_eq!(decoded["spec"]["replicas"], 2);
    let (back, shift) = put_back(&without, &kept).expect("placeholder found");
    assert_eq!(back, STORED.to_vec());
    let raw = kept.managed_fields.as_ref().expect("kept");
    // A position after the entries moves by what they add; one before them does not.
    assert_eq!(shift(without.len()), without.len() + raw.len() - 1);
    assert_eq!(shift(1), 1);
}

#[test]
fn spec_and_entries_are_cut_out_together_and_put_back_byte_for_byte() {
    let (without, kept) = take(STORED, true, true).expect("members taken");
    let decoded: serde_json::Value = serde_json::from_slice(&without).expect("JSON");
    assert_eq!(decoded["metadata"]["managedFields"], json!(0));
    assert_eq!(decoded["spec"], json!({}));
    assert_eq!(decoded["status"]["replicas"], 1);
    let (back, _) = put_back(&without, &kept).expect("placeholders found");
    assert_eq!(back, STORED.to_vec());

    // Decoded back into the object: the whole object as stored.
    let mut object = decoded;
    kept.restore(&mut object).expect("restored");
    let stored: serde_json::Value = serde_json::from_slice(STORED).expect("JSON");
    assert_eq!(object, stored);
}

#[test]
fn spec_alone_is_kept_for_a_tracked_writer() {
    let (without, kept) = take(STORED, false, true).expect("spec taken");
    assert!(kept.managed_fields.is_none());
    let decoded: serde_json::Value = serde_json::from_slice(&without).expect("JSON");
    assert_eq!(decoded["spec"], json!({}));
    assert_eq!(decoded["metadata"]["managedFields"][0]["manager"], "cp");
    assert_eq!(put_back(&without, &kept).expect("found").0, STORED.to_vec());
}

#[test]
fn a_spec_before_metadata_shifts_the_positions_after_it() {
    let stored = br#"{"spec":{"replicas":3},"metadata":{"name":"web"},"status":{}}"#;
    let (without, kept) = take(stored, false, true).expect("spec taken");
    assert_eq!(
        without,
        br#"{"spec":{},"metadata":{"name":"web"},"status":{}}"#.to_vec()
    );
    let (back, shift) = put_back(&without, &kept).expect("found");
    assert_eq!(back, stored.to_vec());
    let name_at = memchr::memmem::find(&without, b"\"web\"").expect("name");
    assert_eq!(
        &back[shift(name_at)..shift(name_at) + 5],
        &without[name_at..name_at + 5]
    );
}

#[test]
fn defaulting_of_the_placeholder_is_dropped() {
    let (without, kept) = take(STORED, false, true).expect("spec taken");
    let mut object: serde_json::Value = serde_json::from_slice(&without).expect("JSON");
    object["spec"]["strategy"] = json!({"type": "RollingUpdate"});
    kept.reset_spec(&mut object);
    assert_eq!(object["spec"], json!({}));
    let encoded = serde_json::to_vec(&object).expect("JSON");
    assert_eq!(put_back(&encoded, &kept).expect("found").0, STORED.to_vec());
}

#[test]
fn nothing_kept_takes_the_whole_path() {
    let owns_status = br#"{"metadata":{"name":"web","managedFields":[{"manager":"m","fieldsV1":{"f:status":{"f:replicas":{}}}}]},"status":{}}"#;
    assert!(take(owns_status, true, true).is_none());
    let empty = br#"{"metadata":{"name":"web","managedFields":[ ]},"status":{}}"#;
    assert!(take(empty, true, false).is_none());
    let absent = br#"{"metadata":{"name":"web"},"status":{}}"#;
    assert!(take(absent, true, true).is_none());
    let not_a_list = br#"{"metadata":{"name":"web","managedFields":{}},"status":{}}"#;
    assert!(take(not_a_list, true, false).is_none());
    let spec_not_an_object = br#"{"metadata":{"name":"web"},"spec":[1],"status":{}}"#;
    assert!(take(spec_not_an_object, false, true).is_none());
    assert!(take(STORED, false, false).is_none());
}

#[test]
fn a_moved_placeholder_is_refused() {
    let entries = Kept {
        managed_fields: Some(bytes::Bytes::from_static(b"[{}]")),
        spec: None,
    };
    assert!(
        put_back(
            br#"{"metadata":{"name":"web","managedFields":[]}}"#,
            &entries
        )
        .is_none()
    );
    let spec = Kept {
        managed_fields: None,
        spec: Some(bytes::Bytes::from_static(b"{\"a\":1}")),
    };
    assert!(put_back(br#"{"metadata":{"name":"web"},"spec":{"b":1}}"#, &spec).is_none());
    assert!(put_back(br#"{"metadata":{"name":"web"}}"#, &spec).is_none());
}
