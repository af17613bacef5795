//! What kube-apiserver and the kubelet decide about `pods/log` and `pods/exec` before any
//! container is asked: which container a request names, whether its state has logs or can run
//! a command, how the options are read from the query and validated, and the exit status a
//! finished command reports on the error channel.
//!
//! Ported from kubernetes/kubernetes v1.33, written in our own code:
//! `pkg/registry/core/pod/strategy.go` (`LogLocation`, `streamLocation`, `podHasContainerWithName`:
//! the container a request names and the messages when it names none or a wrong one; an
//! unscheduled pod has no log location and no exec host); `pkg/registry/core/pod/rest/log.go`
//! and `staging/src/k8s.io/api/core/v1/validation` (`ValidatePodLogOptions`: the negative or
//! zero values refused, naming the field, as a 422 on `PodLogOptions`);
//! `staging/src/k8s.io/apimachinery/pkg/runtime/conversion.go` (`Convert_Slice_string_To_bool`:
//! how a query parameter becomes a boolean); `pkg/kubelet/kubelet_pods.go`
//! (`validateContainerLogStatus`: the container states that have logs, and the waiting
//! messages); `pkg/kubelet/kubelet_pods.go` (`GetExec`'s `container not found`) and
//! `staging/src/k8s.io/kubelet/pkg/cri/streaming/remotecommand` (`NewOptions`: at least one
//! stream; `ServeExec`: the `NonZeroExitCode` status with its `ExitCode` cause).

use flotilla_api::validation::FieldError;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use serde_json::{Value, json};

use crate::error::ApiError;

/// A query parameter as a boolean: absent, `0`, `f`, `false`, `n` and `no` (any case) are
/// false, anything else is true.
pub fn query_bool(value: Option<&str>) -> bool {
    match value {
        None => false,
        Some(v) => {
            !(v == "0"
                || ["f", "false", "n", "no"]
                    .iter()
                    .any(|f| v.eq_ignore_ascii_case(f)))
        }
    }
}

/// The container a request addresses: the one it names (which must be a container or init
/// container of the pod), or the pod's only container.
pub fn container_of(
    pod: &Pod,
    pod_name: &str,
    requested: Option<&str>,
) -> Result<String, ApiError> {
    let spec = pod.spec.as_ref();
    let containers = spec.map(|s| s.containers.as_slice()).unwrap_or_default();
    let init = spec
        .and_then(|s| s.init_containers.as_deref())
        .unwrap_or_default();
    let ephemeral = spec
        .and_then(|s| s.ephemeral_containers.as_deref())
        .unwrap_or_default();
    match requested.filter(|c| !c.is_empty()) {
        Some(name) => {
            let known = containers.iter().any(|c| c.name == name)
                || init.iter().any(|c| c.name == name)
                || ephemeral.iter().any(|c| c.name == name);
            if known {
                Ok(name.to_owned())
            } else {
                Err(ApiError::bad_request(format!(
                    "container {name} is not valid for pod {pod_name}"
                )))
            }
        }
        None => match containers {
            [only] => Ok(only.name.clone()),
            [] => Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {pod_name}"
            ))),
            many => {
                let names =
                    |list: &mut dyn Iterator<Item = &str>| list.collect::<Vec<_>>().join(" ");
                let mut message = format!(
                    "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                    names(&mut many.iter().map(|c| c.name.as_str()))
                );
                if !init.is_empty() {
                    message.push_str(&format!(
                        " or one of the init containers: [{}]",
                        names(&mut init.iter().map(|c| c.name.as_str()))
                    ));
                }
                Err(ApiError::bad_request(message))
            }
        },
    }
}

/// The log options of a request, as read from its query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogQuery {
    pub container: Option<String>,
    pub follow: bool,
    pub previous: bool,
    pub timestamps: bool,
    pub since_seconds: Option<i64>,
    pub since_time: Option<jiff::Timestamp>,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
}

