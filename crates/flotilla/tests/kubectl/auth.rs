//! Service accounts and RBAC with the real kubectl: `create token`, a kubeconfig holding a
//! service-account token, `auth can-i`, `auth whoami`, and kube's Forbidden message.

use std::time::{Duration, Instant};

use crate::harness::*;

/// A kubeconfig that talks to `flotilla` with `token` instead of the admin certificate.
fn token_kubeconfig(flotilla: &Flotilla, version: &str, name: &str, token: &str) -> String {
    let ca = flotilla.ok(
        version,
        &[
            "config",
            "view",
            "--raw",
            "-o",
            "jsonpath={.clusters[0].cluster.certificate-authority-data}",
        ],
    );
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: flotilla\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\ncontexts:\n- name: {name}\n  context:\n    cluster: flotilla\n    user: {name}\n    namespace: default\ncurrent-context: {name}\nusers:\n- name: {name}\n  user:\n    token: {token}\n",
        flotilla.url
    );
    flotilla.file(&format!("{name}.kubeconfig"), &config)
}

/// Runs kubectl with another kubeconfig; returns (success, stdout, stderr).
fn as_user(
    flotilla: &Flotilla,
    version: &str,
    kubeconfig: &str,
    args: &[&str],
) -> (bool, String, String) {
    let output = flotilla.kubectl_with(version, args, &[("KUBECONFIG", kubeconfig)], None);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_service_account_token_is_authorized_by_rbac() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let sa = format!("bot-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "serviceaccount", &sa, "-n", "default"]);
        let token = flotilla.ok(
            version,
            &["create", "token", &sa, "-n", "default", "--duration", "10m"],
        );
        let kubeconfig = token_kubeconfig(&flotilla, version, &sa, token.trim());
        let user = format!("system:serviceaccount:default:{sa}");

        let (ok, out, _) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &["auth", "can-i", "list", "pods"],
        );
        assert!(!ok, "kubectl.{version}: can-i should say no");
        assert_eq!(out.trim(), "no", "kubectl.{version}");
        let (ok, _, err) = as_user(&flotilla, version, &kubeconfig, &["get", "pods"]);
        assert!(!ok);
        assert!(
            err.contains(&format!(
                r#"Error from server (Forbidden): pods is forbidden: User "{user}" cannot list resource "pods" in API group "" in the namespace "default""#
            )),
            "kubectl.{version}: {err}"
        );

        flotilla.ok(
            version,
            &[
                "create",
                "rolebinding",
                &sa,
                "--clusterrole=view",
                &format!("--serviceaccount=default:{sa}"),
                "-n",
                "default",
            ],
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (ok, out, _) = as_user(
                &flotilla,
                version,
                &kubeconfig,
                &["auth", "can-i", "list", "pods"],
            );
            if ok && out.trim() == "yes" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "kubectl.{version}: the binding never took effect"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let (ok, _, err) = as_user(&flotilla, version, &kubeconfig, &["get", "pods"]);
        assert!(ok, "kubectl.{version}: {err}");
        let (ok, out, _) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &["auth", "can-i", "list", "pods", "-n", "kube-system"],
        );
        assert!(!ok && out.trim() == "no", "kubectl.{version}: {out}");
        let (ok, out, _) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &["auth", "can-i", "get", "secrets"],
        );
        assert!(!ok && out.trim() == "no", "kubectl.{version}: {out}");

        let (ok, out, err) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
        );
        assert!(ok, "kubectl.{version}: {err}");
        assert_eq!(out, user, "kubectl.{version}");

        let (ok, out, err) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &["auth", "can-i", "--list"],
        );
        assert!(ok, "kubectl.{version}: {err}");
        let pods = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some("pods"))
            .unwrap_or_else(|| panic!("kubectl.{version}: no pods row in\n{out}"));
        assert!(
            pods.ends_with("[get list watch]"),
            "kubectl.{version}: {pods}"
        );
    }
}

