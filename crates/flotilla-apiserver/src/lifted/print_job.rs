//! The cells `kubectl get jobs` shows for a Job: STATUS (`Complete`, `Failed`, `Terminating`,
//! `Suspended`, `FailureTarget`, `SuccessCriteriaMet`, else `Running`), COMPLETIONS
//! (`succeeded/completions`, or `succeeded/1` and `of <parallelism>` without completions) and
//! DURATION (start to completion, or to now while it runs).
//!
//! Ported from kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (`printJob`,
//! `hasJobCondition`; Kubernetes 1.33), over the Job's JSON.

use jiff::Timestamp;
use serde_json::Value;

use super::duration::human_duration;

/// The Job's cells after its name (age and the wide columns are the caller's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCells {
    pub status: &'static str,
    pub completions: String,
    pub duration: String,
}

/// Whether the first condition of type `kind` is True (kube looks at the first one only).
fn has_condition(job: &Value, kind: &str) -> bool {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

fn time(value: &Value) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

/// The cells of `job` at `now`.
pub fn cells(job: &Value, now: Timestamp) -> JobCells {
    let succeeded = job["status"]["succeeded"].as_i64().unwrap_or(0);
    let completions = match job["spec"]["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match job["spec"]["parallelism"].as_i64().unwrap_or(0) {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let start = time(&job["status"]["startTime"]);
    let duration = match (start, time(&job["status"]["completionTime"])) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.duration_since(start)),
        (Some(start), Some(end)) => human_duration(end.duration_since(start)),
    };
    let status = if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if !job["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(job, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    JobCells {
        status,
        completions,
        duration,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    #[test]
    fn status_completions_and_duration_as_kubectl_prints_them() {
        let now = at("2026-12-07T10:00:00Z");
        let running = json!({"spec": {"parallelism": 3},
            "status": {"startTime": "2026-12-07T09:58:30Z", "succeeded": 1}});
        assert_eq!(
            cells(&running, now),
            JobCells {
                status: "Running",
                completions: "1/1 of 3".into(),
                duration: "90s".into()
            }
        );
        let failed = json!({"spec": {"completions": 4},
            "status": {"startTime": "2026-12-07T09:00:00Z", "failed": 2, "conditions": [
                {"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}});
        assert_eq!(
            cells(&failed, now),
            JobCells {
                status: "Failed",
                completions: "0/4".into(),
                duration: "60m".into()
            }
        );
        let complete = json!({"spec": {"completions": 2}, "status": {"succeeded": 2,
            "startTime": "2026-12-07T09:00:00Z", "completionTime": "2026-12-07T09:00:07Z",
            "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"}]}});
        assert_eq!(cells(&complete, now).status, "Complete");
        assert_eq!(cells(&complete, now).duration, "7s");
        let failing = json!({"spec": {}, "status": {"startTime": "2026-12-07T09:59:59Z",
            "conditions": [{"type": "FailureTarget", "status": "True"}]}});
        assert_eq!(cells(&failing, now).status, "FailureTarget");
        assert_eq!(cells(&failing, now).completions, "0/1");
        let suspended = json!({"spec": {"suspend": true},
            "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells(&suspended, now).status, "Suspended");
        assert_eq!(cells(&suspended, now).duration, "");
        let deleting = json!({"metadata": {"deletionTimestamp": "2026-12-07T09:59:00Z"},
            "spec": {}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells(&deleting, now).status, "Terminating");
        // Only the first condition of a type counts.
        let flapped = json!({"spec": {}, "status": {"conditions": [
            {"type": "Complete", "status": "False"}, {"type": "Complete", "status": "True"}]}});
        assert_eq!(cells(&flapped, now).status, "Running");
    }
}
