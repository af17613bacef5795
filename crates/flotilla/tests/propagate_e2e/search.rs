//! Karmada's `search_test.go` through `up --demo`: ResourceRegistries make member objects
//! searchable at `/apis/search.karmada.io/v1alpha1/search/cache/…` (created, updated and
//! deleted registries, cluster names and cluster labels), and the global proxy
//! `/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/…` lists, gets, pages, watches,
//! patches and updates member objects (and serves everything else from the control plane),
//! also as the server of the real kubectl.

use futures::TryStreamExt as _;
use k8s_openapi::api::core::v1::Node;
use kube::api::WatchEvent;
use serde_json::Value;

use crate::support::{ControlPlane, await_value, eventually};

const NS: &str = "search-e2e";
const NS2: &str = "search-e2e-2";
const M1: &str = "cn-shanghai";
const M2: &str = "us-west-2";
const CACHE: &str = "/apis/search.karmada.io/v1alpha1/search/cache";
const PROXY: &str = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy";
const ANNOTATION: &str = "resource.karmada.io/cached-from-cluster";

async fn admin(plane: &ControlPlane) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&plane.kubeconfig).expect("the kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("a client config");
    kube::Client::try_from(config).expect("a client")
}

async fn get_json(client: &kube::Client, path: &str) -> Result<Value, kube::Error> {
    let request = http::Request::get(path)
        .body(Vec::new())
        .expect("a request");
    let text = client.request_text(request).await?;
    Ok(serde_json::from_str(&text).expect("JSON"))
}

/// Names of the items of a list at `path` (200 expected).
async fn names(client: &kube::Client, path: &str) -> Vec<String> {
    let list = get_json(client, path)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{path}: not a list: {list}"))
        .iter()
        .map(|i| {
            i["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    names.sort();
    names
}

/// Waits until `name` is (or is not) in the list at `path` (Karmada's `searchObject`).
async fn searchable(client: &kube::Client, path: &str, name: &str, want: bool) {
    eventually(
        &format!(
            "{name} {} at {path}",
            if want { "listed" } else { "not listed" }
        ),
        || async {
            let listed = names(client, path).await;
            if listed.iter().any(|n| n == name) == want {
                Ok(())
            } else {
                Err(listed.join(","))
            }
        },
    )
    .await;
}

async fn member_names(plane: &ControlPlane, member: &str, what: &str) -> Vec<String> {
    let out = plane
        .kubectl(&[
            "--context",
            member,
            "get",
            what,
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    let mut names: Vec<String> = out.split_whitespace().map(str::to_owned).collect();
    names.sort();
    names
}

fn registry(name: &str, clusters: &str, selectors: &str) -> String {
    format!(
        "apiVersion: search.karmada.io/v1alpha1\nkind: ResourceRegistry\nmetadata: {{name: {name}}}\nspec:\n  targetCluster: {clusters}\n  resourceSelectors: {selectors}\n"
    )
}

fn deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {NS}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: c, image: nginx}}]}}\n"
    )
}

