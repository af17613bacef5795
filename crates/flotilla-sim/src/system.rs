//! What a kind cluster has besides its workers (`systemComponents`): the objects kubeadm and
//! kind create in `kube-system`, so that tools and test suites written against kind clusters
//! (Karmada's e2e looks for `<member>-control-plane`, `etcd-<member>-control-plane`, `coredns`
//! and `kube-proxy`) find them in a simulated member.
//!
//! - the control-plane node `<cluster>-control-plane` (planned with the workers:
//!   [`crate::nodes::plan`]; tainted `node-role.kubernetes.io/control-plane:NoSchedule`);
//! - its static pods, as the API server shows them (mirror pods, owned by the Node, on the
//!   node's network): `etcd-`, `kube-apiserver-`, `kube-controller-manager-` and
//!   `kube-scheduler-<node>`, with kubeadm's labels (`component`, `tier: control-plane`),
//!   priority class and CPU requests;
//! - CoreDNS: ServiceAccount and ConfigMap `coredns`, Deployment `coredns` (2 replicas,
//!   `k8s-app: kube-dns`, kubeadm's requests and limits) and Service `kube-dns` at the tenth
//!   address of the service range (`10.96.0.10`, ports 53/UDP, 53/TCP, 9153/TCP);
//! - kube-proxy: ServiceAccount and ConfigMap `kube-proxy`, DaemonSet `kube-proxy` (host
//!   network, tolerating every taint: one pod per node).
//!
//! The simulated controllers run them like any workload (the pods start, the Service gets its
//! endpoints). Created once, when the cluster starts; deleting them is allowed (nothing puts
//! them back, unlike a kubelet's static pods).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Service, ServiceAccount};
use kube::api::{Api, PostParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::SimError;
use crate::cluster::Ctx;
use crate::nodes::{NodeTable, control_plane_name};

/// The kube-system objects' Kubernetes version (the sim's `kubeletVersion`).
const VERSION: &str = "v1.32.0";
/// CoreDNS's Service address: the tenth of the service range (kubeadm's choice).
pub const DNS_SERVICE_IP: &str = "10.96.0.10";

/// kubeadm's static pods: component, image, CPU request.
const STATIC_PODS: [(&str, &str, &str); 4] = [
    ("etcd", "registry.k8s.io/etcd:3.5.16-0", "100m"),
    ("kube-apiserver", "registry.k8s.io/kube-apiserver", "250m"),
    (
        "kube-controller-manager",
        "registry.k8s.io/kube-controller-manager",
        "200m",
    ),
    ("kube-scheduler", "registry.k8s.io/kube-scheduler", "100m"),
];

/// Creates the system components of the cluster whose nodes are `table` (after
/// [`crate::nodes::create_all`]).
pub async fn create(ctx: &Ctx, table: &NodeTable) -> Result<(), SimError> {
    let node_name = control_plane_name(&ctx.name);
    let Some(node) = table.get(&node_name) else {
        return Err(SimError::internal(format!(
            "no control-plane node {node_name} was planned"
        )));
    };
    let nodes: Api<Node> = Api::all(ctx.client.clone());
    let uid = nodes
        .get(&node_name)
        .await
        .map_err(|source| SimError::Api {
            step: "read the control-plane node",
            source,
        })?
        .metadata
        .uid
        .unwrap_or_default();
    for object in service_accounts() {
        create_one::<ServiceAccount>(ctx, object, "create a system ServiceAccount").await?;
    }
    for object in config_maps(&ctx.name) {
        create_one::<ConfigMap>(ctx, object, "create a system ConfigMap").await?;
    }
    for object in static_pods(&node_name, &uid, &node.internal_ip) {
        create_one::<Pod>(ctx, object, "create a static pod").await?;
    }
    create_one::<Service>(ctx, dns_service(), "create the kube-dns Service").await?;
    create_one::<Deployment>(ctx, coredns(), "create the coredns Deployment").await?;
    create_one::<DaemonSet>(ctx, kube_proxy(), "create the kube-proxy DaemonSet").await?;
    Ok(())
}

async fn create_one<K>(ctx: &Ctx, object: Value, step: &'static str) -> Result<(), SimError>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + DeserializeOwned
        + serde::Serialize,
{
    let typed: K =
        serde_json::from_value(object).map_err(|e| SimError::internal(format!("{step}: {e}")))?;
    let api: Api<K> = Api::namespaced(ctx.client.clone(), "kube-system");
    match api.create(&PostParams::default(), &typed).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(source) => Err(SimError::Api { step, source }),
    }
}

fn service_accounts() -> Vec<Value> {
    ["coredns", "kube-proxy"]
        .iter()
        .map(|name| json!({"metadata": {"name": name, "namespace": "kube-system"}}))
        .collect()
}

fn config_maps(cluster: &str) -> Vec<Value> {
    let corefile = ".:53 {\n    errors\n    health {\n       lameduck 5s\n    }\n    ready\n    \
        kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n       \
        fallthrough in-addr.arpa ip6.arpa\n       ttl 30\n    }\n    prometheus :9153\n    \
        forward . /etc/resolv.conf {\n       max_concurrent 1000\n    }\n    cache 30\n    \
        loop\n    reload\n    loadbalance\n}\n";
    let proxy = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n\
        clusterCIDR: 10.244.0.0/16\nmode: iptables\n";
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: \
         /var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n    server: \
         https://{cluster}-control-plane:6443\n  name: default\ncontexts:\n- context:\n    \
         cluster: default\n    namespace: default\n    user: default\n  name: default\n\
         current-context: default\nusers:\n- name: default\n  user:\n    tokenFile: \
         /var/run/secrets/kubernetes.io/serviceaccount/token\n"
    );
    vec![
        json!({"metadata": {"name": "coredns", "namespace": "kube-system"},
            "data": {"Corefile": corefile}}),
        json!({"metadata": {"name": "kube-proxy", "namespace": "kube-system",
                "labels": {"app": "kube-proxy"}},
            "data": {"config.conf": proxy, "kubeconfig.conf": kubeconfig}}),
    ]
}

