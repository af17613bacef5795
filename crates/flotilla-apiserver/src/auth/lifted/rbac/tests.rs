use super::*;

fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    PolicyRule {
        verbs: owned(verbs),
        api_groups: owned(groups),
        resources: owned(resources),
        resource_names: owned(names),
        non_resource_urls: Vec::new(),
    }
}

fn url_rule(verbs: &[&str], urls: &[&str]) -> PolicyRule {
    PolicyRule {
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        non_resource_urls: urls.iter().map(|s| s.to_string()).collect(),
        ..PolicyRule::default()
    }
}

fn res<'a>(
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    sub: &'a str,
    name: &'a str,
) -> Request<'a> {
    Request::Resource {
        verb,
        group,
        resource,
        subresource: sub,
        name,
    }
}

#[test]
fn verbs_groups_and_resources_must_all_match() {
    let r = rule(&["get", "list"], &[""], &["pods"], &[]);
    assert!(rule_allows(&r, &res("get", "", "pods", "", "web")));
    assert!(rule_allows(&r, &res("list", "", "pods", "", "")));
    assert!(!rule_allows(&r, &res("delete", "", "pods", "", "web")));
    assert!(!rule_allows(&r, &res("get", "apps", "pods", "", "web")));
    assert!(!rule_allows(&r, &res("get", "", "secrets", "", "web")));
}

#[test]
fn stars_match_every_verb_group_and_resource() {
    let r = rule(&["*"], &["*"], &["*"], &[]);
    assert!(rule_allows(
        &r,
        &res("deletecollection", "apps", "deployments", "", "")
    ));
    assert!(rule_allows(&r, &res("update", "", "pods", "status", "p")));
}

#[test]
fn subresources_are_matched_as_resource_slash_subresource() {
    let status = rule(&["get"], &[""], &["pods/status"], &[]);
    assert!(rule_allows(&status, &res("get", "", "pods", "status", "p")));
    assert!(!rule_allows(&status, &res("get", "", "pods", "", "p")));
    // The main resource does not grant its subresources.
    let pods = rule(&["get"], &[""], &["pods"], &[]);
    assert!(!rule_allows(&pods, &res("get", "", "pods", "status", "p")));
    // `*/scale` grants the scale subresource of everything, and nothing else.
    let scale = rule(&["patch"], &["apps"], &["*/scale"], &[]);
    assert!(rule_allows(
        &scale,
        &res("patch", "apps", "deployments", "scale", "d")
    ));
    assert!(rule_allows(
        &scale,
        &res("patch", "apps", "statefulsets", "scale", "d")
    ));
    assert!(!rule_allows(
        &scale,
        &res("patch", "apps", "deployments", "status", "d")
    ));
    assert!(!rule_allows(
        &scale,
        &res("patch", "apps", "deployments", "", "d")
    ));
    // `*/*` is not a wildcard for the main resource either.
    let any_sub = rule(&["get"], &[""], &["*/*"], &[]);
    assert!(!rule_allows(&any_sub, &res("get", "", "pods", "", "p")));
}

#[test]
fn resource_names_restrict_to_named_objects() {
    let r = rule(
        &["get", "list", "create"],
        &[""],
        &["configmaps"],
        &["settings"],
    );
    assert!(rule_allows(
        &r,
        &res("get", "", "configmaps", "", "settings")
    ));
    assert!(!rule_allows(&r, &res("get", "", "configmaps", "", "other")));
    // A list or create names nothing, so a rule with names does not allow it.
    assert!(!rule_allows(&r, &res("list", "", "configmaps", "", "")));
    assert!(!rule_allows(&r, &res("create", "", "configmaps", "", "")));
}

#[test]
fn non_resource_urls_match_exactly_or_by_trailing_star() {
    let r = url_rule(&["get"], &["/healthz", "/apis/*"]);
    let get = |path| Request::NonResource { verb: "get", path };
    assert!(rule_allows(&r, &get("/healthz")));
    assert!(!rule_allows(&r, &get("/healthz/etcd")));
    assert!(rule_allows(&r, &get("/apis/apps/v1")));
    assert!(!rule_allows(&r, &get("/apis")));
    assert!(!rule_allows(
        &r,
        &Request::NonResource {
            verb: "post",
            path: "/healthz"
        }
    ));
    assert!(rule_allows(&url_rule(&["*"], &["*"]), &get("/metrics")));
    // Resource rules never allow non-resource requests, nor the other way round.
    assert!(!rule_allows(
        &rule(&["*"], &["*"], &["*"], &[]),
        &get("/metrics")
    ));
    assert!(!rule_allows(
        &url_rule(&["*"], &["*"]),
        &res("get", "", "pods", "", "")
    ));
}

#[test]
fn subjects_match_users_groups_and_service_accounts() {
    let sa = UserInfo {
        name: "system:serviceaccount:karmada-cluster:karmada-member1".into(),
        groups: vec!["system:serviceaccounts".into()],
        ..UserInfo::default()
    };
    let subject = |kind: &str, name: &str, ns: &str| Subject {
        kind: kind.into(),
        name: name.into(),
        namespace: ns.into(),
    };
    assert!(applies_to(
        &sa,
        &subject("ServiceAccount", "karmada-member1", "karmada-cluster"),
        ""
    ));
    // A namespace-less ServiceAccount subject takes the RoleBinding's namespace...
    assert!(applies_to(
        &sa,
        &subject("ServiceAccount", "karmada-member1", ""),
        "karmada-cluster"
    ));
    assert!(!applies_to(
        &sa,
        &subject("ServiceAccount", "karmada-member1", ""),
        "default"
    ));
    // ...and matches nothing in a ClusterRoleBinding.
    assert!(!applies_to(
        &sa,
        &subject("ServiceAccount", "karmada-member1", ""),
        ""
    ));
    assert!(applies_to(
        &sa,
        &subject("Group", "system:serviceaccounts", ""),
        ""
    ));
    assert!(applies_to(
        &sa,
        &subject(
            "User",
            "system:serviceaccount:karmada-cluster:karmada-member1",
            ""
        ),
        ""
    ));
    assert!(!applies_to(
        &sa,
        &subject("User", "karmada-member1", ""),
        ""
    ));
    assert!(!applies_to(
        &sa,
        &subject("Robot", "karmada-member1", ""),
        ""
    ));
}

#[test]
fn rules_deserialize_from_kubernetes_json_with_nulls() {
    let r: PolicyRule = serde_json::from_value(serde_json::json!({
        "verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": null,
        "nonResourceURLs": ["/x"]
    }))
    .expect("rule");
    assert_eq!(r.non_resource_urls, vec!["/x".to_string()]);
    assert!(r.resource_names.is_empty());
}

#[test]
fn merged_rules_keep_order_and_drop_duplicates() {
    let a = rule(&["get"], &[""], &["pods"], &[]);
    let b = rule(&["list"], &[""], &["pods"], &[]);
    let mut merged = vec![a.clone()];
    merge_rules(&mut merged, &[b.clone(), a.clone(), b.clone()]);
    assert_eq!(merged, vec![a, b]);
}
