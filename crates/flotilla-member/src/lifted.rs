//! Kubernetes and Karmada behaviour ported to Rust, written from upstream's documented
//! behaviour, never copied.
//!
//! - [`requests`]: a pod's effective resource requests and which resource names are counted —
//!   karmada-io/karmada v1.14 `pkg/util/resource.go` (`Resource.AddPodRequest`, `Add`,
//!   `SetMaxResource`, `ResourceList`) and kubernetes v1.33 `pkg/apis/core/v1/helper/helpers.go`
//!   (`IsScalarResourceName`, `IsExtendedResourceName`, `IsHugePageResourceName`,
//!   `IsPrefixedNativeResource`, `IsAttachableVolumeResourceName`).

pub mod requests;
