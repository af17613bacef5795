//! Karmada's customized (webhook) interpreter: ResourceInterpreterWebhookConfigurations name
//! HTTPS webhooks that answer a `ResourceInterpreterContext` for the kinds and operations their
//! rules match. They come before ResourceInterpreterCustomizations and the native rules. Of the
//! webhooks matching an object and operation, the one whose `<configuration>/<webhook>` name
//! sorts first is called (Karmada's `getFirstRelevantHook`); a failed call fails the operation.
//!
//! Reaching a webhook: `clientConfig.url`, or `clientConfig.service`, called at
//! `https://<name>.<namespace>.svc:<port><path>` (the name must resolve where Flotilla runs;
//! Karmada resolves the Service's cluster IP instead). `caBundle` (PEM) is trusted for it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flotilla_api::karmada::{
    InterpreterRequest, InterpreterResponse, Operation, ResourceInterpreterContext,
    ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
};
use flotilla_runtime::informer::{Informers, Shared, Subscription};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;

/// Karmada's default `timeoutSeconds`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A failed webhook call (Karmada's `ErrCallingWebhook`).
#[derive(Debug, thiserror::Error)]
#[error("failed calling webhook {webhook:?}: {reason}")]
pub struct WebhookError {
    /// `<configuration>/<webhook>`.
    pub webhook: String,
    /// What went wrong.
    pub reason: String,
}

/// What a successful call answered (already checked against the operation).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer(pub InterpreterResponse);

/// The arguments of one call.
#[derive(Debug, Default)]
pub struct Call<'a> {
    /// The object interpreted (template, or desired manifest).
    pub object: &'a Value,
    /// The member's object.
    pub observed: Option<&'a Value>,
    /// ReviseReplica's replicas.
    pub replicas: Option<i32>,
    /// AggregateStatus's items.
    pub aggregated_status: Vec<Value>,
}

struct Started {
    informer: Shared<ResourceInterpreterWebhookConfiguration>,
    _subscription: Subscription,
}

/// One webhook with its identity.
#[derive(Clone)]
struct Hook {
    uid: String,
    hook: ResourceInterpreterWebhook,
}

