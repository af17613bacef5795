//! `kubectl apply` (client-side and server-side) and the project's example manifests.

use crate::harness::*;

#[test]
fn client_side_apply_twice_then_changed_keeps_untouched_list_items() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("apply-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let path = flotilla.file(&format!("{ns}.yaml"), DEPLOYMENT);
        let first = flotilla.ok(version, &["apply", "-n", &ns, "-f", &path]);
        assert!(first.contains("deployment.apps/web created"), "{first}");
        let second = flotilla.ok(version, &["apply", "-n", &ns, "-f", &path]);
        assert!(second.contains("deployment.apps/web unchanged"), "{second}");
        // Someone else adds an env var to the live object; the applied change must keep it.
        flotilla.ok(
            version,
            &[
                "set",
                "env",
                "-n",
                &ns,
                "deployment/web",
                "-c",
                "nginx",
                "EXTRA=1",
            ],
        );
        let changed = flotilla.file(
            &format!("{ns}-2.yaml"),
            &DEPLOYMENT.replace("nginx:1.27", "nginx:1.28"),
        );
        let third = flotilla.ok(version, &["apply", "-n", &ns, "-f", &changed]);
        assert!(third.contains("deployment.apps/web configured"), "{third}");
        let containers = flotilla.ok(
            version,
            &["get", "deploy", "web", "-n", &ns, "-o", "jsonpath={.spec.template.spec.containers[*].image} {.spec.template.spec.containers[0].env[*].name} {.spec.template.spec.containers[0].ports[0].containerPort}"],
        );
        assert_eq!(
            containers, "nginx:1.28 busybox:1.36 MODE EXTRA 80",
            "kubectl.{version}"
        );
    }
}

#[test]
fn server_side_apply_creates_updates_and_reports_conflicts() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("ssa-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let path = flotilla.file(&format!("{ns}.yaml"), DEPLOYMENT);
        let out = flotilla.ok(version, &["apply", "--server-side", "-n", &ns, "-f", &path]);
        assert!(out.contains("serverside-applied"), "{out}");
        let managers = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                &ns,
                "--show-managed-fields",
                "-o",
                "jsonpath={.metadata.managedFields[*].manager}",
            ],
        );
        assert!(managers.contains("kubectl"), "{managers}");
        flotilla.ok(version, &["scale", "-n", &ns, "deploy/web", "--replicas=4"]);
        let conflict = flotilla.fails(version, &["apply", "--server-side", "-n", &ns, "-f", &path]);
        assert!(
            conflict.contains("conflict"),
            "kubectl.{version}: {conflict}"
        );
        flotilla.ok(
            version,
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "-n",
                &ns,
                "-f",
                &path,
            ],
        );
        let replicas = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.replicas}",
            ],
        );
        assert_eq!(replicas, "2");
    }
}

#[test]
fn example_manifests_apply_and_the_invalid_one_is_rejected_naming_the_selector() {
    let flotilla = Flotilla::start();
    let version = "1.33";
    let out = flotilla.ok(version, &["apply", "-f", &example("nginx/nginx.yaml")]);
    assert!(out.contains("deployment.apps/nginx created"), "{out}");
    assert!(
        out.contains("propagationpolicy.policy.karmada.io/nginx-propagation created"),
        "{out}"
    );
    let out = flotilla.ok(
        version,
        &[
            "apply",
            "-f",
            &example("vllm/deployment.yaml"),
            "-f",
            &example("vllm/propagationpolicy.yaml"),
            "-f",
            &example("vllm/overridepolicy.yaml"),
        ],
    );
    assert!(
        out.contains("overridepolicy.policy.karmada.io/vllm-regional created"),
        "{out}"
    );
    let pp = flotilla.ok(version, &["get", "pp"]);
    assert!(
        pp.contains("vllm-propagation") && pp.contains("nginx-propagation"),
        "{pp}"
    );
    let karmada = flotilla.ok(version, &["get", "karmada-io"]);
    assert!(karmada.contains("vllm-regional"), "{karmada}");
    for version in VERSIONS {
        // Strict field validation (kubectl's default) refuses the misspelt `value` first…
        let error = flotilla.fails(
            version,
            &["apply", "-f", &example("vllm/invalid-deployment.yaml")],
        );
        assert!(
            error.contains("BadRequest")
                && error.contains("unknown field")
                && error.contains("matchExpressions[0].value"),
            "kubectl.{version}: {error}"
        );
        // …and without it, validation names the missing selector.
        let error = flotilla.fails(
            version,
            &[
                "apply",
                "--validate=false",
                "-f",
                &example("vllm/invalid-deployment.yaml"),
            ],
        );
        assert!(
            error.contains("spec.selector: Required value"),
            "kubectl.{version}: {error}"
        );
    }
    let none = flotilla.kubectl(version, &["get", "deploy", "vllm-inference-draft"]);
    assert!(
        !none.status.success(),
        "the invalid Deployment was not stored"
    );
}