#[test]
fn a_token_secret_gets_a_working_token() {
    let flotilla = Flotilla::start();
    let version = VERSIONS[VERSIONS.len() - 1];
    let manifest = flotilla.file(
        "token.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: joiner\n  namespace: default\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: joiner-token\n  namespace: default\n  annotations:\n    kubernetes.io/service-account.name: joiner\ntype: kubernetes.io/service-account-token\n",
    );
    flotilla.ok(version, &["apply", "-f", &manifest]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let token = loop {
        let token = flotilla.ok(
            version,
            &[
                "get",
                "secret",
                "joiner-token",
                "-o",
                "go-template={{if .data.token}}{{.data.token | base64decode}}{{end}}",
            ],
        );
        if !token.is_empty() {
            break token;
        }
        assert!(Instant::now() < deadline, "the token was never filled in");
        std::thread::sleep(Duration::from_millis(100));
    };
    let kubeconfig = token_kubeconfig(&flotilla, version, "joiner", &token);
    let (ok, out, err) = as_user(
        &flotilla,
        version,
        &kubeconfig,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, "system:serviceaccount:default:joiner");
    flotilla.ok(version, &["delete", "serviceaccount", "joiner"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (ok, _, err) = as_user(&flotilla, version, &kubeconfig, &["auth", "whoami"]);
        if !ok {
            assert!(err.contains("Unauthorized"), "{err}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the token still works after its service account was deleted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn service_account_tokens_survive_a_restart() {
    let version = VERSIONS[VERSIONS.len() - 1];
    let flotilla = Flotilla::start_with(tempfile::tempdir().expect("dir"), "redb");
    let manifest = flotilla.file(
        "token.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: keeper\n  namespace: default\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: keeper-token\n  namespace: default\n  annotations:\n    kubernetes.io/service-account.name: keeper\ntype: kubernetes.io/service-account-token\n",
    );
    flotilla.ok(version, &["apply", "-f", &manifest]);
    let bound = flotilla.ok(version, &["create", "token", "keeper", "--duration", "1h"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let legacy = loop {
        let token = flotilla.ok(
            version,
            &[
                "get",
                "secret",
                "keeper-token",
                "-o",
                "go-template={{if .data.token}}{{.data.token | base64decode}}{{end}}",
            ],
        );
        if !token.is_empty() {
            break token;
        }
        assert!(Instant::now() < deadline, "the token was never filled in");
        std::thread::sleep(Duration::from_millis(100));
    };
    let dir = flotilla.stop("TERM");
    let again = Flotilla::start_with(dir, "redb");
    for (name, token) in [("bound", bound.trim()), ("legacy", legacy.as_str())] {
        let kubeconfig = token_kubeconfig(&again, version, name, token);
        let (ok, out, err) = as_user(
            &again,
            version,
            &kubeconfig,
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
        );
        assert!(ok, "{name} token after restart: {err}");
        assert_eq!(out, "system:serviceaccount:default:keeper");
    }
}

#[test]
fn impersonation_acts_as_the_requested_user_once_allowed() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        // The admin (system:masters) may impersonate anyone.
        let out = flotilla.ok(
            version,
            &[
                "auth",
                "whoami",
                "--as",
                "jane",
                "--as-group",
                "gpu-users",
                "-o",
                "jsonpath={.status.userInfo.username} {.status.userInfo.groups}",
            ],
        );
        assert_eq!(
            out, r#"jane ["gpu-users","system:authenticated"]"#,
            "kubectl.{version}"
        );
        // Jane herself may not list pods: RBAC judges the impersonated user.
        let err = flotilla.fails(version, &["get", "pods", "--as", "jane"]);
        assert!(
            err.contains(r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default""#),
            "kubectl.{version}: {err}"
        );
    }
    // A service account without the impersonate verb is refused with kube's message.
    let version = VERSIONS[VERSIONS.len() - 1];
    flotilla.ok(
        version,
        &["create", "serviceaccount", "mallory", "-n", "default"],
    );
    let token = flotilla.ok(version, &["create", "token", "mallory", "-n", "default"]);
    let kubeconfig = token_kubeconfig(&flotilla, version, "mallory", token.trim());
    let (ok, _, err) = as_user(
        &flotilla,
        version,
        &kubeconfig,
        &["get", "pods", "--as", "system:admin"],
    );
    assert!(!ok);
    assert!(
        err.contains(r#"users "system:admin" is forbidden: User "system:serviceaccount:default:mallory" cannot impersonate resource "users" in API group "" at the cluster scope"#),
        "{err}"
    );
}

#[test]
fn review_resources_are_discoverable_and_create_only() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let listed = flotilla.ok(
            version,
            &[
                "api-resources",
                "--api-group=authorization.k8s.io",
                "-o",
                "wide",
            ],
        );
        for (name, kind, namespaced) in [
            (
                "localsubjectaccessreviews",
                "LocalSubjectAccessReview",
                "true",
            ),
            (
                "selfsubjectaccessreviews",
                "SelfSubjectAccessReview",
                "false",
            ),
            ("selfsubjectrulesreviews", "SelfSubjectRulesReview", "false"),
            ("subjectaccessreviews", "SubjectAccessReview", "false"),
        ] {
            let line = listed
                .lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("kubectl.{version}: {name} missing: {listed}"));
            let columns: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                columns[..5],
                [name, "authorization.k8s.io/v1", namespaced, kind, "create"],
                "kubectl.{version}: {line}"
            );
        }
        let listed = flotilla.ok(
            version,
            &["api-resources", "--api-group=authentication.k8s.io"],
        );
        for name in ["selfsubjectreviews", "tokenreviews"] {
            assert!(
                listed.lines().any(|l| l.starts_with(name)),
                "kubectl.{version}: {name} missing: {listed}"
            );
        }
        // can-i resolves the resource through discovery: no "doesn't have a resource type".
        let output = flotilla.kubectl(
            version,
            &["auth", "can-i", "create", "subjectaccessreviews"],
        );
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "kubectl.{version}: {err}");
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "yes");
        assert!(!err.contains("resource type"), "kubectl.{version}: {err}");
        let output = flotilla.kubectl(
            version,
            &["auth", "can-i", "create", "tokenreviews", "--as", "jane"],
        );
        assert!(!output.status.success());
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "no");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("resource type"), "kubectl.{version}: {err}");
    }
}

