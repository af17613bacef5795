use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{MemoryStore, Store};
use serde_json::{Value, json};

use super::*;

/// A watch cache over a memory store holding `objects` (storage key, JSON).
async fn cache_with(store: &Arc<MemoryStore>, objects: &[(&str, Value)]) -> Arc<WatchCache> {
    for (key, value) in objects {
        put(store, key, value).await;
    }
    let cache = WatchCache::new(1000);
    tokio::spawn(cache.clone().run(store.clone() as Arc<dyn Store>));
    let revision = store.status().await.expect("status").revision;
    assert!(cache.wait_for(revision, Duration::from_secs(10)).await);
    cache
}

/// Stores `value` under `key` with the name (and namespace) the key implies.
async fn put(store: &Arc<MemoryStore>, key: &str, value: &Value) {
    let path: Vec<&str> = key
        .trim_start_matches("/registry/rbac.authorization.k8s.io/")
        .split('/')
        .collect();
    let mut value = value.clone();
    value["metadata"] = match path.as_slice() {
        [_, ns, name] => json!({"name": name, "namespace": ns}),
        [_, name] => json!({"name": name}),
        _ => panic!("unexpected key {key}"),
    };
    let txn = flotilla_store::Txn::new().and_then([flotilla_store::Op::put(
        Bytes::from(key.to_owned()),
        Bytes::from(value.to_string()),
    )]);
    store.txn(txn).await.expect("put");
}

fn role(verbs: &[&str], resources: &[&str], names: &[&str]) -> Value {
    json!({"rules": [{"verbs": verbs, "apiGroups": [""], "resources": resources, "resourceNames": names}]})
}

fn binding(kind: &str, role: &str, subjects: Value) -> Value {
    json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}, "subjects": subjects})
}

fn sa_user(ns: &str, name: &str) -> UserInfo {
    UserInfo {
        name: format!("system:serviceaccount:{ns}:{name}"),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{ns}"),
            "system:authenticated".into(),
        ],
        ..UserInfo::default()
    }
}

fn get<'a>(resource: &'a str, name: &'a str) -> Request<'a> {
    Request::Resource {
        verb: "get",
        group: "",
        resource,
        subresource: "",
        name,
    }
}

const CR: &str = "/registry/rbac.authorization.k8s.io/clusterroles/";
const CRB: &str = "/registry/rbac.authorization.k8s.io/clusterrolebindings/";
const R: &str = "/registry/rbac.authorization.k8s.io/roles/";
const RB: &str = "/registry/rbac.authorization.k8s.io/rolebindings/";

#[tokio::test]
async fn role_bindings_grant_only_in_their_namespace() {
    let store = Arc::new(MemoryStore::new());
    let cache = cache_with(
        &store,
        &[
            (&format!("{CR}pod-reader"), role(&["get"], &["pods"], &[])),
            (
                &format!("{RB}team-a/read"),
                binding(
                    "ClusterRole",
                    "pod-reader",
                    json!([{"kind": "ServiceAccount", "name": "bot"}]),
                ),
            ),
            (
                &format!("{R}team-a/cm"),
                role(&["get"], &["configmaps"], &["settings"]),
            ),
            (
                &format!("{RB}team-a/cm"),
                binding(
                    "Role",
                    "cm",
                    json!([{"kind": "Group", "name": "system:serviceaccounts:team-a"}]),
                ),
            ),
        ],
    )
    .await;
    let rbac = Rbac::new(cache);
    let bot = sa_user("team-a", "bot");
    assert_eq!(
        rbac.authorize(&bot, "team-a", &get("pods", "p")),
        Verdict::Allowed(
            r#"RBAC: allowed by RoleBinding "read/team-a" of ClusterRole "pod-reader" to ServiceAccount "bot/team-a""#
                .into()
        )
    );
    assert_eq!(
        rbac.authorize(&bot, "team-b", &get("pods", "p")),
        Verdict::NoOpinion(vec![])
    );
    assert_eq!(
        rbac.authorize(&bot, "", &get("pods", "p")),
        Verdict::NoOpinion(vec![])
    );
    // The same service account name in another namespace is another subject.
    let other = sa_user("team-b", "bot");
    assert_eq!(
        rbac.authorize(&other, "team-a", &get("pods", "p")),
        Verdict::NoOpinion(vec![])
    );
    // A Role with resourceNames, bound to a group.
    assert!(matches!(
        rbac.authorize(&bot, "team-a", &get("configmaps", "settings")),
        Verdict::Allowed(_)
    ));
    assert_eq!(
        rbac.authorize(&bot, "team-a", &get("configmaps", "other")),
        Verdict::NoOpinion(vec![])
    );
}

#[tokio::test]
async fn cluster_role_bindings_grant_everywhere_and_missing_roles_are_reported() {
    let store = Arc::new(MemoryStore::new());
    let cache = cache_with(
        &store,
        &[
            (&format!("{CR}reader"), role(&["get", "list"], &["*"], &[])),
            (
                &format!("{CRB}alice-reads"),
                binding(
                    "ClusterRole",
                    "reader",
                    json!([{"kind": "User", "name": "alice"}]),
                ),
            ),
            (
                &format!("{CRB}dangling"),
                binding(
                    "ClusterRole",
                    "gone",
                    json!([{"kind": "User", "name": "bob"}]),
                ),
            ),
        ],
    )
    .await;
    let rbac = Rbac::new(cache);
    let alice = UserInfo {
        name: "alice".into(),
        ..UserInfo::default()
    };
    assert!(matches!(
        rbac.authorize(&alice, "x", &get("secrets", "s")),
        Verdict::Allowed(_)
    ));
    assert!(matches!(
        rbac.authorize(&alice, "", &get("nodes", "n")),
        Verdict::Allowed(_)
    ));
    let bob = UserInfo {
        name: "bob".into(),
        ..UserInfo::default()
    };
    assert_eq!(
        rbac.authorize(&bob, "x", &get("pods", "p")),
        Verdict::NoOpinion(vec![
            r#"clusterrole.rbac.authorization.k8s.io "gone" not found"#.into()
        ])
    );
}

#[tokio::test]
async fn a_changed_role_takes_effect_once_followed() {
    let store = Arc::new(MemoryStore::new());
    let cache = cache_with(
        &store,
        &[
            (&format!("{CR}r"), role(&["get"], &["pods"], &[])),
            (
                &format!("{CRB}b"),
                binding(
                    "ClusterRole",
                    "r",
                    json!([{"kind": "User", "name": "alice"}]),
                ),
            ),
        ],
    )
    .await;
    let rbac = Arc::new(Rbac::new(cache.clone()));
    let follower = tokio::spawn(rbac.clone().follow());
    let alice = UserInfo {
        name: "alice".into(),
        ..UserInfo::default()
    };
    assert!(matches!(
        rbac.authorize(&alice, "", &get("pods", "p")),
        Verdict::Allowed(_)
    ));
    put(&store, &format!("{CR}r"), &role(&["list"], &["pods"], &[])).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while rbac.authorize(&alice, "", &get("pods", "p")) != Verdict::NoOpinion(vec![]) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the change was never seen"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    follower.abort();
}
