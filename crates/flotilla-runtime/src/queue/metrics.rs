//! client-go's workqueue metrics, as controller-runtime exports them for every controller
//! (`workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
//! `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
//! `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`), labelled `name`
//! and `controller` with the queue's name. Only named queues ([`super::WorkQueue::named`])
//! report; the values live in one process-wide set that [`register`] adds to a registry.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The labels of every workqueue metric: controller-runtime sets both to the controller's name.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    pub name: String,
    pub controller: String,
}

/// client-go's buckets: 10 ns to 1,000 s by tens.
fn queue_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

type F64Gauge = Gauge<f64, AtomicU64>;

/// Every queue's metrics.
#[derive(Debug)]
pub struct QueueMetrics {
    pub depth: Family<QueueLabels, Gauge>,
    pub adds: Family<QueueLabels, Counter>,
    pub queue_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    pub work_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    pub unfinished_work: Family<QueueLabels, F64Gauge>,
    pub longest_running: Family<QueueLabels, F64Gauge>,
    pub retries: Family<QueueLabels, Counter>,
    /// The named queues, for the periodic in-flight gauges.
    live: Mutex<Vec<Weak<dyn InFlight>>>,
}

/// A queue that can say how long its keys in flight have been processed.
pub(super) trait InFlight: Send + Sync {
    fn labels(&self) -> &QueueLabels;
    /// (sum, longest) of the processing times of the keys workers hold now.
    fn in_flight(&self) -> (Duration, Duration);
}

static METRICS: LazyLock<QueueMetrics> = LazyLock::new(|| QueueMetrics {
    depth: Family::default(),
    adds: Family::default(),
    queue_duration: Family::new_with_constructor(queue_histogram),
    work_duration: Family::new_with_constructor(queue_histogram),
    unfinished_work: Family::default(),
    longest_running: Family::default(),
    retries: Family::default(),
    live: Mutex::new(Vec::new()),
});

/// The process-wide workqueue metrics.
pub fn metrics() -> &'static QueueMetrics {
    &METRICS
}

/// One named queue's series, looked up once (the handles share their values with the families).
#[derive(Debug, Clone)]
pub(super) struct Meter {
    pub labels: QueueLabels,
    pub depth: Gauge,
    pub adds: Counter,
    pub queue_duration: Histogram,
    pub work_duration: Histogram,
    pub retries: Counter,
}

impl Meter {
    pub(super) fn new(labels: QueueLabels) -> Self {
        let m = metrics();
        Self {
            depth: m.depth.get_or_create(&labels).clone(),
            adds: m.adds.get_or_create(&labels).clone(),
            queue_duration: m.queue_duration.get_or_create(&labels).clone(),
            work_duration: m.work_duration.get_or_create(&labels).clone(),
            retries: m.retries.get_or_create(&labels).clone(),
            labels,
        }
    }
}

pub(super) fn track(queue: Weak<dyn InFlight>) {
    let mut live = METRICS.live.lock().unwrap_or_else(|p| p.into_inner());
    live.retain(|q| q.strong_count() > 0);
    live.push(queue);
}

/// Updates the in-flight gauges of every live named queue (client-go does so every 500 ms).
pub fn refresh_in_flight() {
    let live: Vec<Arc<dyn InFlight>> = {
        let mut live = METRICS.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|q| q.strong_count() > 0);
        live.iter().filter_map(Weak::upgrade).collect()
    };
    for queue in live {
        let (sum, longest) = queue.in_flight();
        METRICS
            .unfinished_work
            .get_or_create(queue.labels())
            .set(sum.as_secs_f64());
        METRICS
            .longest_running
            .get_or_create(queue.labels())
            .set(longest.as_secs_f64());
    }
}

/// Adds the workqueue metrics to `registry` (unprefixed, as controller-runtime names them) and
/// keeps the in-flight gauges fresh from a task on the current runtime.
pub fn register(registry: &mut Registry) {
    let m = metrics();
    let queue = registry.sub_registry_with_prefix("workqueue");
    queue.register("depth", "Current depth of workqueue", m.depth.clone());
    queue.register(
        "adds",
        "Total number of adds handled by workqueue",
        m.adds.clone(),
    );
    queue.register(
        "queue_duration_seconds",
        "How long in seconds an item stays in workqueue before being requested",
        m.queue_duration.clone(),
    );
    queue.register(
        "work_duration_seconds",
        "How long in seconds processing an item from workqueue takes.",
        m.work_duration.clone(),
    );
    queue.register(
        "unfinished_work_seconds",
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
        m.unfinished_work.clone(),
    );
    queue.register(
        "longest_running_processor_seconds",
        "How many seconds has the longest running processor for workqueue been running.",
        m.longest_running.clone(),
    );
    queue.register(
        "retries",
        "Total number of retries handled by workqueue",
        m.retries.clone(),
    );
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tick.tick().await;
                refresh_in_flight();
            }
        });
    }
}
