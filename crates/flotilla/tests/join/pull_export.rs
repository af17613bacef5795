//! The ServiceExport flow with a Pull member, end to end: `flotilla up`, member `m2` joined in
//! Push mode, member `m1` registered by `flotilla agent` from a bootstrap token (so with the
//! RBAC the bootstrap grants an agent). A Service exported from both members is reported by
//! `m1`'s agent and by the controller manager for `m2`, each exactly once, and imported on the
//! control plane as `imported-<cluster>-<slice>` of `derived-<service>`; deleting the export
//! withdraws both members' reports.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::karmada::{ApiEnablementStatus, Cluster};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::bootstrap::{Agent, Up, agent_command, ready};
use crate::support::{Members, PATIENCE, eventually, flotilla, ok};

const NS: &str = "pull-export";
const APP: &str = "web";
const MEMBERS: [&str; 2] = ["m1", "m2"];

/// The client of simulated member `name`.
async fn member(members: &Members, name: &str) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&members.kubeconfig).expect("the members' kubeconfig");
    let options = kube::config::KubeConfigOptions {
        context: Some(name.into()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("a member config");
    kube::Client::try_from(config).expect("a member client")
}

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// Creates `object` (its `apiVersion`, `kind`, namespace) with `client`.
async fn create(client: &kube::Client, plural: &str, object: Value) {
    let ar = resource(
        object["apiVersion"].as_str().expect("an apiVersion"),
        object["kind"].as_str().expect("a kind"),
        plural,
    );
    let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let object: DynamicObject = serde_json::from_value(object).expect("an object");
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("create {plural} {:?}: {e}", object.metadata.name));
}

/// `(name, endpoints)` of the slices of `service` in `NS`, optionally only those not written
/// by Karmada.
async fn slices(
    client: &kube::Client,
    ns: &str,
    service: &str,
    own_only: bool,
) -> Vec<(String, usize)> {
    let api: Api<EndpointSlice> = Api::namespaced(client.clone(), ns);
    let selector = format!("kubernetes.io/service-name={service}");
    let Ok(list) = api.list(&ListParams::default().labels(&selector)).await else {
        return Vec::new();
    };
    let mut found: Vec<(String, usize)> = list
        .items
        .into_iter()
        .filter(|s| {
            !own_only
                || !s
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("endpointslice.kubernetes.io/managed-by"))
                    .is_some_and(|by| by.ends_with(".karmada.io"))
        })
        .map(|s| {
            let name = s.metadata.name.unwrap_or_default();
            (name, s.endpoints.len())
        })
        .collect();
    found.sort();
    found
}

/// The ServiceExport flow's reports of `APP` in `cluster`'s execution namespace.
async fn reports(
    admin: &kube::Client,
    cluster: &str,
) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let selector =
        format!("endpointslice.karmada.io/name={APP},endpointslice.karmada.io/namespace={NS}");
    reports_of(admin, cluster, &selector).await
}

/// The Works of `cluster`'s execution namespace matching `selector`: work name →
/// (`managed-by`, the field managers that wrote it).
async fn reports_of(
    admin: &kube::Client,
    cluster: &str,
    selector: &str,
) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let works: Api<DynamicObject> = Api::namespaced_with(
        admin.clone(),
        &format!("karmada-es-{cluster}"),
        &resource("work.karmada.io/v1alpha1", "Work", "works"),
    );
    let Ok(list) = works.list(&ListParams::default().labels(selector)).await else {
        return BTreeMap::new();
    };
    list.items
        .into_iter()
        .map(|w| {
            let managed_by = w
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("endpointslice.karmada.io/managed-by"))
                .cloned()
                .unwrap_or_default();
            let managers = w
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .filter_map(|m| m.manager.clone())
                .collect();
            (w.metadata.name.unwrap_or_default(), (managed_by, managers))
        })
        .collect()
}

fn workload(ns: &str) -> [(&'static str, Value); 2] {
    [
        (
            "deployments",
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": APP, "namespace": ns},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": APP}},
                    "template": {
                        "metadata": {"labels": {"app": APP}},
                        "spec": {"containers": [{"name": "web", "image": "busybox", "args": ["nc", "-lk", "-p", "80", "-e", "echo", "hello"]}]},
                    },
                },
            }),
        ),
        (
            "services",
            json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": APP, "namespace": ns},
                "spec": {"selector": {"app": APP}, "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
            }),
        ),
    ]
}

/// `flotilla up` with `m2` joined in Push mode and `m1` registered by `flotilla agent` from a
/// bootstrap token, both Ready; `flags` are given to both processes.
struct World {
    up: Up,
    members: Members,
    admin: kube::Client,
    agent: Agent,
    clusters: Api<Cluster>,
}

