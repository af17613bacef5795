//! Karmada's `federatedhpa_test.go` (FederatedHPA and metrics-adapter) and the FederatedHPA
//! case of `cronfederatedhpa_test.go` through `up --demo`: a Deployment (limits 10m CPU, 10Mi
//! memory) and its NodePort Service propagated to every member, a FederatedHPA (at most 6,
//! 10% CPU, 3 s stabilization windows); then Karmada's pressure Job (`curl` in a loop against
//! the Service) in every member. The simulated members count the Job's pods as the Service's
//! clients, its backends' CPU rises above the target, and the FederatedHPA scales the template
//! up, Duplicated, by static weight and by dynamic weight.

use serde_json::Value;

use crate::support::{ControlPlane, MEMBERS, eventually};

fn names() -> String {
    format!("[{}]", MEMBERS.join(", "))
}

fn workload(ns: &str, app: &str, replicas: i32, placement: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n\
apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {app}}}}}\n  template:\n    metadata: {{labels: {{app: {app}}}}}\n    spec: {{containers: [{{name: nginx, image: 'nginx:1.19.0', resources: {{limits: {{cpu: 10m, memory: 10Mi}}}}}}]}}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  type: NodePort\n  selector: {{app: {app}}}\n  ports: [{{port: 80, targetPort: 80}}]\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {{name: {ns}-{app}}}\nspec:\n  resourceSelectors:\n  - {{apiVersion: apps/v1, kind: Deployment, namespace: {ns}, name: {app}}}\n  - {{apiVersion: v1, kind: Service, namespace: {ns}, name: {app}}}\n  placement:\n    clusterAffinity: {{clusterNames: {}}}\n    replicaScheduling: {placement}\n---\n\
apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {app}}}\n  minReplicas: 1\n  maxReplicas: 6\n  behavior:\n    scaleUp: {{stabilizationWindowSeconds: 3}}\n    scaleDown: {{stabilizationWindowSeconds: 3}}\n  metrics:\n  - type: Resource\n    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 10}}}}\n",
        names()
    )
}

/// Karmada's pressure Job, Duplicated to every member.
fn pressure(ns: &str, app: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {app}-pressure, namespace: {ns}}}\nspec:\n  template:\n    spec:\n      restartPolicy: OnFailure\n      containers:\n      - name: pressure\n        image: alpine:3.19.1\n        command: [/bin/sh]\n        args: ['-c', 'apk add curl; while true; do for i in `seq 200`; do curl http://{app}.{ns}:80; done; sleep 1; done']\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {{name: {ns}-{app}-pressure}}\nspec:\n  resourceSelectors: [{{apiVersion: batch/v1, kind: Job, namespace: {ns}, name: {app}-pressure}}]\n  placement:\n    clusterAffinity: {{clusterNames: {}}}\n    replicaScheduling: {{replicaSchedulingType: Duplicated}}\n",
        names()
    )
}

async fn template_replicas(plane: &ControlPlane, ns: &str, app: &str) -> (i64, i64) {
    let out = plane
        .kubectl(&["-n", ns, "get", "deployment", app, "-o", "json"])
        .await;
    let d: Value = serde_json::from_str(&out).expect("a Deployment");
    (
        d["spec"]["replicas"].as_i64().unwrap_or(-1),
        d["status"]["readyReplicas"].as_i64().unwrap_or(0),
    )
}

