//! Cron schedules as Karmada's CronFederatedHPA reads them (its controller runs them, its webhook
//! checks them): it hands `rules[].schedule` to
//! gocron's `Cron`, which parses it with robfig/cron's standard parser. Written from that
//! parser's documented behaviour (github.com/robfig/cron/v3 `parser.go`, `spec.go`):
//!
//! - five fields: minute (0–59), hour (0–23), day of month (1–31), month (1–12 or `JAN`–`DEC`),
//!   day of week (0–6 or `SUN`–`SAT`), each a comma list of `*` or `?`, `n`, `a-b`, with an
//!   optional `/step` (`n/step` runs from `n` to the field's maximum);
//! - a field that is `*` or `?` (without a step above 1) is "any": when day of month or day of
//!   week is "any", both must match; when both are restricted, either may;
//! - descriptors `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`, `@hourly`,
//!   and `@every <duration>` (Go syntax: `1h30m`, `90s`; whole seconds, at least one);
//! - an optional `CRON_TZ=<zone>` or `TZ=<zone>` prefix, which wins over the rule's `timeZone`.
//!
//! [`Schedule::next_after`] finds the first time strictly after the given one, in the zone's
//! wall-clock time (a time that a DST change skips is matched as jiff's compatible mapping
//! resolves it).

use std::time::Duration;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan as _};

/// Why a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("expected exactly 5 fields, found {found}: {spec}")]
    FieldCount { found: usize, spec: String },
    #[error("unrecognized descriptor: {0}")]
    Descriptor(String),
    #[error("failed to parse int from {0}")]
    Number(String),
    #[error("beginning of range ({start}) below minimum ({min}): {expr}")]
    BelowMinimum { start: u32, min: u32, expr: String },
    #[error("end of range ({end}) above maximum ({max}): {expr}")]
    AboveMaximum { end: u32, max: u32, expr: String },
    #[error("beginning of range ({start}) beyond end of range ({end}): {expr}")]
    Reversed { start: u32, end: u32, expr: String },
    #[error("step of range should be a positive number: {0}")]
    Step(String),
    #[error("too many slashes or hyphens: {0}")]
    Shape(String),
    #[error("failed to parse duration {0}")]
    Every(String),
    #[error("provided bad location {zone}: {reason}")]
    Location { zone: String, reason: String },
    #[error("no time matches the schedule within five years")]
    Never,
}

/// One field's allowed values (bit `n` for value `n`) and whether it was "any".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    bits: u64,
    any: bool,
}

impl Field {
    fn has(self, value: i8) -> bool {
        value >= 0 && self.bits & (1 << value) != 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Fields {
        minute: Field,
        hour: Field,
        dom: Field,
        month: Field,
        dow: Field,
    },
    Every(Duration),
}

/// A parsed schedule, with the zone its fields are read in.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    kind: Kind,
    zone: TimeZone,
}

struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
};

fn number(text: &str, bounds: &Bounds) -> Result<u32, ScheduleError> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = bounds.names.iter().position(|n| *n == lower) {
        return Ok(bounds.min + u32::try_from(i).unwrap_or(0));
    }
    text.parse::<u32>()
        .map_err(|_| ScheduleError::Number(text.to_owned()))
}

fn range(expr: &str, bounds: &Bounds) -> Result<Field, ScheduleError> {
    let mut slash = expr.split('/');
    let low_high = slash.next().unwrap_or("");
    let step = slash.next();
    if slash.next().is_some() {
        return Err(ScheduleError::Shape(expr.to_owned()));
    }
    let parts: Vec<&str> = low_high.split('-').collect();
    let (mut start, mut end, mut any) = if parts[0] == "*" || parts[0] == "?" {
        (bounds.min, bounds.max, true)
    } else {
        let start = number(parts[0], bounds)?;
        let end = match parts.len() {
            1 => start,
            2 => number(parts[1], bounds)?,
            _ => return Err(ScheduleError::Shape(expr.to_owned())),
        };
        (start, end, false)
    };
    if parts[0] == "*" && parts.len() > 1 {
        return Err(ScheduleError::Shape(expr.to_owned()));
    }
    let step = match step {
        None => 1,
        Some(text) => {
            let step = text
                .parse::<u32>()
                .map_err(|_| ScheduleError::Number(text.to_owned()))?;
            if step == 0 {
                return Err(ScheduleError::Step(expr.to_owned()));
            }
            // `n/step` runs to the maximum.
            if parts.len() == 1 && !any {
                end = bounds.max;
            }
            if step > 1 {
                any = false;
            }
            step
        }
    };
    if start < bounds.min {
        return Err(ScheduleError::BelowMinimum {
            start,
            min: bounds.min,
            expr: expr.to_owned(),
        });
    }
    if end > bounds.max {
        return Err(ScheduleError::AboveMaximum {
            end,
            max: bounds.max,
            expr: expr.to_owned(),
        });
    }
    if start > end {
        return Err(ScheduleError::Reversed {
            start,
            end,
            expr: expr.to_owned(),
        });
    }
    let mut bits = 0u64;
    while start <= end {
        bits |= 1 << start;
        start += step;
    }
    Ok(Field { bits, any })
}

