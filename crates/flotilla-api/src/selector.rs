//! Label and field selectors: parsing the string syntax of `?labelSelector=` and
//! `?fieldSelector=`, canonical rendering, and matching objects.
//!
//! Behaviour follows k8s.io/apimachinery v0.33 `pkg/labels` and `pkg/fields`; the fields each
//! kind exposes follow kube-apiserver's registries (`pkg/registry/*/strategy.go`) and field label
//! conversions (`pkg/apis/*/v1/conversion.go`).

pub mod field;
pub mod label;
