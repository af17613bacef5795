//! Converted workloads against hand-written JSON: Deployment (containers, ports, env,
//! resources, rolling update), Job, CronJob and a Pod with volumes, probes and security context.

use k8s_openapi::api as oa;
use k8s_pb::api::{apps::v1 as apps, batch::v1 as batch, core::v1 as core};
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};
use std::collections::BTreeMap;

use super::{assert_openapi_round_trip, decode_ok, go_meta, labels, s};

fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity { string: s(v) }))
        .collect()
}

/// A container as kubectl's generators build it, with Go's zero values written out.
fn container(name: &str, image: &str) -> core::Container {
    core::Container {
        name: s(name),
        image: s(image),
        working_dir: s(""),
        resources: Some(core::ResourceRequirements::default()),
        termination_message_path: s(""),
        termination_message_policy: s(""),
        image_pull_policy: s(""),
        stdin: Some(false),
        stdin_once: Some(false),
        tty: Some(false),
        ..Default::default()
    }
}

fn pod_template(app: &str, spec: core::PodSpec) -> Option<core::PodTemplateSpec> {
    let mut meta = go_meta("", "");
    meta.labels = labels(&[("app", app)]);
    Some(core::PodTemplateSpec {
        metadata: Some(meta),
        spec: Some(spec),
    })
}

fn pod_spec(containers: Vec<core::Container>, restart_policy: &str) -> core::PodSpec {
    core::PodSpec {
        containers,
        restart_policy: s(restart_policy),
        dns_policy: s(""),
        service_account_name: s(""),
        node_name: s(""),
        host_network: Some(false),
        scheduler_name: s(""),
        ..Default::default()
    }
}

fn selector(app: &str) -> Option<meta::LabelSelector> {
    Some(meta::LabelSelector {
        match_labels: labels(&[("app", app)]),
        match_expressions: vec![],
    })
}

#[test]
fn deployment_with_containers_ports_env_and_resources() {
    let mut web = container("nginx", "nginx:1.27");
    web.ports = vec![core::ContainerPort {
        name: s(""),
        host_port: Some(0),
        container_port: Some(80),
        protocol: s("TCP"),
        host_ip: s(""),
    }];
    web.env = vec![
        core::EnvVar {
            name: s("MODE"),
            value: s("prod"),
            value_from: None,
        },
        core::EnvVar {
            name: s("POD_NAME"),
            value: s(""),
            value_from: Some(core::EnvVarSource {
                field_ref: Some(core::ObjectFieldSelector {
                    api_version: s("v1"),
                    field_path: s("metadata.name"),
                }),
                ..Default::default()
            }),
        },
    ];
    web.resources = Some(core::ResourceRequirements {
        limits: quantities(&[("memory", "256Mi")]),
        requests: quantities(&[("cpu", "100m"), ("memory", "128Mi")]),
        claims: vec![],
    });
    let deployment = apps::Deployment {
        metadata: Some(go_meta("web", "default")),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: selector("web"),
            template: pod_template("web", pod_spec(vec![web], "")),
            strategy: Some(apps::DeploymentStrategy {
                r#type: s("RollingUpdate"),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: s("25%"),
                    }),
                    max_surge: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: s(""),
                    }),
                }),
            }),
            min_ready_seconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus::default()),
    };
    let got = decode_ok("apps/v1", "Deployment", &deployment);
    let want = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "nginx", "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "MODE", "value": "prod"},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                    "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                }]},
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
        },
        "status": {},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::apps::v1::Deployment>(&got);
}

fn job_spec() -> batch::JobSpec {
    batch::JobSpec {
        backoff_limit: Some(0),
        template: pod_template("pi", pod_spec(vec![container("pi", "perl:5")], "Never")),
        completion_mode: None,
        ..Default::default()
    }
}

fn job_spec_json() -> Value {
    json!({
        "backoffLimit": 0,
        "template": {"metadata": {"labels": {"app": "pi"}},
                     "spec": {"containers": [{"name": "pi", "image": "perl:5", "resources": {}}], "restartPolicy": "Never"}},
    })
}

