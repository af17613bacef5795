//! Tests of this group's bundled customizations (behaviour a user relies on, per kind).

use serde_json::{Value, json};

use super::super::tests::{aggregate, dependencies, health, item, reflect, retain, with_status};
use crate::interpreter::Customizations;

const SOURCES: &str = "source.toolkit.fluxcd.io/v1beta2";

fn condition(kind: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason, "message": message})
}

fn ready(status: &str, reason: &str, message: &str) -> Value {
    condition("Ready", status, reason, message)
}

fn refs(namespace: &str, expected: &[(&str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(kind, name)| (kind.to_string(), namespace.to_string(), name.to_string()))
        .collect()
}

/// A member's reflected status: rendered from template generation `rendered`, its own
/// generation observed or not.
fn member(rendered: i64, observed: bool, extra: Value) -> Value {
    let mut status = json!({"resourceTemplateGeneration": rendered, "generation": 2,
                            "observedGeneration": if observed { 2 } else { 1 }});
    for (key, value) in extra.as_object().expect("an object") {
        status[key] = value.clone();
    }
    status
}

/// Checks the `suspend` retention every Flux kind shares: the member's value wins, including
/// `false`, and a member without one leaves the template's.
async fn suspend_is_retained(template: &Value) {
    let mut desired = template.clone();
    desired["spec"]["suspend"] = json!(true);
    desired["spec"]["interval"] = json!("10m");
    let mut observed = template.clone();
    observed["spec"] = json!({"suspend": false, "interval": "1m"});
    let retained = retain(&desired, &observed).await;
    assert_eq!(retained["spec"]["suspend"], false, "the member's suspend");
    assert_eq!(retained["spec"]["interval"], "10m", "nothing else");

    observed["spec"] = json!({});
    let retained = retain(&desired, &observed).await;
    assert_eq!(
        retained["spec"]["suspend"], true,
        "no suspend in the member"
    );
}

fn helm_release() -> Value {
    json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2beta1",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "apps", "generation": 2},
        "spec": {
            "interval": "5m",
            "chart": {"spec": {"chart": "podinfo", "version": "6.x",
                               "sourceRef": {"kind": "HelmRepository", "name": "podinfo"},
                               "verify": {"provider": "cosign", "secretRef": {"name": "cosign-keys"}}}},
            "valuesFrom": [
                {"kind": "ConfigMap", "name": "podinfo-values"},
                {"kind": "Secret", "name": "podinfo-secrets", "valuesKey": "values.yaml"},
                {"kind": "Secret", "name": "cosign-keys"},
                {"kind": "Secret", "name": ""},
                {"kind": "Unknown", "name": "ignored"},
            ],
            "kubeConfig": {"secretRef": {"name": "edge-kubeconfig"}},
            "serviceAccountName": "podinfo-deployer",
        },
    })
}

#[tokio::test]
async fn a_helm_release_is_healthy_only_once_its_reconciliation_succeeded() {
    let release = helm_release();
    assert!(!health(&release).await, "no status yet");
    let released = condition("Released", "True", "InstallSucceeded", "installed");
    assert!(
        health(&with_status(
            &release,
            json!({"conditions": [released.clone(), ready("True", "ReconciliationSucceeded", "ok")]})
        ))
        .await,
        "Ready need not come first"
    );
    assert!(
        !health(&with_status(
            &release,
            json!({"conditions": [released, ready("True", "InstallSucceeded", "")]})
        ))
        .await
    );
    assert!(
        !health(&with_status(
            &release,
            json!({"conditions": [ready("False", "ReconciliationSucceeded", "")]})
        ))
        .await
    );
}

