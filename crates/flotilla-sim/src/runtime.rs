//! The container runtime of a simulated cluster: the API server's [`KubeletBackend`] for
//! `pods/log` and `pods/exec`, over a deterministic container model.
//!
//! Each container "runs" its `command` + `args` (after the kubelet's `$(VAR)` expansion) in a
//! small busybox-like [`shell`]. Nothing is stored per pod: a log is computed on request by
//! running the container's program in virtual time from its start (`status.containerStatuses`'
//! `startedAt`) to now — `sleep` moves the clock, each line is stamped with it — keeping the last
//! [`KEEP_LINES`] lines, as a kubelet's rotation keeps the end of a log. Following re-runs it a
//! minute ahead at a time and sends each line when its time comes; the stream ends when the
//! program does, or when the pod is gone or terminal. Exec runs the same shell in real time with
//! the client's stdin. A container without a command gets its image's start lines (nginx's) or
//! one line saying what was started and that the simulator does not model its output, so a
//! running container's log is never empty; so does a program the shell does not know.
//!
//! `nc` reaches the process's [`Network`] as the container's pod (see [`crate::network`]).
//!
//! [`exit_of`] tells the kubelets when a program ends (restarts and `CrashLoopBackOff`, see
//! [`crate::kubelet`]); a restarted container's log is its current run's, `--previous` the run
//! before, and a container waiting to restart shows its last run's.
//!
//! Not modelled: files other than `/etc/hostname`, networking commands but `nc`, env values from
//! `valueFrom`.
//!
//! Must not depend on anything but the pod cache and the API server's hook.

pub mod shell;

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use flotilla_apiserver::ApiError;
use flotilla_apiserver::kubelet::{
    ContainerLog, ExecExit, ExecOutput, ExecRequest, ExecStreams, KubeletBackend, LogLine,
    LogRequest,
};
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod};
use shell::{Context, Fd, Flow, Io, Shell};
use tokio::sync::mpsc;

use crate::informer::Cache;
use crate::network::{Caller, Network};

/// Lines a log keeps (the most recent ones).
pub const KEEP_LINES: usize = 10_000;

/// How far ahead a followed log is computed at a time.
const FOLLOW_AHEAD: Duration = Duration::from_secs(60);

/// How often a followed log checks that its pod is still there.
const FOLLOW_CHECK: Duration = Duration::from_secs(2);

/// One cluster's container runtime (see the module docs).
#[derive(Debug, Default)]
pub struct SimRuntime {
    pods: OnceLock<Cache<crate::pod::Pod>>,
    /// The process's network and this cluster's name in it.
    network: OnceLock<(Arc<Network>, String)>,
}

impl SimRuntime {
    pub fn new() -> Arc<Self> {
        Arc::new(SimRuntime::default())
    }

    /// Hands over the pod cache (followed logs end when their pod goes).
    pub fn attach(&self, pods: Cache<crate::pod::Pod>) {
        let _ = self.pods.set(pods);
    }

    /// Joins the process's network as `cluster`: containers' `nc` reaches it.
    pub fn join_network(&self, network: Arc<Network>, cluster: &str) {
        let _ = self.network.set((network, cluster.to_owned()));
    }

    /// The network as a container of `pod` sees it (none until joined).
    fn net_of(&self, pod: &Pod) -> Option<Arc<dyn shell::Net>> {
        let (network, cluster) = self.network.get()?;
        Some(network.from_pod(Caller {
            cluster: cluster.clone(),
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            pod: pod.metadata.name.clone().unwrap_or_default(),
        }))
    }

    /// Whether the pod with `uid` is still in the cache and not terminal (true until the cache
    /// is attached).
    fn still_running(&self, namespace: &str, name: &str, uid: &str) -> bool {
        let Some(pods) = self.pods.get() else {
            return true;
        };
        pods.get(namespace, name).is_some_and(|pod| {
            pod.metadata.uid.as_deref() == Some(uid) && !crate::scheduler::is_terminal(&pod)
        })
    }
}

/// The container named `name` of `pod`, wherever it is declared.
fn container<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    let spec = pod.spec.as_ref()?;
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .find(|c| c.name == name)
}

/// What the downward API (`env[].valueFrom.fieldRef`) reads of a pod: the slim cached pod the
/// kubelet holds, or the API's pod `pods/log` and `pods/exec` are served for.
pub trait PodFields {
    /// `metadata.name`, the container's hostname.
    fn name(&self) -> &str;
    /// The value at `path` (kube's `fieldRef` paths: `metadata.name`, `metadata.namespace`,
    /// `metadata.uid`, `metadata.labels['k']`, `metadata.annotations['k']`, `spec.nodeName`,
    /// `spec.serviceAccountName`, `status.podIP`); `None` for a path not modelled.
    fn field(&self, path: &str) -> Option<String>;
}

