//! User values survive defaulting, and defaulting twice equals defaulting once, over fixtures
//! of every defaulted kind and over arbitrary JSON.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::defaulted;

/// Objects with every defaulted field already chosen by the user, differently from the
/// defaults: defaulting must not change them.
fn fully_specified() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let pod_spec = json!({
        "dnsPolicy": "Default", "restartPolicy": "OnFailure", "securityContext": {"runAsUser": 1000},
        "terminationGracePeriodSeconds": 5, "schedulerName": "custom", "enableServiceLinks": false,
        "containers": [{"name": "main", "image": "nginx", "imagePullPolicy": "Never",
            "terminationMessagePath": "/tmp/log", "terminationMessagePolicy": "FallbackToLogsOnError",
            "ports": [{"containerPort": 53, "protocol": "UDP"}]}]
    });
    let template = json!({"metadata": {"labels": {"app": "a"}}, "spec": pod_spec.clone()});
    vec![
        ("", "v1", "Pod", json!({"spec": pod_spec})),
        (
            "apps",
            "v1",
            "Deployment",
            json!({"spec": {"replicas": 0, "revisionHistoryLimit": 2,
            "progressDeadlineSeconds": 60, "strategy": {"type": "Recreate"}, "template": template.clone()}}),
        ),
        (
            "apps",
            "v1",
            "StatefulSet",
            json!({"spec": {"replicas": 3, "revisionHistoryLimit": 1,
            "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Delete"},
            "template": template.clone()}}),
        ),
        (
            "batch",
            "v1",
            "Job",
            json!({"metadata": {"labels": {"x": "y"}}, "spec": {"completions": 4,
            "parallelism": 2, "backoffLimit": 0, "completionMode": "Indexed", "suspend": true,
            "podReplacementPolicy": "Failed", "manualSelector": true, "template": template.clone()}}),
        ),
        (
            "batch",
            "v1",
            "CronJob",
            json!({"spec": {"concurrencyPolicy": "Forbid", "suspend": true,
            "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 0,
            "jobTemplate": {"spec": {"template": template}}}}),
        ),
        (
            "",
            "v1",
            "Service",
            json!({"spec": {"type": "NodePort", "sessionAffinity": "ClientIP",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}, "selector": {"a": "b"},
            "ports": [{"port": 80, "targetPort": 8080, "protocol": "SCTP"}],
            "externalTrafficPolicy": "Local", "internalTrafficPolicy": "Local",
            "ipFamilyPolicy": "PreferDualStack", "ipFamilies": ["IPv6"]}}),
        ),
    ]
}

#[test]
fn values_the_user_set_are_never_replaced() {
    for (group, version, kind, object) in fully_specified() {
        assert_eq!(
            defaulted(group, version, kind, object.clone()),
            object,
            "{kind}"
        );
    }
}

/// Minimal objects of every defaulted kind.
fn fixtures() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let spec = json!({"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 1}],
        "livenessProbe": {"httpGet": {"port": 1}}, "resources": {"limits": {"cpu": "1"}}}],
        "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "s"}}]});
    let template = json!({"metadata": {"labels": {"a": "b"}}, "spec": spec.clone()});
    let mut all = vec![
        ("", "v1", "Pod", json!({"spec": spec})),
        (
            "",
            "v1",
            "PodTemplate",
            json!({"template": template.clone()}),
        ),
        (
            "",
            "v1",
            "Service",
            json!({"spec": {"ports": [{"port": 80}]}}),
        ),
        ("", "v1", "Service", json!({"spec": {"clusterIP": "None"}})),
        ("", "v1", "Secret", json!({})),
        ("", "v1", "PersistentVolumeClaim", json!({})),
        ("", "v1", "PersistentVolume", json!({})),
        ("", "v1", "Namespace", json!({"metadata": {"name": "n"}})),
        (
            "",
            "v1",
            "LimitRange",
            json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}),
        ),
        (
            "apps",
            "v1",
            "Deployment",
            json!({"spec": {"template": template.clone()}}),
        ),
        (
            "apps",
            "v1",
            "StatefulSet",
            json!({"spec": {"template": template.clone(), "volumeClaimTemplates": [{}]}}),
        ),
        (
            "apps",
            "v1",
            "DaemonSet",
            json!({"spec": {"template": template.clone()}}),
        ),
        ("apps", "v1", "ReplicaSet", json!({})),
        (
            "batch",
            "v1",
            "Job",
            json!({"spec": {"template": template.clone()}}),
        ),
        (
            "batch",
            "v1",
            "CronJob",
            json!({"spec": {"jobTemplate": {"spec": {"template": template}}}}),
        ),
        (
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            json!({"spec": {"behavior": {}}}),
        ),
        (
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            json!({"spec": {"ingress": [{"ports": [{}]}]}}),
        ),
        (
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            json!({"subjects": [{"kind": "User"}]}),
        ),
    ];
    all.extend(fully_specified());
    all
}

#[test]
fn defaulting_twice_is_defaulting_once() {
    for (group, version, kind, object) in fixtures() {
        let once = defaulted(group, version, kind, object);
        assert_eq!(
            defaulted(group, version, kind, once.clone()),
            once,
            "{kind}"
        );
    }
}

const KINDS: &[(&str, &str, &str)] = &[
    ("", "v1", "Pod"),
    ("", "v1", "Service"),
    ("", "v1", "PersistentVolume"),
    ("", "v1", "LimitRange"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("batch", "v1", "Job"),
    ("batch", "v1", "CronJob"),
    ("autoscaling", "v2", "HorizontalPodAutoscaler"),
    ("networking.k8s.io", "v1", "NetworkPolicy"),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
];

/// Field names defaulting looks at, so random objects reach deep into the defaulters.
const KEYS: &[&str] = &[
    "spec",
    "template",
    "jobTemplate",
    "containers",
    "initContainers",
    "volumes",
    "ports",
    "protocol",
    "port",
    "targetPort",
    "type",
    "clusterIP",
    "clusterIPs",
    "selector",
    "ipFamilies",
    "ipFamilyPolicy",
    "strategy",
    "updateStrategy",
    "rollingUpdate",
    "replicas",
    "completions",
    "parallelism",
    "resources",
    "limits",
    "requests",
    "image",
    "hostNetwork",
    "containerPort",
    "hostPort",
    "livenessProbe",
    "httpGet",
    "behavior",
    "scaleUp",
    "egress",
    "subjects",
    "kind",
    "sessionAffinity",
    "limits",
    "max",
    "min",
    "default",
    "metadata",
    "labels",
    "status",
    "secret",
    "emptyDir",
    "name",
    "podFailurePolicy",
    "rules",
];

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-2i64..3).prop_map(Value::from),
        prop_oneof![
            Just(""),
            Just("None"),
            Just("RollingUpdate"),
            Just("ClusterIP"),
            Just("x:latest"),
            Just("fd00::1")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|entries| {
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            }),
        ]
    })
}

proptest! {
    #[test]
    fn defaulting_arbitrary_objects_is_idempotent(
        kind in prop::sample::select(KINDS),
        object in arbitrary_json(),
    ) {
        let (group, version, kind) = kind;
        let once = defaulted(group, version, kind, object);
        prop_assert_eq!(defaulted(group, version, kind, once.clone()), once);
    }
}
