//! Label selectors: the string syntax (`app=web,tier in (fe,be),!legacy,replicas>2`), the API
//! type `metav1.LabelSelector`, and matching.
//!
//! Provenance: k8s.io/apimachinery v0.33 `pkg/labels/selector.go` (`Parse`, `NewRequirement`,
//! `Requirement.Matches`, `Requirement.String`) and `pkg/apis/meta/v1/helpers.go`
//! (`LabelSelectorAsSelector`). Differences: requirement values are a sorted set from the start
//! (upstream sorts when printing), requirements with the same key keep their input order (upstream
//! sorts unstably), and errors about the key name the field `key` where upstream prints `<nil>`.

mod parser;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

use crate::validation::{
    FieldError, FieldPath, aggregate_message, is_qualified_name, is_valid_label_value,
};

/// A requirement's operator. `=` and `==` are distinct, as upstream, so that a selector prints
/// back the way it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `k=v`
    Equals,
    /// `k==v`
    DoubleEquals,
    /// `k!=v` (also true when `k` is absent)
    NotEquals,
    /// `k in (a,b)`
    In,
    /// `k notin (a,b)` (also true when `k` is absent)
    NotIn,
    /// `k`
    Exists,
    /// `!k`
    DoesNotExist,
    /// `k>5`: the label is an integer greater than the value.
    GreaterThan,
    /// `k<5`: the label is an integer less than the value.
    LessThan,
}

impl Operator {
    /// Go's `selection.Operator` string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Equals => "=",
            Self::DoubleEquals => "==",
            Self::NotEquals => "!=",
            Self::In => "in",
            Self::NotIn => "notin",
            Self::Exists => "exists",
            Self::DoesNotExist => "!",
            Self::GreaterThan => "gt",
            Self::LessThan => "lt",
        }
    }
}

/// One condition of a selector: a key, an operator and a (sorted) set of values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values: one for `=`, `==`, `!=`, `>`, `<`; at least one for `in`/`notin`; none for
    /// `exists`/`!`.
    pub values: BTreeSet<String>,
}

/// Why a selector could not be parsed or built. `Display` gives upstream's message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectorError {
    /// An unexpected token. `found` is its text (empty at the end of input) and `position` its
    /// byte offset in the selector string.
    #[error("{}{message}", prefix(*.in_requirement))]
    Syntax {
        /// Upstream's message, e.g. `found ')', expected: identifier`.
        message: String,
        /// The offending token.
        found: String,
        /// Its byte offset.
        position: usize,
        /// Whether upstream wraps it in `unable to parse requirement: `.
        in_requirement: bool,
    },
    /// A requirement with an invalid key, operator/value combination or value.
    #[error("{}{}", prefix(*.in_requirement), aggregate_message(.errors))]
    InvalidRequirement {
        /// What is wrong, with paths such as `key` or `values[0][app]`.
        errors: Vec<FieldError>,
        /// Byte offset of the requirement in the selector string (0 when not parsed from one).
        position: usize,
        /// Whether upstream wraps it in `unable to parse requirement: `.
        in_requirement: bool,
    },
    /// A `matchExpressions` operator other than In, NotIn, Exists and DoesNotExist.
    #[error("{0:?} is not a valid label selector operator")]
    UnknownOperator(String),
    /// The selector uses `>`/`<`, which `metav1.LabelSelector` cannot express.
    #[error("operator {0:?} cannot be expressed in a metav1.LabelSelector")]
    NotRepresentable(&'static str),
}

fn prefix(in_requirement: bool) -> &'static str {
    if in_requirement {
        "unable to parse requirement: "
    } else {
        ""
    }
}

impl Requirement {
    /// Builds and validates a requirement like upstream's `NewRequirement`.
    pub fn new(
        key: impl Into<String>,
        operator: Operator,
        values: impl IntoIterator<Item = String>,
    ) -> Result<Self, SelectorError> {
        let key = key.into();
        let values: Vec<String> = values.into_iter().collect();
        let errors = requirement_errors(&key, operator, &values);
        if !errors.is_empty() {
            return Err(SelectorError::InvalidRequirement {
                errors,
                position: 0,
                in_requirement: false,
            });
        }
        Ok(Self {
            key,
            operator,
            values: values.into_iter().collect(),
        })
    }

