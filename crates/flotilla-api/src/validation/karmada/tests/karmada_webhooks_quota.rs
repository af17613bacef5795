//! Karmada's FederatedResourceQuota webhook cases
//! (`pkg/webhook/federatedresourcequota/validating_test.go`).

use serde_json::{Value, json};

use super::*;

fn frq_errors(object: Value) -> Vec<String> {
    let mut object = object;
    if object["metadata"].is_null() {
        object["metadata"] = json!({"name": "q", "namespace": "default"});
    }
    let mut errors = messages(&validate(Kind::FederatedResourceQuota, &object, None));
    // Karmada's test sorts the aggregated message (Go walks resource maps in random order).
    errors.sort();
    errors
}

fn spec_errors(overall: Value, assignments: Value) -> Vec<String> {
    frq_errors(json!({"spec": {"overall": overall, "staticAssignments": assignments}}))
}

fn assignment(cluster: &str, cpu: &str, memory: &str) -> Value {
    json!({"clusterName": cluster, "hard": {"cpu": cpu, "memory": memory}})
}

#[test]
fn overall_must_cover_the_static_assignments() {
    // Test_validateOverallAndAssignments
    let overall = json!({"cpu": "10", "memory": "10Gi"});
    assert!(
        spec_errors(
            overall.clone(),
            json!([assignment("m1", "1", "1Gi"), assignment("m2", "1.5", "2Gi")])
        )
        .is_empty()
    );
    assert_eq!(
        spec_errors(
            overall.clone(),
            json!([assignment("m1", "1", "1Gi"), assignment("m2", "10", "2Gi")])
        ),
        ["spec.overall[cpu]: Invalid value: \"10\": overall is less than assignments"]
    );
    assert_eq!(
        spec_errors(
            overall.clone(),
            json!([
                assignment("m1", "1", "1Gi"),
                assignment("m2", "1.5", "10Gi")
            ])
        ),
        ["spec.overall[memory]: Invalid value: \"10Gi\": overall is less than assignments"]
    );
    assert_eq!(
        spec_errors(
            overall,
            json!([
                {"clusterName": "m1", "hard": {"cpux": "1", "memory": "1Gi"}},
                assignment("m2", "1.5", "2Gi"),
            ])
        ),
        [
            // Karmada's resource-name check of the assignment (validateResourceList).
            "spec.staticAssignments[0].hard[cpux]: Invalid value: \"cpux\": must be a standard resource for quota",
            "spec.staticAssignments[0].hard[cpux]: Invalid value: \"cpux\": must be a standard resource type or fully qualified",
            "spec.staticAssignments[0].hard[cpux]: Invalid value: \"cpux\": assignment resourceName is not exist in overall",
        ]
        .map(String::from)
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
}

#[test]
fn handle_cases_allow_matching_limits_and_deny_smaller_overall() {
    // TestValidatingAdmission_Handle
    let five = || json!([assignment("m1", "5", "5Gi"), assignment("m2", "5", "5Gi")]);
    assert!(spec_errors(json!({"cpu": "10", "memory": "10Gi"}), five()).is_empty());
    assert_eq!(
        spec_errors(json!({"cpu": "5", "memory": "5Gi"}), five()),
        [
            "spec.overall[cpu]: Invalid value: \"5\": overall is less than assignments",
            "spec.overall[memory]: Invalid value: \"5Gi\": overall is less than assignments",
        ]
    );
    assert_eq!(
        spec_errors(
            json!({"cpu": "5", "memory": "10Gi"}),
            json!([assignment("m1", "10", "5Gi"), assignment("m2", "5", "5Gi")])
        ),
        ["spec.overall[cpu]: Invalid value: \"5\": overall is less than assignments"]
    );
    assert_eq!(
        spec_errors(
            json!({"cpu": "10", "memory": "5Gi"}),
            json!([assignment("m1", "5", "5Gi"), assignment("m2", "5", "10Gi")])
        ),
        ["spec.overall[memory]: Invalid value: \"5Gi\": overall is less than assignments"]
    );
    let bad_cluster = spec_errors(
        json!({"cpu": "10", "memory": "10Gi"}),
        json!([assignment("invalid cluster name", "5", "5Gi")]),
    );
    assert_eq!(bad_cluster.len(), 1);
    assert!(
        bad_cluster[0].starts_with(
            "spec.staticAssignments[0].clusterName: Invalid value: \"invalid cluster name\": "
        ),
        "{bad_cluster:?}"
    );
}

fn status_errors(status: Value) -> Vec<String> {
    frq_errors(json!({"spec": {"overall": {"cpu": "10"}}, "status": status}))
}

fn cluster_status(name: &str, hard: Value, used: Value) -> Value {
    json!({"clusterName": name, "hard": hard, "used": used})
}

#[test]
fn status_resource_lists_and_cluster_names_are_checked() {
    // Test_validateFederatedResourceQuotaStatus and Test_validateClusterQuotaStatus
    let cpu = |q: &str| json!({"cpu": q});
    let bad = || json!({"invalid-resource": "10"});
    let invalid_name = |path: &str| {
        vec![
            format!(
                "{path}[invalid-resource]: Invalid value: \"invalid-resource\": must be a standard resource for quota"
            ),
            format!(
                "{path}[invalid-resource]: Invalid value: \"invalid-resource\": must be a standard resource type or fully qualified"
            ),
        ]
    };
    let good = cluster_status("valid-cluster", cpu("10"), cpu("5"));
    assert!(
        status_errors(
            json!({"overall": cpu("10"), "overallUsed": cpu("5"), "aggregatedStatus": [good]})
        )
        .is_empty()
    );
    assert_eq!(
        status_errors(
            json!({"overall": bad(), "overallUsed": cpu("5"), "aggregatedStatus": [good]})
        ),
        invalid_name("status.overall")
    );
    assert_eq!(
        status_errors(json!({"overall": cpu("10"), "aggregatedStatus": [
            cluster_status("valid-cluster", bad(), cpu("5"))]})),
        invalid_name("status.aggregatedStatus[0].hard")
    );
    assert_eq!(
        status_errors(
            json!({"aggregatedStatus": [cluster_status("valid-cluster", cpu("10"), bad())]})
        ),
        invalid_name("status.aggregatedStatus[0].used")
    );
    let name = status_errors(json!({"aggregatedStatus": [
        cluster_status("invalid cluster name", cpu("10"), cpu("5"))]}));
    assert_eq!(
        name,
        [format!(
            "status.aggregatedStatus[0].clusterName: Invalid value: \"invalid cluster name\": {}",
            cluster_name_errors("invalid cluster name").join(",")
        )]
    );
}

#[test]
fn quota_names_are_at_most_63_characters() {
    // Test_validateFederatedResourceQuotaName
    let long = "a".repeat(64);
    assert_eq!(
        frq_errors(
            json!({"metadata": {"name": long, "namespace": "default"}, "spec": {"overall": {}}})
        ),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 63 characters"
        )]
    );
    assert!(
        frq_errors(
            json!({"metadata": {"name": "name-less-than-63-characters", "namespace": "default"},
            "spec": {"overall": {}}})
        )
        .is_empty()
    );
}
