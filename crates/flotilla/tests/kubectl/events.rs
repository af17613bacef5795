//! Events through kubectl: one stored resource, two views. An Event written through core/v1
//! (what Flotilla's controllers' recorder writes) shows in `kubectl get events.events.k8s.io`;
//! one written through events.k8s.io/v1 (kube-runtime's recorder) shows in `kubectl get events`,
//! `kubectl events` and `kubectl describe`.

use crate::harness::*;

/// A core/v1 Event as client-go's legacy recorder (and `flotilla_runtime::events`) writes it.
fn core_event(ns: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Event
metadata:
  name: web.legacy
  namespace: {ns}
involvedObject:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: {ns}
reason: ScalingReplicaSet
message: Scaled up replica set web-1 to 2
type: Normal
source:
  component: deployment-controller
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:00:00Z"
count: 1
"#
    )
}

/// An events.k8s.io/v1 Event about the Deployment with `uid`, as kube-runtime writes it.
fn v1_event(ns: &str, uid: &str, event_time: bool) -> String {
    let time = if event_time {
        "eventTime: \"2026-01-01T00:00:00.000000Z\"\n"
    } else {
        ""
    };
    format!(
        r#"apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.series
  namespace: {ns}
regarding:
  apiVersion: apps/v1
  kind: Deployment
  name: web
  namespace: {ns}
  uid: {uid}
{time}reportingController: example.io/rollout
reportingInstance: rollout-0
action: Rollout
reason: RolloutPaused
note: Rollout paused by policy
type: Warning
"#
    )
}

#[test]
fn both_event_apis_show_the_same_events() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("events-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let deployment = flotilla.file(&format!("{ns}-d.yaml"), DEPLOYMENT);
        flotilla.ok(version, &["apply", "-n", &ns, "-f", &deployment]);
        let uid = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "web",
                "-n",
                &ns,
                "-o",
                "jsonpath={.metadata.uid}",
            ],
        );

        // Written through core/v1, read through events.k8s.io/v1.
        let path = flotilla.file(&format!("{ns}-core.yaml"), &core_event(&ns));
        flotilla.ok(version, &["create", "-f", &path]);
        let table = flotilla.ok(version, &["get", "events.v1.events.k8s.io", "-n", &ns]);
        let header: Vec<&str> = table
            .lines()
            .next()
            .expect("header")
            .split_whitespace()
            .collect();
        assert_eq!(
            header,
            ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
            "kubectl.{version}: {table}"
        );
        assert!(
            table.contains("deployment/web") && table.contains("Scaled up replica set web-1 to 2"),
            "kubectl.{version}: {table}"
        );
        let yaml = flotilla.ok(
            version,
            &[
                "get",
                "events.events.k8s.io",
                "web.legacy",
                "-n",
                &ns,
                "-o",
                "yaml",
            ],
        );
        assert!(
            yaml.contains("apiVersion: events.k8s.io/v1")
                && yaml.contains("note: Scaled up replica set web-1 to 2")
                && yaml.contains("deprecatedCount: 1")
                && yaml.contains("regarding:"),
            "kubectl.{version}: {yaml}"
        );
        let selected = flotilla.ok(
            version,
            &[
                "get",
                "events.events.k8s.io",
                "-n",
                &ns,
                "--field-selector",
                "regarding.name=web",
                "-o",
                "name",
            ],
        );
        assert_eq!(selected.trim(), "event.events.k8s.io/web.legacy");

        // Written through events.k8s.io/v1 (validated as kube does), read through core/v1.
        let invalid = flotilla.file(&format!("{ns}-bad.yaml"), &v1_event(&ns, &uid, false));
        let refused = flotilla.fails(version, &["create", "-f", &invalid]);
        assert!(
            refused.contains("eventTime: Required value"),
            "kubectl.{version}: {refused}"
        );
        let path = flotilla.file(&format!("{ns}-v1.yaml"), &v1_event(&ns, &uid, true));
        flotilla.ok(version, &["create", "-f", &path]);
        let core = flotilla.ok(
            version,
            &[
                "get",
                "events",
                "-n",
                &ns,
                "--field-selector",
                "involvedObject.name=web,type=Warning",
                "-o",
                "jsonpath={.items[*].message}",
            ],
        );
        assert_eq!(core, "Rollout paused by policy", "kubectl.{version}");
        let events = flotilla.ok(version, &["events", "-n", &ns, "--for", "deployment/web"]);
        assert!(
            events.contains("RolloutPaused")
                && events.contains("Rollout paused by policy")
                && events.contains("ScalingReplicaSet"),
            "kubectl.{version} events: {events}"
        );
        let described = flotilla.ok(version, &["describe", "deployment", "web", "-n", &ns]);
        assert!(
            described.contains("RolloutPaused") && described.contains("Rollout paused by policy"),
            "kubectl.{version} describe: {described}"
        );
    }
}