    /// Whether `labels` (looked up by key) satisfy this requirement.
    pub fn matches_with<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> bool {
        let has_value = |v: &str| self.values.contains(v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                lookup(&self.key).is_some_and(has_value)
            }
            Operator::NotIn | Operator::NotEquals => !lookup(&self.key).is_some_and(has_value),
            Operator::Exists => lookup(&self.key).is_some(),
            Operator::DoesNotExist => lookup(&self.key).is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(actual)) = lookup(&self.key).map(str::parse::<i64>) else {
                    return false;
                };
                let mut values = self.values.iter();
                let (Some(bound), None) = (values.next(), values.next()) else {
                    return false;
                };
                let Ok(bound) = bound.parse::<i64>() else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }

    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }
}

/// Upstream's `NewRequirement` checks, with its field paths.
pub(crate) fn requirement_errors(
    key: &str,
    operator: Operator,
    values: &[String],
) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = is_qualified_name(key)
        .into_iter()
        .map(|m| FieldError::invalid("key", key, m))
        .collect();
    let values_path = FieldPath::new("values");
    match operator {
        Operator::In | Operator::NotIn if values.is_empty() => errors.push(FieldError::invalid(
            &values_path,
            values.to_vec(),
            "for 'in', 'notin' operators, values set can't be empty",
        )),
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
            errors.push(FieldError::invalid(
                &values_path,
                values.to_vec(),
                "exact-match compatibility requires one single value",
            ))
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            errors.push(FieldError::invalid(
                &values_path,
                values.to_vec(),
                "values set must be empty for exists and does not exist",
            ))
        }
        Operator::GreaterThan | Operator::LessThan => {
            if values.len() != 1 {
                errors.push(FieldError::invalid(
                    &values_path,
                    values.to_vec(),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, value) in values.iter().enumerate() {
                if value.parse::<i64>().is_err() {
                    errors.push(FieldError::invalid(
                        values_path.index(i),
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        _ => {}
    }
    for (i, value) in values.iter().enumerate() {
        let path = values_path.index(i).key(key);
        errors.extend(
            is_valid_label_value(value)
                .into_iter()
                .map(|m| FieldError::invalid(&path, value, m)),
        );
    }
    errors
}

impl fmt::Display for Requirement {
    /// Upstream's canonical form: `!k`, `k`, `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`,
    /// `k>5`, `k<5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = || {
            self.values
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(",")
        };
        match self.operator {
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::Exists => f.write_str(&self.key),
            Operator::Equals => write!(f, "{}={}", self.key, values()),
            Operator::DoubleEquals => write!(f, "{}=={}", self.key, values()),
            Operator::NotEquals => write!(f, "{}!={}", self.key, values()),
            Operator::GreaterThan => write!(f, "{}>{}", self.key, values()),
            Operator::LessThan => write!(f, "{}<{}", self.key, values()),
            Operator::In => write!(f, "{} in ({})", self.key, values()),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, values()),
        }
    }
}

/// A parsed label selector: the AND of its requirements, sorted by key. The empty selector
/// matches everything.
///
/// Which function treats a missing selector how:
/// - [`LabelSelector::parse`] of `""` and `TryFrom<&metav1::LabelSelector>` of `{}` give the
///   empty selector, which **matches everything**;
/// - [`api_selector_matches`] with `None` (a field like `spec.selector` left out) **matches
///   nothing**, as upstream's `LabelSelectorAsSelector(nil)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    /// The requirements, sorted by key.
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Parses the string syntax, as kube-apiserver does for `?labelSelector=`.
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut requirements = parser::parse(selector)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }

    /// The selector requiring each `key=value` of `labels` (upstream's `ValidatedSelectorFromSet`).
    pub fn from_set(labels: &BTreeMap<String, String>) -> Result<Self, SelectorError> {
        let requirements = labels
            .iter()
            .map(|(k, v)| Requirement::new(k.clone(), Operator::Equals, [v.clone()]))
            .collect::<Result<_, _>>()?;
        Ok(Self { requirements })
    }

    /// Whether this selector has no requirement (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether labels, looked up by key, satisfy every requirement.
    pub fn matches_with<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str> + Copy) -> bool {
        self.requirements.iter().all(|r| r.matches_with(lookup))
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// The value `key` must have for this selector to match, if it pins one (upstream's
    /// `RequiresExactMatch`; useful to narrow a list before matching).
    pub fn requires_exact_match(&self, key: &str) -> Option<&str> {
        let requirement = self.requirements.iter().find(|r| r.key == key)?;
        match requirement.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In
                if requirement.values.len() == 1 =>
            {
                requirement.values.first().map(String::as_str)
            }
            _ => None,
        }
    }

    /// This selector as `matchExpressions` (`=`/`==` become `In`, `!=` becomes `NotIn`). Fails
    /// for `>` and `<`, which the API type cannot express.
    pub fn to_api(&self) -> Result<metav1::LabelSelector, SelectorError> {
        let mut expressions = Vec::with_capacity(self.requirements.len());
        for r in &self.requirements {
            let operator = match r.operator {
                Operator::Equals | Operator::DoubleEquals | Operator::In => "In",
                Operator::NotEquals | Operator::NotIn => "NotIn",
                Operator::Exists => "Exists",
                Operator::DoesNotExist => "DoesNotExist",
                Operator::GreaterThan | Operator::LessThan => {
                    return Err(SelectorError::NotRepresentable(r.operator.as_str()));
                }
            };
            let values: Vec<String> = r.values.iter().cloned().collect();
            expressions.push(metav1::LabelSelectorRequirement {
                key: r.key.clone(),
                operator: operator.to_owned(),
                values: if values.is_empty() {
                    None
                } else {
                    Some(values)
                },
            });
        }
        Ok(metav1::LabelSelector {
            match_expressions: if expressions.is_empty() {
                None
            } else {
                Some(expressions)
            },
            match_labels: None,
        })
    }
}

