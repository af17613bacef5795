//! Single-key operations and transactions.

use std::sync::Arc;

use bytes::Bytes;

use crate::{CompareOp, KeyRange, Op, OpResult, RangeRequest, Store, StoreError, StoreLimits, Txn};

async fn revision(store: &dyn Store) -> i64 {
    store.status().await.expect("status").revision
}

pub async fn create_then_get(store: Arc<dyn Store>) {
    let before = revision(&*store).await;
    let kv = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    assert_eq!(
        kv.mod_revision,
        before + 1,
        "a create moves the revision by one"
    );
    assert_eq!(kv.create_revision, kv.mod_revision);
    assert_eq!(kv.version, 1);
    assert_eq!(kv.value, Bytes::from("one"));
    assert_eq!(store.get(b"/a").await.expect("get"), Some(kv));
    assert_eq!(revision(&*store).await, before + 1);
    assert_eq!(store.get(b"/missing").await.expect("get"), None);
}

pub async fn create_existing_is_already_exists(store: Arc<dyn Store>) {
    store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let before = revision(&*store).await;
    let error = store
        .create("/a".into(), "two".into())
        .await
        .expect_err("second create");
    assert!(
        matches!(error, StoreError::AlreadyExists { ref key } if key == "/a"),
        "{error:?}"
    );
    assert_eq!(revision(&*store).await, before);
    let kv = store.get(b"/a").await.expect("get").expect("present");
    assert_eq!(kv.value, Bytes::from("one"));
}

pub async fn update_at_current_revision(store: Arc<dyn Store>) {
    let created = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let updated = store
        .update("/a".into(), "two".into(), created.mod_revision)
        .await
        .expect("update");
    assert_eq!(updated.create_revision, created.create_revision);
    assert_eq!(updated.mod_revision, created.mod_revision + 1);
    assert_eq!(updated.version, 2);
    assert_eq!(store.get(b"/a").await.expect("get"), Some(updated));
}