/// One of Karmada's three cases: the template's ready replicas reach `initial`, the pressure
/// Job runs in every member, the FederatedHPA scales the template above `floor`.
async fn scales_up_under_pressure(
    plane: &ControlPlane,
    ns: &str,
    replicas: i32,
    placement: &str,
    initial: i64,
    floor: i64,
) {
    let app = "nginx";
    plane
        .apply(None, &workload(ns, app, replicas, placement))
        .await;
    eventually(&format!("{ns}: {initial} replicas ready"), || async {
        let (_, ready) = template_replicas(plane, ns, app).await;
        if ready == initial {
            Ok(())
        } else {
            Err(format!("ready {ready}"))
        }
    })
    .await;
    plane.apply(None, &pressure(ns, app)).await;
    eventually(&format!("{ns}: the Job in every member"), || async {
        let got = plane
            .per_member(ns, &format!("job/{app}-pressure"), "{.metadata.name}")
            .await;
        let want = MEMBERS
            .iter()
            .map(|m| format!("{m}={app}-pressure"))
            .collect::<Vec<_>>()
            .join("\n");
        if got == want { Ok(()) } else { Err(got) }
    })
    .await;
    eventually(&format!("{ns}: scaled above {floor}"), || async {
        let (spec, _) = template_replicas(plane, ns, app).await;
        if spec > floor {
            Ok(())
        } else {
            Err(format!("spec.replicas {spec}"))
        }
    })
    .await;
    // What the FederatedHPA says about it: the metric, the conditions, the event.
    let out = plane
        .kubectl(&["-n", ns, "get", "federatedhpa", app, "-o", "json"])
        .await;
    let fhpa: Value = serde_json::from_str(&out).expect("a FederatedHPA");
    let status = &fhpa["status"];
    assert_eq!(status["currentMetrics"][0]["type"], "Resource", "{status}");
    assert_eq!(
        status["currentMetrics"][0]["resource"]["name"], "cpu",
        "{status}"
    );
    assert!(status["lastScaleTime"].is_string(), "{status}");
    let condition = |type_: &str| {
        status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == type_)
            .map(|c| (c["status"].clone(), c["reason"].clone()))
    };
    assert_eq!(
        condition("ScalingActive"),
        Some(("True".into(), "ValidMetricFound".into())),
        "{status}"
    );
    plane
        .await_events(ns, "FederatedHPA", app, &["SuccessfulRescale"])
        .await;
}

pub async fn duplicated(plane: &ControlPlane) {
    scales_up_under_pressure(
        plane,
        "fhpa-duplicated",
        1,
        "{replicaSchedulingType: Duplicated}",
        3,
        1,
    )
    .await;
}

pub async fn static_weight(plane: &ControlPlane) {
    let weights = MEMBERS
        .iter()
        .map(|m| format!("{{targetCluster: {{clusterNames: [{m}]}}, weight: 1}}"))
        .collect::<Vec<_>>()
        .join(", ");
    scales_up_under_pressure(
        plane,
        "fhpa-static",
        3,
        &format!(
            "{{replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {{staticWeightList: [{weights}]}}}}"
        ),
        3,
        3,
    )
    .await;
}

pub async fn dynamic_weight(plane: &ControlPlane) {
    scales_up_under_pressure(
        plane,
        "fhpa-dynamic",
        3,
        "{replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}",
        3,
        3,
    )
    .await;
}

/// Karmada's `kubectl top` path through the control plane: karmada-metrics-adapter's pod
/// metrics, each annotated with the member it came from.
pub async fn pod_metrics_through_the_control_plane(plane: &ControlPlane) {
    let ns = "fhpa-duplicated";
    let out = eventually("pod metrics from every member", || async {
        let out = plane
            .try_kubectl(&[
                "get",
                "--raw",
                &format!(
                    "/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods?labelSelector=app%3Dnginx"
                ),
            ])
            .await?;
        let list: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        let mut sources: Vec<String> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| {
                m["metadata"]["annotations"]["resource.karmada.io/query-from-cluster"]
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        sources.sort();
        sources.dedup();
        let mut want: Vec<String> = MEMBERS.iter().map(|m| (*m).to_owned()).collect();
        want.sort();
        if sources == want { Ok(out) } else { Err(out) }
    })
    .await;
    assert!(out.contains("\"kind\":\"PodMetricsList\""), "{out}");
    // `karmadactl top pod -C <member>`'s path: the member's metrics API through the cluster
    // proxy.
    let through_proxy = plane
        .kubectl(&[
            "get",
            "--raw",
            &format!(
                "/apis/cluster.karmada.io/v1alpha1/clusters/{}/proxy/apis/metrics.k8s.io/v1beta1/namespaces/{ns}/pods?labelSelector=app%3Dnginx",
                MEMBERS[0]
            ),
        ])
        .await;
    let list: Value = serde_json::from_str(&through_proxy).expect("a PodMetricsList");
    assert!(
        list["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty()
                && items
                    .iter()
                    .all(|m| m["containers"][0]["usage"]["cpu"].is_string())),
        "{through_proxy}"
    );
    // Every member's pods, each once (simulated members name pods differently, as real ones).
    let top = plane
        .kubectl(&["-n", ns, "top", "pod", "--no-headers"])
        .await;
    let mut pods: Vec<&str> = top
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with("nginx-"))
        .collect();
    let listed = pods.len();
    pods.sort();
    pods.dedup();
    assert!(
        pods.len() >= 3 && pods.len() == listed,
        "kubectl top pod: {top}"
    );
}

