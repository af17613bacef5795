use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use super::*;
use crate::Backoff;

/// Errors seen by `on_error` (a plain function pointer, as controllers log).
static ERRORS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

#[allow(clippy::ptr_arg)] // the shape of `on_error`: `fn(&K, &E)` with `K = E = String`
fn record(key: &String, error: &String) {
    ERRORS.lock().push((key.clone(), error.clone()));
}

#[tokio::test(start_paused = true)]
async fn workers_retry_a_failed_key_after_its_backoff_and_forget_it_on_success() {
    let queue: WorkQueue<String> = WorkQueue::new(Backoff {
        base: Duration::from_secs(1),
        max: Duration::from_secs(60),
    });
    let attempts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Tasks::new();
    let counted = attempts.clone();
    tasks.workers(
        &queue,
        2,
        move |key: String| {
            let counted = counted.clone();
            async move {
                // The first two attempts fail.
                if counted.fetch_add(1, Ordering::SeqCst) < 2 {
                    Err(format!("{key} failed"))
                } else {
                    Ok(())
                }
            }
        },
        record,
    );
    queue.add("a".to_owned());
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(queue.failures(&"a".to_owned()), 1);
    assert_eq!(queue.delayed(), 1);
    // 1 s, then 2 s of backoff.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert_eq!(queue.failures(&"a".to_owned()), 0, "forgotten on success");
    assert_eq!(queue.delayed(), 0);
    assert_eq!(
        ERRORS.lock().clone(),
        vec![("a".to_owned(), "a failed".to_owned()); 2]
    );
    queue.shut_down();
    tasks.abort();
}

#[tokio::test(start_paused = true)]
async fn until_ready_tells_readiness_from_shutdown() {
    let shutdown = Shutdown::new();
    assert!(until_ready(&shutdown, async {}).await);
    shutdown.cancel();
    assert!(!until_ready(&shutdown, std::future::pending::<()>()).await);
}

#[tokio::test(start_paused = true)]
async fn aborting_the_tasks_stops_them() {
    let mut tasks = Tasks::new();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tasks.spawn(async move {
        let _keep = tx;
        std::future::pending::<()>().await;
    });
    tasks.abort();
    // The task dropped its sender when it was aborted.
    assert!(rx.await.is_err());
}
