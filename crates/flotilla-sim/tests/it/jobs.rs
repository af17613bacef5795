//! Batch workloads: the Job controller (parallelism and completions, failures, back-off,
//! limits, TTL) and the CronJob controller (schedules, history, suspension), with the kubelet
//! running Job pods' scripts.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually, pods};

#[tokio::test(start_paused = true)]
async fn job_runs_parallelism_pods_until_completions_succeed() {
    let world = World::cpu(2, "jobDuration: 5s").await;
    let client = world.client();
    create::<Job>(&client, "default", json!({
        "metadata": {"name": "batch"},
        "spec": {"completions": 3, "parallelism": 2, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "work", "image": "busybox"}]}}},
    }))
    .await;
    let api: Api<Job> = Api::namespaced(client.clone(), "default");
    let job = eventually(PATIENCE, "the job completes", || async {
        let running = pods(&client, "default")
            .await
            .into_iter()
            .filter(|p| {
                !matches!(
                    p.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                )
            })
            .count();
        assert!(running <= 2, "{running} pods at once exceed parallelism 2");
        let job = api.get("batch").await.ok()?;
        let complete = job
            .status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .any(|c| c.type_ == "Complete");
        complete.then_some(job)
    })
    .await;
    let status = job.status.expect("status");
    assert_eq!(status.succeeded, Some(3));
    assert_eq!(status.active, None);
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    let conditions: Vec<(String, String, Option<String>, Option<String>)> = status
        .conditions
        .expect("conditions")
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason, c.message))
        .collect();
    let reached = (
        Some("CompletionsReached".to_owned()),
        Some("Reached expected number of succeeded pods".to_owned()),
    );
    assert_eq!(
        conditions,
        vec![
            (
                "SuccessCriteriaMet".into(),
                "True".into(),
                reached.0.clone(),
                reached.1.clone()
            ),
            ("Complete".into(), "True".into(), reached.0, reached.1),
        ]
    );
    let listed: Vec<Pod> = pods(&client, "default").await;
    assert_eq!(listed.len(), 3);
    for pod in &listed {
        assert_eq!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded")
        );
        assert_eq!(
            pod.metadata.labels.as_ref().expect("labels")["job-name"],
            "batch"
        );
        let terminated = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|c| c[0].state.clone())
            .and_then(|s| s.terminated)
            .expect("terminated");
        assert_eq!(
            (terminated.exit_code, terminated.reason.as_deref()),
            (0, Some("Completed"))
        );
        // What the Running status reported for the container, carried into the terminated one.
        let container = &pod
            .status
            .as_ref()
            .expect("status")
            .container_statuses
            .as_ref()
            .expect("statuses")[0];
        assert!(
            container.image_id.starts_with("busybox@sha256:"),
            "{}",
            container.image_id
        );
        let id = container.container_id.as_deref().expect("containerID");
        assert!(
            id.starts_with("containerd://") && id.len() == "containerd://".len() + 64,
            "{id}"
        );
        assert_eq!(terminated.container_id.as_deref(), Some(id));
    }
}