fn field(text: &str, bounds: &Bounds) -> Result<Field, ScheduleError> {
    let mut result = Field {
        bits: 0,
        any: false,
    };
    for expr in text.split(',') {
        let f = range(expr, bounds)?;
        result.bits |= f.bits;
        result.any |= f.any;
    }
    Ok(result)
}

/// Go's `time.ParseDuration` for what `@every` takes: a sequence of `<number><unit>` with units
/// `h`, `m`, `s`, `ms`, `us`/`µs`, `ns` (decimal fractions allowed); rounded down to seconds.
fn go_duration(text: &str) -> Option<Duration> {
    go_duration_secs(text).map(|total| Duration::from_secs(total.floor() as u64))
}

/// Go's `time.ParseDuration` (non-negative): seconds, fractions kept (`1m30s`, `20.04s`, `500ms`).
pub fn go_duration_secs(text: &str) -> Option<f64> {
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * seconds;
    }
    Some(total)
}

impl Schedule {
    /// The zone the schedule's fields are read in.
    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// Parses `spec`; its fields are read in `zone` unless it names its own (`CRON_TZ=`).
    pub fn parse(spec: &str, zone: TimeZone) -> Result<Self, ScheduleError> {
        let mut spec = spec.trim();
        let mut zone = zone;
        if let Some(rest) = spec
            .strip_prefix("CRON_TZ=")
            .or_else(|| spec.strip_prefix("TZ="))
        {
            let end = rest.find(' ').unwrap_or(rest.len());
            let name = &rest[..end];
            zone = load_zone(name)?;
            spec = rest[end..].trim();
        }
        if let Some(descriptor) = spec.strip_prefix('@') {
            let fields = match descriptor {
                "yearly" | "annually" => "0 0 1 1 *",
                "monthly" => "0 0 1 * *",
                "weekly" => "0 0 * * 0",
                "daily" | "midnight" => "0 0 * * *",
                "hourly" => "0 * * * *",
                _ => {
                    if let Some(every) = descriptor.strip_prefix("every ") {
                        let every = go_duration(every.trim())
                            .ok_or_else(|| ScheduleError::Every(every.to_owned()))?;
                        // robfig rounds an interval below a second up to one.
                        let every = every.max(Duration::from_secs(1));
                        return Ok(Schedule {
                            kind: Kind::Every(every),
                            zone,
                        });
                    }
                    return Err(ScheduleError::Descriptor(spec.to_owned()));
                }
            };
            return Self::parse(fields, zone);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(ScheduleError::FieldCount {
                found: fields.len(),
                spec: spec.to_owned(),
            });
        }
        Ok(Schedule {
            kind: Kind::Fields {
                minute: field(fields[0], &MINUTES)?,
                hour: field(fields[1], &HOURS)?,
                dom: field(fields[2], &DOM)?,
                month: field(fields[3], &MONTHS)?,
                dow: field(fields[4], &DOW)?,
            },
            zone,
        })
    }

    /// The first time the schedule fires strictly after `after`.
    pub fn next_after(&self, after: Timestamp) -> Result<Timestamp, ScheduleError> {
        let (minute, hour, dom, month, dow) = match &self.kind {
            Kind::Every(every) => {
                // robfig: the next whole second plus the interval.
                let whole = Timestamp::from_second(after.as_second()).unwrap_or(after);
                let secs = i64::try_from(every.as_secs()).unwrap_or(i64::MAX);
                return whole
                    .checked_add(jiff::SignedDuration::from_secs(secs))
                    .map_err(|_| ScheduleError::Never);
            }
            Kind::Fields {
                minute,
                hour,
                dom,
                month,
                dow,
            } => (*minute, *hour, *dom, *month, *dow),
        };
        let local = after.to_zoned(self.zone.clone()).datetime();
        // The next whole minute after `after`.
        let mut t = local
            .with()
            .second(0)
            .subsec_nanosecond(0)
            .build()
            .map_err(|_| ScheduleError::Never)?
            .checked_add(1.minute())
            .map_err(|_| ScheduleError::Never)?;
        let limit = t.year() + 5;
        let day_matches = |t: &DateTime| {
            let d = dom.has(t.day());
            let w = dow.has(t.weekday().to_sunday_zero_offset());
            if dom.any || dow.any { d && w } else { d || w }
        };
        'wrap: loop {
            if t.year() > limit {
                return Err(ScheduleError::Never);
            }
            while !month.has(t.month()) {
                t = step(
                    t.date()
                        .first_of_month()
                        .to_datetime(jiff::civil::Time::midnight())
                        .checked_add(1.month()),
                )?;
                if t.month() == 1 {
                    continue 'wrap;
                }
            }
            while !day_matches(&t) {
                let month_before = t.month();
                t = step(t.start_of_day().checked_add(1.day()))?;
                if t.month() != month_before {
                    continue 'wrap;
                }
            }
            while !hour.has(t.hour()) {
                let day_before = t.day();
                t = step(
                    t.with()
                        .minute(0)
                        .build()
                        .and_then(|t| t.checked_add(1.hour())),
                )?;
                if t.day() != day_before {
                    continue 'wrap;
                }
            }
            while !minute.has(t.minute()) {
                let hour_before = t.hour();
                t = step(t.checked_add(1.minute()))?;
                if t.hour() != hour_before {
                    continue 'wrap;
                }
            }
            let at = self
                .zone
                .to_timestamp(t)
                .map_err(|_| ScheduleError::Never)?;
            if at > after {
                return Ok(at);
            }
            // A wall time a DST change repeats or skips can map to the past: go on.
            t = step(t.checked_add(1.minute()))?;
        }
    }
}

