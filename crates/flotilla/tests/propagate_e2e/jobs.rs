//! A batch Job that fails in its members: the reason travels back to the control plane.

use crate::support::{ControlPlane, await_value, eventually};

const FAILING: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: e2e-job}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: e2e-job}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: busybox
        command: [sh, -c, 'echo loading weights; echo CUDA error: out of memory; exit 1']
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: train, namespace: e2e-job}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job, name: train}]
  placement:
    clusterAffinity: {clusterNames: [cn-shanghai, us-west-2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
";

/// A Job whose program exits 1, Duplicated to two members with `backoffLimit: 0`: each member's
/// Job controller fails it (`BackoffLimitExceeded`, the pod `Error` with its log kept), and the
/// template's aggregated status says so (`Failed`, Karmada's `JobFailed` naming the members
/// failed when it was aggregated, their failures summed); deleting it cleans the members.
pub async fn a_failing_job_says_why_on_the_template(plane: &ControlPlane) {
    let ns = "e2e-job";
    plane.apply(None, FAILING).await;
    for member in ["cn-shanghai", "us-west-2"] {
        await_value(
            &format!("job: failed in {member}"),
            "BackoffLimitExceeded Job has reached the specified backoff limit 1",
            || {
                plane.get(
                    Some(member),
                    ns,
                    "job/train",
                    "{.status.conditions[?(@.type==\"Failed\")].reason} {.status.conditions[?(@.type==\"Failed\")].message} {.status.failed}",
                )
            },
        )
        .await;
    }
    // Karmada stops aggregating a finished Job: the members that had failed by then are named,
    // with their failures summed.
    let status = eventually("job: the template's status", || async {
        let got = plane
            .get(
                None,
                ns,
                "job/train",
                "{.status.conditions[?(@.type==\"Failed\")].reason}|{.status.conditions[?(@.type==\"Failed\")].message}|{.status.failed}",
            )
            .await;
        if got.starts_with("JobFailed|") {
            Ok(got)
        } else {
            Err(got)
        }
    })
    .await;
    let named = status
        .split('|')
        .nth(1)
        .and_then(|m| m.strip_prefix("Job executed failed in member clusters "))
        .unwrap_or_else(|| panic!("Karmada's message: {status}"));
    let clusters: Vec<&str> = named.split(',').collect();
    assert!(
        clusters
            .iter()
            .all(|c| ["cn-shanghai", "us-west-2"].contains(c)),
        "{status}"
    );
    assert_eq!(
        status.rsplit('|').next(),
        Some(clusters.len().to_string().as_str()),
        "one failure per member named: {status}"
    );
    // kubectl's Job table (kube's printJob), in a member and on the control plane.
    for context in [Some("cn-shanghai"), None] {
        let mut args = Vec::new();
        if let Some(context) = context {
            args.extend(["--context", context]);
        }
        args.extend(["-n", ns, "get", "job", "train", "--no-headers"]);
        let row = plane.kubectl(&args).await;
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells.get(..3),
            Some(&["train", "Failed", "0/1"][..]),
            "{row}"
        );
    }
    let pod = plane
        .get(
            Some("cn-shanghai"),
            ns,
            "pods",
            "{.items[0].metadata.name} {.items[0].status.phase}",
        )
        .await;
    let (pod, phase) = pod.split_once(' ').expect("one pod");
    assert_eq!(phase, "Failed");
    let log = plane
        .kubectl(&["--context", "cn-shanghai", "-n", ns, "logs", pod])
        .await;
    assert_eq!(log, "loading weights\nCUDA error: out of memory\n");
    plane.kubectl(&["-n", ns, "delete", "job/train"]).await;
    await_value("job: deleted in the members", "", || async {
        let mut left = String::new();
        for member in ["cn-shanghai", "us-west-2"] {
            left.push_str(
                &plane
                    .get(Some(member), ns, "jobs", "{.items[*].metadata.name}")
                    .await,
            );
        }
        left
    })
    .await;
}

const NIGHTLY: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: e2e-cron}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: e2e-cron}
spec:
  schedule: '0 3 * * *'
  timeZone: Asia/Shanghai
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: sync, image: busybox, command: [sh, -c, 'echo syncing checkpoints']}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nightly, namespace: e2e-cron}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: CronJob, name: nightly}]
  placement:
    clusterAffinity: {clusterNames: [cn-shanghai, eu-central-1]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
";

/// A CronJob Duplicated to two members runs on each member's own schedule: made to have missed
/// last night's 03:00 (Asia/Shanghai) by moving each member's `lastScheduleTime` back, each
/// member creates that time's Job, which completes; Karmada's aggregation puts the members'
/// latest schedule and success times on the template; deleting it removes the members' CronJobs
/// and their Jobs.
pub async fn a_cron_job_runs_in_each_member_and_reports_back(plane: &ControlPlane) {
    let ns = "e2e-cron";
    let members = ["cn-shanghai", "eu-central-1"];
    plane.apply(None, NIGHTLY).await;
    for member in members {
        await_value(&format!("cron: in {member}"), "0 3 * * *", || {
            plane.get(Some(member), ns, "cronjob/nightly", "{.spec.schedule}")
        })
        .await;
        plane
            .kubectl(&[
                "--context",
                member,
                "-n",
                ns,
                "patch",
                "cronjob/nightly",
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"lastScheduleTime":"2025-12-31T00:00:00Z"}}"#,
            ])
            .await;
    }
    let mut scheduled = Vec::new();
    for member in members {
        let done = eventually(
            &format!("cron: last night's Job done in {member}"),
            || async {
                let got = plane
                    .get(
                        Some(member),
                        ns,
                        "cronjob/nightly",
                        "{.status.lastScheduleTime} {.status.lastSuccessfulTime}",
                    )
                    .await;
                match got.split_once(' ') {
                    Some((last, success))
                        if last != "2025-12-31T00:00:00Z" && !success.is_empty() =>
                    {
                        Ok(last.to_owned())
                    }
                    _ => Err(got),
                }
            },
        )
        .await;
        // 03:00 in Shanghai is 19:00 UTC the day before.
        assert!(done.ends_with("T19:00:00Z"), "{member}: {done}");
        let jobs = plane
            .get(
                Some(member),
                ns,
                "jobs",
                "{range .items[*]}{.metadata.annotations.batch\\.kubernetes\\.io/cronjob-scheduled-timestamp} {.status.succeeded}{\"\\n\"}{end}",
            )
            .await;
        assert_eq!(
            jobs.trim(),
            format!("{}T03:00:00+08:00 1", shanghai_day(&done)),
            "{member}"
        );
        scheduled.push(done);
    }
    let latest = scheduled.iter().max().cloned().unwrap_or_default();
    await_value("cron: the template's last schedule", &latest, || {
        plane.get(None, ns, "cronjob/nightly", "{.status.lastScheduleTime}")
    })
    .await;
    plane
        .kubectl(&["-n", ns, "delete", "cronjob/nightly"])
        .await;
    await_value(
        "cron: gone from the members with their Jobs",
        "",
        || async {
            let mut left = String::new();
            for member in members {
                left.push_str(
                    &plane
                        .get(
                            Some(member),
                            ns,
                            "cronjobs,jobs",
                            "{.items[*].metadata.name}",
                        )
                        .await,
                );
            }
            left.trim().to_owned()
        },
    )
    .await;
}

