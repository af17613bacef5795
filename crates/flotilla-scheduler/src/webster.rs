//! Webster (Sainte-Laguë) apportionment and the dispenser's UID tie-breaker, shared with the
//! binding controller (which divides a Divided Job's `completions` with it), from
//! `flotilla_api::karmada::webster`.

pub use flotilla_api::karmada::webster::*;