#[tokio::test]
async fn a_helm_release_aggregates_revisions_counters_conditions_and_generation() {
    let mut release = helm_release();
    release["status"] = json!({"observedGeneration": 1, "lastAppliedRevision": "6.3.0",
                               "lastReleaseRevision": 4, "failures": 1, "installFailures": 0});
    let items = [
        item(
            "eu",
            member(
                2,
                true,
                json!({"lastAppliedRevision": "6.3.5", "lastAttemptedRevision": "6.3.5",
                       "lastAttemptedValuesChecksum": "abc", "helmChart": "apps/apps-podinfo",
                       "lastReleaseRevision": 7, "failures": 2, "upgradeFailures": 5, "installFailures": 1,
                       "conditions": [ready("True", "ReconciliationSucceeded", "Release reconciliation succeeded"),
                                      condition("Released", "True", "UpgradeSucceeded", "upgraded")]}),
            ),
        ),
        item(
            "us",
            member(
                2,
                true,
                json!({"lastAppliedRevision": "", "lastAttemptedRevision": "6.3.6",
                       "lastReleaseRevision": 3, "failures": 3, "installFailures": 2,
                       "conditions": [ready("True", "ReconciliationSucceeded", "Release reconciliation succeeded"),
                                      condition("Released", "False", "UpgradeFailed", "timed out")]}),
            ),
        ),
    ];
    let status = aggregate(&release, &items).await;
    assert_eq!(
        status,
        json!({
            "observedGeneration": 2,
            "lastAppliedRevision": "6.3.5",
            "lastAttemptedRevision": "6.3.6",
            "lastAttemptedValuesChecksum": "abc",
            "helmChart": "apps/apps-podinfo",
            "lastReleaseRevision": 3,
            "failures": 6,
            "installFailures": 3,
            "conditions": [
                ready("True", "ReconciliationSucceeded",
                      "eu=Release reconciliation succeeded, us=Release reconciliation succeeded"),
                condition("Released", "True", "UpgradeSucceeded", "eu=upgraded"),
                condition("Released", "False", "UpgradeFailed", "us=timed out"),
            ],
        }),
        "upgradeFailures is absent from the template's status, so it is not summed"
    );

    // One member has not observed its generation yet: the template's observedGeneration stays.
    let lagging = [items[0].clone(), item("us", member(2, false, json!({})))];
    let status = aggregate(&release, &lagging).await;
    assert_eq!(status["observedGeneration"], 1);
    // Nor has one rendered from an older template.
    let stale = [item("us", member(1, true, json!({})))];
    assert_eq!(aggregate(&release, &stale).await["observedGeneration"], 1);
    // Without any status of its own the template's observedGeneration counts as 0.
    let mut fresh = helm_release();
    fresh["metadata"]["generation"] = json!(3);
    assert_eq!(aggregate(&fresh, &lagging).await["observedGeneration"], 0);
    // No member at all: the template's generation.
    assert_eq!(aggregate(&fresh, &[]).await["observedGeneration"], 3);
}

#[tokio::test]
async fn a_helm_release_reflects_its_release_state_and_keeps_suspend() {
    let release = helm_release();
    let mut observed = with_status(
        &release,
        json!({"conditions": [ready("True", "ReconciliationSucceeded", "ok")],
               "observedGeneration": 1, "lastAppliedRevision": "6.3.5",
               "lastAttemptedRevision": "6.3.5", "lastAttemptedValuesChecksum": "abc",
               "helmChart": "apps/apps-podinfo", "lastReleaseRevision": 2, "failures": 0,
               "upgradeFailures": 1, "installFailures": 0, "lastHandledReconcileAt": "now"}),
    );
    observed["metadata"]["generation"] = json!(1);
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "2"});
    let reflected = reflect(&observed).await;
    let mut expected = observed["status"].clone();
    expected
        .as_object_mut()
        .unwrap()
        .remove("lastHandledReconcileAt");
    expected["generation"] = json!(1);
    expected["resourceTemplateGeneration"] = json!(2);
    assert_eq!(reflected, expected);

    // An annotation that is not a number is left out.
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "two"});
    assert_eq!(
        reflect(&observed).await.get("resourceTemplateGeneration"),
        None
    );

    suspend_is_retained(&release).await;
}

#[tokio::test]
async fn a_helm_release_depends_on_its_values_verification_kubeconfig_and_account() {
    assert_eq!(
        dependencies(&helm_release()).await,
        refs(
            "apps",
            &[
                ("ConfigMap", "podinfo-values"),
                ("Secret", "cosign-keys"),
                ("Secret", "edge-kubeconfig"),
                ("Secret", "podinfo-secrets"),
                ("ServiceAccount", "podinfo-deployer"),
            ]
        )
    );
    let bare = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2beta1", "kind": "HelmRelease",
                      "metadata": {"name": "x", "namespace": "apps"},
                      "spec": {"chart": {"spec": {"chart": "x", "verify": {"provider": "cosign"}}},
                               "serviceAccountName": ""}});
    assert_eq!(dependencies(&bare).await, []);
}