/// Job pods whose programs the sim models and which end within the run time follow them (the
/// others run for the run time, here an hour), and the Job controller handles their failures
/// as kube's does: a failed pod is replaced after the 10 s back-off, `backoffLimit`
/// counts failed pods (or, with `OnFailure`, restarts), `activeDeadlineSeconds` bounds the run;
/// a failing Job loses its running pods, gets FailureTarget and Failed with kube's reason and
/// message, and a Warning event; `ttlSecondsAfterFinished` deletes a finished Job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_follow_their_programs_and_fail_past_their_limits() {
    let world = World::cpu(2, "startLatency: '0'\njobDuration: 1h").await;
    let client = world.client();
    let job = |name: &str, policy: &str, script: &str, extra: serde_json::Value| {
        let mut spec = json!({"template": {"spec": {"restartPolicy": policy,
            "containers": [{"name": "work", "image": "busybox", "command": ["sh", "-c", script]}]}}});
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        json!({"metadata": {"name": name}, "spec": spec})
    };
    for object in [
        job(
            "retried",
            "Never",
            "echo try; exit 1",
            json!({"backoffLimit": 1}),
        ),
        job(
            "restarted",
            "OnFailure",
            "exit 2",
            json!({"backoffLimit": 1}),
        ),
        job(
            "slow",
            "Never",
            "sleep 3600",
            json!({"activeDeadlineSeconds": 2}),
        ),
        job("short", "Never", "sleep 1; echo done", json!({})),
        job(
            "tidy",
            "Never",
            "echo done",
            json!({"ttlSecondsAfterFinished": 1}),
        ),
    ] {
        create::<Job>(&client, "default", object).await;
    }
    let api: Api<Job> = Api::namespaced(client.clone(), "default");
    let finished = |name: &'static str, kind: &'static str| {
        let api = api.clone();
        async move {
            eventually(PATIENCE, &format!("{name} {kind}"), || async {
                let job = api.get(name).await.ok()?;
                let conditions = job.status.as_ref()?.conditions.clone()?;
                conditions
                    .iter()
                    .any(|c| c.type_ == kind && c.status == "True")
                    .then_some(job)
            })
            .await
        }
    };
    let reasons = |job: &Job| -> Vec<(String, Option<String>, Option<String>)> {
        let status = job.status.as_ref().expect("status");
        status
            .conditions
            .iter()
            .flatten()
            .map(|c| (c.type_.clone(), c.reason.clone(), c.message.clone()))
            .collect()
    };
    let failure = |reason: &str, message: &str| {
        let (reason, message) = (Some(reason.to_owned()), Some(message.to_owned()));
        vec![
            ("FailureTarget".to_owned(), reason.clone(), message.clone()),
            ("Failed".to_owned(), reason, message),
        ]
    };
    let job_pods = |name: &'static str| {
        let client = client.clone();
        async move {
            let mut listed: Vec<Pod> = pods(&client, "default")
                .await
                .into_iter()
                .filter(|p| {
                    p.metadata.labels.as_ref().and_then(|l| l.get("job-name"))
                        == Some(&name.to_owned())
                })
                .collect();
            listed.sort_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0));
            listed
        }
    };

    // The program ran 1 s and ended: `short` completed by itself, long before the run time.
    let short = finished("short", "Complete").await;
    assert_eq!(short.status.as_ref().and_then(|s| s.succeeded), Some(1));

    // OnFailure: the container restarted once (at once), which reaches the limit of 1.
    let restarted = finished("restarted", "Failed").await;
    assert_eq!(
        reasons(&restarted),
        failure(
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit"
        )
    );
    let status = restarted.status.as_ref().expect("status");
    assert_eq!((status.failed, status.active), (Some(1), None));

    // Past its deadline, the running pod is deleted and counted failed.
    let slow = finished("slow", "Failed").await;
    assert_eq!(
        reasons(&slow),
        failure(
            "DeadlineExceeded",
            "Job was active longer than specified deadline"
        )
    );
    assert_eq!(slow.status.as_ref().and_then(|s| s.failed), Some(1));

    // Never: the first pod failed, its replacement came after the back-off, failed too, and
    // that is one more than backoffLimit 1.
    let retried = finished("retried", "Failed").await;
    assert_eq!(
        reasons(&retried),
        failure(
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit"
        )
    );
    assert_eq!(retried.status.as_ref().and_then(|s| s.failed), Some(2));
    assert!(
        retried
            .status
            .as_ref()
            .and_then(|s| s.completion_time.as_ref())
            .is_none()
    );
    let attempts = job_pods("retried").await;
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for pod in &attempts {
        assert_eq!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Failed")
        );
    }
    let first_finished = attempts[0]
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c[0].state.clone()?.terminated?.finished_at)
        .expect("the first attempt's end")
        .0;
    let second_created = attempts[1]
        .metadata
        .creation_timestamp
        .clone()
        .expect("created")
        .0;
    let gap = second_created.duration_since(first_finished);
    assert!(
        gap >= jiff::SignedDuration::from_secs(9),
        "the replacement waited the 10 s back-off (second-granular stamps): {gap:?}"
    );
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), "default");
    let warned = eventually(PATIENCE, "the Job's warning", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items.into_iter().find(|e| {
            e.involved_object.kind.as_deref() == Some("Job")
                && e.involved_object.name.as_deref() == Some("retried")
                && e.type_.as_deref() == Some("Warning")
        })
    })
    .await;
    assert_eq!(
        (warned.reason.as_deref(), warned.message.as_deref()),
        (
            Some("BackoffLimitExceeded"),
            Some("Job has reached the specified backoff limit")
        )
    );
    assert!(job_pods("restarted").await.is_empty() && job_pods("slow").await.is_empty());

    // `ttlSecondsAfterFinished: 1`: a second after it completed, the Job and its pod are gone.
    eventually(PATIENCE, "tidy deleted after its TTL", || async {
        let gone = api.get_opt("tidy").await.ok()?.is_none();
        (gone && job_pods("tidy").await.is_empty()).then_some(())
    })
    .await;
    assert!(
        api.get_opt("short").await.expect("a get").is_some(),
        "no TTL, kept"
    );
}

