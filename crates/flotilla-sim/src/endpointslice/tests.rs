use serde_json::{Value, json};

use super::*;

fn service(spec: Value) -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid",
            "labels": {"app": "web", "kubernetes.io/service-name": "other"}},
        "spec": spec,
    }))
    .expect("a service")
}

fn pod(name: &str, ip: Option<&str>, phase: &str, ready: bool) -> Arc<Pod> {
    let mut status = json!({"phase": phase,
        "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]});
    if let Some(ip) = ip {
        status["podIP"] = ip.into();
    }
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                          {"name": "dns", "containerPort": 5353, "protocol": "UDP"}]}]},
            "status": status,
        }))
        .expect("a pod"),
    )
}

fn zone(node: &str) -> Option<String> {
    (node == "node-1").then(|| "zone-a".to_owned())
}

#[test]
fn one_endpoint_per_running_pod_with_an_ip_in_name_order() {
    let svc = service(json!({"selector": {"app": "web"},
        "ports": [{"name": "web", "port": 80, "targetPort": "http"}]}));
    let pods = [
        pod("web-b", Some("10.0.0.3"), "Running", false),
        pod("web-a", Some("10.0.0.2"), "Running", true),
        pod("web-pending", None, "Pending", false),
        pod("web-done", Some("10.0.0.9"), "Succeeded", false),
    ];
    let want = desired(&svc, &pods, zone);
    let endpoints = serde_json::to_value(&want.endpoints).expect("json");
    assert_eq!(
        endpoints,
        json!([
            {"addresses": ["10.0.0.2"],
             "conditions": {"ready": true, "serving": true, "terminating": false},
             "nodeName": "node-1", "zone": "zone-a",
             "targetRef": {"kind": "Pod", "namespace": "ns", "name": "web-a", "uid": "uid-web-a"}},
            {"addresses": ["10.0.0.3"],
             "conditions": {"ready": false, "serving": false, "terminating": false},
             "nodeName": "node-1", "zone": "zone-a",
             "targetRef": {"kind": "Pod", "namespace": "ns", "name": "web-b", "uid": "uid-web-b"}},
        ])
    );
    assert_eq!(
        serde_json::to_value(&want.ports).expect("json"),
        json!([{"name": "web", "port": 8080, "protocol": "TCP"}])
    );
    // The Service's labels, but for the reserved ones, and the two of the controller.
    assert_eq!(
        want.labels,
        BTreeMap::from([
            ("app".to_owned(), "web".to_owned()),
            (SERVICE_NAME_LABEL.to_owned(), "web".to_owned()),
            (MANAGED_BY_LABEL.to_owned(), CONTROLLER_NAME.to_owned()),
        ])
    );
    assert_eq!(want.owner.kind, "Service");
    assert_eq!(want.owner.uid, "svc-uid");
    assert_eq!(want.owner.controller, Some(true));
    assert_eq!(want.owner.block_owner_deletion, Some(true));
}

#[test]
fn ports_resolve_as_kube_finds_them() {
    let svc = service(
        json!({"selector": {"app": "web"}, "clusterIP": "None", "ports": [
            {"port": 80},
            {"name": "alt", "port": 81, "targetPort": 9000},
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": "dns"},
            {"name": "nope", "port": 54, "targetPort": "dns"},
            {"name": "grpc", "port": 90, "targetPort": "grpc", "appProtocol": "kubernetes.io/h2c"},
        ]}),
    );
    let pods = [pod("web-a", Some("10.0.0.2"), "Running", true)];
    let want = desired(&svc, &pods, |_| None);
    assert_eq!(
        serde_json::to_value(&want.ports).expect("json"),
        json!([
            {"name": "", "port": 80, "protocol": "TCP"},
            {"name": "alt", "port": 9000, "protocol": "TCP"},
            {"name": "dns", "port": 5353, "protocol": "UDP"},
        ]),
        "a named port matches name and protocol; one that does not resolve is left out"
    );
    assert_eq!(
        want.labels.get(HEADLESS_LABEL).map(String::as_str),
        Some("")
    );
    assert!(want.endpoints[0].zone.is_none());
}

#[test]
fn no_endpoints_no_ports_and_not_ready_addresses_published_on_request() {
    let svc = service(json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}));
    let want = desired(&svc, &[pod("web-a", None, "Pending", false)], zone);
    assert!(want.endpoints.is_empty());
    assert_eq!(want.ports, None);

    let publishing = service(json!({"selector": {"app": "web"}, "ports": [{"port": 80}],
        "publishNotReadyAddresses": true}));
    let want = desired(
        &publishing,
        &[pod("web-a", Some("10.0.0.2"), "Running", false)],
        zone,
    );
    let conditions = want.endpoints[0].conditions.clone().expect("conditions");
    assert_eq!(conditions.ready, Some(true));
    assert_eq!(conditions.serving, Some(false));
}

#[test]
fn a_slice_already_holding_the_desired_state_needs_no_write() {
    let svc = service(json!({"selector": {"app": "web"}, "ports": [{"port": 80}]}));
    let want = desired(
        &svc,
        &[pod("web-a", Some("10.0.0.2"), "Running", true)],
        zone,
    );
    let mut slice = EndpointSlice::default();
    want.apply(&mut slice);
    assert!(want.matches(&slice));
    slice.endpoints.clear();
    assert!(!want.matches(&slice));
}

#[test]
fn selectors_select_by_equality_and_names_come_from_the_seed() {
    let selector = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    let labels = BTreeMap::from([
        ("app".to_owned(), "web".to_owned()),
        ("tier".to_owned(), "front".to_owned()),
    ]);
    assert!(selects(&selector, Some(&labels)));
    assert!(!selects(&selector, None));
    assert!(!selects(
        &selector,
        Some(&BTreeMap::from([("app".to_owned(), "db".to_owned())]))
    ));

    let key = ("ns".to_owned(), "web".to_owned());
    let first = EndpointSlices::new(7).next_name(&key);
    assert_eq!(first, EndpointSlices::new(7).next_name(&key));
    assert!(
        first.starts_with("web-") && first.len() == "web-".len() + 5,
        "{first}"
    );
    assert!(
        first["web-".len()..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    );
    let controller = EndpointSlices::new(7);
    assert_ne!(controller.next_name(&key), controller.next_name(&key));
}