/// The webhooks of one control plane.
pub struct Webhooks {
    informers: Option<Informers>,
    started: OnceLock<Started>,
    /// Every webhook, sorted by `<configuration>/<webhook>`.
    hooks: Arc<RwLock<Arc<Vec<Hook>>>>,
    /// HTTPS clients by (url, CA bundle).
    clients: Mutex<HashMap<(String, Vec<u8>), kube::Client>>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("hooks", &self.hooks.read().len())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    pub(super) fn new(informers: Option<Informers>) -> Self {
        Webhooks {
            informers,
            started: OnceLock::new(),
            hooks: Arc::default(),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Starts the watch of configurations (once) and waits up to `patience` for its first list.
    pub(super) async fn ready(&self, patience: Duration) -> bool {
        let Some(informers) = &self.informers else {
            return true;
        };
        let started = self.started.get_or_init(|| {
            let informer = informers.all::<ResourceInterpreterWebhookConfiguration>();
            let store = informer.store();
            let hooks = self.hooks.clone();
            let subscription = informer.subscribe(move |_event| {
                *hooks.write() = Arc::new(index(&store.state()));
            });
            Started {
                informer,
                _subscription: subscription,
            }
        });
        if tokio::time::timeout(patience, started.informer.wait_until_ready())
            .await
            .is_err()
        {
            return false;
        }
        *self.hooks.write() = Arc::new(index(&started.informer.store().state()));
        true
    }

    #[cfg(test)]
    pub(super) fn set(&self, configurations: &[ResourceInterpreterWebhookConfiguration]) {
        let owned: Vec<Arc<_>> = configurations.iter().cloned().map(Arc::new).collect();
        *self.hooks.write() = Arc::new(index(&owned));
    }

    /// The webhook that answers `operation` for `object`'s kind, if any.
    fn relevant(&self, object: &Value, operation: Operation) -> Option<Hook> {
        let hooks = self.hooks.read();
        if hooks.is_empty() {
            return None;
        }
        let (api_version, kind) = super::gvk_of(object);
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        hooks
            .iter()
            .find(|h| {
                h.hook
                    .rules
                    .iter()
                    .any(|r| r.matches(group, version, kind, operation))
            })
            .cloned()
    }

    /// Whether a webhook answers `operation` for `object` (no call made).
    pub fn enabled(&self, object: &Value, operation: Operation) -> bool {
        self.relevant(object, operation).is_some()
    }

    /// Calls the webhook for `operation` on `call.object`, if one matches.
    pub async fn interpret(
        &self,
        operation: Operation,
        call: Call<'_>,
    ) -> Option<Result<Answer, WebhookError>> {
        let hook = self.relevant(call.object, operation)?;
        Some(self.call(&hook, operation, call).await)
    }

    async fn call(
        &self,
        hook: &Hook,
        operation: Operation,
        call: Call<'_>,
    ) -> Result<Answer, WebhookError> {
        let fail = |reason: String| WebhookError {
            webhook: hook.uid.clone(),
            reason,
        };
        if !hook
            .hook
            .interpreter_context_versions
            .iter()
            .any(|v| v == "v1alpha1")
        {
            return Err(fail(
                "could not create ResourceInterpreterContext objects: webhook does not accept known ResourceInterpreterContext versions (v1alpha1)"
                    .to_owned(),
            ));
        }
        let (api_version, kind) = super::gvk_of(call.object);
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let uid = uuid::Uuid::new_v4().to_string();
        let request = ResourceInterpreterContext {
            api_version: "config.karmada.io/v1alpha1".to_owned(),
            kind: "ResourceInterpreterContext".to_owned(),
            request: Some(InterpreterRequest {
                uid: uid.clone(),
                kind: flotilla_api::karmada::GroupVersionKind {
                    group: group.to_owned(),
                    version: version.to_owned(),
                    kind: kind.to_owned(),
                },
                name: text(call.object, "/metadata/name"),
                namespace: text(call.object, "/metadata/namespace"),
                operation: operation.name().to_owned(),
                object: call.object.clone(),
                observed_object: call.observed.cloned(),
                desired_replicas: Some(call.replicas.unwrap_or(0)),
                aggregated_status: call.aggregated_status,
            }),
            response: None,
        };
        let (client, path) = self
            .client(&hook.hook)
            .map_err(|e| fail(format!("could not get REST client: {e}")))?;
        let timeout = hook
            .hook
            .timeout_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        let body = serde_json::to_vec(&request).map_err(|e| fail(e.to_string()))?;
        let http = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(body)
            .map_err(|e| fail(e.to_string()))?;
        let answer: ResourceInterpreterContext =
            match tokio::time::timeout(timeout, client.request(http)).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(error)) => return Err(fail(format!("failed to call webhook: {error}"))),
                Err(_) => {
                    return Err(fail(format!(
                        "failed to call webhook: no answer within {timeout:?}"
                    )));
                }
            };
        verify(&uid, operation, answer)
            .map(Answer)
            .map_err(|reason| fail(format!("received invalid webhook response: {reason}")))
            .and_then(|answer| {
                if answer.0.successful {
                    Ok(answer)
                } else {
                    let status = answer.0.status.clone().unwrap_or_default();
                    Err(fail(format!(
                        "webhook call failed, get status code: {}, msg: {}",
                        status.code, status.message
                    )))
                }
            })
    }

