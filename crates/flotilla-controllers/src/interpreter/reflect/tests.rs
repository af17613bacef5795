use serde_json::json;

use super::*;

mod karmada_cases;

#[test]
fn deployment_keeps_counters_and_both_generations_in_go_order() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "generation": 3,
            "annotations": {"resourcetemplate.karmada.io/generation": "7"}},
        "status": {"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
            "availableReplicas": 2, "conditions": [{"type": "Available", "status": "True"}]}});
    let status = reflect_status(&deployment)
        .expect("reflects")
        .expect("collected");
    assert_eq!(
        serde_json::to_string(&status).expect("json"),
        r#"{"generation":3,"resourceTemplateGeneration":7,"observedGeneration":3,"replicas":2,"updatedReplicas":2,"readyReplicas":2,"availableReplicas":2}"#
    );
}

#[test]
fn empty_deployment_status_is_not_collected() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "status": {}});
    assert_eq!(reflect_status(&deployment).expect("reflects"), None);
    let no_status =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
    assert_eq!(reflect_status(&no_status).expect("reflects"), None);
}

#[test]
fn bad_template_generation_is_an_error() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "annotations": {"resourcetemplate.karmada.io/generation": "x"}},
        "status": {"replicas": 1}});
    assert!(matches!(
        reflect_status(&deployment),
        Err(ReflectError::TemplateGeneration { .. })
    ));
}

#[test]
fn statefulset_has_no_observed_generation_and_always_replicas() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 2},
        "status": {"observedGeneration": 2, "replicas": 0}});
    let status = reflect_status(&sts).expect("reflects").expect("collected");
    assert_eq!(
        status,
        json!({"generation": 2, "replicas": 0, "availableReplicas": 0})
    );
}

#[test]
fn services_reflect_only_load_balancers() {
    let cluster_ip = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "ClusterIP"}, "status": {"loadBalancer": {}}});
    assert_eq!(reflect_status(&cluster_ip).expect("reflects"), None);
    let lb = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "LoadBalancer"},
        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}, "conditions": []}});
    assert_eq!(
        reflect_status(&lb).expect("reflects"),
        Some(json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}))
    );
}

#[test]
fn job_keeps_progress_and_conditions() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "status": {"startTime": "2026-12-01T00:00:00Z", "active": 1, "ready": 1,
            "uncountedTerminatedPods": {}}});
    assert_eq!(
        reflect_status(&job).expect("reflects"),
        Some(json!({"startTime": "2026-12-01T00:00:00Z", "active": 1}))
    );
}

#[test]
fn other_kinds_reflect_the_whole_status() {
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
        "status": {"loadBalancer": {"ingress": [{"hostname": "x"}]}}});
    assert_eq!(
        reflect_status(&ingress).expect("reflects"),
        Some(json!({"loadBalancer": {"ingress": [{"hostname": "x"}]}}))
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    assert_eq!(reflect_status(&cm).expect("reflects"), None);
}

#[test]
fn daemonset_always_carries_its_scheduling_counters() {
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
        "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
            "numberReady": 0}});
    assert_eq!(
        serde_json::to_string(&reflect_status(&ds).expect("reflects").expect("collected"))
            .expect("json"),
        r#"{"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,"numberReady":0}"#
    );
}

/// Karmada fails the reflection when the annotation is missing (it parses ""), so the Work
/// records nothing for the object; here the generation is only left out, which aggregation
/// reads as "not caught up" (see the module documentation).
#[test]
fn missing_template_generation_is_left_out_not_an_error() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "generation": 2},
        "status": {"observedGeneration": 2, "replicas": 1}});
    let status = reflect_status(&deployment)
        .expect("reflects")
        .expect("collected");
    assert_eq!(
        status,
        json!({"generation": 2, "observedGeneration": 2, "replicas": 1})
    );
    let mut empty = deployment.clone();
    empty["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": ""});
    assert_eq!(reflect_status(&empty).expect("reflects"), Some(status));
}
