//! `nc` against a fake network: options, the exchange, and busybox's failures.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use super::{Listener, Net, Options, Protocol, Reach, listener, parse};
use crate::runtime::shell::{Context, Fd, Flow, Io, Shell};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// `10.96.0.5` has TCP and UDP listeners on 42 answering `echo hello`; `10.96.0.6` refuses;
/// `hello` is its name; anything else is silent, or a bad name.
#[derive(Debug)]
struct Fake {
    started: Option<jiff::Timestamp>,
}

impl Net for Fake {
    fn reach(&self, host: &str, port: u16, protocol: Protocol) -> Reach {
        let address: Ipv4Addr = match host {
            "hello" => Ipv4Addr::new(10, 96, 0, 5),
            other => match other.parse() {
                Ok(a) => a,
                Err(_) => return Reach::BadAddress,
            },
        };
        if address == Ipv4Addr::new(10, 96, 0, 5) && port == 42 {
            let program = match protocol {
                Protocol::Tcp => words("echo hello"),
                Protocol::Udp => vec!["sh".into(), "-c".into(), "cat; echo hello".into()],
            };
            return Reach::Open(
                address,
                Listener {
                    context: Context {
                        hostname: "hello-0".into(),
                        ..Context::default()
                    },
                    program,
                    since: self.started,
                },
            );
        }
        if address == Ipv4Addr::new(10, 96, 0, 6) || address == Ipv4Addr::new(10, 96, 0, 5) {
            return Reach::Refused(address);
        }
        Reach::Silent(address)
    }
}

#[derive(Default)]
struct Clock {
    now: Duration,
    horizon: Duration,
    out: String,
    err: String,
}

impl Io for Clock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::UNIX_EPOCH + jiff::SignedDuration::try_from(self.now).expect("small")
    }
    fn sleep(&mut self, duration: Duration) -> bool {
        let next = self.now.saturating_add(duration);
        if next > self.horizon {
            self.now = self.horizon;
            return false;
        }
        self.now = next;
        true
    }
    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes);
        match fd {
            Fd::Out => self.out.push_str(&text),
            Fd::Err => self.err.push_str(&text),
        }
        true
    }
    fn read(&mut self) -> Option<Vec<u8>> {
        None
    }
}

fn run_with(source: &str, started: Option<jiff::Timestamp>) -> (Flow, Clock) {
    let mut io = Clock {
        horizon: Duration::from_secs(3600),
        ..Clock::default()
    };
    let context = Context {
        hostname: "client".into(),
        net: Some(Arc::new(Fake { started })),
        ..Context::default()
    };
    let flow = Shell::new(&context, &mut io).run_script(source);
    (flow, io)
}

fn run(source: &str) -> (Flow, Clock) {
    run_with(source, None)
}

#[test]
fn karmadas_listener_command_lines_parse() {
    let tcp = parse(&words("-lk -p 42 -v -e echo hello")).expect("parses");
    assert_eq!(
        tcp,
        Options {
            listen: true,
            keep: true,
            port: Some(42),
            verbose: 1,
            program: words("echo hello"),
            ..Options::default()
        }
    );
    let udp = parse(&words("-lk -p 42 -u -v -e echo hello")).expect("parses");
    assert!(udp.udp && udp.listen && udp.port == Some(42));
    // Flag groups, attached values, `-<flags>e`, options after operands.
    let grouped = parse(&words("-lkp42 -vve cat -")).expect("parses");
    assert_eq!(grouped.port, Some(42));
    assert_eq!(grouped.verbose, 2);
    assert_eq!(grouped.program, words("cat -"));
    let client = parse(&words("10.0.0.1 80 -w 3 -z")).expect("parses");
    assert_eq!(client.operands, words("10.0.0.1 80"));
    assert_eq!((client.wait, client.zero), (Some(3), true));
    assert!(parse(&words("-x")).is_err());
    assert!(parse(&words("-l -p nope")).is_err());
}

#[test]
fn listeners_are_found_directly_or_as_the_only_command_of_sh_c() {
    let found = listener(&words("nc -lk -p 42 -e echo hello")).expect("a listener");
    assert_eq!(found.port, Some(42));
    let script = vec![
        "sh".into(),
        "-c".into(),
        "exec nc -l -u -p 53 -e cat".into(),
    ];
    let found = listener(&script).expect("a listener");
    assert!(found.udp && found.port == Some(53));
    assert!(listener(&words("nc 10.0.0.1 42")).is_none(), "a client");
    assert!(listener(&words("nc -l")).is_none(), "no port");
    assert!(listener(&words("sleep 10")).is_none());
}