    /// A client for the webhook's endpoint and the path to post to.
    fn client(&self, hook: &ResourceInterpreterWebhook) -> Result<(kube::Client, String), String> {
        let config = &hook.client_config;
        let url = match (&config.url, &config.service) {
            (Some(url), _) => url.clone(),
            (None, Some(service)) => format!(
                "https://{}.{}.svc:{}{}",
                service.name,
                service.namespace,
                service.port.unwrap_or(443),
                service.path.as_deref().unwrap_or("")
            ),
            (None, None) => return Err("clientConfig names neither url nor service".to_owned()),
        };
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("invalid url {url:?}: {e}"))?;
        let path = uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let ca = config
            .ca_bundle
            .as_ref()
            .map(|b| b.0.clone())
            .unwrap_or_default();
        let key = (url.clone(), ca.clone());
        if let Some(client) = self.clients.lock().get(&key) {
            return Ok((client.clone(), path));
        }
        let mut base = http::uri::Parts::default();
        base.scheme = uri.scheme().cloned();
        base.authority = uri.authority().cloned();
        base.path_and_query = Some(http::uri::PathAndQuery::from_static("/"));
        let base = http::Uri::from_parts(base).map_err(|e| e.to_string())?;
        let mut kube_config = kube::Config::new(base);
        if !ca.is_empty() {
            let certs: Result<Vec<_>, _> = rustls_pemfile::certs(&mut ca.as_slice()).collect();
            let certs = certs.map_err(|e| format!("caBundle: {e}"))?;
            if certs.is_empty() {
                return Err("caBundle holds no PEM certificate".to_owned());
            }
            kube_config.root_cert = Some(certs.into_iter().map(|c| c.to_vec()).collect());
        }
        let client = kube::Client::try_from(kube_config).map_err(|e| e.to_string())?;
        self.clients.lock().insert(key, client.clone());
        Ok((client, path))
    }
}

