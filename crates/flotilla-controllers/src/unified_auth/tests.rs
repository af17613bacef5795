use serde_json::json;

use super::*;

fn role(name: &str, rules: serde_json::Value) -> ClusterRole {
    serde_json::from_value(json!({"metadata": {"name": name}, "rules": rules})).expect("a role")
}

fn binding(name: &str, role: &str, subjects: serde_json::Value) -> ClusterRoleBinding {
    serde_json::from_value(json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects}))
    .expect("a binding")
}

#[test]
fn subjects_are_those_bound_to_roles_granting_the_clusters_proxy() {
    let roles = [
        // Karmada's e2e: tom may proxy to member1 and the new cluster only.
        role(
            "tom",
            json!([{"apiGroups": ["cluster.karmada.io"], "verbs": ["*"],
                "resources": ["clusters/proxy"], "resourceNames": ["member1", "new"]}]),
        ),
        role(
            "admin",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
        ),
        role(
            "searcher",
            json!([{"apiGroups": ["search.karmada.io"], "resources": ["proxying/proxy"], "verbs": ["get"]}]),
        ),
        role(
            "reader",
            json!([{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["get"]}]),
        ),
    ];
    let bindings = [
        binding(
            "tom",
            "tom",
            json!([{"kind": "ServiceAccount", "name": "tom", "namespace": "karmadatest"},
                {"kind": "Group", "name": "system:serviceaccounts"},
                {"kind": "Group", "name": "system:serviceaccounts:karmadatest"}]),
        ),
        binding(
            "admins",
            "admin",
            json!([{"kind": "Group", "name": "system:masters"}]),
        ),
        binding(
            "search",
            "searcher",
            json!([{"kind": "User", "name": "sam"}]),
        ),
        binding(
            "readers",
            "reader",
            json!([{"kind": "User", "name": "rita"}]),
        ),
    ];
    let names = |cluster: &str| -> Vec<String> {
        proxy_subjects(cluster, &roles, &bindings)
            .into_iter()
            .map(|s| format!("{}:{}", s.kind, s.name))
            .collect()
    };
    assert_eq!(
        names("member1"),
        [
            "ServiceAccount:tom",
            "Group:system:serviceaccounts",
            "Group:system:serviceaccounts:karmadatest",
            "Group:system:masters",
            "User:sam"
        ]
    );
    assert_eq!(names("member2"), ["Group:system:masters", "User:sam"]);

    let rules = impersonation_rules(&proxy_subjects("member1", &roles, &bindings));
    assert_eq!(
        serde_json::to_value(&rules).expect("encode"),
        json!([
            {"apiGroups": [""], "resources": ["users"], "resourceNames": ["sam"], "verbs": ["impersonate"]},
            {"apiGroups": [""], "resources": ["serviceaccounts"], "resourceNames": ["tom"], "verbs": ["impersonate"]},
            {"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"],
                "resourceNames": ["system:masters", "system:serviceaccounts", "system:serviceaccounts:karmadatest"]},
        ])
    );
    assert!(impersonation_rules(&[]).is_empty());
}

#[test]
fn works_carry_the_impersonators_role_and_binding_to_clusters_with_an_impersonator() {
    let cluster: Cluster = serde_json::from_value(json!({
        "metadata": {"name": "member1", "uid": "u1"},
        "spec": {"impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "member1-impersonator"}},
    }))
    .expect("a cluster");
    let rules = impersonation_rules(&[Subject {
        kind: "User".into(),
        name: "sam".into(),
        ..Subject::default()
    }]);
    let [role, binding] = impersonation_works(&cluster, &rules).expect("works");
    assert_eq!(
        role.metadata.namespace.as_deref(),
        Some("karmada-es-member1")
    );
    assert_eq!(
        role.metadata.name.as_deref(),
        Some(work_name("ClusterRole", IMPERSONATOR, "").as_str())
    );
    let manifest = serde_json::to_value(&binding.spec.workload.manifests[0]).expect("manifest");
    assert_eq!(
        manifest["subjects"],
        json!([{"kind": "ServiceAccount", "namespace": "karmada-cluster", "name": "karmada-impersonator"}])
    );
    assert_eq!(manifest["roleRef"]["name"], "karmada-impersonator");
    let manifest = serde_json::to_value(&role.spec.workload.manifests[0]).expect("manifest");
    assert_eq!(manifest["rules"][0]["resourceNames"], json!(["sam"]));
    assert_eq!(manifest["metadata"]["labels"]["karmada.io/system"], "true");
    assert_eq!(manifest["metadata"]["labels"]["karmada.io/managed"], "true");
    // No impersonator, nothing to sync.
    let plain: Cluster =
        serde_json::from_value(json!({"metadata": {"name": "member2"}})).expect("a cluster");
    assert!(impersonation_works(&plain, &rules).is_none());
}
