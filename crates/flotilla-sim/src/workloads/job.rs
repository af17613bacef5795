//! The Job controller: runs up to `parallelism` pods until `completions` have succeeded (the
//! kubelet makes Job pods succeed after the configured run time), NonIndexed or Indexed; status
//! startTime, active, ready, succeeded, failed, completedIndexes, completionTime and the
//! SuccessCriteriaMet and Complete conditions (reason CompletionsReached); suspension.
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/job (job_controller.go, indexed_job_utils.go)
//! at v1.32, counting finished pods from the cache instead of tracking finalizers.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::pod::Pod;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use super::{Workloads, create_pod, delete_pod, is_active, is_ready, owner_reference};
use crate::cluster::{Ctx, Stores, now};

pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
const COMPLETIONS_REACHED: &str = "CompletionsReached";
const COMPLETIONS_MESSAGE: &str = "Reached expected number of succeeded pods";

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.jobs.pop().await;
        let Some(job) = stores.jobs.get(&key.0, &key.1) else {
            continue;
        };
        if let Err(error) = sync(&w, &ctx, &stores, &job).await {
            tracing::debug!(job = %key.1, %error, "sync failed; retrying");
            Workloads::requeue_after(&w.jobs, key, std::time::Duration::from_secs(1));
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

async fn sync(w: &Workloads, ctx: &Ctx, stores: &Stores, job: &Job) -> Result<(), kube::Error> {
    if job.metadata.deletion_timestamp.is_some()
        || has_condition(job, "Complete")
        || has_condition(job, "Failed")
    {
        return Ok(());
    }
    let uid = job.metadata.uid.clone().unwrap_or_default();
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
    let failed = pods.iter().filter(|p| phase(p) == "Failed").count() as i32;
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
    if w.expectations.satisfied(&uid) && !done {
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
            let (succeeded_so_far, mut created) = (succeeded, 0usize);
            let _ = succeeded_so_far;
            while active.len() + created < wanted {
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
                        if let (Some(i), Some(spec)) = (index, pod.spec.as_mut())
                            && spec.subdomain.is_some()
                        {
                            spec.hostname = Some(format!("{name}-{i}"));
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
        return Ok(());
    }
    let api: Api<Job> = Api::namespaced(ctx.client.clone(), &ns);
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": status})),
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
