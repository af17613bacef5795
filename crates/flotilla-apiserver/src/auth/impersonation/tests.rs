use http::{HeaderMap, HeaderValue};

use super::*;

fn master() -> UserInfo {
    UserInfo {
        name: "admin".into(),
        groups: vec!["system:masters".into(), AUTHENTICATED_GROUP.into()],
        ..UserInfo::default()
    }
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(*name, HeaderValue::from_static(value));
    }
    map
}

#[test]
fn without_headers_the_caller_stays() {
    let user = impersonate(&Authorizer::new(), master(), &HeaderMap::new(), "/api").expect("ok");
    assert_eq!(user, master());
    assert!(!requested(&HeaderMap::new()));
}

#[test]
fn a_user_with_groups_extras_and_uid() {
    let h = headers(&[
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "developers"),
        ("Impersonate-Group", "gpu-users"),
        ("Impersonate-Extra-Acme.com%2Fproject", "llm"),
        ("Impersonate-Uid", "1234"),
    ]);
    assert!(requested(&h));
    let user = impersonate(&Authorizer::new(), master(), &h, "/api").expect("allowed");
    assert_eq!(user.name, "jane");
    assert_eq!(user.uid.as_deref(), Some("1234"));
    assert_eq!(
        user.groups,
        ["developers", "gpu-users", AUTHENTICATED_GROUP]
    );
    assert_eq!(user.extra["acme.com/project"], ["llm"]);
}

#[test]
fn a_service_account_gets_its_groups() {
    let h = headers(&[(
        "Impersonate-User",
        "system:serviceaccount:karmada-cluster:karmada-impersonator",
    )]);
    let user = impersonate(&Authorizer::new(), master(), &h, "/api").expect("allowed");
    assert_eq!(
        user.name,
        "system:serviceaccount:karmada-cluster:karmada-impersonator"
    );
    assert_eq!(
        user.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:karmada-cluster",
            AUTHENTICATED_GROUP
        ]
    );
}

#[test]
fn anonymous_is_unauthenticated() {
    let h = headers(&[("Impersonate-User", "system:anonymous")]);
    let user = impersonate(&Authorizer::new(), master(), &h, "/api").expect("allowed");
    assert_eq!(user.groups, ["system:unauthenticated"]);
}

#[test]
fn groups_without_a_user_are_refused() {
    let h = headers(&[("Impersonate-Group", "developers")]);
    let error = impersonate(&Authorizer::new(), master(), &h, "/api").expect_err("refused");
    assert_eq!(error.code, 500);
    assert_eq!(
        error.message,
        "requested [{Group  developers    }] without impersonating a user"
    );
}

#[test]
fn a_caller_without_the_impersonate_verb_is_forbidden() {
    let alice = UserInfo {
        name: "alice".into(),
        groups: vec![AUTHENTICATED_GROUP.into()],
        ..UserInfo::default()
    };
    let h = headers(&[("Impersonate-User", "jane")]);
    let error = impersonate(&Authorizer::new(), alice, &h, "/api/v1/pods").expect_err("denied");
    assert_eq!(error.code, 403);
    assert_eq!(
        error.message,
        "users \"jane\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
}
