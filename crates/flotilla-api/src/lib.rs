//! Pure helpers for the Kubernetes and Karmada APIs that the API server, the controllers and the
//! scheduler share: label and field selectors ([`selector`]), object-name and metadata validation
//! with Kubernetes' exact error strings ([`validation`]), and behaviour ported from Kubernetes
//! such as resource quantities ([`lifted`]), and Karmada's API types with its naming, affinity and
//! replica-interpretation rules ([`karmada`]).
//!
//! This crate does no I/O and must not depend on tokio or on any other workspace crate.

pub mod karmada;
pub mod lifted;
pub mod meta;
pub mod selector;
pub mod validation;

pub use lifted::quantity::{Quantity, QuantityError, QuantityFormat};
pub use selector::field::{FieldSelector, FieldSelectorError};
pub use selector::label::{LabelSelector, SelectorError};
pub use validation::{FieldError, FieldErrorKind, FieldPath};
