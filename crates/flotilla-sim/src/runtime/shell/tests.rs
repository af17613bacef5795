//! The interpreter against a virtual clock: what a script prints, when, and how it ends.

use std::time::Duration;

use super::{Context, Fd, Flow, Io, Shell, sleep_duration};

/// A virtual clock in seconds from 0, stdout and stderr kept apart with the time of each write.
#[derive(Default)]
struct Test {
    now: Duration,
    horizon: Option<Duration>,
    out: String,
    err: String,
    stamps: Vec<(u64, String)>,
    stdin: Vec<Vec<u8>>,
}

impl Io for Test {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::UNIX_EPOCH + jiff::SignedDuration::try_from(self.now).expect("small")
    }
    fn sleep(&mut self, duration: Duration) -> bool {
        let next = self.now.saturating_add(duration);
        match self.horizon {
            Some(h) if next > h => {
                self.now = h;
                false
            }
            _ => {
                self.now = next;
                true
            }
        }
    }
    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes).into_owned();
        self.stamps.push((self.now.as_secs(), text.clone()));
        match fd {
            Fd::Out => self.out.push_str(&text),
            Fd::Err => self.err.push_str(&text),
        }
        true
    }
    fn read(&mut self) -> Option<Vec<u8>> {
        (!self.stdin.is_empty()).then(|| self.stdin.remove(0))
    }
}

fn context() -> Context {
    Context {
        env: vec![
            ("PATH".into(), "/bin".into()),
            ("GREETING".into(), "hello world".into()),
        ],
        hostname: "web-0".into(),
        net: None,
    }
}

fn script(source: &str) -> (Flow, Test) {
    let mut io = Test {
        horizon: Some(Duration::from_secs(3600)),
        ..Test::default()
    };
    let flow = Shell::new(&context(), &mut io).run_argv(&[
        "sh".to_owned(),
        "-c".to_owned(),
        source.to_owned(),
    ]);
    (flow, io)
}

fn argv(args: &[&str]) -> (Flow, Test) {
    let mut io = Test::default();
    let argv: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let flow = Shell::new(&context(), &mut io).run_argv(&argv);
    (flow, io)
}

#[test]
fn echo_and_printf_print_what_busybox_prints() {
    assert_eq!(argv(&["echo", "hello"]).1.out, "hello\n");
    assert_eq!(argv(&["/bin/echo", "-n", "a", "b"]).1.out, "a b");
    assert_eq!(argv(&["echo", "-e", "a\\tb"]).1.out, "a\tb\n");
    assert_eq!(argv(&["echo", "-x"]).1.out, "-x\n");
    assert_eq!(
        argv(&["printf", "%s=%d\\n", "a", "1", "b", "2"]).1.out,
        "a=1\nb=2\n"
    );
    assert_eq!(
        argv(&["printf", "[%5s|%-3s|%03d]%%\\n", "ab", "c", "7"])
            .1
            .out,
        "[   ab|c  |007]%\n"
    );
}

#[test]
fn sequencing_and_status_operators() {
    let (flow, io) = script("echo a; false && echo no; true && echo b || echo no; false || echo c");
    assert_eq!(io.out, "a\nb\nc\n");
    assert_eq!(flow, Flow::Status(0));
    let (flow, io) = script("echo before; exit 3; echo after");
    assert_eq!((flow, io.out.as_str()), (Flow::Status(3), "before\n"));
    assert_eq!(script("false").0, Flow::Status(1));
    assert_eq!(script("false; echo $?").1.out, "1\n");
    assert_eq!(script("! false").0, Flow::Status(0));
}

#[test]
fn variables_quotes_and_substitution() {
    let (_, io) = script("echo \"$GREETING\" '$GREETING' ${GREETING}!; X=1; echo x=$X");
    assert_eq!(io.out, "hello world $GREETING hello world!\nx=1\n");
    let (_, io) = script("for w in $GREETING; do echo \"<$w>\"; done");
    assert_eq!(io.out, "<hello>\n<world>\n");
    assert_eq!(script("echo \"I am $(hostname)\"").1.out, "I am web-0\n");
    assert_eq!(script("echo a | cat").1.out, "a\n");
    assert_eq!(
        script("for i in $(seq 3); do printf %s $i; done").1.out,
        "123"
    );
}

