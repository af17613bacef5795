//! An interpreter webhook for the test, served over real HTTPS (a CA and serving certificate
//! from Flotilla's own PKI code): it answers Karmada's `ResourceInterpreterContext` for
//! `apps/v1` Deployments with values the native rules never produce, so each case can tell the
//! webhook answered.

use std::sync::Arc;

use axum::Json;
use axum::routing::post;
use base64::Engine as _;
use serde_json::{Value, json};

/// A running webhook: its URL and the CA bundle (PEM) that signs its certificate.
pub struct Webhook {
    pub url: String,
    pub ca_pem: String,
    _task: tokio::task::JoinHandle<()>,
}

fn patch(ops: Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(ops.to_string())
}

/// The answers: replicas + 2 and 250m per replica; each cluster's share + 10; the member's
/// `paused` kept; health false; status reflected with a marker; template `status.replicas` 42;
/// a ConfigMap `from-webhook` as dependency; for InterpretComponent (Jobs) one component
/// `from-webhook` of 2 replicas requesting 100m.
async fn interpret(Json(context): Json<Value>) -> Json<Value> {
    let request = &context["request"];
    let uid = request["uid"].clone();
    let object = &request["object"];
    let mut response = json!({"uid": uid, "successful": true});
    match request["operation"].as_str().unwrap_or_default() {
        "InterpretReplica" => {
            response["replicas"] = json!(object["spec"]["replicas"].as_i64().unwrap_or(0) + 2);
            response["replicaRequirements"] = json!({"resourceRequest": {"cpu": "250m"}});
        }
        "ReviseReplica" => {
            let replicas = request["replicas"].as_i64().unwrap_or(0) + 10;
            response["patch"] = json!(patch(
                json!([{"op": "replace", "path": "/spec/replicas", "value": replicas}])
            ));
            response["patchType"] = json!("JSONPatch");
        }
        "Retain" => {
            let paused = request["observedObject"]["spec"]["paused"]
                .as_bool()
                .unwrap_or(false);
            response["patch"] = json!(patch(
                json!([{"op": "add", "path": "/spec/paused", "value": paused}])
            ));
            response["patchType"] = json!("JSONPatch");
        }
        "InterpretHealth" => response["healthy"] = json!(false),
        "InterpretComponent" => {
            response["components"] = json!([
                {"name": "from-webhook", "replicas": 2,
                 "replicaRequirements": {"resourceRequest": {"cpu": "100m"}}}
            ]);
        }
        "InterpretStatus" => {
            let mut status = object["status"].clone();
            if let Some(map) = status.as_object_mut() {
                map.insert("reflectedBy".into(), json!("webhook"));
            } else {
                status = json!({"reflectedBy": "webhook"});
            }
            response["rawStatus"] = status;
        }
        "AggregateStatus" => {
            response["patch"] = json!(patch(
                json!([{"op": "add", "path": "/status", "value": {"replicas": 42}}])
            ));
            response["patchType"] = json!("JSONPatch");
        }
        "InterpretDependency" => {
            let namespace = object["metadata"]["namespace"].clone();
            response["dependencies"] = json!([
                {"apiVersion": "v1", "kind": "ConfigMap", "namespace": namespace, "name": "from-webhook"}
            ]);
        }
        other => {
            response["successful"] = json!(false);
            response["status"] = json!({"code": 400, "message": format!("unexpected {other}")});
        }
    }
    Json(json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterContext",
        "response": response,
    }))
}

impl Webhook {
    pub async fn start(dir: &std::path::Path) -> Webhook {
        flotilla_apiserver::auth::tls::install_crypto_provider();
        let pki = flotilla_apiserver::auth::pki::Pki::load_or_create(&dir.join("webhook-pki"), &[])
            .expect("a PKI for the webhook");
        let tls = flotilla_apiserver::auth::tls::server_config(&pki, &[pki.ca_cert_der().clone()])
            .expect("a TLS config");
        let mut tls = (*tls).clone();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let router = axum::Router::new().route("/interpreter-deployment", post(interpret));
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                let router = router.clone();
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper_util::service::TowerToHyperService::new(router);
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
                });
            }
        });
        Webhook {
            url: format!("https://127.0.0.1:{port}/interpreter-deployment"),
            ca_pem: pki.ca_cert_pem().to_owned(),
            _task: task,
        }
    }
}
