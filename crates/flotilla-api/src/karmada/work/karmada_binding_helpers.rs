//! Karmada's `work/v1alpha2/binding_types_helper_test.go` for the binding spec helpers
//! Flotilla has here (`GracefulEvictCluster` is `flotilla_controllers::eviction::evict_cluster`,
//! tested there).

use super::*;

fn spec(clusters: &[(&str, i32)]) -> ResourceBindingSpec {
    ResourceBindingSpec {
        clusters: clusters
            .iter()
            .map(|(name, replicas)| TargetCluster::new(*name, *replicas))
            .collect(),
        ..ResourceBindingSpec::default()
    }
}

#[test]
fn a_cluster_is_a_target_only_when_named_in_the_clusters() {
    let two = spec(&[("m1", 0), ("m2", 0)]);
    // (case, spec, cluster, want)
    let cases = [
        ("present", &two, "m1", true),
        ("absent", &two, "m3", false),
        ("empty name", &two, "", false),
        ("no targets", &spec(&[]), "m1", false),
    ];
    for (case, spec, cluster, want) in cases {
        assert_eq!(spec.target_contains(cluster), want, "{case}");
    }
}

#[test]
fn assigned_replicas_are_the_clusters_or_zero() {
    let s = spec(&[("m1", 1), ("m2", 2)]);
    assert_eq!(s.assigned_replicas_for_cluster("m1"), 1);
    assert_eq!(s.assigned_replicas_for_cluster("non-exist"), 0);
}

#[test]
fn a_cluster_is_being_evicted_when_a_task_comes_from_it() {
    let task = |cluster: &str| GracefulEvictionTask {
        from_cluster: cluster.into(),
        producer: "TaintManager".into(),
        reason: "TaintUntolerated".into(),
        ..GracefulEvictionTask::default()
    };
    let s = ResourceBindingSpec {
        graceful_eviction_tasks: vec![task("member1"), task("member2")],
        ..ResourceBindingSpec::default()
    };
    assert!(s.cluster_in_graceful_eviction_tasks("member1"));
    assert!(!s.cluster_in_graceful_eviction_tasks("member3"));
}

#[test]
fn a_workload_has_replicas_requirements_or_components() {
    let component = |name: &str| Component {
        name: name.into(),
        replicas: 1,
        ..Component::default()
    };
    let cases = [
        (
            "replicas",
            ResourceBindingSpec {
                replicas: 1,
                ..ResourceBindingSpec::default()
            },
            true,
        ),
        ("zero replicas", ResourceBindingSpec::default(), false),
        (
            "replica requirements",
            ResourceBindingSpec {
                replica_requirements: Some(ReplicaRequirements {
                    resource_request: Some(
                        [
                            ("cpu".to_owned(), crate::Quantity::parse("100m").unwrap()),
                            (
                                "memory".to_owned(),
                                crate::Quantity::parse("200Mi").unwrap(),
                            ),
                        ]
                        .into(),
                    ),
                    ..ReplicaRequirements::default()
                }),
                ..ResourceBindingSpec::default()
            },
            true,
        ),
        (
            "one component",
            ResourceBindingSpec {
                components: vec![component("comp1")],
                ..ResourceBindingSpec::default()
            },
            true,
        ),
        (
            "two components",
            ResourceBindingSpec {
                components: vec![component("comp1"), component("comp2")],
                ..ResourceBindingSpec::default()
            },
            true,
        ),
    ];
    for (case, spec, want) in cases {
        assert_eq!(spec.is_workload(), want, "{case}");
    }
}
