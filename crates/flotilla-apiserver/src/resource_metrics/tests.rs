use std::time::Duration;

use super::*;

fn pods(namespace: Option<&str>, name: Option<&str>) -> MetricsTarget {
    MetricsTarget::Resource {
        resource: MetricsResource::Pods,
        namespace: namespace.map(str::to_owned),
        name: name.map(str::to_owned),
    }
}

#[test]
fn paths_name_the_resource_namespace_and_name() {
    let base = "/apis/metrics.k8s.io/v1beta1";
    assert_eq!(target("/apis/metrics.k8s.io"), Some(MetricsTarget::Group));
    assert_eq!(target(base), Some(MetricsTarget::Version));
    assert_eq!(
        target(&format!("{base}/nodes")),
        Some(MetricsTarget::Resource {
            resource: MetricsResource::Nodes,
            namespace: None,
            name: None
        })
    );
    assert_eq!(
        target(&format!("{base}/nodes/n1")),
        Some(MetricsTarget::Resource {
            resource: MetricsResource::Nodes,
            namespace: None,
            name: Some("n1".into())
        })
    );
    assert_eq!(target(&format!("{base}/pods")), Some(pods(None, None)));
    assert_eq!(
        target(&format!("{base}/namespaces/shop/pods")),
        Some(pods(Some("shop"), None))
    );
    assert_eq!(
        target(&format!("{base}/namespaces/shop/pods/web-1")),
        Some(pods(Some("shop"), Some("web-1")))
    );
    // Under the group but nothing served: 404, not another handler.
    for unknown in [
        "/apis/metrics.k8s.io/v1",
        "/apis/metrics.k8s.io/v1beta1/namespaces/shop",
        "/apis/metrics.k8s.io/v1beta1/nodes/n1/status",
        "/apis/metrics.k8s.io/v1beta1/namespaces//pods",
        "/apis/metrics.k8s.io/v1beta1/deployments",
    ] {
        assert_eq!(target(unknown), Some(MetricsTarget::Unknown), "{unknown}");
    }
    assert_eq!(target("/apis/metrics.k8s.iox/v1beta1/pods"), None);
    assert_eq!(target("/api/v1/pods"), None);
}

#[test]
fn windows_are_written_as_go_durations() {
    assert_eq!(go_duration(Duration::from_secs(15)), "15s");
    assert_eq!(go_duration(Duration::from_secs(1)), "1s");
    assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
    assert_eq!(go_duration(Duration::from_secs(3725)), "1h2m5s");
    assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
    assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
    assert_eq!(go_duration(Duration::ZERO), "0s");
}

#[test]
fn a_pod_row_sums_its_containers() {
    let pod = json!({
        "metadata": {"name": "web-1", "namespace": "shop"},
        "window": "15s",
        "containers": [
            {"name": "a", "usage": {"cpu": "1500000n", "memory": "1024Ki"}},
            {"name": "b", "usage": {"cpu": "500000n", "memory": "1024Ki"}},
        ],
    });
    let table = render_table(MetricsResource::Pods, &[pod], None);
    assert_eq!(
        table["rows"][0]["cells"],
        json!(["web-1", "2m", "2Mi", "15s"])
    );
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["Name", "cpu", "memory", "Window"]);
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn discovery_documents_gain_the_group_once() {
    let mut list = json!({"groups": [{"name": "apps"}]});
    add_to_group_list(&mut list);
    add_to_group_list(&mut list);
    assert_eq!(list["groups"].as_array().map(Vec::len), Some(2));
    assert_eq!(list["groups"][1]["preferredVersion"]["version"], "v1beta1");
    let mut aggregated = json!({"items": []});
    add_to_aggregated(&mut aggregated);
    add_to_aggregated(&mut aggregated);
    assert_eq!(aggregated["items"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        aggregated["items"][0]["versions"][0]["resources"][1]["responseKind"]["kind"],
        "PodMetrics"
    );
}
