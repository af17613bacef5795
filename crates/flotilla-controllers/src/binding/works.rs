//! Writing Works: create, or update only when the desired Work differs from the stored one
//! once the server's admission (permanent id, manifest pruning and bookkeeping) is taken into
//! account; and an index of Works by the binding permanent id they carry.

use std::collections::{BTreeSet, HashMap};

use flotilla_api::karmada::Work;
use flotilla_api::validation::karmada::{Defaulting, Kind, WORK_PERMANENT_ID, default_object};
use kube::api::{Api, PostParams};
use kube::core::Status;
use parking_lot::Mutex;

use super::render::{ANNOTATION_KEYS_OWNED, EXECUTION_FINALIZER};

/// What writing a Work did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkWrite {
    Created,
    Updated,
    Unchanged,
}

/// How many times a write that lost a race (`409`) is tried again from the server's copy
/// (client-go's `retry.DefaultRetry`, which Karmada's `CreateOrUpdateWork` uses).
const CONFLICT_ATTEMPTS: usize = 5;

/// Creates `desired`, or updates the stored Work (`existing`, usually the informer's copy) when
/// they differ. A write that loses a race (a stale copy's update conflicts, or the Work was
/// created since the copy was taken) is decided again from the server's current Work, as
/// Karmada's `CreateOrUpdateWork` does under `retry.RetryOnConflict`. A Work being deleted is
/// not written (Karmada's fails the same way): the binding is retried and recreates the Work
/// once it is gone.
pub async fn ensure_work(
    client: &kube::Client,
    desired: Work,
    existing: Option<&Work>,
) -> Result<WorkWrite, kube::Error> {
    let namespace = desired.metadata.namespace.clone().unwrap_or_default();
    let name = desired.metadata.name.clone().unwrap_or_default();
    let api = Api::<Work>::namespaced(client.clone(), &namespace);
    let mut fresh: Option<Option<Work>> = None;
    for attempt in 1..=CONFLICT_ATTEMPTS {
        let current = match &fresh {
            Some(read) => read.as_ref(),
            None => existing,
        };
        let result = write_once(&api, &desired, current, &namespace, &name).await;
        match result {
            Err(kube::Error::Api(status))
                if status.code == 409
                    && (status.reason == "Conflict" || status.reason == "AlreadyExists")
                    && !current.is_some_and(|w| w.is_deleting())
                    && attempt < CONFLICT_ATTEMPTS =>
            {
                tracing::debug!(work = %format!("{namespace}/{name}"), reason = %status.reason, "work write raced; retrying from the server's copy");
                fresh = Some(api.get_opt(&name).await?);
            }
            other => return other,
        }
    }
    unreachable!("the last attempt returns")
}

/// One attempt of [`ensure_work`] against `existing`.
async fn write_once(
    api: &Api<Work>,
    desired: &Work,
    existing: Option<&Work>,
    namespace: &str,
    name: &str,
) -> Result<WorkWrite, kube::Error> {
    let Some(existing) = existing else {
        api.create(&PostParams::default(), desired).await?;
        return Ok(WorkWrite::Created);
    };
    if existing.is_deleting() {
        return Err(being_deleted(namespace, name));
    }
    let updated = admitted(merged(existing, desired));
    if &updated == existing {
        return Ok(WorkWrite::Unchanged);
    }
    api.replace(name, &PostParams::default(), &updated).await?;
    Ok(WorkWrite::Updated)
}

/// The stored Work updated with `desired` (Karmada's `CreateOrUpdateWork` mutation): labels and
/// annotations merged over the stored ones (the binding controller's own annotations that no
/// longer apply removed first), finalizers merged, the spec replaced.
fn merged(existing: &Work, desired: &Work) -> Work {
    let mut updated = existing.clone();
    let labels = updated.metadata.labels.get_or_insert_with(Default::default);
    for (k, v) in desired.metadata.labels.iter().flatten() {
        labels.insert(k.clone(), v.clone());
    }
    let annotations = updated
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    for key in ANNOTATION_KEYS_OWNED {
        annotations.remove(*key);
    }
    for (k, v) in desired.metadata.annotations.iter().flatten() {
        annotations.insert(k.clone(), v.clone());
    }
    updated.metadata.finalizers = Some(merge_finalizers(
        existing.metadata.finalizers.as_deref().unwrap_or_default(),
        desired.metadata.finalizers.as_deref().unwrap_or_default(),
    ));
    if desired.metadata.owner_references.is_some() {
        updated.metadata.owner_references = desired.metadata.owner_references.clone();
    }
    updated.spec = desired.spec.clone();
    updated
}

