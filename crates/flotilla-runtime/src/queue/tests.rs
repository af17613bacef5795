use std::time::Duration;

use super::*;

async fn next_now<K: Clone + Eq + Hash>(queue: &WorkQueue<K>) -> Option<K> {
    tokio::time::timeout(Duration::from_millis(1), queue.next())
        .await
        .ok()
        .flatten()
}

#[tokio::test(start_paused = true)]
async fn adding_a_queued_key_again_coalesces() {
    let queue = WorkQueue::default();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assert_eq!(queue.len(), 2);
    assert_eq!(next_now(&queue).await, Some("a"));
    assert_eq!(next_now(&queue).await, Some("b"));
    assert_eq!(next_now(&queue).await, None);
}

#[tokio::test(start_paused = true)]
async fn a_key_added_while_processing_is_served_again_after_done_never_concurrently() {
    let queue = WorkQueue::default();
    queue.add("a");
    let key = next_now(&queue).await.expect("queued");
    queue.add("a");
    // Held by a worker: nobody else gets it.
    assert_eq!(next_now(&queue).await, None);
    queue.done(&key);
    assert_eq!(next_now(&queue).await, Some("a"));
    queue.done(&"a");
    assert_eq!(next_now(&queue).await, None);
}

#[tokio::test(start_paused = true)]
async fn high_lane_is_served_before_the_backlog() {
    let queue = WorkQueue::default();
    for key in ["l1", "l2", "l3"] {
        queue.add_with(key, Priority::Low);
    }
    queue.add("h1");
    // A low key raised to high jumps the backlog, and is served once.
    queue.add_with("l3", Priority::High);
    let mut order = Vec::new();
    while let Some(key) = next_now(&queue).await {
        order.push(key);
        queue.done(&key);
    }
    assert_eq!(order, ["h1", "l3", "l1", "l2"]);
}

#[tokio::test(start_paused = true)]
async fn delayed_keys_wait_for_their_time_and_the_earliest_request_wins() {
    let queue = WorkQueue::default();
    queue.add_after("a", Duration::from_secs(10));
    queue.add_after("a", Duration::from_secs(3));
    queue.add_after("a", Duration::from_secs(5));
    assert_eq!(queue.delayed(), 1);
    let started = Instant::now();
    let key = queue.next().await;
    assert_eq!(key, Some("a"));
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    queue.done(&"a");
    assert_eq!(queue.delayed(), 0);
}

#[tokio::test(start_paused = true)]
async fn adding_instead_of_a_delayed_add_serves_the_key_once() {
    let queue = WorkQueue::default();
    queue.add_after("a", Duration::from_secs(5));
    queue.add_after("b", Duration::from_secs(5));
    queue.add_instead_of_delayed("a");
    assert_eq!(queue.delayed(), 1);
    assert_eq!(next_now(&queue).await, Some("a"));
    queue.done(&"a");
    tokio::time::advance(Duration::from_secs(6)).await;
    // "b" still comes when its time is due; "a" does not come again.
    assert_eq!(next_now(&queue).await, Some("b"));
    queue.done(&"b");
    assert_eq!(next_now(&queue).await, None);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_keys_back_off_exponentially_until_forgotten() {
    let queue = WorkQueue::new(Backoff {
        base: Duration::from_secs(1),
        max: Duration::from_secs(5),
    });
    let mut delays = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        queue.add_rate_limited("a");
        let key = queue.next().await.expect("comes back");
        delays.push(started.elapsed().as_secs());
        queue.done(&key);
    }
    assert_eq!(delays, [1, 2, 4, 5, 5]);
    assert_eq!(queue.failures(&"a"), 5);
    queue.forget(&"a");
    let started = Instant::now();
    queue.add_rate_limited("a");
    queue.next().await.expect("comes back");
    assert_eq!(started.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_sleeping_worker_wakes_for_an_earlier_timer_and_for_adds() {
    let queue = WorkQueue::default();
    queue.add_after("late", Duration::from_secs(60));
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.next().await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    queue.add_after("soon", Duration::from_secs(1));
    let started = Instant::now();
    assert_eq!(worker.await.expect("worker"), Some("soon"));
    assert!(started.elapsed() <= Duration::from_secs(1));

    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.next().await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    queue.add("now");
    assert_eq!(worker.await.expect("worker"), Some("now"));
}

#[tokio::test(start_paused = true)]
async fn shut_down_releases_waiting_workers_and_ignores_adds() {
    let queue: WorkQueue<&str> = WorkQueue::default();
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.next().await }
    });
    tokio::task::yield_now().await;
    queue.shut_down();
    assert_eq!(worker.await.expect("worker"), None);
    queue.add("a");
    assert!(queue.is_empty());
}