/// A CronJob runs the most recent time it missed (a yearly schedule made to have missed New
/// Year by moving its `lastScheduleTime` back), names the Job after that minute and annotates
/// it with it, reports the Job active then done, deletes it once `successfulJobsHistoryLimit` drops to
/// 0, and records kube's events; suspended, it creates nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cronjobs_create_jobs_for_their_schedule_and_keep_their_history() {
    use k8s_openapi::api::batch::v1::CronJob;
    let world = World::cpu(1, "startLatency: '0'").await;
    let client = world.client();
    create::<CronJob>(&client, "default", json!({
        "metadata": {"name": "tick"},
        "spec": {"schedule": "0 0 1 1 *", "successfulJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {"labels": {"team": "ml"}}, "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "tick", "image": "busybox", "command": ["sh", "-c", "echo tick"]}]}}}}},
    }))
    .await;
    let api: Api<CronJob> = Api::namespaced(client.clone(), "default");
    let jobs: Api<Job> = Api::namespaced(client.clone(), "default");
    let since = |at: &str| json!({"status": {"lastScheduleTime": at}});
    api.patch_status(
        "tick",
        &PatchParams::default(),
        &Patch::Merge(since("2025-12-31T00:00:00Z")),
    )
    .await
    .expect("status patched");
    let job = eventually(PATIENCE, "the missed minute's Job", || async {
        jobs.list(&ListParams::default())
            .await
            .ok()?
            .items
            .into_iter()
            .next()
    })
    .await;
    let name = job.metadata.name.clone().expect("a name");
    let minute: i64 = name
        .strip_prefix("tick-")
        .and_then(|m| m.parse().ok())
        .expect("tick-<minutes>");
    // The yearly time missed since (the only one), not any later minute.
    let new_year: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().expect("a time");
    assert_eq!(minute * 60, new_year.as_second(), "{name}");
    let labels = job.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("ml"));
    let scheduled = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("batch.kubernetes.io/cronjob-scheduled-timestamp"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        scheduled,
        jiff::Timestamp::from_second(minute * 60)
            .expect("a time")
            .to_string()
    );
    let owner = job
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default()
        .into_iter()
        .next()
        .expect("an owner");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("CronJob", "tick", Some(true))
    );

    // It ran `echo tick` and completed; kept while the history holds one, deleted once the
    // limit is 0.
    let done = eventually(PATIENCE, "the run recorded", || async {
        let cronjob = api.get("tick").await.ok()?;
        let status = cronjob.status?;
        (status.active.is_none() && status.last_successful_time.is_some()).then_some(status)
    })
    .await;
    assert!(jobs.get_opt(&name).await.expect("a get").is_some());
    // kubectl's tables (kube's printCronJob and printJob).
    let config = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&config, &world.sim.clusters, None).expect("written");
    let kubectl = |args: &[&str]| {
        let mut all = vec!["--context", "c1", "-n", "default"];
        all.extend(args);
        crate::kubectl::kubectl(world.dir.path(), &config, &all)
    };
    let row = kubectl(&["get", "cronjob", "tick", "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells.get(..9),
        Some(&["tick", "0", "0", "1", "1", "*", "<none>", "False", "0"][..]),
        "{row}"
    );
    let row = kubectl(&["get", "job", &name, "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells.get(..3),
        Some(&[name.as_str(), "Complete", "1/1"][..]),
        "{row}"
    );
    api.patch(
        "tick",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"successfulJobsHistoryLimit": 0}})),
    )
    .await
    .expect("limit lowered");
    eventually(PATIENCE, "the finished Job deleted", || async {
        jobs.get_opt(&name).await.ok()?.is_none().then_some(())
    })
    .await;
    assert_eq!(
        done.last_schedule_time.map(|t| t.0.as_second()),
        Some(minute * 60)
    );
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), "default");
    let reasons = eventually(PATIENCE, "the CronJob's events", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        let reasons: Vec<(String, String)> = list
            .items
            .into_iter()
            .filter(|e| e.involved_object.kind.as_deref() == Some("CronJob"))
            .map(|e| (e.reason.unwrap_or_default(), e.message.unwrap_or_default()))
            .collect();
        (reasons.len() >= 3).then_some(reasons)
    })
    .await;
    for want in [
        ("SuccessfulCreate".to_owned(), format!("Created job {name}")),
        (
            "SawCompletedJob".to_owned(),
            format!("Saw completed job: {name}, status: Complete"),
        ),
        ("SuccessfulDelete".to_owned(), format!("Deleted job {name}")),
    ] {
        assert!(reasons.contains(&want), "{want:?} in {reasons:?}");
    }

    // Suspended, a missed time runs nothing.
    api.patch(
        "tick",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"suspend": true}})),
    )
    .await
    .expect("suspended");
    eventually(PATIENCE, "the suspension seen", || async {
        let cronjob = api.get("tick").await.ok()?;
        cronjob.spec?.suspend?.then_some(())
    })
    .await;
    api.patch_status(
        "tick",
        &PatchParams::default(),
        &Patch::Merge(since("2024-12-31T00:00:00Z")),
    )
    .await
    .expect("status patched");
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert!(
        jobs.list(&ListParams::default())
            .await
            .expect("jobs")
            .items
            .is_empty(),
        "a suspended CronJob created a Job"
    );
}