fn source(kind: &str, spec: Value) -> Value {
    json!({
        "apiVersion": SOURCES,
        "kind": kind,
        "metadata": {"name": "podinfo", "namespace": "flux-system", "generation": 2},
        "spec": spec,
    })
}

/// Health shared by Bucket, HelmRepository and OCIRepository (and HelmChart's `Succeeded`).
async fn healthy_when_ready_succeeded(object: &Value) {
    assert!(!health(object).await, "no status");
    assert!(
        !health(&with_status(object, json!({}))).await,
        "no conditions"
    );
    let storage = condition("ArtifactInStorage", "True", "Succeeded", "stored");
    assert!(
        health(&with_status(
            object,
            json!({"conditions": [storage.clone(), ready("True", "Succeeded", "stored artifact")]})
        ))
        .await
    );
    assert!(
        !health(&with_status(
            object,
            json!({"conditions": [storage, ready("True", "Progressing", "")]})
        ))
        .await
    );
    assert!(
        !health(&with_status(
            object,
            json!({"conditions": [ready("False", "Succeeded", "")]})
        ))
        .await
    );
}

/// Aggregation shared by Bucket, HelmRepository and OCIRepository: the last artifact, the last
/// non-empty url, merged conditions, and the generation rule.
async fn aggregates_artifact_url_and_conditions(template: &Value) {
    let items = [
        item(
            "a",
            member(
                2,
                true,
                json!({"artifact": {"revision": "v1"}, "url": "http://a/latest.tar.gz",
                       "conditions": [ready("True", "Succeeded", "stored v1")]}),
            ),
        ),
        item(
            "b",
            member(
                2,
                true,
                json!({"artifact": {"revision": "v2"}, "url": "",
                       "conditions": [ready("False", "AuthenticationFailed", "bad token")]}),
            ),
        ),
        item(
            "c",
            member(
                2,
                true,
                json!({"conditions": [ready("True", "Succeeded", "stored v1")]}),
            ),
        ),
    ];
    let status = aggregate(template, &items).await;
    assert_eq!(
        status,
        json!({
            "observedGeneration": 2,
            "artifact": {"revision": "v2"},
            "url": "http://a/latest.tar.gz",
            "conditions": [
                ready("True", "Succeeded", "a=stored v1, c=stored v1"),
                ready("False", "AuthenticationFailed", "b=bad token"),
            ],
        })
    );

    // A member that has not observed its generation keeps the template's observedGeneration;
    // the url starts empty (not from the template), and no artifact leaves none.
    let mut template = template.clone();
    template["status"] = json!({"observedGeneration": 1, "url": "http://old"});
    let status = aggregate(&template, &[item("a", member(2, false, json!({})))]).await;
    assert_eq!(status, json!({"observedGeneration": 1, "url": ""}));
}

fn bucket() -> Value {
    source(
        "Bucket",
        json!({"bucketName": "manifests", "endpoint": "minio.example.com", "interval": "5m",
               "secretRef": {"name": "minio-credentials"}}),
    )
}

#[tokio::test]
async fn a_bucket_follows_its_members_artifact_and_credentials() {
    let bucket = bucket();
    healthy_when_ready_succeeded(&bucket).await;
    aggregates_artifact_url_and_conditions(&bucket).await;

    let mut observed = with_status(
        &bucket,
        json!({"artifact": {"revision": "sha256:1"}, "conditions": [ready("True", "Succeeded", "ok")],
               "observedGeneration": 1, "observedIgnore": "*.md", "url": "http://u",
               "lastHandledReconcileAt": "now"}),
    );
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "2"});
    let reflected = reflect(&observed).await;
    assert_eq!(
        reflected,
        json!({"artifact": {"revision": "sha256:1"}, "conditions": [ready("True", "Succeeded", "ok")],
               "observedGeneration": 1, "observedIgnore": "*.md", "url": "http://u",
               "generation": 2, "resourceTemplateGeneration": 2})
    );

    suspend_is_retained(&bucket).await;

    assert_eq!(
        dependencies(&bucket).await,
        refs("flux-system", &[("Secret", "minio-credentials")])
    );
    let anonymous = source(
        "Bucket",
        json!({"bucketName": "public", "secretRef": {"name": ""}}),
    );
    assert_eq!(dependencies(&anonymous).await, []);
}