impl fmt::Display for LabelSelector {
    /// The canonical string: requirements joined by `,`.
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

impl FromStr for LabelSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Parses a label selector string (see [`LabelSelector::parse`]).
pub fn parse(selector: &str) -> Result<LabelSelector, SelectorError> {
    LabelSelector::parse(selector)
}

impl TryFrom<&metav1::LabelSelector> for LabelSelector {
    type Error = SelectorError;

    /// Upstream's `LabelSelectorAsSelector` for a present selector: `matchLabels` become `=`
    /// requirements, `matchExpressions` In/NotIn/Exists/DoesNotExist; `{}` matches everything.
    fn try_from(api: &metav1::LabelSelector) -> Result<Self, Self::Error> {
        let mut requirements = Vec::new();
        for (key, value) in api.match_labels.iter().flatten() {
            requirements.push(Requirement::new(
                key.clone(),
                Operator::Equals,
                [value.clone()],
            )?);
        }
        for expression in api.match_expressions.iter().flatten() {
            let operator = match expression.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => return Err(SelectorError::UnknownOperator(other.to_owned())),
            };
            let values = expression.values.iter().flatten().cloned();
            requirements.push(Requirement::new(expression.key.clone(), operator, values)?);
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }
}

/// Whether `labels` match an optional API selector: `None` matches **nothing**, `Some({})`
/// matches **everything** (upstream's `LabelSelectorAsSelector` semantics, used for e.g.
/// `spec.selector` and Karmada's `labelSelector` fields).
pub fn api_selector_matches(
    selector: Option<&metav1::LabelSelector>,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    match selector {
        None => Ok(false),
        Some(api) => Ok(LabelSelector::try_from(api)?.matches(labels)),
    }
}

#[cfg(test)]
mod tests;
