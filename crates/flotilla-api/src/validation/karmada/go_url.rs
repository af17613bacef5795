//! URLs as Go's `url.Parse` (Go 1.26, the toolchain Karmada's go.mod names) splits them, with its
//! errors, for the rules that take an address apart: a Cluster's `apiEndpoint` and `proxyURL`,
//! a ResourceRegistry's OpenSearch `addresses`.
//!
//! What Go checks is checked: control characters, the scheme, a colon in the first segment of a
//! relative reference, the user information's characters, the port after the host (the first
//! colon starts it for http and https, the last one otherwise), the characters of a host name,
//! `%` escapes in every part. A host in brackets must be an IPv6 address, not an IPv4 one;
//! netip's reason for a malformed address is exact for an empty zone, an address starting with
//! `%` and one without `.` or `:`; other malformed addresses read `unable to parse IP` (netip
//! names the offending field there).

use std::net::{Ipv4Addr, Ipv6Addr};

/// The parts of a URL Go's `url.Parse` yields that the rules look at.
#[derive(Debug, Default, PartialEq)]
pub struct GoUrl {
    /// Lower case, as Go keeps it.
    pub scheme: String,
    /// The user information before `@`, as written.
    pub user: Option<String>,
    /// The host (and port), `%` escapes decoded.
    pub host: String,
    /// The query, as written.
    pub query: String,
    /// The fragment, `%` escapes decoded.
    pub fragment: String,
}

/// Which part of a URL a `%` escape is decoded in (Go's `encoding` modes that `Parse` uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Path,
    Host,
    Zone,
    UserPassword,
    Fragment,
}

impl GoUrl {
    /// The parts kube's URL rules refuse in an endpoint or webhook URL (`ValidateWebhookURL`,
    /// Karmada's `ValidateClusterAPIEndpoint`): user information, a fragment, a query.
    pub fn forbidden_parts(
        &self,
        at: &crate::validation::FieldPath,
    ) -> Vec<crate::validation::FieldError> {
        use crate::validation::FieldError;
        let mut errors = Vec::new();
        if let Some(user) = &self.user {
            errors.push(FieldError::invalid(
                at,
                user.as_str(),
                "user information is not permitted in the URL",
            ));
        }
        if !self.fragment.is_empty() {
            errors.push(FieldError::invalid(
                at,
                self.fragment.as_str(),
                "fragments are not permitted in the URL",
            ));
        }
        if !self.query.is_empty() {
            errors.push(FieldError::invalid(
                at,
                self.query.as_str(),
                "query parameters are not permitted in the URL",
            ));
        }
        errors
    }

    /// Splits `scheme://user@host/path?query#fragment` like Go's `url.Parse`; the error is
    /// Go's wording (`parse "<url>": <reason>`).
    pub fn parse(raw: &str) -> Result<GoUrl, String> {
        let (reference, fragment) = raw.split_once('#').unwrap_or((raw, ""));
        let mut url =
            reference_parts(reference).map_err(|e| format!("parse {reference:?}: {e}"))?;
        if !fragment.is_empty() {
            url.fragment =
                unescape(fragment, Part::Fragment).map_err(|e| format!("parse {raw:?}: {e}"))?;
        }
        Ok(url)
    }
}

/// Go's `parse` of what precedes `#`.
fn reference_parts(raw: &str) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = match rest.strip_suffix('?') {
        Some(bare) if !bare.contains('?') => bare,
        _ => {
            let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
            url.query = query.to_owned();
            rest
        }
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // `scheme:opaque`: nothing more is parsed.
            return Ok(url);
        }
        if rest.split('/').next().unwrap_or("").contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    let mut path = rest;
    if let Some(after) = rest.strip_prefix("//")
        && (!url.scheme.is_empty() || !rest.starts_with("///"))
    {
        let (authority, tail) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        let (user, host) = authority_parts(&url.scheme, authority)?;
        url.user = user;
        url.host = host;
        path = tail;
    }
    unescape(path, Part::Path)?;
    Ok(url)
}

/// Go's `getScheme`: `[a-zA-Z][a-zA-Z0-9+.-]*` before the first colon, or no scheme.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host is checked before the user information.
fn authority_parts(scheme: &str, authority: &str) -> Result<(Option<String>, String), String> {
    let (user, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = host_part(scheme, host)?;
    if let Some(user) = user {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
        if !user.chars().all(allowed) {
            return Err("net/url: invalid userinfo".into());
        }
        let (name, password) = user.split_once(':').unwrap_or((user, ""));
        unescape(name, Part::UserPassword)?;
        unescape(password, Part::UserPassword)?;
    }
    Ok((user.map(str::to_owned), host))
}

/// `""` or `:` followed by digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `parseHost`.
fn host_part(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(0) => return bracketed_host(host),
        Some(_) => return Err("invalid IP-literal".into()),
        None => {}
    }
    if let (Some(first), Some(last)) = (host.find(':'), host.rfind(':')) {
        // RFC 3986 has no colons in a host name: for http and https the first one starts the
        // port; other schemes (database host lists) keep the last one.
        let colon = if matches!(scheme, "http" | "https") {
            first
        } else {
            last
        };
        let port = &host[colon..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, Part::Host)
}

/// `[address%25zone]:port`: only an IPv6 address may stand in brackets.
fn bracketed_host(host: &str) -> Result<String, String> {
    let Some(close) = host.rfind(']') else {
        return Err("missing ']' in host".into());
    };
    let port = &host[close + 1..];
    if !valid_optional_port(port) {
        return Err(format!("invalid port {port:?} after host"));
    }
    let inner = &host[1..close];
    let address = match inner.find("%25") {
        Some(zone) => {
            let mut address = unescape(&inner[..zone], Part::Host)?;
            address.push_str(&unescape(&inner[zone..], Part::Zone)?);
            address
        }
        None => unescape(inner, Part::Host)?,
    };
    let parse_error = |reason: &str| format!("invalid host: ParseAddr({address:?}): {reason}");
    let (ip, zone) = address.split_once('%').unwrap_or((&address, ""));
    match address.find(['.', ':', '%']).map(|i| address.as_bytes()[i]) {
        Some(b'%') => return Err(parse_error("missing IPv6 address")),
        Some(b'.') if !address.contains('%') && ip.parse::<Ipv4Addr>().is_ok() => {
            return Err("invalid IP-literal".into());
        }
        Some(b':') if address.contains('%') && zone.is_empty() => {
            return Err(parse_error("zone must be a non-empty string"));
        }
        Some(b':') if ip.parse::<Ipv6Addr>().is_ok() => {}
        _ => return Err(parse_error("unable to parse IP")),
    }
    Ok(format!("[{address}]{port}"))
}

/// Whether Go escapes `c` in a host name (and so refuses it there unescaped).
fn escaped_in_host(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c))
}