pub async fn registries_make_member_objects_searchable(plane: &ControlPlane) {
    let client = admin(plane).await;
    for member in [M1, M2] {
        for ns in [NS, NS2] {
            plane
                .kubectl(&["--context", member, "create", "namespace", ns])
                .await;
        }
    }
    // No registry: nothing of the members is searchable, and the view still answers a list.
    plane
        .kubectl(&[
            "--context",
            M1,
            "-n",
            NS,
            "create",
            "service",
            "clusterip",
            "search-svc",
            "--tcp=80:80",
        ])
        .await;
    searchable(
        &client,
        &format!("{CACHE}/api/v1/services"),
        "search-svc",
        false,
    )
    .await;
    // Karmada's case looks for the Service every cluster has.
    searchable(
        &client,
        &format!("{CACHE}/api/v1/services"),
        "kubernetes",
        false,
    )
    .await;
    let empty = get_json(&client, &format!("{CACHE}/api/v1/services"))
        .await
        .expect("an empty list");
    assert_eq!(empty["kind"], "ServiceList", "{empty}");

    // Deployments of cn-shanghai only.
    plane.apply(Some(M1), &deployment("search-m1")).await;
    plane.apply(Some(M2), &deployment("search-m2")).await;
    plane
        .apply(
            None,
            &registry(
                "search-e2e-deploy",
                &format!("{{clusterNames: [{M1}]}}"),
                "[{apiVersion: apps/v1, kind: Deployment}]",
            ),
        )
        .await;
    let all = format!("{CACHE}/apis/apps/v1/deployments");
    let in_ns = format!("{CACHE}/apis/apps/v1/namespaces/{NS}/deployments");
    searchable(&client, &all, "search-m1", true).await;
    searchable(&client, &all, "search-m2", false).await;
    // Karmada's case: kind's `coredns` (the demo members' system components).
    searchable(&client, &all, "coredns", true).await;
    searchable(&client, &in_ns, "search-m1", true).await;
    searchable(&client, &in_ns, "search-m2", false).await;
    let list = get_json(&client, &in_ns).await.expect("a list");
    let item = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["metadata"]["name"] == "search-m1"))
        .expect("search-m1 listed");
    assert_eq!(item["metadata"]["annotations"][ANNOTATION], M1, "{item}");
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-deploy"])
        .await;
    searchable(&client, &all, "search-m1", false).await;

    // Nodes of both members.
    plane
        .apply(
            None,
            &registry(
                "search-e2e-nodes",
                &format!("{{clusterNames: [{M1}, {M2}]}}"),
                "[{apiVersion: v1, kind: Node}]",
            ),
        )
        .await;
    let (nodes1, nodes2) = (
        member_names(plane, M1, "nodes").await,
        member_names(plane, M2, "nodes").await,
    );
    searchable(&client, &format!("{CACHE}/api/v1/nodes"), &nodes1[0], true).await;
    searchable(&client, &format!("{CACHE}/api/v1/nodes"), &nodes2[0], true).await;
    // Karmada's case: kind's control-plane nodes.
    for member in [M1, M2] {
        let node = format!("{member}-control-plane");
        searchable(&client, &format!("{CACHE}/api/v1/nodes"), &node, true).await;
    }
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-nodes"])
        .await;

    // An updated registry: ClusterRoles first, then ClusterRoleBindings too.
    plane
        .kubectl(&[
            "--context",
            M1,
            "create",
            "clusterrolebinding",
            "search-e2e-crb",
            "--clusterrole=view",
            "--user=search-e2e",
        ])
        .await;
    plane
        .apply(
            None,
            &registry(
                "search-e2e-rbac",
                &format!("{{clusterNames: [{M1}]}}"),
                "[{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole}]",
            ),
        )
        .await;
    let roles = format!("{CACHE}/apis/rbac.authorization.k8s.io/v1/clusterroles");
    let bindings = format!("{CACHE}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    searchable(&client, &roles, "cluster-admin", true).await;
    searchable(&client, &bindings, "search-e2e-crb", false).await;
    searchable(&client, &bindings, "cluster-admin", false).await;
    plane
        .apply(
            None,
            &registry(
                "search-e2e-rbac",
                &format!("{{clusterNames: [{M1}]}}"),
                "[{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole}, {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding}]",
            ),
        )
        .await;
    searchable(&client, &bindings, "search-e2e-crb", true).await;
    searchable(&client, &bindings, "cluster-admin", true).await;
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-rbac"])
        .await;
    searchable(&client, &roles, "cluster-admin", false).await;

    // Karmada's "delete resourceRegistry" case: kind's kube-proxy DaemonSet, then gone with the
    // registry.
    plane
        .apply(
            None,
            &registry(
                "search-e2e-ds",
                &format!("{{clusterNames: [{M1}]}}"),
                "[{apiVersion: apps/v1, kind: DaemonSet}]",
            ),
        )
        .await;
    let daemon_sets = format!("{CACHE}/apis/apps/v1/daemonsets");
    searchable(&client, &daemon_sets, "kube-proxy", true).await;
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-ds"])
        .await;
    searchable(&client, &daemon_sets, "kube-proxy", false).await;

    // A registry selecting clusters by label follows the label on and off.
    let label = "search-e2e.flotilla.io/managed";
    plane
        .apply(
            None,
            &registry(
                "search-e2e-labels",
                &format!(
                    "{{labelSelector: {{matchExpressions: [{{key: {label}, operator: Exists}}]}}}}"
                ),
                "[{apiVersion: apps/v1, kind: Deployment}]",
            ),
        )
        .await;
    searchable(&client, &all, "search-m2", false).await;
    plane
        .kubectl(&["label", "cluster", M2, &format!("{label}=true")])
        .await;
    searchable(&client, &all, "search-m2", true).await;
    plane
        .kubectl(&["label", "cluster", M2, &format!("{label}-")])
        .await;
    searchable(&client, &all, "search-m2", false).await;
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-labels"])
        .await;
    for (member, name) in [(M1, "search-m1"), (M2, "search-m2")] {
        plane
            .kubectl(&["--context", member, "-n", NS, "delete", "deployment", name])
            .await;
    }
}

