//! Propagation end to end through the real binary and the real kubectl: `flotilla up --demo`
//! (three simulated GPU members) driven the way a user drives it — `kubectl apply` of
//! Deployments, PropagationPolicies and OverridePolicies on the control plane, `kubectl scale`,
//! `kubectl --context <member>` to look at (and tamper with) the members — and a control plane
//! killed with SIGKILL in the middle of propagating, restarted on its redb data directory.

#[path = "propagate_e2e/support.rs"]
mod support;

#[path = "propagate_e2e/descheduler.rs"]
mod descheduler;
#[path = "propagate_e2e/federated_hpa.rs"]
mod federated_hpa;
#[path = "propagate_e2e/jobs.rs"]
mod jobs;
#[path = "propagate_e2e/kubeflow.rs"]
mod kubeflow;
#[path = "propagate_e2e/mcs.rs"]
mod mcs;
#[path = "propagate_e2e/multi_template.rs"]
mod multi_template;
#[path = "propagate_e2e/pdb.rs"]
mod pdb;
#[path = "propagate_e2e/proxy.rs"]
mod proxy;
#[path = "propagate_e2e/restart.rs"]
mod restart;
#[path = "propagate_e2e/scenarios.rs"]
mod scenarios;
#[path = "propagate_e2e/search.rs"]
mod search;
#[path = "propagate_e2e/service_export.rs"]
mod service_export;

/// One control plane for every scenario (each in its own namespace), run concurrently: starting
/// `up --demo` once keeps the target fast; a failure names its scenario.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_scenarios_through_kubectl_against_up_demo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane = support::ControlPlane::demo(dir.path()).await;
    tokio::join!(
        scenarios::duplicated_overridden_then_deleted(&plane),
        scenarios::weighted_scale_up_and_down(&plane),
        scenarios::policy_change_replaces_the_workload(&plane),
        scenarios::propagate_deps_carries_config_along(&plane),
        scenarios::conflict_abort_then_overwrite(&plane),
        scenarios::drift_in_a_member_is_repaired(&plane),
        scenarios::node_port_is_the_same_in_every_member(&plane),
        pdb::pdb_status_is_collected_from_members(&plane),
        jobs::a_failing_job_says_why_on_the_template(&plane),
        jobs::a_cron_job_runs_in_each_member_and_reports_back(&plane),
        jobs::the_batch_examples_run_across_members(&plane),
        proxy::a_service_account_reaches_a_member_as_itself(&plane),
        proxy::exec_and_logs_reach_members_through_the_proxy(&plane),
        async {
            search::registries_make_member_objects_searchable(&plane).await;
            search::the_global_proxy_serves_member_objects(&plane).await;
        },
    );
    scenarios::nothing_left_behind(&plane).await;
    search::a_cluster_joining_later_becomes_searchable(&plane, &dir.path().join("late")).await;
}

/// Karmada's ServiceExport/ServiceImport cases (`mcs_test.go`, "Connectivity testing" and
/// "EndpointSlices change testing"), on a control plane of their own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_export_and_import_through_up_demo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane = support::ControlPlane::demo(dir.path()).await;
    service_export::pods_reach_an_imported_service_through_its_cluster_ip(&plane).await;
    service_export::endpoint_slices_follow_the_exporting_deployments_replicas(&plane).await;
}

/// Karmada's cases of alpha features (CrossCluster MultiClusterService, multi-template
/// scheduling, a Kubeflow job's components), on a control plane with their gates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alpha_features_through_up_demo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane = support::ControlPlane::demo_with(
        dir.path(),
        &["--feature-gates=MultiClusterService=true,MultiplePodTemplatesScheduling=true,FederatedQuotaEnforcement=true"],
    )
    .await;
    tokio::join!(
        mcs::one_provider_one_consumer(&plane),
        mcs::providers_and_consumers_change(&plane),
        mcs::empty_lists_mean_every_cluster(&plane),
        multi_template::multi_template_workloads_go_to_one_cluster_with_their_components(&plane),
        multi_template::a_federated_quota_counts_a_flink_deployments_components(&plane),
        kubeflow::a_pytorch_job_is_interpreted_by_the_bundled_rules(&plane),
        service_export::a_slice_exported_both_ways_is_reported_once(&plane),
    );
}

