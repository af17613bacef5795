//! Unit tests of the options, the checks against a pod, and the log body.

use bytes::Bytes;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::log::{body, timestamp};
use super::{ContainerLog, LogLine};
use crate::lifted::kubelet::{
    ExecExit, LogQuery, LogRun, container_of, exec_query, exec_status, log_query, log_run,
    query_bool,
};
use crate::request::Query;

fn pod(value: serde_json::Value) -> Pod {
    serde_json::from_value(value).expect("a pod")
}

fn two_containers() -> Pod {
    pod(json!({"metadata": {"name": "web"}, "spec": {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "a"}, {"name": "b"}]}}))
}

#[test]
fn the_container_must_be_named_when_there_are_several() {
    let error = container_of(&two_containers(), "web", None).expect_err("ambiguous");
    assert_eq!(error.code, 400);
    assert_eq!(
        error.message,
        "a container name must be specified for pod web, choose one of: [a b] or one of the init containers: [init]"
    );
    let one = pod(json!({"spec": {"containers": [{"name": "only"}]}}));
    assert_eq!(container_of(&one, "p", None).expect("the only one"), "only");
    assert_eq!(
        container_of(&two_containers(), "web", Some("init")).expect("init"),
        "init"
    );
}

#[test]
fn an_unknown_container_is_named_with_the_pod() {
    let error = container_of(&two_containers(), "web", Some("y")).expect_err("unknown");
    assert_eq!((error.code, error.reason), (400, "BadRequest"));
    assert_eq!(error.message, "container y is not valid for pod web");
}

#[test]
fn negative_log_options_are_refused_naming_the_field() {
    let error = log_query(&Query::parse(Some("tailLines=-1")), "web").expect_err("negative");
    assert_eq!((error.code, error.reason), (422, "Invalid"));
    assert_eq!(
        error.message,
        "PodLogOptions \"web\" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0"
    );
    let error = log_query(&Query::parse(Some("limitBytes=0")), "web").expect_err("zero");
    assert!(
        error
            .message
            .contains("limitBytes: Invalid value: 0: must be greater than 0"),
        "{}",
        error.message
    );
    let error = log_query(&Query::parse(Some("sinceSeconds=-5")), "web").expect_err("negative");
    assert!(
        error
            .message
            .contains("sinceSeconds: Invalid value: -5: must be greater than 0"),
        "{}",
        error.message
    );
    let error = log_query(
        &Query::parse(Some("sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z")),
        "web",
    )
    .expect_err("both");
    assert!(
        error
            .message
            .contains("at most one of `sinceTime` or `sinceSeconds` may be specified"),
        "{}",
        error.message
    );
    let error = log_query(&Query::parse(Some("tailLines=x")), "web").expect_err("not a number");
    assert_eq!(error.code, 400);
    let ok = log_query(
        &Query::parse(Some(
            "container=c&follow=true&timestamps=1&tailLines=0&previous=false",
        )),
        "web",
    )
    .expect("valid");
    assert_eq!(
        ok,
        LogQuery {
            container: Some("c".into()),
            follow: true,
            timestamps: true,
            tail_lines: Some(0),
            ..LogQuery::default()
        }
    );
}

#[test]
fn query_booleans_are_false_only_when_they_say_so() {
    for v in ["1", "true", "True", "yes", "anything"] {
        assert!(query_bool(Some(v)), "{v}");
    }
    for v in ["0", "f", "FALSE", "n", "No"] {
        assert!(!query_bool(Some(v)), "{v}");
    }
    assert!(!query_bool(None));
}

fn with_state(state: serde_json::Value, last: serde_json::Value) -> Pod {
    pod(json!({"spec": {"containers": [{"name": "c"}]},
        "status": {"containerStatuses": [{"name": "c", "image": "i", "imageID": "", "ready": false,
            "restartCount": 0, "state": state, "lastState": last}]}}))
}

#[test]
fn a_waiting_container_has_no_logs_yet() {
    let creating = with_state(
        json!({"waiting": {"reason": "ContainerCreating"}}),
        json!({}),
    );
    let error = log_run(&creating, "p", "c", false).expect_err("waiting");
    assert_eq!(error.code, 400);
    assert_eq!(
        error.message,
        "container \"c\" in pod \"p\" is waiting to start: ContainerCreating"
    );
    let pull = with_state(
        json!({"waiting": {"reason": "ImagePullBackOff"}}),
        json!({}),
    );
    assert_eq!(
        log_run(&pull, "p", "c", false).expect_err("pull").message,
        "container \"c\" in pod \"p\" is waiting to start: trying and failing to pull image"
    );
    let no_status = pod(json!({"spec": {"containers": [{"name": "c"}]}}));
    assert_eq!(
        log_run(&no_status, "p", "c", false)
            .expect_err("none")
            .message,
        "container \"c\" in pod \"p\" is not available"
    );
}

