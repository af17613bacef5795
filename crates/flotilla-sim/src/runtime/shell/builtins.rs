//! The commands the simulated containers know, busybox-style.

use std::time::Duration;

use super::{Fd, Flow, Shell};

/// Every command name modelled (for the message about the others).
pub const MODELLED: &[&str] = &[
    "echo", "printf", "sh", "sleep", "true", "false", "exit", "env", "printenv", "hostname", "cat",
    "date", "seq", "test", "[", "export", "unset", "cd", "pwd", "tail", "yes", ":", "nc",
];

const SHELLS: &[&str] = &["sh", "bash", "ash", "dash", "zsh"];

/// Whether `program` (a path or a name) is a command the model runs.
pub fn is_modelled(program: &str) -> bool {
    let name = basename(program);
    MODELLED.contains(&name) || SHELLS.contains(&name)
}

/// Whether `name` (a basename) is a shell.
pub(super) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// `sleep`'s operand: seconds with an optional `s`/`m`/`h`/`d` suffix, or `infinity`.
pub fn sleep_duration(arg: &str) -> Option<Duration> {
    if arg == "inf" || arg == "infinity" {
        return Some(Duration::MAX);
    }
    let (number, unit) = match arg.char_indices().last() {
        Some((i, c @ ('s' | 'm' | 'h' | 'd'))) => (&arg[..i], c),
        _ => (arg, 's'),
    };
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let factor = match unit {
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86400.0,
        _ => 1.0,
    };
    Duration::try_from_secs_f64(value * factor).ok()
}

/// `echo`'s and `printf`'s backslash escapes.
fn escapes(text: &str) -> (String, bool) {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('e') => out.push('\u{1b}'),
            Some('c') => return (out, true),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    (out, false)
}

/// `printf FORMAT ARGS…` (the format is reused while arguments remain, as POSIX says).
pub fn printf(format: &str, args: &[String]) -> (String, bool) {
    let mut out = String::new();
    let mut args = args.iter();
    let mut ok = true;
    loop {
        let mut consumed = false;
        let mut chars = format.chars().peekable();
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            if c != '%' {
                literal.push(c);
                continue;
            }
            out.push_str(&escapes(&std::mem::take(&mut literal)).0);
            let mut spec = String::new();
            while let Some(&n) = chars.peek() {
                if n == '-' || n == '0' || n.is_ascii_digit() || n == '.' {
                    spec.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            let Some(conversion) = chars.next() else {
                out.push('%');
                break;
            };
            let left = spec.starts_with('-');
            let zero = spec.starts_with('0');
            let width: usize = spec
                .trim_start_matches(['-', '0'])
                .split('.')
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or(0);
            let pad = |text: String| -> String {
                if text.chars().count() >= width {
                    text
                } else if left {
                    format!("{text:<width$}")
                } else if zero {
                    format!("{text:0>width$}")
                } else {
                    format!("{text:>width$}")
                }
            };
            match conversion {
                '%' => out.push('%'),
                's' | 'b' => {
                    consumed = true;
                    let arg = args.next().map(String::as_str).unwrap_or("");
                    let text = if conversion == 'b' {
                        escapes(arg).0
                    } else {
                        arg.to_owned()
                    };
                    out.push_str(&pad(text));
                }
                'd' | 'i' | 'u' => {
                    consumed = true;
                    let arg = args.next().map(String::as_str).unwrap_or("0");
                    let value = arg.trim().parse::<i64>().unwrap_or_else(|_| {
                        ok = false;
                        0
                    });
                    out.push_str(&pad(value.to_string()));
                }
                'c' => {
                    consumed = true;
                    let arg = args.next().map(String::as_str).unwrap_or("");
                    out.push_str(&arg.chars().take(1).collect::<String>());
                }
                other => {
                    out.push('%');
                    out.push_str(&spec);
                    out.push(other);
                }
            }
        }
        out.push_str(&escapes(&literal).0);
        if !consumed || args.len() == 0 {
            break;
        }
    }
    (out, ok)
}

/// `test` / `[`: strings, integers, and the few paths a simulated container has.
fn test(args: &[String]) -> Result<bool, String> {
    let int = |s: &str| {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("{s}: bad number"))
    };
    let path_exists = |p: &str| matches!(p, "/" | "/etc" | "/etc/hostname" | "/tmp" | "/dev/null");
    match args {
        [] => Ok(false),
        [s] => Ok(!s.is_empty()),
        [not, rest @ ..] if not == "!" => test(rest).map(|b| !b),
        [op, s] => match op.as_str() {
            "-n" => Ok(!s.is_empty()),
            "-z" => Ok(s.is_empty()),
            "-e" | "-f" | "-r" => Ok(path_exists(s) && (op != "-f" || s == "/etc/hostname")),
            "-d" => Ok(matches!(s.as_str(), "/" | "/etc" | "/tmp")),
            _ => Err(format!("{op}: unary operator expected")),
        },
        [a, op, b] => match op.as_str() {
            "=" | "==" => Ok(a == b),
            "!=" => Ok(a != b),
            "-eq" => Ok(int(a)? == int(b)?),
            "-ne" => Ok(int(a)? != int(b)?),
            "-lt" => Ok(int(a)? < int(b)?),
            "-le" => Ok(int(a)? <= int(b)?),
            "-gt" => Ok(int(a)? > int(b)?),
            "-ge" => Ok(int(a)? >= int(b)?),
            _ => Err(format!("{op}: binary operator expected")),
        },
        [a, and, rest @ ..] if and == "-a" || and == "-o" => {
            let left = test(std::slice::from_ref(a))?;
            let right = test(rest)?;
            Ok(if and == "-a" {
                left && right
            } else {
                left || right
            })
        }
        _ => Err("too many arguments".into()),
    }
}

