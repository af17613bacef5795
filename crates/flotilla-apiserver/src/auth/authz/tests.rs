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
            r#"User "alice" cannot list resource "pods" in API group "" in the namespace "default""#,
        ),
        (
            RequestAttributes {
                group: "cluster.karmada.io",
                ..attrs(&alice, "get", "clusters")
            },
            r#"User "alice" cannot get resource "clusters" in API group "cluster.karmada.io" at the cluster scope"#,
        ),
        (
            RequestAttributes {
                group: "apps",
                subresource: "scale",
                namespace: Some("web"),
                name: Some("frontend"),
                ..attrs(&alice, "patch", "deployments")
            },
            r#"User "alice" cannot patch resource "deployments/scale" in API group "apps" in the namespace "web""#,
        ),
        (
            RequestAttributes {
                path: "/metrics",
                ..attrs(&alice, "get", "")
            },
            r#"User "alice" cannot get path "/metrics""#,
        ),
        (
            RequestAttributes {
                path: "/api/v1",
                ..attrs(&alice, "post", "")
            },
            r#"User "alice" cannot post path "/api/v1""#,
        ),
    ];
    for (request, message) in cases {
        let decision = authz.authorize(&request);
        assert_eq!(
            decision,
            Decision {
                allowed: false,
                reason: message.to_string()
            }
        );
    }
}

#[test]
fn user_names_are_quoted_like_go() {
    let odd = user("eve \"the\" \\ admin\n", &[]);
    let decision = Authorizer::new().authorize(&attrs(&odd, "list", "secrets"));
    assert_eq!(
        decision.reason,
        r#"User "eve \"the\" \\ admin\n" cannot list resource "secrets" in API group "" at the cluster scope"#
    );
}

#[test]
fn discovery_and_health_urls_are_open_to_authenticated_users() {
    let alice = user("alice", &["system:authenticated"]);
    let authz = Authorizer::new();
    for path in [
        "/version",
        "/api",
        "/api/v1",
        "/apis/apps/v1",
        "/openapi/v3",
        "/healthz",
        "/readyz",
    ] {
        let decision = authz.authorize(&RequestAttributes {
            path,
            ..attrs(&alice, "get", "")
        });
        assert!(decision.allowed, "{path}");
    }
    for path in ["/metrics", "/apiz", "/healthz/etcd", "/"] {
        let decision = authz.authorize(&RequestAttributes {
            path,
            ..attrs(&alice, "get", "")
        });
        assert!(!decision.allowed, "{path}");
    }
}
