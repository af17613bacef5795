//! Per-kind defaults against upstream's values; user values and idempotence in [`idempotence`].

use serde_json::{Value, json};

use super::apply;
use super::pod::image_tag;

mod idempotence;

fn defaulted(group: &str, version: &str, kind: &str, mut object: Value) -> Value {
    apply(group, version, kind, &mut object);
    object
}

fn container(image: &str) -> Value {
    json!({"name": "main", "image": image})
}

/// The pod spec defaults every template gets, around `containers`.
fn defaulted_template_spec(containers: Value) -> Value {
    json!({
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler"
    })
}

fn defaulted_container(image: &str, pull: &str) -> Value {
    json!({
        "name": "main",
        "image": image,
        "imagePullPolicy": pull,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    })
}

#[test]
fn a_minimal_deployment_reads_back_as_kube_apiserver_stores_it() {
    let object = defaulted(
        "apps",
        "v1",
        "Deployment",
        json!({
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}
                }
            }
        }),
    );
    let mut main = defaulted_container("nginx:1.27", "IfNotPresent");
    main["ports"] = json!([{"containerPort": 80, "protocol": "TCP"}]);
    let expected = json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": defaulted_template_spec(json!([main]))
            },
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600
        }
    });
    assert_eq!(object, expected);
}

#[test]
fn image_pull_policy_follows_the_tag_as_parse_image_name_reports_it() {
    for (image, tag, policy) in [
        ("nginx", Some("latest"), "Always"),
        ("nginx:latest", Some("latest"), "Always"),
        ("nginx:1.27", Some("1.27"), "IfNotPresent"),
        ("localhost:5000/nginx", Some("latest"), "Always"),
        ("localhost:5000/team/nginx:v1", Some("v1"), "IfNotPresent"),
        (
            "registry.example.com/nginx@sha256:abcd",
            Some(""),
            "IfNotPresent",
        ),
        ("nginx:latest@sha256:abcd", Some("latest"), "Always"),
        ("Registry.Example.com/nginx", Some("latest"), "Always"),
        ("", None, "IfNotPresent"),
        ("Nginx", None, "IfNotPresent"),
        ("nginx:", None, "IfNotPresent"),
    ] {
        assert_eq!(image_tag(image), tag, "{image:?}");
        let pod = defaulted(
            "",
            "v1",
            "Pod",
            json!({"spec": {"containers": [container(image)]}}),
        );
        assert_eq!(
            pod["spec"]["containers"][0]["imagePullPolicy"], policy,
            "{image:?}"
        );
    }
}

#[test]
fn pods_get_pod_only_defaults_that_templates_do_not() {
    let spec = json!({
        "hostNetwork": true,
        "containers": [{
            "name": "main", "image": "app:1",
            "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 19090}],
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}
        }],
        "initContainers": [{"name": "init", "image": "app:1", "resources": {"limits": {"cpu": "2"}}}]
    });
    let pod = defaulted("", "v1", "Pod", json!({"spec": spec.clone()}));
    let main = &pod["spec"]["containers"][0];
    assert_eq!(pod["spec"]["enableServiceLinks"], true);
    assert_eq!(
        main["resources"]["requests"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    assert_eq!(
        pod["spec"]["initContainers"][0]["resources"]["requests"],
        json!({"cpu": "2"})
    );
    assert_eq!(main["ports"][0]["hostPort"], 8080);
    assert_eq!(main["ports"][1]["hostPort"], 19090);
    assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");

    let template = defaulted("", "v1", "PodTemplate", json!({"template": {"spec": spec}}));
    let spec = &template["template"]["spec"];
    assert_eq!(spec["enableServiceLinks"], Value::Null);
    assert_eq!(
        spec["containers"][0]["resources"]["requests"],
        json!({"cpu": "500m"})
    );
    assert_eq!(spec["containers"][0]["ports"][0].get("hostPort"), None);
    assert_eq!(spec["restartPolicy"], "Always");
}

#[test]
fn probes_handlers_and_env_get_their_defaults() {
    let pod = defaulted(
        "",
        "v1",
        "Pod",
        json!({"spec": {"containers": [{
            "name": "main", "image": "app:1",
            "livenessProbe": {"httpGet": {"port": 8080}, "periodSeconds": 0, "failureThreshold": 5},
            "readinessProbe": {"grpc": {"port": 9000}},
            "startupProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 4},
            "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit", "scheme": "HTTPS"}}},
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}, {"name": "A", "value": "b"}]
        }]}}),
    );
    let main = &pod["spec"]["containers"][0];
    assert_eq!(
        main["livenessProbe"],
        json!({"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "periodSeconds": 10,
               "failureThreshold": 5, "timeoutSeconds": 1, "successThreshold": 1})
    );
    assert_eq!(
        main["readinessProbe"]["grpc"],
        json!({"port": 9000, "service": ""})
    );
    assert_eq!(main["startupProbe"]["timeoutSeconds"], 4);
    assert_eq!(
        main["lifecycle"]["preStop"]["httpGet"],
        json!({"port": 80, "path": "/quit", "scheme": "HTTPS"})
    );
    assert_eq!(
        main["env"][0]["valueFrom"]["fieldRef"],
        json!({"fieldPath": "spec.nodeName", "apiVersion": "v1"})
    );
    assert_eq!(main["env"][1], json!({"name": "A", "value": "b"}));
}

