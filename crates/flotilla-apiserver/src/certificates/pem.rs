//! PEM blocks as Go's `encoding/pem.Decode` reads them: the first `-----BEGIN <type>-----` …
//! `-----END <type>-----` block in the input, its headers (`Key: value` lines before a blank
//! line) and its base64 body; the rest of the input after it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// One decoded PEM block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub kind: String,
    pub has_headers: bool,
    pub der: Vec<u8>,
}

/// The first block in `input` and what follows it, or `None` when there is none.
pub fn decode(input: &[u8]) -> Option<(Block, &[u8])> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    let mut rest = input;
    loop {
        let start = find(rest, BEGIN)?;
        let after = &rest[start + BEGIN.len()..];
        let line_end = find(after, b"\n")?;
        let line = trim_cr(&after[..line_end]);
        let Some(kind) = line.strip_suffix(b"-----") else {
            rest = after;
            continue;
        };
        let kind = String::from_utf8_lossy(kind).into_owned();
        let body = &after[line_end + 1..];
        let end_marker = format!("-----END {kind}-----");
        let Some(end) = find(body, end_marker.as_bytes()) else {
            rest = after;
            continue;
        };
        let content = &body[..end];
        let remaining = &body[end + end_marker.len()..];
        let remaining = remaining.strip_prefix(b"\r").unwrap_or(remaining);
        let remaining = remaining.strip_prefix(b"\n").unwrap_or(remaining);
        let (has_headers, encoded) = split_headers(content);
        let compact: Vec<u8> = encoded
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let Ok(der) = STANDARD.decode(&compact) else {
            rest = after;
            continue;
        };
        return Some((
            Block {
                kind,
                has_headers,
                der,
            },
            remaining,
        ));
    }
}

/// Encodes `der` as a PEM block of `kind` (64-column lines).
#[cfg(test)]
pub fn encode(kind: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {kind}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {kind}-----\n"));
    out
}

/// Whether the block starts with `Key: value` header lines, and the body after them.
fn split_headers(content: &[u8]) -> (bool, &[u8]) {
    let first_line = content.split(|b| *b == b'\n').next().unwrap_or(b"");
    if !first_line.contains(&b':') {
        return (false, content);
    }
    // Headers end at the first blank line.
    let mut offset = 0;
    for line in content.split(|b| *b == b'\n') {
        offset += line.len() + 1;
        if trim_cr(line).iter().all(u8::is_ascii_whitespace) {
            return (true, content.get(offset..).unwrap_or(b""));
        }
    }
    (true, b"")
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_the_rest_follows() {
        let text = format!("junk\n{}{}", encode("A", b"hello"), encode("B", b"world"));
        let (a, rest) = decode(text.as_bytes()).expect("a block");
        assert_eq!(
            (a.kind.as_str(), a.der.as_slice(), a.has_headers),
            ("A", &b"hello"[..], false)
        );
        let (b, rest) = decode(rest).expect("a second block");
        assert_eq!((b.kind.as_str(), b.der.as_slice()), ("B", &b"world"[..]));
        assert!(decode(rest).is_none());
    }

    #[test]
    fn headers_are_noticed() {
        let text = "-----BEGIN A-----\nProc-Type: 4,ENCRYPTED\n\naGVsbG8=\n-----END A-----\n";
        let (a, _) = decode(text.as_bytes()).expect("a block");
        assert!(a.has_headers);
        assert_eq!(a.der, b"hello");
    }
}
