//! `nc`, as the busybox image's netcat (busybox's `nc_bloaty`, nc 1.10's options) behaves, over
//! a [`Net`] the container runtime provides: the client dials a host and port, the network
//! says what is there ([`Reach`]), and a listener's `-e` program runs with what the client sent
//! as its stdin, its stdout going back to the client.
//!
//! The exchange is one request and one answer: the client's whole stdin is sent, then the
//! server's program runs to its end. Options: `-l`, `-k`, `-p PORT`, `-u`, `-v` (twice: more),
//! `-w SECS`, `-z`, `-n`, `-e PROG ARGS…` (and `-<flags>e`), `-s`, `-i`, `-o` (accepted).
//! Messages are busybox's: a refused connection is silent unless `-vv`, a timeout is reported
//! with `-v`, a name that does not resolve always (`nc: bad address 'x'`).

use std::fmt::Debug;
use std::net::Ipv4Addr;
use std::time::Duration;

use super::{Context, Fd, Flow, Io, Shell};

/// How long a TCP connect to an address nobody answers takes without `-w` (Linux's SYN
/// retries).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(127);

/// A connection's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    Tcp,
    Udp,
}

/// A listening program at the other end.
#[derive(Debug, Clone)]
pub struct Listener {
    /// The listening container's environment and hostname.
    pub context: Context,
    /// Its `-e` program (empty: none; what the client sends is printed in the server's log
    /// and nothing comes back).
    pub program: Vec<String>,
    /// When the listening container started (a connection before then is refused).
    pub since: Option<jiff::Timestamp>,
}

/// What dialing a host and port finds.
#[derive(Debug, Clone)]
pub enum Reach {
    /// A name that does not resolve.
    BadAddress,
    /// Refused: nothing listens there (a TCP reset, an ICMP port unreachable).
    Refused(Ipv4Addr),
    /// Nothing answers at all (no such host).
    Silent(Ipv4Addr),
    /// A listener accepts.
    Open(Ipv4Addr, Listener),
}

/// The network as seen from one container.
pub trait Net: Send + Sync + Debug {
    /// What is at `host` (an address or a name), `port`, `protocol`.
    fn reach(&self, host: &str, port: u16, protocol: Protocol) -> Reach;
}

/// `nc`'s command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    pub listen: bool,
    pub keep: bool,
    /// `-p`: the port listened on (a client's local port).
    pub port: Option<u16>,
    pub udp: bool,
    pub verbose: u8,
    /// `-w`: seconds.
    pub wait: Option<u64>,
    pub zero: bool,
    /// `-e PROG ARGS…`.
    pub program: Vec<String>,
    /// Host and port.
    pub operands: Vec<String>,
}

const USAGE: &str = "Usage: nc [OPTIONS] HOST PORT  - connect\n\
nc [OPTIONS] -l -p PORT [HOST] [PORT]  - listen\n";

/// Parses `nc`'s arguments (after the program name), busybox's way: everything after `-e` (or
/// a flag group ending in `e`) is the program; options may come after operands.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut rest: &[String] = args;
    let mut own: Vec<String> = Vec::new();
    while let Some((arg, tail)) = rest.split_first() {
        if arg == "-e" {
            options.program = tail.to_vec();
            break;
        }
        if let Some(flags) = arg.strip_prefix('-')
            && let Some(before) = flags.strip_suffix('e')
            && before.chars().all(|c| "nuvlkz".contains(c))
            && !before.is_empty()
        {
            own.push(format!("-{before}"));
            options.program = tail.to_vec();
            break;
        }
        own.push(arg.clone());
        rest = tail;
    }
    let mut i = 0;
    let mut only_operands = false;
    while i < own.len() {
        let arg = &own[i];
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            options.operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        for (at, flag) in arg[1..].char_indices() {
            match flag {
                's' | 'i' | 'o' | 'p' | 'w' => {
                    let attached = &arg[1 + at + 1..];
                    let value = if attached.is_empty() {
                        let value = own.get(i).cloned().ok_or_else(|| {
                            format!("nc: option requires an argument -- '{flag}'\n{USAGE}")
                        })?;
                        i += 1;
                        value
                    } else {
                        attached.to_owned()
                    };
                    match flag {
                        'p' => {
                            let port = value
                                .parse::<u16>()
                                .ok()
                                .filter(|p| *p != 0)
                                .ok_or_else(|| format!("nc: bad local port '{value}'\n"))?;
                            options.port = Some(port);
                        }
                        'w' => {
                            let secs = value
                                .parse::<u64>()
                                .map_err(|_| format!("nc: invalid number '{value}'\n"))?;
                            options.wait = Some(secs).filter(|s| *s > 0);
                        }
                        _ => {}
                    }
                    break;
                }
                'n' => {}
                'u' => options.udp = true,
                'v' => options.verbose = options.verbose.saturating_add(1),
                'l' => options.listen = true,
                'k' => options.keep = true,
                'z' => options.zero = true,
                other => return Err(format!("nc: invalid option -- '{other}'\n{USAGE}")),
            }
        }
    }
    if options.operands.len() > 2 {
        return Err(USAGE.to_owned());
    }
    Ok(options)
}

