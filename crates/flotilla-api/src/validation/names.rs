//! Name formats: DNS-1123 labels and subdomains, DNS-1035 labels, qualified names (label keys),
//! label values, path segments, and generateName.
//!
//! Provenance: k8s.io/apimachinery v0.33 `pkg/util/validation/validation.go` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`, `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`, `RegexError`,
//! `MaxLenError`), `pkg/api/validation/path/name.go` (path segments), `pkg/api/validation/generic.go`
//! (`NameIsDNSSubdomain` & co., `maskTrailingDash`) and k8s.io/apiserver
//! `pkg/storage/names/generate.go` (generateName suffix). The regexes are implemented by hand; the
//! messages quote the upstream regexes verbatim.

/// Longest DNS-1123 label (RFC 1123).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Longest DNS-1035 label.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
/// Longest label value.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Longest name part of a qualified name (label key, annotation key, finalizer).
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Characters of the random suffix appended to `metadata.generateName`.
pub const GENERATED_NAME_SUFFIX_LENGTH: usize = 5;
/// Longest `generateName` base kept before the suffix (longer ones are cut): 63 - 5.
pub const MAX_GENERATED_NAME_LENGTH: usize = 63 - GENERATED_NAME_SUFFIX_LENGTH;
/// The alphabet of the random suffix (no vowels, no look-alikes), as in `utilrand.String`.
pub const GENERATED_NAME_SUFFIX_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Go's `validation.RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    // Upstream appends "'x', " per example and " or " between them, hence the double space.
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        examples.join(" or ")
    )
}

/// Go's `validation.MaxLenError` (v0.33 wording).
fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

fn empty_error() -> &'static str {
    "must be non-empty"
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    let edge = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            edge(first) && edge(last) && b.iter().all(|&c| edge(c) || c == b'-')
        }
        _ => false,
    }
}

fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(matches_dns1123_label)
}

/// `[a-z]([-a-z0-9]*[a-z0-9])?`
fn matches_dns1035_label(s: &str) -> bool {
    matches_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
pub(crate) fn matches_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Problems with `value` as a DNS-1123 label (empty when valid).
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // A valid subdomain but not a label: the length was checked above, so it is the dots.
            errs.push("must not contain dots".to_owned());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// Problems with `value` as a DNS-1123 subdomain (empty when valid).
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// Problems with `value` as a DNS-1035 label, the format of Service names (empty when valid).
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !matches_dns1035_label(value) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// Problems with `value` as a qualified name: an optional DNS-1123 subdomain prefix and `/`, then
/// a name of at most 63 characters. Label keys, annotation keys and finalizers use this format.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// Problems with `value` as a label value: empty, or at most 63 characters of the qualified-name
/// alphabet starting and ending with an alphanumeric.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !(value.is_empty() || matches_qualified_name_part(value)) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// Problems with `name` as a REST path segment: not `.` or `..`, no `/` or `%`. Like upstream,
/// it checks neither emptiness nor length.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    is_valid_path_segment_prefix(name)
}

/// Problems with `name` as the prefix of a path segment (no `/` or `%`).
pub fn is_valid_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

/// Which format a kind's `metadata.name` must have (Go's `ValidateNameFunc` choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameRule {
    /// Most kinds (Deployments, ConfigMaps, Karmada policies, …).
    Dns1123Subdomain,
    /// Namespaces and a few others.
    Dns1123Label,
    /// Services.
    Dns1035Label,
    /// Kinds whose names only have to be safe in a URL path (e.g. RBAC roles).
    PathSegment,
}

impl NameRule {
    /// Problems with `name` under this rule. With `prefix` the name is a `generateName` base: a
    /// trailing `-` is allowed because a random suffix will follow.
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        if self == Self::PathSegment {
            return if prefix {
                is_valid_path_segment_prefix(name)
            } else {
                is_valid_path_segment_name(name)
            };
        }
        let masked;
        let name = if prefix {
            masked = mask_trailing_dash(name);
            masked.as_str()
        } else {
            name
        };
        match self {
            Self::Dns1123Subdomain => is_dns1123_subdomain(name),
            Self::Dns1123Label => is_dns1123_label(name),
            Self::Dns1035Label => is_dns1035_label(name),
            Self::PathSegment => unreachable!("handled above"),
        }
    }
}

/// Upstream's `maskTrailingDash`: replaces the last two bytes of a name ending in `-` by `a`, so
/// that the trailing dash before a generated suffix passes the format check. (Upstream drops two
/// bytes, not one; kept for identical verdicts.)
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let mut cut = name.len() - 2;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}a", &name[..cut])
    } else {
        name.to_owned()
    }
}

/// The name kube-apiserver makes from `generateName`: the base cut to
/// [`MAX_GENERATED_NAME_LENGTH`] bytes, then five characters of
/// [`GENERATED_NAME_SUFFIX_ALPHABET`] chosen by `random` (each byte modulo 27). The caller
/// supplies the randomness, which keeps this crate free of I/O and tests deterministic.
pub fn generate_name(base: &str, random: [u8; GENERATED_NAME_SUFFIX_LENGTH]) -> String {
    let mut cut = base.len().min(MAX_GENERATED_NAME_LENGTH);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut name = String::with_capacity(cut + GENERATED_NAME_SUFFIX_LENGTH);
    name.push_str(&base[..cut]);
    for byte in random {
        let index = usize::from(byte) % GENERATED_NAME_SUFFIX_ALPHABET.len();
        name.push(char::from(GENERATED_NAME_SUFFIX_ALPHABET[index]));
    }
    name
}
