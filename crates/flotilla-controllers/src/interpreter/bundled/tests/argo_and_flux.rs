//! The bundled rules of Argo's Workflow, Flux's GitRepository and Kustomization.

use serde_json::{Value, json};

use super::*;

#[tokio::test]
async fn an_argo_workflow_runs_its_parallelism_and_keeps_what_the_member_decided() {
    let customizations = Customizations::none();
    let workflow = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "etl", "namespace": "data"},
        "spec": {
            "parallelism": 4,
            "entrypoint": "main",
            "nodeSelector": {"accelerator": "a100"},
            "serviceAccountName": "runner",
            "executor": {"serviceAccountName": "default"},
            "imagePullSecrets": [{"name": "registry"}],
            "volumeClaimTemplates": [{"metadata": {"name": "work"}}],
            "volumes": [
                {"name": "cfg", "configMap": {"name": "etl-config"}},
                {"name": "creds", "secret": {"secretName": "not-read", "name": "read-by-name"}},
                {"name": "ceph", "cephfs": {"secretRef": {"name": "ceph-key"}}},
            ],
        },
    });
    let interpreted = customizations
        .interpret_replica(&workflow)
        .await
        .expect("bundled")
        .expect("interprets");
    assert_eq!(interpreted.replicas, 4);
    let requirements =
        serde_json::to_value(interpreted.requirements.expect("requirements")).unwrap();
    assert_eq!(
        requirements["nodeClaim"]["nodeSelector"],
        json!({"accelerator": "a100"})
    );
    let revised = customizations
        .revise_replica(&workflow, 1)
        .expect("bundled")
        .expect("revises");
    assert_eq!(revised["spec"]["parallelism"], 1);

    let references = customizations
        .dependencies(&workflow)
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<(&str, &str)> = references
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ConfigMap", "etl-config"),
            ("PersistentVolumeClaim", "work"),
            ("Secret", "ceph-key"),
            ("Secret", "read-by-name"),
            ("Secret", "registry"),
            ("ServiceAccount", "default"),
            ("ServiceAccount", "runner"),
        ]
    );

    let mut observed = workflow.clone();
    observed["spec"]["suspend"] = json!(true);
    observed["status"] = json!({"phase": "Running"});
    let retained = retain(&workflow, &observed).await;
    assert_eq!(retained["spec"]["suspend"], true);
    assert_eq!(retained["status"]["phase"], "Running");

    for (phase, healthy) in [
        ("Running", true),
        ("Succeeded", true),
        ("Failed", false),
        ("Error", false),
        ("", false),
    ] {
        let mut observed = workflow.clone();
        observed["status"] = json!({"phase": phase});
        let answer = health(&observed).await;
        assert_eq!(answer, healthy, "{phase}");
    }
}

fn flux_condition(status: &str, reason: &str, message: &str) -> Value {
    json!({"type": "Ready", "status": status, "reason": reason, "message": message})
}

#[tokio::test]
async fn a_git_repository_merges_member_conditions_and_follows_generations() {
    let customizations = Customizations::none();
    let repository = json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 3},
        "spec": {"url": "https://example.com/apps.git", "secretRef": {"name": "git-auth"},
                 "verify": {"secretRef": {"name": "signing-keys"}}},
        "status": {"observedGeneration": 2},
    });
    let member = |rendered: i64, ready: Value| {
        json!({"resourceTemplateGeneration": rendered, "generation": 1, "observedGeneration": 1,
               "artifact": {"revision": format!("main@sha1:{rendered}")}, "conditions": [ready]})
    };
    let stored = "stored artifact for revision 'main@sha1:abc'";
    let status = aggregate(
        &repository,
        &[
            item("a", member(3, flux_condition("True", "Succeeded", stored))),
            item("b", member(3, flux_condition("True", "Succeeded", stored))),
            item(
                "c",
                member(
                    2,
                    flux_condition("False", "GitOperationFailed", "auth failed"),
                ),
            ),
        ],
    )
    .await;
    assert_eq!(
        status["observedGeneration"], 2,
        "c still renders generation 2"
    );
    assert_eq!(status["artifact"], json!({"revision": "main@sha1:2"}));
    assert_eq!(
        status["conditions"],
        json!([
            {"type": "Ready", "status": "True", "reason": "Succeeded",
             "message": format!("a={stored}, b={stored}")},
            {"type": "Ready", "status": "False", "reason": "GitOperationFailed", "message": "c=auth failed"},
        ])
    );
    let status = aggregate(
        &repository,
        &[item(
            "a",
            member(3, flux_condition("True", "Succeeded", stored)),
        )],
    )
    .await;
    assert_eq!(status["observedGeneration"], 3);

    let mut observed = repository.clone();
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "3"});
    observed["metadata"]["generation"] = json!(1);
    observed["status"] = json!({"observedGeneration": 1, "conditions": [flux_condition("True", "Succeeded", "ok")],
                                "artifact": {"revision": "r"}, "url": "not reflected"});
    let reflected = reflect(&observed).await;
    assert_eq!(reflected["resourceTemplateGeneration"], 3);
    assert_eq!(reflected["generation"], 1);
    assert_eq!(reflected.get("url"), None);
    assert!(health(&observed).await);

    let references = customizations
        .dependencies(&repository)
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<&str> = references.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["git-auth", "signing-keys"]);

    let mut suspended = repository.clone();
    suspended["spec"]["suspend"] = json!(true);
    let retained = retain(&repository, &suspended).await;
    assert_eq!(retained["spec"]["suspend"], true);
}

#[tokio::test]
async fn a_kustomization_keeps_the_last_revisions_and_is_healthy_once_reconciled() {
    let customizations = Customizations::none();
    let kustomization = json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
        "spec": {"path": "./apps", "serviceAccountName": "flux-applier",
                 "decryption": {"provider": "sops", "secretRef": {"name": "sops-age"}},
                 "kubeConfig": {"secretRef": {"name": "remote"}}},
        "status": {"lastAppliedRevision": "main@sha1:old"},
    });
    let status = aggregate(
            &kustomization,
            &[
                item("a", json!({"lastAppliedRevision": "main@sha1:new", "lastAttemptedRevision": "main@sha1:new",
                                 "resourceTemplateGeneration": 1,
                                 "conditions": [flux_condition("True", "ReconciliationSucceeded", "Applied revision: main@sha1:new")]})),
                item("b", json!({"lastAppliedRevision": ""})),
            ],
        ).await;
    assert_eq!(status["lastAppliedRevision"], "main@sha1:new");
    assert_eq!(status["lastAttemptedRevision"], "main@sha1:new");
    assert_eq!(
        status["observedGeneration"], 0,
        "b has not rendered generation 1"
    );
    assert_eq!(
        status["conditions"][0]["message"],
        "a=Applied revision: main@sha1:new"
    );

    let mut observed = kustomization.clone();
    observed["status"] = json!({"conditions": [flux_condition("True", "Succeeded", "")]});
    let healthy = health(&observed).await;
    assert!(
        !healthy,
        "a Kustomization's success reason is ReconciliationSucceeded"
    );

    let references = customizations
        .dependencies(&kustomization)
        .await
        .expect("bundled")
        .expect("dependencies");
    let names: Vec<(&str, &str)> = references
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("Secret", "remote"),
            ("Secret", "sops-age"),
            ("ServiceAccount", "flux-applier")
        ]
    );
}