pub async fn the_global_proxy_serves_member_objects(plane: &ControlPlane) {
    let client = admin(plane).await;
    let nodes = format!("{PROXY}/api/v1/nodes");
    // Without a registry the control plane answers: it has no nodes.
    assert_eq!(names(&client, &nodes).await, Vec::<String>::new());
    plane
        .apply(
            None,
            &registry(
                "search-e2e-proxy-nodes",
                &format!("{{clusterNames: [{M1}, {M2}]}}"),
                "[{apiVersion: v1, kind: Node}]",
            ),
        )
        .await;
    let (nodes1, nodes2) = (
        member_names(plane, M1, "nodes").await,
        member_names(plane, M2, "nodes").await,
    );
    let mut every: Vec<String> = nodes1.iter().chain(&nodes2).cloned().collect();
    every.sort();
    let listed = eventually("the proxy lists every member's nodes", || async {
        let list = get_json(&client, &nodes).await.map_err(|e| e.to_string())?;
        let got = names(&client, &nodes).await;
        if got == every {
            Ok(list)
        } else {
            Err(got.join(","))
        }
    })
    .await;
    for item in listed["items"].as_array().expect("items") {
        let name = item["metadata"]["name"].as_str().expect("a name");
        let source = item["metadata"]["annotations"][ANNOTATION].as_str();
        let want = if nodes1.iter().any(|n| n == name) {
            M1
        } else {
            M2
        };
        assert_eq!(source, Some(want), "{name}");
    }
    assert_eq!(listed["kind"], "NodeList");

    // Get names its member.
    let one = get_json(&client, &format!("{nodes}/{}", nodes1[0]))
        .await
        .expect("the node");
    assert_eq!(one["metadata"]["annotations"][ANNOTATION], M1);

    // Pages: one node, then the rest from the continue token.
    let first = get_json(&client, &format!("{nodes}?limit=1"))
        .await
        .expect("page 1");
    assert_eq!(first["items"].as_array().map(Vec::len), Some(1), "{first}");
    let token = first["metadata"]["continue"]
        .as_str()
        .expect("a continue token");
    let rest = get_json(
        &client,
        &format!("{nodes}?limit=999999999999&continue={token}"),
    )
    .await
    .expect("page 2");
    assert_eq!(
        rest["items"].as_array().map(Vec::len),
        Some(every.len() - 1),
        "{rest}"
    );
    assert!(rest["metadata"]["continue"].is_null(), "{rest}");

    // Watch from the list's version, then change a node in the member.
    let version = listed["metadata"]["resourceVersion"]
        .as_str()
        .expect("a version");
    let request = http::Request::get(format!(
        "{nodes}?watch=true&resourceVersion={version}&timeoutSeconds=60"
    ))
    .body(Vec::new())
    .expect("a request");
    let events = client
        .request_events::<Node>(request)
        .await
        .expect("a watch");
    let mut events = std::pin::pin!(events);
    plane
        .kubectl(&[
            "--context",
            M1,
            "annotate",
            "node",
            &nodes1[0],
            "search-e2e/watched=true",
        ])
        .await;
    let seen = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Some(event) = events.try_next().await.expect("a watch event") {
            if let WatchEvent::Modified(node) = event {
                let annotations = node.metadata.annotations.unwrap_or_default();
                if annotations.contains_key("search-e2e/watched") {
                    return annotations.get(ANNOTATION).cloned();
                }
            }
        }
        None
    })
    .await
    .expect("the change arrives within 30 s");
    assert_eq!(seen.as_deref(), Some(M1));

    // Patch through the proxy reaches the member.
    let patch = http::Request::patch(format!("{nodes}/{}", nodes1[0]))
        .header("Content-Type", "application/strategic-merge-patch+json")
        .body(br#"{"metadata":{"annotations":{"search-e2e/patched":"true"}}}"#.to_vec())
        .expect("a request");
    client.request_text(patch).await.expect("the patch");
    let patched = plane
        .get(
            Some(M1),
            "default",
            &format!("node/{}", nodes1[0]),
            "{.metadata.annotations}",
        )
        .await;
    assert!(patched.contains("search-e2e/patched"), "{patched}");

    // Update through the proxy: the member gets the object without the cache annotation.
    let target = format!("{nodes}/{}", nodes2[0]);
    eventually("an update through the proxy", || async {
        let mut node = get_json(&client, &target)
            .await
            .map_err(|e| e.to_string())?;
        node["metadata"]["annotations"]["search-e2e/updated"] = "true".into();
        let put = http::Request::put(target.as_str())
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(&node).expect("JSON"))
            .expect("a request");
        client
            .request_text(put)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .await;
    let updated = plane
        .get(
            Some(M2),
            "default",
            &format!("node/{}", nodes2[0]),
            "{.metadata.annotations}",
        )
        .await;
    assert!(updated.contains("search-e2e/updated"), "{updated}");
    assert!(!updated.contains(ANNOTATION), "{updated}");

    // The real kubectl with the proxy as its server: discovery from the control plane, nodes
    // from the members.
    let server = plane
        .kubectl(&[
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ])
        .await;
    let table = plane
        .kubectl(&[
            "--server",
            &format!("{server}{PROXY}"),
            "get",
            "nodes",
            "-o",
            "name",
        ])
        .await;
    for node in &every {
        assert!(table.contains(&format!("node/{node}")), "{table}");
    }
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-proxy-nodes"])
        .await;
    await_value(
        "the proxy's nodes are the control plane's again",
        "",
        || async { names(&client, &nodes).await.join(",") },
    )
    .await;

    // Secrets of two namespaces, from two registries.
    for (ns, name) in [(NS, "search-secret-1"), (NS2, "search-secret-2")] {
        plane
            .kubectl(&[
                "--context",
                M1,
                "-n",
                ns,
                "create",
                "secret",
                "generic",
                name,
                "--from-literal=user=karmada",
            ])
            .await;
    }
    for (registry_name, ns) in [("search-e2e-secrets-1", NS), ("search-e2e-secrets-2", NS2)] {
        plane
            .apply(
                None,
                &registry(
                    registry_name,
                    &format!("{{clusterNames: [{M1}]}}"),
                    &format!("[{{apiVersion: v1, kind: Secret, namespace: {ns}}}]"),
                ),
            )
            .await;
    }
    for (ns, name) in [(NS, "search-secret-1"), (NS2, "search-secret-2")] {
        let path = format!("{PROXY}/api/v1/namespaces/{ns}/secrets");
        searchable(&client, &path, name, true).await;
    }
    // A namespace no registry names is the control plane's (which has no such Secret).
    let other = format!("{PROXY}/api/v1/namespaces/default/secrets");
    assert!(
        !names(&client, &other)
            .await
            .iter()
            .any(|n| n.starts_with("search-secret"))
    );
    for registry_name in ["search-e2e-secrets-1", "search-e2e-secrets-2"] {
        plane
            .kubectl(&["delete", "resourceregistry", registry_name])
            .await;
    }
}

/// Karmada's "[member clusters joined] could reconcile ResourceRegistry": a registry naming a
/// cluster that has not joined yet finds nothing; once the cluster joins (and is Ready) its
/// Deployments are searchable; after it unjoins they are gone. Run alone, after the other
/// scenarios (a fourth member would receive their workloads).
pub async fn a_cluster_joining_later_becomes_searchable(
    plane: &ControlPlane,
    dir: &std::path::Path,
) {
    use std::net::{IpAddr, Ipv4Addr};
    const LATE: &str = "search-late";
    let spec = flotilla_sim::SimConfig::from_yaml(&format!(
        "seed: 11\nclusters:\n- name: {LATE}\n  region: r-late\n  zones: [z1]\n  nodePools: [{{name: cpu, count: 1, profile: cpu}}]\n"
    ))
    .and_then(|c| c.validate())
    .expect("a valid sim config");
    let _sim = flotilla_sim::Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir)
        .await
        .expect("the late member starts");
    let kubeconfig = dir.join("late.kubeconfig");
    flotilla_sim::kubeconfig::write(&kubeconfig, &_sim.clusters, None).expect("kubeconfig");
    let late = kubeconfig.to_string_lossy().into_owned();
    let member_kubectl = |args: Vec<String>| {
        let late = late.clone();
        async move {
            let output = tokio::process::Command::new(crate::support::kubectl_binary())
                .args(["--kubeconfig", &late, "--context", LATE])
                .args(&args)
                .output()
                .await
                .expect("kubectl runs");
            assert!(
                output.status.success(),
                "kubectl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    };
    member_kubectl(vec!["create".into(), "namespace".into(), NS.into()]).await;
    member_kubectl(
        [
            "-n",
            NS,
            "create",
            "deployment",
            "search-late-app",
            "--image=nginx",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    let client = admin(plane).await;
    plane
        .apply(
            None,
            &registry(
                "search-e2e-late",
                &format!("{{clusterNames: [{LATE}]}}"),
                "[{apiVersion: apps/v1, kind: Deployment}]",
            ),
        )
        .await;
    let all = format!("{CACHE}/apis/apps/v1/deployments");
    searchable(&client, &all, "search-late-app", false).await;

    let flotilla = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let control = plane.kubeconfig.to_string_lossy().into_owned();
        async move {
            let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
                .args(&args)
                .args(["--kubeconfig", &control])
                .env("RUST_LOG", "warn")
                .output()
                .await
                .expect("flotilla runs");
            assert!(
                output.status.success(),
                "flotilla {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    };
    flotilla(&[
        "join",
        LATE,
        "--cluster-kubeconfig",
        &late,
        "--cluster-context",
        LATE,
    ])
    .await;
    searchable(&client, &all, "search-late-app", true).await;
    let list = get_json(&client, &all).await.expect("a list");
    let item = list["items"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .find(|i| i["metadata"]["name"] == "search-late-app")
        })
        .expect("listed");
    assert_eq!(item["metadata"]["annotations"][ANNOTATION], LATE);

    flotilla(&["unjoin", LATE]).await;
    searchable(&client, &all, "search-late-app", false).await;
    plane
        .kubectl(&["delete", "resourceregistry", "search-e2e-late"])
        .await;
}