/// The key of a `metadata.labels['k']` or `metadata.annotations['k']` path under `prefix`.
fn subscript<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    path.strip_prefix(prefix)?
        .strip_prefix("['")?
        .strip_suffix("']")
}

/// kube's downward API over the parts of a pod: a missing label or annotation reads as `""`.
fn downward(
    path: &str,
    metadata: [Option<&str>; 3],
    labels: Option<&std::collections::BTreeMap<String, String>>,
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    spec: [Option<&str>; 2],
    pod_ip: Option<String>,
) -> Option<String> {
    let [name, namespace, uid] = metadata;
    let [node_name, service_account] = spec;
    let text = |value: Option<&str>| Some(value.unwrap_or_default().to_owned());
    match path {
        "metadata.name" => text(name),
        "metadata.namespace" => text(namespace),
        "metadata.uid" => text(uid),
        "spec.nodeName" => text(node_name),
        "spec.serviceAccountName" => text(service_account),
        "status.podIP" => Some(pod_ip.unwrap_or_default()),
        _ => {
            if let Some(key) = subscript(path, "metadata.labels") {
                return text(labels.and_then(|l| l.get(key)).map(String::as_str));
            }
            let key = subscript(path, "metadata.annotations")?;
            text(annotations.and_then(|a| a.get(key)).map(String::as_str))
        }
    }
}

impl PodFields for Pod {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn field(&self, path: &str) -> Option<String> {
        let spec = self.spec.as_ref();
        downward(
            path,
            [
                self.metadata.name.as_deref(),
                self.metadata.namespace.as_deref(),
                self.metadata.uid.as_deref(),
            ],
            self.metadata.labels.as_ref(),
            self.metadata.annotations.as_ref(),
            [
                spec.and_then(|s| s.node_name.as_deref()),
                spec.and_then(|s| s.service_account_name.as_deref()),
            ],
            self.status.as_ref().and_then(|s| s.pod_ip.clone()),
        )
    }
}

impl PodFields for crate::pod::Pod {
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn field(&self, path: &str) -> Option<String> {
        let spec = self.spec.as_ref();
        downward(
            path,
            [
                self.metadata.name.as_deref(),
                self.metadata.namespace.as_deref(),
                self.metadata.uid.as_deref(),
            ],
            self.metadata.labels(),
            self.metadata.annotations(),
            [
                spec.and_then(|s| s.node_name.as_deref()),
                spec.and_then(|s| s.service_account_name.as_deref()),
            ],
            self.status
                .as_ref()
                .and_then(|s| s.pod_ip)
                .map(|ip| ip.to_string()),
        )
    }
}

/// The process environment of a container: `PATH`, `HOSTNAME`, its env values in order (literal
/// ones with `$(VAR)` references to earlier ones expanded; `valueFrom.fieldRef` read from the
/// pod, as the kubelet's downward API does; other `valueFrom` sources are not modelled), `HOME`.
pub fn context_of(pod: &dyn PodFields, container: &Container) -> Context {
    let hostname = pod.name().to_owned();
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        ),
        ("HOSTNAME".into(), hostname.clone()),
    ];
    for var in container.env.iter().flatten() {
        let value = match &var.value_from {
            Some(source) => {
                let Some(value) = source
                    .field_ref
                    .as_ref()
                    .and_then(|field| pod.field(&field.field_path))
                else {
                    continue;
                };
                value
            }
            None => crate::lifted::expansion::expand(var.value.as_deref().unwrap_or(""), |n| {
                env.iter()
                    .rev()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
            }),
        };
        env.retain(|(k, _)| *k != var.name);
        env.push((var.name.clone(), value));
    }
    if !env.iter().any(|(k, _)| k == "HOME") {
        env.push(("HOME".into(), "/root".into()));
    }
    Context {
        env,
        hostname,
        net: None,
    }
}

/// The program a container runs: `command` + `args` with `$(VAR)` references expanded (args
/// alone run as the command: the shell images' default command is a shell).
pub fn argv_of(container: &Container, context: &Context) -> Vec<String> {
    let lookup = |n: &str| {
        context
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
    };
    container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .map(|a| crate::lifted::expansion::expand(a, lookup))
        .collect()
}

