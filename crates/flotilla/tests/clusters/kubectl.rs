//! The real `flotilla up` (SecretMemberClients, both controllers, the proxy hook) with a sim
//! member joined over HTTPS, and kubectl reaching the member through the cluster proxy.

use std::time::Duration;

use flotilla_api::karmada::Cluster;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::harness::Flotilla;
use crate::support::{eventually, join, ready};

const SIM: &str = "seed: 7\nstartLatency: '0'\nclusters:\n- name: m1\n  nodePools: [{name: p, count: 2, profile: gpu-a100}]\n";

async fn kubectl(flotilla: &std::sync::Arc<Flotilla>, args: &[&str]) -> String {
    let flotilla = flotilla.clone();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = flotilla.kubectl("1.33", &args);
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8")
    })
    .await
    .expect("kubectl ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_up_brings_a_joined_member_ready_and_kubectl_reaches_it_through_the_proxy() {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let flotilla = std::sync::Arc::new(Flotilla::start());
    let spec = flotilla_sim::SimConfig::from_yaml(SIM)
        .and_then(|c| c.validate())
        .expect("a sim config");
    let dir = tempfile::tempdir().expect("a directory");
    let sim = flotilla_sim::Sim::start(&spec, std::net::Ipv4Addr::LOCALHOST.into(), dir.path())
        .await
        .expect("the sim starts");
    let kubeconfig = Kubeconfig::read_from(&flotilla.kubeconfig).expect("the kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("a config");
    let control = kube::Client::try_from(config).expect("a client");
    join(&control, sim.cluster("m1").expect("m1"), "m1").await;
    let clusters = Api::<Cluster>::all(control.clone());
    // Karmada's default timings: the first probe publishes at once.
    let cluster = eventually(
        Duration::from_secs(120),
        "m1 is Ready, untainted, with GPUs",
        || async {
            let c = clusters.get_opt("m1").await.ok().flatten()?;
            let gpus = c
                .status
                .as_ref()?
                .resource_summary
                .as_ref()?
                .allocatable
                .as_ref()?
                .get("nvidia.com/gpu")
                .copied();
            (ready(&c).is_some_and(|(s, _)| s == "True")
                && gpus.is_some()
                && c.spec.taints.is_empty())
            .then_some(c)
        },
    )
    .await;
    assert_eq!(cluster.spec.sync_mode, "Push");

    let raw = kubectl(
        &flotilla,
        &[
            "get",
            "--raw",
            "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy/api/v1/nodes",
        ],
    )
    .await;
    let nodes: serde_json::Value = serde_json::from_str(&raw).expect("a NodeList");
    assert_eq!(nodes["items"].as_array().map(Vec::len), Some(2));
    let server = format!(
        "{}/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy",
        flotilla.url
    );
    let names = kubectl(
        &flotilla,
        &["--server", &server, "get", "nodes", "-o", "name"],
    )
    .await;
    assert_eq!(names.lines().count(), 2, "{names}");
    assert!(names.lines().all(|l| l.starts_with("node/")), "{names}");
}
