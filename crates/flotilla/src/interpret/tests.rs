use serde_json::json;

use super::*;

fn customization(rules: Value) -> ResourceInterpreterCustomization {
    serde_json::from_value(json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "workloads"},
        "spec": {"target": {"apiVersion": "apps/v1", "kind": "Deployment"}, "customizations": rules},
    }))
    .expect("customization")
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}}},
           "status": {"readyReplicas": 2}})
}

#[test]
fn check_reports_each_rule_and_fails_on_a_script_that_does_not_load() {
    let good = customization(json!({
        "healthInterpretation": {"luaScript": "function InterpretHealth(obj) return true end"},
    }));
    let bad = customization(json!({
        "replicaResource": {"luaScript": "function GetReplicas(obj) return obj.spec.replicas"},
    }));
    let (report, failed) = check(&[("good".into(), Ok(good))]);
    assert!(!failed);
    assert!(
        report.contains("SOURCE: good\nTARGET: apps/v1 Deployment\nRULERS:\n"),
        "{report}"
    );
    assert!(report.contains("    InterpretHealth:\tPASS\n"), "{report}");
    assert!(report.contains("    Retain:\tUNSET\n"), "{report}");
    let (report, failed) = check(&[
        ("bad".into(), Ok(bad)),
        (
            "other".into(),
            Err("other: not a ResourceInterpreterCustomization".into()),
        ),
    ]);
    assert!(failed);
    assert!(
        report.contains("    InterpretReplica:\tERROR: "),
        "{report}"
    );
    assert!(
        report.contains("other: not a ResourceInterpreterCustomization"),
        "{report}"
    );
}

#[test]
fn operations_are_named_as_in_karmada_ignoring_case() {
    assert_eq!(
        operation("interpretHealth").unwrap(),
        Operation::InterpretHealth
    );
    assert_eq!(operation("RETAIN").unwrap(), Operation::Retain);
    let error = operation("frobnicate").unwrap_err().to_string();
    assert!(
        error.contains("Use one of: Retain, InterpretReplica"),
        "{error}"
    );
}

#[tokio::test]
async fn an_operation_runs_the_given_script_and_prints_named_results() {
    let customizations = Customizations::fixed(&[customization(json!({
        "replicaResource": {"luaScript":
            "function GetReplicas(obj) return obj.spec.replicas * 2, nil end"},
    }))]);
    let results = execute(
        &customizations,
        Operation::InterpretReplica,
        None,
        Some(&deployment()),
        &[],
        0,
    )
    .await
    .expect("runs");
    assert_eq!(results[0], ("replica", json!(6)));
    assert_eq!(
        render(&results).unwrap(),
        "---\n# [1/2] replica:\n6\n---\n# [2/2] requires:\nnull\n"
    );
    // No script for the operation: karmadactl's message.
    let error = execute(
        &customizations,
        Operation::InterpretHealth,
        None,
        Some(&deployment()),
        &[],
        0,
    )
    .await
    .unwrap_err();
    assert_eq!(error, "rule is not enabled");
    let error = execute(
        &customizations,
        Operation::InterpretReplica,
        Some(&deployment()),
        Some(&deployment()),
        &[],
        0,
    )
    .await
    .unwrap_err();
    assert!(error.contains("not specify both"), "{error}");
}

#[tokio::test]
async fn aggregation_prints_the_object_with_its_new_status() {
    let customizations = Customizations::fixed(&[customization(json!({
        "statusAggregation": {"luaScript": r#"
            function AggregateStatus(desiredObj, statusItems)
              local ready = 0
              for i = 1, #statusItems do ready = ready + (statusItems[i].status.readyReplicas or 0) end
              desiredObj.status = {readyReplicas = ready}
              return desiredObj
            end"#},
    }))]);
    let item = |cluster: &str, ready: i64| AggregatedStatusItem {
        cluster_name: cluster.into(),
        status: Some(JsonText::new(&json!({"readyReplicas": ready}))),
        applied: true,
        ..AggregatedStatusItem::default()
    };
    let results = execute(
        &customizations,
        Operation::AggregateStatus,
        Some(&deployment()),
        None,
        &[item("a", 2), item("b", 3)],
        0,
    )
    .await
    .expect("runs");
    assert_eq!(results[0].0, "aggregatedStatus");
    assert_eq!(results[0].1["status"], json!({"readyReplicas": 5}));
    assert_eq!(results[0].1["metadata"]["name"], "web");
}

#[tokio::test]
async fn without_files_the_bundled_rules_answer() {
    let job = json!({
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": "train", "namespace": "ml"},
        "status": {"conditions": [{"type": "Failed", "status": "True"}]},
    });
    let results = execute(
        &Customizations::fixed(&[]),
        Operation::InterpretHealth,
        None,
        Some(&job),
        &[],
        0,
    )
    .await
    .expect("runs");
    assert_eq!(results, [("healthy", json!(false))]);
}