/// An Indexed Job's pods carry their index (annotation, label) and read it as
/// `JOB_COMPLETION_INDEX` through the downward API, as kube's Job controller and kubelet give
/// it: each pod's script exits with its index, so index 0 succeeds and 1 and 2 fail with 1 and 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexed_job_pods_read_their_index_from_the_downward_api() {
    let world = World::cpu(2, "startLatency: '0'\njobDuration: 1h").await;
    let client = world.client();
    create::<Job>(
        &client,
        "default",
        json!({
            "metadata": {"name": "shards"},
            "spec": {"completions": 3, "parallelism": 3, "completionMode": "Indexed",
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "work",
                    "image": "busybox", "command": ["sh", "-c", "exit $JOB_COMPLETION_INDEX"]}]}}},
        }),
    )
    .await;
    let outcomes = eventually(PATIENCE, "each index's first pod ended", || async {
        let mut seen = std::collections::BTreeMap::new();
        for pod in pods(&client, "default").await {
            let index = pod
                .metadata
                .annotations
                .as_ref()?
                .get("batch.kubernetes.io/job-completion-index")?
                .clone();
            let env = &pod.spec.as_ref()?.containers[0].env;
            let from = env
                .iter()
                .flatten()
                .find(|v| v.name == "JOB_COMPLETION_INDEX")?
                .value_from
                .as_ref()?
                .field_ref
                .as_ref()?
                .field_path
                .clone();
            assert_eq!(
                from,
                "metadata.annotations['batch.kubernetes.io/job-completion-index']"
            );
            let status = pod.status.as_ref()?;
            let code = status
                .container_statuses
                .as_ref()?
                .first()?
                .state
                .as_ref()?
                .terminated
                .as_ref()
                .map(|t| t.exit_code);
            if let Some(code) = code {
                seen.entry(index)
                    .or_insert((code, status.phase.clone().unwrap_or_default()));
            }
        }
        (seen.len() == 3).then_some(seen)
    })
    .await;
    let expected: std::collections::BTreeMap<String, (i32, String)> = [
        ("0".to_owned(), (0, "Succeeded".to_owned())),
        ("1".to_owned(), (1, "Failed".to_owned())),
        ("2".to_owned(), (2, "Failed".to_owned())),
    ]
    .into();
    assert_eq!(outcomes, expected);
}
