//! `imageOverrider`: images parsed as `[registry/]repository[:tag|@digest]` (Karmada's
//! `imageparser`), one component added to, replaced or removed.

use flotilla_api::karmada::ImageOverrider;
use serde_json::Value;

use super::ops::{Operation, containers_path, json_patch};

/// An image reference split into its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageComponents {
    pub registry: String,
    pub repository: String,
    pub tag: String,
    pub digest: String,
}

impl ImageComponents {
    /// Splits `image`. The part before the first `/` is a registry when it contains `.` or `:`
    /// or is `localhost`.
    pub fn parse(image: &str) -> Self {
        let mut out = Self::default();
        let remainder = match image.find('/') {
            Some(i) if image[..i].contains(['.', ':']) || &image[..i] == "localhost" => {
                out.registry = image[..i].to_owned();
                &image[i + 1..]
            }
            _ => image,
        };
        let remainder = if let Some(j) = remainder.find('@') {
            out.digest = remainder[j + 1..].to_owned();
            &remainder[..j]
        } else if let Some(j) = remainder.rfind(':') {
            out.tag = remainder[j + 1..].to_owned();
            &remainder[..j]
        } else {
            remainder
        };
        out.repository = remainder.to_owned();
        out
    }

    /// The tag, or the digest when there is no tag.
    pub fn tag_or_digest(&self) -> String {
        if self.tag.is_empty() {
            self.digest.clone()
        } else {
            self.tag.clone()
        }
    }

    /// Sets the tag, or the digest when `value` looks like one (`algorithm:hex`).
    pub fn set_tag_or_digest(&mut self, value: &str) {
        self.tag.clear();
        self.digest.clear();
        if looks_like_digest(value) {
            self.digest = value.to_owned();
        } else {
            self.tag = value.to_owned();
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

fn looks_like_digest(value: &str) -> bool {
    value.split_once(':').is_some_and(|(algorithm, hex)| {
        algorithm.starts_with(|c: char| c.is_ascii_alphabetic())
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    })
}

/// The new image after `overrider`.
pub fn override_image(image: &str, overrider: &ImageOverrider) -> Result<String, String> {
    let mut parts = ImageComponents::parse(image);
    let value = overrider.value.as_str();
    match (overrider.component.as_str(), overrider.operator.as_str()) {
        ("Registry", "add") => parts.registry.push_str(value),
        ("Registry", "replace") => parts.registry = value.to_owned(),
        ("Registry", "remove") => parts.registry.clear(),
        ("Repository", "add") => parts.repository.push_str(value),
        ("Repository", "replace") => parts.repository = value.to_owned(),
        ("Repository", "remove") => parts.repository.clear(),
        ("Tag", "add") => {
            let combined = parts.tag_or_digest() + value;
            parts.set_tag_or_digest(&combined);
        }
        ("Tag", "replace") => parts.set_tag_or_digest(value),
        ("Tag", "remove") => parts.set_tag_or_digest(""),
        (component, operator) => {
            return Err(format!(
                "unsupported image override {operator:?} of component {component:?}"
            ));
        }
    }
    Ok(parts.to_string())
}

/// Applies one image overrider: at `predicate.path`, or to every container of a known kind.
pub fn apply(object: &mut Value, overrider: &ImageOverrider) -> Result<(), String> {
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
            Some(_) => return Err(format!("image at {path} is not a string")),
            None => return Err(format!("no image at {path}")),
        };
        operations.push(Operation {
            op: "replace".into(),
            path,
            value: Some(Value::String(override_image(&image, overrider)?)),
        });
    }
    json_patch(object, &operations)
}
