use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use super::*;

fn meta_path() -> FieldPath {
    FieldPath::new("metadata")
}

fn messages(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn subdomain_error_is_rendered_exactly_like_kubernetes() {
    let errs = validate_object_meta(
        &ObjectMeta {
            name: Some("Foo_bar".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        true,
        NameRule::Dns1123Subdomain,
        &meta_path(),
    );
    assert_eq!(
        messages(&errs),
        [
            r#"metadata.name: Invalid value: "Foo_bar": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#
        ]
    );
    assert_eq!(errs[0].kind.reason(), "FieldValueInvalid");
    let cause = errs[0].to_status_cause();
    assert_eq!(cause.field.as_deref(), Some("metadata.name"));
    assert_eq!(cause.reason.as_deref(), Some("FieldValueInvalid"));
    assert!(
        cause
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("Invalid value: \"Foo_bar\": a lowercase"))
    );
}

#[test]
fn name_formats_accept_and_reject_like_upstream() {
    for ok in ["a", "a-b", "0", "a.b", "a1.b-2.c"] {
        assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
    }
    for bad in ["", "-a", "a-", "A", "a..b", ".a", "a_b"] {
        assert_eq!(is_dns1123_subdomain(bad).len(), 1, "{bad}");
    }
    assert_eq!(
        is_dns1123_subdomain(&"a".repeat(254)),
        ["must be no more than 253 characters"]
    );
    assert!(is_dns1123_subdomain(&format!("{}.{}", "a".repeat(63), "b".repeat(63))).is_empty());

    assert!(is_dns1123_label("my-name").is_empty());
    assert_eq!(is_dns1123_label("a.b"), ["must not contain dots"]);
    assert_eq!(
        is_dns1123_label("a_b"),
        [
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        is_dns1123_label(&"a".repeat(64)),
        ["must be no more than 63 characters"]
    );

    assert!(is_dns1035_label("web").is_empty());
    assert_eq!(
        is_dns1035_label("1web"),
        [
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        ]
    );

    assert!(is_valid_path_segment_name("Any_Thing:x").is_empty());
    assert_eq!(is_valid_path_segment_name(".."), ["may not be '..'"]);
    assert_eq!(
        is_valid_path_segment_name("a/b%c"),
        ["may not contain '/'", "may not contain '%'"]
    );
    assert_eq!(is_valid_path_segment_prefix("."), Vec::<String>::new());
}

#[test]
fn qualified_names_and_label_values() {
    for ok in [
        "app",
        "MyName",
        "my.name",
        "123-abc",
        "example.com/MyName",
        "a/b",
    ] {
        assert!(is_qualified_name(ok).is_empty(), "{ok}");
    }
    assert_eq!(is_qualified_name("/a"), ["prefix part must be non-empty"]);
    assert_eq!(
        is_qualified_name(&format!("{}/a", "b".repeat(254))),
        ["prefix part must be no more than 253 characters"]
    );
    assert_eq!(
        is_qualified_name("a/").len(),
        2,
        "empty name part: non-empty and regex messages"
    );
    assert_eq!(
        is_qualified_name("a/").first().map(String::as_str),
        Some("name part must be non-empty")
    );
    assert_eq!(
        is_qualified_name(&"n".repeat(64)),
        ["name part must be no more than 63 characters"]
    );
    assert!(is_qualified_name("a/b/c")[0].starts_with("a qualified name must consist of"));
    assert!(
        is_qualified_name("Bad_Prefix/x")[0]
            .starts_with("prefix part a lowercase RFC 1123 subdomain")
    );

    assert!(is_valid_label_value("").is_empty());
    assert!(is_valid_label_value("my_value.1").is_empty());
    assert_eq!(is_valid_label_value("-x").len(), 1);
    assert_eq!(
        is_valid_label_value(&"v".repeat(64)),
        ["must be no more than 63 characters"]
    );
}

#[test]
fn generate_name_truncates_the_base_and_allows_a_trailing_dash() {
    let name = generate_name("web-", [0, 1, 2, 26, 27]);
    assert_eq!(name, "web-bcd9b");
    let long = "x".repeat(70);
    let generated = generate_name(&long, [5; 5]);
    assert_eq!(generated.len(), 63);
    assert!(generated.starts_with(&"x".repeat(MAX_GENERATED_NAME_LENGTH)));
    assert!(NameRule::Dns1123Subdomain.check("web-", true).is_empty());
    assert!(!NameRule::Dns1123Subdomain.check("web-", false).is_empty());
    assert!(NameRule::Dns1035Label.check("svc-", true).is_empty());
    assert!(!NameRule::Dns1123Label.check("a.b-", true).is_empty());
    assert!(NameRule::PathSegment.check(".", true).is_empty());
    assert!(!NameRule::PathSegment.check(".", false).is_empty());
}

#[test]
fn object_meta_create_checks_every_part_in_upstream_order() {
    let meta = ObjectMeta {
        generate_name: Some("Bad_".into()),
        namespace: None,
        generation: Some(-1),
        labels: Some(BTreeMap::from([
            ("bad key".into(), "ok".into()),
            ("k".into(), "-bad".into()),
        ])),
        annotations: Some(BTreeMap::from([
            ("Example.COM/Key".into(), "x".into()),
            ("a".into(), "v".repeat(300 * 1024)),
        ])),
        finalizers: Some(vec!["orphan".into(), "foregroundDeletion".into()]),
        owner_references: Some(vec![OwnerReference {
            api_version: "apps/".into(),
            kind: "ReplicaSet".into(),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let errs = validate_object_meta(&meta, true, NameRule::Dns1123Subdomain, &meta_path());
    let fields: Vec<(&str, FieldErrorKind)> =
        errs.iter().map(|e| (e.field.as_str(), e.kind)).collect();
    assert_eq!(
        fields,
        [
            ("metadata.generateName", FieldErrorKind::Invalid),
            ("metadata.name", FieldErrorKind::Required),
            ("metadata.namespace", FieldErrorKind::Required),
            ("metadata.generation", FieldErrorKind::Invalid),
            ("metadata.labels", FieldErrorKind::Invalid),
            ("metadata.labels", FieldErrorKind::Invalid),
            ("metadata.annotations", FieldErrorKind::TooLong),
            (
                "metadata.ownerReferences.apiVersion",
                FieldErrorKind::Invalid
            ),
            ("metadata.ownerReferences.name", FieldErrorKind::Invalid),
            ("metadata.ownerReferences.uid", FieldErrorKind::Invalid),
            ("metadata.finalizers", FieldErrorKind::Invalid),
        ]
    );
    let text = messages(&errs);
    assert_eq!(
        text[1],
        "metadata.name: Required value: name or generateName is required"
    );
    assert_eq!(text[2], "metadata.namespace: Required value");
    assert_eq!(
        text[3],
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(
        text[6],
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    );
    assert_eq!(
        text[7],
        "metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty"
    );
    assert_eq!(
        text[10],
        "metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set"
    );
}

#[test]
fn object_meta_namespace_rules() {
    let cluster_scoped = ObjectMeta {
        name: Some("n".into()),
        namespace: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(
        messages(&validate_object_meta(
            &cluster_scoped,
            false,
            NameRule::Dns1123Label,
            &meta_path()
        )),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    let bad_ns = ObjectMeta {
        name: Some("n".into()),
        namespace: Some("a.b".into()),
        ..Default::default()
    };
    assert_eq!(
        messages(&validate_object_meta(
            &bad_ns,
            true,
            NameRule::Dns1123Subdomain,
            &meta_path()
        )),
        ["metadata.namespace: Invalid value: \"a.b\": must not contain dots"]
    );
    let ok = ObjectMeta {
        name: Some("web".into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    assert!(validate_object_meta(&ok, true, NameRule::Dns1035Label, &meta_path()).is_empty());
}

#[test]
fn owner_references_allow_one_controller_and_no_event_owner() {
    let owner = |kind: &str, name: &str, controller: bool| OwnerReference {
        api_version: "v1".into(),
        kind: kind.into(),
        name: name.into(),
        uid: "u".into(),
        controller: Some(controller),
        block_owner_deletion: None,
    };
    let errs = validate_owner_references(
        &[
            owner("Event", "e", false),
            owner("A", "a", true),
            owner("B", "b", true),
        ],
        &FieldPath::new("metadata").child("ownerReferences"),
    );
    assert_eq!(errs.len(), 2);
    assert!(
        errs[0]
            .to_string()
            .ends_with(": /v1, Kind=Event is disallowed from being an owner")
    );
    assert!(errs[1].to_string().ends_with(
        "Only one reference can have Controller set to true. Found \"true\" in references for A/a and B/b"
    ));
}

#[test]
fn object_meta_update_protects_identity() {
    let old = ObjectMeta {
        name: Some("web".into()),
        namespace: Some("default".into()),
        uid: Some("u1".into()),
        generation: Some(3),
        finalizers: Some(vec!["a/b".into()]),
        deletion_timestamp: Some(Time(
            "2024-05-01T10:00:00Z".parse().expect("valid timestamp"),
        )),
        ..Default::default()
    };
    let new = ObjectMeta {
        name: Some("web2".into()),
        uid: Some("u1".into()),
        generation: Some(2),
        finalizers: Some(vec!["a/b".into(), "z/new".into(), "c/new".into()]),
        deletion_timestamp: old.deletion_timestamp.clone(),
        ..Default::default()
    };
    assert_eq!(
        messages(&validate_object_meta_update(&new, &old, &meta_path())),
        [
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"c/new\", \"z/new\"}",
            "metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
            "metadata.generation: Invalid value: 2: must not be decremented",
            "metadata.name: Invalid value: \"web2\": field is immutable",
            "metadata.namespace: Invalid value: \"\": field is immutable",
        ]
    );
    let mut moved = old.clone();
    moved.resource_version = Some("7".into());
    moved.deletion_timestamp = Some(Time(
        "2024-05-02T11:30:00Z".parse().expect("valid timestamp"),
    ));
    assert_eq!(
        messages(&validate_object_meta_update(&moved, &old, &meta_path())),
        [
            "metadata.deletionTimestamp: Invalid value: 2024-05-02 11:30:00 +0000 UTC: field is immutable"
        ]
    );
}

#[test]
fn field_error_rendering_matches_go() {
    let path = FieldPath::new("spec")
        .child("containers")
        .index(0)
        .child("ports")
        .key("http");
    assert_eq!(path.as_str(), "spec.containers[0].ports[http]");
    assert_eq!(
        FieldError::required(&path, "").to_string(),
        "spec.containers[0].ports[http]: Required value"
    );
    assert_eq!(
        FieldError::duplicate("f", "x").to_string(),
        "f: Duplicate value: \"x\""
    );
    assert_eq!(
        FieldError::not_found("f", 3i64).to_string(),
        "f: Not found: 3"
    );
    assert_eq!(
        FieldError::not_supported("spec.policy", "Foo", &["Always", "Never"]).to_string(),
        "spec.policy: Unsupported value: \"Foo\": supported values: \"Always\", \"Never\""
    );
    assert_eq!(
        FieldError::forbidden("f", "nope").to_string(),
        "f: Forbidden: nope"
    );
    assert_eq!(
        FieldError::too_long("f", None).to_string(),
        "f: Too long: value is too long"
    );
    assert_eq!(
        FieldError::too_many("f", Some(5), Some(3)).to_string(),
        "f: Too many: 5: must have at most 3 items"
    );
    assert_eq!(
        FieldError::too_many("f", None, None).to_string(),
        "f: Too many: has too many items"
    );
    assert_eq!(
        FieldError::internal("f", "boom").to_string(),
        "f: Internal error: boom"
    );
    assert_eq!(
        FieldError::type_invalid("f", true, "").to_string(),
        "f: Invalid value: true"
    );
    assert_eq!(
        FieldError::invalid("f", BadValue::Null, "d").to_string(),
        "f: Invalid value: null: d"
    );
    assert_eq!(
        FieldError::invalid("f", "a\"b\\c\n\u{1}é", "d").to_string(),
        "f: Invalid value: \"a\\\"b\\\\c\\n\\x01é\": d"
    );
    let reasons: Vec<&str> = [
        FieldErrorKind::NotFound,
        FieldErrorKind::Required,
        FieldErrorKind::Duplicate,
        FieldErrorKind::Invalid,
        FieldErrorKind::NotSupported,
        FieldErrorKind::Forbidden,
        FieldErrorKind::TooLong,
        FieldErrorKind::TooMany,
        FieldErrorKind::Internal,
        FieldErrorKind::TypeInvalid,
    ]
    .iter()
    .map(|k| k.reason())
    .collect();
    assert_eq!(
        reasons,
        [
            "FieldValueNotFound",
            "FieldValueRequired",
            "FieldValueDuplicate",
            "FieldValueInvalid",
            "FieldValueNotSupported",
            "FieldValueForbidden",
            "FieldValueTooLong",
            "FieldValueTooMany",
            "InternalError",
            "FieldValueTypeInvalid"
        ]
    );
}

#[test]
fn aggregate_and_invalid_messages_match_upstream() {
    let a = FieldError::required("metadata.name", "");
    let b = FieldError::invalid("spec.replicas", -1i64, "must be greater than or equal to 0");
    assert_eq!(aggregate_message(&[]), "");
    assert_eq!(
        aggregate_message(&[a.clone(), a.clone()]),
        "metadata.name: Required value"
    );
    assert_eq!(
        aggregate_message(&[a.clone(), b.clone(), a.clone()]),
        "[metadata.name: Required value, spec.replicas: Invalid value: -1: must be greater than or equal to 0]"
    );
    assert_eq!(
        invalid_message("apps", "Deployment", "web", &[b]),
        "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(
        invalid_message("", "ConfigMap", "c", &[]),
        "ConfigMap \"c\" is invalid"
    );
}