#[test]
fn sleep_moves_the_clock_and_stamps_the_output() {
    let (flow, io) = script("echo start; sleep 2; echo two; sleep 0.5m; echo thirty-two");
    assert_eq!(flow, Flow::Status(0));
    assert_eq!(
        io.stamps,
        [
            (0, "start\n".into()),
            (2, "two\n".into()),
            (32, "thirty-two\n".into())
        ]
    );
    assert_eq!(sleep_duration("1.5"), Some(Duration::from_millis(1500)));
    assert_eq!(sleep_duration("infinity"), Some(Duration::MAX));
    assert_eq!(sleep_duration("x"), None);
    let (flow, io) = script("sleep x");
    assert_eq!(
        (flow, io.err.as_str()),
        (Flow::Status(1), "sleep: invalid number 'x'\n")
    );
}

#[test]
fn an_endless_loop_stops_at_the_horizon() {
    let (flow, io) = script("i=0; while true; do echo tick; sleep 600; done");
    assert_eq!(flow, Flow::Stop);
    assert_eq!(
        io.out.lines().count(),
        7,
        "0, 10, 20 … 60 minutes: {}",
        io.out
    );
    let (flow, io) = script("while :; do :; done");
    assert_eq!(
        (flow, io.out.as_str()),
        (Flow::Stop, ""),
        "the step budget ends a busy loop"
    );
    let (_, io) =
        script("for i in 1 2; do if [ $i -eq 1 ]; then echo one; else echo other; fi; done");
    assert_eq!(io.out, "one\nother\n");
    let (_, io) = script("n=3; until [ $n = 0 ]; do echo $n; n=$(echo $n | sed s/3/0/); done");
    assert!(io.err.contains("sed: not found"), "{}", io.err);
}

#[test]
fn env_printenv_hostname_and_cat() {
    let (_, io) = argv(&["env"]);
    assert_eq!(io.out, "PATH=/bin\nGREETING=hello world\n");
    assert_eq!(argv(&["printenv", "GREETING"]).1.out, "hello world\n");
    assert_eq!(argv(&["printenv", "NOPE"]).0, Flow::Status(1));
    assert_eq!(argv(&["hostname"]).1.out, "web-0\n");
    assert_eq!(argv(&["cat", "/etc/hostname"]).1.out, "web-0\n");
    let (flow, io) = argv(&["cat", "/etc/passwd"]);
    assert_eq!(flow, Flow::Status(1));
    assert_eq!(
        io.err,
        "cat: can't open '/etc/passwd': No such file or directory\n"
    );
    let mut io = Test {
        stdin: vec![b"from ".to_vec(), b"stdin\n".to_vec()],
        ..Test::default()
    };
    let flow = Shell::new(&context(), &mut io).run_argv(&["cat".to_owned()]);
    assert_eq!((flow, io.out.as_str()), (Flow::Status(0), "from stdin\n"));
}

#[test]
fn sh_reads_its_script_from_stdin() {
    let mut io = Test {
        stdin: vec![
            b"echo one\nfor i in a b\n".to_vec(),
            b"do echo $i; done\nexit 4\n".to_vec(),
        ],
        ..Test::default()
    };
    let flow = Shell::new(&context(), &mut io).run_argv(&["sh".to_owned()]);
    assert_eq!((flow, io.out.as_str()), (Flow::Status(4), "one\na\nb\n"));
}

#[test]
fn unknown_commands_say_they_are_not_modelled() {
    let (flow, io) = argv(&["ls", "/"]);
    assert_eq!(flow, Flow::Status(127));
    assert!(
        io.err
            .starts_with("sh: ls: not found (the flotilla simulator models only: echo"),
        "{}",
        io.err
    );
    let (flow, io) = script("echo 'unterminated");
    assert_eq!(flow, Flow::Status(2));
    assert!(io.err.contains("unterminated"), "{}", io.err);
}
