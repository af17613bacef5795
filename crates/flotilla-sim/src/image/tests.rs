use super::*;

#[test]
fn the_default_refuses_karmadas_fake_images_and_invalid_registries_only() {
    let rules = UnpullableImages::default();
    for image in [
        "fake/nginx:1.19.0",
        "fake/busybox",
        "fake/nginx@sha256:0123",
        "docker.io/fake/nginx:1.19.0",
        "fake",
    ] {
        assert_eq!(rules.refusal(image), Some(Refusal::Repository), "{image}");
    }
    for image in [
        "registry.invalid/app:1",
        "registry.invalid:5000/app",
        "a.b.INVALID/team/app",
    ] {
        assert_eq!(rules.refusal(image), Some(Refusal::Registry), "{image}");
    }
    for image in [
        "nginx",
        "nginx:1.19.0",
        "library/nginx",
        "docker.io/library/nginx:1.26",
        "registry.k8s.io/pause:3.10",
        "fakeregistry/nginx",
        "myfake/nginx",
        "ghcr.io/org/fake",
        "localhost:5000/app",
        "invalid/app",
        "registry.invalid.example.com/app",
        "",
    ] {
        assert_eq!(rules.refusal(image), None, "{image}");
    }
}

#[test]
fn rules_are_configurable_and_empty_rules_refuse_nothing() {
    let rules = UnpullableImages {
        repositories: vec!["broken".into()],
        registries: vec!["registry.example.com".into()],
    };
    assert_eq!(rules.refusal("broken/app"), Some(Refusal::Repository));
    assert_eq!(
        rules.refusal("registry.example.com/app"),
        Some(Refusal::Registry)
    );
    assert_eq!(rules.refusal("other.registry.example.com/app"), None);
    assert_eq!(rules.refusal("fake/nginx:1.19.0"), None);
    let none = UnpullableImages {
        repositories: vec![],
        registries: vec![],
    };
    assert!(none.is_empty());
    assert_eq!(none.refusal("fake/nginx:1.19.0"), None);
    assert_eq!(none.refusal("registry.invalid/app:1"), None);
}

#[test]
fn bad_rules_name_the_entry() {
    let bad = |repositories: &[&str], registries: &[&str]| {
        UnpullableImages {
            repositories: repositories.iter().map(|s| s.to_string()).collect(),
            registries: registries.iter().map(|s| s.to_string()).collect(),
        }
        .validate()
        .expect_err("invalid")
        .0
    };
    assert_eq!(bad(&["fake", ""], &[]), "repositories[1]");
    assert_eq!(bad(&["fake/nginx"], &[]), "repositories[0]");
    assert_eq!(bad(&[], &["."]), "registries[0]");
    assert_eq!(bad(&[], &["host:5000"]), "registries[0]");
    assert!(UnpullableImages::default().validate().is_ok());
}

#[test]
fn references_are_qualified_as_containerd_resolves_them() {
    assert_eq!(
        qualified("fake/nginx:1.19.0"),
        "docker.io/fake/nginx:1.19.0"
    );
    assert_eq!(qualified("fake/busybox"), "docker.io/fake/busybox:latest");
    assert_eq!(qualified("nginx"), "docker.io/library/nginx:latest");
    assert_eq!(
        qualified("registry.invalid:5000/app"),
        "registry.invalid:5000/app:latest"
    );
    assert_eq!(
        qualified("fake/app@sha256:ab"),
        "docker.io/fake/app@sha256:ab"
    );
}

#[test]
fn messages_are_the_runtimes_and_kubelets() {
    assert_eq!(
        pull_error("fake/nginx:1.19.0", Refusal::Repository),
        "rpc error: code = Unknown desc = failed to pull and unpack image \
         \"docker.io/fake/nginx:1.19.0\": failed to resolve reference \
         \"docker.io/fake/nginx:1.19.0\": pull access denied, repository does not exist or may \
         require authorization: server message: insufficient_scope: authorization failed"
    );
    assert_eq!(
        pull_error("registry.invalid/app:1", Refusal::Registry),
        "rpc error: code = Unknown desc = failed to pull and unpack image \
         \"registry.invalid/app:1\": failed to resolve reference \"registry.invalid/app:1\": \
         failed to do request: Head \"https://registry.invalid/v2/app/manifests/1\": dial tcp: \
         lookup registry.invalid: no such host"
    );
    assert_eq!(
        back_off_message("fake/nginx:1.19.0"),
        "Back-off pulling image \"fake/nginx:1.19.0\""
    );
}
