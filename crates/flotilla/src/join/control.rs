//! The control plane's half of a push join: the Secret `karmada-cluster/<cluster>` with the
//! member's `token` and `caBundle`, and the `Cluster` object; and their removal.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_api::karmada::{Cluster, LocalSecretReference};
use k8s_openapi::ByteString;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, DeleteParams, PostParams};

use super::member::delete;
use super::{JoinError, JoinRequest, MemberAccess, Report, Undo};

/// Where member credentials live on the control plane (Karmada's `karmada-cluster`).
pub const CONTROL_NAMESPACE: &str = "karmada-cluster";
/// How long `unjoin` waits for the Cluster's finalizers (the cluster controller's cleanup).
const DELETE_WAIT: Duration = Duration::from_secs(60);

fn failed(step: &str) -> impl FnOnce(kube::Error) -> JoinError + '_ {
    move |source| JoinError::Step {
        side: "control plane".into(),
        step: step.to_owned(),
        source,
    }
}

/// The Cluster already named `name`, if it is this member; refuses a name taken by another
/// member and a member already joined under another name.
pub async fn check_duplicates(
    control: &kube::Client,
    name: &str,
    id: &str,
    mode: &str,
) -> Result<Option<Cluster>, JoinError> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    let list = clusters
        .list(&Default::default())
        .await
        .map_err(failed("list clusters"))?;
    let mut same = None;
    for cluster in list.items {
        let other = cluster.name().to_owned();
        if other == name {
            if cluster.spec.id != id {
                return Err(JoinError::DuplicateName {
                    name: name.to_owned(),
                    existing_id: cluster.spec.id.clone(),
                    id: id.to_owned(),
                });
            }
            if cluster.spec.sync_mode != mode {
                return Err(JoinError::ModeConflict {
                    name: name.to_owned(),
                    mode: cluster.spec.sync_mode.clone(),
                });
            }
            same = Some(cluster);
        } else if !id.is_empty() && cluster.spec.id == id {
            return Err(JoinError::DuplicateMember {
                name: name.to_owned(),
                other,
                id: id.to_owned(),
            });
        }
    }
    Ok(same)
}

/// `<cluster>-impersonator`: the Secret holding the member impersonator's token (Karmada's
/// `GenerateImpersonationSecretName`).
pub fn impersonator_secret_name(cluster: &str) -> String {
    format!("{cluster}-impersonator")
}

/// Creates or refreshes the member's credentials Secret.
pub async fn ensure_secret(
    control: &kube::Client,
    name: &str,
    token: &str,
    ca_pem: &str,
    report: &mut Report,
    undo: &mut Vec<Undo>,
) -> Result<(), JoinError> {
    let data = BTreeMap::from([
        ("token".to_owned(), ByteString(token.as_bytes().to_vec())),
        (
            "caBundle".to_owned(),
            ByteString(ca_pem.as_bytes().to_vec()),
        ),
    ]);
    ensure_opaque(control, name, data, "token, caBundle", report, undo).await
}

/// Creates or refreshes the Secret with the member impersonator's token.
pub async fn ensure_impersonator_secret(
    control: &kube::Client,
    cluster: &str,
    token: &str,
    report: &mut Report,
    undo: &mut Vec<Undo>,
) -> Result<(), JoinError> {
    let data = BTreeMap::from([("token".to_owned(), ByteString(token.as_bytes().to_vec()))]);
    let name = impersonator_secret_name(cluster);
    ensure_opaque(control, &name, data, "token", report, undo).await
}

async fn ensure_opaque(
    control: &kube::Client,
    name: &str,
    data: BTreeMap<String, ByteString>,
    keys: &str,
    report: &mut Report,
    undo: &mut Vec<Undo>,
) -> Result<(), JoinError> {
    let secrets: Api<Secret> = Api::namespaced(control.clone(), CONTROL_NAMESPACE);
    match secrets
        .get_opt(name)
        .await
        .map_err(failed("read the member Secret"))?
    {
        None => {
            let secret = Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: Some(CONTROL_NAMESPACE.to_owned()),
                    ..Default::default()
                },
                type_: Some("Opaque".into()),
                data: Some(data),
                ..Default::default()
            };
            secrets
                .create(&PostParams::default(), &secret)
                .await
                .map_err(failed("create the member Secret"))?;
            undo.push(Undo::ControlSecret(name.to_owned()));
            report.did(format!(
                "control plane: created Secret {CONTROL_NAMESPACE}/{name} ({keys})"
            ));
        }
        Some(mut existing) if existing.data.as_ref() != Some(&data) => {
            existing.data = Some(data);
            existing.string_data = None;
            secrets
                .replace(name, &PostParams::default(), &existing)
                .await
                .map_err(failed("update the member Secret"))?;
            report.did(format!(
                "control plane: updated Secret {CONTROL_NAMESPACE}/{name} ({keys})"
            ));
        }
        Some(_) => report.did(format!(
            "control plane: Secret {CONTROL_NAMESPACE}/{name} is up to date"
        )),
    }
    Ok(())
}

