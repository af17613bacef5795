//! The objects `join` keeps in the member: namespace `karmada-cluster` (when missing), the
//! ClusterRole `karmada-controller-manager:karmada-<cluster>` that grants the control plane what
//! it needs, and — owned by that ClusterRole, so one delete removes them all — its
//! ClusterRoleBinding, the ServiceAccount `karmada-<cluster>` and that account's token Secret,
//! and the ServiceAccount `karmada-impersonator` with its token Secret (the cluster proxy acts
//! as its callers with it; the `unifiedAuth` controller gives it its rights).

use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};
use serde_json::json;

use super::{JoinError, Report, Undo};

/// The namespace that holds the control plane's service account in the member (Karmada's).
pub const MEMBER_NAMESPACE: &str = "karmada-cluster";
/// Annotation on a `karmada-cluster` namespace that `join` created (so `unjoin` removes it).
const CREATED_BY: &str = "flotilla.io/created-by";
/// How long the member's token controller may take to fill in the token.
const TOKEN_WAIT: Duration = Duration::from_secs(30);

/// `karmada-<cluster>`: the service account (and its token Secret) in the member.
pub fn service_account_name(cluster: &str) -> String {
    format!("karmada-{cluster}")
}

/// `karmada-controller-manager:karmada-<cluster>`: the ClusterRole and its binding.
pub fn role_name(cluster: &str) -> String {
    format!(
        "karmada-controller-manager:{}",
        service_account_name(cluster)
    )
}

fn failed(step: &str) -> impl FnOnce(kube::Error) -> JoinError + '_ {
    move |source| JoinError::Step {
        side: "member".into(),
        step: step.to_owned(),
        source,
    }
}

/// The member's impersonator: the ServiceAccount (and its token Secret) the cluster proxy uses
/// to act as its callers (Karmada's; its rights come from the `unifiedAuth` controller).
pub const IMPERSONATOR: &str = "karmada-impersonator";

/// The tokens `join` records on the control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The control plane's service account.
    pub control: String,
    /// The impersonator's.
    pub impersonator: String,
}

/// Creates what is missing and returns the service accounts' tokens. Everything created is
/// recorded in `undo`.
pub async fn ensure(
    client: &kube::Client,
    cluster: &str,
    report: &mut Report,
    undo: &mut Vec<Undo>,
) -> Result<Tokens, JoinError> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if namespaces
        .get_opt(MEMBER_NAMESPACE)
        .await
        .map_err(failed("read namespace karmada-cluster"))?
        .is_none()
    {
        let namespace: Namespace = from_json(json!({
            "metadata": {"name": MEMBER_NAMESPACE, "annotations": {CREATED_BY: "flotilla-join"}},
        }));
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .map_err(failed("create namespace karmada-cluster"))?;
        undo.push(Undo::MemberNamespace);
        report.did(format!("member: created Namespace {MEMBER_NAMESPACE}"));
    } else {
        report.did(format!("member: Namespace {MEMBER_NAMESPACE} exists"));
    }

    let account = service_account_name(cluster);
    let role = role_name(cluster);
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let anchor = match roles
        .get_opt(&role)
        .await
        .map_err(failed("read the ClusterRole"))?
    {
        Some(existing) => {
            report.did(format!("member: ClusterRole {role} exists"));
            existing
        }
        None => {
            let object: ClusterRole = from_json(json!({
                "metadata": {"name": role},
                "rules": [
                    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                    {"nonResourceURLs": ["*"], "verbs": ["get"]},
                ],
            }));
            let created = roles
                .create(&PostParams::default(), &object)
                .await
                .map_err(failed("create the ClusterRole"))?;
            undo.push(Undo::MemberRole(role.clone()));
            report.did(format!("member: created ClusterRole {role}"));
            created
        }
    };
    let owner = json!([{
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "name": role,
        "uid": anchor.metadata.uid.clone().unwrap_or_default(),
    }]);

    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let binding: ClusterRoleBinding = from_json(json!({
        "metadata": {"name": role, "ownerReferences": owner},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": MEMBER_NAMESPACE}],
    }));
    create_if_missing(&bindings, &binding, &role, "ClusterRoleBinding", report)
        .await?
        .then(|| undo.push(Undo::MemberBinding(role.clone())));

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), MEMBER_NAMESPACE);
    let sa: ServiceAccount = from_json(json!({
        "metadata": {"name": account, "ownerReferences": owner},
    }));
    create_if_missing(&accounts, &sa, &account, "ServiceAccount", report)
        .await?
        .then(|| undo.push(Undo::MemberAccount(account.clone())));

    // The impersonator, owned by the same ClusterRole (one delete removes everything).
    let impersonator: ServiceAccount = from_json(json!({
        "metadata": {"name": IMPERSONATOR, "ownerReferences": owner},
    }));
    create_if_missing(
        &accounts,
        &impersonator,
        IMPERSONATOR,
        "ServiceAccount",
        report,
    )
    .await?
    .then(|| undo.push(Undo::MemberAccount(IMPERSONATOR.to_owned())));

    let secrets: Api<Secret> = Api::namespaced(client.clone(), MEMBER_NAMESPACE);
    for name in [account.as_str(), IMPERSONATOR] {
        let secret: Secret = from_json(json!({
            "metadata": {
                "name": name,
                "ownerReferences": owner,
                "annotations": {"kubernetes.io/service-account.name": name},
            },
            "type": "kubernetes.io/service-account-token",
        }));
        create_if_missing(&secrets, &secret, name, "Secret", report)
            .await?
            .then(|| undo.push(Undo::MemberSecret(name.to_owned())));
    }
    Ok(Tokens {
        control: filled_token(&secrets, &account).await?,
        impersonator: filled_token(&secrets, IMPERSONATOR).await?,
    })
}

