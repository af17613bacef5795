//! A small busybox-like shell: what a simulated container's command does, deterministically.
//!
//! The same interpreter serves logs and exec; only its [`Io`] differs. For logs time is
//! virtual (`sleep` moves a clock, output is stamped with it, and the run stops at a horizon);
//! for exec it is real (`sleep` sleeps, output goes to the client, stdin comes from it).
//! Modelled: `echo`, `printf`, `sh -c` (and `sh` reading stdin), `sleep`, `true`, `false`,
//! `exit`, `env`, `printenv`, `hostname`, `cat`, `date`, `seq`, `test`/`[`, `export`, `unset`,
//! `cd`, `pwd`, `tail -f` (waits), `yes`; `;`, `&&`, `||`, `|`, `!`, `while`/`until`, `for`,
//! `if`, `{ }`, `( )`, `$VAR`, `$?`, `$(…)`; `nc` over the [`Net`] its [`Context`] carries
//! ([`nc`]). Anything else answers on stderr that the simulator
//! does not model it, with status 127.

mod builtins;
pub mod nc;
pub mod parse;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use builtins::{is_modelled, sleep_duration};
pub use nc::{Listener, Net, Protocol, Reach};
use parse::{Node, Part, Word};

/// Where output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fd {
    Out,
    Err,
}

/// What a running command touches outside the interpreter.
pub trait Io {
    /// The current time (virtual or real).
    fn now(&self) -> jiff::Timestamp;
    /// Lets `duration` pass; false: stop now (the horizon is reached, or nobody listens).
    fn sleep(&mut self, duration: Duration) -> bool;
    /// Writes output; false: stop now.
    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool;
    /// The next stdin bytes; `None` at the end of stdin.
    fn read(&mut self) -> Option<Vec<u8>>;
    /// Stdin is a terminal.
    fn tty(&self) -> bool {
        false
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Finished with this status.
    Status(i32),
    /// `exit N`: the shell ends with N.
    Exit(i32),
    /// Stopped from outside (horizon, client gone, step budget).
    Stop,
}

/// Commands run per shell before it stops: an endless loop without `sleep` would otherwise
/// never yield.
pub const STEP_BUDGET: u64 = 2_000_000;

/// The process's environment and identity.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Environment variables in order (`env` prints them so).
    pub env: Vec<(String, String)>,
    /// `hostname` (the pod's name).
    pub hostname: String,
    /// The network `nc` reaches (none: every address is silent, no name resolves).
    pub net: Option<Arc<dyn Net>>,
}

/// A shell's variables and counters, handed to a subshell.
struct State {
    vars: BTreeMap<String, String>,
    order: Vec<String>,
    hostname: String,
    net: Option<Arc<dyn Net>>,
    status: i32,
    steps: u64,
}

/// One shell process.
pub struct Shell<'a> {
    io: &'a mut dyn Io,
    vars: BTreeMap<String, String>,
    /// Names in `env` order.
    order: Vec<String>,
    hostname: String,
    net: Option<Arc<dyn Net>>,
    status: i32,
    steps: u64,
}

impl std::fmt::Debug for Shell<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shell")
            .field("hostname", &self.hostname)
            .field("status", &self.status)
            .field("steps", &self.steps)
            .finish()
    }
}

impl<'a> Shell<'a> {
    pub fn new(context: &Context, io: &'a mut dyn Io) -> Self {
        let mut shell = Shell {
            io,
            vars: BTreeMap::new(),
            order: Vec::new(),
            hostname: context.hostname.clone(),
            net: context.net.clone(),
            status: 0,
            steps: 0,
        };
        for (name, value) in &context.env {
            shell.set(name, value.clone());
        }
        shell
    }

    fn set(&mut self, name: &str, value: String) {
        if self.vars.insert(name.to_owned(), value).is_none() {
            self.order.push(name.to_owned());
        }
    }

    fn unset(&mut self, name: &str) {
        self.vars.remove(name);
        self.order.retain(|n| n != name);
    }

    fn env_lines(&self) -> String {
        let mut out = String::new();
        for name in &self.order {
            if let Some(value) = self.vars.get(name) {
                out.push_str(&format!("{name}={value}\n"));
            }
        }
        out
    }

    /// Runs a program given as argv (a container's command and args, or an exec command).
    pub fn run_argv(&mut self, argv: &[String]) -> Flow {
        match self.command(argv) {
            Flow::Exit(code) => Flow::Status(code),
            flow => flow,
        }
    }

