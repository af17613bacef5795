//! create (protobuf bodies from 1.32+), label, annotate, scale, patch, edit, wait, delete.

use crate::harness::*;

#[test]
fn typed_create_commands_work_in_every_version() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("create-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        flotilla.ok(
            version,
            &[
                "create",
                "configmap",
                "cfg",
                "-n",
                &ns,
                "--from-literal=a=b",
            ],
        );
        flotilla.ok(
            version,
            &[
                "create",
                "secret",
                "generic",
                "s",
                "-n",
                &ns,
                "--from-literal=p=q",
            ],
        );
        flotilla.ok(
            version,
            &[
                "create",
                "deployment",
                "d",
                "-n",
                &ns,
                "--image=nginx",
                "--replicas=2",
            ],
        );
        flotilla.ok(
            version,
            &[
                "create",
                "service",
                "clusterip",
                "svc",
                "-n",
                &ns,
                "--tcp=80:8080",
            ],
        );
        flotilla.ok(version, &["create", "serviceaccount", "sa", "-n", &ns]);
        flotilla.ok(
            version,
            &["create", "job", "j", "-n", &ns, "--image=busybox"],
        );
        flotilla.ok(
            version,
            &[
                "create",
                "role",
                "r",
                "-n",
                &ns,
                "--verb=get",
                "--resource=pods",
            ],
        );
        let secret = flotilla.ok(
            version,
            &["get", "secret", "s", "-n", &ns, "-o", "jsonpath={.data.p}"],
        );
        assert_eq!(
            secret, "cQ==",
            "kubectl.{version}: secret data is base64 of q"
        );
        let replicas = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "d",
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
fn label_annotate_scale_patch_and_edit() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("w-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let path = flotilla.file(&format!("{ns}.yaml"), DEPLOYMENT);
        flotilla.ok(version, &["apply", "-n", &ns, "-f", &path]);
        flotilla.ok(version, &["label", "-n", &ns, "deploy/web", "tier=front"]);
        flotilla.ok(version, &["annotate", "-n", &ns, "deploy/web", "owner=sre"]);
        flotilla.ok(version, &["scale", "-n", &ns, "deploy/web", "--replicas=5"]);
        flotilla.ok(
            version,
            &[
                "patch",
                "-n",
                &ns,
                "deploy/web",
                "--type=merge",
                "-p",
                r#"{"metadata":{"labels":{"merged":"yes"}}}"#,
            ],
        );
        flotilla.ok(
            version,
            &[
                "patch",
                "-n",
                &ns,
                "deploy/web",
                "--type=json",
                "-p",
                r#"[{"op":"add","path":"/spec/minReadySeconds","value":3}]"#,
            ],
        );
        flotilla.ok(version, &["patch", "-n", &ns, "deploy/web", "--type=strategic", "-p", r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"}]}}}}"#]);
        let got = flotilla.ok(
            version,
            &["get", "deploy", "web", "-n", &ns, "-o", "jsonpath={.metadata.labels.tier} {.metadata.annotations.owner} {.spec.replicas} {.metadata.labels.merged} {.spec.minReadySeconds} {.spec.template.spec.containers[*].image}"],
        );
        assert_eq!(
            got, "front sre 5 yes 3 nginx:1.27 busybox:1.37",
            "kubectl.{version}"
        );
        let output = flotilla.kubectl_with(
            version,
            &["edit", "-n", &ns, "deploy/web"],
            &[(
                "KUBE_EDITOR",
                "sed -i -e s/minReadySeconds:\\ 3/minReadySeconds:\\ 7/",
            )],
            None,
        );
        assert!(
            output.status.success(),
            "kubectl.{version} edit: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let edited = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                &ns,
                "-o",
                "jsonpath={.spec.minReadySeconds}",
            ],
        );
        assert_eq!(edited, "7", "kubectl.{version} edit");
    }
}

#[test]
fn wait_for_a_condition_and_delete_with_finalizers() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("wd-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let path = flotilla.file(&format!("{ns}.yaml"), DEPLOYMENT);
        flotilla.ok(version, &["apply", "-n", &ns, "-f", &path]);
        flotilla.ok(
            version,
            &["patch", "-n", &ns, "deploy/web", "--subresource=status", "--type=merge", "-p", r#"{"status":{"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable"}]}}"#],
        );
        let waited = flotilla.ok(
            version,
            &[
                "wait",
                "-n",
                &ns,
                "--for=condition=Available",
                "deploy/web",
                "--timeout=20s",
            ],
        );
        assert!(waited.contains("condition met"), "{waited}");
        let held = flotilla.file(
            &format!("{ns}-cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n",
        );
        flotilla.ok(version, &["apply", "-n", &ns, "-f", &held]);
        flotilla.ok(
            version,
            &["delete", "-n", &ns, "configmap/held", "--wait=false"],
        );
        let stamp = flotilla.ok(
            version,
            &[
                "get",
                "-n",
                &ns,
                "configmap/held",
                "-o",
                "jsonpath={.metadata.deletionTimestamp}",
            ],
        );
        assert!(
            !stamp.is_empty(),
            "a held object carries a deletion timestamp"
        );
        flotilla.ok(
            version,
            &[
                "patch",
                "-n",
                &ns,
                "configmap/held",
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ],
        );
        let gone = flotilla.fails(version, &["get", "-n", &ns, "configmap/held"]);
        assert!(gone.contains("NotFound"), "{gone}");
        let out = flotilla.ok(version, &["delete", "-n", &ns, "deploy/web"]);
        assert!(out.contains("deleted"), "{out}");
    }
}