fn helm_repository() -> Value {
    source(
        "HelmRepository",
        json!({"url": "https://charts.example.com", "interval": "10m",
               "secretRef": {"name": "chart-museum-auth"}}),
    )
}

#[tokio::test]
async fn a_helm_repository_follows_its_members_index_and_credentials() {
    let repository = helm_repository();
    healthy_when_ready_succeeded(&repository).await;
    aggregates_artifact_url_and_conditions(&repository).await;

    let observed = with_status(
        &repository,
        json!({"artifact": {"revision": "sha256:2"}, "conditions": [], "observedGeneration": 2,
               "observedIgnore": "not reflected for a HelmRepository", "url": "http://index.yaml"}),
    );
    let reflected = reflect(&observed).await;
    assert_eq!(reflected.get("observedIgnore"), None);
    assert_eq!(reflected["url"], "http://index.yaml");
    assert_eq!(reflected["observedGeneration"], 2);
    assert_eq!(reflected["generation"], 2);
    assert_eq!(reflected.get("resourceTemplateGeneration"), None);

    suspend_is_retained(&repository).await;

    assert_eq!(
        dependencies(&repository).await,
        refs("flux-system", &[("Secret", "chart-museum-auth")])
    );
    assert_eq!(
        dependencies(&source("HelmRepository", json!({"url": "oci://x"}))).await,
        []
    );
}

fn oci_repository() -> Value {
    source(
        "OCIRepository",
        json!({"url": "oci://ghcr.io/example/manifests", "ref": {"semver": "1.x"},
               "secretRef": {"name": "ghcr-pull"},
               "verify": {"provider": "cosign", "secretRef": {"name": "cosign-pub"}},
               "certSecretRef": {"name": "ghcr-pull"},
               "serviceAccountName": "oci-puller"}),
    )
}

#[tokio::test]
async fn an_oci_repository_follows_its_members_and_depends_on_its_secrets_and_account() {
    let repository = oci_repository();
    healthy_when_ready_succeeded(&repository).await;
    aggregates_artifact_url_and_conditions(&repository).await;

    let observed = with_status(
        &repository,
        json!({"artifact": {"revision": "1.2.0@sha256:3"}, "observedGeneration": 2,
               "observedIgnore": "docs/", "url": "http://u",
               "observedLayerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                         "operation": "copy"},
               "contentConfigChecksum": "not reflected"}),
    );
    let reflected = reflect(&observed).await;
    assert_eq!(
        reflected,
        json!({"artifact": {"revision": "1.2.0@sha256:3"}, "observedGeneration": 2,
               "observedIgnore": "docs/", "url": "http://u",
               "observedLayerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                                         "operation": "copy"},
               "generation": 2})
    );

    suspend_is_retained(&repository).await;

    assert_eq!(
        dependencies(&repository).await,
        refs(
            "flux-system",
            &[
                ("Secret", "cosign-pub"),
                ("Secret", "ghcr-pull"),
                ("ServiceAccount", "oci-puller")
            ]
        )
    );
    // Without serviceAccountName (Karmada's rule fails there) and with empty names: nothing.
    let public = source(
        "OCIRepository",
        json!({"url": "oci://ghcr.io/example/public", "certSecretRef": {"name": ""}}),
    );
    assert_eq!(dependencies(&public).await, []);
}

fn helm_chart() -> Value {
    source(
        "HelmChart",
        json!({"chart": "podinfo", "version": "6.x", "reconcileStrategy": "ChartVersion",
               "sourceRef": {"kind": "HelmRepository", "name": "podinfo"},
               "verify": {"provider": "cosign", "secretRef": {"name": "chart-signing"}}}),
    )
}

