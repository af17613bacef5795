//! Bad paths and damaged files give clear errors at open, never a panic.

use flotilla_store::StoreError;
use flotilla_store_redb::{DATABASE_FILE, RedbOptions, RedbStore};

fn open_error(path: &std::path::Path) -> String {
    match RedbStore::open(path, RedbOptions::for_tests()) {
        Ok(_) => panic!("opening {} succeeded", path.display()),
        Err(error @ StoreError::Backend { .. }) => error.to_string(),
        Err(other) => panic!("expected a Backend error, got {other:?}"),
    }
}

#[test]
fn a_file_where_the_directory_should_be_is_refused_naming_the_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").expect("write");
    let message = open_error(&file);
    assert!(message.contains(&file.display().to_string()), "{message}");
    assert!(message.contains("not a directory"), "{message}");
    // A directory that cannot be created (its parent is a file) names the path too.
    let below = file.join("store");
    let message = open_error(&below);
    assert!(message.contains(&below.display().to_string()), "{message}");
}

#[test]
fn a_damaged_database_file_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join(DATABASE_FILE);
    let garbage: Vec<u8> = (0..64 * 1024u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&file, garbage).expect("write garbage");
    let message = open_error(dir.path());
    assert!(message.contains(&file.display().to_string()), "{message}");
}

#[test]
fn a_truncated_database_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            use flotilla_store::Store;
            let store = RedbStore::open(dir.path(), RedbOptions::default()).expect("open");
            for i in 0..50 {
                store
                    .create(format!("/k/{i}").into(), vec![b'v'; 1000].into())
                    .await
                    .expect("create");
            }
        });
    }
    let file = dir.path().join(DATABASE_FILE);
    let bytes = std::fs::read(&file).expect("read");
    std::fs::write(&file, &bytes[..bytes.len() / 3]).expect("truncate");
    // Whatever redb makes of it, the answer is a store or an error, not a panic.
    if let Err(error) = RedbStore::open(dir.path(), RedbOptions::for_tests()) {
        assert!(matches!(error, StoreError::Backend { .. }), "{error:?}");
    }
}
