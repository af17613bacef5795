//! The loop of the status controllers that recompute from the cluster's caches (ResourceQuotas,
//! PodDisruptionBudgets): a reflected store of their kind, a sync when one of them is applied
//! (or the first list is in) and once per period while the task lives, since what they count
//! (pods) changes without them changing.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;

/// Runs `sync` over the store of every `K` of the cluster until the task is aborted.
pub async fn run<K, F, Fut>(client: kube::Client, period: Duration, mut sync: F)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    F: FnMut(Store<K>) -> Fut,
    Fut: Future<Output = ()>,
{
    let (store, writer) = reflector::store::<K>();
    let mut events = reflector::reflector(
        writer,
        watcher::watcher(Api::<K>::all(client), watcher::Config::default()).default_backoff(),
    )
    .boxed();
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(watcher::Event::Apply(_) | watcher::Event::InitDone)) => {
                    sync(store.clone()).await;
                }
                Some(_) => {}
                None => return,
            },
            _ = tick.tick() => sync(store.clone()).await,
        }
    }
}
