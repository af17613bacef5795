//! Put throughput: etcd-client on its own (the baseline) and any [`Store`], with the same
//! workload, so a benchmark can report the store's rate as a ratio measured in one run.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{Client, ConnectOptions};
use flotilla_store::{Op, Store, StoreError, Txn};
use tokio::time::Instant;

use crate::error::classify;

/// Each writer cycles over this many keys of its own, so the key count stays bounded.
const KEYS_PER_WRITER: usize = 1024;

/// Puts per second through etcd-client directly: `writers` concurrent tasks, each putting
/// `value_size`-byte values to keys of its own under `/bench/raw/`, for `duration`.
pub async fn raw_put_baseline(
    endpoints: &[String],
    writers: usize,
    value_size: usize,
    duration: Duration,
) -> Result<f64, StoreError> {
    let client = Client::connect(endpoints, Some(ConnectOptions::new()))
        .await
        .map_err(|e| classify("connect", e).into_store_error("connect"))?;
    let value = vec![b'x'; value_size];
    run(writers, duration, move |writer, i| {
        let mut kv = client.kv_client();
        let value = value.clone();
        async move {
            let key = format!("/bench/raw/{writer}/{}", i % KEYS_PER_WRITER);
            kv.put(key, value, None)
                .await
                .map(drop)
                .map_err(|e| classify("put", e).into_store_error("put"))
        }
    })
    .await
}

/// Puts per second through `store`: the same workload as [`raw_put_baseline`], each put an
/// unconditional one-operation transaction (under `/bench/store/`).
pub async fn store_put_rate(
    store: Arc<dyn Store>,
    writers: usize,
    value_size: usize,
    duration: Duration,
) -> Result<f64, StoreError> {
    let value = Bytes::from(vec![b'x'; value_size]);
    run(writers, duration, move |writer, i| {
        let store = store.clone();
        let value = value.clone();
        async move {
            let key = format!("/bench/store/{writer}/{}", i % KEYS_PER_WRITER);
            store
                .txn(Txn::new().and_then([Op::put(key, value)]))
                .await
                .map(drop)
        }
    })
    .await
}

/// Runs `writers` loops of `put(writer, i)` until `duration` has passed; returns puts per
/// second over the time actually taken.
async fn run<F, Fut>(writers: usize, duration: Duration, put: F) -> Result<f64, StoreError>
where
    F: Fn(usize, usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<(), StoreError>> + Send,
{
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(writers);
    for writer in 0..writers {
        let put = put.clone();
        tasks.push(tokio::spawn(async move {
            let mut done = 0usize;
            while Instant::now() < deadline {
                put(writer, done).await?;
                done += 1;
            }
            Ok::<_, StoreError>(done)
        }));
    }
    let mut total = 0usize;
    for task in tasks {
        total += task
            .await
            .map_err(|e| StoreError::backend("bench writer", e))??;
    }
    let elapsed = start.elapsed().as_secs_f64();
    Ok(total as f64 / elapsed.max(f64::MIN_POSITIVE))
}