/// Reads the options (400 for a value that does not parse) and validates them (422 naming
/// the field on `PodLogOptions <name>`).
pub fn log_query(query: &crate::request::Query, pod_name: &str) -> Result<LogQuery, ApiError> {
    let int = |key: &str| -> Result<Option<i64>, ApiError> {
        match query.get(key) {
            None | Some("") => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "couldn't parse {key} {text:?} as an integer (PodLogOptions)"
                ))
            }),
        }
    };
    let since_time = match query.get("sinceTime").filter(|t| !t.is_empty()) {
        None => None,
        Some(text) => Some(text.parse::<jiff::Timestamp>().map_err(|_| {
            ApiError::bad_request(format!(
                "parsing time {text:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse (sinceTime must be RFC 3339)"
            ))
        })?),
    };
    let options = LogQuery {
        container: query
            .get("container")
            .filter(|c| !c.is_empty())
            .map(str::to_owned),
        follow: query_bool(query.get("follow")),
        previous: query_bool(query.get("previous")),
        timestamps: query_bool(query.get("timestamps")),
        since_seconds: int("sinceSeconds")?,
        since_time,
        tail_lines: int("tailLines")?,
        limit_bytes: int("limitBytes")?,
    };
    let errors = validate_log_query(&options);
    if errors.is_empty() {
        Ok(options)
    } else {
        let causes = errors
            .iter()
            .map(|e| crate::error::Cause {
                reason: e.kind.reason().to_owned(),
                message: e.body(),
                field: e.field.clone(),
            })
            .collect();
        Err(ApiError::new(
            422,
            "Invalid",
            flotilla_api::validation::invalid_message("", "PodLogOptions", pod_name, &errors),
        )
        .with_details(crate::error::Details {
            name: pod_name.to_owned(),
            group: String::new(),
            kind: "PodLogOptions".into(),
            causes,
        }))
    }
}

/// `ValidatePodLogOptions`.
pub fn validate_log_query(options: &LogQuery) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(tail) = options.tail_lines.filter(|t| *t < 0) {
        errors.push(FieldError::invalid(
            "tailLines",
            tail,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(limit) = options.limit_bytes.filter(|l| *l < 1) {
        errors.push(FieldError::invalid(
            "limitBytes",
            limit,
            "must be greater than 0",
        ));
    }
    match (options.since_seconds, options.since_time) {
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            "",
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(seconds), None) if seconds < 1 => errors.push(FieldError::invalid(
            "sinceSeconds",
            seconds,
            "must be greater than 0",
        )),
        _ => {}
    }
    errors
}

fn status_of<'a>(pod: &'a Pod, container: &str) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    [
        status.container_statuses.as_deref(),
        status.init_container_statuses.as_deref(),
        status.ephemeral_container_statuses.as_deref(),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .find(|s| s.name == container)
}

/// Which run of a container a log request reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogRun {
    /// The running or last terminated run.
    Current,
    /// The run before a restart (`previous=true`).
    Previous,
}

