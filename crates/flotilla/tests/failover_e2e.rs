//! Failover end to end through the real binary and the real kubectl: `flotilla up --demo` with
//! Karmada's e2e settings (`--feature-gates=AllAlpha=true,AllBeta=true`,
//! `--enable-no-execute-taint-eviction=true`), a member tainted NoExecute the way
//! `karmadactl taint` does it, and workloads moving to the other member as Karmada's
//! `failover_test.go` expects.

#[path = "propagate_e2e/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "failover_e2e/scenarios.rs"]
mod scenarios;

/// One control plane; the cluster-failover scenarios taint members, so they run one after the
/// other, before the application-failover ones (which taint nothing) run together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workloads_leave_members_tainted_noexecute() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = dir.path().join("data");
    let data = data.to_string_lossy();
    let plane = support::ControlPlane::start(
        &[
            "--demo",
            "--store",
            "memory",
            "--data-dir",
            &data,
            "--feature-gates=AllAlpha=true,AllBeta=true",
            "--enable-no-execute-taint-eviction=true",
            "--allow-no-execute-taint-policy=true",
        ],
        dir.path(),
    )
    .await;
    plane.await_members_ready(&support::MEMBERS).await;
    scenarios::cluster_failover_gracefully(&plane).await;
    scenarios::cluster_failover_directly_keeps_state(&plane).await;
    scenarios::cluster_affinities_fail_over_to_the_next_term(&plane).await;
    scenarios::rebalancer_spreads_again_after_failover(&plane).await;
    scenarios::taint_policy_evicts_when_a_condition_fails(&plane).await;
    tokio::join!(
        scenarios::application_failover_gracefully(&plane),
        scenarios::application_failover_never(&plane),
        scenarios::application_failover_directly(&plane),
    );
}
