use serde_json::json;

use super::*;

mod karmada_cases;
// Karmada's lifted (kubefed) Service and ServiceAccount cases, restated.
mod karmada_lifted_retain;

#[test]
fn member_owned_metadata_is_kept_and_removed_template_keys_are_dropped() {
    let mut desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default",
            "labels": {"app": "web", "karmada.io/managed": "true"},
            "annotations": {"team": "a"}},
        "data": {"k": "v"}});
    let observed = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "resourceVersion": "42",
            "finalizers": ["member.example/hold"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Foo", "name": "f", "uid": "u"}],
            // `old` was managed by the template and is gone from it; `added-by-member` is not.
            "labels": {"app": "edited", "old": "x", "added-by-member": "y", "karmada.io/managed": "true"},
            "annotations": {"team": "b", "gone": "z", "member.example/note": "n",
                "resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed,old",
                "resourcetemplate.karmada.io/managed-annotations": "gone,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,team"}},
        "data": {"k": "member"}});
    retain(&mut desired, &observed).expect("retains");
    let meta = &desired["metadata"];
    assert_eq!(meta["resourceVersion"], "42");
    assert_eq!(meta["finalizers"], json!(["member.example/hold"]));
    assert_eq!(meta["ownerReferences"][0]["name"], "f");
    // Template values win for keys it manages; member-added keys stay; removed keys go.
    assert_eq!(
        meta["labels"],
        json!({"app": "web", "karmada.io/managed": "true", "added-by-member": "y"})
    );
    assert_eq!(meta["annotations"]["team"], "a");
    assert_eq!(meta["annotations"]["member.example/note"], "n");
    assert!(meta["annotations"].get("gone").is_none());
    // Data is the template's.
    assert_eq!(desired["data"]["k"], "v");
}

#[test]
fn empty_member_lists_clear_the_desired_ones() {
    let mut desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "finalizers": ["template.example/f"]}});
    let observed = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "resourceVersion": "7"}});
    retain(&mut desired, &observed).expect("retains");
    assert!(desired["metadata"].get("finalizers").is_none());
    assert_eq!(desired["metadata"]["resourceVersion"], "7");
}

#[test]
fn deployment_replicas_are_the_members_only_with_retain_replicas() {
    let observed = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 9}});
    let mut plain = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 3}});
    retain(&mut plain, &observed).expect("retains");
    assert_eq!(plain["spec"]["replicas"], 3);
    let mut hpa = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"resourcetemplate.karmada.io/retain-replicas": "true"}},
        "spec": {"replicas": 3}});
    retain(&mut hpa, &observed).expect("retains");
    assert_eq!(hpa["spec"]["replicas"], 9);
    let unset = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"}, "spec": {}});
    let error = retain(&mut hpa, &unset).expect_err("needs observed replicas");
    assert_eq!(
        error.to_string(),
        "failed to get spec.replicas from Deployment default/web"
    );
}

#[test]
fn service_keeps_allocated_ips_and_ports() {
    let mut desired = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "nodePort": 30053}]}});
    let observed = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "healthCheckNodePort": 31000,
            "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080},
                      {"port": 53, "protocol": "UDP", "nodePort": 31053}]}});
    retain(&mut desired, &observed).expect("retains");
    let spec = &desired["spec"];
    assert_eq!(spec["clusterIP"], "10.96.0.10");
    assert_eq!(spec["clusterIPs"], json!(["10.96.0.10"]));
    assert_eq!(spec["healthCheckNodePort"], 31000);
    assert_eq!(spec["ports"][0]["nodePort"], 30080);
    // A node port the template asks for explicitly stays.
    assert_eq!(spec["ports"][1]["nodePort"], 30053);
}

#[test]
fn service_account_secrets_are_merged() {
    let mut desired = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"},
        "secrets": [{"name": "mine"}]});
    let observed = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"},
        "secrets": [{"name": "sa-token-abcde"}, {"name": "mine"}],
        "imagePullSecrets": [{"name": "registry"}]});
    retain(&mut desired, &observed).expect("retains");
    assert_eq!(
        desired["secrets"],
        json!([{"name": "mine"}, {"name": "sa-token-abcde"}])
    );
    assert_eq!(desired["imagePullSecrets"], json!([{"name": "registry"}]));
}

#[test]
fn pvc_pv_job_secret_and_pod_fields() {
    let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": {}});
    retain(
        &mut pvc,
        &json!({"metadata": {}, "spec": {"volumeName": "pv-1"}}),
    )
    .expect("retains");
    assert_eq!(pvc["spec"]["volumeName"], "pv-1");

    let mut pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"}, "spec": {}});
    retain(
        &mut pv,
        &json!({"metadata": {}, "spec": {"claimRef": {"name": "c"}}}),
    )
    .expect("retains");
    assert_eq!(pv["spec"]["claimRef"]["name"], "c");

    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"metadata": {"labels": {"app": "j"}}, "spec": {}}}});
    let observed_job = json!({"metadata": {}, "spec": {
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
        "template": {"metadata": {"labels": {"app": "j", "batch.kubernetes.io/controller-uid": "u"}}}}});
    retain(&mut job, &observed_job).expect("retains");
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        "u"
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
        "u"
    );

    let mut token = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"},
        "type": "kubernetes.io/service-account-token", "data": null});
    retain(
        &mut token,
        &json!({"metadata": {}, "data": {"token": "c2VjcmV0"}}),
    )
    .expect("retains");
    assert_eq!(token["data"]["token"], "c2VjcmV0");
    let mut opaque = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "o"},
        "data": {"k": "dg=="}});
    retain(
        &mut opaque,
        &json!({"metadata": {}, "data": {"k": "bWVtYmVy"}}),
    )
    .expect("retains");
    assert_eq!(opaque["data"]["k"], "dg==");

    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "nginx:2"}]}});
    let observed_pod = json!({"metadata": {}, "spec": {"nodeName": "n1", "serviceAccountName": "default",
        "volumes": [{"name": "token"}],
        "containers": [{"name": "app", "image": "nginx:1", "volumeMounts": [{"name": "token", "mountPath": "/t"}]}]}});
    retain(&mut pod, &observed_pod).expect("retains");
    assert_eq!(pod["spec"]["nodeName"], "n1");
    assert_eq!(pod["spec"]["volumes"][0]["name"], "token");
    assert_eq!(pod["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(
        pod["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
        "/t"
    );
}
