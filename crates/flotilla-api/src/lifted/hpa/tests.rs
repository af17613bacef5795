use super::*;

fn t(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

/// A Running pod ready since long ago, one container `c` requesting `cpu` milli-CPU.
fn pod(key: &str, cpu: i64) -> PodFacts {
    PodFacts {
        key: key.into(),
        phase: "Running".into(),
        start_time: Some(t(-3600)),
        ready: Some((true, t(-3500))),
        containers: vec![("c".into(), BTreeMap::from([("cpu".into(), cpu)]))],
        ..PodFacts::default()
    }
}

fn samples(values: &[(&str, i64)]) -> Samples {
    values
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_owned(),
                Sample {
                    timestamp: t(0),
                    window: SignedDuration::from_secs(15),
                    value: *v,
                },
            )
        })
        .collect()
}

fn cpu(
    current: i32,
    target: i32,
    pods: &[PodFacts],
    samples: Samples,
    calibration: f64,
) -> Result<UtilizationProposal, CalcError> {
    resource_replicas(
        current,
        target,
        "cpu",
        None,
        pods,
        samples,
        calibration,
        &Tunables::default(),
        t(0),
    )
}

#[test]
fn utilization_above_target_scales_up_by_the_ratio() {
    let pods = [pod("a/p1", 1000), pod("a/p2", 1000), pod("b/p3", 1000)];
    let got = cpu(
        3,
        30,
        &pods,
        samples(&[("a/p1", 900), ("a/p2", 1000), ("b/p3", 1100)]),
        1.0,
    )
    .unwrap();
    assert_eq!(
        got,
        UtilizationProposal {
            replicas: 10,
            utilization: 100,
            average: 1000
        }
    );
}

#[test]
fn a_ratio_within_tolerance_keeps_the_current_count() {
    let pods = [pod("a/p1", 1000), pod("a/p2", 1000)];
    let got = cpu(2, 50, &pods, samples(&[("a/p1", 520), ("a/p2", 530)]), 1.0).unwrap();
    assert_eq!(got.replicas, 2);
    assert_eq!(got.utilization, 52);
}

#[test]
fn calibration_divides_pods_of_duplicated_members() {
    // One template replica Duplicated to three members: three pods, each at its 10m limit
    // against a 10% target (1m).
    let pods = [pod("m1/p", 10), pod("m2/p", 10), pod("m3/p", 10)];
    let got = cpu(
        1,
        10,
        &pods,
        samples(&[("m1/p", 10), ("m2/p", 10), ("m3/p", 10)]),
        3.0,
    )
    .unwrap();
    assert_eq!(got.replicas, 10);
    assert_eq!(got.utilization, 100);
}

#[test]
fn pods_with_the_same_name_in_two_members_count_twice() {
    let pods = [pod("m1/web", 100), pod("m2/web", 100)];
    let got = cpu(
        2,
        50,
        &pods,
        samples(&[("m1/web", 100), ("m2/web", 0)]),
        1.0,
    )
    .unwrap();
    assert_eq!(got.utilization, 50);
    assert_eq!(got.replicas, 2);
}

#[test]
fn missing_samples_count_as_full_requests_when_scaling_down() {
    let pods = [pod("a/p1", 100), pod("a/p2", 100), pod("a/p3", 100)];
    // p3 has no sample: alone the ratio is 0.2 (10% of a 50% target); with p3 at 100% of
    // its request, (10+10+100)/300 = 40% → ratio 0.8 → ceil(0.8 × 3) = 3.
    let got = cpu(3, 50, &pods, samples(&[("a/p1", 10), ("a/p2", 10)]), 1.0).unwrap();
    assert_eq!(got.replicas, 3);
    assert_eq!(got.utilization, 10);
}

#[test]
fn missing_samples_count_as_zero_when_scaling_up() {
    let pods = [
        pod("a/p1", 100),
        pod("a/p2", 100),
        pod("a/p3", 100),
        pod("a/p4", 100),
    ];
    // 2 pods at 100% of a 50% target, 2 without samples: (100+100+0+0)/400 = 50% → ratio
    // 1.0, within tolerance: no change.
    let got = cpu(4, 50, &pods, samples(&[("a/p1", 100), ("a/p2", 100)]), 1.0).unwrap();
    assert_eq!(got.replicas, 4);
}