/// Go's `unescape`: `%` must start two hex digits; a host may escape only non-ASCII bytes (and
/// `%25`) and may not hold characters a host name cannot have.
fn unescape(s: &str, part: Part) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        if c != b'%' {
            if matches!(part, Part::Host | Part::Zone) && c < 0x80 && escaped_in_host(c) {
                return Err(format!(
                    "invalid character {:?} in host name",
                    char::from(c).to_string()
                ));
            }
            decoded.push(c);
            i += 1;
            continue;
        }
        let escape = &bytes[i..bytes.len().min(i + 3)];
        let hex = |j: usize| {
            bytes
                .get(j)
                .copied()
                .and_then(|b| char::from(b).to_digit(16))
        };
        let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2)) else {
            return Err(escape_error(escape));
        };
        let value = u8::try_from(high * 16 + low).unwrap_or(0);
        let percent = escape == b"%25";
        if part == Part::Host && high < 8 && !percent {
            return Err(escape_error(escape));
        }
        if part == Part::Zone && !percent && value != b' ' && escaped_in_host(value) {
            return Err(escape_error(escape));
        }
        decoded.push(value);
        i += 3;
    }
    Ok(String::from_utf8_lossy(&decoded).into_owned())
}

fn escape_error(escape: &[u8]) -> String {
    format!(
        "invalid URL escape {:?}",
        String::from_utf8_lossy(escape).as_ref()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(raw: &str) -> String {
        GoUrl::parse(raw).expect_err(raw)
    }

    #[test]
    fn parts_are_split_as_go_splits_them() {
        let url = GoUrl::parse("HTTPS://u:p@Host.example:9200/a%20b?x=1#f%21").expect("parses");
        assert_eq!(
            url,
            GoUrl {
                scheme: "https".into(),
                user: Some("u:p".into()),
                host: "Host.example:9200".into(),
                query: "x=1".into(),
                fragment: "f!".into(),
            }
        );
        // `scheme:opaque`, a path, a relative reference: no host.
        for raw in ["localhost:9200", "member1", "/just/a/path", "//", "http://"] {
            assert_eq!(GoUrl::parse(raw).expect(raw).host, "", "{raw}");
        }
        assert_eq!(
            GoUrl::parse("localhost:9200").expect("opaque").scheme,
            "localhost"
        );
        let ipv6 = GoUrl::parse("http://[fe80::1%25en0]:8080/").expect("ipv6");
        assert_eq!(ipv6.host, "[fe80::1%en0]:8080");
        // Other schemes keep the last colon for the port (database host lists).
        assert!(GoUrl::parse("mongodb://a:1,b:2/db").is_ok());
    }

    #[test]
    fn malformed_urls_fail_with_go_reasons() {
        assert_eq!(
            error("http://a b"),
            r#"parse "http://a b": invalid character " " in host name"#
        );
        assert_eq!(error(":9200"), r#"parse ":9200": missing protocol scheme"#);
        assert_eq!(
            error("1.2.3.4:9200"),
            r#"parse "1.2.3.4:9200": first path segment in URL cannot contain colon"#
        );
        assert_eq!(
            error("http://localhost:92o0"),
            r#"parse "http://localhost:92o0": invalid port ":92o0" after host"#
        );
        assert_eq!(
            error("https://localhost:80:80"),
            r#"parse "https://localhost:80:80": invalid port ":80:80" after host"#
        );
        assert_eq!(
            error("http://[::1"),
            r#"parse "http://[::1": missing ']' in host"#
        );
        assert_eq!(
            error("http://[127.0.0.1]:80"),
            r#"parse "http://[127.0.0.1]:80": invalid IP-literal"#
        );
        assert_eq!(
            error("http://a[::1]"),
            r#"parse "http://a[::1]": invalid IP-literal"#
        );
        assert_eq!(
            error("http://[opensearch]"),
            r#"parse "http://[opensearch]": invalid host: ParseAddr("opensearch"): unable to parse IP"#
        );
        assert_eq!(
            error("http://x/%zz#f"),
            r#"parse "http://x/%zz": invalid URL escape "%zz""#
        );
        assert_eq!(
            error("http://x/#%g"),
            r#"parse "http://x/#%g": invalid URL escape "%g""#
        );
        assert_eq!(
            error("http://a%41/"),
            r#"parse "http://a%41/": invalid URL escape "%41""#
        );
        assert_eq!(
            error("http://a b@host/"),
            r#"parse "http://a b@host/": net/url: invalid userinfo"#
        );
        assert_eq!(
            error("http://x\ny"),
            "parse \"http://x\\ny\": net/url: invalid control character in URL"
        );
    }
}
