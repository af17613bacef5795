//! Member HPAs owning a workload's replicas, end to end through the real binary and the real
//! kubectl: `flotilla up --demo` with Karmada's own controller set
//! (`--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer`), a Deployment and its
//! HorizontalPodAutoscaler propagated by one PropagationPolicy, and the cases of Karmada's
//! `deploymentreplicassyncer_test.go` (Duplicated; Divided with room for each member; Divided
//! with one member left without a share), plus the marker following its HPA.
//!
//! The member HPAs are the simulated members' own HPA controllers (kube's: the target kept
//! within `minReplicas`/`maxReplicas`, CPU utilization from the members' usage model).

#[path = "propagate_e2e/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "replicas_syncer_e2e/scenarios.rs"]
mod scenarios;

/// One control plane; every case in its own namespace, run concurrently.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_hpas_own_the_replicas_of_marked_deployments() {
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
            "--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer",
        ],
        dir.path(),
    )
    .await;
    plane.await_members_ready(&support::MEMBERS).await;
    tokio::join!(
        scenarios::duplicated_members_keep_their_replicas_and_the_template_its_own(&plane),
        scenarios::divided_template_follows_the_member_hpas(&plane),
        scenarios::divided_scale_up_from_one_member_to_two(&plane),
        scenarios::divided_scale_down_to_one_member(&plane),
        scenarios::divided_one_replica_with_min_two_settles_at_two_each(&plane),
        scenarios::the_label_follows_the_hpa(&plane),
    );
}
