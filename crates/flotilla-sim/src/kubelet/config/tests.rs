use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::{Value, json};

use super::{Blocked, Sources};
use crate::informer::Cache;
use crate::pod::{Pod, WirePod};

fn pod(spec: Value) -> Pod {
    let wire: WirePod = serde_json::from_value(
        json!({"metadata": {"name": "app-1", "namespace": "shop", "uid": "u1"}, "spec": spec}),
    )
    .expect("a pod");
    wire.into()
}

fn sources(config_maps: Value, secrets: Value) -> Sources {
    Sources {
        config_maps: Cache::of(
            serde_json::from_value::<Vec<ConfigMap>>(config_maps).expect("config maps"),
        ),
        secrets: Cache::of(serde_json::from_value::<Vec<Secret>>(secrets).expect("secrets")),
    }
}

fn containers(pairs: &[(&str, &str)]) -> Option<Blocked> {
    Some(Blocked::Containers(
        pairs
            .iter()
            .map(|(c, m)| ((*c).to_owned(), (*m).to_owned()))
            .collect::<BTreeMap<_, _>>(),
    ))
}

/// The containers of the propagateDeps scenario: `envFrom` a ConfigMap, a Secret volume.
fn app() -> Pod {
    pod(json!({
        "containers": [
            {"name": "app", "image": "nginx", "envFrom": [{"configMapRef": {"name": "app-config"}}]},
            {"name": "sidecar", "image": "busybox"},
        ],
        "volumes": [{"name": "token", "secret": {"secretName": "app-token"}}],
    }))
}

#[test]
fn a_missing_volume_source_keeps_the_pod_creating() {
    let none = sources(json!([]), json!([]));
    assert_eq!(
        none.blocked(&app()),
        Some(Blocked::Volume(
            r#"MountVolume.SetUp failed for volume "token" : secret "app-token" not found"#.into()
        ))
    );
    // The Secret arrives; the ConfigMap is still missing: only the container that needs it waits.
    let secret_only = sources(
        json!([]),
        json!([{"metadata": {"name": "app-token", "namespace": "shop"}, "data": {"token": "czNjcjN0"}}]),
    );
    assert_eq!(
        secret_only.blocked(&app()),
        containers(&[("app", r#"configmap "app-config" not found"#)])
    );
    // Both there: nothing blocks. Objects of another namespace do not count.
    let both = sources(
        json!([{"metadata": {"name": "app-config", "namespace": "shop"}, "data": {"MODE": "production"}}]),
        json!([{"metadata": {"name": "app-token", "namespace": "shop"}}]),
    );
    assert_eq!(both.blocked(&app()), None);
    let elsewhere = sources(
        json!([{"metadata": {"name": "app-config", "namespace": "other"}}]),
        json!([{"metadata": {"name": "app-token", "namespace": "shop"}}]),
    );
    assert!(matches!(
        elsewhere.blocked(&app()),
        Some(Blocked::Containers(_))
    ));
}

#[test]
fn env_values_need_their_object_and_key_unless_optional() {
    let spec =
        |env: Value| pod(json!({"containers": [{"name": "c", "image": "busybox", "env": env}]}));
    let cluster = sources(
        json!([{"metadata": {"name": "cfg", "namespace": "shop"}, "data": {"MODE": "x"}}]),
        json!([{"metadata": {"name": "creds", "namespace": "shop"}, "data": {"user": "dQ=="}}]),
    );
    let cases = [
        (
            json!([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "MODE"}}}]),
            None,
        ),
        (
            json!([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "LEVEL"}}}]),
            Some("couldn't find key LEVEL in ConfigMap shop/cfg"),
        ),
        (
            json!([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "LEVEL", "optional": true}}}]),
            None,
        ),
        (
            json!([{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "K"}}}]),
            Some(r#"configmap "gone" not found"#),
        ),
        (
            json!([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "user"}}}]),
            None,
        ),
        (
            json!([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}}]),
            Some("couldn't find key password in Secret shop/creds"),
        ),
        (
            json!([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "vault", "key": "k", "optional": true}}}]),
            None,
        ),
        (
            json!([{"name": "A", "valueFrom": {"secretKeyRef": {"name": "vault", "key": "k"}}}]),
            Some(r#"secret "vault" not found"#),
        ),
        // The first failing value is the one reported.
        (
            json!([{"name": "A", "value": "literal"},
                   {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                   {"name": "C", "valueFrom": {"secretKeyRef": {"name": "vault", "key": "k"}}},
                   {"name": "D", "valueFrom": {"configMapKeyRef": {"name": "gone", "key": "k"}}}]),
            Some(r#"secret "vault" not found"#),
        ),
    ];
    for (env, expected) in cases {
        let got = cluster.blocked(&spec(env.clone()));
        let expected = expected.and_then(|m| containers(&[("c", m)]));
        assert_eq!(got, expected, "{env}");
    }
}

#[test]
fn optional_sources_and_projected_volumes() {
    let none = sources(json!([]), json!([]));
    let optional = pod(json!({
        "containers": [{"name": "c", "image": "busybox",
            "envFrom": [{"secretRef": {"name": "s", "optional": true}}]}],
        "volumes": [{"name": "v", "configMap": {"name": "cm", "optional": true}}],
    }));
    assert_eq!(none.blocked(&optional), None);
    let projected = pod(json!({
        "containers": [{"name": "c", "image": "busybox"}],
        "volumes": [{"name": "all", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token"}},
            {"configMap": {"name": "bundle"}},
        ]}}],
    }));
    assert_eq!(
        none.blocked(&projected),
        Some(Blocked::Volume(
            r#"MountVolume.SetUp failed for volume "all" : configmap "bundle" not found"#.into()
        ))
    );
}
