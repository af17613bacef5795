//! Defaults of autoscaling/v2 HorizontalPodAutoscalers.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/autoscaling/v2/defaults.go at
//! v1.32: `SetDefaults_HorizontalPodAutoscaler` (minReplicas 1; no metrics means 80% average
//! CPU utilization) and `SetDefaults_HorizontalPodAutoscalerBehavior` with
//! `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`: only when `behavior` is given, each
//! direction's unset fields come from the historical rules (scale up: no stabilization, the
//! larger of 4 pods or 100% per 15 s; scale down: 100% per 15 s, the stabilization window left
//! to the controller's flag).

use serde_json::{Value, json};

use super::fields::{Obj, child, existing, list_empty, or_insert};

/// `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;

pub fn horizontal_pod_autoscaler(hpa: &mut Obj) {
    let Some(spec) = child(hpa, "spec") else {
        return;
    };
    or_insert(spec, "minReplicas", 1);
    if list_empty(spec, "metrics") {
        spec.insert(
            "metrics".into(),
            json!([{
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
                }
            }]),
        );
    }
    if let Some(behavior) = existing(spec, "behavior") {
        let up = json!({
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}
            ]
        });
        let down = json!({
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]
        });
        scaling_rules(behavior, "scaleUp", up);
        scaling_rules(behavior, "scaleDown", down);
    }
}

/// The given rules' set fields over the defaults (a wrong type is left for validation).
fn scaling_rules(behavior: &mut Obj, key: &str, defaults: Value) {
    let rules = behavior.entry(key).or_insert(Value::Null);
    if rules.is_null() {
        *rules = defaults;
        return;
    }
    let (Some(rules), Value::Object(defaults)) = (rules.as_object_mut(), defaults) else {
        return;
    };
    for (field, value) in defaults {
        or_insert(rules, &field, value);
    }
}