impl World {
    async fn start(flags: &[&str]) -> World {
        let up = Up::start(flags);
        let members = Members::start(&MEMBERS).await;
        let admin = up.client().await;
        let control = up.kubeconfig.display().to_string();
        let kubeconfig = members.kubeconfig.display().to_string();
        ok(&flotilla(&[
            "join",
            "m2",
            "--kubeconfig",
            &control,
            "--cluster-kubeconfig",
            &kubeconfig,
            "--cluster-context",
            "m2",
        ])
        .await);
        let printed = ok(&flotilla(&[
            "token",
            "create",
            "--print-register-command",
            "--kubeconfig",
            &control,
        ])
        .await);
        let mut args = agent_command(
            &printed,
            "m1",
            &members.kubeconfig,
            &up.dir.path().join("agent-m1"),
        );
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        let agent = Agent::spawn(&args, up.dir.path().join("agent-m1.log"));
        let clusters: Api<Cluster> = Api::all(admin.clone());
        for (name, mode) in [("m1", "Pull"), ("m2", "Push")] {
            let cluster = eventually(PATIENCE, &format!("{name} is Ready"), || {
                let clusters = clusters.clone();
                async move { clusters.get_opt(name).await.ok().flatten().filter(ready) }
            })
            .await;
            assert_eq!(cluster.spec.sync_mode, mode, "{}", agent.output());
        }
        World {
            up,
            members,
            admin,
            agent,
            clusters,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_members_export_is_reported_by_its_agent_and_a_push_members_once_by_the_control_plane()
 {
    let World {
        up: _up,
        members,
        admin,
        agent,
        clusters,
    } = World::start(&[]).await;

    // The namespace (propagated to every member) and the ServiceExport CRD in both members.
    create(
        &admin,
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    )
    .await;
    create(
        &admin,
        "clusterpropagationpolicies",
        json!({
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": "serviceexports-crd"},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "name": "serviceexports.multicluster.x-k8s.io"}],
                "placement": {"clusterAffinity": {"clusterNames": MEMBERS}},
            },
        }),
    )
    .await;
    let export_resource = resource(
        "multicluster.x-k8s.io/v1alpha1",
        "ServiceExport",
        "serviceexports",
    );
    let mut clients = Vec::new();
    for name in MEMBERS {
        let client = member(&members, name).await;
        let exports: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), NS, &export_resource);
        let namespaces: Api<Namespace> = Api::all(client.clone());
        eventually(
            PATIENCE,
            &format!("{name} has namespace {NS} and serves ServiceExports"),
            || {
                let (exports, namespaces) = (exports.clone(), namespaces.clone());
                async move {
                    namespaces.get_opt(NS).await.ok().flatten()?;
                    exports.list(&ListParams::default()).await.ok()
                }
            },
        )
        .await;
        // The workload lives in the member itself.
        for (plural, object) in workload(NS) {
            create(&client, plural, object).await;
        }
        clients.push((name, client));
    }
    let mut own = BTreeMap::new();
    for (name, client) in &clients {
        let found = eventually(PATIENCE, &format!("{name}'s slice of {APP}"), || async {
            let found = slices(client, NS, APP, true).await;
            (found.iter().map(|(_, n)| n).sum::<usize>() == 1).then_some(found)
        })
        .await;
        own.insert(*name, found);
    }