#[test]
fn a_sample_taken_before_a_window_of_readiness_is_unready_and_counts_zero_on_scale_up() {
    let mut young = pod("a/young", 100);
    young.start_time = Some(t(-20));
    young.ready = Some((true, t(-10)));
    let pods = [pod("a/old", 100), young];
    // The young pod's sample (at t(0)) is before readiness + 15 s: left out; the old pod at
    // 200% of a 100% target wants 2, the young one counted at 0: (200+0)/200 → ratio 1.0.
    let got = cpu(
        2,
        100,
        &pods,
        samples(&[("a/old", 200), ("a/young", 200)]),
        1.0,
    )
    .unwrap();
    assert_eq!(got.replicas, 2);
    assert_eq!(got.utilization, 200);
    let groups = group_pods(
        &pods,
        &samples(&[("a/old", 200), ("a/young", 200)]),
        true,
        &Tunables::default(),
        t(0),
    );
    assert_eq!(groups.ready, 1);
    assert_eq!(groups.unready, BTreeSet::from(["a/young".to_owned()]));
    // Memory has no initialization rule.
    let groups = group_pods(
        &pods,
        &samples(&[("a/old", 200), ("a/young", 200)]),
        false,
        &Tunables::default(),
        t(0),
    );
    assert_eq!(groups.ready, 2);
}

#[test]
fn pending_pods_are_unready_and_deleting_or_failed_pods_ignored() {
    let mut pending = pod("a/pending", 100);
    pending.phase = "Pending".into();
    let mut deleting = pod("a/deleting", 100);
    deleting.deleting = true;
    let mut failed = pod("a/failed", 100);
    failed.phase = "Failed".into();
    let pods = [pod("a/ok", 100), pending, deleting, failed];
    let groups = group_pods(
        &pods,
        &samples(&[("a/ok", 1), ("a/deleting", 1), ("a/failed", 1)]),
        false,
        &Tunables::default(),
        t(0),
    );
    assert_eq!(groups.ready, 1);
    assert_eq!(groups.unready, BTreeSet::from(["a/pending".to_owned()]));
    assert_eq!(
        groups.ignored,
        BTreeSet::from(["a/deleting".to_owned(), "a/failed".to_owned()])
    );
}

#[test]
fn errors_are_worded_as_kubernetes_words_them() {
    assert_eq!(
        cpu(1, 50, &[], Samples::new(), 1.0)
            .unwrap_err()
            .to_string(),
        "no pods returned by selector while calculating replica count"
    );
    let mut unready = pod("a/p", 100);
    unready.ready = None;
    assert_eq!(
        cpu(1, 50, &[unready], samples(&[("a/p", 10)]), 1.0)
            .unwrap_err()
            .to_string(),
        "did not receive metrics for any ready pods"
    );
    let mut no_request = pod("a/web-1", 100);
    no_request.containers[0].1.clear();
    assert_eq!(
        cpu(1, 50, &[no_request], samples(&[("a/web-1", 10)]), 1.0)
            .unwrap_err()
            .to_string(),
        "missing request for cpu in container c of Pod web-1"
    );
}

#[test]
fn plain_targets_divide_the_average_by_the_target() {
    let pods = [pod("a/p1", 0), pod("a/p2", 0)];
    let (replicas, average) = plain_replicas(
        2,
        100,
        "memory",
        &pods,
        samples(&[("a/p1", 300), ("a/p2", 100)]),
        1.0,
        &Tunables::default(),
        t(0),
    )
    .unwrap();
    assert_eq!((replicas, average), (4, 200));
}

#[test]
fn without_behavior_growth_is_limited_to_double_or_four() {
    assert_eq!(
        bound(1, 10, 1, 6),
        Limited {
            replicas: 4,
            reason: "ScaleUpLimit",
            message: "the desired replica count is increasing faster than the maximum scale rate"
        }
    );
    assert_eq!(bound(5, 10, 1, 6).replicas, 6);
    assert_eq!(bound(5, 10, 1, 6).reason, "TooManyReplicas");
    assert_eq!(bound(5, 0, 2, 6).replicas, 2);
    assert_eq!(bound(5, 0, 2, 6).reason, "TooFewReplicas");
    assert_eq!(bound(5, 4, 2, 6).reason, "DesiredWithinRange");
}