#[test]
fn volumes_get_their_source_defaults() {
    let pod = defaulted(
        "",
        "v1",
        "Pod",
        json!({"spec": {"containers": [], "volumes": [
            {"name": "scratch"},
            {"name": "cm", "configMap": {"name": "c"}},
            {"name": "s", "secret": {"secretName": "s", "defaultMode": 256}},
            {"name": "host", "hostPath": {"path": "/var"}},
            {"name": "info", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}
        ]}}),
    );
    let volumes = &pod["spec"]["volumes"];
    assert_eq!(volumes[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(volumes[1]["configMap"]["defaultMode"], 420);
    assert_eq!(volumes[2]["secret"]["defaultMode"], 256);
    assert_eq!(volumes[3]["hostPath"], json!({"path": "/var", "type": ""}));
    assert_eq!(volumes[4]["downwardAPI"]["defaultMode"], 420);
    assert_eq!(
        volumes[4]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
        "v1"
    );
    assert_eq!(volumes[5]["projected"]["defaultMode"], 420);
    assert_eq!(
        volumes[5]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
    assert_eq!(
        volumes[6]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
        "Filesystem"
    );
    assert!(volumes[1].get("emptyDir").is_none());
}

#[test]
fn stateful_sets_daemon_sets_and_replica_sets_get_apps_defaults() {
    let template =
        json!({"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [container("db:15")]}});
    let sts = defaulted(
        "apps",
        "v1",
        "StatefulSet",
        json!({"spec": {"serviceName": "db", "template": template.clone(),
               "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}}),
    );
    let spec = &sts["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        (
            spec["replicas"].clone(),
            spec["revisionHistoryLimit"].clone()
        ),
        (json!(1), json!(10))
    );
    assert_eq!(spec["serviceName"], "db");
    assert_eq!(
        spec["volumeClaimTemplates"][0]["spec"]["volumeMode"],
        "Filesystem"
    );
    assert_eq!(
        spec["volumeClaimTemplates"][0]["status"],
        json!({"phase": "Pending"})
    );
    assert_eq!(
        spec["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );

    let explicit = defaulted(
        "apps",
        "v1",
        "StatefulSet",
        json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}, "template": template.clone()}}),
    );
    assert_eq!(
        explicit["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );

    let ds = defaulted(
        "apps",
        "v1",
        "DaemonSet",
        json!({"spec": {"template": template.clone()}}),
    );
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    assert!(ds["spec"].get("replicas").is_none());
    let on_delete = defaulted(
        "apps",
        "v1",
        "DaemonSet",
        json!({"spec": {"updateStrategy": {"type": "OnDelete"}, "template": template.clone()}}),
    );
    assert_eq!(
        on_delete["spec"]["updateStrategy"],
        json!({"type": "OnDelete"})
    );

    let rs = defaulted(
        "apps",
        "v1",
        "ReplicaSet",
        json!({"spec": {"template": template}}),
    );
    assert_eq!(rs["spec"]["replicas"], 1);
    assert!(rs["spec"].get("revisionHistoryLimit").is_none());
    assert_eq!(
        rs["spec"]["template"]["spec"]["schedulerName"],
        "default-scheduler"
    );
}

#[test]
fn jobs_and_cron_jobs_get_batch_defaults() {
    let template = json!({"metadata": {"labels": {"run": "pi"}}, "spec": {"restartPolicy": "Never", "containers": [container("perl:5")]}});
    let job = defaulted(
        "batch",
        "v1",
        "Job",
        json!({"metadata": {"name": "pi"}, "spec": {"template": template.clone()}}),
    );
    let spec = &job["spec"];
    assert_eq!(job["metadata"]["labels"], json!({"run": "pi"}));
    for (field, value) in [
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
        ("manualSelector", json!(false)),
    ] {
        assert_eq!(spec[field], value, "{field}");
    }
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");

    let parallel = defaulted(
        "batch",
        "v1",
        "Job",
        json!({"metadata": {"labels": {"own": "x"}}, "spec": {"parallelism": 3, "backoffLimitPerIndex": 1,
               "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
               "template": template.clone()}}),
    );
    let spec = &parallel["spec"];
    assert_eq!(parallel["metadata"]["labels"], json!({"own": "x"}));
    assert!(spec.get("completions").is_none());
    assert_eq!(spec["backoffLimit"], 2_147_483_647);
    assert_eq!(spec["podReplacementPolicy"], "Failed");
    assert_eq!(
        spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );

    // Upstream defaults a Job's pod template like any other; validation rejects Always.
    let unset = defaulted(
        "batch",
        "v1",
        "Job",
        json!({"spec": {"template": {"spec": {"containers": []}}}}),
    );
    assert_eq!(unset["spec"]["template"]["spec"]["restartPolicy"], "Always");

    let cron = defaulted(
        "batch",
        "v1",
        "CronJob",
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
    );
    let spec = &cron["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    let job_spec = &spec["jobTemplate"]["spec"];
    assert!(
        job_spec.get("backoffLimit").is_none(),
        "Job-level defaults stay off templates"
    );
    assert_eq!(job_spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
}

#[test]
fn services_get_type_ports_traffic_policies_and_ip_families() {
    let svc = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}, {"port": 443, "targetPort": "https", "protocol": "UDP"}]}}),
    );
    assert_eq!(
        svc["spec"],
        json!({
            "selector": {"app": "web"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 443, "targetPort": "https", "protocol": "UDP"}],
            "sessionAffinity": "None",
            "type": "ClusterIP",
            "internalTrafficPolicy": "Cluster",
            "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"]
        })
    );

    let headless = defaulted("", "v1", "Service", json!({"spec": {"clusterIP": "None"}}));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    assert_eq!(headless["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));

    let lb = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer", "selector": {"a": "b"}, "ports": [{"port": 80}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb.example"}]}}}),
    );
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
    assert_eq!(lb["status"]["loadBalancer"]["ingress"][0]["ipMode"], "VIP");
    assert!(
        lb["status"]["loadBalancer"]["ingress"][1]
            .get("ipMode")
            .is_none()
    );

    let v6 = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"clusterIP": "fd00::10", "selector": {"a": "b"}}}),
    );
    assert_eq!(v6["spec"]["clusterIPs"], json!(["fd00::10"]));
    assert_eq!(v6["spec"]["ipFamilies"], json!(["IPv6"]));

    let external = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"type": "ExternalName", "externalName": "db.example"}}),
    );
    assert!(external["spec"].get("ipFamilies").is_none());
    assert!(external["spec"].get("internalTrafficPolicy").is_none());

    let sticky = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"sessionAffinity": "ClientIP"}}),
    );
    assert_eq!(
        sticky["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    let unsticky = defaulted(
        "",
        "v1",
        "Service",
        json!({"spec": {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}}}),
    );
    assert!(unsticky["spec"].get("sessionAffinityConfig").is_none());
}