/// Karmada's `MergeFinalizers`, with the execution controller's finalizer always among them:
/// the stored and desired finalizers, each once, sorted.
fn merge_finalizers(existing: &[String], desired: &[String]) -> Vec<String> {
    existing
        .iter()
        .chain(desired)
        .map(String::as_str)
        .chain([EXECUTION_FINALIZER])
        .collect::<BTreeSet<&str>>()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Karmada's refusal to write a Work that is being deleted, as a 409 Conflict so it is retried.
fn being_deleted(namespace: &str, name: &str) -> kube::Error {
    kube::Error::Api(
        Status::failure(
            &format!("work {namespace}/{name} is being deleted"),
            "Conflict",
        )
        .with_code(409)
        .boxed(),
    )
}

/// `work` as the server's admission would store it (so an unchanged Work compares equal).
fn admitted(work: Work) -> Work {
    let id = work
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(WORK_PERMANENT_ID))
        .cloned()
        .unwrap_or_default();
    let Ok(mut value) = serde_json::to_value(&work) else {
        return work;
    };
    default_object(
        Kind::Work,
        &mut value,
        &Defaulting {
            create: false,
            fresh_id: &id,
            now: "",
        },
    );
    serde_json::from_value::<Work>(value).unwrap_or(work)
}

/// Works by the binding permanent id they carry, from a Work watch. Ids are kept per label (as
/// Karmada keeps one index for `resourcebinding.karmada.io/permanent-id` and one for
/// `clusterresourcebinding.karmada.io/permanent-id`): a ResourceBinding never finds a Work
/// labelled for a ClusterResourceBinding with the same id, and a Work carrying both labels is
/// found through either.
#[derive(Debug, Default)]
pub struct WorkIndex {
    by_binding: Mutex<HashMap<LabelledId, BTreeSet<WorkKey>>>,
    of_work: Mutex<HashMap<WorkKey, Vec<LabelledId>>>,
}

