//! Property tests over the request decoders and patch engines through the HTTP layer: arbitrary
//! bodies and patches get a Status (never a 5xx, never a panic) and the server keeps serving.

use http::StatusCode;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::*;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z$/.]{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("metadata".to_owned()),
                    Just("spec".to_owned()),
                    Just("name".to_owned()),
                    Just("$patch".to_owned()),
                    Just("containers".to_owned()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bodies_get_a_status_and_never_a_server_error(
        body in json_value(),
        raw in prop::collection::vec(any::<u8>(), 0..64),
        content_type in prop::sample::select(CONTENT_TYPES),
        use_raw in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let cp = control_plane().await;
            send(&cp, json("POST", "/apis/apps/v1/namespaces/default/deployments", &deployment("web", 1))).await;
            let bytes = if use_raw { raw.clone() } else { body.to_string().into_bytes() };
            for (method, uri) in [
                ("POST", "/apis/apps/v1/namespaces/default/deployments"),
                ("PUT", "/apis/apps/v1/namespaces/default/deployments/web"),
                ("PATCH", "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=fuzz"),
            ] {
                let reply = send(&cp, with_body(method, uri, content_type, bytes.clone())).await;
                prop_assert!(
                    !reply.status.is_server_error(),
                    "{method} {content_type}: {} {}", reply.status, reply.body
                );
                if !reply.status.is_success() {
                    prop_assert_eq!(&reply.body["kind"], &json!("Status"));
                }
            }
            let alive = send(&cp, get("/apis/apps/v1/namespaces/default/deployments/web")).await;
            prop_assert_eq!(alive.status, StatusCode::OK);
            Ok(())
        })?;
    }
}