/// What a container without a command writes when it starts, from its image.
fn image_start_lines(container: &Container, start: jiff::Timestamp) -> Vec<String> {
    let image = container.image.as_deref().unwrap_or("");
    let repository = image.split(['@']).next().unwrap_or("");
    let repository = match repository.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => name,
        _ => repository,
    };
    let name = repository.rsplit('/').next().unwrap_or("");
    if name == "nginx" {
        let clock = start.strftime("%Y/%m/%d %H:%M:%S");
        return vec![
            "/docker-entrypoint.sh: Configuration complete; ready for start up".into(),
            format!("{clock} [notice] 1#1: using the \"epoll\" event method"),
            format!("{clock} [notice] 1#1: start worker processes"),
            format!("{clock} [notice] 1#1: start worker process 29"),
        ];
    }
    vec![not_modelled_line(container, "its image's default command")]
}

fn not_modelled_line(container: &Container, what: &str) -> String {
    format!(
        "flotilla sim: container {:?} started from image {:?} running {what}; the simulator \
         does not model what that writes",
        container.name,
        container.image.as_deref().unwrap_or("")
    )
}

/// The log of one run in virtual time: lines stamped with the clock `sleep` moves, up to a
/// horizon, keeping only lines after `after` and at most [`KEEP_LINES`] of them.
#[derive(Debug)]
pub struct Recorder {
    now: jiff::Timestamp,
    horizon: jiff::Timestamp,
    after: Option<jiff::Timestamp>,
    pub lines: VecDeque<LogLine>,
    partial: Vec<u8>,
}

impl Recorder {
    pub fn new(
        start: jiff::Timestamp,
        horizon: jiff::Timestamp,
        after: Option<jiff::Timestamp>,
    ) -> Self {
        Recorder {
            now: start,
            horizon,
            after,
            lines: VecDeque::new(),
            partial: Vec::new(),
        }
    }

    fn push(&mut self, bytes: Vec<u8>) {
        if self.after.is_some_and(|after| self.now <= after) {
            return;
        }
        if self.lines.len() == KEEP_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(LogLine {
            time: self.now,
            bytes: Bytes::from(bytes),
        });
    }

    /// The pending partial line becomes an entry (the program ended or paused).
    fn flush(&mut self) {
        if !self.partial.is_empty() {
            let partial = std::mem::take(&mut self.partial);
            self.push(partial);
        }
    }
}

impl Io for Recorder {
    fn now(&self) -> jiff::Timestamp {
        self.now
    }

    fn sleep(&mut self, duration: Duration) -> bool {
        self.flush();
        let next = jiff::SignedDuration::try_from(duration)
            .ok()
            .and_then(|d| self.now.checked_add(d).ok());
        match next {
            Some(next) if next <= self.horizon => {
                self.now = next;
                true
            }
            _ => {
                self.now = self.horizon;
                false
            }
        }
    }

    fn write(&mut self, _fd: Fd, bytes: &[u8]) -> bool {
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            self.partial.extend_from_slice(piece);
            if piece.ends_with(b"\n") {
                let line = std::mem::take(&mut self.partial);
                self.push(line);
            }
        }
        true
    }

    fn read(&mut self) -> Option<Vec<u8>> {
        None
    }
}

/// A container run computed up to a horizon.
#[derive(Debug)]
pub struct Run {
    pub lines: VecDeque<LogLine>,
    /// The program ended before the horizon.
    pub ended: bool,
}

/// Whether the shell models the program of `container` (of `pod`): a container without a
/// command, or running a program the shell does not know, is not.
pub fn is_modelled(pod: &dyn PodFields, container: &Container) -> bool {
    if container.command.is_none() && container.args.is_none() {
        return false;
    }
    let argv = argv_of(container, &context_of(pod, container));
    argv.first()
        .is_some_and(|program| shell::is_modelled(program))
}

/// When and with which exit code the program of `container` (of `pod`),
/// started at `start`, ends, if it does before `horizon`: a container without a command, or
/// whose program the shell does not model, runs until stopped.
pub fn exit_of(
    pod: &dyn PodFields,
    container: &Container,
    start: jiff::Timestamp,
    horizon: jiff::Timestamp,
) -> Option<(jiff::Timestamp, i32)> {
    let context = context_of(pod, container);
    let argv = argv_of(container, &context);
    if argv.is_empty() || !shell::is_modelled(&argv[0]) {
        return None;
    }
    // Keep no lines: only the clock and the exit matter.
    let mut recorder = Recorder::new(start, horizon, Some(horizon));
    let flow = Shell::new(&context, &mut recorder).run_argv(&argv);
    match flow {
        Flow::Status(code) | Flow::Exit(code) => Some((recorder.now, code)),
        Flow::Stop => None,
    }
}

