//! `serviceImport` (Karmada's `service-import-controller`): a ServiceImport of type
//! `ClusterSetIP` gets its derived Service `derived-<name>` in its namespace (type ClusterIP,
//! the import's ports; an existing one keeps its cluster IP), whose load-balancer status lists
//! the import's IPs; the derived Service goes when the ServiceImport does. Each sync is
//! recorded on the ServiceImport as `SyncDerivedServiceSucceed` or `SyncDerivedServiceFailed`.

use std::sync::Arc;

use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource as _;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{info, warn};

use super::api::{CLUSTER_SET_IP, ServiceImport};
use super::derived_service_name;
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "serviceImport";
/// Normal event: the derived Service is in place.
pub const SYNC_SUCCEED: &str = "SyncDerivedServiceSucceed";
/// Warning event: the derived Service could not be written.
pub const SYNC_FAILED: &str = "SyncDerivedServiceFailed";

/// The derived Service's ports: the import's (name, protocol, port, appProtocol).
pub fn service_ports(import: &ServiceImport) -> Vec<ServicePort> {
    import
        .spec
        .ports
        .iter()
        .map(|p| ServicePort {
            name: p.name.clone(),
            protocol: p.protocol.clone(),
            port: p.port,
            app_protocol: p.app_protocol.clone(),
            ..ServicePort::default()
        })
        .collect()
}

/// The derived Service `derived-<name>` of `import` (Karmada's `deriveServiceFromServiceImport`).
pub fn derived_service(import: &ServiceImport) -> Service {
    Service {
        metadata: ObjectMeta {
            namespace: import.metadata.namespace.clone(),
            name: Some(derived_service_name(
                import.metadata.name.as_deref().unwrap_or_default(),
            )),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_owned()),
            ports: Some(service_ports(import)),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

/// Whether `existing` already has the type and ports of `desired` (the ports' name, protocol,
/// port and appProtocol; the API server's defaults aside).
pub(crate) fn up_to_date(existing: &Service, desired: &Service) -> bool {
    let key = |s: &Service| {
        let spec = s.spec.clone().unwrap_or_default();
        let ports: Vec<_> = spec
            .ports
            .unwrap_or_default()
            .into_iter()
            .map(|p| {
                (
                    p.name.unwrap_or_default(),
                    p.protocol.unwrap_or_else(|| "TCP".to_owned()),
                    p.port,
                    p.app_protocol,
                )
            })
            .collect();
        (spec.type_.unwrap_or_else(|| "ClusterIP".to_owned()), ports)
    };
    key(existing) == key(desired)
}

struct Controller {
    client: kube::Client,
    imports: Store<ServiceImport>,
    queue: WorkQueue<(String, String)>,
    recorder: Recorder,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

/// Waits until the control plane serves ServiceImports (`up` installs the CRD; a control plane
/// without it, or whose CRD was deleted, is checked again every few seconds). `false` on
/// shutdown.
async fn served(client: &kube::Client, shutdown: &Shutdown) -> bool {
    let api = Api::<ServiceImport>::all(client.clone());
    let mut said = false;
    loop {
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => return true,
            Err(error) => {
                if !said {
                    info!(%error, "waiting for ServiceImports to be served");
                    said = true;
                }
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return false,
            () = tokio::time::sleep(std::time::Duration::from_secs(5)) => {}
        }
    }
}

async fn run(context: Context, shutdown: Shutdown) {
    if !served(&context.client, &shutdown).await {
        return;
    }
    let imports = context.informers.all::<ServiceImport>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        imports: imports.store(),
        queue: WorkQueue::named("service-import-controller"),
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: "service-import-controller".into(),
                instance: None,
            },
        ),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&imports, move |event: WatchEvent<&ServiceImport>| {
        let import = match event {
            WatchEvent::Apply(i) | WatchEvent::InitApply(i) | WatchEvent::Delete(i) => i,
            WatchEvent::Init | WatchEvent::InitDone => return,
        };
        me.queue.add((
            import.metadata.namespace.clone().unwrap_or_default(),
            import.metadata.name.clone().unwrap_or_default(),
        ));
    });
    if !until_ready(&shutdown, imports.wait_until_ready()).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        2,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key.0, &key.1).await }
        },
        |key, error: &kube::Error| {
            warn!(namespace = %key.0, name = %key.1, %error, "syncing the derived Service failed")
        },
    );
    info!("service import controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    async fn reconcile(&self, namespace: &str, name: &str) -> Result<(), kube::Error> {
        let services = Api::<Service>::namespaced(self.client.clone(), namespace);
        let Some(import) = self.imports.get(&ObjectRef::new(name).within(namespace)) else {
            return match services
                .delete(&derived_service_name(name), &DeleteParams::default())
                .await
            {
                Ok(_) => {
                    info!(%namespace, %name, "deleted the derived Service");
                    Ok(())
                }
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
                Err(error) => Err(error),
            };
        };
        if import.metadata.deletion_timestamp.is_some() || import.spec.type_ != CLUSTER_SET_IP {
            return Ok(());
        }
        let reference = import.object_ref(&());
        match self.derive(&services, &import).await {
            Ok(()) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        SYNC_SUCCEED,
                        SYNC_SUCCEED,
                        format!("Sync derived service for serviceImport({name}) succeed."),
                    )
                    .await;
                Ok(())
            }
            Err(error) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        SYNC_FAILED,
                        SYNC_FAILED,
                        flotilla_runtime::errors::describe(&error),
                    )
                    .await;
                Err(error)
            }
        }
    }

    /// Creates or updates the derived Service, then its status.
    async fn derive(
        &self,
        services: &Api<Service>,
        import: &ServiceImport,
    ) -> Result<(), kube::Error> {
        let desired = derived_service(import);
        let name = desired.metadata.name.clone().unwrap_or_default();
        match services.get_opt(&name).await? {
            None => {
                services.create(&PostParams::default(), &desired).await?;
                info!(service = %name, "created the derived Service");
            }
            Some(existing) if up_to_date(&existing, &desired) => {}
            Some(existing) => {
                let mut updated = existing.clone();
                let spec = updated.spec.get_or_insert_with(ServiceSpec::default);
                spec.type_ = Some("ClusterIP".to_owned());
                spec.ports = desired.spec.as_ref().and_then(|s| s.ports.clone());
                services
                    .replace(&name, &PostParams::default(), &updated)
                    .await?;
            }
        }
        let ingress: Vec<_> = import.spec.ips.iter().map(|ip| json!({"ip": ip})).collect();
        let patch = json!({"status": {"loadBalancer": {"ingress": ingress}}});
        services
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(())
    }
}