#[test]
fn a_tcp_client_prints_what_the_listeners_program_wrote() {
    let (flow, io) = run("nc 10.96.0.5 42");
    assert_eq!(flow, Flow::Status(0));
    assert_eq!(io.out, "hello\n");
    assert_eq!(io.err, "");
    let (_, io) = run("nc -v hello 42");
    assert_eq!(io.out, "hello\n");
    assert_eq!(io.err, "hello (10.96.0.5:42) open\n");
}

#[test]
fn a_udp_client_sends_its_stdin_and_then_waits() {
    let (flow, io) = run("echo hi | nc -u 10.96.0.5 42");
    assert_eq!(
        io.out, "hi\nhello\n",
        "the server read the datagram, then answered"
    );
    assert_eq!(flow, Flow::Stop, "it waits for more until the horizon");
    let (flow, io) = run("echo hi | nc -u -w 1 10.96.0.5 42; echo done");
    assert_eq!(io.out, "hi\nhello\ndone\n");
    assert_eq!(flow, Flow::Status(0));
    assert_eq!(io.now, Duration::from_secs(2), "twice -w in silence");
    // Nothing sent, nothing answered.
    let (_, io) = run("nc -u -w 1 10.96.0.5 42");
    assert_eq!(io.out, "");
    // Refused: the ICMP error ends it at once, status 0 as busybox's.
    let (flow, io) = run("echo hi | nc -u 10.96.0.6 42; echo $?");
    assert_eq!((flow, io.out.as_str()), (Flow::Status(0), "0\n"));
}

#[test]
fn failures_are_busyboxs() {
    // Refused: silent unless -vv, status 1.
    let (_, io) = run("nc 10.96.0.6 42; echo $?");
    assert_eq!((io.out.as_str(), io.err.as_str()), ("1\n", ""));
    let (_, io) = run("nc -vv 10.96.0.6 42");
    assert_eq!(io.err, "nc: 10.96.0.6 (10.96.0.6:42): Connection refused\n");
    // Wrong port of a listening host: refused too.
    let (_, io) = run("nc -vv 10.96.0.5 43; echo $?");
    assert_eq!(io.out, "1\n");
    // Nobody there: the connect times out (the kernel's 127 s, or -w).
    let (_, io) = run("nc -v 10.1.2.3 42; echo $?");
    assert_eq!(io.err, "nc: 10.1.2.3 (10.1.2.3:42): Connection timed out\n");
    assert_eq!(io.out, "1\n");
    assert_eq!(io.now, super::CONNECT_TIMEOUT);
    let (_, io) = run("nc -w 2 10.1.2.3 42");
    assert_eq!(io.now, Duration::from_secs(2));
    // A name that does not resolve.
    let (_, io) = run("nc nowhere 42; echo $?");
    assert_eq!(io.err, "nc: bad address 'nowhere'\n");
    assert_eq!(io.out, "1\n");
    // -z: connect only.
    let (_, io) = run("nc -z 10.96.0.5 42 && echo up; nc -z 10.96.0.6 42 || echo down");
    assert_eq!(io.out, "up\ndown\n");
}

#[test]
fn a_listener_that_started_after_the_connection_refuses_it() {
    let later = jiff::Timestamp::UNIX_EPOCH + jiff::SignedDuration::from_secs(10);
    let (_, io) = run_with(
        "nc 10.96.0.5 42; echo $?; sleep 20; nc 10.96.0.5 42",
        Some(later),
    );
    assert_eq!(io.out, "1\nhello\n");
}

#[test]
fn a_listener_logs_its_port_with_v_and_waits() {
    let (flow, io) = run("nc -lk -p 42 -v -e echo hello");
    assert_eq!(io.err, "listening on [::]:42 ...\n");
    assert_eq!(flow, Flow::Stop);
    let (flow, io) = run("nc -l -p 42 -w 5");
    assert_eq!((flow, io.err.as_str()), (Flow::Status(1), "nc: timeout\n"));
}
