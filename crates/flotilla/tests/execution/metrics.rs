//! The propagation metrics on `/metrics`: after a Deployment propagates to both members and is
//! updated, a scrape of the endpoint `flotilla up` serves shows every propagation series with
//! non-zero counts.

use std::sync::Arc;

use flotilla_api::karmada::ResourceBinding;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::support::{World, eventually};

/// `GET /metrics` over plain HTTP, as Prometheus scrapes.
async fn scrape(address: std::net::SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: flotilla\r\n\r\n")
        .await
        .expect("request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response");
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    response
}

/// The value of the series `series` (name and labels exactly as exposed), if exposed.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn member_series(metric: &str, cluster: &str, extra: &str) -> String {
    format!(
        "{metric}{{result=\"success\",apiversion=\"apps/v1\",kind=\"Deployment\",member_cluster=\"{cluster}\"{extra}}}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_propagation_shows_on_the_metrics_endpoint() {
    let world = World::start().await;
    world.start_pipeline().await;
    let mut registry = prometheus_client::registry::Registry::default();
    world.metrics.register(&mut registry);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let shutdown = flotilla_runtime::Shutdown::new();
    let server = crate::endpoint::serve_on(listener, Arc::new(registry), shutdown.clone());

    let policy = json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
            "placement": {"clusterAffinity": {"clusterNames": ["m1", "m2"]},
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}}}});
    Api::<flotilla_api::karmada::PropagationPolicy>::namespaced(world.control.clone(), "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(policy).expect("policy"),
        )
        .await
        .expect("policy created");
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1",
                    "resources": {"requests": {"cpu": "100m"}}}]}}}});
    let templates: Api<Deployment> = Api::namespaced(world.control.clone(), "default");
    templates
        .create(
            &PostParams::default(),
            &serde_json::from_value(deployment).expect("deployment"),
        )
        .await
        .expect("template created");
    let bindings: Api<ResourceBinding> = Api::namespaced(world.control.clone(), "default");
    let members_at = |generation: i64| {
        let bindings = bindings.clone();
        async move {
            let status = bindings.get_opt("web-deployment").await.ok()??.status?;
            let applied = status
                .conditions
                .iter()
                .any(|c| c.type_ == "FullyApplied" && c.status == "True");
            let at = status.aggregated_status.len() == 2
                && status.aggregated_status.iter().all(|item| {
                    item.status
                        .as_ref()
                        .and_then(|s| s.to_value()["resourceTemplateGeneration"].as_i64())
                        == Some(generation)
                });
            (applied && at).then_some(())
        }
    };
    eventually("both members run generation 1", || members_at(1)).await;
    // The creation counts too when the detector saw it live (not in its initial list).
    let before = value(
        &scrape(address).await,
        "karmada_propagation_latency_seconds_count",
    )
    .expect("the histogram is exposed");

    // A change of the template: its new generation reaches both members.
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:2", "resources": {"requests": {"cpu": "100m"}}}]}}}});
    templates
        .patch("web", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("template updated");
    eventually("both members run generation 2", || members_at(2)).await;
    let text = scrape(address).await;
    assert_eq!(
        value(&text, "karmada_propagation_latency_seconds_count"),
        Some(before + 1.0),
        "the update's latency is observed once:\n{text}"
    );
    for series in [
        "karmada_resource_match_policy_duration_seconds_count",
        "karmada_policy_apply_attempts_total{result=\"success\"}",
        "policy_apply_attempts_total{result=\"success\"}",
        "karmada_resource_apply_policy_duration_seconds_count{result=\"success\"}",
        "karmada_binding_sync_work_duration_seconds_count{result=\"success\"}",
        "karmada_work_sync_workload_duration_seconds_count{result=\"success\"}",
        "work_sync_workload_duration_seconds_count{result=\"success\"}",
        &member_series("karmada_create_resource_to_cluster_total", "m1", ""),
        &member_series("karmada_create_resource_to_cluster_total", "m2", ""),
        &member_series(
            "karmada_update_resource_to_cluster_total",
            "m1",
            ",operationResult=\"updated\"",
        ),
        &member_series(
            "karmada_update_resource_to_cluster_total",
            "m2",
            ",operationResult=\"updated\"",
        ),
        "karmada_propagation_latency_seconds_bucket{le=\"+Inf\"}",
    ] {
        let found = value(&text, series);
        assert!(
            found.is_some_and(|v| v > 0.0),
            "{series} is {found:?} in:\n{text}"
        );
    }
    assert_eq!(
        value(&text, "karmada_binding_status{status=\"Applied\"}"),
        Some(1.0),
        "{text}"
    );
    // Both members run the new image.
    for cluster in ["m1", "m2"] {
        let member: Api<Deployment> = Api::namespaced(world.member(cluster), "default");
        let image = member
            .get("web")
            .await
            .expect("the member has the Deployment")
            .spec
            .and_then(|s| s.template.spec)
            .and_then(|s| s.containers.first().and_then(|c| c.image.clone()));
        assert_eq!(image.as_deref(), Some("nginx:2"), "{cluster}");
    }
    shutdown.cancel();
    server.await.expect("the metrics server stops");
}
