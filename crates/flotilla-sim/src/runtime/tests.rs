//! The container model: what a container's log holds, computed from its spec and start.

use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::json;

use super::{KEEP_LINES, argv_of, context_of, run};

fn pod(container: serde_json::Value) -> (Pod, Container) {
    let pod: Pod = serde_json::from_value(
        json!({"metadata": {"name": "web-0", "namespace": "default"},
        "spec": {"containers": [container]}}),
    )
    .expect("a pod");
    let container = pod.spec.as_ref().expect("a spec").containers[0].clone();
    (pod, container)
}

fn at(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_700_000_000 + seconds).expect("in range")
}

fn texts(
    lines: &std::collections::VecDeque<flotilla_apiserver::kubelet::LogLine>,
) -> Vec<(i64, String)> {
    lines
        .iter()
        .map(|l| {
            (
                l.time.as_second() - 1_700_000_000,
                String::from_utf8_lossy(&l.bytes).into_owned(),
            )
        })
        .collect()
}

#[test]
fn a_containers_command_runs_from_its_start_until_now() {
    let (pod, c) = pod(json!({"name": "c", "image": "busybox",
        "command": ["sh", "-c"], "args": ["echo started; while true; do echo tick; sleep 10; done"]}));
    let log = run(&pod, &c, at(0), at(25), None);
    assert!(!log.ended);
    assert_eq!(
        texts(&log.lines),
        [
            (0, "started\n".into()),
            (0, "tick\n".into()),
            (10, "tick\n".into()),
            (20, "tick\n".into())
        ]
    );
    let later = run(&pod, &c, at(0), at(45), Some(at(25)));
    assert_eq!(
        texts(&later.lines),
        [(30, "tick\n".into()), (40, "tick\n".into())]
    );
    let finished =
        pod_run(json!({"name": "c", "image": "busybox", "command": ["echo", "-n", "bye"]}));
    assert!(finished.ended);
    assert_eq!(texts(&finished.lines), [(0, "bye".into())]);
}

fn pod_run(container: serde_json::Value) -> super::Run {
    let (pod, c) = pod(container);
    run(&pod, &c, at(0), at(60), None)
}

#[test]
fn env_references_expand_in_command_args_and_values() {
    let (pod, c) = pod(json!({"name": "c", "image": "busybox",
        "env": [{"name": "A", "value": "x"}, {"name": "B", "value": "$(A)-y"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "command": ["echo", "$(B)", "$(MISSING)"]}));
    let context = context_of(&pod, &c);
    assert_eq!(argv_of(&c, &context), ["echo", "x-y", "$(MISSING)"]);
    let names: Vec<&str> = context.env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["PATH", "HOSTNAME", "A", "B", "POD", "HOME"]);
}

/// `valueFrom.fieldRef` reads the pod as the kubelet's downward API does: a missing label or
/// annotation is empty; sources that are not modelled (a Secret's key) leave the variable out.
#[test]
fn field_refs_read_the_pod() {
    let (mut pod, c) = pod(json!({"name": "c", "image": "busybox", "env": [
        {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "INDEX", "valueFrom": {"fieldRef": {"fieldPath":
            "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
        {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "SHOWN", "value": "$(INDEX)/$(NODE)"}]}));
    pod.metadata.namespace = Some("batch".into());
    pod.metadata.annotations = Some(
        [(
            "batch.kubernetes.io/job-completion-index".to_owned(),
            "2".to_owned(),
        )]
        .into(),
    );
    pod.spec.as_mut().expect("spec").node_name = Some("gpu-node-7".into());
    let context = context_of(&pod, &c);
    let env: Vec<(&str, &str)> = context
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .filter(|(k, _)| !matches!(*k, "PATH" | "HOSTNAME" | "HOME"))
        .collect();
    let name = pod.metadata.name.clone().expect("a name");
    assert_eq!(
        env,
        [
            ("NAME", name.as_str()),
            ("NS", "batch"),
            ("INDEX", "2"),
            ("TIER", ""),
            ("NODE", "gpu-node-7"),
            ("SHOWN", "2/gpu-node-7"),
        ]
    );
}

#[test]
fn a_container_without_a_command_is_never_silent() {
    let nginx = pod_run(json!({"name": "web", "image": "docker.io/library/nginx:1.27"}));
    assert!(!nginx.ended, "nginx serves until stopped");
    assert!(
        texts(&nginx.lines)[0].1.contains("ready for start up"),
        "{:?}",
        texts(&nginx.lines)
    );
    let other = pod_run(json!({"name": "app", "image": "example.com/app:v1"}));
    assert_eq!(other.lines.len(), 1);
    let unknown =
        pod_run(json!({"name": "pi", "image": "perl", "command": ["perl", "-e", "print 1"]}));
    let line = &texts(&unknown.lines)[0].1;
    assert!(
        line.contains("\"pi\"")
            && line.contains("\"perl\"")
            && line.contains("[\"perl\", \"-e\", \"print 1\"]"),
        "{line}"
    );
}

#[test]
fn a_long_log_keeps_its_last_lines() {
    let log = pod_run(json!({"name": "c", "image": "busybox",
        "command": ["sh", "-c", "seq 20000"]}));
    assert_eq!(log.lines.len(), KEEP_LINES);
    assert_eq!(
        texts(&log.lines).last().map(|l| l.1.as_str()),
        Some("20000\n")
    );
}
