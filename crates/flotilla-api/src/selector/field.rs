//! Field selectors: `?fieldSelector=metadata.name=web,status.phase!=Running`.
//!
//! Provenance: k8s.io/apimachinery v0.33 `pkg/fields/selector.go` (`ParseSelector`, `splitTerms`,
//! `splitTerm`, `EscapeValue`, `UnescapeValue`, `hasTerm`/`notHasTerm` matching). Terms are
//! sorted by their canonical text (upstream sorts the raw terms), so a selector's `Display` is the
//! same however it was written. Which fields each kind supports: [`supported_fields`] and [`fields_of`].

mod fields;

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

pub use fields::{fields_of, supported_fields};

/// A field requirement's operator. `==` parses as [`FieldOperator::Equals`], as upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldOperator {
    /// `f=v` or `f==v`
    Equals,
    /// `f!=v`
    NotEquals,
}

/// One term: a field, an operator and an (unescaped) value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field label, e.g. `status.phase`.
    pub field: String,
    /// The operator.
    pub operator: FieldOperator,
    /// The value, unescaped.
    pub value: String,
}

impl FieldRequirement {
    /// Whether a field value (`None` when the object lacks the field, which reads as `""`
    /// like upstream's `Fields.Get`) satisfies this term.
    pub fn matches_value(&self, actual: Option<&str>) -> bool {
        let equal = actual.unwrap_or_default() == self.value;
        match self.operator {
            FieldOperator::Equals => equal,
            FieldOperator::NotEquals => !equal,
        }
    }
}

impl fmt::Display for FieldRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        };
        write!(f, "{}{op}{}", self.field, escape_value(&self.value))
    }
}

/// Why a field selector was rejected. `Display` gives upstream's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldSelectorError {
    /// A term without `=`, `==` or `!=`.
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    Syntax {
        /// The whole selector.
        selector: String,
        /// The term that has no operator.
        term: String,
    },
    /// A backslash not followed by `\`, `,` or `=`.
    #[error("invalid field selector: invalid escape sequence: {0}")]
    InvalidEscape(String),
    /// A `,` or `=` inside a value without a backslash. (Upstream prints the character's code
    /// point; this prints the character.)
    #[error("invalid field selector: unescaped character in value: {0:?}")]
    UnescapedCharacter(char),
    /// The kind does not support selecting on this field.
    #[error("field label not supported: {0}")]
    Unsupported(String),
}

/// A parsed field selector: the AND of its terms. The empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    /// The terms, sorted by their canonical text.
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// A selector of `requirements`, put in canonical order.
    pub fn new(mut requirements: Vec<FieldRequirement>) -> Self {
        requirements.sort_by_cached_key(ToString::to_string);
        Self { requirements }
    }

    /// Parses the string syntax, as kube-apiserver does for `?fieldSelector=`. Field names are
    /// not checked here; see [`FieldSelector::convert_for`].
    pub fn parse(selector: &str) -> Result<Self, FieldSelectorError> {
        let mut requirements = Vec::new();
        for term in split_terms(selector) {
            if term.is_empty() {
                continue;
            }
            let Some((field, operator, raw_value)) = split_term(term) else {
                return Err(FieldSelectorError::Syntax {
                    selector: selector.to_owned(),
                    term: term.to_owned(),
                });
            };
            let value = unescape_value(raw_value)?;
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                operator,
                value,
            });
        }
        Ok(Self::new(requirements))
    }

    /// Whether this selector has no term.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object whose fields are looked up by `lookup` satisfies every term; a missing
    /// field reads as `""`.
    pub fn matches_with(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(lookup(&r.field).as_deref()))
    }

    /// Whether an object with these fields (see [`fields_of`]) satisfies every term.
    pub fn matches(&self, fields: &BTreeMap<String, String>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(fields.get(&r.field).map(String::as_str)))
    }

    /// The value `field` must equal for this selector to match, if a term pins it (upstream's
    /// `RequiresExactMatch`, e.g. to serve `metadata.name=x` as a get).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.operator == FieldOperator::Equals)
            .map(|r| r.value.as_str())
    }

    /// This selector checked against the fields `group`/`resource` supports, with legacy aliases
    /// rewritten (pods' `spec.host` is `spec.nodeName`), as kube-apiserver's field label
    /// conversion does before listing. Fails with `field label not supported: <f>`.
    pub fn convert_for(&self, group: &str, resource: &str) -> Result<Self, FieldSelectorError> {
        let supported = supported_fields(group, resource);
        let mut converted = Vec::with_capacity(self.requirements.len());
        for requirement in &self.requirements {
            let field = match (group, resource, requirement.field.as_str()) {
                ("", "pods", "spec.host") => "spec.nodeName",
                (_, _, field) => field,
            };
            if !supported.contains(&field) {
                return Err(FieldSelectorError::Unsupported(requirement.field.clone()));
            }
            converted.push(FieldRequirement {
                field: field.to_owned(),
                ..requirement.clone()
            });
        }
        Ok(Self::new(converted))
    }
}

impl fmt::Display for FieldSelector {
    /// The canonical string: terms joined by `,`, values escaped, `==` written `=`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

impl FromStr for FieldSelector {
    type Err = FieldSelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Parses a field selector string (see [`FieldSelector::parse`]).
pub fn parse(selector: &str) -> Result<FieldSelector, FieldSelectorError> {
    FieldSelector::parse(selector)
}

/// Escapes `\`, `,` and `=` in a value with a backslash.
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Undoes [`escape_value`]; rejects unknown escapes and unescaped `,` or `=`.
pub fn unescape_value(value: &str) -> Result<String, FieldSelectorError> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped @ ('\\' | ',' | '=')) => out.push(escaped),
                Some(other) => return Err(FieldSelectorError::InvalidEscape(format!("\\{other}"))),
                None => return Err(FieldSelectorError::InvalidEscape("\\".to_owned())),
            },
            ',' | '=' => return Err(FieldSelectorError::UnescapedCharacter(c)),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Splits on commas not preceded by an escaping backslash.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_escape = false;
    for (i, c) in selector.char_indices() {
        if in_escape {
            in_escape = false;
        } else if c == '\\' {
            in_escape = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits a term at the first operator, trying `!=`, `==`, `=` at each position.
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    const OPERATORS: [(&str, FieldOperator); 3] = [
        ("!=", FieldOperator::NotEquals),
        ("==", FieldOperator::Equals),
        ("=", FieldOperator::Equals),
    ];
    (0..term.len())
        .filter(|&i| term.is_char_boundary(i))
        .find_map(|i| {
            OPERATORS
                .iter()
                .find(|(op, _)| term[i..].starts_with(op))
                .map(|(op, operator)| (&term[..i], *operator, &term[i + op.len()..]))
        })
}

#[cfg(test)]
mod tests;
