//! Which scheduled time a CronJob runs now.
//!
//! Behaviour of kubernetes `pkg/controller/cronjob/utils.go` (`mostRecentScheduleTime`) at
//! v1.32: the times missed since the earliest time are not walked one by one; their number is
//! estimated from the interval between the first two (so a CronJob suspended for years costs
//! no more than one behind by minutes), and the schedule is stepped only over the last
//! interval or two to find the latest time that has passed. A schedule whose first two times
//! are less than a second apart is refused.

use flotilla_api::karmada::cron::Schedule;
use jiff::{SignedDuration, Timestamp};

/// What [`most_recent`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The latest scheduled time at or before now, after the earliest time (none: nothing is
    /// due).
    pub time: Option<Timestamp>,
    /// kube's estimate of the times missed since the earliest time (more than 100 is reported
    /// as `TooManyMissedTimes`).
    pub missed: i64,
}

/// Why a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DueError {
    /// kube's words for a schedule that fires twice within a second (or never again).
    #[error("time difference between two schedules is less than 1 second")]
    TooFrequent,
}

/// The scheduled time due now: the latest time of `schedule` after `earliest` (the last
/// scheduled time, else the creation time, raised to `now - startingDeadlineSeconds`) and at or
/// before `now`.
pub fn most_recent(
    schedule: &Schedule,
    earliest: Timestamp,
    now: Timestamp,
) -> Result<Due, DueError> {
    let none = Due {
        time: None,
        missed: 0,
    };
    let Ok(first) = schedule.next_after(earliest) else {
        return Ok(none);
    };
    if now < first {
        return Ok(none);
    }
    let Ok(second) = schedule.next_after(first) else {
        return Ok(Due {
            time: Some(first),
            missed: 1,
        });
    };
    if now < second {
        return Ok(Due {
            time: Some(first),
            missed: 1,
        });
    }
    // Go's `Duration.Round(time.Second)`: half a second rounds away from zero.
    let interval = (second.duration_since(first).as_millis() + 500) / 1000;
    let interval = i64::try_from(interval).unwrap_or(i64::MAX);
    if interval < 1 {
        return Err(DueError::TooFrequent);
    }
    let elapsed = now.duration_since(first).as_secs();
    let missed = elapsed / interval + 1;
    // One interval before the estimate, so that uneven schedules (`30 6-16/4 * * 1-5`) are
    // stepped by the schedule itself over the last stretch.
    let back = (missed - 2).saturating_mul(interval);
    let mut at = first
        .checked_add(SignedDuration::from_secs(back))
        .unwrap_or(first);
    let mut latest = None;
    while let Ok(next) = schedule.next_after(at) {
        if next > now {
            break;
        }
        latest = Some(next);
        at = next;
    }
    Ok(Due {
        time: latest,
        missed,
    })
}

#[cfg(test)]
mod tests {
    use jiff::tz::TimeZone;

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a time")
    }

    fn utc(spec: &str) -> Schedule {
        Schedule::parse(spec, TimeZone::UTC).expect("a schedule")
    }

    #[test]
    fn only_the_most_recent_missed_time_is_due() {
        let every_five = utc("*/5 * * * *");
        let due = most_recent(
            &every_five,
            at("2026-12-07T10:00:00Z"),
            at("2026-12-07T10:17:30Z"),
        );
        assert_eq!(
            due,
            Ok(Due {
                time: Some(at("2026-12-07T10:15:00Z")),
                missed: 3
            })
        );
        let due = most_recent(
            &every_five,
            at("2026-12-07T10:15:00Z"),
            at("2026-12-07T10:17:30Z"),
        );
        assert_eq!(
            due,
            Ok(Due {
                time: None,
                missed: 0
            })
        );
        let due = most_recent(
            &every_five,
            at("2026-12-07T10:15:00Z"),
            at("2026-12-07T10:20:00Z"),
        );
        assert_eq!(
            due,
            Ok(Due {
                time: Some(at("2026-12-07T10:20:00Z")),
                missed: 1
            })
        );
    }

    /// A minutely CronJob suspended for ten years: about 5.3 million missed times, estimated
    /// without being walked, and the last one found.
    #[test]
    fn years_of_missed_times_are_estimated_not_walked() {
        let minutely = utc("* * * * *");
        let due = most_recent(
            &minutely,
            at("2016-12-07T10:00:00Z"),
            at("2026-12-07T10:17:30Z"),
        )
        .expect("a schedule");
        assert_eq!(due.time, Some(at("2026-12-07T10:17:00Z")));
        let minutes = (at("2026-12-07T10:17:30Z") - at("2016-12-07T10:01:00Z"))
            .total(jiff::Unit::Minute)
            .expect("minutes") as i64;
        assert_eq!(due.missed, minutes + 1);
        assert!(due.missed > 100, "reported as too many");
    }

    /// Uneven schedules: the estimate lands between firings, and the schedule finds the last.
    #[test]
    fn uneven_schedules_find_their_last_time() {
        // 06:30, 10:30 and 14:30 on weekdays.
        let weekdays = utc("30 6-16/4 * * 1-5");
        // From Friday 2026-12-04 07:00 to Tuesday 2026-12-08 12:00.
        let due = most_recent(
            &weekdays,
            at("2026-12-04T07:00:00Z"),
            at("2026-12-08T12:00:00Z"),
        )
        .expect("a schedule");
        assert_eq!(due.time, Some(at("2026-12-08T10:30:00Z")));
        // Yearly, on January 1st, three years behind.
        let yearly = utc("0 0 1 1 *");
        let due = most_recent(
            &yearly,
            at("2023-06-01T00:00:00Z"),
            at("2026-12-07T00:00:00Z"),
        )
        .expect("a schedule");
        assert_eq!(due.time, Some(at("2026-01-01T00:00:00Z")));
        assert_eq!(due.missed, 3);
    }
}