#[test]
fn job_and_cronjob() {
    let job = batch::Job {
        metadata: Some(go_meta("pi", "default")),
        spec: Some(job_spec()),
        status: None,
    };
    let got = decode_ok("batch/v1", "Job", &job);
    let want = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"}, "spec": job_spec_json()});
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::batch::v1::Job>(&got);

    let cronjob = batch::CronJob {
        metadata: Some(go_meta("nightly", "default")),
        spec: Some(batch::CronJobSpec {
            schedule: s("0 3 * * *"),
            concurrency_policy: s(""),
            suspend: Some(true),
            job_template: Some(batch::JobTemplateSpec {
                metadata: Some(go_meta("", "")),
                spec: Some(job_spec()),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let got = decode_ok("batch/v1", "CronJob", &cronjob);
    let want = json!({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {"schedule": "0 3 * * *", "suspend": true, "jobTemplate": {"metadata": {}, "spec": job_spec_json()}},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::batch::v1::CronJob>(&got);
}

#[test]
fn pod_volumes_probes_and_security_context_are_inlined_where_go_inlines() {
    let mut app = container("app", "busybox");
    app.command = vec!["sh".into(), "-c".into(), "sleep 3600".into()];
    app.volume_mounts = vec![core::VolumeMount {
        name: s("config"),
        read_only: Some(true),
        mount_path: s("/etc/app"),
        ..Default::default()
    }];
    app.liveness_probe = Some(core::Probe {
        handler: Some(core::ProbeHandler {
            http_get: Some(core::HttpGetAction {
                path: s("/healthz"),
                port: Some(IntOrString {
                    r#type: Some(1),
                    int_val: Some(0),
                    str_val: s("http"),
                }),
                host: s(""),
                scheme: s("HTTP"),
                http_headers: vec![],
            }),
            ..Default::default()
        }),
        initial_delay_seconds: Some(5),
        timeout_seconds: Some(0),
        period_seconds: Some(10),
        ..Default::default()
    });
    app.security_context = Some(core::SecurityContext {
        capabilities: Some(core::Capabilities {
            add: vec![],
            drop: vec!["ALL".into()],
        }),
        run_as_user: Some(0),
        run_as_non_root: Some(false),
        allow_privilege_escalation: Some(false),
        ..Default::default()
    });
    let mut spec = pod_spec(vec![app], "Always");
    spec.volumes = vec![
        core::Volume {
            name: s("config"),
            volume_source: Some(core::VolumeSource {
                config_map: Some(core::ConfigMapVolumeSource {
                    local_object_reference: Some(core::LocalObjectReference {
                        name: s("settings"),
                    }),
                    items: vec![],
                    default_mode: Some(0o644),
                    optional: None,
                }),
                ..Default::default()
            }),
        },
        core::Volume {
            name: s("scratch"),
            volume_source: Some(core::VolumeSource {
                empty_dir: Some(core::EmptyDirVolumeSource {
                    medium: s(""),
                    size_limit: None,
                }),
                ..Default::default()
            }),
        },
    ];
    spec.termination_grace_period_seconds = Some(0);
    spec.security_context = Some(core::PodSecurityContext {
        fs_group: Some(2000),
        ..Default::default()
    });
    let pod = core::Pod {
        metadata: Some(go_meta("app", "default")),
        spec: Some(spec),
        status: Some(core::PodStatus::default()),
    };
    let got = decode_ok("v1", "Pod", &pod);
    let want = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": "default"},
        "spec": {
            "volumes": [{"name": "config", "configMap": {"name": "settings", "defaultMode": 420}},
                        {"name": "scratch", "emptyDir": {}}],
            "containers": [{
                "name": "app", "image": "busybox", "command": ["sh", "-c", "sleep 3600"], "resources": {},
                "volumeMounts": [{"name": "config", "readOnly": true, "mountPath": "/etc/app"}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                                  "initialDelaySeconds": 5, "periodSeconds": 10},
                "securityContext": {"capabilities": {"drop": ["ALL"]}, "runAsUser": 0, "runAsNonRoot": false,
                                    "allowPrivilegeEscalation": false},
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "securityContext": {"fsGroup": 2000},
        },
        "status": {},
    });
    assert_eq!(got, want);
    assert_openapi_round_trip::<oa::core::v1::Pod>(&got);
}
