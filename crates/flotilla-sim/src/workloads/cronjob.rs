//! The CronJob controller: at each time of `schedule` (robfig/cron's standard syntax, in
//! `timeZone` or a `CRON_TZ=` prefix, else UTC) it creates the Job `<name>-<minutes since the
//! epoch>` from `jobTemplate`, owned by the CronJob and annotated with the scheduled time; it
//! honours `suspend`, `startingDeadlineSeconds` (a time missed by more is skipped, with
//! `MissSchedule`) and `concurrencyPolicy` (`Allow`; `Forbid` skips a time while a Job runs;
//! `Replace` deletes the running ones first); it keeps `status.active`, `lastScheduleTime` and
//! `lastSuccessfulTime`, deletes finished Jobs beyond `successfulJobsHistoryLimit` (3) and
//! `failedJobsHistoryLimit` (1), and records kube's events (`SuccessfulCreate`,
//! `SawCompletedJob`, `SuccessfulDelete`, `UnparseableSchedule`, `UnknownTimeZone`).
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/cronjob (cronjob_controllerv2.go, utils.go) at
//! v1.32; only the most recent missed time is run, as there.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::cron::{Schedule, load_zone};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{Workloads, controller_of, owner_reference};
use crate::cluster::{Ctx, Stores};
use crate::events::{Involved, record_about};
use crate::lifted::cronjob::most_recent;

/// The annotation with the time a Job was scheduled for (kube 1.28+).
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// More missed times than this since the last one run is reported (`TooManyMissedTimes`).
const MANY_MISSED: i64 = 100;

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.cronjobs.pop().await;
        let Some(cronjob) = stores.cronjobs.get(&key.0, &key.1) else {
            continue;
        };
        match sync(&w, &ctx, &stores, &cronjob).await {
            Ok(Some(later)) => Workloads::requeue_after(&w.cronjobs, key, later),
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(cronjob = %key.1, %error, "sync failed; retrying");
                Workloads::requeue_after(&w.cronjobs, key, Duration::from_secs(1));
            }
        }
    }
}

/// `Complete` or `Failed`, when the Job has finished.
fn finished(job: &Job) -> Option<&'static str> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    ["Complete", "Failed"].into_iter().find(|kind| {
        conditions
            .iter()
            .any(|c| c.type_ == *kind && c.status == "True")
    })
}

fn time(value: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Timestamp> {
    value.map(|t| t.0)
}

/// The Job name for a scheduled time (kube's `getJobName`).
pub fn job_name(cronjob: &str, scheduled: Timestamp) -> String {
    format!("{cronjob}-{}", scheduled.as_second().div_euclid(60))
}

async fn event(ctx: &Ctx, cronjob: &CronJob, kind: &str, reason: &str, message: &str) {
    let involved = Involved::of("CronJob", "batch/v1", &cronjob.metadata);
    record_about(ctx, &involved, kind, reason, message, "cronjob-controller").await;
}

fn reference(job: &Job) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "name": job.metadata.name,
        "namespace": job.metadata.namespace, "uid": job.metadata.uid,
        "resourceVersion": job.metadata.resource_version})
}

