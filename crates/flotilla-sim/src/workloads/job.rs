//! The Job controller: runs up to `parallelism` pods until `completions` have succeeded (the
//! kubelet runs a Job pod's programs when the sim models them, else makes it succeed after the
//! configured run time), NonIndexed or Indexed; status startTime, active, ready, succeeded,
//! failed, completedIndexes, completionTime and the SuccessCriteriaMet and Complete conditions
//! (reason CompletionsReached); suspension. Failures: a failed pod is replaced after kube's
//! back-off (10 s doubling per failure since the last success, at most 10 minutes); past
//! `backoffLimit` (default 6: failed pods, or with `restartPolicy: OnFailure` the restarts of
//! the running ones) or `activeDeadlineSeconds` the Job fails — its running pods are deleted
//! and counted failed, the conditions FailureTarget and Failed (BackoffLimitExceeded or
//! DeadlineExceeded) are written and a Warning event says why. A finished Job with
//! `ttlSecondsAfterFinished` is deleted that long after it finished (kube's TTL-after-finished
//! controller).
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/job (job_controller.go, indexed_job_utils.go,
//! backoff_utils.go) at v1.32, counting finished pods from the cache instead of tracking
//! finalizers (a failed pod deleted by hand is still counted: the count never goes down).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::pod::Pod;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use super::{Workloads, create_pod, delete_pod, is_active, is_ready, owner_reference};
use crate::cluster::{Ctx, Stores, now};

pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// The variable an Indexed Job's containers read their index from.
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";

/// kube's `addCompletionIndexEnvVariables`: every container and init container of an Indexed
/// Job's pod gets `JOB_COMPLETION_INDEX` from the pod's completion-index annotation (downward
/// API), unless it sets the variable itself.
fn add_completion_index_env(spec: &mut k8s_openapi::api::core::v1::PodSpec) {
    use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector};
    let containers = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for container in containers {
        let env = container.env.get_or_insert_with(Vec::new);
        if env.iter().any(|var| var.name == COMPLETION_INDEX_ENV) {
            continue;
        }
        env.push(EnvVar {
            name: COMPLETION_INDEX_ENV.to_owned(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: format!("metadata.annotations['{COMPLETION_INDEX}']"),
                    ..ObjectFieldSelector::default()
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        });
    }
}
const COMPLETIONS_REACHED: &str = "CompletionsReached";
const COMPLETIONS_MESSAGE: &str = "Reached expected number of succeeded pods";
/// `spec.backoffLimit` when unset.
const DEFAULT_BACKOFF_LIMIT: i32 = 6;
/// The first failed pod's replacement waits this long; each later failure doubles it.
const POD_FAILURE_BACK_OFF: Duration = Duration::from_secs(10);
/// The longest a replacement waits.
const MAX_POD_FAILURE_BACK_OFF: Duration = Duration::from_secs(600);

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.jobs.pop().await;
        let Some(job) = stores.jobs.get(&key.0, &key.1) else {
            continue;
        };
        match sync(&w, &ctx, &stores, &job).await {
            Ok(Some(later)) => Workloads::requeue_after(&w.jobs, key, later),
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(job = %key.1, %error, "sync failed; retrying");
                Workloads::requeue_after(&w.jobs, key, Duration::from_secs(1));
            }
        }
    }
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

fn index_of(pod: &Pod) -> Option<i32> {
    pod.metadata
        .annotations()?
        .get(COMPLETION_INDEX)?
        .parse()
        .ok()
}

/// `1,3-5` from a set of indexes, as kube writes completedIndexes.
fn compress(indexes: &BTreeSet<i32>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut iter = indexes.iter().peekable();
    while let Some(&start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&&(end + 1)) {
            end += 1;
            iter.next();
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    out.join(",")
}

fn has_condition(job: &Job, kind: &str) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == kind && c.status == "True"))
}

/// When a finished pod's last container ended.
fn finished_at(pod: &Pod) -> Option<jiff::Timestamp> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_deref()?
        .iter()
        .filter_map(|s| {
            Some(
                s.state
                    .as_ref()?
                    .terminated
                    .as_ref()?
                    .finished_at
                    .as_ref()?
                    .0,
            )
        })
        .max()
}