/// `date`'s default output: `Mon Jan  2 15:04:05 UTC 2006`.
pub fn date(now: jiff::Timestamp) -> String {
    now.strftime("%a %b %e %H:%M:%S UTC %Y").to_string()
}

impl Shell<'_> {
    /// Runs one command with its arguments.
    pub(super) fn command(&mut self, argv: &[String]) -> Flow {
        let Some((program, args)) = argv.split_first() else {
            return Flow::Status(0);
        };
        let name = basename(program);
        let status = |ok: bool| Flow::Status(i32::from(!ok));
        match name {
            ":" | "true" | "cd" => Flow::Status(0),
            "false" => Flow::Status(1),
            "exit" => {
                let code = match args.first() {
                    None => self.status,
                    Some(a) => match a.parse::<i64>() {
                        Ok(code) => (code & 0xff) as i32,
                        Err(_) => {
                            self.err(&format!("sh: exit: Illegal number: {a}\n"));
                            2
                        }
                    },
                };
                Flow::Exit(code)
            }
            "echo" => {
                let mut newline = true;
                let mut interpret = false;
                let mut rest = args;
                while let Some(flag) = rest.first() {
                    let valid = flag.len() > 1
                        && flag.starts_with('-')
                        && flag[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'));
                    if !valid {
                        break;
                    }
                    for c in flag[1..].chars() {
                        match c {
                            'n' => newline = false,
                            'e' => interpret = true,
                            _ => interpret = false,
                        }
                    }
                    rest = &rest[1..];
                }
                let mut text = rest.join(" ");
                if interpret {
                    let (expanded, stop) = escapes(&text);
                    text = expanded;
                    if stop {
                        newline = false;
                    }
                }
                if newline {
                    text.push('\n');
                }
                self.write_or_stop(Fd::Out, &text, 0)
            }
            "printf" => {
                let Some((format, rest)) = args.split_first() else {
                    self.err("printf: usage: printf FORMAT [ARGUMENT]...\n");
                    return Flow::Status(1);
                };
                let (text, ok) = printf(format, rest);
                self.write_or_stop(Fd::Out, &text, i32::from(!ok))
            }
            "sleep" | "tail" => {
                let duration = if name == "tail" {
                    if !args.iter().any(|a| a == "-f" || a == "-F") {
                        return self.not_modelled(argv);
                    }
                    Some(Duration::MAX)
                } else if args.is_empty() {
                    self.err("sleep: missing operand\n");
                    return Flow::Status(1);
                } else {
                    args.iter()
                        .map(|a| sleep_duration(a).ok_or(a))
                        .try_fold(Duration::ZERO, |sum, d| d.map(|d| sum.saturating_add(d)))
                        .map_err(|bad| {
                            self.err(&format!("sleep: invalid number '{bad}'\n"));
                        })
                        .ok()
                };
                match duration {
                    None => Flow::Status(1),
                    Some(d) if self.io.sleep(d) => Flow::Status(0),
                    Some(_) => Flow::Stop,
                }
            }
            "env" | "printenv" if args.is_empty() => {
                let lines = self.env_lines();
                self.write_or_stop(Fd::Out, &lines, 0)
            }
            "printenv" => {
                let mut out = String::new();
                let mut found = true;
                for name in args {
                    match self.vars.get(name) {
                        Some(value) => out.push_str(&format!("{value}\n")),
                        None => found = false,
                    }
                }
                self.write_or_stop(Fd::Out, &out, i32::from(!found))
            }
            "env" => {
                // `env NAME=value… command…`: the command with those variables.
                let assignments = args.iter().take_while(|a| a.contains('=')).count();
                let mut child_vars = Vec::new();
                for a in &args[..assignments] {
                    if let Some((n, v)) = a.split_once('=') {
                        child_vars.push((n.to_owned(), v.to_owned()));
                    }
                }
                let saved = (self.vars.clone(), self.order.clone());
                for (n, v) in child_vars {
                    self.set(&n, v);
                }
                let flow = if assignments == args.len() {
                    let lines = self.env_lines();
                    self.write_or_stop(Fd::Out, &lines, 0)
                } else {
                    self.command(&args[assignments..])
                };
                (self.vars, self.order) = saved;
                flow
            }
            "export" => {
                for a in args {
                    if let Some((n, v)) = a.split_once('=') {
                        self.set(n, v.to_owned());
                    }
                }
                Flow::Status(0)
            }
            "unset" => {
                for a in args {
                    self.unset(a);
                }
                Flow::Status(0)
            }
            "hostname" => {
                let text = format!("{}\n", self.hostname);
                self.write_or_stop(Fd::Out, &text, 0)
            }
            "pwd" => self.write_or_stop(Fd::Out, "/\n", 0),
            "date" => {
                let text = format!("{}\n", date(self.io.now()));
                self.write_or_stop(Fd::Out, &text, 0)
            }
            "seq" => {
                let numbers: Result<Vec<i64>, _> = args.iter().map(|a| a.parse::<i64>()).collect();
                let (first, step, last) = match numbers.as_deref() {
                    Ok([last]) => (1, 1, *last),
                    Ok([first, last]) => (*first, 1, *last),
                    Ok([first, step, last]) if *step != 0 => (*first, *step, *last),
                    _ => {
                        self.err("seq: invalid arguments\n");
                        return Flow::Status(1);
                    }
                };
                let mut out = String::new();
                let mut n = first;
                while (step > 0 && n <= last) || (step < 0 && n >= last) {
                    out.push_str(&format!("{n}\n"));
                    n += step;
                    if out.len() > 1 << 20 {
                        break;
                    }
                }
                self.write_or_stop(Fd::Out, &out, 0)
            }
            "yes" => {
                let line = format!(
                    "{}\n",
                    if args.is_empty() {
                        "y".to_owned()
                    } else {
                        args.join(" ")
                    }
                );
                loop {
                    if !self.io.write(Fd::Out, line.as_bytes()) || !self.step() {
                        return Flow::Stop;
                    }
                }
            }
            "test" | "[" => {
                let mut operands = args;
                if name == "[" {
                    match operands.split_last() {
                        Some((last, rest)) if last == "]" => operands = rest,
                        _ => {
                            self.err("[: missing ]\n");
                            return Flow::Status(2);
                        }
                    }
                }
                match test(operands) {
                    Ok(result) => status(result),
                    Err(message) => {
                        self.err(&format!("sh: {name}: {message}\n"));
                        Flow::Status(2)
                    }
                }
            }
            "cat" => self.cat(args),
            "nc" => self.nc(args),
            _ if SHELLS.contains(&name) => self.shell(args),
            _ => self.not_modelled(argv),
        }
    }

    fn write_or_stop(&mut self, fd: Fd, text: &str, code: i32) -> Flow {
        if text.is_empty() || self.io.write(fd, text.as_bytes()) {
            Flow::Status(code)
        } else {
            Flow::Stop
        }
    }

    pub(super) fn not_modelled(&mut self, argv: &[String]) -> Flow {
        let message = format!(
            "sh: {}: not found (the flotilla simulator models only: {})\n",
            argv[0],
            MODELLED.join(" ")
        );
        if self.err(&message) {
            Flow::Status(127)
        } else {
            Flow::Stop
        }
    }

    fn cat(&mut self, args: &[String]) -> Flow {
        let files: Vec<&str> = if args.is_empty() {
            vec!["-"]
        } else {
            args.iter()
                .map(String::as_str)
                .filter(|a| *a != "-u")
                .collect()
        };
        let mut code = 0;
        for file in files {
            match file {
                "-" => {
                    while let Some(chunk) = self.io.read() {
                        if !self.io.write(Fd::Out, &chunk) {
                            return Flow::Stop;
                        }
                    }
                }
                "/etc/hostname" => {
                    let text = format!("{}\n", self.hostname);
                    if !self.io.write(Fd::Out, text.as_bytes()) {
                        return Flow::Stop;
                    }
                }
                "/dev/null" => {}
                other => {
                    self.err(&format!(
                        "cat: can't open '{other}': No such file or directory\n"
                    ));
                    code = 1;
                }
            }
        }
        Flow::Status(code)
    }

    /// `sh -c SCRIPT [NAME ARGS…]`, or `sh` reading its script from stdin.
    fn shell(&mut self, args: &[String]) -> Flow {
        let mut rest = args;
        while let Some(flag) = rest.first().filter(|f| f.starts_with('-') && *f != "-c") {
            // -e, -x, -l … are accepted and ignored.
            let _ = flag;
            rest = &rest[1..];
        }
        match rest {
            [c, script, ..] if c == "-c" => {
                let state = self.state();
                let mut sub = Shell::resume(state, &mut *self.io);
                let flow = sub.run_script(script);
                self.steps = sub.steps;
                flow
            }
            [c] if c == "-c" => {
                self.err("sh: -c requires an argument\n");
                Flow::Status(2)
            }
            [] => self.interactive(),
            [file, ..] => {
                self.err(&format!(
                    "sh: can't open '{file}': No such file or directory\n"
                ));
                Flow::Status(2)
            }
        }
    }

    /// A shell reading commands from stdin: each complete command runs as it arrives. On a
    /// terminal it prompts, echoes what is typed and handles backspace, ^C and ^D.
    fn interactive(&mut self) -> Flow {
        let tty = self.io.tty();
        let prompt = "/ # ";
        let mut pending = String::new();
        let mut line = String::new();
        if tty && !self.out(prompt) {
            return Flow::Stop;
        }
        let mut escape = 0;
        while let Some(chunk) = self.io.read() {
            let text = String::from_utf8_lossy(&chunk).into_owned();
            for c in text.chars() {
                if escape > 0 {
                    // The rest of an escape sequence (arrow keys): ignored.
                    escape = if c.is_ascii_alphabetic() || c == '~' {
                        0
                    } else {
                        escape - 1
                    };
                    continue;
                }
                match c {
                    '\u{1b}' if tty => escape = 4,
                    '\u{3}' if tty => {
                        line.clear();
                        pending.clear();
                        if !self.out(&format!("^C\n{prompt}")) {
                            return Flow::Stop;
                        }
                    }
                    '\u{4}' if tty => {
                        if line.is_empty() {
                            let _ = self.out("\n");
                            return Flow::Status(self.status);
                        }
                    }
                    '\u{7f}' | '\u{8}' if tty => {
                        if line.pop().is_some() && !self.out("\u{8} \u{8}") {
                            return Flow::Stop;
                        }
                    }
                    '\r' | '\n' => {
                        if tty && !self.out("\n") {
                            return Flow::Stop;
                        }
                        pending.push_str(&line);
                        pending.push('\n');
                        line.clear();
                        match super::parse::parse(&pending) {
                            Err(e) if e.incomplete => {
                                if tty && !self.out("> ") {
                                    return Flow::Stop;
                                }
                                continue;
                            }
                            Err(e) => {
                                self.err(&format!("sh: {}\n", e.message));
                                self.status = 2;
                            }
                            Ok(node) => match self.node(&node) {
                                Flow::Exit(code) => return Flow::Status(code),
                                Flow::Stop => return Flow::Stop,
                                Flow::Status(_) => {}
                            },
                        }
                        pending.clear();
                        if tty && !self.out(prompt) {
                            return Flow::Stop;
                        }
                    }
                    c => {
                        line.push(c);
                        if tty && !self.out(&c.to_string()) {
                            return Flow::Stop;
                        }
                    }
                }
            }
        }
        // The end of stdin runs what is left.
        pending.push_str(&line);
        if !pending.trim().is_empty() {
            match super::parse::parse(&pending) {
                Ok(node) => {
                    let flow = self.node(&node);
                    return match flow {
                        Flow::Exit(code) => Flow::Status(code),
                        other => other,
                    };
                }
                Err(e) => {
                    self.err(&format!("sh: {}\n", e.message));
                    return Flow::Status(2);
                }
            }
        }
        Flow::Status(self.status)
    }
}