/// Escalation prevention through impersonation: jane may write Roles and RoleBindings in
/// `default` but only grant or bind what she holds herself.
#[test]
fn roles_and_bindings_cannot_escalate_privileges() {
    let flotilla = Flotilla::start();
    let admin = VERSIONS[VERSIONS.len() - 1];
    flotilla.ok(
        admin,
        &[
            "create",
            "role",
            "rbac-writer",
            "--verb=create,get,update,patch",
            "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,configmaps",
        ],
    );
    flotilla.ok(
        admin,
        &[
            "create",
            "rolebinding",
            "jane-writes",
            "--role=rbac-writer",
            "--user=jane",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while flotilla
        .ok(admin, &["auth", "can-i", "create", "roles", "--as", "jane"])
        .trim()
        != "yes"
    {
        assert!(Instant::now() < deadline, "the binding never took effect");
        std::thread::sleep(Duration::from_millis(100));
    }
    for version in VERSIONS {
        let suffix = version.replace('.', "-");
        let err = flotilla.fails(
            version,
            &[
                "create",
                "role",
                &format!("secret-reader-{suffix}"),
                "--verb=get,list",
                "--resource=secrets",
                "--as",
                "jane",
            ],
        );
        assert!(
            err.contains(&format!(
                "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"secret-reader-{suffix}\" is forbidden: user \"jane\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}}"
            )),
            "kubectl.{version}: {err}"
        );
        let ok = flotilla.ok(
            version,
            &[
                "create",
                "role",
                &format!("cm-reader-{suffix}"),
                "--verb=get",
                "--resource=configmaps",
                "--as",
                "jane",
            ],
        );
        assert!(ok.contains("created"), "kubectl.{version}: {ok}");
        flotilla.ok(
            version,
            &[
                "create",
                "rolebinding",
                &format!("bob-reads-{suffix}"),
                &format!("--role=cm-reader-{suffix}"),
                "--user=bob",
                "--as",
                "jane",
            ],
        );
        let err = flotilla.fails(
            version,
            &[
                "create",
                "rolebinding",
                &format!("bob-admin-{suffix}"),
                "--clusterrole=admin",
                "--user=bob",
                "--as",
                "jane",
            ],
        );
        assert!(
            err.contains(&format!(
                "rolebindings.rbac.authorization.k8s.io \"bob-admin-{suffix}\" is forbidden: user \"jane\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:"
            )),
            "kubectl.{version}: {err}"
        );
    }
    // With `bind` on the admin ClusterRole, jane may bind it (and still not write it).
    flotilla.ok(
        admin,
        &[
            "create",
            "clusterrole",
            "bind-admin",
            "--verb=bind",
            "--resource=clusterroles.rbac.authorization.k8s.io",
            "--resource-name=admin",
        ],
    );
    flotilla.ok(
        admin,
        &[
            "create",
            "rolebinding",
            "jane-binds",
            "--clusterrole=bind-admin",
            "--user=jane",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let output = flotilla.kubectl(
            admin,
            &[
                "create",
                "rolebinding",
                "bob-admin",
                "--clusterrole=admin",
                "--user=bob",
                "--as",
                "jane",
            ],
        );
        if output.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "bind never took effect: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// docs/observability.md's recipe: a ServiceAccount for Prometheus, bound to the
/// `system:monitoring` ClusterRole, reads `/metrics` on the API port with its token; before the
/// binding it is refused with kube's message for a non-resource URL.
#[test]
fn a_monitoring_service_account_scrapes_metrics_on_the_api_port() {
    let flotilla = Flotilla::start();
    let version = "1.33";
    flotilla.ok(version, &["create", "namespace", "monitoring"]);
    flotilla.ok(
        version,
        &["create", "serviceaccount", "prometheus", "-n", "monitoring"],
    );
    let token = flotilla.ok(
        version,
        &[
            "create",
            "token",
            "prometheus",
            "-n",
            "monitoring",
            "--duration",
            "10m",
        ],
    );
    let kubeconfig = token_kubeconfig(&flotilla, version, "prometheus", token.trim());
    let (ok, _, err) = as_user(
        &flotilla,
        version,
        &kubeconfig,
        &["get", "--raw", "/metrics"],
    );
    assert!(!ok);
    assert!(
        err.contains(
            r#"User "system:serviceaccount:monitoring:prometheus" cannot get path "/metrics""#
        ),
        "{err}"
    );
    flotilla.ok(
        version,
        &[
            "create",
            "clusterrolebinding",
            "prometheus",
            "--clusterrole=system:monitoring",
            "--serviceaccount=monitoring:prometheus",
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let metrics = loop {
        let (ok, out, err) = as_user(
            &flotilla,
            version,
            &kubeconfig,
            &["get", "--raw", "/metrics"],
        );
        if ok {
            break out;
        }
        assert!(Instant::now() < deadline, "still refused: {err}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("apiserver_request_total{verb=\"POST\"")),
        "{metrics}"
    );
    // Health needs no permission at all.
    let (ok, out, _) = as_user(
        &flotilla,
        version,
        &kubeconfig,
        &["get", "--raw", "/readyz"],
    );
    assert!(ok);
    assert_eq!(out, "ok");
}