/// Syncs one CronJob; `Some(delay)` asks for another sync then (its next scheduled time).
async fn sync(
    w: &Workloads,
    ctx: &Ctx,
    stores: &Stores,
    cronjob: &CronJob,
) -> Result<Option<Duration>, kube::Error> {
    if cronjob.metadata.deletion_timestamp.is_some() {
        return Ok(None);
    }
    let ns = cronjob.metadata.namespace.clone().unwrap_or_default();
    let name = cronjob.metadata.name.clone().unwrap_or_default();
    let uid = cronjob.metadata.uid.clone().unwrap_or_default();
    let spec = cronjob.spec.clone().unwrap_or_default();
    let old_status = cronjob.status.clone().unwrap_or_default();
    let jobs_api: Api<Job> = Api::namespaced(ctx.client.clone(), &ns);
    let mut children: Vec<Arc<Job>> = w
        .jobs_by_owner
        .of(&uid)
        .into_iter()
        .filter_map(|(ns, name)| stores.jobs.get(&ns, &name))
        .filter(|j| controller_of(&j.metadata).is_some_and(|o| o.uid == uid))
        .collect();
    children.sort_by_key(|j| {
        (
            time(j.status.as_ref().and_then(|s| s.start_time.as_ref()))
                .or(time(j.metadata.creation_timestamp.as_ref())),
            j.metadata.name.clone(),
        )
    });

    // Active Jobs: the running children; a finished one is reported once.
    let was_active: Vec<String> = old_status
        .active
        .iter()
        .flatten()
        .filter_map(|r| r.name.clone())
        .collect();
    let mut active: Vec<Arc<Job>> = Vec::new();
    let mut last_success = time(old_status.last_successful_time.as_ref());
    for job in &children {
        let job_name = job.metadata.name.clone().unwrap_or_default();
        match finished(job) {
            None if job.metadata.deletion_timestamp.is_none() => active.push(job.clone()),
            None => {}
            Some(outcome) => {
                if was_active.contains(&job_name) {
                    let message = format!("Saw completed job: {job_name}, status: {outcome}");
                    event(ctx, cronjob, "Normal", "SawCompletedJob", &message).await;
                }
                if outcome == "Complete" {
                    let done = time(job.status.as_ref().and_then(|s| s.completion_time.as_ref()));
                    last_success = last_success.max(done);
                }
            }
        }
    }

    // Finished Jobs beyond the history limits go, oldest first.
    for (outcome, limit) in [
        ("Complete", spec.successful_jobs_history_limit.unwrap_or(3)),
        ("Failed", spec.failed_jobs_history_limit.unwrap_or(1)),
    ] {
        let done: Vec<&Arc<Job>> = children
            .iter()
            .filter(|j| finished(j) == Some(outcome) && j.metadata.deletion_timestamp.is_none())
            .collect();
        let extra = done
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(0));
        for job in done.into_iter().take(extra) {
            let job_name = job.metadata.name.clone().unwrap_or_default();
            delete_job(&jobs_api, &job_name).await?;
            event(
                ctx,
                cronjob,
                "Normal",
                "SuccessfulDelete",
                &format!("Deleted job {job_name}"),
            )
            .await;
        }
    }

    let zone = match spec.time_zone.as_deref() {
        None => Ok(TimeZone::UTC),
        Some(zone) => load_zone(zone),
    };
    let schedule = match zone {
        Err(error) => {
            let zone = spec.time_zone.clone().unwrap_or_default();
            let message = format!("invalid timeZone: {zone:?}: {error}");
            event(ctx, cronjob, "Warning", "UnknownTimeZone", &message).await;
            None
        }
        Ok(zone) => match Schedule::parse(&spec.schedule, zone) {
            Ok(schedule) => Some(schedule),
            Err(error) => {
                let message = format!("unparseable schedule: {:?} : {error}", spec.schedule);
                event(ctx, cronjob, "Warning", "UnparseableSchedule", &message).await;
                None
            }
        },
    };
    let now = Timestamp::now();
    let mut scheduled_now = None;
    let mut later = None;
    if let Some(schedule) = &schedule {
        later = schedule.next_after(now).ok().map(|next| {
            Duration::try_from(next.duration_since(now)).unwrap_or_default()
                + Duration::from_millis(100)
        });
        if !spec.suspend.unwrap_or(false) {
            let mut earliest = time(old_status.last_schedule_time.as_ref())
                .or(time(cronjob.metadata.creation_timestamp.as_ref()))
                .unwrap_or(now);
            if let Some(deadline) = spec.starting_deadline_seconds {
                let floor = now - jiff::SignedDuration::from_secs(deadline);
                earliest = earliest.max(floor);
            }
            match most_recent(schedule, earliest, now) {
                Ok(due) => {
                    if due.missed > MANY_MISSED {
                        let message = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew";
                        event(ctx, cronjob, "Warning", "TooManyMissedTimes", message).await;
                    }
                    scheduled_now = due.time;
                }
                Err(error) => {
                    let message = format!("invalid schedule: {} : {error}", spec.schedule);
                    event(ctx, cronjob, "Warning", "InvalidSchedule", &message).await;
                    later = None;
                }
            }
        }
    }
    let mut created = None;
    if let Some(due) = scheduled_now {
        let job_name = job_name(&name, due);
        let exists = children
            .iter()
            .any(|j| j.metadata.name.as_deref() == Some(job_name.as_str()));
        let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
        let late = spec
            .starting_deadline_seconds
            .is_some_and(|d| due + jiff::SignedDuration::from_secs(d) < now);
        if late {
            let message = format!("Missed scheduled time to start a job: {due}");
            event(ctx, cronjob, "Warning", "MissSchedule", &message).await;
        } else if !exists && (policy != "Forbid" || active.is_empty()) {
            if policy == "Replace" {
                for job in active.drain(..) {
                    let gone = job.metadata.name.clone().unwrap_or_default();
                    delete_job(&jobs_api, &gone).await?;
                    event(
                        ctx,
                        cronjob,
                        "Normal",
                        "SuccessfulDelete",
                        &format!("Deleted job {gone}"),
                    )
                    .await;
                }
            }
            let job = job_from_template(cronjob, &job_name, due, schedule.as_ref());
            let made = match jobs_api.create(&PostParams::default(), &job).await {
                Ok(made) => {
                    let message = format!("Created job {job_name}");
                    event(ctx, cronjob, "Normal", "SuccessfulCreate", &message).await;
                    made
                }
                // Created by an earlier sync the cache does not show yet.
                Err(kube::Error::Api(e)) if e.code == 409 => jobs_api.get(&job_name).await?,
                Err(error) => return Err(error),
            };
            created = Some((Arc::new(made), due));
        }
    }
    let mut refs: Vec<Value> = active.iter().map(|j| reference(j)).collect();
    let mut last_schedule = time(old_status.last_schedule_time.as_ref());
    if let Some((job, due)) = created {
        refs.push(reference(&job));
        last_schedule = Some(due);
    }
    let stamp = |t: Option<Timestamp>| {
        t.map_or(Value::Null, |t| {
            Value::String(
                Timestamp::from_second(t.as_second())
                    .unwrap_or(t)
                    .to_string(),
            )
        })
    };
    let status = json!({
        "active": if refs.is_empty() { Value::Null } else { Value::Array(refs) },
        "lastScheduleTime": stamp(last_schedule),
        "lastSuccessfulTime": stamp(last_success),
    });
    let old = json!({
        "active": old_status.active.as_ref().filter(|a| !a.is_empty()).map(|a| {
            a.iter().map(|r| json!({"apiVersion": r.api_version, "kind": r.kind, "name": r.name,
                "namespace": r.namespace, "uid": r.uid, "resourceVersion": r.resource_version}))
                .collect::<Vec<_>>()
        }),
        "lastScheduleTime": stamp(time(old_status.last_schedule_time.as_ref())),
        "lastSuccessfulTime": stamp(time(old_status.last_successful_time.as_ref())),
    });
    if status != old {
        let api: Api<CronJob> = Api::namespaced(ctx.client.clone(), &ns);
        // Against the version read: a sync from an older copy must not undo a newer status.
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({
                "metadata": {"resourceVersion": cronjob.metadata.resource_version},
                "status": status,
            })),
        )
        .await?;
    }
    Ok(later)
}

