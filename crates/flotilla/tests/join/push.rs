//! `flotilla join` / `unjoin` in push mode: the objects in both places, idempotence, one member
//! under one name only.

use std::collections::BTreeSet;

use flotilla_api::karmada::Cluster;
use k8s_openapi::api::core::v1::{Namespace, Node, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, ListParams};

use crate::support::{ControlPlane, Members, PATIENCE, eventually, flotilla, ok, stdout};

/// Names of the objects `join` may create in a member for cluster `name`, that exist now.
pub async fn member_objects(member: &kube::Client, name: &str) -> BTreeSet<String> {
    let account = format!("karmada-{name}");
    let role = format!("karmada-controller-manager:karmada-{name}");
    let mut found = BTreeSet::new();
    let accounts: Api<ServiceAccount> = Api::namespaced(member.clone(), "karmada-cluster");
    if accounts.get_opt(&account).await.expect("read").is_some() {
        found.insert(format!("ServiceAccount/{account}"));
    }
    let secrets: Api<Secret> = Api::namespaced(member.clone(), "karmada-cluster");
    if secrets.get_opt(&account).await.expect("read").is_some() {
        found.insert(format!("Secret/{account}"));
    }
    let roles: Api<ClusterRole> = Api::all(member.clone());
    if roles.get_opt(&role).await.expect("read").is_some() {
        found.insert(format!("ClusterRole/{role}"));
    }
    let bindings: Api<ClusterRoleBinding> = Api::all(member.clone());
    if bindings.get_opt(&role).await.expect("read").is_some() {
        found.insert(format!("ClusterRoleBinding/{role}"));
    }
    found
}

/// What exists on the control plane for cluster `name`.
pub async fn control_objects(control: &kube::Client, name: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let clusters: Api<Cluster> = Api::all(control.clone());
    if clusters.get_opt(name).await.expect("read").is_some() {
        found.insert(format!("Cluster/{name}"));
    }
    let secrets: Api<Secret> = Api::namespaced(control.clone(), "karmada-cluster");
    if secrets.get_opt(name).await.expect("read").is_some() {
        found.insert(format!("Secret/{name}"));
    }
    found
}

pub fn join_args<'a>(
    control: &'a ControlPlane,
    members: &'a Members,
    name: &'a str,
    context: &'a str,
) -> Vec<String> {
    vec![
        "join".into(),
        name.into(),
        "--kubeconfig".into(),
        control.kubeconfig.display().to_string(),
        "--cluster-kubeconfig".into(),
        members.kubeconfig.display().to_string(),
        "--cluster-context".into(),
        context.into(),
    ]
}

