//! `federatedResourceQuotaSync`: a quota's ResourceQuota Works follow its static assignments.
//! Re-run when the quota changes or is deleted and when a cluster appears (a newly joined
//! cluster gets a Work only if it is assigned).

use std::sync::Arc;

use flotilla_api::karmada::quota::FederatedResourceQuota;
use flotilla_api::karmada::{Cluster, Work};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use kube::api::{Api, DeleteParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use tracing::{info, warn};

use super::{
    QuotaKey, REASON_SYNC_FAILED, REASON_SYNC_SUCCEED, key_of, quota_work, recorder, reference,
    works_to_remove,
};
use crate::binding::works::{WorkWrite, ensure_work};
use crate::manager::{Context, ControllerTask};

struct Sync {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<QuotaKey>,
    quotas: Store<FederatedResourceQuota>,
    clusters: Store<Cluster>,
    works: Store<Work>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let quotas = context.informers.all::<FederatedResourceQuota>();
    let clusters = context.informers.all::<Cluster>();
    let works = context.informers.all::<Work>();
    let this = Arc::new(Sync {
        client: context.client.clone(),
        recorder: recorder(&context.client, "federated-resource-quota-sync-controller"),
        queue: WorkQueue::named("federated-resource-quota-sync-controller"),
        quotas: quotas.store(),
        clusters: clusters.store(),
        works: works.store(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(
        &quotas,
        move |e: WatchEvent<&FederatedResourceQuota>| match e {
            WatchEvent::Apply(q) | WatchEvent::Delete(q) => me.queue.add(key_of(q)),
            WatchEvent::InitApply(q) => me.queue.add_with(key_of(q), Priority::Low),
            _ => {}
        },
    );
    let me = this.clone();
    tasks.subscribe(&clusters, move |e: WatchEvent<&Cluster>| {
        if let WatchEvent::Apply(cluster) = e {
            for quota in me.quotas.state() {
                if quota.spec.hard_for(cluster.name()).is_some() {
                    me.queue.add(key_of(&quota));
                }
            }
        }
    });
    let ready = async {
        quotas.wait_until_ready().await;
        clusters.wait_until_ready().await;
        works.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    // Works of quotas deleted while no one watched.
    for work in this.works.state() {
        if let Some(key) = super::quota_of_work(&work) {
            this.queue.add_with(key, Priority::Low);
        }
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error| warn!(quota = ?key, %error, "syncing a FederatedResourceQuota failed"),
    );
    info!("federated resource quota sync running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Sync {
    async fn reconcile(&self, key: &QuotaKey) -> Result<(), kube::Error> {
        let (namespace, name) = key;
        let quota = self.quotas.get(&ObjectRef::new(name).within(namespace));
        let works = self.works.state();
        for (work_namespace, work_name) in works_to_remove(key, quota.as_deref(), &works) {
            let api = Api::<Work>::namespaced(self.client.clone(), &work_namespace);
            match api.delete(&work_name, &DeleteParams::default()).await {
                Ok(_) => {
                    info!(%namespace, %name, work = %work_name, %work_namespace, "quota Work removed")
                }
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        let Some(quota) = quota else {
            return Ok(());
        };
        let mut first_error = None;
        for cluster in self.clusters.state() {
            if cluster.is_deleting() {
                continue;
            }
            let Some(work) = quota_work(&quota, cluster.name()) else {
                continue;
            };
            let stored = self.works.get(
                &ObjectRef::new(work.metadata.name.as_deref().unwrap_or(""))
                    .within(work.metadata.namespace.as_deref().unwrap_or("")),
            );
            match ensure_work(&self.client, work, stored.as_deref()).await {
                Ok(WorkWrite::Unchanged) => {}
                Ok(_) => info!(%namespace, %name, cluster = cluster.name(), "quota Work written"),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        let reference = reference(&quota);
        match first_error {
            Some(error) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        REASON_SYNC_FAILED,
                        "Sync",
                        flotilla_runtime::errors::describe(&error),
                    )
                    .await;
                Err(error)
            }
            None => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        REASON_SYNC_SUCCEED,
                        "Sync",
                        format!(
                            "Sync works for FederatedResourceQuota({namespace}/{name}) succeed."
                        ),
                    )
                    .await;
                Ok(())
            }
        }
    }
}