#[test]
fn secret_string_data_is_merged_into_data() {
    let secret = defaulted(
        "",
        "v1",
        "Secret",
        json!({"data": {"a": "b2xk", "keep": "eA=="}, "stringData": {"a": "new", "token": "s3cr3t"}}),
    );
    assert_eq!(
        secret,
        json!({"type": "Opaque", "data": {"a": "bmV3", "keep": "eA==", "token": "czNjcjN0"}})
    );
    let only = defaulted("", "v1", "Secret", json!({"stringData": {"k": "v"}}));
    assert_eq!(only, json!({"type": "Opaque", "data": {"k": "dg=="}}));
}

#[test]
fn other_core_kinds_get_their_defaults() {
    assert_eq!(defaulted("", "v1", "Secret", json!({}))["type"], "Opaque");
    assert_eq!(
        defaulted("", "v1", "Secret", json!({"type": "kubernetes.io/tls"}))["type"],
        "kubernetes.io/tls"
    );
    let pvc = defaulted("", "v1", "PersistentVolumeClaim", json!({"spec": {}}));
    assert_eq!(
        pvc,
        json!({"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
    );
    let pv = defaulted(
        "",
        "v1",
        "PersistentVolume",
        json!({"spec": {"hostPath": {"path": "/d"}}}),
    );
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(pv["spec"]["volumeMode"], "Filesystem");
    assert_eq!(pv["spec"]["hostPath"]["type"], "");
    assert_eq!(pv["status"]["phase"], "Pending");
    let ns = defaulted(
        "",
        "v1",
        "Namespace",
        json!({"metadata": {"name": "team", "labels": {"kubernetes.io/metadata.name": "x"}}}),
    );
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team"
    );
    assert_eq!(ns["status"]["phase"], "Active");
    let ep = defaulted(
        "",
        "v1",
        "Endpoints",
        json!({"subsets": [{"ports": [{"port": 80}]}]}),
    );
    assert_eq!(ep["subsets"][0]["ports"][0]["protocol"], "TCP");
    let limits = defaulted(
        "",
        "v1",
        "LimitRange",
        json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}, "default": {"memory": "1Gi"}},
            {"type": "Pod", "max": {"cpu": "4"}}
        ]}}),
    );
    let container = &limits["spec"]["limits"][0];
    assert_eq!(container["default"], json!({"memory": "1Gi", "cpu": "2"}));
    assert_eq!(
        container["defaultRequest"],
        json!({"memory": "1Gi", "cpu": "2"})
    );
    assert!(limits["spec"]["limits"][1].get("default").is_none());
    let node = defaulted(
        "",
        "v1",
        "Node",
        json!({"status": {"capacity": {"cpu": "8"}}}),
    );
    assert_eq!(node["status"]["allocatable"], json!({"cpu": "8"}));
}

