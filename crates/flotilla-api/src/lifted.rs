//! Kubernetes behaviour ported to Rust, written from upstream's documented behaviour and tests,
//! never copied. Each item records the upstream file and functions it follows.
//!
//! - [`quantity`]: `resource.Quantity` — k8s.io/apimachinery v0.33 `pkg/api/resource`
//!   (`quantity.go`: `ParseQuantity`, `CanonicalizeBytes`, `Cmp`, `Add`, `Sub`, `Value`,
//!   `MilliValue`; `suffix.go`; `amount.go`; `math.go`; `scale_int.go`).
//!
//! Ported behaviour that lives with its owner rather than here:
//! - [`crate::selector::label`]: k8s.io/apimachinery v0.33 `pkg/labels/selector.go` and
//!   `pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`).
//! - [`crate::selector::field`]: k8s.io/apimachinery v0.33 `pkg/fields/selector.go`; the fields
//!   per kind from kubernetes `pkg/apis/*/v1/conversion.go` and `pkg/registry/*/strategy.go`.
//! - [`crate::validation`]: k8s.io/apimachinery v0.33 `pkg/util/validation/validation.go`,
//!   `pkg/util/validation/field/{errors,path}.go`, `pkg/api/validation/{objectmeta,generic}.go`,
//!   `pkg/api/validation/path/name.go`, `pkg/apis/meta/v1/validation/validation.go`,
//!   `pkg/api/errors/errors.go` (`NewInvalid`), `pkg/util/errors/errors.go` (aggregate
//!   messages); k8s.io/apiserver `pkg/storage/names/generate.go` (generateName).

//! - [`hpa`]: the horizontal pod autoscaler's arithmetic — kubernetes
//!   `pkg/controller/podautoscaler/{replica_calculator,horizontal}.go` (release-1.27), as
//!   Karmada's FederatedHPA controller lifts it; also run by the simulated members' HPA
//!   controller.
//! - [`taints`]: `Toleration.ToleratesTaint` and taint strings — kubernetes v1.33
//!   `staging/src/k8s.io/api/core/v1/{toleration,taint}.go`,
//!   `k8s.io/component-helpers/scheduling/corev1/helpers.go`; the NoExecute eviction timing —
//!   `pkg/controller/tainteviction/taint_eviction.go` (`getMatchingTolerations`,
//!   `getMinTolerationTime`), as Karmada's taint manager uses them.

pub mod hpa;
pub mod quantity;
pub mod taints;