pub async fn update_at_stale_revision_writes_nothing(store: Arc<dyn Store>) {
    let created = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let updated = store
        .update("/a".into(), "two".into(), created.mod_revision)
        .await
        .expect("update");
    let before = revision(&*store).await;
    let error = store
        .update("/a".into(), "three".into(), created.mod_revision)
        .await
        .expect_err("stale update");
    match error {
        StoreError::Conflict {
            key,
            expected,
            current,
        } => {
            assert_eq!(key, "/a");
            assert_eq!(expected, created.mod_revision);
            assert_eq!(current, updated.mod_revision);
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    assert_eq!(revision(&*store).await, before);
    assert_eq!(store.get(b"/a").await.expect("get"), Some(updated));
}

pub async fn update_or_delete_missing_is_not_found(store: Arc<dyn Store>) {
    let error = store
        .update("/nope".into(), "x".into(), 5)
        .await
        .expect_err("update of a missing key");
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    let error = store
        .delete("/nope".into(), None)
        .await
        .expect_err("delete of a missing key");
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    assert_eq!(store.get(b"/nope").await.expect("get"), None);
}

pub async fn delete_then_recreate_resets_create_revision(store: Arc<dyn Store>) {
    let created = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let (prev, deleted_at) = store
        .delete("/a".into(), Some(created.mod_revision))
        .await
        .expect("delete");
    assert_eq!(prev, created);
    assert_eq!(deleted_at, created.mod_revision + 1);
    assert_eq!(store.get(b"/a").await.expect("get"), None);
    let again = store
        .create("/a".into(), "two".into())
        .await
        .expect("re-create");
    assert_eq!(again.create_revision, deleted_at + 1);
    assert_eq!(again.version, 1);
}

pub async fn delete_at_stale_revision_writes_nothing(store: Arc<dyn Store>) {
    let created = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let updated = store
        .update("/a".into(), "two".into(), created.mod_revision)
        .await
        .expect("update");
    let before = revision(&*store).await;
    let error = store
        .delete("/a".into(), Some(created.mod_revision))
        .await
        .expect_err("stale delete");
    assert!(
        matches!(error, StoreError::Conflict { current, .. } if current == updated.mod_revision),
        "{error:?}"
    );
    assert_eq!(revision(&*store).await, before);
    assert_eq!(store.get(b"/a").await.expect("get"), Some(updated));
}

pub async fn txn_writes_share_one_revision(store: Arc<dyn Store>) {
    store
        .create("/c".into(), "old".into())
        .await
        .expect("create");
    let before = revision(&*store).await;
    let response = store
        .txn(Txn::new().and_then([Op::put("/a", "1"), Op::put("/b", "2"), Op::delete("/c")]))
        .await
        .expect("txn");
    assert!(response.succeeded);
    assert_eq!(response.revision, before + 1);
    let a = store.get(b"/a").await.expect("get").expect("a");
    let b = store.get(b"/b").await.expect("get").expect("b");
    assert_eq!(a.mod_revision, before + 1);
    assert_eq!(b.mod_revision, before + 1);
    assert_eq!(a.create_revision, before + 1);
    match &response.results[2] {
        OpResult::Delete { prev: Some(prev) } => assert_eq!(prev.value, Bytes::from("old")),
        other => panic!("expected the deleted value, got {other:?}"),
    }
    assert_eq!(store.get(b"/c").await.expect("get"), None);
}

pub async fn txn_failure_branch_runs_else_ops(store: Arc<dyn Store>) {
    let created = store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let response = store
        .txn(
            Txn::new()
                .when([crate::Compare::mod_revision("/a", CompareOp::Equal, 0)])
                .and_then([Op::put("/a", "never")])
                .or_else([Op::get("/a"), Op::put("/b", "else")]),
        )
        .await
        .expect("txn");
    assert!(!response.succeeded);
    assert_eq!(response.results[0], OpResult::Get(Some(created.clone())));
    assert_eq!(
        response.revision,
        created.mod_revision + 1,
        "the else put wrote"
    );
    assert_eq!(
        store.get(b"/a").await.expect("get").expect("a").value,
        Bytes::from("one")
    );
    assert_eq!(
        store.get(b"/b").await.expect("get").expect("b").value,
        Bytes::from("else")
    );
    // Version and create-revision compares.
    let response = store
        .txn(
            Txn::new()
                .when([
                    crate::Compare::version("/a", CompareOp::Equal, 1),
                    crate::Compare {
                        key: "/a".into(),
                        target: crate::CompareTarget::CreateRevision(created.create_revision),
                        op: CompareOp::Equal,
                    },
                    crate::Compare {
                        key: "/a".into(),
                        target: crate::CompareTarget::Value("one".into()),
                        op: CompareOp::Equal,
                    },
                ])
                .and_then([Op::put("/a", "two")]),
        )
        .await
        .expect("txn");
    assert!(response.succeeded);
}

pub async fn reads_and_failed_compares_do_not_move_revision(store: Arc<dyn Store>) {
    store
        .create("/a".into(), "one".into())
        .await
        .expect("create");
    let before = revision(&*store).await;
    store.get(b"/a").await.expect("get");
    store
        .range(RangeRequest::new(KeyRange::all()))
        .await
        .expect("range");
    let response = store
        .txn(
            Txn::new()
                .when([crate::Compare::mod_revision("/a", CompareOp::Equal, 0)])
                .and_then([Op::put("/a", "x")])
                .or_else([Op::get("/a")]),
        )
        .await
        .expect("txn");
    assert!(!response.succeeded);
    assert_eq!(response.revision, before);
    // Deleting a key that is not there writes nothing either.
    let response = store
        .txn(Txn::new().and_then([Op::delete("/missing")]))
        .await
        .expect("txn");
    assert_eq!(response.results, vec![OpResult::Delete { prev: None }]);
    assert_eq!(revision(&*store).await, before);
}

pub async fn rejects_bad_keys_and_values_without_writing(store: Arc<dyn Store>) {
    let before = revision(&*store).await;
    let error = store
        .create(Bytes::new(), "x".into())
        .await
        .expect_err("empty key");
    assert!(matches!(error, StoreError::InvalidKey { .. }), "{error:?}");
    let limit = StoreLimits::default().max_value_bytes;
    let error = store
        .create("/big".into(), vec![b'x'; limit + 1].into())
        .await
        .expect_err("oversized value");
    assert!(
        matches!(error, StoreError::ValueTooLarge { size, .. } if size == limit + 1),
        "{error:?}"
    );
    let error = store
        .txn(Txn::new().and_then([Op::put("/a", "1"), Op::put("/a", "2")]))
        .await
        .expect_err("a key written twice");
    assert!(matches!(error, StoreError::InvalidTxn { .. }), "{error:?}");
    assert_eq!(revision(&*store).await, before);
    assert_eq!(store.get(b"/big").await.expect("get"), None);
    assert_eq!(store.get(b"/a").await.expect("get"), None);
    // A value right at the limit is accepted.
    store
        .create("/big".into(), vec![b'x'; limit].into())
        .await
        .expect("value at the limit");
}