    /// Runs a script (`sh -c`).
    pub fn run_script(&mut self, source: &str) -> Flow {
        match parse::parse(source) {
            Ok(node) => match self.node(&node) {
                Flow::Exit(code) => Flow::Status(code),
                flow => flow,
            },
            Err(error) => {
                self.err(&format!("sh: {}\n", error.message));
                Flow::Status(2)
            }
        }
    }

    fn out(&mut self, text: &str) -> bool {
        self.io.write(Fd::Out, text.as_bytes())
    }

    fn err(&mut self, text: &str) -> bool {
        self.io.write(Fd::Err, text.as_bytes())
    }

    fn node(&mut self, node: &Node) -> Flow {
        let flow = match node {
            Node::Simple { assignments, words } => self.simple(assignments, words),
            Node::Sequence(items) => {
                let mut last = Flow::Status(0);
                for item in items {
                    last = self.node(item);
                    if !matches!(last, Flow::Status(_)) {
                        return last;
                    }
                }
                last
            }
            Node::And(left, right) => match self.node(left) {
                Flow::Status(0) => self.node(right),
                other => other,
            },
            Node::Or(left, right) => match self.node(left) {
                Flow::Status(0) => Flow::Status(0),
                Flow::Status(_) => self.node(right),
                other => other,
            },
            Node::Not(inner) => match self.node(inner) {
                Flow::Status(code) => Flow::Status(i32::from(code == 0)),
                other => other,
            },
            Node::Pipe(stages) => self.pipe(stages),
            Node::Loop {
                condition,
                body,
                until,
            } => {
                let mut last = Flow::Status(0);
                loop {
                    match self.node(condition) {
                        Flow::Status(code) if (code == 0) != *until => {}
                        Flow::Status(_) => break,
                        other => return other,
                    }
                    last = self.node(body);
                    if !matches!(last, Flow::Status(_)) {
                        return last;
                    }
                    if !self.step() {
                        return Flow::Stop;
                    }
                }
                last
            }
            Node::For { name, items, body } => {
                let mut values = Vec::new();
                for item in items {
                    match self.expand(item) {
                        Ok(fields) => values.extend(fields),
                        Err(flow) => return flow,
                    }
                }
                let mut last = Flow::Status(0);
                for value in values {
                    self.set(name, value);
                    last = self.node(body);
                    if !matches!(last, Flow::Status(_)) {
                        return last;
                    }
                }
                last
            }
            Node::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    match self.node(condition) {
                        Flow::Status(0) => return self.node(body),
                        Flow::Status(_) => {}
                        other => return other,
                    }
                }
                match otherwise {
                    Some(body) => self.node(body),
                    None => Flow::Status(0),
                }
            }
        };
        self.finish(flow)
    }

    fn finish(&mut self, flow: Flow) -> Flow {
        if let Flow::Status(code) = flow {
            self.status = code;
        }
        flow
    }

    /// Counts a step; false once the budget is spent.
    fn step(&mut self) -> bool {
        self.steps += 1;
        self.steps <= STEP_BUDGET
    }

    fn simple(&mut self, assignments: &[(String, Word)], words: &[Word]) -> Flow {
        if !self.step() {
            return Flow::Stop;
        }
        for (name, word) in assignments {
            match self.expand_joined(word) {
                Ok(value) => self.set(name, value),
                Err(flow) => return flow,
            }
        }
        let mut argv = Vec::new();
        for word in words {
            match self.expand(word) {
                Ok(fields) => argv.extend(fields),
                Err(flow) => return flow,
            }
        }
        if argv.is_empty() {
            return Flow::Status(0);
        }
        self.command(&argv)
    }

    /// The fields of a word: unquoted expansions split on whitespace.
    fn expand(&mut self, word: &Word) -> Result<Vec<String>, Flow> {
        let mut fields: Vec<String> = Vec::new();
        let mut current = String::new();
        let mut has_current = false;
        for part in word {
            let (text, quoted) = match part {
                Part::Text { text, quoted } => (text.clone(), *quoted),
                Part::Var { name, quoted } => (self.var(name), *quoted),
                Part::Output { script, quoted } => {
                    let output = self.capture(script)?;
                    (output.trim_end_matches('\n').to_owned(), *quoted)
                }
            };
            if quoted || matches!(part, Part::Text { .. }) {
                current.push_str(&text);
                has_current = true;
                continue;
            }
            let mut pieces = text.split_whitespace().peekable();
            if text.starts_with(char::is_whitespace) && has_current {
                fields.push(std::mem::take(&mut current));
                has_current = false;
            }
            while let Some(piece) = pieces.next() {
                current.push_str(piece);
                has_current = true;
                if pieces.peek().is_some() {
                    fields.push(std::mem::take(&mut current));
                }
            }
            if text.ends_with(char::is_whitespace) && has_current {
                fields.push(std::mem::take(&mut current));
                has_current = false;
            }
        }
        if has_current {
            fields.push(current);
        }
        Ok(fields)
    }

    fn expand_joined(&mut self, word: &Word) -> Result<String, Flow> {
        let mut out = String::new();
        for part in word {
            match part {
                Part::Text { text, .. } => out.push_str(text),
                Part::Var { name, .. } => out.push_str(&self.var(name)),
                Part::Output { script, .. } => {
                    out.push_str(self.capture(script)?.trim_end_matches('\n'))
                }
            }
        }
        Ok(out)
    }

    fn var(&self, name: &str) -> String {
        match name {
            "?" => self.status.to_string(),
            "$" => "1".into(),
            "#" => "0".into(),
            "0" => "sh".into(),
            _ => self.vars.get(name).cloned().unwrap_or_default(),
        }
    }

    /// Runs `script` with its stdout captured (`$(…)`).
    fn capture(&mut self, script: &str) -> Result<String, Flow> {
        let state = self.state();
        let mut capture = Capture {
            inner: &mut *self.io,
            captured: Vec::new(),
            stdin: None,
            keep: true,
        };
        let (flow, steps) = {
            let mut sub = Shell::resume(state, &mut capture);
            let flow = sub.run_script(script);
            (flow, sub.steps)
        };
        self.steps = steps;
        match flow {
            Flow::Stop => Err(Flow::Stop),
            Flow::Status(code) | Flow::Exit(code) => {
                self.status = code;
                Ok(String::from_utf8_lossy(&capture.captured).into_owned())
            }
        }
    }

    /// What a subshell starts from: the same variables, budget and identity.
    fn state(&self) -> State {
        State {
            vars: self.vars.clone(),
            order: self.order.clone(),
            hostname: self.hostname.clone(),
            net: self.net.clone(),
            status: self.status,
            steps: self.steps,
        }
    }

    /// A subshell over another Io.
    fn resume<'b>(state: State, io: &'b mut dyn Io) -> Shell<'b> {
        Shell {
            io,
            vars: state.vars,
            order: state.order,
            hostname: state.hostname,
            net: state.net,
            status: state.status,
            steps: state.steps,
        }
    }

    /// A pipeline, one stage after another: each stage's output is the next one's stdin, the
    /// last stage's goes where the shell's goes.
    fn pipe(&mut self, stages: &[Node]) -> Flow {
        let mut input: Option<Vec<u8>> = None;
        let mut last = Flow::Status(0);
        for (i, stage) in stages.iter().enumerate() {
            let state = self.state();
            let mut capture = Capture {
                inner: &mut *self.io,
                captured: Vec::new(),
                stdin: input.take().map(Some),
                keep: i + 1 < stages.len(),
            };
            let (flow, steps) = {
                let mut sub = Shell::resume(state, &mut capture);
                let flow = sub.node(stage);
                (flow, sub.steps)
            };
            self.steps = steps;
            last = match flow {
                Flow::Stop => return Flow::Stop,
                Flow::Exit(code) => Flow::Status(code),
                other => other,
            };
            input = Some(capture.captured);
        }
        last
    }
}

/// An Io that keeps stdout (for `$(…)` and pipelines) and may feed stdin from a buffer.
struct Capture<'a> {
    inner: &'a mut dyn Io,
    captured: Vec<u8>,
    /// Stdout is kept (else passed on).
    keep: bool,
    /// `Some(Some(bytes))`: stdin is these bytes; `Some(None)`: they were read.
    stdin: Option<Option<Vec<u8>>>,
}

impl Io for Capture<'_> {
    fn now(&self) -> jiff::Timestamp {
        self.inner.now()
    }
    fn sleep(&mut self, duration: Duration) -> bool {
        self.inner.sleep(duration)
    }
    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool {
        match fd {
            Fd::Out if self.keep => {
                self.captured.extend_from_slice(bytes);
                true
            }
            _ => self.inner.write(fd, bytes),
        }
    }
    fn read(&mut self) -> Option<Vec<u8>> {
        match &mut self.stdin {
            Some(feed) => feed.take(),
            None => self.inner.read(),
        }
    }
    fn tty(&self) -> bool {
        self.inner.tty()
    }
}

#[cfg(test)]
mod tests;