/// The mirror pods of kubeadm's static pods on `node` (uid `uid`, address `ip`).
fn static_pods(node: &str, uid: &str, ip: &str) -> Vec<Value> {
    STATIC_PODS
        .iter()
        .map(|(component, image, cpu)| {
            let image = if image.contains(':') {
                (*image).to_owned()
            } else {
                format!("{image}:{VERSION}")
            };
            let hash = format!(
                "{:016x}",
                crate::rng::mix(0, &format!("{component}/{node}"))
            );
            let mut command = vec![component.to_string()];
            command.extend(match *component {
                "etcd" => vec![
                    format!("--advertise-client-urls=https://{ip}:2379"),
                    "--data-dir=/var/lib/etcd".to_owned(),
                    format!("--listen-client-urls=https://127.0.0.1:2379,https://{ip}:2379"),
                    format!("--name={node}"),
                ],
                "kube-apiserver" => vec![
                    format!("--advertise-address={ip}"),
                    "--secure-port=6443".to_owned(),
                    format!(
                        "--service-cluster-ip-range={}",
                        crate::cluster::SERVICE_CLUSTER_IP_RANGE
                    ),
                ],
                "kube-controller-manager" => vec![
                    "--allocate-node-cidrs=true".to_owned(),
                    "--cluster-cidr=10.244.0.0/16".to_owned(),
                    "--leader-elect=true".to_owned(),
                ],
                _ => vec!["--leader-elect=true".to_owned()],
            });
            json!({
                "metadata": {
                    "name": format!("{component}-{node}"),
                    "namespace": "kube-system",
                    "labels": {"component": component, "tier": "control-plane"},
                    "annotations": {
                        "kubernetes.io/config.hash": hash,
                        "kubernetes.io/config.mirror": hash,
                        "kubernetes.io/config.source": "file",
                    },
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                        "uid": uid, "controller": true}],
                },
                "spec": {
                    "nodeName": node,
                    "hostNetwork": true,
                    "priorityClassName": "system-node-critical",
                    "containers": [{
                        "name": component,
                        "image": image,
                        "command": command,
                        "resources": {"requests": {"cpu": cpu}},
                    }],
                    "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
                },
            })
        })
        .collect()
}

fn dns_service() -> Value {
    json!({
        "metadata": {
            "name": "kube-dns",
            "namespace": "kube-system",
            "labels": {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                "kubernetes.io/name": "CoreDNS"},
            "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"},
        },
        "spec": {
            "clusterIP": DNS_SERVICE_IP,
            "selector": {"k8s-app": "kube-dns"},
            "ports": [
                {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
            ],
        },
    })
}

fn coredns() -> Value {
    let labels = BTreeMap::from([("k8s-app", "kube-dns")]);
    json!({
        "metadata": {"name": "coredns", "namespace": "kube-system", "labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "coredns",
                    "priorityClassName": "system-cluster-critical",
                    "dnsPolicy": "Default",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [
                        {"key": "CriticalAddonsOnly", "operator": "Exists"},
                        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
                    ],
                    "containers": [{
                        "name": "coredns",
                        "image": "registry.k8s.io/coredns/coredns:v1.11.3",
                        "args": ["-conf", "/etc/coredns/Corefile"],
                        "ports": [
                            {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                            {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                            {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
                        ],
                        "resources": {"limits": {"memory": "170Mi"},
                            "requests": {"cpu": "100m", "memory": "70Mi"}},
                        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns",
                            "readOnly": true}],
                    }],
                    "volumes": [{"name": "config-volume", "configMap": {"name": "coredns",
                        "items": [{"key": "Corefile", "path": "Corefile"}]}}],
                },
            },
        },
    })
}

fn kube_proxy() -> Value {
    let labels = BTreeMap::from([("k8s-app", "kube-proxy")]);
    json!({
        "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "kube-proxy",
                    "hostNetwork": true,
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{
                        "name": "kube-proxy",
                        "image": format!("registry.k8s.io/kube-proxy:{VERSION}"),
                        "command": ["/usr/local/bin/kube-proxy",
                            "--config=/var/lib/kube-proxy/config.conf",
                            "--hostname-override=$(NODE_NAME)"],
                        "env": [{"name": "NODE_NAME", "valueFrom":
                            {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                        "securityContext": {"privileged": true},
                        "volumeMounts": [{"name": "kube-proxy",
                            "mountPath": "/var/lib/kube-proxy"}],
                    }],
                    "volumes": [{"name": "kube-proxy", "configMap": {"name": "kube-proxy"}}],
                },
            },
        },
    })
}
