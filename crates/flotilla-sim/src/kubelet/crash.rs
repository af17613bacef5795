//! Containers whose programs end: kubelet's restarts and `CrashLoopBackOff`, pure.
//!
//! A container's program ([`crate::runtime::exit_of`]) may end with an exit code. With
//! `restartPolicy: Always` (every Deployment's, StatefulSet's and DaemonSet's pod), or
//! `OnFailure` and a non-zero code, the kubelet starts it again: at once after its first exit,
//! then after a back-off of 10 s doubling to at most 5 minutes, waiting meanwhile in
//! `CrashLoopBackOff` (`back-off 20s restarting failed container=c pod=p_ns(uid)`); the run that
//! ended is `lastState.terminated` (`Error` or `Completed`, its exit code and times) and
//! `restartCount` counts the runs started after the first. Otherwise the container stays
//! terminated. Programs that have not ended an hour after they started are taken to run until
//! stopped.

use std::time::Duration;

/// How far ahead a program is run to find its end.
pub const HORIZON: Duration = Duration::from_secs(3600);
/// kubelet's first back-off and its cap.
pub const BACK_OFF_START: Duration = Duration::from_secs(10);
pub const BACK_OFF_MAX: Duration = Duration::from_secs(300);

/// One run of a container that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub started: jiff::Timestamp,
    pub finished: jiff::Timestamp,
    pub code: i32,
}

impl Ended {
    /// kubelet's reason for a terminated container.
    pub fn reason(&self) -> &'static str {
        if self.code == 0 { "Completed" } else { "Error" }
    }
}

/// Where a container is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Running since `started`; ends at `exit` (time, code) if its program ends.
    Running {
        started: jiff::Timestamp,
        exit: Option<(jiff::Timestamp, i32)>,
    },
    /// Ended; starts again at `until` (CrashLoopBackOff), after waiting `back_off`.
    Waiting {
        until: jiff::Timestamp,
        back_off: Duration,
    },
    /// Ended for good (the restart policy says so).
    Terminated,
}

/// One container's life: its phase, its last ended run and how many times it restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Life {
    pub phase: Phase,
    pub last: Option<Ended>,
    pub restarts: i32,
}

/// The back-off before the restart that follows the `restarts`-th restart's run (the first
/// exit, with no restart yet, restarts at once).
pub fn back_off(restarts: i32) -> Duration {
    if restarts <= 0 {
        return Duration::ZERO;
    }
    let doublings = u32::try_from(restarts - 1).unwrap_or(u32::MAX).min(16);
    BACK_OFF_START
        .saturating_mul(1 << doublings)
        .min(BACK_OFF_MAX)
}

/// Whether the restart policy starts a container again after it exited with `code`.
pub fn restarts(policy: &str, code: i32) -> bool {
    match policy {
        "Never" => false,
        "OnFailure" => code != 0,
        _ => true,
    }
}

fn plus(at: jiff::Timestamp, duration: Duration) -> jiff::Timestamp {
    jiff::SignedDuration::try_from(duration)
        .ok()
        .and_then(|d| at.checked_add(d).ok())
        .unwrap_or(jiff::Timestamp::MAX)
}

impl Life {
    /// A container started at `started`, whose program ends as `exit` says.
    pub fn start(started: jiff::Timestamp, exit: Option<(jiff::Timestamp, i32)>) -> Self {
        Life {
            phase: Phase::Running { started, exit },
            last: None,
            restarts: 0,
        }
    }

    /// Moves the life on to `now`; `run` says when a run started at a time ends. Returns
    /// whether anything a status shows changed.
    pub fn advance(
        &mut self,
        now: jiff::Timestamp,
        policy: &str,
        run: impl Fn(jiff::Timestamp) -> Option<(jiff::Timestamp, i32)>,
    ) -> bool {
        let mut changed = false;
        // Bounded: a program that ends at once restarts at most once per back-off.
        for _ in 0..64 {
            match self.phase.clone() {
                Phase::Running {
                    started,
                    exit: Some((at, code)),
                } if at <= now => {
                    self.last = Some(Ended {
                        started,
                        finished: at,
                        code,
                    });
                    changed = true;
                    if !restarts(policy, code) {
                        self.phase = Phase::Terminated;
                        break;
                    }
                    let wait = back_off(self.restarts);
                    if wait.is_zero() {
                        self.restarts += 1;
                        self.phase = Phase::Running {
                            started: at,
                            exit: run(at),
                        };
                    } else {
                        self.phase = Phase::Waiting {
                            until: plus(at, wait),
                            back_off: wait,
                        };
                    }
                }
                Phase::Waiting { until, .. } if until <= now => {
                    self.restarts += 1;
                    self.phase = Phase::Running {
                        started: until,
                        exit: run(until),
                    };
                    changed = true;
                }
                _ => break,
            }
        }
        changed
    }

