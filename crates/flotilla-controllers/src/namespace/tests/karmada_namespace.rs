//! Karmada's `namespace_sync_controller_test.go` cases restated against Flotilla: which
//! namespaces are propagated, and the Works carrying them to each cluster with
//! ClusterOverridePolicies applied.

use flotilla_api::karmada::names::work_name;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {}})).expect("cluster")
}

#[test]
fn which_namespaces_are_synced() {
    // TestController_namespaceShouldBeSynced with Karmada's default skipped namespaces
    // (`kube-*`; Flotilla's are fixed to them, docs/propagation.md Known differences): its
    // "Reserved namespace" kube-system case (no skip list given) is false here. The
    // configurable skip list ("skip-.*") has no counterpart.
    for (name, want) in [
        ("kube-system", false),
        ("default", false),
        ("test-namespace", true),
    ] {
        assert_eq!(should_sync(&namespace(name, &[])), want, "{name}");
    }
}

#[test]
fn reconciled_namespaces_get_a_work_only_when_synced() {
    // TestController_Reconcile.
    let mut deleting = namespace("deleting-namespace", &[]);
    deleting.metadata.deletion_timestamp = Some(Time(Default::default()));
    deleting.metadata.finalizers = Some(vec!["some-finalizer".into()]);
    for (case, ns, want) in [
        ("synced", namespace("test-namespace", &[]), true),
        ("kube-system", namespace("kube-system", &[]), false),
        (
            "skip label",
            namespace("skip-namespace", &[(SKIP_AUTO_PROPAGATION_LABEL, "true")]),
            false,
        ),
        ("kube-public", namespace("kube-public", &[]), false),
        ("being deleted", deleting, false),
    ] {
        assert_eq!(should_sync(&ns), want, "{case}");
    }
    let work =
        namespace_work(&namespace("test-namespace", &[]), &cluster("cluster1"), &[]).expect("work");
    assert_eq!(
        work.metadata.namespace.as_deref(),
        Some("karmada-es-cluster1")
    );
    assert_eq!(
        work.metadata.name,
        Some(work_name("Namespace", "test-namespace", ""))
    );
}

#[test]
fn namespace_works_carry_cluster_override_policies_per_cluster() {
    // TestController_buildWorks: a ClusterOverridePolicy for Namespace test-namespace adds
    // the label overridden=true on cluster1 only.
    let mut ns = namespace("test-namespace", &[("overridden", "false")]);
    ns.metadata.uid = Some("ns-uid".into());
    let policy: ClusterOverridePolicy = serde_json::from_value(json!({
        "metadata": {"name": "test-override"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "v1", "kind": "Namespace",
                "name": "test-namespace"}],
            "overrideRules": [{
                "targetCluster": {"clusterNames": ["cluster1"]},
                "overriders": {"plaintext": [{"path": "/metadata/labels/overridden",
                    "operator": "add", "value": "true"}]}}]}}))
    .expect("policy");
    let policies = [Arc::new(policy)];
    for (with_override, want) in [
        (false, [("cluster1", "false"), ("cluster2", "false")]),
        (true, [("cluster1", "true"), ("cluster2", "false")]),
    ] {
        let policies: &[Arc<ClusterOverridePolicy>] = if with_override { &policies } else { &[] };
        for (name, label) in want {
            let work = namespace_work(&ns, &cluster(name), policies).expect("work");
            let owner = &work.metadata.owner_references.as_ref().expect("owner")[0];
            assert_eq!(
                (owner.kind.as_str(), owner.name.as_str(), owner.controller),
                ("Namespace", "test-namespace", Some(true))
            );
            let manifest = serde_json::to_value(&work.spec.workload.manifests[0]).unwrap();
            assert_eq!(manifest["kind"], "Namespace", "{name}");
            assert_eq!(
                manifest["metadata"]["labels"]["overridden"], label,
                "{name} with override: {with_override}"
            );
            // The applied policy is recorded on the Work where it applied.
            let recorded = work
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("policy.karmada.io/applied-cluster-overrides"));
            assert_eq!(recorded.is_some(), label == "true", "{name}");
        }
    }
}