/// The token of the service-account token Secret `account`, once the member filled it in.
async fn filled_token(secrets: &Api<Secret>, account: &str) -> Result<String, JoinError> {
    let secrets = secrets.clone();
    let filled = kube::runtime::wait::await_condition(secrets, account, |s: Option<&Secret>| {
        s.and_then(|s| s.data.as_ref())
            .is_some_and(|d| d.get("token").is_some_and(|t| !t.0.is_empty()))
    });
    let secret = match tokio::time::timeout(TOKEN_WAIT, filled).await {
        Ok(Ok(Some(secret))) => secret,
        Ok(Ok(None)) => {
            return Err(JoinError::Token {
                message: format!("Secret {MEMBER_NAMESPACE}/{account} disappeared"),
            });
        }
        Ok(Err(error)) => {
            return Err(JoinError::Token {
                message: format!("watching Secret {MEMBER_NAMESPACE}/{account}: {error}"),
            });
        }
        Err(_) => {
            return Err(JoinError::Token {
                message: format!(
                    "the member did not fill in the token of Secret {MEMBER_NAMESPACE}/{account} within {}s (is its token controller running?)",
                    TOKEN_WAIT.as_secs()
                ),
            });
        }
    };
    let token = secret
        .data
        .as_ref()
        .and_then(|d| d.get("token"))
        .map(|t| String::from_utf8_lossy(&t.0).into_owned())
        .unwrap_or_default();
    Ok(token)
}

async fn create_if_missing<K>(
    api: &Api<K>,
    object: &K,
    name: &str,
    kind: &str,
    report: &mut Report,
) -> Result<bool, JoinError>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let step = format!("create {kind} {name}");
    match api.create(&PostParams::default(), object).await {
        Ok(_) => {
            report.did(format!("member: created {kind} {name}"));
            Ok(true)
        }
        Err(kube::Error::Api(status)) if status.code == 409 => {
            report.did(format!("member: {kind} {name} exists"));
            Ok(false)
        }
        Err(source) => Err(JoinError::Step {
            side: "member".into(),
            step,
            source,
        }),
    }
}

/// Removes what `join` made in the member. With the control plane's own token (`admin` false)
/// only the ClusterRole can be deleted before the token stops working: the member's garbage
/// collector removes the binding, account and Secret it owns. With admin credentials each
/// object is deleted, and the namespace too when `join` created it.
pub async fn remove(
    client: &kube::Client,
    cluster: &str,
    admin: bool,
    report: &mut Report,
) -> Result<(), JoinError> {
    let role = role_name(cluster);
    let account = service_account_name(cluster);
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..Default::default()
    };
    if admin {
        let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
        delete("member", &bindings, &role, "ClusterRoleBinding", report).await?;
        let secrets: Api<Secret> = Api::namespaced(client.clone(), MEMBER_NAMESPACE);
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), MEMBER_NAMESPACE);
        for name in [account.as_str(), IMPERSONATOR] {
            delete("member", &secrets, name, "Secret", report).await?;
            delete("member", &accounts, name, "ServiceAccount", report).await?;
        }
    }
    let roles: Api<ClusterRole> = Api::all(client.clone());
    match roles.delete(&role, &background).await {
        Ok(_) if admin => report.did(format!("member: deleted ClusterRole {role}")),
        Ok(_) => report.did(format!(
            "member: deleted ClusterRole {role} (the member's garbage collector removes the ClusterRoleBinding, ServiceAccount and Secret it owns)"
        )),
        Err(kube::Error::Api(status)) if status.code == 404 => {
            report.did(format!("member: ClusterRole {role} already gone"));
        }
        Err(source) => {
            return Err(JoinError::Step {
                side: "member".into(),
                step: format!("delete ClusterRole {role}"),
                source,
            });
        }
    }
    if admin {
        let namespaces: Api<Namespace> = Api::all(client.clone());
        if let Some(namespace) = namespaces
            .get_opt(MEMBER_NAMESPACE)
            .await
            .map_err(failed("read namespace karmada-cluster"))?
        {
            let ours = namespace
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(CREATED_BY));
            if ours {
                delete("member", &namespaces, MEMBER_NAMESPACE, "Namespace", report).await?;
            }
        }
    }
    Ok(())
}

pub(super) async fn delete<K>(
    side: &str,
    api: &Api<K>,
    name: &str,
    kind: &str,
    report: &mut Report,
) -> Result<(), JoinError>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            report.did(format!("{side}: deleted {kind} {name}"));
            Ok(())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => {
            report.did(format!("{side}: {kind} {name} already gone"));
            Ok(())
        }
        Err(source) => Err(JoinError::Step {
            side: side.to_owned(),
            step: format!("delete {kind} {name}"),
            source,
        }),
    }
}

fn from_json<K: serde::de::DeserializeOwned>(value: serde_json::Value) -> K {
    serde_json::from_value(value).expect("objects built here match their types")
}
