//! Range reads: prefixes, limits, consistent paging, the past, compaction.

use std::sync::Arc;

use bytes::Bytes;

use crate::{KeyRange, KeyValue, RangeRequest, Store, StoreError};

async fn put(store: &dyn Store, key: &str, value: &str) -> KeyValue {
    match store.get(key.as_bytes()).await.expect("get") {
        Some(kv) => store
            .update(
                key.to_owned().into(),
                value.to_owned().into(),
                kv.mod_revision,
            )
            .await
            .expect("update"),
        None => store
            .create(key.to_owned().into(), value.to_owned().into())
            .await
            .expect("create"),
    }
}

fn keys(kvs: &[KeyValue]) -> Vec<String> {
    kvs.iter()
        .map(|kv| String::from_utf8_lossy(&kv.key).into_owned())
        .collect()
}

pub async fn range_prefix_is_sorted_limited_and_counted(store: Arc<dyn Store>) {
    for key in [
        "/r/pods/b",
        "/r/pods/a",
        "/r/pods/c",
        "/r/podsx",
        "/r/pod",
        "/r/svc/a",
    ] {
        put(&*store, key, "v").await;
    }
    let all = store
        .range(RangeRequest::prefix("/r/pods/"))
        .await
        .expect("range");
    assert_eq!(keys(&all.kvs), ["/r/pods/a", "/r/pods/b", "/r/pods/c"]);
    assert_eq!(all.count, 3);
    assert!(!all.more);
    let page = store
        .range(RangeRequest::prefix("/r/pods/").with_limit(2))
        .await
        .expect("range");
    assert_eq!(keys(&page.kvs), ["/r/pods/a", "/r/pods/b"]);
    assert!(page.more);
    assert_eq!(page.count, 3, "count ignores the limit");
    let between = store
        .range(RangeRequest::new(KeyRange::between("/r/pods/b", "/r/svc")))
        .await
        .expect("range");
    assert_eq!(keys(&between.kvs), ["/r/pods/b", "/r/pods/c", "/r/podsx"]);
    let one = store
        .range(RangeRequest::new(KeyRange::key("/r/pod")))
        .await
        .expect("range");
    assert_eq!(keys(&one.kvs), ["/r/pod"]);
    let none = store
        .range(RangeRequest::prefix("/r/nothing/"))
        .await
        .expect("range");
    assert!(none.kvs.is_empty() && !none.more && none.count == 0);
    let reversed = store
        .range(RangeRequest::new(KeyRange::between("/r/svc", "/r/pods/")))
        .await
        .expect("a reversed range is empty, not an error");
    assert!(reversed.kvs.is_empty() && reversed.count == 0);
}

pub async fn range_pages_are_consistent_at_a_fixed_revision(store: Arc<dyn Store>) {
    for i in 0..10 {
        put(&*store, &format!("/p/{i:02}"), "v1").await;
    }
    let snapshot = store
        .range(RangeRequest::prefix("/p/"))
        .await
        .expect("range");
    let request = RangeRequest::prefix("/p/").with_limit(3);
    let mut page = store.range(request.clone()).await.expect("first page");
    assert_eq!(page.revision, snapshot.revision);
    let mut seen = page.kvs.clone();
    let mut next = page.next_page(&request);
    let mut round = 0;
    while let Some(request) = next {
        // Writes between pages: an update, a delete and a create inside the range.
        round += 1;
        put(&*store, &format!("/p/{:02}", 9 - round), "v2").await;
        let victim = format!("/p/{:02}", 10 - round);
        if let Some(kv) = store.get(victim.as_bytes()).await.expect("get") {
            store
                .delete(victim.into(), Some(kv.mod_revision))
                .await
                .expect("delete");
        }
        put(&*store, &format!("/p/{round:02}x"), "new").await;
        page = store.range(request.clone()).await.expect("next page");
        assert_eq!(
            page.revision, snapshot.revision,
            "pages stay at the first revision"
        );
        seen.extend(page.kvs.clone());
        next = page.next_page(&request);
    }
    assert_eq!(seen, snapshot.kvs, "the paged list equals the snapshot");
    let now = store
        .range(RangeRequest::prefix("/p/"))
        .await
        .expect("range");
    assert_ne!(now.kvs, snapshot.kvs, "the writes did happen");
}

pub async fn range_reads_the_past_and_refuses_the_future(store: Arc<dyn Store>) {
    let v1 = put(&*store, "/h/a", "1").await;
    let v2 = put(&*store, "/h/a", "2").await;
    put(&*store, "/h/b", "1").await;
    let (_, deleted_at) = store.delete("/h/a".into(), None).await.expect("delete");
    let at_v1 = store
        .range(RangeRequest::prefix("/h/").at_revision(v1.mod_revision))
        .await
        .expect("range at v1");
    assert_eq!(at_v1.kvs, vec![v1.clone()]);
    assert_eq!(at_v1.revision, v1.mod_revision);
    let at_v2 = store
        .range(RangeRequest::prefix("/h/").at_revision(v2.mod_revision))
        .await
        .expect("range at v2");
    assert_eq!(at_v2.kvs, vec![v2]);
    let now = store
        .range(RangeRequest::prefix("/h/").at_revision(deleted_at))
        .await
        .expect("range now");
    assert_eq!(keys(&now.kvs), ["/h/b"]);
    let error = store
        .range(RangeRequest::prefix("/h/").at_revision(deleted_at + 100))
        .await
        .expect_err("future revision");
    assert!(
        matches!(error, StoreError::FutureRevision { requested, current }
            if requested == deleted_at + 100 && current == deleted_at),
        "{error:?}"
    );
}

pub async fn compaction_refuses_old_reads_and_keeps_current_state(store: Arc<dyn Store>) {
    let first = put(&*store, "/c/a", "1").await;
    put(&*store, "/c/b", "1").await;
    let second = put(&*store, "/c/a", "2").await;
    let (_, deleted_at) = store.delete("/c/b".into(), None).await.expect("delete");
    let kept = put(&*store, "/c/c", "1").await;
    store.compact(deleted_at).await.expect("compact");
    assert_eq!(
        store.status().await.expect("status").compacted_revision,
        deleted_at
    );
    let error = store
        .range(RangeRequest::prefix("/c/").at_revision(first.mod_revision))
        .await
        .expect_err("read below compaction");
    assert!(
        matches!(error, StoreError::Compacted { requested, compacted }
            if requested == first.mod_revision && compacted == deleted_at),
        "{error:?}"
    );
    // The state at the compacted revision stays readable, and so does the present.
    let at = store
        .range(RangeRequest::prefix("/c/").at_revision(deleted_at))
        .await
        .expect("read at compaction");
    assert_eq!(at.kvs, vec![second.clone()]);
    let now = store
        .range(RangeRequest::prefix("/c/"))
        .await
        .expect("range");
    assert_eq!(now.kvs, vec![second, kept.clone()]);
    // Compacting again at or below is a no-op; compacting the future is refused.
    store.compact(deleted_at).await.expect("compact again");
    store
        .compact(first.mod_revision)
        .await
        .expect("compact below");
    let error = store
        .compact(kept.mod_revision + 10)
        .await
        .expect_err("compact the future");
    assert!(
        matches!(error, StoreError::FutureRevision { .. }),
        "{error:?}"
    );
    assert_eq!(
        store.get(b"/c/c").await.expect("get").map(|kv| kv.value),
        Some(Bytes::from("1"))
    );
}
