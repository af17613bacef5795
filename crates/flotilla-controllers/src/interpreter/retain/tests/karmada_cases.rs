//! The cases of Karmada's `retain_test.go` (pkg/resourceinterpreter/default/native): the same
//! desired and observed objects, Karmada's expected result of the kind's `Retain` rule. Karmada
//! calls each kind's function directly (its Job selector cases use Deployment objects); here the
//! objects carry the kind whose rule is under test.

use serde_json::{Value, json};

use super::*;

fn retained(mut desired: Value, observed: &Value) -> Result<Value, RetainError> {
    retain_kind_fields(&mut desired, observed)?;
    Ok(desired)
}

fn deployment(labels: Value, spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "labels": labels}, "spec": spec})
}

#[test]
fn deployment_replicas_are_the_members_only_under_the_retain_label() {
    let hpa = json!({"resourcetemplate.karmada.io/retain-replicas": "true"});
    let observed = deployment(json!({}), json!({"replicas": 4}));
    assert_eq!(
        retained(deployment(hpa.clone(), json!({"replicas": 2})), &observed).expect("retains"),
        deployment(hpa.clone(), json!({"replicas": 4}))
    );
    assert_eq!(
        retained(deployment(json!({}), json!({"replicas": 2})), &observed).expect("retains"),
        deployment(json!({}), json!({"replicas": 2}))
    );
    // Under the label, a member without replicas is an error.
    let empty = deployment(json!({}), json!({}));
    assert!(matches!(
        retained(deployment(hpa, json!({"replicas": 2})), &empty),
        Err(RetainError::MissingReplicas { .. })
    ));
}

fn secret(secret_type: &str, key: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {},
        "data": {key: value}, "type": secret_type})
}

#[test]
fn only_service_account_token_secrets_keep_the_members_data() {
    let token = "kubernetes.io/service-account-token";
    assert_eq!(
        retained(
            secret(token, "token", "ZGVzaXJlZA=="),
            &secret(token, "token", "b2JzZXJ2ZWQ=")
        )
        .expect("retains"),
        secret(token, "token", "b2JzZXJ2ZWQ=")
    );
    // Neither side has data.
    let bare = json!({"apiVersion": "v1", "kind": "Secret", "type": token});
    assert_eq!(retained(bare.clone(), &bare).expect("retains"), bare);
    for (secret_type, key) in [
        ("kubernetes.io/tls", "tls.crt"),
        ("kubernetes.io/basic-auth", "username"),
        ("kubernetes.io/dockercfg", ".dockercfg"),
    ] {
        assert_eq!(
            retained(
                secret(secret_type, key, "ZGVzaXJlZA=="),
                &secret(secret_type, key, "b2JzZXJ2ZWQ=")
            )
            .expect("retains"),
            secret(secret_type, key, "ZGVzaXJlZA=="),
            "{secret_type}"
        );
    }
}

#[test]
fn pv_keeps_the_members_claim_ref_and_pvc_its_volume_name() {
    let pv = |claim: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
            "spec": {"claimRef": {"name": claim, "namespace": "default"}}})
    };
    assert_eq!(
        retained(pv("pvc-1"), &pv("pvc-2")).expect("retains"),
        pv("pvc-2")
    );
    let pvc = |volume: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc"},
            "spec": {"volumeName": volume}})
    };
    assert_eq!(
        retained(pvc("desired-volume-name"), &pvc("observed-volume-name")).expect("retains"),
        pvc("observed-volume-name")
    );
}

/// A Job whose selector and template labels are `selector` and `template` (`None`: absent).
fn job(selector: Option<&str>, template: Option<&str>) -> Value {
    let mut spec = json!({"parallelism": 2});
    if let Some(app) = selector {
        spec["selector"] = json!({"matchLabels": {"app": app}});
    }
    if let Some(app) = template {
        spec["template"] = json!({"metadata": {"labels": {"app": app}}});
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "nginx"},
        "spec": spec})
}

#[test]
fn job_keeps_the_members_selector_and_template_labels() {
    let rows = [
        (
            Some("nginx_v1"),
            Some("nginx_v1"),
            Some("nginx"),
            Some("nginx"),
        ),
        (None, Some("nginx_v1"), None, Some("nginx")),
        (Some("nginx_v1"), None, Some("nginx"), None),
    ];
    for (desired_selector, desired_template, observed_selector, observed_template) in rows {
        let desired = job(desired_selector, desired_template);
        let observed = job(observed_selector, observed_template);
        assert_eq!(
            retained(desired, &observed).expect("retains"),
            job(observed_selector, observed_template),
            "{observed}"
        );
    }
}

fn container(name: &str, mount: &str, path: &str) -> Value {
    json!({"name": name, "volumeMounts": [{"name": mount, "mountPath": path}]})
}

fn pod(node: &str, account: &str, secret: &str, init: Value, containers: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {
        "nodeName": node, "serviceAccountName": account,
        "volumes": [{"name": format!("{secret}-volume"), "secret": {"secretName": secret}}],
        "initContainers": init, "containers": containers}})
}

#[test]
fn pod_keeps_the_members_scheduling_volumes_and_mounts_of_matching_containers() {
    let desired = pod(
        "node2",
        "fake-desired-sa",
        "fake-desired-secret",
        json!([
            container("test", "fake-desired-config", "/etc/etcd/desired"),
            container("test-3", "fake-desired-config-2", "/etc/etcd/desired2")
        ]),
        json!([
            container("test", "fake-desired-cert", "/etc/karmada/desired"),
            container("test-3", "fake-desired-cert-2", "/etc/karmada/desired2")
        ]),
    );
    let observed = pod(
        "node1",
        "fake-observed-sa",
        "fake-observed-secret",
        json!([
            container("test", "fake-observed-config", "/etc/etcd/observed"),
            container("test-2", "fake-observed-config-2", "/etc/etcd/observed2")
        ]),
        json!([
            container("test", "fake-observed-cert", "/etc/karmada/observed"),
            container("test-2", "fake-observed-cert-2", "/etc/karmada/observed2")
        ]),
    );
    // Containers only the member has are not added; those only the template has keep theirs.
    let expected = pod(
        "node1",
        "fake-observed-sa",
        "fake-observed-secret",
        json!([
            container("test", "fake-observed-config", "/etc/etcd/observed"),
            container("test-3", "fake-desired-config-2", "/etc/etcd/desired2")
        ]),
        json!([
            container("test", "fake-observed-cert", "/etc/karmada/observed"),
            container("test-3", "fake-desired-cert-2", "/etc/karmada/desired2")
        ]),
    );
    assert_eq!(retained(desired, &observed).expect("retains"), expected);
}
