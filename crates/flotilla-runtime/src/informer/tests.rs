use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::ObjectRef;

use super::*;

fn map(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            ..ObjectMeta::default()
        },
        data: Some([("value".to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

/// What a handler saw, as text: `Init`, `InitApply a=1 cached 1`, `Apply a=2`, `Delete a`, `InitDone`,
/// each event with what the shared cache held for that object when the handler ran.
type Seen = Arc<Mutex<Vec<String>>>;

fn recorder(
    shared: &Shared<ConfigMap>,
) -> (Seen, impl FnMut(watcher::Event<&ConfigMap>) + Send + use<>) {
    let seen = Seen::default();
    let store = shared.store();
    let out = seen.clone();
    let handler = move |event: watcher::Event<&ConfigMap>| {
        let cached = |object: &ConfigMap| {
            let key = ObjectRef::from_obj(object);
            match store.get(&key) {
                Some(cached) => cached.data.as_ref().unwrap()["value"].clone(),
                None => "-".to_owned(),
            }
        };
        let line = match event {
            watcher::Event::Init => "Init".to_owned(),
            watcher::Event::InitDone => "InitDone".to_owned(),
            watcher::Event::InitApply(o) => format!(
                "InitApply {}={} cached {}",
                o.metadata.name.as_ref().unwrap(),
                o.data.as_ref().unwrap()["value"],
                cached(o)
            ),
            watcher::Event::Apply(o) => format!(
                "Apply {}={} cached {}",
                o.metadata.name.as_ref().unwrap(),
                o.data.as_ref().unwrap()["value"],
                cached(o)
            ),
            watcher::Event::Delete(o) => {
                format!(
                    "Delete {} cached {}",
                    o.metadata.name.as_ref().unwrap(),
                    cached(o)
                )
            }
        };
        out.lock().push(line);
    };
    (seen, handler)
}

fn list(shared: &Shared<ConfigMap>, names: &[&str]) {
    shared.dispatch(&watcher::Event::Init);
    for name in names {
        shared.dispatch(&watcher::Event::InitApply(map(name, "0")));
    }
    shared.dispatch(&watcher::Event::InitDone);
}

fn names(store: &Store<ConfigMap>) -> Vec<String> {
    let mut names: Vec<String> = store
        .state()
        .iter()
        .map(|o| o.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn every_handler_gets_each_event_after_the_one_cache_applied_it() {
    let shared = Shared::<ConfigMap>::new();
    let (first, handler) = recorder(&shared);
    let _first = shared.subscribe(handler);
    let (second, handler) = recorder(&shared);
    let _second = shared.subscribe(handler);
    list(&shared, &["a"]);
    shared.dispatch(&watcher::Event::Apply(map("a", "1")));
    shared.dispatch(&watcher::Event::Apply(map("b", "2")));
    shared.dispatch(&watcher::Event::Delete(map("a", "1")));
    let expected = [
        "Init",
        "InitApply a=0 cached 0",
        "InitDone",
        "Apply a=1 cached 1",
        "Apply b=2 cached 2",
        "Delete a cached -",
    ];
    assert_eq!(*first.lock(), expected);
    assert_eq!(*second.lock(), expected);
    assert_eq!(names(&shared.store()), ["b"]);
}

#[test]
fn a_late_handler_gets_the_cache_replayed_then_live_events() {
    let shared = Shared::<ConfigMap>::new();
    list(&shared, &["a", "b"]);
    shared.dispatch(&watcher::Event::Delete(map("a", "0")));
    let (seen, handler) = recorder(&shared);
    let _subscription = shared.subscribe(handler);
    assert_eq!(*seen.lock(), ["Init", "InitApply b=0 cached 0", "InitDone"]);
    shared.dispatch(&watcher::Event::Delete(map("b", "0")));
    assert_eq!(seen.lock().last().unwrap(), "Delete b cached -");
}

#[test]
fn a_handler_joining_during_a_list_gets_the_whole_list_when_it_is_done() {
    let shared = Shared::<ConfigMap>::new();
    list(&shared, &["old"]);
    let (early, handler) = recorder(&shared);
    let _early = shared.subscribe(handler);
    early.lock().clear();
    // A re-list: "old" is gone, "a" and "b" are listed; the late handler joins after "a".
    shared.dispatch(&watcher::Event::Init);
    shared.dispatch(&watcher::Event::InitApply(map("a", "0")));
    let (late, handler) = recorder(&shared);
    let _late = shared.subscribe(handler);
    assert!(
        late.lock().is_empty(),
        "nothing before the list is complete"
    );
    shared.dispatch(&watcher::Event::InitApply(map("b", "0")));
    shared.dispatch(&watcher::Event::InitDone);
    assert_eq!(
        *early.lock(),
        [
            "Init",
            "Delete old cached -",
            "InitApply a=0 cached 0",
            "InitApply b=0 cached 0",
            "InitDone"
        ]
    );
    let mut replayed = late.lock().clone();
    replayed[1..3].sort();
    assert_eq!(
        replayed,
        [
            "Init",
            "InitApply a=0 cached 0",
            "InitApply b=0 cached 0",
            "InitDone"
        ]
    );
    shared.dispatch(&watcher::Event::Apply(map("a", "1")));
    assert_eq!(late.lock().last().unwrap(), "Apply a=1 cached 1");
    assert_eq!(names(&shared.store()), ["a", "b"]);
}

/// A watch that fell out of the server's window lists again: every handler must see each listed
/// object only once the cache holds what was listed (a worker woken by it reads the cache), and
/// the objects deleted meanwhile as `Delete`s.
#[test]
fn a_relist_is_handed_out_once_the_cache_holds_it() {
    let shared = Shared::<ConfigMap>::new();
    let (seen, handler) = recorder(&shared);
    let _subscription = shared.subscribe(handler);
    list(&shared, &["a", "b", "c"]);
    seen.lock().clear();
    // Meanwhile (the watch was down): "a" changed, "b" was deleted, "d" was created.
    shared.dispatch(&watcher::Event::Init);
    for (name, value) in [("a", "1"), ("c", "0"), ("d", "4")] {
        shared.dispatch(&watcher::Event::InitApply(map(name, value)));
    }
    assert_eq!(
        *seen.lock(),
        ["Init"],
        "nothing before the list is complete"
    );
    shared.dispatch(&watcher::Event::InitDone);
    assert_eq!(
        *seen.lock(),
        [
            "Init",
            "Delete b cached -",
            "InitApply a=1 cached 1",
            "InitApply c=0 cached 0",
            "InitApply d=4 cached 4",
            "InitDone"
        ]
    );
    assert_eq!(names(&shared.store()), ["a", "c", "d"]);
}

#[test]
fn dropping_the_subscription_stops_the_events() {
    let shared = Shared::<ConfigMap>::new();
    let (kept, handler) = recorder(&shared);
    let _kept = shared.subscribe(handler);
    let (dropped, handler) = recorder(&shared);
    let subscription = shared.subscribe(handler);
    list(&shared, &["a"]);
    drop(subscription);
    shared.dispatch(&watcher::Event::Apply(map("a", "1")));
    assert_eq!(dropped.lock().len(), 3);
    assert_eq!(kept.lock().len(), 4);
    // Also while it waits for a list to finish.
    shared.dispatch(&watcher::Event::Init);
    let (pending, handler) = recorder(&shared);
    drop(shared.subscribe(handler));
    shared.dispatch(&watcher::Event::InitDone);
    assert!(pending.lock().is_empty());
}

/// A control plane serving two ConfigMaps with managedFields at list and watches that never
/// answer; counts the lists per path.
fn client(lists: Arc<Mutex<Vec<String>>>) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let lists = lists.clone();
        async move {
            let query = request.uri().query().unwrap_or_default().to_owned();
            let path = request.uri().path().to_owned();
            let _ = request.into_body().collect().await?;
            if query.contains("watch=true") {
                std::future::pending::<()>().await;
            }
            lists.lock().push(path);
            let item = |name: &str| {
                serde_json::json!({"metadata": {"name": name, "namespace": "x",
                    "resourceVersion": "3",
                    "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
                    "data": {"value": "0"}})
            };
            let body = serde_json::to_vec(&serde_json::json!({
                "kind": "ConfigMapList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "5"},
                "items": [item("a"), item("b")],
            }))
            .unwrap();
            let response = http::Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body)))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    kube::Client::new(service, "default")
}

#[tokio::test]
async fn informers_watch_each_kind_and_scope_once_without_managed_fields() {
    let lists = Arc::new(Mutex::new(Vec::new()));
    let informers = Informers::new(client(lists.clone()));
    let first = informers.all::<ConfigMap>();
    let second = informers.all::<ConfigMap>();
    assert!(Arc::ptr_eq(&first.0, &second.0));
    let namespaced = informers.namespaced::<ConfigMap>("x");
    assert!(!Arc::ptr_eq(&first.0, &namespaced.0));
    let events = Arc::new(AtomicUsize::new(0));
    let counted = events.clone();
    let _subscription = second.subscribe(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    first.wait_until_ready().await;
    namespaced.wait_until_ready().await;
    let store = first.store();
    assert_eq!(names(&store), ["a", "b"]);
    assert!(
        store
            .state()
            .iter()
            .all(|o| o.metadata.managed_fields.is_none())
    );
    // Init, two InitApply, InitDone, whether the handler came before or after the list.
    assert_eq!(events.load(Ordering::SeqCst), 4);
    let mut paths = lists.lock().clone();
    paths.sort();
    assert_eq!(
        paths,
        ["/api/v1/configmaps", "/api/v1/namespaces/x/configmaps"]
    );
    informers.stop();
}

#[tokio::test]
async fn every_task_waiting_for_the_first_list_is_woken() {
    let shared = Shared::<ConfigMap>::new();
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let shared = shared.clone();
            tokio::spawn(async move { shared.wait_until_ready().await })
        })
        .collect();
    // Every waiter is parked before the list ends (a current-thread runtime runs them here).
    tokio::task::yield_now().await;
    list(&shared, &["a"]);
    for waiter in waiters {
        // A waiter that is never woken hangs here; the timeout only turns that into a failure.
        tokio::time::timeout(std::time::Duration::from_secs(60), waiter)
            .await
            .expect("woken")
            .unwrap();
    }
    // And one that comes later resolves at once.
    shared.wait_until_ready().await;
}
