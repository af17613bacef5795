use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::*;

/// A member whose EndpointSlices `a` and `b` of Service `web` are listed, then never change.
fn listing_member() -> kube::Client {
    use http_body_util::BodyExt as _;
    let lists = Arc::new(AtomicUsize::new(0));
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let lists = lists.clone();
        async move {
            let watch = request
                .uri()
                .query()
                .unwrap_or_default()
                .contains("watch=true");
            let _ = request.into_body().collect().await?;
            if watch {
                std::future::pending::<()>().await;
            }
            lists.fetch_add(1, Ordering::SeqCst);
            let slice = |name: &str| {
                json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"name": name, "namespace": "x", "resourceVersion": "3",
                        "labels": {SLICE_SERVICE_LABEL: "web"}},
                    "addressType": "IPv4", "endpoints": []})
            };
            let body = json!({"kind": "EndpointSliceList", "apiVersion": "discovery.k8s.io/v1",
                "metadata": {"resourceVersion": "5"}, "items": [slice("b"), slice("a")]})
            .to_string();
            let response = http::Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(bytes::Bytes::from(body)))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    kube::Client::new(service, "default")
}

/// A handler told of a listed slice finds it in the watch's cache (the reflector takes a list
/// in only when it is complete): a ServiceExport listed with the first watch of its member is
/// otherwise found missing, and its slices never reported.
#[tokio::test]
async fn listed_objects_are_told_once_the_cache_holds_them() {
    let store = Arc::new(OnceLock::<Store<EndpointSlice>>::new());
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let (cache, told) = (store.clone(), seen.clone());
    let watch = watch_member(
        Api::<EndpointSlice>::all(listing_member()),
        "m1",
        move |event: MemberEvent<'_, EndpointSlice>| {
            let cache = cache.get().expect("the store is set before the watch runs");
            let entry = match event {
                MemberEvent::Changed(slice) => {
                    let name = slice.metadata.name.clone().unwrap_or_default();
                    let cached = cache.get(&ObjectRef::new(&name).within("x")).is_some();
                    format!("{name} cached={cached}")
                }
                MemberEvent::Relisted => "relisted".to_owned(),
            };
            told.lock().push(entry);
            true
        },
    );
    store.set(watch.store.clone()).expect("set once");
    listed(&watch.store, "m1").await.expect("listed");
    tokio::time::timeout(Duration::from_secs(5), async {
        while seen.lock().len() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the list is told");
    assert_eq!(
        *seen.lock(),
        ["a cached=true", "b cached=true", "relisted"],
        "each listed slice, in order, found in the cache; then the relist"
    );
}