fn step(t: Result<DateTime, jiff::Error>) -> Result<DateTime, ScheduleError> {
    t.map_err(|_| ScheduleError::Never)
}

/// An IANA zone by name (Go's `time.LoadLocation`: `""` and `UTC` are UTC, `Local` the system's).
pub fn load_zone(name: &str) -> Result<TimeZone, ScheduleError> {
    match name {
        "" | "UTC" => Ok(TimeZone::UTC),
        "Local" => Ok(TimeZone::system()),
        _ => TimeZone::get(name).map_err(|e| ScheduleError::Location {
            zone: name.to_owned(),
            reason: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(spec: &str, after: &str) -> String {
        Schedule::parse(spec, TimeZone::UTC)
            .unwrap()
            .next_after(after.parse().unwrap())
            .unwrap()
            .to_string()
    }

    #[test]
    fn every_minute_and_steps() {
        assert_eq!(
            next("*/1 * * * *", "2026-12-06T10:00:30Z"),
            "2026-12-06T10:01:00Z"
        );
        assert_eq!(
            next("* * * * *", "2026-12-06T10:01:00Z"),
            "2026-12-06T10:02:00Z",
            "strictly after"
        );
        assert_eq!(
            next("*/15 * * * *", "2026-12-06T10:01:00Z"),
            "2026-12-06T10:15:00Z"
        );
        assert_eq!(
            next("5/20 * * * *", "2026-12-06T10:30:00Z"),
            "2026-12-06T10:45:00Z"
        );
        assert_eq!(
            next("0 9-17/4 * * *", "2026-12-06T10:00:00Z"),
            "2026-12-06T13:00:00Z"
        );
    }

    #[test]
    fn names_days_and_the_day_rule() {
        // 2026-12-06 is a Sunday.
        assert_eq!(
            next("30 8 * * MON-FRI", "2026-12-06T10:00:00Z"),
            "2026-12-07T08:30:00Z"
        );
        assert_eq!(
            next("0 0 1 JAN *", "2026-12-06T10:00:00Z"),
            "2027-01-01T00:00:00Z"
        );
        // Both day fields restricted: either matches (the 10th, or the next Saturday).
        assert_eq!(
            next("0 0 10 * 6", "2026-12-06T10:00:00Z"),
            "2026-12-10T00:00:00Z"
        );
        // Day of week "any": the day of month alone decides.
        assert_eq!(
            next("0 0 31 * ?", "2026-12-06T10:00:00Z"),
            "2026-12-31T00:00:00Z"
        );
        assert_eq!(
            next("0 0 29 2 *", "2026-12-06T10:00:00Z"),
            "2028-02-29T00:00:00Z"
        );
    }

    #[test]
    fn descriptors_and_zones() {
        assert_eq!(
            next("@hourly", "2026-12-06T10:00:00Z"),
            "2026-12-06T11:00:00Z"
        );
        assert_eq!(
            next("@weekly", "2026-12-06T10:00:00Z"),
            "2026-12-13T00:00:00Z"
        );
        assert_eq!(
            next("@every 1m30s", "2026-12-06T10:00:00.5Z"),
            "2026-12-06T10:01:30Z"
        );
        let shanghai = load_zone("Asia/Shanghai").unwrap();
        let at: Timestamp = "2026-12-06T10:00:00Z".parse().unwrap();
        assert_eq!(
            Schedule::parse("0 9 * * *", shanghai)
                .unwrap()
                .next_after(at)
                .unwrap()
                .to_string(),
            "2026-12-07T01:00:00Z",
            "09:00 in Shanghai"
        );
        assert_eq!(
            next("CRON_TZ=America/New_York 0 9 * * *", "2026-12-06T10:00:00Z"),
            "2026-12-06T14:00:00Z"
        );
    }

    #[test]
    fn bad_schedules_say_why() {
        let bad = |spec: &str| {
            Schedule::parse(spec, TimeZone::UTC)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad("* * * *"),
            "expected exactly 5 fields, found 4: * * * *"
        );
        assert_eq!(
            bad("60 * * * *"),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(
            bad("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            bad("*/0 * * * *"),
            "step of range should be a positive number: */0"
        );
        assert_eq!(bad("x * * * *"), "failed to parse int from x");
        assert_eq!(bad("@fortnightly"), "unrecognized descriptor: @fortnightly");
        assert!(load_zone("Mars/Olympus").is_err());
    }
}