    /// When the life next changes by itself.
    pub fn next_change(&self) -> Option<jiff::Timestamp> {
        match &self.phase {
            Phase::Running { exit, .. } => exit.map(|(at, _)| at),
            Phase::Waiting { until, .. } => Some(*until),
            Phase::Terminated => None,
        }
    }
}

/// kubelet's message for a container waiting in `CrashLoopBackOff`.
pub fn back_off_message(
    back_off: Duration,
    container: &str,
    pod: &str,
    namespace: &str,
    uid: &str,
) -> String {
    format!(
        "back-off {} restarting failed container={container} pod={pod}_{namespace}({uid})",
        go_duration(back_off)
    )
}

/// Go's `time.Duration` string for whole seconds and minutes (`10s`, `1m20s`, `5m0s`).
fn go_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 60 {
        format!("{seconds}s")
    } else {
        format!("{}m{}s", seconds / 60, seconds % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    /// A program that runs `length` seconds and exits with `code`.
    fn runs(length: i64, code: i32) -> impl Fn(jiff::Timestamp) -> Option<(jiff::Timestamp, i32)> {
        move |start: jiff::Timestamp| {
            Some((
                start
                    .checked_add(jiff::SignedDuration::from_secs(length))
                    .unwrap(),
                code,
            ))
        }
    }

    #[test]
    fn back_off_doubles_from_ten_seconds_to_five_minutes() {
        let waits: Vec<u64> = (0..8).map(|n| back_off(n).as_secs()).collect();
        assert_eq!(waits, [0, 10, 20, 40, 80, 160, 300, 300]);
        assert_eq!(go_duration(Duration::from_secs(20)), "20s");
        assert_eq!(go_duration(Duration::from_secs(80)), "1m20s");
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
    }

    #[test]
    fn a_crashing_container_restarts_at_once_then_backs_off() {
        let program = runs(2, 1);
        let mut life = Life::start(at(0), program(at(0)));
        assert!(!life.advance(at(1), "Always", &program));
        // First exit at 2 s: restarted at once.
        assert!(life.advance(at(2), "Always", &program));
        assert_eq!(life.restarts, 1);
        assert_eq!(
            life.phase,
            Phase::Running {
                started: at(2),
                exit: Some((at(4), 1))
            }
        );
        assert_eq!(life.last.as_ref().unwrap().reason(), "Error");
        // Second exit at 4 s: CrashLoopBackOff for 10 s.
        assert!(life.advance(at(5), "Always", &program));
        assert_eq!(
            life.phase,
            Phase::Waiting {
                until: at(14),
                back_off: Duration::from_secs(10)
            }
        );
        assert_eq!(life.restarts, 1);
        assert_eq!(life.next_change(), Some(at(14)));
        // Restarted at 14 s, ended at 16 s, waits 20 s: all seen at once from 17 s.
        assert!(life.advance(at(17), "Always", &program));
        assert_eq!(life.restarts, 2);
        assert_eq!(
            life.phase,
            Phase::Waiting {
                until: at(36),
                back_off: Duration::from_secs(20)
            }
        );
        assert_eq!(
            life.last,
            Some(Ended {
                started: at(14),
                finished: at(16),
                code: 1
            })
        );
    }

    #[test]
    fn the_restart_policy_decides_whether_it_starts_again() {
        let fails = runs(3, 2);
        let mut never = Life::start(at(0), fails(at(0)));
        assert!(never.advance(at(10), "Never", &fails));
        assert_eq!(never.phase, Phase::Terminated);
        assert_eq!(never.restarts, 0);
        assert_eq!(never.next_change(), None);

        let succeeds = runs(3, 0);
        let mut on_failure = Life::start(at(0), succeeds(at(0)));
        assert!(on_failure.advance(at(10), "OnFailure", &succeeds));
        assert_eq!(on_failure.phase, Phase::Terminated);
        assert_eq!(on_failure.last.as_ref().unwrap().reason(), "Completed");

        // A long-running program never changes by itself.
        let forever = |_: jiff::Timestamp| None;
        let mut server = Life::start(at(0), None);
        assert!(!server.advance(at(100_000), "Always", forever));
        assert_eq!(server.next_change(), None);
    }

    #[test]
    fn messages_read_like_kubelets() {
        assert_eq!(
            back_off_message(Duration::from_secs(40), "c", "web-1", "default", "u-1"),
            "back-off 40s restarting failed container=c pod=web-1_default(u-1)"
        );
    }
}