/// The protocol and port `argv` listens on when it is an `nc -l` listener (directly, or as the
/// only command of `sh -c`), with its options.
pub fn listener(argv: &[String]) -> Option<Options> {
    let (program, args) = argv.split_first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if name == "nc" {
        return parse(args).ok().filter(|o| o.listen && o.port.is_some());
    }
    if super::builtins::is_shell(name)
        && let [c, script, ..] = args
        && c == "-c"
        && let Ok(super::parse::Node::Simple { assignments, words }) = super::parse::parse(script)
        && assignments.is_empty()
    {
        let mut literal = Vec::new();
        for word in &words {
            let mut text = String::new();
            for part in word {
                match part {
                    super::parse::Part::Text { text: t, .. } => text.push_str(t),
                    _ => return None,
                }
            }
            literal.push(text);
        }
        if literal.first().is_some_and(|w| w == "exec") {
            literal.remove(0);
        }
        return listener(&literal);
    }
    None
}

/// The server's side of a connection: its program's stdin is what the client sent, its stdout
/// goes to the client (as the client's output), its stderr to the server's log (not here).
struct Served<'a> {
    client: &'a mut dyn Io,
    input: Option<Vec<u8>>,
}

impl Io for Served<'_> {
    fn now(&self) -> jiff::Timestamp {
        self.client.now()
    }
    fn sleep(&mut self, duration: Duration) -> bool {
        self.client.sleep(duration)
    }
    fn write(&mut self, fd: Fd, bytes: &[u8]) -> bool {
        match fd {
            Fd::Out => self.client.write(Fd::Out, bytes),
            Fd::Err => true,
        }
    }
    fn read(&mut self) -> Option<Vec<u8>> {
        self.input.take().filter(|i| !i.is_empty())
    }
}

