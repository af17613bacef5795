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

const TEAM_APP: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: shared
  labels: {app: shared}
spec:
  replicas: 1
  selector:
    matchLabels: {app: shared}
  template:
    metadata:
      labels: {app: shared}
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        ports:
        - containerPort: 80
"#;

/// The sidecar team co-owns container `app` (its env) and owns container `proxy`.
const TEAM_SIDECAR: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: shared
spec:
  template:
    spec:
      containers:
      - name: app
        env:
        - {name: PROXY, value: "on"}
      - name: proxy
        image: registry.example/proxy:1
"#;

fn managed_fields(flotilla: &Flotilla, version: &str, ns: &str) -> serde_json::Value {
    let out = flotilla.ok(
        version,
        &[
            "get",
            "deploy",
            "shared",
            "-n",
            ns,
            "--show-managed-fields",
            "-o",
            "json",
        ],
    );
    let object: serde_json::Value = serde_json::from_str(&out).expect("JSON output");
    object
}

fn fields_of(object: &serde_json::Value, manager: &str) -> serde_json::Value {
    object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| {
            assert_eq!(e["operation"], "Apply", "{e}");
            assert_eq!(e["apiVersion"], "apps/v1", "{e}");
            e["fieldsV1"].clone()
        })
        .unwrap_or(serde_json::Value::Null)
}

fn container_names(object: &serde_json::Value) -> Vec<String> {
    object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect()
}

/// Two field managers apply to one Deployment's containers with `kubectl apply --server-side`.
///
/// The expected `fieldsV1` are what kube-apiserver 1.32 records for this sequence, written
/// from its documented format (kubernetes.io "Server-Side Apply", managed fields) and the
/// structured-merge-diff rules it vendors (v4.4): list-map items as `k:{...}` keys with `.`
/// for the item itself, container ports keyed by `containerPort` and the defaulted `protocol`,
/// `selector` (a `structType=atomic` LabelSelector) owned whole, labels by key, and nothing for
/// the fields the server defaulted. They were not captured from a live kube-apiserver here.
#[test]
fn two_field_managers_share_a_deployments_containers() {
    let flotilla = Flotilla::start();
    let key = |s: &str| format!("k:{s}");
    for version in VERSIONS {
        let ns = format!("share-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let app = flotilla.file(&format!("{ns}-app.yaml"), TEAM_APP);
        let sidecar = flotilla.file(&format!("{ns}-sidecar.yaml"), TEAM_SIDECAR);
        let apply = |manager: &str, path: &str, extra: &[&str]| {
            let mut args = vec![
                "apply",
                "--server-side",
                "--field-manager",
                manager,
                "-n",
                &ns,
                "-f",
                path,
            ];
            args.extend_from_slice(extra);
            flotilla.kubectl(version, &args)
        };
        assert!(apply("team-app", &app, &[]).status.success());
        let output = apply("team-sidecar", &sidecar, &[]);
        assert!(
            output.status.success(),
            "kubectl.{version}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let object = managed_fields(&flotilla, version, &ns);
        assert_eq!(container_names(&object), ["app", "proxy"]);
        let app_container = &object["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(app_container["image"], "registry.example/app:1");
        assert_eq!(app_container["env"][0]["name"], "PROXY");
        assert_eq!(
            fields_of(&object, "team-app"),
            serde_json::json!({
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {"f:containers": {key(r#"{"name":"app"}"#): {
                            ".": {}, "f:image": {}, "f:name": {},
                            "f:ports": {key(r#"{"containerPort":80,"protocol":"TCP"}"#): {
                                ".": {}, "f:containerPort": {}}},
                        }}},
                    },
                },
            }),
            "kubectl.{version}"
        );
        assert_eq!(
            fields_of(&object, "team-sidecar"),
            serde_json::json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                key(r#"{"name":"app"}"#): {".": {}, "f:env": {key(r#"{"name":"PROXY"}"#): {
                    ".": {}, "f:name": {}, "f:value": {}}}, "f:name": {}},
                key(r#"{"name":"proxy"}"#): {".": {}, "f:image": {}, "f:name": {}},
            }}}}}),
            "kubectl.{version}"
        );

        // The sidecar team changing the app image conflicts, per item, with team-app.
        let bumped = flotilla.file(
            &format!("{ns}-sidecar-image.yaml"),
            &TEAM_SIDECAR.replace(
                "      - name: app\n",
                "      - name: app\n        image: registry.example/app:2\n",
            ),
        );
        let output = apply("team-sidecar", &bumped, &[]);
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(
            err.contains(
                r#"Apply failed with 1 conflict: conflict with "team-app": .spec.template.spec.containers[name="app"].image"#
            ),
            "kubectl.{version}: {err}"
        );
        // Forced, the image moves to team-sidecar; team-app keeps the rest of its container.
        let output = apply("team-sidecar", &bumped, &["--force-conflicts"]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let object = managed_fields(&flotilla, version, &ns);
        assert_eq!(
            object["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.example/app:2"
        );
        let team_app = fields_of(&object, "team-app");
        let app_item =
            &team_app["f:spec"]["f:template"]["f:spec"]["f:containers"][key(r#"{"name":"app"}"#)];
        assert!(app_item.get("f:image").is_none(), "{team_app}");
        assert!(app_item.get("f:ports").is_some(), "{team_app}");

        // team-sidecar drops its proxy container: nobody else owns it, so it is removed; the
        // app container it co-owns stays with team-app's fields.
        let without_proxy = flotilla.file(
            &format!("{ns}-sidecar-no-proxy.yaml"),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shared\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - {name: PROXY, value: \"on\"}\n",
        );
        assert!(apply("team-sidecar", &without_proxy, &[]).status.success());
        let object = managed_fields(&flotilla, version, &ns);
        assert_eq!(container_names(&object), ["app"], "kubectl.{version}");
        let app_container = &object["spec"]["template"]["spec"]["containers"][0];
        // The image team-sidecar took over and no longer applies goes back to nobody and is
        // removed; the Deployment keeps its ports and env.
        assert!(app_container.get("image").is_none(), "{app_container}");
        assert_eq!(app_container["ports"][0]["containerPort"], 80);
        assert_eq!(app_container["env"][0]["value"], "on");
    }
}
