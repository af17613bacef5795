//! Member clusters end to end: an in-process control plane running the `cluster` and
//! `clusterStatus` controllers with `SecretMemberClients`, and `flotilla sim` members joined
//! the way `flotilla join` joins them (a service-account token of the member in a Secret, a
//! `Push` Cluster). Timings are shortened; nothing asserts how long anything took.

#[path = "../src/cluster_proxy.rs"]
#[allow(dead_code)]
mod cluster_proxy;

#[path = "clusters/support.rs"]
mod support;

#[path = "kubectl/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "clusters/health.rs"]
mod health;
#[path = "clusters/kubectl.rs"]
mod kubectl;
#[path = "clusters/lifecycle.rs"]
mod lifecycle;
#[path = "clusters/proxy.rs"]
mod proxy;
#[path = "clusters/pull.rs"]
mod pull;
#[path = "clusters/summary.rs"]
mod summary;