impl Shell<'_> {
    /// `nc ARGS…`.
    pub(super) fn nc(&mut self, args: &[String]) -> Flow {
        let options = match parse(args) {
            Ok(options) => options,
            Err(message) => {
                return if self.err(&message) {
                    Flow::Status(1)
                } else {
                    Flow::Stop
                };
            }
        };
        if options.listen {
            return self.nc_listen(&options);
        }
        let [host, rest @ ..] = options.operands.as_slice() else {
            return if self.err(USAGE) {
                Flow::Status(1)
            } else {
                Flow::Stop
            };
        };
        if !options.program.is_empty() {
            return self.not_modelled(&["nc -e (outbound)".to_owned()]);
        }
        // A port that is not a number is port 0 (busybox looks service names up; none here).
        let port = rest
            .first()
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or(0);
        let protocol = if options.udp {
            Protocol::Udp
        } else {
            Protocol::Tcp
        };
        let reach = match &self.net {
            Some(net) => net.reach(host, port, protocol),
            None => match host.parse::<Ipv4Addr>() {
                Ok(address) => Reach::Silent(address),
                Err(_) => Reach::BadAddress,
            },
        };
        let reach = match reach {
            Reach::Open(address, listener)
                if listener.since.is_some_and(|since| since > self.io.now()) =>
            {
                Reach::Refused(address)
            }
            other => other,
        };
        let address = match &reach {
            Reach::BadAddress => {
                return self.status_or_stop(1, &format!("nc: bad address '{host}'\n"));
            }
            Reach::Refused(a) | Reach::Silent(a) | Reach::Open(a, _) => *a,
        };
        let dotted = format!("{host} ({address}:{port})");
        match protocol {
            Protocol::Tcp => self.nc_tcp(&options, reach, &dotted),
            Protocol::Udp => self.nc_udp(&options, reach, &dotted),
        }
    }

    fn status_or_stop(&mut self, code: i32, message: &str) -> Flow {
        if message.is_empty() || self.err(message) {
            Flow::Status(code)
        } else {
            Flow::Stop
        }
    }

    fn nc_listen(&mut self, options: &Options) -> Flow {
        if options.verbose > 0 {
            let port = options.port.unwrap_or(0);
            if !self.err(&format!("listening on [::]:{port} ...\n")) {
                return Flow::Stop;
            }
        }
        // Connections are not recorded: the listener waits (for `-w` seconds, then gives up).
        match options.wait {
            Some(secs) if self.io.sleep(Duration::from_secs(secs)) => {
                self.status_or_stop(1, "nc: timeout\n")
            }
            Some(_) => Flow::Stop,
            None => {
                self.io.sleep(Duration::MAX);
                Flow::Stop
            }
        }
    }

    /// Everything on stdin (the client sends it all before the answer comes).
    fn all_stdin(&mut self) -> Vec<u8> {
        let mut input = Vec::new();
        while let Some(chunk) = self.io.read() {
            input.extend_from_slice(&chunk);
        }
        input
    }

    /// Runs the listener's program with `input` as its stdin; its output is ours.
    fn serve(&mut self, listener: &Listener, input: Vec<u8>) -> Flow {
        if listener.program.is_empty() {
            return Flow::Status(0);
        }
        let mut served = Served {
            client: &mut *self.io,
            input: Some(input),
        };
        let mut server = Shell::new(&listener.context, &mut served);
        // The server's program has no network of its own here (no chains of connections).
        server.net = None;
        match server.run_argv(&listener.program) {
            Flow::Stop => Flow::Stop,
            _ => Flow::Status(0),
        }
    }

    fn nc_tcp(&mut self, options: &Options, reach: Reach, dotted: &str) -> Flow {
        match reach {
            Reach::BadAddress => Flow::Status(1),
            Reach::Refused(_) => {
                let message = if options.verbose > 1 {
                    format!("nc: {dotted}: Connection refused\n")
                } else {
                    String::new()
                };
                self.status_or_stop(1, &message)
            }
            Reach::Silent(_) => {
                let wait = options.wait.map_or(CONNECT_TIMEOUT, Duration::from_secs);
                if !self.io.sleep(wait) {
                    return Flow::Stop;
                }
                let message = if options.verbose > 0 {
                    format!("nc: {dotted}: Connection timed out\n")
                } else {
                    String::new()
                };
                self.status_or_stop(1, &message)
            }
            Reach::Open(_, listener) => {
                if options.verbose > 0 && !self.err(&format!("{dotted} open\n")) {
                    return Flow::Stop;
                }
                if options.zero {
                    return Flow::Status(0);
                }
                let input = self.all_stdin();
                self.serve(&listener, input)
            }
        }
    }

    fn nc_udp(&mut self, options: &Options, reach: Reach, dotted: &str) -> Flow {
        if let Reach::BadAddress = reach {
            return Flow::Status(1);
        }
        if options.zero {
            // busybox's udptest: a byte, a pause, another byte; an ICMP error in between
            // fails the second write.
            let pause = options
                .wait
                .map_or(Duration::from_secs(5), Duration::from_secs);
            if let Reach::Refused(_) = reach {
                let message = if options.verbose > 1 {
                    format!("nc: {dotted}: Connection refused\n")
                } else {
                    String::new()
                };
                return self.status_or_stop(1, &message);
            }
            if !matches!(reach, Reach::Open(..)) && !self.io.sleep(pause) {
                return Flow::Stop;
            }
            return if options.verbose > 0 {
                self.status_or_stop(0, &format!("{dotted} open\n"))
            } else {
                Flow::Status(0)
            };
        }
        // A UDP "connect" always succeeds.
        if options.verbose > 0 && !self.err(&format!("{dotted} open\n")) {
            return Flow::Stop;
        }
        let input = self.all_stdin();
        if !input.is_empty() {
            match &reach {
                Reach::Refused(_) => {
                    // The ICMP error ends the network side; stdin is done too: exit 0.
                    let message = if options.verbose > 1 {
                        "nc: net read: Connection refused\n"
                    } else {
                        ""
                    };
                    return self.status_or_stop(0, message);
                }
                Reach::Open(_, listener) => {
                    if let Flow::Stop = self.serve(listener, input) {
                        return Flow::Stop;
                    }
                }
                _ => {}
            }
        }
        // Then it waits for more datagrams: forever, or until twice `-w` passed in silence.
        match options.wait {
            Some(secs) => {
                if self.io.sleep(Duration::from_secs(secs.saturating_mul(2))) {
                    Flow::Status(0)
                } else {
                    Flow::Stop
                }
            }
            None => {
                self.io.sleep(Duration::MAX);
                Flow::Stop
            }
        }
    }
}

#[cfg(test)]
mod tests;
