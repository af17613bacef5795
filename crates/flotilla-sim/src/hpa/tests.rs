use super::*;

#[test]
fn quantities_and_metric_statuses_read_as_kubes() {
    assert_eq!(milli_text(250), "250m");
    assert_eq!(milli_text(2000), "2");
    let spec: MetricSpec = serde_json::from_value(json!({"type": "ContainerResource",
        "containerResource": {"name": "cpu", "container": "web",
            "target": {"type": "Utilization", "averageUtilization": 60}}}))
    .expect("a metric spec");
    let status = metric_status(&spec, "cpu", Some("web"), json!({"averageUtilization": 42}));
    let status = serde_json::to_value(status).expect("json");
    assert_eq!(
        status,
        json!({"type": "ContainerResource", "containerResource": {"name": "cpu",
            "container": "web", "current": {"averageUtilization": 42}}})
    );
}

/// The highest proposal wins; an unavailable metric blocks a scale-down but not a scale-up.
#[test]
fn proposals_combine_as_kubes() {
    let ok = |replicas: i32, name: &str| -> MetricOutcome {
        Ok((replicas, name.to_owned(), MetricStatus::default()))
    };
    let missing = || -> MetricOutcome {
        Err((
            "FailedGetPodsMetric".into(),
            "unable to get pods metric".into(),
        ))
    };
    let best = |c: Computed| c.proposal;
    assert_eq!(
        best(combine(vec![ok(4, "cpu"), ok(6, "memory")], 3)),
        Some((6, "memory".to_owned()))
    );
    assert_eq!(
        best(combine(vec![ok(5, "cpu"), missing()], 3)),
        Some((5, "cpu".to_owned()))
    );
    let blocked = combine(vec![missing(), ok(1, "cpu")], 3);
    assert_eq!(blocked.proposal, None);
    // One status per metric, in the spec's order (what `kubectl get hpa` pairs them by).
    assert_eq!(blocked.statuses.len(), 2);
    assert_eq!(blocked.statuses[0], MetricStatus::default());
    assert_eq!(
        blocked.error.map(|e| e.0).as_deref(),
        Some("FailedGetPodsMetric")
    );
    assert_eq!(combine(vec![missing()], 3).proposal, None);
}

/// Samples in milli-units, a pod's containers summed or one container alone.
#[test]
fn samples_sum_containers_in_milli_units() {
    let mut selected = Selected::default();
    let usage = |cpu_milli: u64, memory: u64| crate::metrics::model::Usage {
        cpu_nanocores: cpu_milli * 1_000_000,
        memory_bytes: memory,
    };
    selected.usage.insert(
        "web-1".into(),
        vec![
            ("web".into(), usage(30, 1024)),
            ("sidecar".into(), usage(5, 0)),
        ],
    );
    let now = Timestamp::UNIX_EPOCH;
    let all = selected.samples("cpu", None, now, Duration::from_secs(30));
    assert_eq!(all["web-1"].value, 35);
    let one = selected.samples("cpu", Some("web"), now, Duration::from_secs(30));
    assert_eq!(one["web-1"].value, 30);
    let memory = selected.samples("memory", None, now, Duration::from_secs(30));
    assert_eq!(memory["web-1"].value, 1_024_000);
}