#[test]
fn previous_needs_a_terminated_run() {
    let running = with_state(
        json!({"running": {"startedAt": "2024-01-01T00:00:00Z"}}),
        json!({}),
    );
    assert_eq!(
        log_run(&running, "p", "c", false).expect("running"),
        LogRun::Current
    );
    assert_eq!(
        log_run(&running, "p", "c", true)
            .expect_err("no previous")
            .message,
        "previous terminated container \"c\" in pod \"p\" not found"
    );
    let restarted = with_state(
        json!({"running": {"startedAt": "2024-01-01T00:01:00Z"}}),
        json!({"terminated": {"exitCode": 1, "containerID": "containerd://x"}}),
    );
    assert_eq!(
        log_run(&restarted, "p", "c", true).expect("previous"),
        LogRun::Previous
    );
}

#[test]
fn exec_needs_a_stream_and_a_command() {
    let error = exec_query(Some("command=ls")).expect_err("no stream");
    assert_eq!(
        error.message,
        "you must specify at least 1 of stdin, stdout, stderr"
    );
    let error = exec_query(Some("stdout=true")).expect_err("no command");
    assert_eq!(
        error.message,
        "you must specify at least one command for the container"
    );
    let query = exec_query(Some("command=sh&command=-c&command=echo+a%3B+exit+3&stdout=true&stderr=true&tty=true&container=c"))
        .expect("valid");
    assert_eq!(query.command, ["sh", "-c", "echo a; exit 3"]);
    assert_eq!(query.container.as_deref(), Some("c"));
    assert!(
        query.stdout && query.tty && !query.stderr,
        "a TTY carries stderr: {query:?}"
    );
}

#[test]
fn a_non_zero_exit_is_reported_with_its_code() {
    let command = vec!["sh".to_owned(), "-c".to_owned(), "exit 3".to_owned()];
    assert_eq!(
        exec_status(&command, &ExecExit::Code(0)),
        json!({"metadata": {}, "status": "Success"})
    );
    let failed = exec_status(&command, &ExecExit::Code(3));
    assert_eq!(failed["reason"], "NonZeroExitCode");
    assert_eq!(
        failed["details"]["causes"][0],
        json!({"reason": "ExitCode", "message": "3"})
    );
    assert_eq!(
        failed["message"],
        "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
    );
}

fn at(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_700_000_000 + seconds).expect("in range")
}

fn log(lines: &[(i64, &str)]) -> ContainerLog {
    ContainerLog {
        lines: lines
            .iter()
            .map(|(s, text)| LogLine {
                time: at(*s),
                bytes: Bytes::from(format!("{text}\n")),
            })
            .collect(),
        later: None,
    }
}

async fn text(body: axum::body::Body) -> String {
    let bytes = body.collect().await.expect("a body").to_bytes();
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

#[tokio::test]
async fn tail_since_timestamps_and_limit_apply_in_the_kubelets_order() {
    let lines = [(0, "a"), (10, "b"), (20, "c"), (30, "d")];
    let all = LogQuery::default();
    assert_eq!(text(body(log(&lines), &all, at(40))).await, "a\nb\nc\nd\n");
    let tail = LogQuery {
        tail_lines: Some(2),
        ..LogQuery::default()
    };
    assert_eq!(text(body(log(&lines), &tail, at(40))).await, "c\nd\n");
    let none = LogQuery {
        tail_lines: Some(0),
        ..LogQuery::default()
    };
    assert_eq!(text(body(log(&lines), &none, at(40))).await, "");
    let since = LogQuery {
        since_seconds: Some(25),
        ..LogQuery::default()
    };
    assert_eq!(text(body(log(&lines), &since, at(40))).await, "c\nd\n");
    let since_time = LogQuery {
        since_time: Some(at(10)),
        tail_lines: Some(3),
        ..LogQuery::default()
    };
    assert_eq!(
        text(body(log(&lines), &since_time, at(40))).await,
        "b\nc\nd\n"
    );
    let limit = LogQuery {
        limit_bytes: Some(3),
        ..LogQuery::default()
    };
    assert_eq!(text(body(log(&lines), &limit, at(40))).await, "a\nb");
    let stamped = LogQuery {
        timestamps: true,
        tail_lines: Some(1),
        ..LogQuery::default()
    };
    assert_eq!(
        text(body(log(&lines), &stamped, at(40))).await,
        format!("{} d\n", timestamp(at(30)))
    );
    assert_eq!(timestamp(at(0)), "2023-11-14T22:13:20.000000000Z");
}

#[tokio::test]
async fn follow_streams_later_lines_until_the_limit() {
    let mut log = log(&[(0, "a")]);
    log.later = Some(Box::pin(futures::stream::iter(
        [(1, "b"), (2, "c"), (3, "d")].map(|(s, t)| LogLine {
            time: at(s),
            bytes: Bytes::from(format!("{t}\n")),
        }),
    )));
    let limited = LogQuery {
        follow: true,
        limit_bytes: Some(5),
        ..LogQuery::default()
    };
    assert_eq!(text(body(log, &limited, at(0))).await, "a\nb\nc");
}
