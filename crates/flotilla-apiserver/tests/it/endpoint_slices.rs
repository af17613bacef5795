//! `discovery.k8s.io/v1` EndpointSlices, as kube-apiserver serves them (a member's
//! EndpointSlice controller writes them; Karmada's MultiClusterService controllers copy them
//! between members): defaults, validation, selectors, kubectl's table.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices";

fn slice(name: &str, managed_by: &str, addresses: &[&str]) -> Value {
    let endpoints: Vec<Value> = addresses
        .iter()
        .map(|ip| {
            json!({"addresses": [ip], "conditions": {"ready": true, "serving": true,
                "terminating": false}, "nodeName": "node-1",
                "targetRef": {"kind": "Pod", "namespace": "default", "name": format!("web-{ip}")}})
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/service-name": "web",
            "endpointslice.kubernetes.io/managed-by": managed_by,
        }},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "http", "port": 8080}, {"port": 9090, "protocol": "UDP"}],
    })
}

fn table(uri: &str) -> http::Request<axum::body::Body> {
    let mut request = get(uri);
    request.headers_mut().insert(
        http::header::ACCEPT,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    request
}

fn names(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name"))
        .collect()
}

#[tokio::test]
async fn endpoint_slices_are_created_listed_and_printed_as_kubectl_shows_them() {
    let cp = control_plane().await;
    let created = send(
        &cp,
        json(
            "POST",
            SLICES,
            &slice(
                "web-abcde",
                "endpointslice-controller.k8s.io",
                &["10.0.1.2", "10.0.1.3", "10.0.1.4", "10.0.1.5"],
            ),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // Ports are defaulted: a name (empty) and a protocol (TCP).
    assert_eq!(
        created.body["ports"],
        json!([
            {"name": "http", "port": 8080, "protocol": "TCP"},
            {"name": "", "port": 9090, "protocol": "UDP"},
        ])
    );
    let other = send(
        &cp,
        json(
            "POST",
            SLICES,
            &slice(
                "web-member2",
                "endpointslice-dispatch-controller.karmada.io",
                &[],
            ),
        ),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);

    let list = send(&cp, get(SLICES)).await;
    assert_eq!(list.body["kind"], "EndpointSliceList");
    assert_eq!(list.body["apiVersion"], "discovery.k8s.io/v1");
    assert_eq!(names(&list.body), ["web-abcde", "web-member2"]);
    let managed = send(
        &cp,
        get(&format!(
            "{SLICES}?labelSelector=endpointslice.kubernetes.io%2Fmanaged-by%3Dendpointslice-controller.k8s.io"
        )),
    )
    .await;
    assert_eq!(names(&managed.body), ["web-abcde"]);
    let everywhere = send(
        &cp,
        get("/apis/discovery.k8s.io/v1/endpointslices?fieldSelector=metadata.name%3Dweb-member2"),
    )
    .await;
    assert_eq!(names(&everywhere.body), ["web-member2"]);
    let unsupported = send(
        &cp,
        get(&format!("{SLICES}?fieldSelector=addressType%3DIPv4")),
    )
    .await;
    assert_eq!(unsupported.status, StatusCode::BAD_REQUEST);

    let printed = send(&cp, table(SLICES)).await;
    assert_eq!(printed.body["kind"], "Table", "{}", printed.body);
    let columns: Vec<&str> = printed.body["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        columns,
        ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    );
    let rows = printed.body["rows"].as_array().expect("rows");
    assert_eq!(rows[0]["cells"][0], "web-abcde");
    assert_eq!(rows[0]["cells"][1], "IPv4");
    assert_eq!(rows[0]["cells"][2], "8080,9090");
    assert_eq!(
        rows[0]["cells"][3],
        "10.0.1.2,10.0.1.3,10.0.1.4 + 1 more..."
    );
    assert_eq!(rows[1]["cells"][3], "<unset>");
}

#[tokio::test]
async fn endpoint_slices_are_validated_updated_and_deleted() {
    let cp = control_plane().await;
    let mut bad = slice("bad", "endpointslice-controller.k8s.io", &["127.0.0.1"]);
    bad["addressType"] = "IPX".into();
    let refused = send(&cp, json("POST", SLICES, &bad)).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused.body["message"],
        "EndpointSlice.discovery.k8s.io \"bad\" is invalid: addressType: Unsupported value: \"IPX\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
    );

    let created = send(
        &cp,
        json(
            "POST",
            SLICES,
            &slice(
                "web-abcde",
                "endpointslice-controller.k8s.io",
                &["10.0.1.2"],
            ),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut grown = created.body.clone();
    grown["endpoints"]
        .as_array_mut()
        .expect("endpoints")
        .push(json!({"addresses": ["10.0.1.9"], "conditions": {"ready": false}}));
    let updated = send(&cp, json("PUT", &format!("{SLICES}/web-abcde"), &grown)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["endpoints"].as_array().map(Vec::len), Some(2));

    let mut retyped = updated.body.clone();
    retyped["addressType"] = "FQDN".into();
    retyped["endpoints"] = json!([{"addresses": ["web.example.com"]}]);
    let immutable = send(&cp, json("PUT", &format!("{SLICES}/web-abcde"), &retyped)).await;
    assert_eq!(immutable.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        immutable.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("addressType: Invalid value: \"FQDN\": field is immutable")),
        "{}",
        immutable.body
    );

    let deleted = send(
        &cp,
        http::Request::delete(format!("{SLICES}/web-abcde"))
            .body(axum::body::Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(
        send(&cp, get(&format!("{SLICES}/web-abcde"))).await.status,
        StatusCode::NOT_FOUND
    );
}
