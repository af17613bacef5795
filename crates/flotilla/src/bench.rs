//! `flotilla bench`: measured figures for the hot paths, each with a baseline measured in the
//! same run. Prints a table, and a JSON line last.

pub mod apiserver;
pub mod clusters;
pub mod propagate;
pub mod schedule;
pub mod schedule_e2e;
pub mod sim;
pub mod store;

use std::time::Duration;

/// Parses durations like `3s`, `500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((text, "s"), |i| text.split_at(i));
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 3s or 500ms"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("invalid duration unit in {text:?}: use ms, s or m")),
    };
    Ok(Duration::from_secs_f64(seconds))
}
