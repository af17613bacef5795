//! Karmada's `TestCalculateResourceUsage` and `TestAggregateComponentResources`
//! (`pkg/util/helper/binding_test.go`) restated against `binding_usage`. Karmada compares each
//! quantity's value and format; so do these tests. Karmada's component aggregation is private;
//! its cases run here on one target cluster, where the usage is the aggregate itself.

use super::*;
use crate::QuantityFormat;

fn component(replicas: i32, cpu: &str, memory: &str) -> Component {
    Component {
        name: String::new(),
        replicas,
        replica_requirements: Some(
            serde_json::json!({"resourceRequest": {"cpu": cpu, "memory": memory}}),
        ),
    }
}

/// Asserts `got` holds exactly `want` (name, quantity, format).
fn assert_usage(got: &ResourceList, want: &[(&str, &str, QuantityFormat)], desc: &str) {
    assert_eq!(got.len(), want.len(), "{desc}: {got:?}");
    for (name, quantity, format) in want {
        let actual = got
            .get(*name)
            .unwrap_or_else(|| panic!("{desc}: {name} missing"));
        assert_eq!(
            *actual,
            Quantity::parse(quantity).expect("quantity"),
            "{desc}: {name}"
        );
        assert_eq!(actual.format(), *format, "{desc}: {name} format");
    }
}

#[test]
fn component_usage_is_the_per_set_sum_times_the_target_clusters() {
    // 2 × (500m, 1Gi) per set, on two clusters.
    let spec = ResourceBindingSpec {
        clusters: vec![
            TargetCluster::new("cluster1", 0),
            TargetCluster::new("cluster2", 0),
        ],
        components: vec![component(2, "500m", "1Gi")],
        ..ResourceBindingSpec::default()
    };
    assert_usage(
        &binding_usage(&spec),
        &[
            ("cpu", "2", QuantityFormat::DecimalSI),
            ("memory", "4Gi", QuantityFormat::BinarySI),
        ],
        "components",
    );
}

#[test]
fn replica_usage_is_the_request_times_the_scheduled_replicas() {
    // (1, 2Gi) per replica, 3 + 2 replicas scheduled.
    let spec = spec(
        &[("cpu", "1"), ("memory", "2Gi")],
        &[("cluster1", 3), ("cluster2", 2)],
    );
    assert_usage(
        &binding_usage(&spec),
        &[
            ("cpu", "5", QuantityFormat::DecimalSI),
            ("memory", "10Gi", QuantityFormat::BinarySI),
        ],
        "replica requirements",
    );
}

#[test]
fn component_resources_aggregate_over_the_components_with_replicas() {
    type Row = (
        &'static str,
        Vec<Component>,
        &'static [(&'static str, &'static str, QuantityFormat)],
    );
    let table: [Row; 3] = [
        (
            "2 × (500m, 1Gi) + 3 × (1, 2Gi)",
            vec![component(2, "500m", "1Gi"), component(3, "1", "2Gi")],
            &[
                ("cpu", "4", QuantityFormat::DecimalSI),
                ("memory", "8Gi", QuantityFormat::BinarySI),
            ],
        ),
        (
            "a component without replicas uses nothing",
            vec![component(0, "500m", "1Gi")],
            &[],
        ),
        ("no components", vec![], &[]),
    ];
    for (desc, components, want) in table {
        let spec = ResourceBindingSpec {
            clusters: vec![TargetCluster::new("cluster1", 0)],
            components,
            ..ResourceBindingSpec::default()
        };
        assert_usage(&binding_usage(&spec), want, desc);
    }
}
