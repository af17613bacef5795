//! `Warning` response headers (RFC 7234 §5.5 as Kubernetes uses them: `299 - "<text>"`), with
//! kube-apiserver's limits: duplicates dropped, and past 4 KiB of warning text in total every
//! warning is cut to 256 characters (k8s.io/apiserver `pkg/endpoints/filters/warning.go`).

use http::{HeaderMap, HeaderValue};

use super::go_quote;

/// Total warning text (in characters) before warnings are truncated.
const TRUNCATE_AT_TOTAL: usize = 4 * 1024;
/// The length each warning is cut to once truncating.
const TRUNCATE_ITEM: usize = 256;

/// `299 - "<text>"`, the text quoted like Go's `strconv.Quote`.
pub fn warning_header(text: &str) -> String {
    format!("299 - {}", go_quote(text))
}

/// Adds one `Warning` header per distinct warning, within kube-apiserver's size limits.
pub fn add_warning_headers(headers: &mut HeaderMap, warnings: &[String]) {
    let mut distinct: Vec<&str> = Vec::new();
    for w in warnings {
        if !w.is_empty() && !distinct.contains(&w.as_str()) {
            distinct.push(w);
        }
    }
    let total: usize = distinct.iter().map(|w| w.chars().count()).sum();
    let truncating = total > TRUNCATE_AT_TOTAL;
    let mut written = 0;
    for text in distinct {
        let text: String = if truncating {
            text.chars().take(TRUNCATE_ITEM).collect()
        } else {
            text.to_owned()
        };
        // Once truncating, kube keeps adding cut warnings until the cut total passes the limit.
        if truncating && written >= TRUNCATE_AT_TOTAL {
            break;
        }
        written += text.chars().count();
        if let Ok(value) = HeaderValue::from_str(&warning_header(&text)) {
            headers.append(http::header::WARNING, value);
        }
    }
}
