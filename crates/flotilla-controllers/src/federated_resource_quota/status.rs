//! `federatedResourceQuotaStatus`: the member ResourceQuotas' status (what the work-status
//! controller reflected into the quota's Works) becomes `status.aggregatedStatus`; without gate
//! `FederatedQuotaEnforcement`, `status.overall` is `spec.overall` and `status.overallUsed` the
//! members' usage summed (with the gate, the enforcement controller owns both).

use std::sync::Arc;

use flotilla_api::karmada::Work;
use flotilla_api::karmada::quota::FederatedResourceQuota;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder};
use flotilla_runtime::write::merge_patch_status;
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{info, warn};

use super::{
    AggregateError, QuotaKey, REASON_STATUS_FAILED, REASON_STATUS_SUCCEED, aggregate, key_of,
    members_used, quota_of_work, recorder, reference, status_patch,
};
use crate::manager::{Context, ControllerTask};

/// Why collecting a quota's status failed.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(transparent)]
    Aggregate(#[from] AggregateError),
    #[error("updating the FederatedResourceQuota status: {}", flotilla_runtime::errors::message(.0))]
    Write(#[from] kube::Error),
}

struct Status {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<QuotaKey>,
    quotas: Store<FederatedResourceQuota>,
    works: Store<Work>,
    enforcement: bool,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let quotas = context.informers.all::<FederatedResourceQuota>();
    let works = context.informers.all::<Work>();
    let this = Arc::new(Status {
        client: context.client.clone(),
        recorder: recorder(
            &context.client,
            "federated-resource-quota-status-controller",
        ),
        queue: WorkQueue::named("federated-resource-quota-status-controller"),
        quotas: quotas.store(),
        works: works.store(),
        enforcement: context.options.gates.federated_quota_enforcement(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(
        &quotas,
        move |e: WatchEvent<&FederatedResourceQuota>| match e {
            WatchEvent::Apply(q) => me.queue.add(key_of(q)),
            WatchEvent::InitApply(q) => me.queue.add_with(key_of(q), Priority::Low),
            _ => {}
        },
    );
    let me = this.clone();
    tasks.subscribe(&works, move |e: WatchEvent<&Work>| {
        if let WatchEvent::Apply(w) | WatchEvent::Delete(w) = e
            && let Some(key) = quota_of_work(w)
        {
            me.queue.add(key);
        }
    });
    let ready = async {
        quotas.wait_until_ready().await;
        works.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error| warn!(quota = ?key, %error, "collecting a FederatedResourceQuota status failed"),
    );
    info!("federated resource quota status running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Status {
    async fn reconcile(&self, key: &QuotaKey) -> Result<(), StatusError> {
        let (namespace, name) = key;
        let Some(quota) = self.quotas.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        if quota.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let reference = reference(&quota);
        let result = self.collect(key, &quota).await;
        match &result {
            Ok(()) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        REASON_STATUS_SUCCEED,
                        "AggregateStatus",
                        format!(
                            "Collect status of FederatedResourceQuota({namespace}/{name}) succeed."
                        ),
                    )
                    .await
            }
            Err(error) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        REASON_STATUS_FAILED,
                        "AggregateStatus",
                        flotilla_runtime::errors::describe(error),
                    )
                    .await
            }
        }
        result
    }

    async fn collect(
        &self,
        key: &QuotaKey,
        quota: &FederatedResourceQuota,
    ) -> Result<(), StatusError> {
        let aggregated = aggregate(key, &self.works.state())?;
        let mut status = quota.status.clone();
        status.aggregated_status = aggregated;
        let mut fields = vec![("aggregatedStatus", json!(status.aggregated_status))];
        if !self.enforcement {
            status.overall = quota.spec.overall.clone();
            status.overall_used = members_used(&status.aggregated_status);
            fields.push(("overall", json!(status.overall)));
            fields.push(("overallUsed", json!(status.overall_used)));
        }
        if status == quota.status {
            return Ok(());
        }
        merge_patch_status::<FederatedResourceQuota>(
            &self.client,
            Some(&key.0),
            &key.1,
            &status_patch(&fields),
        )
        .await?;
        Ok(())
    }
}