#[tokio::test]
async fn a_helm_chart_is_healthy_once_pulled_and_aggregates_the_chart_it_pulled() {
    let chart = helm_chart();
    healthy_when_ready_succeeded(&chart).await;
    assert!(
        health(&with_status(
            &chart,
            json!({"conditions": [ready("True", "ChartPullSucceeded", "pulled 'podinfo' chart with version '6.3.5'")]})
        ))
        .await
    );

    let pulled = |name: &str, revision: &str| {
        json!({"artifact": {"revision": "6.3.5"}, "observedChartName": name,
               "observedSourceArtifactRevision": revision, "url": "http://latest.tar.gz",
               "conditions": [ready("True", "ChartPullSucceeded", "pulled")]})
    };
    let items = [
        item("a", member(2, true, pulled("podinfo", "sha256:old"))),
        item("b", member(2, true, pulled("", "sha256:new"))),
    ];
    let status = aggregate(&chart, &items).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 2, "artifact": {"revision": "6.3.5"},
               "observedChartName": "podinfo", "observedSourceArtifactRevision": "sha256:new",
               "url": "http://latest.tar.gz",
               "conditions": [ready("True", "ChartPullSucceeded", "a=pulled, b=pulled")]})
    );
    let status = aggregate(&chart, &[item("a", json!({}))]).await;
    assert_eq!(
        status,
        json!({"observedGeneration": 0, "observedChartName": "",
               "observedSourceArtifactRevision": "", "url": ""})
    );
}

#[tokio::test]
async fn a_helm_charts_reflected_status_leaves_out_observed_generation_as_karmadas_does() {
    let chart = helm_chart();
    let mut observed = with_status(
        &chart,
        json!({"artifact": {"revision": "6.3.5"}, "conditions": [ready("True", "ChartPullSucceeded", "ok")],
               "observedChartName": "podinfo", "observedSourceArtifactRevision": "sha256:1",
               "observedGeneration": 2, "url": "http://u"}),
    );
    observed["metadata"]["annotations"] = json!({"resourcetemplate.karmada.io/generation": "2"});
    let reflected = reflect(&observed).await;
    assert_eq!(
        reflected,
        json!({"artifact": {"revision": "6.3.5"}, "conditions": [ready("True", "ChartPullSucceeded", "ok")],
               "observedChartName": "podinfo", "observedSourceArtifactRevision": "sha256:1",
               "url": "http://u", "generation": 2, "resourceTemplateGeneration": 2})
    );
    // So a member reporting what its reflection produces never counts as having observed its
    // generation, and the aggregated observedGeneration stays where it was.
    let status = aggregate(&chart, &[item("a", reflected)]).await;
    assert_eq!(status["observedGeneration"], 0);

    suspend_is_retained(&chart).await;

    assert_eq!(
        dependencies(&chart).await,
        refs("flux-system", &[("Secret", "chart-signing")])
    );
    assert_eq!(
        dependencies(&source("HelmChart", json!({"chart": "podinfo"}))).await,
        []
    );
}

fn policy(kind: &str) -> Value {
    let mut policy = json!({
        "apiVersion": "kyverno.io/v1",
        "kind": kind,
        "metadata": {"name": "require-team-label"},
        "spec": {"validationFailureAction": "Enforce", "rules": [{
            "name": "require-team-label",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "label `team` is required", "pattern": {"metadata": {"labels": {"team": "?*"}}}},
        }]},
    });
    if kind == "Policy" {
        policy["metadata"]["namespace"] = json!("payments");
    }
    policy
}

#[tokio::test]
async fn kyverno_policies_are_healthy_when_ready() {
    for kind in ["ClusterPolicy", "Policy"] {
        let policy = policy(kind);
        assert!(!health(&policy).await, "{kind}: no status");
        assert!(!health(&with_status(&policy, json!({}))).await, "{kind}");
        assert!(
            health(&with_status(&policy, json!({"ready": true}))).await,
            "{kind}"
        );
        assert!(
            !health(&with_status(
                &policy,
                json!({"ready": false, "conditions": [ready("True", "Succeeded", "")]})
            ))
            .await,
            "{kind}: ready wins over the conditions"
        );
        assert!(
            health(&with_status(
                &policy,
                json!({"conditions": [ready("True", "Succeeded", "")]})
            ))
            .await,
            "{kind}: the Ready condition without ready"
        );
        assert!(
            !health(&with_status(
                &policy,
                json!({"conditions": [ready("True", "Progressing", "")]})
            ))
            .await,
            "{kind}"
        );
    }
}

