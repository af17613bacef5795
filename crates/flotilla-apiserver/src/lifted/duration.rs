//! Human-readable ages as kubectl prints them.
//!
//! Provenance: the rounding rules of `HumanDuration` in
//! k8s.io/apimachinery/pkg/util/duration/duration.go (Kubernetes v1.32), which kube-apiserver's
//! table printers use for the AGE column.

use jiff::SignedDuration;

/// Formats an age: `45s`, `3m20s`, `5h`, `2d3h`, `400d`, `3y20d`.
pub fn human_duration(age: SignedDuration) -> String {
    let seconds = age.as_secs();
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    let days = hours / 24;
    if days < 365 * 8 {
        let d = days % 365;
        return if d == 0 {
            format!("{}y", days / 365)
        } else {
            format!("{}y{d}d", days / 365)
        };
    }
    format!("{}y", days / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(seconds: i64) -> String {
        human_duration(SignedDuration::from_secs(seconds))
    }

    #[test]
    fn follows_kubernetes_rounding() {
        assert_eq!(age(-5), "<invalid>");
        assert_eq!(age(0), "0s");
        assert_eq!(age(119), "119s");
        assert_eq!(age(120), "2m");
        assert_eq!(age(200), "3m20s");
        assert_eq!(age(60 * 45), "45m");
        assert_eq!(age(3600 * 5 + 60 * 7), "5h7m");
        assert_eq!(age(3600 * 30), "30h");
        assert_eq!(age(3600 * 24 * 3 + 3600 * 2), "3d2h");
        assert_eq!(age(3600 * 24 * 400), "400d");
        assert_eq!(age(3600 * 24 * (365 * 3 + 20)), "3y20d");
        assert_eq!(age(3600 * 24 * 365 * 9), "9y");
    }
}