#[test]
fn autoscaling_networking_and_rbac_kinds_get_their_defaults() {
    let hpa = defaulted(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"maxReplicas": 5}}),
    );
    assert_eq!(hpa["spec"]["minReplicas"], 1);
    assert_eq!(
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
    assert!(hpa["spec"].get("behavior").is_none());
    let tuned = defaulted(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        json!({"spec": {"behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}),
    );
    let behavior = &tuned["spec"]["behavior"];
    assert_eq!(
        behavior["scaleUp"]["policies"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(behavior["scaleUp"]["stabilizationWindowSeconds"], 0);
    assert_eq!(
        behavior["scaleDown"],
        json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
               "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]})
    );

    let policy = defaulted(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(policy["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let ingress_only = defaulted(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        json!({"spec": {"podSelector": {}}}),
    );
    assert_eq!(ingress_only["spec"]["policyTypes"], json!(["Ingress"]));
    let class = defaulted(
        "networking.k8s.io",
        "v1",
        "IngressClass",
        json!({"spec": {"parameters": {"kind": "Params", "name": "p"}}}),
    );
    assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");

    let binding = defaulted(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [
            {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}
        ]}),
    );
    assert_eq!(binding["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(
        binding["subjects"][0]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert_eq!(
        binding["subjects"][1]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert!(binding["subjects"][2].get("apiGroup").is_none());
}