/// `cronfederatedhpa_test.go` "Test scale FederatedHPA": a FederatedHPA with at most 1 replica
/// scales the 3-replica template down to 1 without any metric; a CronFederatedHPA then raises
/// its minReplicas to 2 and the template follows.
pub async fn a_cron_rule_moves_the_bounds_and_the_template_follows(plane: &ControlPlane) {
    let ns = "fhpa-cron";
    let app = "web";
    let yaml = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n\
apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  replicas: 3\n  selector: {{matchLabels: {{app: {app}}}}}\n  template:\n    metadata: {{labels: {{app: {app}}}}}\n    spec: {{containers: [{{name: nginx, image: 'nginx:1.19.0', resources: {{requests: {{cpu: 10m}}, limits: {{cpu: 100m}}}}}}]}}\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: {app}}}]\n  placement:\n    clusterAffinity: {{clusterNames: {}}}\n    replicaScheduling: {{replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}}\n---\n\
apiVersion: autoscaling.karmada.io/v1alpha1\nkind: FederatedHPA\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {app}}}\n  minReplicas: 1\n  maxReplicas: 1\n  behavior: {{scaleDown: {{stabilizationWindowSeconds: 10}}}}\n  metrics:\n  - type: Resource\n    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 80}}}}\n",
        names()
    );
    plane.apply(None, &yaml).await;
    let members_total = || async {
        let mut total = 0;
        for member in MEMBERS {
            let got = plane
                .get(
                    Some(member),
                    ns,
                    &format!("deployment/{app}"),
                    "{.spec.replicas}",
                )
                .await;
            total += got.trim().parse::<i64>().unwrap_or(0);
        }
        total
    };
    eventually("the members hold minReplicas (1) in all", || async {
        match members_total().await {
            1 => Ok(()),
            n => Err(format!("{n}")),
        }
    })
    .await;
    let cron = format!(
        "apiVersion: autoscaling.karmada.io/v1alpha1\nkind: CronFederatedHPA\nmetadata: {{name: {app}-cron, namespace: {ns}}}\nspec:\n  scaleTargetRef: {{apiVersion: autoscaling.karmada.io/v1alpha1, kind: FederatedHPA, name: {app}}}\n  rules:\n  - {{name: scale-up, schedule: '@every 1s', targetMinReplicas: 2, targetMaxReplicas: 100}}\n"
    );
    plane.apply(None, &cron).await;
    eventually(
        "the members hold the new minReplicas (2) in all",
        || async {
            match members_total().await {
                2 => Ok(()),
                n => Err(format!("{n}")),
            }
        },
    )
    .await;
}

/// A free local address for `--metrics-bind-address`.
/// The whole HTTP response of `GET /metrics` on `address`.
pub async fn scrape(address: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("the metrics endpoint listens");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .expect("a request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("a response");
    response
}

pub fn free_address() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address")
}

/// Karmada's `metrics_test.go` names for the controller-manager and the scheduler (workqueue
/// metrics per controller, the cluster and Work collectors, scheduling attempts), plus the
/// FederatedHPA's own, on `up`'s `/metrics` after the scenarios above.
pub async fn components_metrics_are_on_the_metrics_endpoint(address: std::net::SocketAddr) {
    let response = scrape(address).await;
    for prefix in [
        "workqueue_queue_duration_seconds_sum{name=\"binding-controller\"",
        "workqueue_queue_duration_seconds_sum{name=\"execution-controller\"",
        "workqueue_queue_duration_seconds_sum{name=\"federatedHPA-controller\"",
        "workqueue_queue_duration_seconds_sum{name=\"scheduler-queue\"",
        "workqueue_depth{name=\"resource-detector\"",
        "workqueue_longest_running_processor_seconds{name=\"work-status-controller\"",
        "cluster_ready_state{",
        "work_sync_workload_duration_seconds_sum{",
        "karmada_scheduler_schedule_attempts_total{",
        "federatedhpa_process_duration_seconds_count{result=\"success\"}",
        "federatedhpa_pull_metrics_duration_seconds_count{result=\"success\",metricType=\"ResourceMetric\"}",
    ] {
        assert!(
            response.lines().any(|l| l.starts_with(prefix)),
            "no {prefix} on /metrics:\n{response}"
        );
    }
}