#[tokio::test(start_paused = true)]
async fn many_workers_share_keys_without_duplicates() {
    let queue = WorkQueue::default();
    for key in 0..100u32 {
        queue.add(key);
    }
    let mut workers = Vec::new();
    for _ in 0..4 {
        let queue = queue.clone();
        workers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(key) = next_now(&queue).await {
                got.push(key);
                tokio::task::yield_now().await;
                queue.done(&key);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.expect("worker"));
    }
    all.sort_unstable();
    assert_eq!(all, (0..100).collect::<Vec<_>>());
}

#[test]
fn backoff_doubles_and_saturates() {
    let backoff = Backoff::CONTROLLER;
    assert_eq!(backoff.delay(1), Duration::from_millis(5));
    assert_eq!(backoff.delay(2), Duration::from_millis(10));
    assert_eq!(backoff.delay(11), Duration::from_millis(5 * 1024));
    assert_eq!(backoff.delay(40), Duration::from_secs(1000));
    assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(1000));
}

#[tokio::test(start_paused = true)]
async fn named_queues_report_client_gos_workqueue_metrics() {
    let queue: WorkQueue<&'static str> = WorkQueue::named("test-metrics-controller");
    let labels = metrics::QueueLabels {
        name: "test-metrics-controller".into(),
        controller: "test-metrics-controller".into(),
    };
    let m = metrics::metrics();
    queue.add("a");
    queue.add("a");
    queue.add("b");
    assert_eq!(
        m.adds.get_or_create(&labels).get(),
        2,
        "a repeated add is not an add"
    );
    assert_eq!(m.depth.get_or_create(&labels).get(), 2);
    tokio::time::advance(Duration::from_millis(250)).await;
    let key = queue.next().await.expect("a key");
    assert_eq!(m.depth.get_or_create(&labels).get(), 1);
    tokio::time::advance(Duration::from_secs(2)).await;
    metrics::refresh_in_flight();
    assert_eq!(m.longest_running.get_or_create(&labels).get(), 2.0);
    assert_eq!(m.unfinished_work.get_or_create(&labels).get(), 2.0);
    queue.done(&key);
    metrics::refresh_in_flight();
    assert_eq!(m.longest_running.get_or_create(&labels).get(), 0.0);
    queue.add_rate_limited("c");
    assert_eq!(m.retries.get_or_create(&labels).get(), 1);
    let mut registry = prometheus_client::registry::Registry::default();
    metrics::register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    for line in [
        "workqueue_adds_total{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 2",
        "workqueue_queue_duration_seconds_count{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 1",
        "workqueue_work_duration_seconds_count{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 1",
        "workqueue_work_duration_seconds_sum{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 2.0",
        "workqueue_retries_total{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 1",
        "workqueue_depth{name=\"test-metrics-controller\",controller=\"test-metrics-controller\"} 1",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
    // An unnamed queue reports nothing.
    let plain: WorkQueue<&'static str> = WorkQueue::default();
    plain.add("x");
    assert_eq!(m.adds.get_or_create(&labels).get(), 2);
}
