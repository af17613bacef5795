//! `imageOverrider`: images parsed as Docker references
//! (`[registry[:port]/]repository[:tag][@digest]`, Karmada's `imageparser` over the
//! distribution reference grammar), one component added to, replaced or removed.
//!
//! A reference with both a tag and a digest keeps only the tag. An image that is not a valid
//! reference (empty, uppercase repository, bad digest) is an error. A `Tag` value that is neither
//! a valid tag nor a valid digest leaves the image unchanged.

use flotilla_api::karmada::ImageOverrider;
use serde_json::Value;

use super::ops::{Operation, containers_path, json_patch};

/// The longest repository path a reference may have.
const MAX_PATH_LEN: usize = 255;

/// Why an image is not a valid reference (the reference library's wording).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    #[error("repository name must have at least one component")]
    NameEmpty,
    #[error("repository name must be lowercase")]
    NameContainsUppercase,
    #[error("invalid reference format")]
    InvalidFormat,
    #[error("repository name must not be more than {MAX_PATH_LEN} characters")]
    NameTooLong,
    #[error("invalid checksum digest format")]
    DigestInvalidFormat,
    #[error("invalid checksum digest length")]
    DigestInvalidLength,
    #[error("unsupported digest algorithm")]
    DigestUnsupported,
}

/// Why an image overrider could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("failed to parse image value({image}), error: {reason}")]
    Parse {
        image: String,
        reason: ReferenceError,
    },
    #[error("unsupported image override {operator:?} of component {component:?}")]
    Unsupported { component: String, operator: String },
    #[error("image at {0} is not a string")]
    NotAString(String),
    #[error("no image at {0}")]
    Missing(String),
    #[error("{0}")]
    Patch(String),
}

/// An image reference split into its parts (at most one of `tag` and `digest` is set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageComponents {
    pub registry: String,
    pub repository: String,
    pub tag: String,
    pub digest: String,
}

impl ImageComponents {
    /// Parses `image`. The part of the name before the first `/` is the registry when it
    /// contains `.` or `:` or is `localhost`. With both a tag and a digest, the tag is kept.
    pub fn parse(image: &str) -> Result<Self, ReferenceError> {
        let Some((name, tag, digest)) = split_reference(image) else {
            return Err(if image.is_empty() {
                ReferenceError::NameEmpty
            } else if split_reference(&image.to_lowercase()).is_some() {
                ReferenceError::NameContainsUppercase
            } else {
                ReferenceError::InvalidFormat
            });
        };
        let path = match name.split_once('/') {
            Some((first, rest)) if is_domain_and_port(first) => rest,
            _ => name,
        };
        if path.len() > MAX_PATH_LEN {
            return Err(ReferenceError::NameTooLong);
        }
        if let Some(digest) = digest {
            validate_digest(digest)?;
        }
        let (registry, repository) = match name.split_once('/') {
            Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
                (first, rest)
            }
            _ => ("", name),
        };
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.unwrap_or_default().to_owned(),
            digest: match tag {
                Some(_) => String::new(),
                None => digest.unwrap_or_default().to_owned(),
            },
        })
    }

    /// The tag, or the digest when there is no tag.
    pub fn tag_or_digest(&self) -> &str {
        if self.tag.is_empty() {
            &self.digest
        } else {
            &self.tag
        }
    }

    /// Sets the tag when `value` is a valid tag, else the digest when it is a valid digest;
    /// otherwise changes nothing.
    pub fn set_tag_or_digest(&mut self, value: &str) {
        if is_tag(value) {
            self.tag = value.to_owned();
            self.digest.clear();
        } else if is_digest(value) {
            self.digest = value.to_owned();
            self.tag.clear();
        }
    }

    /// Removes the tag, or the digest when there is no tag.
    pub fn remove_tag_or_digest(&mut self) {
        if self.tag.is_empty() {
            self.digest.clear();
        } else {
            self.tag.clear();
        }
    }
}

impl std::fmt::Display for ImageComponents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.registry.is_empty() {
            write!(f, "{}/", self.registry)?;
        }
        f.write_str(&self.repository)?;
        if !self.tag.is_empty() {
            write!(f, ":{}", self.tag)?;
        } else if !self.digest.is_empty() {
            write!(f, "@{}", self.digest)?;
        }
        Ok(())
    }
}

/// `name[:tag][@digest]` split and checked against the reference grammar (the digest only by
/// its shape).
fn split_reference(reference: &str) -> Option<(&str, Option<&str>, Option<&str>)> {
    let (rest, digest) = match reference.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (reference, None),
    };
    if digest.is_some_and(|d| !is_digest(d)) {
        return None;
    }
    // A `:` in the name belongs to a registry port and is always followed by a `/`.
    let (name, tag) = match rest.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') => (name, Some(tag)),
        _ => (rest, None),
    };
    if tag.is_some_and(|t| !is_tag(t)) {
        return None;
    }
    is_name(name).then_some((name, tag, digest))
}

/// `[domain[:port]/]component(/component)*`.
fn is_name(name: &str) -> bool {
    is_remote_name(name)
        || name
            .split_once('/')
            .is_some_and(|(domain, rest)| is_domain_and_port(domain) && is_remote_name(rest))
}

fn is_remote_name(name: &str) -> bool {
    name.split('/').all(is_path_component)
}

