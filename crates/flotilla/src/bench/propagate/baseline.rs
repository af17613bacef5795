//! The baseline of `flotilla bench propagate`: Works created straight into a fresh API server
//! (memory store, in-process clients) — the write every propagated Work costs at least once,
//! before any controller reads, renders, applies or reports it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use flotilla_api::karmada::Work;
use kube::api::{Api, PostParams};
use serde_json::json;

/// Measured baseline figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Baseline {
    /// Works created per second by concurrent writers.
    pub creates_per_s: f64,
    pub creates: usize,
    pub writers: usize,
    /// One writer, one Work at a time: the P50 latency of a create.
    pub single_p50_ms: f64,
}

fn work(name: &str) -> anyhow::Result<Work> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": name, "namespace": "karmada-es-baseline",
            "labels": {"resourcebinding.karmada.io/permanent-id": "0b8e5c8e-3b0f-4f4e-9a57-9b1d1c0f6f11"},
            "finalizers": ["karmada.io/execution-controller"]},
        "spec": {"workload": {"manifests": [{
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "bench",
                "labels": {"karmada.io/managed": "true"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}}}]}},
    }))?)
}

/// `creates` Works with `writers` concurrent clients, then 200 one at a time.
pub async fn measure(creates: usize, writers: usize) -> anyhow::Result<Baseline> {
    let store = Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store)
        .start()
        .await
        .context("start the baseline API server")?;
    let client = super::world::admin(&running, "baseline");
    let namespace = serde_json::from_value(json!({"metadata": {"name": "karmada-es-baseline"}}))?;
    Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .context("create the baseline namespace")?;
    let api = Api::<Work>::namespaced(client, "karmada-es-baseline");
    let works: Arc<Vec<Work>> = Arc::new(
        (0..creates)
            .map(|i| work(&format!("w-{i}")))
            .collect::<anyhow::Result<_>>()?,
    );
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let (api, works, next) = (api.clone(), works.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(work) = works.get(i) else {
                    return anyhow::Ok(());
                };
                api.create(&PostParams::default(), work)
                    .await
                    .context("create a baseline Work")?;
            }
        }));
    }
    for task in tasks {
        task.await??;
    }
    let creates_per_s = creates as f64 / started.elapsed().as_secs_f64();
    let mut single = Vec::with_capacity(200);
    for i in 0..200 {
        let work = work(&format!("single-{i}"))?;
        let started = Instant::now();
        api.create(&PostParams::default(), &work)
            .await
            .context("create a baseline Work")?;
        single.push(started.elapsed());
    }
    single.sort();
    let single_p50: Duration = single[single.len() / 2];
    Ok(Baseline {
        creates_per_s,
        creates,
        writers,
        single_p50_ms: (single_p50.as_secs_f64() * 1e5).round() / 100.0,
    })
}