fn text(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn index(configurations: &[Arc<ResourceInterpreterWebhookConfiguration>]) -> Vec<Hook> {
    let mut hooks: Vec<Hook> = configurations
        .iter()
        .flat_map(|c| {
            let name = c.metadata.name.clone().unwrap_or_default();
            c.webhooks.iter().map(move |hook| Hook {
                uid: format!("{name}/{}", hook.name),
                hook: hook.clone(),
            })
        })
        .collect();
    hooks.sort_by(|a, b| a.uid.cmp(&b.uid));
    hooks
}

/// Karmada's `VerifyResourceInterpreterContext`: the uid echoed and what `operation` needs
/// present.
fn verify(
    uid: &str,
    operation: Operation,
    context: ResourceInterpreterContext,
) -> Result<InterpreterResponse, String> {
    let Some(response) = context.response else {
        return Err("webhook response was absent".to_owned());
    };
    if response.uid != uid {
        return Err(format!(
            "expected response.uid {uid:?}, got {:?}",
            response.uid
        ));
    }
    if !response.successful {
        if response.status.is_none() {
            return Err(
                "webhook require response.status when response.successful is false".to_owned(),
            );
        }
        return Ok(response);
    }
    match operation {
        Operation::InterpretReplica if response.replicas.is_none() => {
            Err("webhook returned nil response.replicas".to_owned())
        }
        Operation::InterpretStatus if response.raw_status.is_none() => {
            Err("webhook returned nill response.rawStatus".to_owned())
        }
        Operation::InterpretHealth if response.healthy.is_none() => {
            Err("webhook returned nil response.healthy".to_owned())
        }
        Operation::ReviseReplica | Operation::Retain | Operation::AggregateStatus => {
            match (&response.patch, &response.patch_type) {
                (None, None) => Ok(response),
                (_, None) => Err("webhook returned nil response.patchType".to_owned()),
                (None, Some(_)) => Err("webhook returned empty response.patch".to_owned()),
                (Some(p), Some(_)) if p.0.is_empty() => {
                    Err("webhook returned empty response.patch".to_owned())
                }
                (Some(_), Some(t)) if t != "JSONPatch" => Err(format!(
                    "webhook returned invalid response.patchType of {t:?}"
                )),
                _ => Ok(response),
            }
        }
        _ => Ok(response),
    }
}

impl Answer {
    /// `object` with the answer's JSON patch applied (unchanged without one).
    pub fn patched(&self, object: &Value) -> Result<Value, String> {
        let Some(patch) = &self.0.patch else {
            return Ok(object.clone());
        };
        let patch: json_patch::Patch = serde_json::from_slice(&patch.0)
            .map_err(|e| format!("decoding the webhook's patch: {e}"))?;
        let mut patched = object.clone();
        json_patch::patch(&mut patched, &patch)
            .map_err(|e| format!("applying the webhook's patch: {e}"))?;
        Ok(patched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::karmada::RequestStatus;

    fn response(uid: &str) -> InterpreterResponse {
        InterpreterResponse {
            uid: uid.to_owned(),
            successful: true,
            ..InterpreterResponse::default()
        }
    }

    fn context(response: InterpreterResponse) -> ResourceInterpreterContext {
        ResourceInterpreterContext {
            response: Some(response),
            ..ResourceInterpreterContext::default()
        }
    }

    #[test]
    fn answers_are_checked_as_karmada_checks_them() {
        assert_eq!(
            verify(
                "a",
                Operation::Retain,
                ResourceInterpreterContext::default()
            )
            .unwrap_err(),
            "webhook response was absent"
        );
        assert_eq!(
            verify("a", Operation::Retain, context(response("b"))).unwrap_err(),
            "expected response.uid \"a\", got \"b\""
        );
        assert_eq!(
            verify("a", Operation::InterpretReplica, context(response("a"))).unwrap_err(),
            "webhook returned nil response.replicas"
        );
        assert_eq!(
            verify("a", Operation::InterpretHealth, context(response("a"))).unwrap_err(),
            "webhook returned nil response.healthy"
        );
        let mut patch_without_type = response("a");
        patch_without_type.patch = Some(k8s_openapi::ByteString(b"[]".to_vec()));
        assert_eq!(
            verify("a", Operation::Retain, context(patch_without_type)).unwrap_err(),
            "webhook returned nil response.patchType"
        );
        // No patch at all: the object is kept.
        assert!(verify("a", Operation::Retain, context(response("a"))).is_ok());
        let mut refused = response("a");
        refused.successful = false;
        assert_eq!(
            verify("a", Operation::Retain, context(refused.clone())).unwrap_err(),
            "webhook require response.status when response.successful is false"
        );
        refused.status = Some(RequestStatus {
            message: "no".to_owned(),
            code: 500,
        });
        assert!(verify("a", Operation::Retain, context(refused)).is_ok());
    }

    #[test]
    fn the_patch_of_an_answer_applies_to_the_object() {
        let mut answer = response("a");
        answer.patch = Some(k8s_openapi::ByteString(
            br#"[{"op":"replace","path":"/spec/replicas","value":2}]"#.to_vec(),
        ));
        answer.patch_type = Some("JSONPatch".to_owned());
        let patched = Answer(answer)
            .patched(&serde_json::json!({"spec": {"replicas": 5}}))
            .expect("applies");
        assert_eq!(patched, serde_json::json!({"spec": {"replicas": 2}}));
    }

    #[test]
    fn the_webhook_whose_name_sorts_first_answers() {
        let config = |name: &str, hook: &str, kinds: &[&str]| {
            serde_json::from_value::<ResourceInterpreterWebhookConfiguration>(serde_json::json!({
                "metadata": {"name": name},
                "webhooks": [{
                    "name": hook,
                    "clientConfig": {"url": format!("https://{name}.example:443/{hook}")},
                    "rules": [{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"], "kinds": kinds}],
                    "interpreterContextVersions": ["v1alpha1"],
                }],
            }))
            .expect("configuration")
        };
        let webhooks = Webhooks::new(None);
        webhooks.set(&[
            config("b", "one", &["Deployment"]),
            config("a", "two", &["*"]),
            config("a", "zero", &["StatefulSet"]),
        ]);
        let deployment = serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment"});
        let hook = webhooks
            .relevant(&deployment, Operation::Retain)
            .expect("one matches");
        assert_eq!(hook.uid, "a/two");
        let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod"});
        assert!(!webhooks.enabled(&pod, Operation::Retain));
    }
}
