//! What `up` puts on the control plane for pull-mode registration, as `karmadactl init` does
//! (`pkg/karmadactl/cmdinit/bootstraptoken/{clusterinfo,agent}` and `cmdinit/karmada/rbac.go`):
//! the `kube-public/cluster-info` ConfigMap (the server URL and CA, signed by the API server's
//! bootstrap signer with every signing token) readable anonymously, and the RBAC that lets
//! bootstrap tokens in `system:bootstrappers:karmada:default-cluster-token` post CSRs that the
//! `agentcsrapproving` controller approves, and agents renew their own certificates.
//!
//! The ConfigMap's kubeconfig follows the server URL of this run; everything else is created
//! when missing and otherwise left as the operator made it.

use anyhow::Context as _;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// The group `karmadactl token create` puts its tokens in.
pub const TOKEN_GROUP: &str = "system:bootstrappers:karmada:default-cluster-token";
/// The group of every karmada-agent certificate.
pub const AGENT_GROUP: &str = "system:karmada:agents";
/// The user `karmadactl register` creates the agent's RBAC as.
pub const RBAC_GENERATOR_USER: &str = "system:karmada:agent:rbac-generator";
const CLUSTER_INFO_ROLE: &str = "system:karmada:bootstrap-signer-clusterinfo";
const RBAC: &str = "rbac.authorization.k8s.io";

/// The kubeconfig `cluster-info` carries: one unnamed cluster with the server and its CA.
pub fn cluster_info_kubeconfig(server: &str, ca_pem: &str) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    format!(
        "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: {server}\n  name: \"\"\ncontexts: null\ncurrent-context: \"\"\nkind: Config\npreferences: {{}}\nusers: null\n"
    )
}

/// Creates or updates the ConfigMap, and creates the RBAC objects that are missing.
pub async fn ensure(client: &kube::Client, server: &str, ca_pem: &str) -> anyhow::Result<()> {
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-public");
    let patch = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"},
        "data": {"kubeconfig": cluster_info_kubeconfig(server, ca_pem)},
    });
    maps.patch(
        "cluster-info",
        &PatchParams::apply("flotilla-up").force(),
        &Patch::Apply(&patch),
    )
    .await
    .context("write kube-public/cluster-info")?;
    create::<Role>(
        Api::namespaced(client.clone(), "kube-public"),
        json!({
            "metadata": {"name": CLUSTER_INFO_ROLE, "namespace": "kube-public"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cluster-info"]}],
        }),
    )
    .await?;
    create::<RoleBinding>(
        Api::namespaced(client.clone(), "kube-public"),
        json!({
            "metadata": {"name": CLUSTER_INFO_ROLE, "namespace": "kube-public"},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": CLUSTER_INFO_ROLE},
            "subjects": [{"apiGroup": RBAC, "kind": "User", "name": "system:anonymous"}],
        }),
    )
    .await?;
    let roles = [
        (
            "system:karmada:certificatesigningrequest:autoapprover",
            "certificatesigningrequests/clusteragent",
        ),
        (
            "system:karmada:certificatesigningrequest:selfautoapprover",
            "certificatesigningrequests/selfclusteragent",
        ),
    ];
    for (name, resource) in roles {
        create::<ClusterRole>(
            Api::all(client.clone()),
            json!({
                "metadata": {"name": name},
                "rules": [{"verbs": ["create"], "apiGroups": ["certificates.k8s.io"], "resources": [resource]}],
            }),
        )
        .await?;
    }
    create::<ClusterRole>(
        Api::all(client.clone()),
        json!({
            "metadata": {"name": "system:karmada:agent-rbac-generator"},
            "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        }),
    )
    .await?;
    let bindings = [
        (
            "system:karmada:agent-bootstrap",
            "system:node-bootstrapper",
            "Group",
            TOKEN_GROUP,
        ),
        (
            "system:karmada:agent-autoapprove-bootstrap",
            "system:karmada:certificatesigningrequest:autoapprover",
            "Group",
            TOKEN_GROUP,
        ),
        (
            "system:karmada:agent-autoapprove-certificate-rotation",
            "system:karmada:certificatesigningrequest:selfautoapprover",
            "Group",
            AGENT_GROUP,
        ),
        (
            "system:karmada:agent-rbac-generator",
            "system:karmada:agent-rbac-generator",
            "User",
            RBAC_GENERATOR_USER,
        ),
    ];
    for (name, role, kind, subject) in bindings {
        create::<ClusterRoleBinding>(
            Api::all(client.clone()),
            json!({
                "metadata": {"name": name},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": RBAC, "kind": kind, "name": subject}],
            }),
        )
        .await?;
    }
    Ok(())
}

/// Creates `object` unless one of its name exists.
async fn create<K>(api: Api<K>, object: Value) -> anyhow::Result<()>
where
    K: kube::Resource<DynamicType = ()>
        + k8s_openapi::Resource
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    let mut object = object;
    object["apiVersion"] = <K as k8s_openapi::Resource>::API_VERSION.into();
    object["kind"] = <K as k8s_openapi::Resource>::KIND.into();
    let typed: K = serde_json::from_value(object).context("build an RBAC object")?;
    match api.create(&PostParams::default(), &typed).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error).with_context(|| {
            format!(
                "create {} {:?}",
                <K as k8s_openapi::Resource>::KIND,
                kube::Resource::meta(&typed).name
            )
        }),
    }
}