/// Whether the container's state has logs (`validateContainerLogStatus`), with the kubelet's
/// messages (answered as 400 BadRequest) when it has none.
pub fn log_run(
    pod: &Pod,
    pod_name: &str,
    container: &str,
    previous: bool,
) -> Result<LogRun, ApiError> {
    let Some(status) = status_of(pod, container) else {
        return Err(ApiError::bad_request(format!(
            "container {container:?} in pod {pod_name:?} is not available"
        )));
    };
    let state = status.state.as_ref();
    let last = status
        .last_state
        .as_ref()
        .and_then(|s| s.terminated.as_ref());
    let id = |id: Option<&String>| id.is_some_and(|i| !i.is_empty());
    if previous {
        return if last.is_some_and(|t| id(t.container_id.as_ref())) {
            Ok(LogRun::Previous)
        } else {
            Err(ApiError::bad_request(format!(
                "previous terminated container {container:?} in pod {pod_name:?} not found"
            )))
        };
    }
    if state.and_then(|s| s.running.as_ref()).is_some() {
        return Ok(LogRun::Current);
    }
    if let Some(terminated) = state.and_then(|s| s.terminated.as_ref()) {
        return if id(terminated.container_id.as_ref()) {
            Ok(LogRun::Current)
        } else if last.is_some_and(|t| id(t.container_id.as_ref())) {
            Ok(LogRun::Previous)
        } else {
            Err(ApiError::bad_request(format!(
                "container {container:?} in pod {pod_name:?} is terminated"
            )))
        };
    }
    if let Some(last) = last {
        return if id(last.container_id.as_ref()) {
            Ok(LogRun::Previous)
        } else {
            Err(ApiError::bad_request(format!(
                "container {container:?} in pod {pod_name:?} is terminated"
            )))
        };
    }
    let message = match state.and_then(|s| s.waiting.as_ref()) {
        Some(waiting) => match waiting.reason.as_deref().unwrap_or("") {
            "ErrImagePull" => format!(
                "container {container:?} in pod {pod_name:?} is waiting to start: image can't be pulled"
            ),
            "ImagePullBackOff" => format!(
                "container {container:?} in pod {pod_name:?} is waiting to start: trying and failing to pull image"
            ),
            reason => {
                format!("container {container:?} in pod {pod_name:?} is waiting to start: {reason}")
            }
        },
        None => {
            format!("container {container:?} in pod {pod_name:?} is waiting to start - no logs yet")
        }
    };
    Err(ApiError::bad_request(message))
}

/// A command can run only in a running container (the kubelet finds no other).
pub fn exec_container_running(pod: &Pod, container: &str) -> Result<(), ApiError> {
    let running = status_of(pod, container)
        .and_then(|s| s.state.as_ref())
        .is_some_and(|s| s.running.is_some());
    if running {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "unable to upgrade connection: container not found ({container:?})"
        )))
    }
}

/// The streams an exec request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecQuery {
    pub container: Option<String>,
    pub command: Vec<String>,
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

/// Reads an exec request's query (`command` may repeat). With a TTY there is no separate
/// stderr (the terminal carries both).
pub fn exec_query(raw_query: Option<&str>) -> Result<ExecQuery, ApiError> {
    let mut query = ExecQuery::default();
    let mut flags: [(bool, Option<String>); 4] = Default::default();
    for (key, value) in form_urlencoded::parse(raw_query.unwrap_or("").as_bytes()) {
        match key.as_ref() {
            "command" => query.command.push(value.into_owned()),
            "container" => query.container = Some(value.into_owned()).filter(|c| !c.is_empty()),
            "stdin" => flags[0] = (true, Some(value.into_owned())),
            "stdout" => flags[1] = (true, Some(value.into_owned())),
            "stderr" => flags[2] = (true, Some(value.into_owned())),
            "tty" => flags[3] = (true, Some(value.into_owned())),
            _ => {}
        }
    }
    let flag = |i: usize| flags[i].0 && query_bool(flags[i].1.as_deref());
    query.stdin = flag(0);
    query.stdout = flag(1);
    query.stderr = flag(2) && !flag(3);
    query.tty = flag(3);
    if !query.stdin && !query.stdout && !query.stderr {
        return Err(ApiError::bad_request(
            "you must specify at least 1 of stdin, stdout, stderr",
        ));
    }
    if query.command.is_empty() {
        return Err(ApiError::bad_request(
            "you must specify at least one command for the container",
        ));
    }
    Ok(query)
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecExit {
    /// It exited with this code.
    Code(i32),
    /// It could not be run (the runtime's error).
    Error(String),
}

/// The `Status` written on the error channel when the command is over.
pub fn exec_status(command: &[String], exit: &ExecExit) -> Value {
    match exit {
        ExecExit::Code(0) => json!({"metadata": {}, "status": "Success"}),
        ExecExit::Code(code) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!(
                "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
                command.join(" ")
            ),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        }),
        ExecExit::Error(message) => json!({
            "metadata": {},
            "status": "Failure",
            "message": format!("Internal error occurred: error executing command in container: {message}"),
            "reason": "InternalError",
            "details": {"causes": [{"message": format!("error executing command in container: {message}")}]},
            "code": 500,
        }),
    }
}