/// The Shanghai date of a UTC instant at 19:00 (the next day).
fn shanghai_day(utc: &str) -> String {
    let at: jiff::Timestamp = utc.parse().expect("a time");
    at.to_zoned(jiff::tz::TimeZone::get("Asia/Shanghai").expect("the zone"))
        .date()
        .to_string()
}

/// `examples/batch/`, applied as a user would: the fine-tuning Job's parallelism and
/// completions divided 2:1 (4 and 2), every shard's program run to its end in the members, the
/// template `Complete` with 6 succeeded; the nightly CronJob in all three members.
pub async fn the_batch_examples_run_across_members(plane: &ControlPlane) {
    let ns = "batch";
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/batch");
    plane.kubectl(&["apply", "-f", dir]).await;
    for (member, share) in [("us-west-2", "4/4"), ("eu-central-1", "2/2")] {
        await_value(&format!("batch: {member}'s share"), share, || {
            plane.get(
                Some(member),
                ns,
                "job/lora-finetune",
                "{.spec.parallelism}/{.spec.completions}",
            )
        })
        .await;
    }
    await_value("batch: the template completed", "True 6", || {
        plane.get(
            None,
            ns,
            "job/lora-finetune",
            "{.status.conditions[?(@.type==\"Complete\")].status} {.status.succeeded}",
        )
    })
    .await;
    let row = plane
        .kubectl(&["-n", ns, "get", "job", "lora-finetune", "--no-headers"])
        .await;
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells.get(..3),
        Some(&["lora-finetune", "Complete", "6/6"][..]),
        "{row}"
    );
    for member in ["cn-shanghai", "us-west-2", "eu-central-1"] {
        await_value(
            &format!("batch: nightly-eval in {member}"),
            "0 2 * * * Asia/Shanghai",
            || {
                plane.get(
                    Some(member),
                    ns,
                    "cronjob/nightly-eval",
                    "{.spec.schedule} {.spec.timeZone}",
                )
            },
        )
        .await;
    }
    for file in ["finetune-job.yaml", "nightly-eval-cronjob.yaml"] {
        plane
            .kubectl(&[
                "delete",
                "--ignore-not-found",
                "-f",
                &format!("{dir}/{file}"),
            ])
            .await;
    }
    await_value("batch: the bindings gone", "", || {
        plane.get(None, ns, "resourcebindings", "{.items[*].metadata.name}")
    })
    .await;
}
