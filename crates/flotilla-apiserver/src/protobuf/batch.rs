//! Field tables for `batch/v1`: Job, CronJob.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::batch::v1 as pb;

message!(pb::CronJob {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::CronJobSpec {
    req schedule "schedule",
    ptr time_zone "timeZone",
    ptr starting_deadline_seconds "startingDeadlineSeconds",
    opt concurrency_policy "concurrencyPolicy",
    ptr suspend "suspend",
    req job_template "jobTemplate",
    ptr successful_jobs_history_limit "successfulJobsHistoryLimit",
    ptr failed_jobs_history_limit "failedJobsHistoryLimit",
});

message!(pb::CronJobStatus {
    opt active "active",
    ptr last_schedule_time "lastScheduleTime",
    ptr last_successful_time "lastSuccessfulTime",
});

message!(pb::Job {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::JobCondition {
    req r#type "type",
    req status "status",
    opt last_probe_time "lastProbeTime",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::JobSpec {
    ptr parallelism "parallelism",
    ptr completions "completions",
    ptr active_deadline_seconds "activeDeadlineSeconds",
    ptr pod_failure_policy "podFailurePolicy",
    ptr success_policy "successPolicy",
    ptr backoff_limit "backoffLimit",
    ptr backoff_limit_per_index "backoffLimitPerIndex",
    ptr max_failed_indexes "maxFailedIndexes",
    ptr selector "selector",
    ptr manual_selector "manualSelector",
    req template "template",
    ptr ttl_seconds_after_finished "ttlSecondsAfterFinished",
    ptr completion_mode "completionMode",
    ptr suspend "suspend",
    ptr pod_replacement_policy "podReplacementPolicy",
    ptr managed_by "managedBy",
});

message!(pb::JobStatus {
    opt conditions "conditions",
    ptr start_time "startTime",
    ptr completion_time "completionTime",
    opt active "active",
    opt succeeded "succeeded",
    opt failed "failed",
    ptr terminating "terminating",
    opt completed_indexes "completedIndexes",
    ptr failed_indexes "failedIndexes",
    ptr uncounted_terminated_pods "uncountedTerminatedPods",
    ptr ready "ready",
});

message!(pb::JobTemplateSpec {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::PodFailurePolicy {
    req rules "rules",
});

message!(pb::PodFailurePolicyOnExitCodesRequirement {
    ptr container_name "containerName",
    req operator "operator",
    req values "values",
});

message!(pb::PodFailurePolicyOnPodConditionsPattern {
    req r#type "type",
    req status "status",
});

message!(pb::PodFailurePolicyRule {
    req action "action",
    ptr on_exit_codes "onExitCodes",
    opt on_pod_conditions "onPodConditions",
});

message!(pb::SuccessPolicy {
    req rules "rules",
});

message!(pb::SuccessPolicyRule {
    ptr succeeded_indexes "succeededIndexes",
    ptr succeeded_count "succeededCount",
});

message!(pb::UncountedTerminatedPods {
    opt succeeded "succeeded",
    opt failed "failed",
});
