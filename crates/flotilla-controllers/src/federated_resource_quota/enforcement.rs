//! `federatedResourceQuotaEnforcement` (gate `FederatedQuotaEnforcement`): `status.overall` is
//! `spec.overall` and `status.overallUsed` what the namespace's ResourceBindings use of it
//! (replicas × per-replica requests). Karmada recounts only on quota creation, an `overall`
//! change, binding deletion and a periodic resync, because its ResourceBinding webhook adds
//! each admitted change to `overallUsed` itself; Flotilla's admission counts the bindings it
//! holds instead of writing the quota, so this controller recounts on every binding change.

use std::sync::Arc;

use flotilla_api::karmada::ResourceBinding;
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
    QuotaKey, REASON_OVERALL_FAILED, REASON_OVERALL_SUCCEED, bindings_used, key_of, recorder,
    reference, status_patch,
};
use crate::manager::{Context, ControllerTask};

struct Enforcement {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<QuotaKey>,
    quotas: Store<FederatedResourceQuota>,
    bindings: Store<ResourceBinding>,
}

/// `CONTROLLERS` entry point: idles unless gate `FederatedQuotaEnforcement` is on.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move {
        if !context.options.gates.federated_quota_enforcement() {
            info!("FederatedQuotaEnforcement is off: quota enforcement controller not started");
            return;
        }
        run(context, shutdown).await;
    })
}

async fn run(context: Context, shutdown: Shutdown) {
    let quotas = context.informers.all::<FederatedResourceQuota>();
    let bindings = context.informers.all::<ResourceBinding>();
    let this = Arc::new(Enforcement {
        client: context.client.clone(),
        recorder: recorder(
            &context.client,
            "federated-resource-quota-enforcement-controller",
        ),
        queue: WorkQueue::named("federated-resource-quota-enforcement-controller"),
        quotas: quotas.store(),
        bindings: bindings.store(),
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
    tasks.subscribe(&bindings, move |e: WatchEvent<&ResourceBinding>| {
        if let WatchEvent::Apply(b) | WatchEvent::Delete(b) = e {
            let namespace = b.metadata.namespace.as_deref().unwrap_or("");
            for quota in me.quotas.state() {
                if quota.metadata.namespace.as_deref() == Some(namespace) {
                    me.queue.add(key_of(&quota));
                }
            }
        }
    });
    let ready = async {
        quotas.wait_until_ready().await;
        bindings.wait_until_ready().await;
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
        |key, error| warn!(quota = ?key, %error, "counting a FederatedResourceQuota's usage failed"),
    );
    info!("federated resource quota enforcement running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Enforcement {
    async fn reconcile(&self, key: &QuotaKey) -> Result<(), kube::Error> {
        let (namespace, name) = key;
        let Some(quota) = self.quotas.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        if quota.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let overall = quota.spec.overall.clone();
        let bindings = self.bindings.state();
        let used = bindings_used(namespace, bindings.iter().map(|b| &**b), &overall);
        let reference = reference(&quota);
        if quota.status.overall != overall || quota.status.overall_used != used {
            let patch = status_patch(&[("overall", json!(overall)), ("overallUsed", json!(used))]);
            if let Err(error) = merge_patch_status::<FederatedResourceQuota>(
                &self.client,
                Some(namespace),
                name,
                &patch,
            )
            .await
            {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        REASON_OVERALL_FAILED,
                        "CollectOverallStatus",
                        flotilla_runtime::errors::describe(&error),
                    )
                    .await;
                return Err(error);
            }
        }
        self.recorder
            .note(
                &reference,
                EventType::Normal,
                REASON_OVERALL_SUCCEED,
                "CollectOverallStatus",
                format!("Collect status of FederatedResourceQuota({namespace}/{name}) succeed."),
            )
            .await;
        Ok(())
    }
}