#[tokio::test]
async fn kyverno_policies_sum_rule_counts_and_merge_conditions() {
    for kind in ["ClusterPolicy", "Policy"] {
        let mut policy = policy(kind);
        policy["status"] =
            json!({"ready": false, "validatingAdmissionPolicy": {"generated": false}});
        let autogen = |name: &str| json!({"rules": [{"name": name, "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]}}]});
        let counts = |validate: i64, mutate: i64| json!({"validate": validate, "generate": 0, "mutate": mutate, "verifyimages": 0});
        let items = [
            item(
                "a",
                json!({"ready": true, "autogen": autogen("autogen-a"), "rulecount": counts(1, 0),
                       "conditions": [ready("True", "Succeeded", "")]}),
            ),
            item(
                "b",
                json!({"ready": false, "autogen": autogen("autogen-b"), "rulecount": counts(1, 2),
                       "conditions": [ready("False", "Failed", "webhook not ready")]}),
            ),
            item(
                "c",
                json!({"rulecount": {"validate": 1},
                       "conditions": [ready("True", "Succeeded", "")]}),
            ),
            item("d", json!({})),
        ];
        let status = aggregate(&policy, &items).await;
        assert_eq!(
            status,
            json!({
                "ready": false,
                "autogen": autogen("autogen-b"),
                "rulecount": counts(3, 2),
                "conditions": [
                    ready("True", "Succeeded", "a=, c="),
                    ready("False", "Failed", "b=webhook not ready"),
                ],
            }),
            "{kind}: the template's status is replaced"
        );

        // Members reporting nothing: counts of zero, no readiness of the template's.
        let status = aggregate(&policy, &[item("a", json!({}))]).await;
        assert_eq!(status.get("ready"), None, "{kind}");
        assert_eq!(status["rulecount"], counts(0, 0), "{kind}");
    }
}

#[tokio::test]
async fn kyverno_policies_reflect_readiness_and_rules_and_have_no_other_rules() {
    for kind in ["ClusterPolicy", "Policy"] {
        let policy = policy(kind);
        let status = json!({
            "ready": true,
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "",
                            "lastTransitionTime": "2026-12-07T10:00:00Z"}],
            "autogen": {"rules": [{"name": "autogen-require-team-label"}]},
            "rulecount": {"validate": 1, "generate": 0, "mutate": 0, "verifyimages": 0},
            "validatingadmissionpolicy": {"generated": false, "message": "not reflected"},
        });
        let mut expected = status.clone();
        expected
            .as_object_mut()
            .unwrap()
            .remove("validatingadmissionpolicy");
        assert_eq!(
            reflect(&with_status(&policy, status)).await,
            expected,
            "{kind}"
        );
        assert_eq!(
            reflect(&with_status(&policy, json!({"ready": false}))).await,
            json!({"ready": false}),
            "{kind}"
        );

        let customizations = Customizations::none();
        assert!(
            customizations.dependencies(&policy).await.is_none(),
            "{kind}"
        );
        assert!(
            customizations.interpret_replica(&policy).await.is_none(),
            "{kind}"
        );
    }
}

#[test]
fn every_kind_of_the_group_is_bundled() {
    let kinds = super::super::kinds();
    for (api_version, kind) in [
        ("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease"),
        (SOURCES, "Bucket"),
        (SOURCES, "HelmChart"),
        (SOURCES, "HelmRepository"),
        (SOURCES, "OCIRepository"),
        ("kyverno.io/v1", "ClusterPolicy"),
        ("kyverno.io/v1", "Policy"),
    ] {
        assert!(
            kinds.contains(&(api_version.to_owned(), kind.to_owned())),
            "{api_version} {kind}"
        );
    }
}