/// What the Cluster should say; `existing` keeps what others maintain (status, taints the
/// cluster controller added, labels added later).
fn desired(
    request: &JoinRequest,
    endpoint: &str,
    insecure: bool,
    id: &str,
    existing: Option<&Cluster>,
) -> Cluster {
    let mut cluster = existing.cloned().unwrap_or_default();
    cluster.metadata.name = Some(request.name.clone());
    let labels = cluster.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.extend(request.labels.clone());
    if labels.is_empty() {
        cluster.metadata.labels = None;
    }
    let spec = &mut cluster.spec;
    spec.id = id.to_owned();
    spec.sync_mode = "Push".to_owned();
    spec.api_endpoint = endpoint.to_owned();
    spec.insecure_skip_tls_verification = insecure;
    spec.secret_ref = Some(LocalSecretReference {
        namespace: CONTROL_NAMESPACE.to_owned(),
        name: request.name.clone(),
    });
    spec.impersonator_secret_ref = Some(LocalSecretReference {
        namespace: CONTROL_NAMESPACE.to_owned(),
        name: impersonator_secret_name(&request.name),
    });
    if let Some(region) = &request.region {
        spec.region = region.clone();
    }
    if let Some(provider) = &request.provider {
        spec.provider = provider.clone();
    }
    if !request.zones.is_empty() {
        spec.zones = request.zones.clone();
        spec.zone.clear();
    }
    for taint in &request.taints {
        spec.taints
            .retain(|t| !(t.key == taint.key && t.effect == taint.effect));
        spec.taints.push(taint.clone());
    }
    cluster
}

/// Creates the Cluster or brings an existing one (same member) up to date.
pub async fn ensure_cluster(
    control: &kube::Client,
    request: &JoinRequest,
    member: &MemberAccess,
    id: &str,
    existing: Option<&Cluster>,
    report: &mut Report,
    undo: &mut Vec<Undo>,
) -> Result<(), JoinError> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    let name = &request.name;
    let endpoint = &member.endpoint;
    let cluster = desired(request, endpoint, member.insecure, id, existing);
    match existing {
        None => {
            clusters
                .create(&PostParams::default(), &cluster)
                .await
                .map_err(failed("create the Cluster"))?;
            undo.push(Undo::Cluster(name.clone()));
            report.did(format!(
                "control plane: created Cluster {name} (syncMode Push, apiEndpoint {endpoint}, id {id})"
            ));
        }
        Some(existing)
            if existing.spec != cluster.spec
                || existing.metadata.labels != cluster.metadata.labels =>
        {
            clusters
                .replace(name, &PostParams::default(), &cluster)
                .await
                .map_err(failed("update the Cluster"))?;
            report.did(format!("control plane: updated Cluster {name}"));
        }
        Some(_) => report.did(format!("control plane: Cluster {name} is up to date")),
    }
    Ok(())
}

/// Deletes the Cluster (waiting for its finalizers), its execution namespace, its Secret and
/// an agent's Lease. Returns the Cluster as it was, if there was one.
pub async fn remove(
    control: &kube::Client,
    name: &str,
    report: &mut Report,
) -> Result<Option<Cluster>, JoinError> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    let cluster = clusters
        .get_opt(name)
        .await
        .map_err(failed("read the Cluster"))?;
    if cluster.is_some() {
        match clusters.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(source) => return Err(failed("delete the Cluster")(source)),
        }
        let gone = kube::runtime::wait::await_condition(
            clusters.clone(),
            name,
            kube::runtime::wait::conditions::is_deleted(
                cluster
                    .as_ref()
                    .and_then(|c| c.metadata.uid.as_deref())
                    .unwrap_or_default(),
            ),
        );
        match tokio::time::timeout(DELETE_WAIT, gone).await {
            Ok(Ok(_)) => report.did(format!("control plane: deleted Cluster {name}")),
            Ok(Err(error)) => {
                return Err(JoinError::Unjoin {
                    message: format!("waiting for Cluster {name} to be deleted: {error}"),
                });
            }
            Err(_) => {
                let finalizers = clusters
                    .get_opt(name)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|c| c.metadata.finalizers)
                    .unwrap_or_default();
                return Err(JoinError::Unjoin {
                    message: format!(
                        "Cluster {name} is still terminating after {}s (finalizers {finalizers:?}); run unjoin again once the cluster controller has cleaned up",
                        DELETE_WAIT.as_secs()
                    ),
                });
            }
        }
    } else {
        report.did(format!("control plane: Cluster {name} does not exist"));
    }
    let namespaces: Api<Namespace> = Api::all(control.clone());
    let execution = flotilla_api::karmada::names::execution_space_name(name);
    if namespaces
        .get_opt(&execution)
        .await
        .map_err(failed("read the execution namespace"))?
        .is_some()
    {
        delete(
            "control plane",
            &namespaces,
            &execution,
            "Namespace",
            report,
        )
        .await?;
    }
    let secret_name = cluster
        .as_ref()
        .and_then(|c| c.spec.secret_ref.as_ref())
        .filter(|r| r.namespace == CONTROL_NAMESPACE)
        .map(|r| r.name.clone())
        .unwrap_or_else(|| name.to_owned());
    let impersonator_name = cluster
        .as_ref()
        .and_then(|c| c.spec.impersonator_secret_ref.as_ref())
        .filter(|r| r.namespace == CONTROL_NAMESPACE)
        .map(|r| r.name.clone())
        .unwrap_or_else(|| impersonator_secret_name(name));
    let secrets: Api<Secret> = Api::namespaced(control.clone(), CONTROL_NAMESPACE);
    for secret_name in [secret_name, impersonator_name] {
        if secrets
            .get_opt(&secret_name)
            .await
            .map_err(failed("read the member Secret"))?
            .is_some()
        {
            delete("control plane", &secrets, &secret_name, "Secret", report).await?;
        }
    }
    let leases: Api<Lease> = Api::namespaced(control.clone(), CONTROL_NAMESPACE);
    if leases
        .get_opt(name)
        .await
        .map_err(failed("read the agent Lease"))?
        .is_some()
    {
        delete("control plane", &leases, name, "Lease", report).await?;
    }
    Ok(cluster)
}
