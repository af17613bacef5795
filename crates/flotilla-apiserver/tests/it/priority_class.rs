//! `scheduling.k8s.io/v1` PriorityClasses, as kube-apiserver serves them (PropagationPolicies'
//! `schedulePriority` names them).

use http::StatusCode;
use serde_json::json;

use crate::support::*;

const CLASSES: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";

#[tokio::test]
async fn priority_classes_are_served_defaulted_validated_and_bootstrapped() {
    let cp = control_plane().await;
    // The two system classes every cluster has.
    let critical = send(&cp, get(&format!("{CLASSES}/system-cluster-critical"))).await;
    assert_eq!(critical.status, StatusCode::OK, "{}", critical.body);
    assert_eq!(critical.body["value"], 2_000_000_000);

    let created = send(
        &cp,
        json(
            "POST",
            CLASSES,
            &json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "gpu-high"}, "value": 1000}),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["preemptionPolicy"], "PreemptLowerPriority");

    let too_high = send(
        &cp,
        json(
            "POST",
            CLASSES,
            &json!({"metadata": {"name": "too-high"}, "value": 1_000_000_001}),
        ),
    )
    .await;
    assert_eq!(too_high.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        too_high.body["message"],
        "PriorityClass.scheduling.k8s.io \"too-high\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    );

    let changed = send(
        &cp,
        merge(&format!("{CLASSES}/gpu-high"), json!({"value": 2000})),
    )
    .await;
    assert_eq!(
        changed.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        changed.body
    );
    assert!(
        changed.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("value: Forbidden: may not be changed in an update.")),
        "{}",
        changed.body
    );
}