/// Runs `container` of `pod` from `start` to `horizon` in virtual time; only lines after
/// `after` are kept.
pub fn run(
    pod: &Pod,
    container: &Container,
    start: jiff::Timestamp,
    horizon: jiff::Timestamp,
    after: Option<jiff::Timestamp>,
) -> Run {
    run_on(pod, container, start, horizon, after, None)
}

/// [`run`] with `nc` reaching `net`.
pub fn run_on(
    pod: &Pod,
    container: &Container,
    start: jiff::Timestamp,
    horizon: jiff::Timestamp,
    after: Option<jiff::Timestamp>,
    net: Option<Arc<dyn shell::Net>>,
) -> Run {
    let mut context = context_of(pod, container);
    context.net = net;
    let argv = argv_of(container, &context);
    let mut recorder = Recorder::new(start, horizon, after);
    let ended = if argv.is_empty() {
        for line in image_start_lines(container, start) {
            recorder.write(Fd::Out, format!("{line}\n").as_bytes());
        }
        false
    } else if !shell::is_modelled(&argv[0]) {
        let what = format!("{argv:?}");
        recorder.write(
            Fd::Out,
            format!("{}\n", not_modelled_line(container, &what)).as_bytes(),
        );
        false
    } else {
        let flow = Shell::new(&context, &mut recorder).run_argv(&argv);
        !matches!(flow, Flow::Stop)
    };
    recorder.flush();
    Run {
        lines: recorder.lines,
        ended,
    }
}

/// The start and (when terminated) end of the run a log request reads.
fn run_times(
    pod: &Pod,
    name: &str,
    previous: bool,
) -> Option<(jiff::Timestamp, Option<jiff::Timestamp>)> {
    let status = pod.status.as_ref()?;
    let container = [
        status.container_statuses.as_deref(),
        status.init_container_statuses.as_deref(),
    ]
    .into_iter()
    .flatten()
    .flatten()
    .find(|s| s.name == name)?;
    let parse = |t: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Time| Some(t.0);
    let terminated = if previous {
        container.last_state.as_ref()?.terminated.as_ref()
    } else {
        if let Some(running) = container.state.as_ref().and_then(|s| s.running.as_ref()) {
            return Some((running.started_at.as_ref().and_then(parse)?, None));
        }
        // Waiting to restart (CrashLoopBackOff): the log is the last run's, as a kubelet's is.
        container
            .state
            .as_ref()?
            .terminated
            .as_ref()
            .or_else(|| container.last_state.as_ref()?.terminated.as_ref())
    }?;
    Some((
        terminated.started_at.as_ref().and_then(parse)?,
        terminated.finished_at.as_ref().and_then(parse),
    ))
}

impl KubeletBackend for SimRuntime {
    fn logs(&self, request: LogRequest) -> BoxFuture<'static, Result<ContainerLog, ApiError>> {
        let follow_check = self.pods.get().cloned();
        let net = self.net_of(&request.pod);
        Box::pin(async move {
            let pod = request.pod.clone();
            let Some(spec) = container(&pod, &request.container).cloned() else {
                return Ok(ContainerLog {
                    lines: Vec::new(),
                    later: None,
                });
            };
            let Some((start, end)) = run_times(&pod, &request.container, request.previous) else {
                return Ok(ContainerLog {
                    lines: Vec::new(),
                    later: None,
                });
            };
            let now = jiff::Timestamp::now();
            let horizon = end.map_or(now, |end| end.min(now));
            let (pod2, spec2, net2) = (pod.clone(), spec.clone(), net.clone());
            let first = tokio::task::spawn_blocking(move || {
                run_on(&pod2, &spec2, start, horizon, None, net2)
            })
            .await
            .map_err(|e| ApiError::internal(format!("the container model failed: {e}")))?;
            let lines = Vec::from(first.lines);
            let later = (request.follow && !first.ended && end.is_none()).then(|| {
                let runtime = SimRuntime::default();
                if let Some(pods) = follow_check {
                    runtime.attach(pods);
                }
                follow(Arc::new(runtime), pod, spec, start, horizon, net)
            });
            Ok(ContainerLog { lines, later })
        })
    }

    fn exec(&self, request: ExecRequest, streams: ExecStreams) -> BoxFuture<'static, ExecExit> {
        let net = self.net_of(&request.pod);
        Box::pin(async move {
            let Some(spec) = container(&request.pod, &request.container).cloned() else {
                return ExecExit::Error(format!("container {:?} not found", request.container));
            };
            let mut context = context_of(&*request.pod, &spec);
            context.net = net;
            let task = tokio::task::spawn_blocking(move || {
                let mut io = Live {
                    output: streams.output,
                    stdin: streams.stdin,
                    tty: request.tty,
                    stdout: request.stdout,
                    stderr: request.stderr,
                };
                Shell::new(&context, &mut io).run_argv(&request.command)
            });
            match task.await {
                Ok(Flow::Status(code) | Flow::Exit(code)) => ExecExit::Code(code),
                // The client went away: nobody reads the status.
                Ok(Flow::Stop) => ExecExit::Code(137),
                Err(e) => ExecExit::Error(format!("the simulated command failed: {e}")),
            }
        })
    }
}