    // Exported from both members, once both report the API (the scheduler places the export
    // only on clusters that serve it).
    for name in MEMBERS {
        eventually(
            PATIENCE,
            &format!("{name} reports the ServiceExport API"),
            || {
                let clusters = clusters.clone();
                async move {
                    let cluster = clusters.get_opt(name).await.ok().flatten()?;
                    let served =
                        cluster.api_enablement("multicluster.x-k8s.io/v1alpha1", "ServiceExport");
                    (served == ApiEnablementStatus::Enabled).then_some(())
                }
            },
        )
        .await;
    }
    create(
        &admin,
        "serviceexports",
        json!({
            "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport",
            "metadata": {"name": APP, "namespace": NS},
        }),
    )
    .await;
    create(
        &admin,
        "propagationpolicies",
        json!({
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "export-web", "namespace": NS},
            "spec": {
                "resourceSelectors": [{"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceExport", "name": APP}],
                "placement": {"clusterAffinity": {"clusterNames": MEMBERS}},
            },
        }),
    )
    .await;

    // Every member slice imported once, named after its cluster.
    let derived = format!("derived-{APP}");
    let want: Vec<(String, usize)> = {
        let mut want: Vec<(String, usize)> = own
            .iter()
            .flat_map(|(cluster, found)| {
                found
                    .iter()
                    .map(move |(slice, n)| (format!("imported-{cluster}-{slice}"), *n))
            })
            .collect();
        want.sort();
        want
    };
    eventually(
        PATIENCE,
        "both members' slices imported on the control plane",
        || async {
            let found = slices(&admin, NS, &derived, false).await;
            (found == want).then_some(())
        },
    )
    .await;

    // Who reported what: m1's reports were written by its agent, m2's by the controller
    // manager alone; one report per member slice, of the ServiceExport flow only.
    for (cluster, reporter) in [
        ("m1", "karmada-agent"),
        ("m2", "karmada-controller-manager"),
    ] {
        let found = reports(&admin, cluster).await;
        assert_eq!(found.len(), own[cluster].len(), "{cluster}: {found:?}");
        for (work, (managed_by, managers)) in &found {
            assert_eq!(managed_by, "ServiceExport", "{cluster}/{work}");
            assert!(
                managers.contains(reporter),
                "{cluster}/{work}: {managers:?}"
            );
            let other = if cluster == "m1" {
                "karmada-controller-manager"
            } else {
                "karmada-agent"
            };
            assert!(
                !managers.contains(other),
                "{cluster}/{work} also written by {other}: {managers:?}"
            );
        }
    }

    // The export goes: both members' reports and the imported slices go with it (m1's
    // withdrawn by its agent once the member's ServiceExport is deleted).
    let exports: Api<DynamicObject> = Api::namespaced_with(admin.clone(), NS, &export_resource);
    exports
        .delete(APP, &DeleteParams::default())
        .await
        .expect("delete the ServiceExport");
    eventually(PATIENCE, "the reports are withdrawn", || async {
        let left = [reports(&admin, "m1").await, reports(&admin, "m2").await];
        left.iter().all(BTreeMap::is_empty).then_some(())
    })
    .await;
    eventually(
        PATIENCE,
        "the imported slices leave the control plane",
        || async {
            slices(&admin, NS, &derived, false)
                .await
                .is_empty()
                .then_some(())
        },
    )
    .await;

    // Everything the agent did was allowed by the RBAC the bootstrap created.
    let log = agent.output();
    assert!(!log.to_lowercase().contains("forbidden"), "{log}");
    agent.stop().await;
}

/// Gate `MultiClusterService` on the control plane and the agent: a CrossCluster
/// MultiClusterService with the Pull member `m1` as its provider and `m2` as its consumer. The
/// agent's `endpointsliceCollect` reports `m1`'s slice (the controller manager collects from
/// Push providers only), and the dispatch controller copies it into `m2` as `m1-<slice>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_providers_slices_are_collected_by_its_agent_for_a_multicluster_service() {
    const MCS_NS: &str = "pull-mcs";
    let World {
        up: _up,
        members,
        admin,
        agent,
        clusters: _,
    } = World::start(&["--feature-gates", "MultiClusterService=true"]).await;
    create(
        &admin,
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": MCS_NS}}),
    )
    .await;
    for (plural, object) in workload(MCS_NS) {
        create(&admin, plural, object).await;
    }
    create(
        &admin,
        "propagationpolicies",
        json!({
            "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": APP, "namespace": MCS_NS},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": APP}],
                "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
            },
        }),
    )
    .await;
    create(
        &admin,
        "multiclusterservices",
        json!({
            "apiVersion": "networking.karmada.io/v1alpha1", "kind": "MultiClusterService",
            "metadata": {"name": APP, "namespace": MCS_NS},
            "spec": {
                "types": ["CrossCluster"],
                "providerClusters": [{"name": "m1"}],
                "consumerClusters": [{"name": "m2"}],
            },
        }),
    )
    .await;

    let provider = member(&members, "m1").await;
    let own = eventually(PATIENCE, "m1's own slice with an endpoint", || async {
        let found = slices(&provider, MCS_NS, APP, true).await;
        (found.iter().map(|(_, n)| n).sum::<usize>() == 1).then_some(found)
    })
    .await;
    let want: Vec<(String, usize)> = own
        .iter()
        .map(|(slice, n)| (format!("m1-{slice}"), *n))
        .collect();
    let consumer = member(&members, "m2").await;
    eventually(PATIENCE, "m1's slice copied into m2", || async {
        let copies: Vec<(String, usize)> = slices(&consumer, MCS_NS, APP, false)
            .await
            .into_iter()
            .filter(|(name, _)| name.starts_with("m1-"))
            .collect();
        (copies == want).then_some(())
    })
    .await;

    // The report was written by m1's agent, once per slice.
    let selector = format!(
        "multiclusterservice.karmada.io/name={APP},multiclusterservice.karmada.io/namespace={MCS_NS}"
    );
    let found: BTreeMap<_, _> = reports_of(&admin, "m1", &selector)
        .await
        .into_iter()
        .filter(|(_, (managed_by, _))| managed_by == "MultiClusterService")
        .collect();
    assert_eq!(found.len(), own.len(), "{found:?}");
    for (work, (_, managers)) in &found {
        assert!(managers.contains("karmada-agent"), "{work}: {managers:?}");
        assert!(
            !managers.contains("karmada-controller-manager"),
            "{work} also written by the controller manager: {managers:?}"
        );
    }
    let log = agent.output();
    assert!(!log.to_lowercase().contains("forbidden"), "{log}");
    agent.stop().await;
}