/// A binding id with the label holding it.
type LabelledId = (&'static str, String);
/// A Work's `(namespace, name)`.
type WorkKey = (String, String);

impl WorkIndex {
    /// Records `work` under each of `labels` it carries, with the id that label holds.
    pub fn upsert(&self, work: &Work, labels: &[&'static str]) {
        let key = (
            work.metadata.namespace.clone().unwrap_or_default(),
            work.metadata.name.clone().unwrap_or_default(),
        );
        self.remove_key(&key);
        let ids: Vec<LabelledId> = labels
            .iter()
            .filter_map(|label| {
                let id = work.metadata.labels.as_ref()?.get(*label)?;
                Some((*label, id.clone()))
            })
            .collect();
        if ids.is_empty() {
            return;
        }
        let mut by_binding = self.by_binding.lock();
        for id in &ids {
            by_binding
                .entry(id.clone())
                .or_default()
                .insert(key.clone());
        }
        self.of_work.lock().insert(key, ids);
    }

    pub fn remove(&self, work: &Work) {
        self.remove_key(&(
            work.metadata.namespace.clone().unwrap_or_default(),
            work.metadata.name.clone().unwrap_or_default(),
        ));
    }

    fn remove_key(&self, key: &WorkKey) {
        let Some(ids) = self.of_work.lock().remove(key) else {
            return;
        };
        let mut by_binding = self.by_binding.lock();
        for id in ids {
            if let Some(set) = by_binding.get_mut(&id) {
                set.remove(key);
                if set.is_empty() {
                    by_binding.remove(&id);
                }
            }
        }
    }

    /// `(namespace, name)` of the Works whose `label` holds `id`.
    pub fn works_of(&self, label: &'static str, id: &str) -> Vec<WorkKey> {
        self.by_binding
            .lock()
            .get(&(label, id.to_owned()))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    // Karmada's Work lookups by binding id and its Work update merge, restated.
    mod karmada_work_index;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    /// A client whose every request fails the test.
    fn no_requests() -> kube::Client {
        let service = tower::service_fn(|request: http::Request<kube::client::Body>| async move {
            Err::<http::Response<kube::client::Body>, _>(
                format!("unexpected request {} {}", request.method(), request.uri()).into(),
            )
        });
        kube::Client::new(
            tower::util::MapErr::new(service, |e: Box<dyn std::error::Error + Send + Sync>| e),
            "default",
        )
    }

    #[tokio::test]
    async fn a_work_being_deleted_is_not_written() {
        let mut existing = Work::default();
        existing.metadata.name = Some("nginx-687f7fb96f".into());
        existing.metadata.namespace = Some("karmada-es-member1".into());
        existing.metadata.deletion_timestamp =
            Some(Time(jiff::Timestamp::from_second(10).expect("valid")));
        let mut desired = existing.clone();
        desired.metadata.deletion_timestamp = None;
        desired.spec.suspend_dispatching = Some(true);
        let error = ensure_work(&no_requests(), desired, Some(&existing))
            .await
            .expect_err("refused");
        let kube::Error::Api(status) = error else {
            panic!("not an API error: {error}");
        };
        assert_eq!(status.code, 409);
        assert_eq!(
            status.message,
            "work karmada-es-member1/nginx-687f7fb96f is being deleted"
        );
    }

    /// The requests a scripted client received: method, path, JSON body.
    type Seen = std::sync::Arc<Mutex<Vec<(String, String, serde_json::Value)>>>;

    /// A client answering each request with the next of `answers` (status, JSON body) and
    /// recording every request.
    fn scripted(answers: Vec<(u16, serde_json::Value)>) -> (kube::Client, Seen) {
        use http_body_util::BodyExt as _;
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let answers = std::sync::Arc::new(Mutex::new(std::collections::VecDeque::from(answers)));
        let log = seen.clone();
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let log = log.clone();
            let answers = answers.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
                log.lock()
                    .push((parts.method.to_string(), parts.uri.path().to_owned(), body));
                let (code, answer) = answers.lock().pop_front().expect("an answer left");
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(
                    http::Response::builder()
                        .status(code)
                        .header("content-type", "application/json")
                        .body(kube::client::Body::from(answer.to_string().into_bytes()))
                        .expect("response"),
                )
            }
        });
        (kube::Client::new(service, "default"), seen)
    }

    fn status(code: u16, reason: &str) -> serde_json::Value {
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "lost a race", "reason": reason, "code": code})
    }

    fn work(version: &str, suspend: bool) -> Work {
        let mut work = Work::default();
        work.metadata.name = Some("nginx-687f7fb96f".into());
        work.metadata.namespace = Some("karmada-es-member1".into());
        work.metadata.resource_version = Some(version.into());
        work.metadata.finalizers = Some(vec![EXECUTION_FINALIZER.to_owned()]);
        work.spec.suspend_dispatching = Some(suspend);
        work
    }

    #[tokio::test]
    async fn an_update_from_a_stale_copy_is_decided_again_from_the_servers() {
        let stale = work("1", false);
        let current = work("2", false);
        let written = work("3", true);
        let (client, seen) = scripted(vec![
            (409, status(409, "Conflict")),
            (200, serde_json::to_value(&current).expect("json")),
            (200, serde_json::to_value(&written).expect("json")),
        ]);
        let outcome = ensure_work(&client, work("", true), Some(&stale))
            .await
            .expect("written on the second attempt");
        assert_eq!(outcome, WorkWrite::Updated);
        let seen = seen.lock();
        let calls: Vec<(&str, &str)> = seen
            .iter()
            .map(|(m, p, _)| (m.as_str(), p.as_str()))
            .collect();
        let path =
            "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/nginx-687f7fb96f";
        assert_eq!(calls, [("PUT", path), ("GET", path), ("PUT", path)]);
        assert_eq!(seen[0].2["metadata"]["resourceVersion"], "1");
        assert_eq!(seen[2].2["metadata"]["resourceVersion"], "2");
        assert_eq!(seen[2].2["spec"]["suspendDispatching"], true);
    }

    #[tokio::test]
    async fn a_create_that_finds_the_work_updates_it() {
        let current = work("7", false);
        let (client, seen) = scripted(vec![
            (409, status(409, "AlreadyExists")),
            (200, serde_json::to_value(&current).expect("json")),
            (200, serde_json::to_value(work("8", true)).expect("json")),
        ]);
        let outcome = ensure_work(&client, work("", true), None)
            .await
            .expect("updated");
        assert_eq!(outcome, WorkWrite::Updated);
        let seen = seen.lock();
        let methods: Vec<&str> = seen.iter().map(|(m, _, _)| m.as_str()).collect();
        assert_eq!(methods, ["POST", "GET", "PUT"]);
        assert_eq!(seen[2].2["metadata"]["resourceVersion"], "7");
    }

    #[tokio::test]
    async fn conflicts_stop_after_five_attempts() {
        let mut answers = Vec::new();
        for _ in 0..4 {
            answers.push((409, status(409, "Conflict")));
            answers.push((200, serde_json::to_value(work("2", false)).expect("json")));
        }
        answers.push((409, status(409, "Conflict")));
        let (client, seen) = scripted(answers);
        let error = ensure_work(&client, work("", true), Some(&work("1", false)))
            .await
            .expect_err("gives up");
        let kube::Error::Api(status) = error else {
            panic!("not an API error: {error}");
        };
        assert_eq!(status.code, 409);
        let puts = seen.lock().iter().filter(|(m, _, _)| m == "PUT").count();
        assert_eq!(puts, 5);
    }
}