/// How long a replacement of failed pods still waits (kube's pod failure back-off: 10 s
/// doubled per failure since the last success, at most 10 minutes, from the last failure).
fn replacement_wait(pods: &[Arc<Pod>], now: jiff::Timestamp) -> Option<Duration> {
    let last_success = pods
        .iter()
        .filter(|p| phase(p) == "Succeeded")
        .filter_map(|p| finished_at(p))
        .max();
    let failures: Vec<jiff::Timestamp> = pods
        .iter()
        .filter(|p| phase(p) == "Failed")
        .filter_map(|p| finished_at(p))
        .filter(|at| last_success.is_none_or(|s| *at > s))
        .collect();
    let last = *failures.iter().max()?;
    let doublings = u32::try_from(failures.len() - 1)
        .unwrap_or(u32::MAX)
        .min(16);
    let back_off = POD_FAILURE_BACK_OFF
        .saturating_mul(1 << doublings)
        .min(MAX_POD_FAILURE_BACK_OFF);
    let since = Duration::try_from(now.duration_since(last)).unwrap_or_default();
    back_off.checked_sub(since).filter(|d| !d.is_zero())
}

/// Why the Job fails now, if it does (kube's order: the back-off limit, then the deadline),
/// or how long until its deadline.
fn failure(
    job: &Job,
    failed: i32,
    active: &[&Arc<Pod>],
    now: jiff::Timestamp,
) -> Result<Option<(&'static str, &'static str)>, Duration> {
    let spec = job.spec.clone().unwrap_or_default();
    let limit = spec.backoff_limit.unwrap_or(DEFAULT_BACKOFF_LIMIT);
    let on_failure = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        == Some("OnFailure");
    let restarts: i32 = if on_failure {
        active
            .iter()
            .filter_map(|p| p.status.as_ref())
            .flat_map(|s| s.container_statuses.as_deref().unwrap_or_default())
            .map(|c| c.restart_count)
            .sum()
    } else {
        0
    };
    let past_on_failure = on_failure
        && if limit == 0 {
            restarts > 0
        } else {
            restarts >= limit
        };
    if failed > limit || past_on_failure {
        return Ok(Some((
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        )));
    }
    let start = job.status.as_ref().and_then(|s| s.start_time.as_ref());
    if let (Some(deadline), Some(start), false) = (
        spec.active_deadline_seconds,
        start,
        spec.suspend.unwrap_or(false),
    ) {
        let elapsed = Duration::try_from(now.duration_since(start.0)).unwrap_or_default();
        let deadline = Duration::from_secs(u64::try_from(deadline).unwrap_or(0));
        if elapsed >= deadline {
            return Ok(Some((
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            )));
        }
        return Err(deadline - elapsed);
    }
    Ok(None)
}

/// When a finished Job finished: its `Complete` or `Failed` condition's transition time.
fn finish_time(job: &Job) -> Option<jiff::Timestamp> {
    job.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| {
            c.last_transition_time
                .as_ref()
                .map_or(jiff::Timestamp::now(), |t| t.0)
        })
}

/// kube's TTL-after-finished controller: a finished Job with `ttlSecondsAfterFinished` is
/// deleted (its pods with it, in the foreground) that long after it finished.
async fn expire(
    ctx: &Ctx,
    job: &Job,
    finished: jiff::Timestamp,
) -> Result<Option<Duration>, kube::Error> {
    let Some(ttl) = job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished) else {
        return Ok(None);
    };
    let expires = finished + jiff::SignedDuration::from_secs(i64::from(ttl));
    let now = jiff::Timestamp::now();
    if expires > now {
        let wait = Duration::try_from(expires.duration_since(now)).unwrap_or_default();
        return Ok(Some(wait + Duration::from_millis(100)));
    }
    let api: Api<Job> = Api::namespaced(
        ctx.client.clone(),
        job.metadata.namespace.as_deref().unwrap_or_default(),
    );
    let name = job.metadata.name.as_deref().unwrap_or_default();
    // Only the Job that finished (a Job of the same name created since is not this one).
    let params = kube::api::DeleteParams {
        propagation_policy: Some(kube::api::PropagationPolicy::Foreground),
        preconditions: Some(kube::api::Preconditions {
            uid: job.metadata.uid.clone(),
            resource_version: None,
        }),
        ..kube::api::DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(None),
        Err(error) => Err(error),
    }
}