async fn run(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    flotilla(&args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_creates_the_objects_in_both_places_rejoin_is_idempotent_and_unjoin_removes_them() {
    let control = ControlPlane::start("").await;
    let members = Members::start(&["m1"]).await;
    let m1 = members.cluster("m1");
    let admin = control.client();

    let mut args = join_args(&control, &members, "gpu-1", "m1");
    for extra in [
        "--region",
        "cn-shanghai",
        "--zone",
        "a",
        "--zone",
        "b",
        "--provider",
        "aliyun",
        "--label",
        "tier=gold",
        "--taint",
        "dedicated=gpu:NoSchedule",
    ] {
        args.push(extra.into());
    }
    let output = run(&args).await;
    let printed = ok(&output);
    assert!(
        printed.contains("member: created ServiceAccount karmada-gpu-1"),
        "{printed}"
    );
    assert!(
        printed.contains("control plane: created Cluster gpu-1"),
        "{printed}"
    );
    assert!(printed.contains("cluster gpu-1 joined (Push)"), "{printed}");

    // The control plane: exactly a Cluster and its Secret.
    assert_eq!(
        control_objects(&admin, "gpu-1").await,
        BTreeSet::from(["Cluster/gpu-1".to_owned(), "Secret/gpu-1".to_owned()])
    );
    let cluster = Api::<Cluster>::all(admin.clone())
        .get("gpu-1")
        .await
        .expect("the Cluster");
    assert_eq!(cluster.spec.sync_mode, "Push");
    assert_eq!(cluster.spec.api_endpoint, m1.url);
    assert_eq!(cluster.spec.id, m1.cluster_id);
    let secret_ref = cluster.spec.secret_ref.clone().expect("a secretRef");
    assert_eq!(
        (secret_ref.namespace.as_str(), secret_ref.name.as_str()),
        ("karmada-cluster", "gpu-1")
    );
    assert_eq!(cluster.spec.region, "cn-shanghai");
    assert_eq!(cluster.spec.zones, ["a", "b"]);
    assert_eq!(cluster.spec.provider, "aliyun");
    assert_eq!(
        cluster.metadata.labels.as_ref().expect("labels")["tier"],
        "gold"
    );
    assert_eq!(cluster.spec.taints.len(), 1);
    assert_eq!(cluster.spec.taints[0].key, "dedicated");
    assert_eq!(cluster.spec.taints[0].effect, "NoSchedule");
    let secret = Api::<Secret>::namespaced(admin.clone(), "karmada-cluster")
        .get("gpu-1")
        .await
        .expect("the Secret");
    let data = secret.data.expect("data");
    assert_eq!(
        data.keys().map(String::as_str).collect::<Vec<_>>(),
        ["caBundle", "token"]
    );
    assert_eq!(
        String::from_utf8_lossy(&data["caBundle"].0),
        m1.pki.ca_cert_pem()
    );
    let token = String::from_utf8_lossy(&data["token"].0).into_owned();
    assert!(!token.is_empty());
    assert!(
        !stdout(&output).contains(&token) && !crate::support::stderr(&output).contains(&token),
        "the token must never be printed or logged"
    );

    // The stored credentials reach the member as the control plane will.
    let kubeconfig = members.dir.path().join("stored.kubeconfig");
    crate::support::write_token_kubeconfig(
        &kubeconfig,
        &m1.url,
        Some(m1.pki.ca_cert_pem()),
        &token,
    );
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).expect("kubeconfig"),
        &Default::default(),
    )
    .await
    .expect("config");
    let as_control_plane = kube::Client::try_from(config).expect("client");
    let nodes = Api::<Node>::all(as_control_plane)
        .list(&ListParams::default())
        .await
        .expect("nodes");
    assert_eq!(nodes.items.len(), 2);

    // The member: the account, its token, the role and its binding.
    let member = m1.client();
    let expected_member = BTreeSet::from([
        "ServiceAccount/karmada-gpu-1".to_owned(),
        "Secret/karmada-gpu-1".to_owned(),
        "ClusterRole/karmada-controller-manager:karmada-gpu-1".to_owned(),
        "ClusterRoleBinding/karmada-controller-manager:karmada-gpu-1".to_owned(),
    ]);
    assert_eq!(member_objects(&member, "gpu-1").await, expected_member);

    // Joining again changes nothing and says so.
    let before = cluster.metadata.resource_version.clone();
    let again = ok(&run(&args).await);
    assert!(
        again.contains("control plane: Cluster gpu-1 is up to date"),
        "{again}"
    );
    assert!(
        again.contains("member: ServiceAccount karmada-gpu-1 exists"),
        "{again}"
    );
    let after = Api::<Cluster>::all(admin.clone())
        .get("gpu-1")
        .await
        .expect("the Cluster");
    assert_eq!(after.metadata.resource_version, before);

    // The same member under another name is refused, and nothing is created for that name.
    let error = crate::support::failed(&run(&join_args(&control, &members, "gpu-2", "m1")).await);
    assert!(
        error.contains("this member is already joined as cluster \"gpu-1\""),
        "{error}"
    );
    assert!(control_objects(&admin, "gpu-2").await.is_empty());
    assert!(member_objects(&member, "gpu-2").await.is_empty());

    // unjoin with the control plane's stored token removes everything.
    let removed = ok(&flotilla(&[
        "unjoin",
        "gpu-1",
        "--kubeconfig",
        &control.kubeconfig.display().to_string(),
    ])
    .await);
    assert!(
        removed.contains("control plane: deleted Cluster gpu-1"),
        "{removed}"
    );
    assert!(
        removed.contains("control plane: deleted Secret gpu-1"),
        "{removed}"
    );
    assert!(control_objects(&admin, "gpu-1").await.is_empty());
    eventually(PATIENCE, "the member's objects are collected", || {
        let member = member.clone();
        async move {
            member_objects(&member, "gpu-1")
                .await
                .is_empty()
                .then_some(())
        }
    })
    .await;
    let namespaces: Api<Namespace> = Api::all(member.clone());
    assert!(
        namespaces
            .get_opt("karmada-cluster")
            .await
            .expect("read")
            .is_some(),
        "karmada-cluster existed before join and stays"
    );

    // unjoin is idempotent.
    let again = ok(&flotilla(&[
        "unjoin",
        "gpu-1",
        "--kubeconfig",
        &control.kubeconfig.display().to_string(),
    ])
    .await);
    assert!(again.contains("Cluster gpu-1 does not exist"), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unjoin_with_the_member_kubeconfig_deletes_each_object_at_once() {
    let control = ControlPlane::start("").await;
    let members = Members::start(&["m1"]).await;
    let member = members.cluster("m1").client();
    ok(&run(&join_args(&control, &members, "m1", "m1")).await);
    let removed = ok(&flotilla(&[
        "unjoin",
        "m1",
        "--kubeconfig",
        &control.kubeconfig.display().to_string(),
        "--cluster-kubeconfig",
        &members.kubeconfig.display().to_string(),
        "--cluster-context",
        "m1",
    ])
    .await);
    assert!(
        removed.contains("member: deleted ServiceAccount karmada-m1"),
        "{removed}"
    );
    assert!(member_objects(&member, "m1").await.is_empty());
    assert!(control_objects(&control.client(), "m1").await.is_empty());
}
