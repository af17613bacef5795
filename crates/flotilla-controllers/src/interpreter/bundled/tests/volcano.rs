//! The bundled rules of Volcano's Job.

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::*;

fn volcano_job() -> Value {
    json!({
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"minAvailable": 3, "tasks": [
            {"name": "ps", "replicas": 1, "template": pod_template("1", "a")},
            {"replicas": 4, "minAvailable": 2, "template": pod_template("4", "b")},
        ]},
    })
}

#[tokio::test]
async fn a_volcano_job_has_a_component_per_task_and_sums_what_members_report() {
    let customizations = Customizations::none();
    let components = customizations
        .interpret_components(&volcano_job())
        .now_or_never()
        .expect("no webhook to wait for")
        .expect("bundled")
        .expect("components");
    let summary: Vec<(&str, i32)> = components
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect();
    assert_eq!(summary, [("ps", 1), ("task-1", 2)]);

    for (phase, healthy) in [
        ("Running", true),
        ("Pending", true),
        ("Completed", true),
        ("Aborted", true),
        ("Failed", false),
        ("", false),
    ] {
        let mut observed = volcano_job();
        observed["status"] = json!({"state": {"phase": phase}});
        let answer = health(&observed).await;
        assert_eq!(answer, healthy, "{phase}");
    }

    let member = |phase: &str, running: i64, duration: &str| {
        json!({"state": {"phase": phase}, "running": running, "succeeded": 1, "version": running,
               "runningDuration": duration,
               "taskStatusCount": {"ps": {"phase": {"Running": running}}},
               "conditions": [{"status": "Running", "lastTransitionTime": format!("2026-12-07T10:0{running}:00Z")}]})
    };
    let status = aggregate(
        &volcano_job(),
        &[
            item("a", member("Running", 1, "1m30s")),
            item("b", member("Running", 2, "2m")),
        ],
    )
    .await;
    assert_eq!(status["running"], 3);
    assert_eq!(status["succeeded"], 2);
    assert_eq!(status["version"], 2, "the highest");
    assert_eq!(status["runningDuration"], "2m", "the longest");
    assert_eq!(
        status["taskStatusCount"],
        json!({"ps": {"phase": {"Running": 3}}})
    );
    assert_eq!(
        status["conditions"],
        json!([{"status": "Running", "lastTransitionTime": "2026-12-07T10:02:00Z"}])
    );
    assert_eq!(status.get("state"), None, "no member finished");

    let status = aggregate(
        &volcano_job(),
        &[
            item("a", member("Completed", 1, "1m")),
            item("b", member("Failed", 1, "1m")),
        ],
    )
    .await;
    assert_eq!(status["state"]["phase"], "Failed");
    assert_eq!(status["state"]["message"], "Job failed in clusters: b");
    let status = aggregate(
        &volcano_job(),
        &[
            item("a", member("Completed", 1, "1m")),
            item("b", member("Completed", 1, "1m")),
        ],
    )
    .await;
    assert_eq!(status["state"]["reason"], "Completed");
    assert_eq!(status["state"]["message"], "Job completed successfully");

    let mut observed = volcano_job();
    observed["status"] = member("Running", 1, "10s");
    observed["status"]["extra"] = json!(true);
    let reflected = reflect(&observed).await;
    assert_eq!(reflected["running"], 1);
    assert_eq!(reflected["state"], json!({"phase": "Running"}));
    assert_eq!(reflected.get("extra"), None);
}