async fn delete_job(api: &Api<Job>, name: &str) -> Result<(), kube::Error> {
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

/// The Job for `scheduled` (kube's `getJobFromTemplate2`): the template's labels and
/// annotations, the scheduled time as an annotation in the schedule's zone, the CronJob as
/// controller owner.
fn job_from_template(
    cronjob: &CronJob,
    name: &str,
    scheduled: Timestamp,
    schedule: Option<&Schedule>,
) -> Job {
    let template = cronjob
        .spec
        .as_ref()
        .map(|s| s.job_template.clone())
        .unwrap_or_default();
    let mut metadata = template.metadata.unwrap_or_default();
    metadata.name = Some(name.to_owned());
    metadata.namespace = cronjob.metadata.namespace.clone();
    metadata.generate_name = None;
    let zone = schedule.map_or(TimeZone::UTC, |s| s.zone().clone());
    let stamp = scheduled
        .to_zoned(zone)
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
        .replace("+00:00", "Z");
    metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(SCHEDULED_TIMESTAMP.to_owned(), stamp);
    metadata.owner_references = Some(vec![owner_reference(cronjob)]);
    Job {
        metadata,
        spec: template.spec,
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_count_minutes_since_the_epoch() {
        let at: Timestamp = "2026-12-07T10:03:00Z".parse().expect("a time");
        assert_eq!(
            job_name("hello", at),
            format!("hello-{}", at.as_second() / 60)
        );
    }
}
