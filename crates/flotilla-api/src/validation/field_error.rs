//! [`FieldError`]: one validation failure, rendered exactly like Kubernetes' `field.Error`
//! (k8s.io/apimachinery/pkg/util/validation/field/errors.go and path.go).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;

/// What kind of failure a [`FieldError`] is (Go's `field.ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// A referenced value was not found.
    NotFound,
    /// A required value was missing.
    Required,
    /// A value that must be unique was repeated.
    Duplicate,
    /// The value is malformed or out of range.
    Invalid,
    /// The value is not one of the supported ones.
    NotSupported,
    /// The value is valid but not allowed here (e.g. an immutable field changed).
    Forbidden,
    /// The value is longer than allowed.
    TooLong,
    /// A list has more items than allowed.
    TooMany,
    /// Validation itself failed.
    Internal,
    /// The value has the wrong type.
    TypeInvalid,
}

impl FieldErrorKind {
    /// The `Status.details.causes[].reason` string (Go's `field.ErrorType` value).
    pub fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
            Self::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The human phrase that starts the message (Go's `ErrorType.String()`).
    pub fn description(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }

    /// Kinds whose message never shows the bad value.
    fn omits_value(self) -> bool {
        matches!(
            self,
            Self::Required | Self::Forbidden | Self::TooLong | Self::Internal
        )
    }
}

/// The offending value of a [`FieldError`], rendered the way Go's `%v`/`%q`/`%#v` would.
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// A string, rendered quoted (`"Foo_bar"`).
    Str(String),
    /// An integer, rendered bare (`-1`).
    Int(i64),
    /// A boolean, rendered bare.
    Bool(bool),
    /// A list of strings, rendered like Go's `%#v` (`[]string{"a", "b"}`).
    StrList(Vec<String>),
    /// No value (`null`).
    Null,
    /// Text rendered as is, for values that have no better representation.
    Verbatim(String),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Str(s) => f.write_str(&go_quote(s)),
            Self::Int(i) => write!(f, "{i}"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::StrList(items) => {
                let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
                write!(f, "[]string{{{}}}", quoted.join(", "))
            }
            Self::Null => f.write_str("null"),
            Self::Verbatim(s) => f.write_str(s),
        }
    }
}

impl From<&str> for BadValue {
    fn from(value: &str) -> Self {
        Self::Str(value.to_owned())
    }
}

impl From<String> for BadValue {
    fn from(value: String) -> Self {
        Self::Str(value)
    }
}

impl From<&String> for BadValue {
    fn from(value: &String) -> Self {
        Self::Str(value.clone())
    }
}

impl From<i64> for BadValue {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<i32> for BadValue {
    fn from(value: i32) -> Self {
        Self::Int(value.into())
    }
}

impl From<bool> for BadValue {
    fn from(value: bool) -> Self {
        Self::Bool(value)
    }
}

impl From<Vec<String>> for BadValue {
    fn from(value: Vec<String>) -> Self {
        Self::StrList(value)
    }
}

/// A path to a field, rendered like Go's `field.Path` (`spec.containers[0].name`,
/// `metadata.labels[app]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path starting at `name` (e.g. `metadata`).
    pub fn new(name: &str) -> Self {
        Self(name.to_owned())
    }

