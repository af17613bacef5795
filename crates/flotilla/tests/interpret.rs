//! `flotilla interpret` as a user runs it: files in, karmadactl's report or results out, and the
//! exit code a script can test.

use std::io::Write as _;
use std::process::{Command, Stdio};

fn flotilla(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flotilla runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().expect("flotilla ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const CUSTOMIZATION: &str = r#"apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: workloads
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status ~= nil and obj.status.readyReplicas == obj.spec.replicas
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          local ready = 0
          for i = 1, #statusItems do
            ready = ready + (statusItems[i].status.readyReplicas or 0)
          end
          desiredObj.status = {readyReplicas = ready}
          return desiredObj
        end
"#;

const BROKEN: &str = r#"apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: broken
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    retention:
      luaScript: "function Retain(desired, observed) return desired"
"#;

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 2}\nstatus: {readyReplicas: 2}\n";

#[test]
fn check_passes_good_customizations_and_fails_on_a_broken_script() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, CUSTOMIZATION).unwrap();
    let (code, out, _) = flotilla(
        &["interpret", "-f", good.to_str().unwrap(), "--check"],
        None,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("SOURCE: workloads"), "{out}");
    assert!(out.contains("InterpretHealth:\tPASS"), "{out}");
    assert!(out.contains("Retain:\tUNSET"), "{out}");

    let both = dir.path().join("both.yaml");
    std::fs::write(&both, format!("{CUSTOMIZATION}---\n{BROKEN}")).unwrap();
    let (code, out, _) = flotilla(
        &["interpret", "-f", both.to_str().unwrap(), "--check"],
        None,
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("SOURCE: broken"), "{out}");
    assert!(out.contains("Retain:\tERROR: "), "{out}");
}

#[test]
fn an_operation_runs_on_objects_from_files_and_standard_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let customization = dir.path().join("customization.yaml");
    std::fs::write(&customization, CUSTOMIZATION).unwrap();
    let observed = dir.path().join("observed.yaml");
    std::fs::write(&observed, DEPLOYMENT).unwrap();
    let f = customization.to_str().unwrap();
    let o = observed.to_str().unwrap();

    let (code, out, err) = flotilla(
        &[
            "interpret",
            "-f",
            f,
            "--operation",
            "interpretHealth",
            "--observed-file",
            o,
        ],
        None,
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "---\n# [1/1] healthy:\ntrue\n"),
        "{err}"
    );

    let statuses = "- clusterName: a\n  status: {readyReplicas: 2}\n- clusterName: b\n  status: {readyReplicas: 3}\n";
    let (code, out, err) = flotilla(
        &[
            "interpret",
            "-f",
            f,
            "--operation",
            "AggregateStatus",
            "--desired-file",
            o,
            "--status-file",
            "-",
        ],
        Some(statuses),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("---\n# [1/1] aggregatedStatus:\n"), "{out}");
    assert!(out.contains("readyReplicas: 5"), "{out}");

    // An operation nothing interprets: karmadactl's message and a failing exit code.
    let (code, _, err) = flotilla(
        &[
            "interpret",
            "-f",
            f,
            "--operation",
            "Retain",
            "--desired-file",
            o,
            "--observed-file",
            o,
        ],
        None,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("Execute Retain error: rule is not enabled"),
        "{err}"
    );

    let (code, _, err) = flotilla(&["interpret", "-f", f, "--operation", "frobnicate"], None);
    assert_eq!(code, 1);
    assert!(
        err.contains("operation frobnicate is not supported"),
        "{err}"
    );
}
