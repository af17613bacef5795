//! Elections against a small in-memory Lease endpoint (GET, POST, PUT with resourceVersion
//! checks, as the API server does them), on tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;

use super::*;

#[derive(Debug, Default)]
struct LeaseStore {
    lease: Option<serde_json::Value>,
    revision: u64,
}

/// A client whose requests fail while `cut` is set (a partitioned candidate).
fn client(store: Arc<Mutex<LeaseStore>>, cut: Arc<AtomicBool>) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let store = store.clone();
        let cut = cut.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await?.to_bytes();
            let (status, payload) = if cut.load(Ordering::SeqCst) {
                (503, status_body(503, "ServiceUnavailable"))
            } else {
                handle(&store, &parts.method, &body)
            };
            let response = http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(payload)))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    kube::Client::new(service, "default")
}

fn status_body(code: u16, reason: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure",
        "message": reason, "reason": reason, "code": code,
    }))
    .expect("json")
}

fn handle(store: &Mutex<LeaseStore>, method: &http::Method, body: &[u8]) -> (u16, Vec<u8>) {
    let mut store = store.lock();
    let parsed = serde_json::from_slice::<serde_json::Value>(body).ok();
    match *method {
        http::Method::GET => match &store.lease {
            Some(lease) => (200, serde_json::to_vec(lease).expect("json")),
            None => (404, status_body(404, "NotFound")),
        },
        http::Method::POST => {
            if store.lease.is_some() {
                return (409, status_body(409, "AlreadyExists"));
            }
            let mut lease = parsed.expect("lease body");
            store.revision += 1;
            lease["metadata"]["resourceVersion"] = store.revision.to_string().into();
            store.lease = Some(lease.clone());
            (201, serde_json::to_vec(&lease).expect("json"))
        }
        http::Method::PUT => {
            let mut lease = parsed.expect("lease body");
            let current = store
                .lease
                .as_ref()
                .and_then(|l| l["metadata"]["resourceVersion"].as_str().map(str::to_owned));
            if current.as_deref() != lease["metadata"]["resourceVersion"].as_str() {
                return (409, status_body(409, "Conflict"));
            }
            store.revision += 1;
            lease["metadata"]["resourceVersion"] = store.revision.to_string().into();
            store.lease = Some(lease.clone());
            (200, serde_json::to_vec(&lease).expect("json"))
        }
        _ => (405, status_body(405, "MethodNotAllowed")),
    }
}

fn holder(store: &Mutex<LeaseStore>) -> Option<String> {
    store
        .lock()
        .lease
        .as_ref()
        .and_then(|lease| lease["spec"]["holderIdentity"].as_str().map(str::to_owned))
}

fn transitions(store: &Mutex<LeaseStore>) -> i64 {
    store
        .lock()
        .lease
        .as_ref()
        .and_then(|lease| lease["spec"]["leaseTransitions"].as_i64())
        .unwrap_or(-1)
}

struct Candidate {
    cut: Arc<AtomicBool>,
    leading: Arc<AtomicUsize>,
    terms: Arc<AtomicUsize>,
    shutdown: Shutdown,
    task: tokio::task::JoinHandle<()>,
}

fn candidate(store: &Arc<Mutex<LeaseStore>>, identity: &str) -> Candidate {
    let cut = Arc::new(AtomicBool::new(false));
    let leading = Arc::new(AtomicUsize::new(0));
    let terms = Arc::new(AtomicUsize::new(0));
    let shutdown = Shutdown::new();
    let elector = LeaderElector::new(
        client(store.clone(), cut.clone()),
        LeaseConfig::new("karmada-system", "flotilla-scheduler", identity),
    );
    let task = tokio::spawn({
        let shutdown = shutdown.clone();
        let leading = leading.clone();
        let terms = terms.clone();
        async move {
            elector
                .run(&shutdown, move |term| {
                    let leading = leading.clone();
                    terms.fetch_add(1, Ordering::SeqCst);
                    async move {
                        leading.fetch_add(1, Ordering::SeqCst);
                        term.cancelled().await;
                        leading.fetch_sub(1, Ordering::SeqCst);
                    }
                })
                .await;
        }
    });
    Candidate {
        cut,
        leading,
        terms,
        shutdown,
        task,
    }
}

#[tokio::test(start_paused = true)]
async fn one_of_two_candidates_leads_and_the_other_takes_over_after_the_lease_lapses() {
    let store = Arc::new(Mutex::new(LeaseStore::default()));
    let a = candidate(&store, "a");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let b = candidate(&store, "b");
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(holder(&store).as_deref(), Some("a"));
    assert_eq!(a.leading.load(Ordering::SeqCst), 1);
    assert_eq!(b.leading.load(Ordering::SeqCst), 0, "never two leaders");

    // a is cut off: it steps down after the renew deadline, b takes over only once the lease
    // it observed has not changed for the lease duration.
    a.cut.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(
        a.leading.load(Ordering::SeqCst),
        0,
        "stepped down after renew deadline"
    );
    assert_eq!(b.leading.load(Ordering::SeqCst), 0, "lease not yet lapsed");
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(holder(&store).as_deref(), Some("b"));
    assert_eq!(b.leading.load(Ordering::SeqCst), 1);
    assert_eq!(transitions(&store), 1);

    // a comes back and stays a follower.
    a.cut.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(a.leading.load(Ordering::SeqCst), 0);
    assert_eq!(a.terms.load(Ordering::SeqCst), 1);
    for c in [&a, &b] {
        c.shutdown.cancel();
    }
    a.task.await.expect("a stops");
    b.task.await.expect("b stops");
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_shuts_down_releases_the_lease_for_an_immediate_successor() {
    let store = Arc::new(Mutex::new(LeaseStore::default()));
    let a = candidate(&store, "a");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let b = candidate(&store, "b");
    tokio::time::sleep(Duration::from_secs(5)).await;
    a.shutdown.cancel();
    a.task.await.expect("a stops");
    assert_eq!(holder(&store), None, "released");
    // Within one retry period, not a whole lease duration.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(holder(&store).as_deref(), Some("b"));
    assert_eq!(b.leading.load(Ordering::SeqCst), 1);
    b.shutdown.cancel();
    b.task.await.expect("b stops");
}
