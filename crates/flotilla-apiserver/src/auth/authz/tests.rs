use super::*;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..UserInfo::default()
    }
}

fn attrs<'a>(user: &'a UserInfo, verb: &'a str, resource: &'a str) -> RequestAttributes<'a> {
    RequestAttributes {
        user,
        verb,
        group: "",
        resource,
        subresource: "",
        namespace: None,
        name: None,
        path: "",
    }
}

#[test]
fn masters_may_do_everything() {
    let admin = user("flotilla-admin", &[MASTERS_GROUP, "system:authenticated"]);
    let decision = Authorizer::new().authorize(&RequestAttributes {
        group: "apps",
        namespace: Some("kube-system"),
        name: Some("x"),
        ..attrs(&admin, "delete", "deployments")
    });
    assert!(decision.allowed, "{}", decision.reason);
}

#[test]
fn others_are_forbidden_in_kubernetes_words() {
    let alice = user("alice", &["system:authenticated"]);
    let authz = Authorizer::new();
    let cases = [
        (
            RequestAttributes {
                namespace: Some("default"),
                ..attrs(&alice, "list", "pods")
            },
            r#"pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default""#,
        ),
        (
            RequestAttributes {
                group: "cluster.karmada.io",
                name: Some("member1"),
                ..attrs(&alice, "get", "clusters")
            },
            r#"clusters.cluster.karmada.io "member1" is forbidden: User "alice" cannot get resource "clusters" in API group "cluster.karmada.io" at the cluster scope"#,
        ),
        (
            RequestAttributes {
                group: "apps",
                subresource: "scale",
                namespace: Some("web"),
                name: Some("frontend"),
                ..attrs(&alice, "patch", "deployments")
            },
            r#"deployments.apps "frontend" is forbidden: User "alice" cannot patch resource "deployments/scale" in API group "apps" in the namespace "web""#,
        ),
        (
            RequestAttributes {
                name: Some("kube-system"),
                ..attrs(&alice, "get", "namespaces")
            },
            r#"namespaces "kube-system" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "kube-system""#,
        ),
        (
            RequestAttributes {
                path: "/metrics",
                ..attrs(&alice, "get", "")
            },
            r#"forbidden: User "alice" cannot get path "/metrics""#,
        ),
    ];
    for (request, message) in cases {
        let decision = authz.authorize(&request);
        assert!(!decision.allowed);
        let error = forbidden_error(&request, &decision);
        assert_eq!(error.code, 403);
        assert_eq!(error.reason, "Forbidden");
        assert_eq!(error.message, message);
    }
}

#[test]
fn the_rbac_reason_is_appended_to_the_message() {
    let alice = user("alice", &[]);
    let request = RequestAttributes {
        namespace: Some("default"),
        name: Some("p"),
        ..attrs(&alice, "get", "pods")
    };
    let decision = Decision {
        allowed: false,
        reason: r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#.into(),
    };
    assert_eq!(
        forbidden_error(&request, &decision).message,
        r#"pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "default": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#
    );
}

#[test]
fn user_names_are_quoted_like_go() {
    let odd = user("eve \"the\" \\ admin\n", &[]);
    let request = attrs(&odd, "list", "secrets");
    let decision = Authorizer::new().authorize(&request);
    assert_eq!(
        forbidden_error(&request, &decision).message,
        r#"secrets is forbidden: User "eve \"the\" \\ admin\n" cannot list resource "secrets" in API group "" at the cluster scope"#
    );
}