#[test]
fn without_behavior_the_downscale_window_keeps_the_highest_recommendation() {
    let mut history = History::default();
    let window = SignedDuration::from_mins(5);
    assert_eq!(stabilize(&mut history, 5, window, t(0)), 5);
    assert_eq!(stabilize(&mut history, 2, window, t(10)), 5);
    // Past the window the old recommendations stop counting (and the oldest is replaced).
    assert_eq!(stabilize(&mut history, 2, window, t(400)), 2);
    assert_eq!(history.recommendations.len(), 2);
}

fn default_up() -> Rules {
    Rules {
        stabilization_window_seconds: 0,
        select_policy: "Max".into(),
        policies: vec![
            Policy {
                kind: "Pods".into(),
                value: 4,
                period_seconds: 15,
            },
            Policy {
                kind: "Percent".into(),
                value: 100,
                period_seconds: 15,
            },
        ],
    }
}

fn default_down(window: i32) -> Rules {
    Rules {
        stabilization_window_seconds: window,
        select_policy: "Max".into(),
        policies: vec![Policy {
            kind: "Percent".into(),
            value: 100,
            period_seconds: 15,
        }],
    }
}

#[test]
fn default_scale_up_policies_add_at_most_four_pods_or_double_per_15_seconds() {
    let (up, down) = (default_up(), default_down(300));
    let mut history = History::default();
    let first = rate_limit(&history, 1, 10, 1, 6, &up, &down, t(0));
    assert_eq!((first.replicas, first.reason), (5, "ScaleUpLimit"));
    record_scale(&mut history, &up, &down, 1, 5, t(0));
    // 10 s later the period still holds the +4: no more room.
    let second = rate_limit(&history, 5, 10, 1, 6, &up, &down, t(10));
    assert_eq!((second.replicas, second.reason), (5, "ScaleUpLimit"));
    // After the period, max(5+4, 5×2) = 10 > maxReplicas 6.
    let third = rate_limit(&history, 5, 10, 1, 6, &up, &down, t(16));
    assert_eq!((third.replicas, third.reason), (6, "TooManyReplicas"));
}

#[test]
fn select_policy_min_and_disabled() {
    let mut up = default_up();
    up.select_policy = "Min".into();
    assert_eq!(scale_up_limit(10, &History::default(), &up, t(0)), 14);
    up.select_policy = "Disabled".into();
    assert_eq!(scale_up_limit(10, &History::default(), &up, t(0)), 10);
    let mut down = default_down(0);
    down.policies = vec![
        Policy {
            kind: "Percent".into(),
            value: 50,
            period_seconds: 60,
        },
        Policy {
            kind: "Pods".into(),
            value: 2,
            period_seconds: 60,
        },
    ];
    // Max change: the lowest count (5); Min change: the highest (8).
    assert_eq!(scale_down_limit(10, &History::default(), &down, t(0)), 5);
    down.select_policy = "Min".into();
    assert_eq!(scale_down_limit(10, &History::default(), &down, t(0)), 8);
}

#[test]
fn behaviors_stabilize_down_within_their_window_and_up_at_once() {
    let (up, down) = (default_up(), default_down(3));
    let mut history = History::default();
    let first = stabilize_with_behaviors(&mut history, 1, 6, &up, &down, t(0));
    assert_eq!((first.replicas, first.reason), (6, "ScaleUpStabilized"));
    let held = stabilize_with_behaviors(&mut history, 6, 1, &up, &down, t(2));
    assert_eq!((held.replicas, held.reason), (6, "ScaleDownStabilized"));
    // Past the 3 s window the 6 no longer holds; the 1 recorded at t(2) is still inside.
    let later = stabilize_with_behaviors(&mut history, 6, 1, &up, &down, t(4));
    assert_eq!(later.replicas, 1);
}

#[test]
fn recorded_events_replace_outdated_ones() {
    let (up, down) = (default_up(), default_down(0));
    let mut history = History::default();
    record_scale(&mut history, &up, &down, 1, 3, t(0));
    record_scale(&mut history, &up, &down, 3, 4, t(5));
    assert_eq!(history.scale_ups.len(), 2);
    record_scale(&mut history, &up, &down, 4, 8, t(100));
    assert_eq!(history.scale_ups.len(), 2);
    assert!(
        history
            .scale_ups
            .iter()
            .any(|e| e.change == 4 && e.at == t(100))
    );
    record_scale(&mut history, &up, &down, 8, 2, t(101));
    assert_eq!(
        history.scale_downs,
        vec![ScaleEvent {
            change: 6,
            at: t(101),
            outdated: false
        }]
    );
}
