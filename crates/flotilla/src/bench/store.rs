//! `flotilla bench store`: put throughput with 1 and 64 writers, watch fan-out to 100 watchers,
//! and a range of 100,000 keys, for each backend; baselines: the disk's raw fsync rate and, for
//! etcd, a raw etcd-client put loop.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use flotilla_store::{KeyRange, RangeRequest, Store};
use futures::StreamExt;
use serde_json::{Value, json};

/// What one backend measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub backend: String,
    pub puts_1: f64,
    pub puts_64: f64,
    pub watch_deliveries: f64,
    pub range_100k_ms: f64,
}

const VALUE_BYTES: usize = 2048;

/// Puts/s of `writers` concurrent writers creating fresh keys for `duration`.
pub async fn put_rate(
    store: Arc<dyn Store>,
    writers: usize,
    duration: Duration,
    tag: &str,
) -> anyhow::Result<f64> {
    let value = Bytes::from(vec![b'v'; VALUE_BYTES]);
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + duration;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for writer in 0..writers {
        let store = store.clone();
        let value = value.clone();
        let done = done.clone();
        let tag = tag.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < deadline {
                let key = format!("/bench/put/{tag}/{writer}/{i:010}");
                store.create(key.into(), value.clone()).await?;
                done.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await.context("writer task")??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

/// Event deliveries/s to `watchers` watchers of one prefix while `events` writes happen.
pub async fn watch_rate(
    store: Arc<dyn Store>,
    watchers: usize,
    events: usize,
) -> anyhow::Result<f64> {
    let start_revision = store.status().await?.revision;
    let mut streams = Vec::new();
    for _ in 0..watchers {
        streams.push(
            store
                .watch(KeyRange::prefix("/bench/watch/"), start_revision)
                .await?,
        );
    }
    let started = Instant::now();
    let mut readers = Vec::new();
    for mut stream in streams {
        readers.push(tokio::spawn(async move {
            let mut seen = 0usize;
            while seen < events {
                match tokio::time::timeout(Duration::from_secs(60), stream.next()).await {
                    Ok(Some(Ok(_))) => seen += 1,
                    Ok(Some(Err(e))) => anyhow::bail!("watch failed: {e}"),
                    Ok(None) => anyhow::bail!("watch ended after {seen} events"),
                    Err(_) => anyhow::bail!("watch stalled after {seen} events"),
                }
            }
            Ok(())
        }));
    }
    let value = Bytes::from(vec![b'w'; 256]);
    let writers = 8;
    let mut tasks = Vec::new();
    for w in 0..writers {
        let store = store.clone();
        let value = value.clone();
        tasks.push(tokio::spawn(async move {
            for i in (w..events).step_by(writers) {
                store
                    .create(format!("/bench/watch/{i:08}").into(), value.clone())
                    .await?;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await.context("writer")??;
    }
    for reader in readers {
        reader.await.context("watcher")??;
    }
    Ok((watchers * events) as f64 / started.elapsed().as_secs_f64())
}

/// Milliseconds to range over `keys` keys (loaded first, in batches).
pub async fn range_time(store: Arc<dyn Store>, keys: usize) -> anyhow::Result<f64> {
    let value = Bytes::from(vec![b'r'; 256]);
    let batch = 64;
    let mut i = 0;
    while i < keys {
        let ops: Vec<_> = (i..(i + batch).min(keys))
            .map(|k| flotilla_store::Op::put(format!("/bench/range/{k:08}"), value.clone()))
            .collect();
        store.txn(flotilla_store::Txn::new().and_then(ops)).await?;
        i += batch;
    }
    let started = Instant::now();
    let mut request = RangeRequest::prefix("/bench/range/");
    let mut total = 0;
    loop {
        let response = store.range(request.clone()).await?;
        total += response.kvs.len();
        match response.next_page(&request) {
            Some(next) => request = next,
            None => break,
        }
    }
    let elapsed = started.elapsed();
    anyhow::ensure!(total == keys, "range returned {total} of {keys} keys");
    Ok(elapsed.as_secs_f64() * 1000.0)
}

/// Raw `write + fdatasync` of 4 KiB in `dir`, per second, for `duration`.
pub fn raw_fsync_rate(dir: &Path, duration: Duration) -> anyhow::Result<f64> {
    let path = dir.join("fsync-probe");
    let mut file =
        std::fs::File::create(&path).with_context(|| format!("create {}", path.display()))?;
    let block = vec![0u8; 4096];
    let start = Instant::now();
    let mut count = 0u64;
    while start.elapsed() < duration {
        file.write_all(&block)?;
        file.sync_data()?;
        count += 1;
    }
    let rate = count as f64 / start.elapsed().as_secs_f64();
    drop(file);
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}

/// Runs every measurement against one store.
pub async fn measure(
    backend: &str,
    store: Arc<dyn Store>,
    duration: Duration,
    range_keys: usize,
) -> anyhow::Result<Figures> {
    eprintln!("bench store: {backend}: puts with 1 writer");
    let puts_1 = put_rate(store.clone(), 1, duration, "w1").await?;
    eprintln!("bench store: {backend}: puts with 64 writers");
    let puts_64 = put_rate(store.clone(), 64, duration, "w64").await?;
    eprintln!("bench store: {backend}: watch fan-out to 100 watchers");
    let watch_deliveries = watch_rate(store.clone(), 100, 5_000).await?;
    eprintln!("bench store: {backend}: range of {range_keys} keys");
    let range_100k_ms = range_time(store, range_keys).await?;
    Ok(Figures {
        backend: backend.to_owned(),
        puts_1,
        puts_64,
        watch_deliveries,
        range_100k_ms,
    })
}

/// Prints the table and the JSON line.
pub fn report(figures: &[Figures], baselines: &Value, ratios: &Value) {
    println!(
        "{:<8} {:>14} {:>14} {:>22} {:>18}",
        "BACKEND", "PUTS/S (1)", "PUTS/S (64)", "WATCH DELIVERIES/S", "RANGE 100K (ms)"
    );
    for f in figures {
        println!(
            "{:<8} {:>14.0} {:>14.0} {:>22.0} {:>18.1}",
            f.backend, f.puts_1, f.puts_64, f.watch_deliveries, f.range_100k_ms
        );
    }
    println!();
    println!("baselines: {baselines}");
    println!("ratios:    {ratios}");
    let results: Vec<Value> = figures
        .iter()
        .map(|f| {
            json!({
                "backend": f.backend,
                "puts_per_s_1_writer": f.puts_1.round(),
                "puts_per_s_64_writers": f.puts_64.round(),
                "watch_deliveries_per_s_100_watchers": f.watch_deliveries.round(),
                "range_100k_ms": (f.range_100k_ms * 10.0).round() / 10.0,
            })
        })
        .collect();
    println!(
        "{}",
        json!({"bench": "store", "results": results, "baselines": baselines, "ratios": ratios})
    );
}
