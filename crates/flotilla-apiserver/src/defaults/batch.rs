//! Defaults of batch/v1 Jobs and CronJobs.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/batch/v1/defaults.go at
//! v1.32: `SetDefaults_Job` (with `JobPodReplacementPolicy`, beta and on by default since
//! v1.29, and the `manualSelector: false` default of current sources),
//! `SetDefaults_CronJob`, `SetDefaults_PodFailurePolicyOnPodConditionsPattern`; and from
//! zz_generated.defaults.go which of them reach a CronJob's `jobTemplate` (its pod template
//! and failure-policy patterns, but not the Job-level defaults).
//!
//! A Job's pod template gets `restartPolicy: Always` like any pod template; upstream
//! validation then rejects it (Jobs need OnFailure or Never). Selector and label generation
//! (`batch.kubernetes.io/controller-uid`) is the Job strategy's work, not defaulting.

use serde_json::Value;

use super::fields::{Obj, child, existing, items, or_insert, or_insert_str};
use super::pod;

pub fn job(job: &mut Obj) {
    let template_labels = job
        .get("spec")
        .and_then(|s| s.get("template"))
        .and_then(|t| t.get("metadata"))
        .and_then(|m| m.get("labels"))
        .filter(|l| l.as_object().is_some_and(|l| !l.is_empty()))
        .cloned();
    if let Some(labels) = template_labels {
        let own_empty = job
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .is_none_or(|l| l.is_null() || l.as_object().is_some_and(|l| l.is_empty()));
        if own_empty && let Some(meta) = child(job, "metadata") {
            meta.insert("labels".into(), labels);
        }
    }
    let Some(spec) = child(job, "spec") else {
        return;
    };
    let unset = |spec: &Obj, key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), 1.into());
    }
    or_insert(spec, "parallelism", 1);
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    or_insert(spec, "backoffLimit", backoff);
    or_insert(spec, "completionMode", "NonIndexed");
    or_insert(spec, "suspend", false);
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    or_insert(spec, "podReplacementPolicy", replacement);
    or_insert(spec, "manualSelector", false);
    job_spec_parts(spec);
}

pub fn cron_job(cron_job: &mut Obj) {
    let Some(spec) = child(cron_job, "spec") else {
        return;
    };
    or_insert_str(spec, "concurrencyPolicy", "Allow");
    or_insert(spec, "suspend", false);
    or_insert(spec, "successfulJobsHistoryLimit", 3);
    or_insert(spec, "failedJobsHistoryLimit", 1);
    if let Some(job_spec) = child(spec, "jobTemplate").and_then(|t| child(t, "spec")) {
        job_spec_parts(job_spec);
    }
}

/// What a Job and a CronJob's job template share: failure-policy patterns and the pod template.
fn job_spec_parts(spec: &mut Obj) {
    if let Some(policy) = existing(spec, "podFailurePolicy") {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                or_insert_str(pattern, "status", "True");
            }
        }
    }
    if let Some(template) = child(spec, "template") {
        pod::template(template);
    }
}
