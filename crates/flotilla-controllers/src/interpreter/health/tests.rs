use serde_json::json;

use super::*;

mod karmada_cases;

fn deployment(generation: i64, replicas: i32, status: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "spec": {"replicas": replicas}, "status": status})
}

#[test]
fn deployment_is_healthy_only_when_rolled_out_and_available() {
    let done = json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3});
    assert_eq!(health(&deployment(2, 3, done)), Health::Healthy);
    let stale = json!({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3});
    assert_eq!(health(&deployment(2, 3, stale)), Health::Unhealthy);
    let rolling = json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 2});
    assert_eq!(health(&deployment(2, 3, rolling)), Health::Unhealthy);
    let unavailable =
        json!({"observedGeneration": 2, "updatedReplicas": 3, "availableReplicas": 1});
    assert_eq!(health(&deployment(2, 3, unavailable)), Health::Unhealthy);
    // Scaled to zero and observed: healthy.
    assert_eq!(
        health(&deployment(4, 0, json!({"observedGeneration": 4}))),
        Health::Healthy
    );
}

#[test]
fn unreadable_object_is_unknown() {
    let broken = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": "three"}});
    assert_eq!(health(&broken), Health::Unknown);
}

#[test]
fn kinds_without_a_rule_are_healthy() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    assert!(interpret(&cm).is_none());
    assert_eq!(health(&cm), Health::Healthy);
    // Only apps/v1 has the Deployment rule.
    let old = json!({"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 3}});
    assert_eq!(health(&old), Health::Healthy);
}

#[test]
fn statefulset_replicaset_daemonset() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 1}, "spec": {"replicas": 2, "serviceName": "db",
        "selector": {}, "template": {}},
        "status": {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 1}});
    assert_eq!(health(&sts), Health::Unhealthy);
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "r", "generation": 3}, "spec": {"replicas": 2, "selector": {}},
        "status": {"observedGeneration": 3, "replicas": 2, "availableReplicas": 2}});
    assert_eq!(health(&rs), Health::Healthy);
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "d", "generation": 1}, "spec": {"selector": {}, "template": {}},
        "status": {"observedGeneration": 1, "desiredNumberScheduled": 3, "currentNumberScheduled": 3,
            "numberMisscheduled": 0, "numberReady": 3, "updatedNumberScheduled": 3, "numberAvailable": 2}});
    assert_eq!(health(&ds), Health::Unhealthy);
}

#[test]
fn services_and_ingresses_need_an_address_only_for_load_balancers() {
    let cluster_ip = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "ClusterIP"}});
    assert_eq!(health(&cluster_ip), Health::Healthy);
    let pending = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {}}});
    assert_eq!(health(&pending), Health::Unhealthy);
    let ready = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "LoadBalancer"}, "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}});
    assert_eq!(health(&ready), Health::Healthy);
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"},
        "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}});
    assert_eq!(health(&ingress), Health::Healthy);
    let no_address =
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}});
    assert_eq!(health(&no_address), Health::Unhealthy);
}

#[test]
fn pods_pvcs_and_pdbs() {
    let pod = |phase: &str, ready: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready}]}})
    };
    assert_eq!(health(&pod("Running", "True")), Health::Healthy);
    assert_eq!(health(&pod("Running", "False")), Health::Unhealthy);
    assert_eq!(health(&pod("Succeeded", "False")), Health::Healthy);
    assert_eq!(health(&pod("Pending", "True")), Health::Unhealthy);
    let pvc = |phase: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
            "status": {"phase": phase}})
    };
    assert_eq!(health(&pvc("Bound")), Health::Healthy);
    assert_eq!(health(&pvc("Pending")), Health::Unhealthy);
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
        "status": {"currentHealthy": 1, "desiredHealthy": 2, "disruptionsAllowed": 0, "expectedPods": 3}});
    assert_eq!(health(&pdb), Health::Unhealthy);
}

#[test]
fn a_running_pod_is_judged_by_its_first_ready_condition() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]}});
    assert_eq!(health(&pod), Health::Unhealthy);
}