/// Syncs one Job; `Some(delay)` asks for another sync after it (a deadline, a back-off).
async fn sync(
    w: &Workloads,
    ctx: &Ctx,
    stores: &Stores,
    job: &Job,
) -> Result<Option<Duration>, kube::Error> {
    let uid = job.metadata.uid.clone().unwrap_or_default();
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    if let Some(finished) = finish_time(job) {
        w.failed_jobs.lock().remove(&uid);
        return expire(ctx, job, finished).await;
    }
    // Failed here, but the cache may not show it yet: a sync from that older state would
    // start pods again.
    if w.failed_jobs.lock().contains(&uid) {
        return Ok(None);
    }
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = job.metadata.name.clone().unwrap_or_default();
    let spec = job.spec.clone().unwrap_or_default();
    let parallelism = spec.parallelism.unwrap_or(1).max(0);
    let completions = spec.completions;
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    let suspended = spec.suspend.unwrap_or(false);
    let pods = w.owned_pods(stores, &uid);
    let active: Vec<&Arc<Pod>> = pods.iter().filter(|p| is_active(p)).collect();
    let succeeded_pods: Vec<&Arc<Pod>> = pods.iter().filter(|p| phase(p) == "Succeeded").collect();
    // Failed pods deleted since are still counted (kube keeps the count in the status).
    let old_failed = job.status.as_ref().and_then(|s| s.failed).unwrap_or(0);
    let failed = (pods.iter().filter(|p| phase(p) == "Failed").count() as i32).max(old_failed);
    let completed_indexes: BTreeSet<i32> =
        succeeded_pods.iter().filter_map(|p| index_of(p)).collect();
    let succeeded = if indexed {
        completed_indexes.len() as i32
    } else {
        succeeded_pods.len() as i32
    };
    let done = match completions {
        Some(c) => succeeded >= c,
        // Work queue: done once one pod succeeded and none is running.
        None => succeeded > 0 && active.is_empty(),
    };
    let clock = jiff::Timestamp::now();
    let mut later = None;
    let failing = if done {
        None
    } else {
        match failure(job, failed, &active, clock) {
            Ok(failing) => failing,
            Err(until_deadline) => {
                later = Some(until_deadline);
                None
            }
        }
    };
    if let Some((reason, message)) = failing {
        // As kube: not before the pods it created are seen (they would escape the deletion).
        if !w.expectations.satisfied(&uid) {
            return Ok(Some(Duration::from_secs(1)));
        }
        return fail(w, ctx, job, &active, failed, reason, message).await;
    }
    if w.expectations.satisfied(&uid) && !done {
        let wait = replacement_wait(&pods, clock);
        if suspended {
            for p in &active {
                let pod_name = p.metadata.name.clone().unwrap_or_default();
                w.expectations.expect_delete(&uid, &pod_name);
                let _ = delete_pod(ctx, &ns, &pod_name).await;
            }
        } else {
            let remaining = completions.map_or(parallelism, |c| (c - succeeded).max(0));
            let wanted = parallelism.min(remaining) as usize;
            let mut free_indexes: Vec<i32> = Vec::new();
            if indexed {
                let busy: BTreeSet<i32> = active.iter().filter_map(|p| index_of(p)).collect();
                free_indexes = (0..completions.unwrap_or(0))
                    .filter(|i| !busy.contains(i) && !completed_indexes.contains(i))
                    .collect();
            }
            let mut created = 0usize;
            if let Some(wait) = wait.filter(|_| active.len() < wanted) {
                // Failed pods are replaced after the back-off.
                later = Some(later.map_or(wait, |l: Duration| l.min(wait)));
            }
            while wait.is_none() && active.len() + created < wanted {
                let (pod_name, index) = if indexed {
                    let Some(i) = free_indexes.get(created).copied() else {
                        break;
                    };
                    (
                        w.child_name(
                            ctx.settings.seed,
                            &format!("{}/job/{ns}/{name}", ctx.name),
                            &format!("{name}-{i}"),
                        ),
                        Some(i),
                    )
                } else {
                    (
                        w.child_name(
                            ctx.settings.seed,
                            &format!("{}/job/{ns}/{name}", ctx.name),
                            &name,
                        ),
                        None,
                    )
                };
                w.expectations.expect_create(&uid, &pod_name);
                let mut labels = vec![
                    ("batch.kubernetes.io/controller-uid", uid.clone()),
                    ("batch.kubernetes.io/job-name", name.clone()),
                    ("controller-uid", uid.clone()),
                    ("job-name", name.clone()),
                ];
                let mut annotations = Vec::new();
                if let Some(i) = index {
                    labels.push((COMPLETION_INDEX, i.to_string()));
                    annotations.push((COMPLETION_INDEX, i.to_string()));
                }
                let result = create_pod(
                    ctx,
                    &ns,
                    &pod_name,
                    &spec.template,
                    &labels,
                    &annotations,
                    owner_reference(job),
                    |pod| {
                        if let (Some(i), Some(spec)) = (index, pod.spec.as_mut()) {
                            if spec.subdomain.is_some() {
                                spec.hostname = Some(format!("{name}-{i}"));
                            }
                            add_completion_index_env(spec);
                        }
                    },
                )
                .await;
                if let Err(e) = result {
                    w.expectations.forget(&uid, &pod_name);
                    return Err(e);
                }
                created += 1;
            }
        }
    }
    let at = now();
    let old = serde_json::to_value(job.status.clone().unwrap_or_default()).unwrap_or(Value::Null);
    let mut status = json!({
        "active": if active.is_empty() { Value::Null } else { json!(active.len()) },
        "ready": active.iter().filter(|p| is_ready(p)).count(),
        "succeeded": if succeeded == 0 { Value::Null } else { json!(succeeded) },
        "failed": if failed == 0 { Value::Null } else { json!(failed) },
        "uncountedTerminatedPods": {},
        "terminating": 0,
    });
    if indexed {
        status["completedIndexes"] = if completed_indexes.is_empty() {
            Value::Null
        } else {
            compress(&completed_indexes).into()
        };
    }
    if old.get("startTime").is_none() && !suspended {
        status["startTime"] = at.clone().into();
    }
    if done {
        let cond = |kind: &str| {
            json!({"type": kind, "status": "True", "reason": COMPLETIONS_REACHED,
            "message": COMPLETIONS_MESSAGE, "lastProbeTime": at, "lastTransitionTime": at})
        };
        status["conditions"] = json!([cond("SuccessCriteriaMet"), cond("Complete")]);
        status["completionTime"] = at.clone().into();
        status["active"] = Value::Null;
        status["ready"] = 0.into();
    } else if suspended && !has_condition(job, "Suspended") {
        status["conditions"] = json!([{"type": "Suspended", "status": "True", "reason": "JobSuspended",
            "message": "Job suspended", "lastProbeTime": at, "lastTransitionTime": at}]);
    }
    let mut merged = old.clone();
    if let (Some(m), Some(s)) = (merged.as_object_mut(), status.as_object()) {
        for (k, v) in s {
            if v.is_null() {
                m.remove(k);
            } else {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    if merged == old {
        return Ok(later);
    }
    patch_status(ctx, job, status).await?;
    if done {
        job_event(ctx, job, "Normal", "Completed", "Job completed").await;
    }
    Ok(later)
}

/// The Job failed: its running pods are deleted (and counted failed, as kube counts them once
/// the Job has finished), FailureTarget and Failed are written, and a Warning event says why.
async fn fail(
    w: &Workloads,
    ctx: &Ctx,
    job: &Job,
    active: &[&Arc<Pod>],
    failed: i32,
    reason: &str,
    message: &str,
) -> Result<Option<Duration>, kube::Error> {
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let at = now();
    let cond = |kind: &str| {
        json!({"type": kind, "status": "True", "reason": reason, "message": message,
            "lastProbeTime": at, "lastTransitionTime": at})
    };
    let mut conditions: Vec<Value> = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .map(|c| {
            c.iter()
                .filter(|c| c.type_ != "FailureTarget" && c.type_ != "Failed")
                .filter_map(|c| serde_json::to_value(c).ok())
                .collect()
        })
        .unwrap_or_default();
    conditions.push(cond("FailureTarget"));
    conditions.push(cond("Failed"));
    let failed = failed + active.len() as i32;
    let status = json!({
        "active": Value::Null,
        "ready": 0,
        "terminating": 0,
        "failed": if failed == 0 { Value::Null } else { json!(failed) },
        "conditions": conditions,
    });
    // Against the version read: a sync from an older state must not overwrite the failure.
    patch_status(ctx, job, status).await?;
    w.failed_jobs.lock().insert(uid.clone());
    for pod in active {
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        w.expectations.expect_delete(&uid, &pod_name);
        if let Err(error) = delete_pod(ctx, &ns, &pod_name).await {
            w.expectations.forget(&uid, &pod_name);
            tracing::debug!(pod = %pod_name, %error, "cannot delete a failed Job's pod");
        }
    }
    job_event(ctx, job, "Warning", reason, message).await;
    Ok(None)
}

/// An event on the Job from `job-controller`.
async fn job_event(ctx: &Ctx, job: &Job, kind: &str, reason: &str, message: &str) {
    let involved = crate::events::Involved::of("Job", "batch/v1", &job.metadata);
    crate::events::record_about(ctx, &involved, kind, reason, message, "job-controller").await;
}

/// A merge patch of the Job's status against the version read: a sync from an older copy
/// (the cache lagging this controller's own writes) gets a conflict and runs again.
async fn patch_status(ctx: &Ctx, job: &Job, status: Value) -> Result<(), kube::Error> {
    let api: Api<Job> = Api::namespaced(
        ctx.client.clone(),
        job.metadata.namespace.as_deref().unwrap_or_default(),
    );
    api.patch_status(
        job.metadata.name.as_deref().unwrap_or_default(),
        &PatchParams::default(),
        &Patch::Merge(json!({
            "metadata": {"resourceVersion": job.metadata.resource_version},
            "status": status,
        })),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_indexes_are_compressed_like_kube() {
        let set: BTreeSet<i32> = [0, 1, 2, 4, 6, 7].into_iter().collect();
        assert_eq!(compress(&set), "0-2,4,6-7");
        assert_eq!(compress(&BTreeSet::new()), "");
    }
}