    /// The path to field `name` of this one.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            return Self::new(name);
        }
        Self(format!("{}.{name}", self.0))
    }

    /// The path to item `index` of this list.
    pub fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    /// The path to key `key` of this map.
    pub fn key(&self, key: &str) -> Self {
        Self(format!("{}[{key}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<FieldPath> for String {
    fn from(path: FieldPath) -> Self {
        path.0
    }
}

impl From<&FieldPath> for String {
    fn from(path: &FieldPath) -> Self {
        path.0.clone()
    }
}

/// One validation failure. `Display` renders `<field>: <body>` exactly like Go's
/// `(*field.Error).Error()`, e.g. `metadata.name: Invalid value: "Foo_bar": a lowercase RFC 1123
/// subdomain must consist of …`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {}", self.body())]
pub struct FieldError {
    /// The path of the field, e.g. `metadata.name`.
    pub field: String,
    /// The kind of failure.
    pub kind: FieldErrorKind,
    /// The offending value; `None` leaves it out of the message.
    pub value: Option<BadValue>,
    /// Why the value is wrong; may be empty.
    pub detail: String,
}

impl FieldError {
    /// A general constructor; prefer the named ones below.
    pub fn new(
        field: impl Into<String>,
        kind: FieldErrorKind,
        value: Option<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            kind,
            value,
            detail: detail.into(),
        }
    }

    /// `field.Required`: a required value is missing.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Required, None, detail)
    }

    /// `field.Invalid`: the value is malformed.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(field, FieldErrorKind::Invalid, Some(value.into()), detail)
    }

    /// `field.Duplicate`: the value repeats one that must be unique.
    pub fn duplicate(field: impl Into<String>, value: impl Into<BadValue>) -> Self {
        Self::new(field, FieldErrorKind::Duplicate, Some(value.into()), "")
    }

    /// `field.NotFound`: a referenced value does not exist.
    pub fn not_found(field: impl Into<String>, value: impl Into<BadValue>) -> Self {
        Self::new(field, FieldErrorKind::NotFound, Some(value.into()), "")
    }

    /// `field.NotSupported`: the value is not one of `supported` (listed quoted in the detail).
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<BadValue>,
        supported: &[&str],
    ) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(
            field,
            FieldErrorKind::NotSupported,
            Some(value.into()),
            detail,
        )
    }

    /// `field.Forbidden`: the value is not allowed here.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Forbidden, None, detail)
    }

    /// `field.TooLong`: the value exceeds `max_bytes` (unknown limit: `None`).
    pub fn too_long(field: impl Into<String>, max_bytes: Option<usize>) -> Self {
        let detail = match max_bytes {
            Some(max) => format!("may not be more than {max} bytes"),
            None => "value is too long".to_owned(),
        };
        Self::new(field, FieldErrorKind::TooLong, None, detail)
    }

    /// `field.TooMany`: a list has `actual` items, more than `max`.
    pub fn too_many(field: impl Into<String>, actual: Option<usize>, max: Option<usize>) -> Self {
        let detail = match max {
            Some(max) => format!("must have at most {max} items"),
            None => "has too many items".to_owned(),
        };
        let value = actual.map(|n| BadValue::Int(i64::try_from(n).unwrap_or(i64::MAX)));
        Self::new(field, FieldErrorKind::TooMany, value, detail)
    }

    /// `field.InternalError`: validation could not run.
    pub fn internal(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, FieldErrorKind::Internal, None, detail)
    }

    /// `field.TypeInvalid`: the value has the wrong type.
    pub fn type_invalid(
        field: impl Into<String>,
        value: impl Into<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(
            field,
            FieldErrorKind::TypeInvalid,
            Some(value.into()),
            detail,
        )
    }

    /// The message without the field path (Go's `ErrorBody()`), which is what a `StatusCause`
    /// carries as its `message`.
    pub fn body(&self) -> String {
        let mut body = self.kind.description().to_owned();
        if !self.kind.omits_value()
            && let Some(value) = &self.value
        {
            body.push_str(": ");
            body.push_str(&value.to_string());
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }

    /// The `Status.details.causes[]` entry kube-apiserver emits for this error.
    pub fn to_status_cause(&self) -> StatusCause {
        StatusCause {
            field: Some(self.field.clone()),
            message: Some(self.body()),
            reason: Some(self.kind.reason().to_owned()),
        }
    }
}

/// Several errors as one message, like Go's `ErrorList.ToAggregate().Error()`: duplicates
/// dropped, one message bare, several as `[a, b]`, none as the empty string.
pub fn aggregate_message(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::with_capacity(errors.len());
    for error in errors {
        let message = error.to_string();
        if !seen.contains(&message) {
            seen.push(message);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// The `Status.message` of a 422 Invalid reply (Go's `errors.NewInvalid`):
/// `Deployment.apps "web" is invalid: <aggregate>`.
pub fn invalid_message(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> String {
    let qualified = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    let aggregate = aggregate_message(errors);
    if aggregate.is_empty() {
        format!("{qualified} {} is invalid", go_quote(name))
    } else {
        format!("{qualified} {} is invalid: {aggregate}", go_quote(name))
    }
}

/// Quotes a string the way Go's `strconv.Quote` (`%q`) does.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