/// Karmada's FederatedHPA cases (and the CronFederatedHPA one that needs it), with a short sync
/// period: every member's pods report usage from the simulated traffic of Karmada's pressure Job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn federated_hpa_through_up_demo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let metrics = federated_hpa::free_address();
    let plane = support::ControlPlane::demo_with(
        dir.path(),
        &[
            "--horizontal-pod-autoscaler-sync-period=3s",
            &format!("--metrics-bind-address={metrics}"),
        ],
    )
    .await;
    tokio::join!(
        async {
            federated_hpa::duplicated(&plane).await;
            federated_hpa::pod_metrics_through_the_control_plane(&plane).await;
        },
        federated_hpa::static_weight(&plane),
        federated_hpa::dynamic_weight(&plane),
        federated_hpa::a_cron_rule_moves_the_bounds_and_the_template_follows(&plane),
    );
    federated_hpa::components_metrics_are_on_the_metrics_endpoint(metrics).await;
}

/// Karmada's descheduler, with the accurate estimator and a short interval and threshold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descheduler_through_up_demo() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let metrics = federated_hpa::free_address();
    let plane = support::ControlPlane::demo_with(
        dir.path(),
        &[
            "--enable-scheduler-estimator",
            "--enable-descheduler",
            "--descheduling-interval=1s",
            "--unschedulable-threshold=2s",
            &format!("--metrics-bind-address={metrics}"),
        ],
    )
    .await;
    descheduler::unschedulable_replicas_move_to_members_with_room(&plane).await;
    // kube-apiserver's request metrics, also on the API port (`kubectl get --raw /metrics`).
    let served = plane.kubectl(&["get", "--raw", "/metrics"]).await;
    for prefix in [
        "apiserver_request_total{verb=\"POST\",dry_run=\"\",group=\"apps\",version=\"v1\",resource=\"deployments\",subresource=\"\",scope=\"resource\",component=\"apiserver\",code=\"201\"}",
        "apiserver_request_total{verb=\"PATCH\",dry_run=\"\",group=\"work.karmada.io\",version=\"v1alpha2\",resource=\"resourcebindings\",subresource=\"\",scope=\"resource\",component=\"apiserver\",code=\"200\"}",
        "apiserver_request_duration_seconds_count{verb=\"LIST\"",
        "apiserver_longrunning_requests{verb=\"WATCH\"",
        "karmada_scheduler_schedule_attempts_total{",
        "controller_runtime_webhook_requests_total{webhook=\"/mutate-work\",code=\"200\"}",
        "controller_runtime_webhook_latency_seconds_count{webhook=\"/validate-propagationpolicy\"}",
    ] {
        assert!(
            served.lines().any(|l| l.starts_with(prefix)),
            "no {prefix} from kubectl get --raw /metrics"
        );
    }
    // Karmada's metrics_test.go names for the descheduler and the scheduler estimator.
    let body = federated_hpa::scrape(metrics).await;
    for prefix in [
        "workqueue_queue_duration_seconds_sum{name=\"descheduler\"",
        "karmada_scheduler_estimator_estimating_request_total{result=\"success\",type=\"MaxAvailableReplicas\"}",
        "karmada_scheduler_estimator_estimating_request_total{result=\"success\",type=\"GetUnschedulableReplicas\"}",
        "karmada_scheduler_estimator_estimating_algorithm_duration_seconds_count{result=\"success\",type=\"GetUnschedulableReplicas\",step=\"Total\"}",
    ] {
        assert!(
            body.lines().any(|l| l.starts_with(prefix)),
            "no {prefix} on /metrics:\n{body}"
        );
    }
}