/// A followed log: the lines after `from`, each sent when its time comes, until the program
/// ends or the pod is gone.
fn follow(
    runtime: Arc<SimRuntime>,
    pod: Arc<Pod>,
    spec: Container,
    start: jiff::Timestamp,
    from: jiff::Timestamp,
    net: Option<Arc<dyn shell::Net>>,
) -> futures::stream::BoxStream<'static, LogLine> {
    struct State {
        net: Option<Arc<dyn shell::Net>>,
        runtime: Arc<SimRuntime>,
        pod: Arc<Pod>,
        spec: Container,
        start: jiff::Timestamp,
        computed_to: jiff::Timestamp,
        pending: VecDeque<LogLine>,
        ended: bool,
    }
    let state = State {
        net,
        runtime,
        pod,
        spec,
        start,
        computed_to: from,
        pending: VecDeque::new(),
        ended: false,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        let meta = &state.pod.metadata;
        let (namespace, name, uid) = (
            meta.namespace.clone().unwrap_or_default(),
            meta.name.clone().unwrap_or_default(),
            meta.uid.clone().unwrap_or_default(),
        );
        loop {
            if !state.runtime.still_running(&namespace, &name, &uid) {
                return None;
            }
            if let Some(line) = state.pending.front() {
                let wait = line.time.duration_since(jiff::Timestamp::now());
                if wait.is_positive() {
                    let wait = Duration::try_from(wait).unwrap_or_default();
                    tokio::time::sleep(wait.min(FOLLOW_CHECK)).await;
                    continue;
                }
                let line = state.pending.pop_front().expect("a front line");
                return Some((line, state));
            }
            if state.ended {
                return None;
            }
            let now = jiff::Timestamp::now();
            if state.computed_to > now {
                let wait =
                    Duration::try_from(state.computed_to.duration_since(now)).unwrap_or_default();
                tokio::time::sleep(wait.min(FOLLOW_CHECK)).await;
                continue;
            }
            let horizon = now
                .checked_add(jiff::SignedDuration::try_from(FOLLOW_AHEAD).unwrap_or_default())
                .unwrap_or(now);
            let (pod, spec, start, after, net) = (
                state.pod.clone(),
                state.spec.clone(),
                state.start,
                state.computed_to,
                state.net.clone(),
            );
            let Ok(next) = tokio::task::spawn_blocking(move || {
                run_on(&pod, &spec, start, horizon, Some(after), net)
            })
            .await
            else {
                return None;
            };
            state.pending = next.lines;
            state.ended = next.ended;
            state.computed_to = horizon;
        }
    }))
}

/// Exec's Io: real time, the client's stdin, output to the client (a terminal gets `\r\n`).
struct Live {
    output: mpsc::Sender<ExecOutput>,
    stdin: mpsc::Receiver<Bytes>,
    tty: bool,
    stdout: bool,
    stderr: bool,
}

impl Io for Live {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }

    fn sleep(&mut self, duration: Duration) -> bool {
        let deadline = std::time::Instant::now().checked_add(duration);
        loop {
            if self.output.is_closed() {
                return false;
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(std::time::Instant::now()),
                None => Duration::from_millis(100),
            };
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(100)));
        }
    }

    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool {
        let bytes = if self.tty {
            let mut out = Vec::with_capacity(bytes.len() + 8);
            for &b in bytes {
                if b == b'\n' {
                    out.push(b'\r');
                }
                out.push(b);
            }
            Bytes::from(out)
        } else {
            Bytes::copy_from_slice(bytes)
        };
        let output = match fd {
            Fd::Out if self.stdout => ExecOutput::Stdout(bytes),
            // A terminal carries stderr on stdout.
            Fd::Err if self.tty && self.stdout => ExecOutput::Stdout(bytes),
            Fd::Err if self.stderr => ExecOutput::Stderr(bytes),
            _ => return !self.output.is_closed(),
        };
        self.output.blocking_send(output).is_ok()
    }

    fn read(&mut self) -> Option<Vec<u8>> {
        self.stdin.blocking_recv().map(|b| b.to_vec())
    }

    fn tty(&self) -> bool {
        self.tty
    }
}

#[cfg(test)]
mod tests;