/// Lowercase alphanumeric runs joined by `.`, `_`, `__` or one or more `-`.
fn is_path_component(component: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let bytes = component.as_bytes();
    if !bytes.first().is_some_and(|&c| alnum(c)) || !bytes.last().is_some_and(|&c| alnum(c)) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let separator = &component[start..i];
        if !matches!(separator, "." | "_" | "__") && !separator.bytes().all(|c| c == b'-') {
            return false;
        }
    }
    true
}

/// A host name or bracketed IPv6 address, optionally with `:port`.
fn is_domain_and_port(domain: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    let port_ok = |rest: &str| rest.is_empty() || rest.strip_prefix(':').is_some_and(digits);
    if let Some(bracketed) = domain.strip_prefix('[') {
        let Some((address, rest)) = bracketed.split_once(']') else {
            return false;
        };
        return !address.is_empty()
            && address.bytes().all(|c| c.is_ascii_hexdigit() || c == b':')
            && port_ok(rest);
    }
    let (host, rest) = match domain.find(':') {
        Some(i) => domain.split_at(i),
        None => (domain, ""),
    };
    host.split('.').all(is_domain_component) && port_ok(rest)
}

fn is_domain_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        && bytes
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-')
}

/// `[\w][\w.-]{0,127}`.
fn is_tag(tag: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = tag.as_bytes();
    (1..=128).contains(&bytes.len())
        && word(bytes[0])
        && bytes[1..]
            .iter()
            .all(|&c| word(c) || c == b'.' || c == b'-')
}

/// `algorithm:hex`: algorithm components (a letter, then letters and digits) joined by one of
/// `-_+.`, then 32 or more hex digits.
fn is_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    algorithm.split(['-', '_', '+', '.']).all(|component| {
        component
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphabetic)
            && component.bytes().all(|c| c.is_ascii_alphanumeric())
    }) && hex.len() >= 32
        && hex.bytes().all(|c| c.is_ascii_hexdigit())
}

/// A digest inside a reference must use a known algorithm with an encoding of its exact length.
fn validate_digest(digest: &str) -> Result<(), ReferenceError> {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return Err(ReferenceError::DigestInvalidFormat);
    };
    if algorithm.is_empty() || encoded.is_empty() {
        return Err(ReferenceError::DigestInvalidFormat);
    }
    let bytes = match algorithm {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => {
            let lower_alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            let well_formed = algorithm
                .split(['.', '+', '_', '-'])
                .all(|c| !c.is_empty() && c.bytes().all(lower_alnum))
                && encoded
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'=' | b'_' | b'-'));
            return Err(if well_formed {
                ReferenceError::DigestUnsupported
            } else {
                ReferenceError::DigestInvalidFormat
            });
        }
    };
    if encoded.len() != bytes * 2 {
        return Err(ReferenceError::DigestInvalidLength);
    }
    if !encoded
        .bytes()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    {
        return Err(ReferenceError::DigestInvalidFormat);
    }
    Ok(())
}

/// The new image after `overrider`.
pub fn override_image(image: &str, overrider: &ImageOverrider) -> Result<String, ImageError> {
    let mut parts = ImageComponents::parse(image).map_err(|reason| ImageError::Parse {
        image: image.to_owned(),
        reason,
    })?;
    let value = overrider.value.as_str();
    match (overrider.component.as_str(), overrider.operator.as_str()) {
        ("Registry", "add") => parts.registry.push_str(value),
        ("Registry", "replace") => parts.registry = value.to_owned(),
        ("Registry", "remove") => parts.registry.clear(),
        ("Repository", "add") => parts.repository.push_str(value),
        ("Repository", "replace") => parts.repository = value.to_owned(),
        ("Repository", "remove") => parts.repository.clear(),
        ("Tag", "add") => {
            let combined = format!("{}{value}", parts.tag_or_digest());
            parts.set_tag_or_digest(&combined);
        }
        ("Tag", "replace") => parts.set_tag_or_digest(value),
        ("Tag", "remove") => parts.remove_tag_or_digest(),
        (component, operator) => {
            return Err(ImageError::Unsupported {
                component: component.to_owned(),
                operator: operator.to_owned(),
            });
        }
    }
    Ok(parts.to_string())
}

/// Applies one image overrider: at `predicate.path`, or to every container of a known kind.
pub fn apply(object: &mut Value, overrider: &ImageOverrider) -> Result<(), ImageError> {
    let paths: Vec<String> = match &overrider.predicate {
        Some(predicate) => vec![predicate.path.clone()],
        None => {
            let Some(containers) = containers_path(object) else {
                return Ok(());
            };
            let count = object
                .pointer(containers)
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            (0..count)
                .map(|i| format!("{containers}/{i}/image"))
                .collect()
        }
    };
    let mut operations = Vec::new();
    for path in paths {
        let image = match object.pointer(&path) {
            Some(Value::String(image)) => image.clone(),
            Some(_) => return Err(ImageError::NotAString(path)),
            None => return Err(ImageError::Missing(path)),
        };
        operations.push(Operation {
            op: "replace".into(),
            path,
            value: Some(Value::String(override_image(&image, overrider)?)),
        });
    }
    json_patch(object, &operations).map_err(ImageError::Patch)
}
