//! The built-in resources: the Kubernetes kinds Flotilla serves and Karmada's kinds, with
//! Karmada's names, short names, categories and printer columns (from Karmada's CRDs and its
//! aggregated API server's table convertor).

use super::{Column, Printer, ResourceInfo, ScalePaths};

struct Def(ResourceInfo);

fn def(group: &str, version: &str, kind: &str, plural: &str) -> Def {
    Def(ResourceInfo {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        list_kind: format!("{kind}List"),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        namespaced: false,
        short_names: Vec::new(),
        categories: Vec::new(),
        status: false,
        scale: None,
        columns: Vec::new(),
        printer: Printer::BuiltIn,
        generation: false,
        crd: None,
        schema: None,
        storage_group: None,
    })
}

impl Def {
    fn ns(mut self) -> Self {
        self.0.namespaced = true;
        self
    }
    fn short(mut self, names: &[&str]) -> Self {
        self.0.short_names = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }
    fn cat(mut self, categories: &[&str]) -> Self {
        self.0.categories = categories.iter().map(|s| (*s).to_owned()).collect();
        self
    }
    fn status(mut self) -> Self {
        self.0.status = true;
        self
    }
    fn generation(mut self) -> Self {
        self.0.generation = true;
        self
    }
    fn scale(mut self, selector: bool) -> Self {
        self.0.scale = Some(ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: selector.then(|| ".status.selector".into()),
        });
        self
    }
    fn columns(mut self, columns: &[(&str, &str, &str, i32)]) -> Self {
        self.0.printer = Printer::Columns;
        self.0.columns = columns
            .iter()
            .map(|(name, type_, path, priority)| Column {
                name: (*name).into(),
                type_: (*type_).into(),
                json_path: (*path).into(),
                priority: *priority,
                description: String::new(),
            })
            .collect();
        self
    }
    /// Objects stored as `group`'s resource of the same plural (one resource, two views).
    fn stored_in(mut self, group: &str) -> Self {
        self.0.storage_group = Some(group.into());
        self
    }
    /// A kind printed with NAME and AGE only (no built-in printer, no extra columns).
    fn plain(mut self) -> Self {
        self.0.printer = Printer::Columns;
        self
    }
}

const KARMADA: &[&str] = &["karmada-io"];
const ALL: &[&str] = &["all"];

fn condition(kind: &str) -> String {
    format!(".status.conditions[?(@.type==\"{kind}\")].status")
}

/// Every built-in resource, in no particular order.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    let applied = condition("Applied");
    let policy_columns: &[(&str, &str, &str, i32)] = &[
        (
            "CONFLICT-RESOLUTION",
            "string",
            ".spec.conflictResolution",
            0,
        ),
        ("PRIORITY", "string", ".spec.priority", 0),
    ];
    let defs = vec![
        // core/v1
        def("", "v1", "Namespace", "namespaces")
            .short(&["ns"])
            .status(),
        def("", "v1", "ConfigMap", "configmaps").ns().short(&["cm"]),
        def("", "v1", "Secret", "secrets").ns(),
        def("", "v1", "Service", "services")
            .ns()
            .short(&["svc"])
            .cat(ALL)
            .status(),
        // discovery.k8s.io/v1: the endpoints behind a Service (kube's EndpointSlice controller
        // in a member, Karmada's MultiClusterService controllers across members).
        def("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices").ns(),
        def("", "v1", "ServiceAccount", "serviceaccounts")
            .ns()
            .short(&["sa"]),
        def("", "v1", "Event", "events").ns().short(&["ev"]),
        def("", "v1", "Endpoints", "endpoints").ns().short(&["ep"]),
        def("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
            .ns()
            .short(&["pvc"])
            .status(),
        def("", "v1", "PersistentVolume", "persistentvolumes")
            .short(&["pv"])
            .status(),
        def("", "v1", "Pod", "pods")
            .ns()
            .short(&["po"])
            .cat(ALL)
            .status(),
        def("", "v1", "PodTemplate", "podtemplates").ns(),
        def("", "v1", "Node", "nodes").short(&["no"]).status(),
        def("", "v1", "ResourceQuota", "resourcequotas")
            .ns()
            .short(&["quota"])
            .status(),
        def("", "v1", "LimitRange", "limitranges")
            .ns()
            .short(&["limits"]),
        // apps/v1
        def("apps", "v1", "Deployment", "deployments")
            .ns()
            .short(&["deploy"])
            .cat(ALL)
            .status()
            .generation()
            .scale(true),
        def("apps", "v1", "StatefulSet", "statefulsets")
            .ns()
            .short(&["sts"])
            .cat(ALL)
            .status()
            .generation()
            .scale(true),
        def("apps", "v1", "DaemonSet", "daemonsets")
            .ns()
            .short(&["ds"])
            .cat(ALL)
            .status()
            .generation(),
        def("apps", "v1", "ReplicaSet", "replicasets")
            .ns()
            .short(&["rs"])
            .cat(ALL)
            .status()
            .generation()
            .scale(true),
        def("apps", "v1", "ControllerRevision", "controllerrevisions").ns(),
        // batch/v1
        def("batch", "v1", "Job", "jobs")
            .ns()
            .cat(ALL)
            .status()
            .generation(),
        def("batch", "v1", "CronJob", "cronjobs")
            .ns()
            .short(&["cj"])
            .cat(ALL)
            .status()
            .generation(),
        // autoscaling/v2, policy/v1
        def(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
        )
        .ns()
        .short(&["hpa"])
        .cat(ALL)
        .status()
        .generation(),
        def(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
        )
        .ns()
        .short(&["pdb"])
        .status()
        .generation(),
        // scheduling.k8s.io/v1
        def(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
        )
        .short(&["pc"]),
        // networking.k8s.io/v1
        def(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
        )
        .ns()
        .short(&["netpol"])
        .generation(),
        def("networking.k8s.io", "v1", "Ingress", "ingresses")
            .ns()
            .short(&["ing"])
            .status()
            .generation(),
        def("networking.k8s.io", "v1", "IngressClass", "ingressclasses"),
        // apiregistration.k8s.io/v1 (kube-aggregator's; crate::api_services)
        def("apiregistration.k8s.io", "v1", "APIService", "apiservices")
            .cat(&["api-extensions"])
            .status(),
        // rbac.authorization.k8s.io/v1
        def("rbac.authorization.k8s.io", "v1", "Role", "roles").ns(),
        def(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
        )
        .ns(),
        def(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
        ),
        def(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
        ),
        // certificates.k8s.io/v1 (the approval subresource: see `crate::certificates`)
        def(
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
        )
        .short(&["csr"])
        .status(),
        // coordination.k8s.io/v1
        def("coordination.k8s.io", "v1", "Lease", "leases").ns(),
        // events.k8s.io/v1: the core Events, converted (see `crate::events`).
        def("events.k8s.io", "v1", "Event", "events")
            .ns()
            .short(&["ev"])
            .stored_in(""),
        // apiextensions.k8s.io/v1
        def(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        )
        .short(&["crd", "crds"])
        .cat(&["api-extensions"])
        .status()
        .generation(),
        // cluster.karmada.io/v1alpha1 (Karmada serves it from its aggregated API server)
        def("cluster.karmada.io", "v1alpha1", "Cluster", "clusters")
            .status()
            .generation(),
        // policy.karmada.io/v1alpha1
        def(
            "policy.karmada.io",
            "v1alpha1",
            "PropagationPolicy",
            "propagationpolicies",
        )
        .ns()
        .short(&["pp"])
        .cat(KARMADA)
        .generation()
        .columns(policy_columns),
        def(
            "policy.karmada.io",
            "v1alpha1",
            "ClusterPropagationPolicy",
            "clusterpropagationpolicies",
        )
        .short(&["cpp"])
        .cat(KARMADA)
        .generation()
        .columns(policy_columns),
        def(
            "policy.karmada.io",
            "v1alpha1",
            "OverridePolicy",
            "overridepolicies",
        )
        .ns()
        .short(&["op"])
        .cat(KARMADA)
        .generation()
        .plain(),
        def(
            "policy.karmada.io",
            "v1alpha1",
            "ClusterOverridePolicy",
            "clusteroverridepolicies",
        )
        .short(&["cop"])
        .cat(KARMADA)
        .generation()
        .plain(),
        def(
            "policy.karmada.io",
            "v1alpha1",
            "FederatedResourceQuota",
            "federatedresourcequotas",
        )
        .ns()
        .cat(KARMADA)
        .status()
        .generation()
        .columns(&[
            ("OVERALL", "string", ".status.overall", 0),
            ("OVERALL_USED", "string", ".status.overallUsed", 0),
        ]),
        def(
            "policy.karmada.io",
            "v1alpha1",
            "ClusterTaintPolicy",
            "clustertaintpolicies",
        )
        .cat(KARMADA)
        .generation()
        .plain(),
        // work.karmada.io
        def("work.karmada.io", "v1alpha1", "Work", "works")
            .ns()
            .short(&["wk"])
            .cat(KARMADA)
            .status()
            .generation()
            .columns(&[
                (
                    "WORKLOAD-KIND",
                    "string",
                    ".spec.workload.manifests[*].kind",
                    0,
                ),
                ("APPLIED", "string", &applied, 0),
            ]),
        def(
            "work.karmada.io",
            "v1alpha2",
            "ResourceBinding",
            "resourcebindings",
        )
        .ns()
        .short(&["rb"])
        .cat(KARMADA)
        .status()
        .generation(),
        def(
            "work.karmada.io",
            "v1alpha2",
            "ClusterResourceBinding",
            "clusterresourcebindings",
        )
        .short(&["crb"])
        .cat(KARMADA)
        .status()
        .generation(),
        // config.karmada.io/v1alpha1
        def(
            "config.karmada.io",
            "v1alpha1",
            "ResourceInterpreterCustomization",
            "resourceinterpretercustomizations",
        )
        .short(&["ric"])
        .cat(KARMADA)
        .generation()
        .columns(&[
            ("TARGET-API-VERSION", "string", ".spec.target.apiVersion", 0),
            ("TARGET-KIND", "string", ".spec.target.kind", 0),
        ]),
        def(
            "config.karmada.io",
            "v1alpha1",
            "ResourceInterpreterWebhookConfiguration",
            "resourceinterpreterwebhookconfigurations",
        )
        .cat(KARMADA)
        .plain(),
        // networking.karmada.io/v1alpha1
        def(
            "networking.karmada.io",
            "v1alpha1",
            "MultiClusterService",
            "multiclusterservices",
        )
        .ns()
        .short(&["mcs"])
        .cat(KARMADA)
        .status()
        .generation()
        .plain(),
        def(
            "networking.karmada.io",
            "v1alpha1",
            "MultiClusterIngress",
            "multiclusteringresses",
        )
        .ns()
        .short(&["mci"])
        .cat(KARMADA)
        .status()
        .generation()
        .plain(),
        // autoscaling.karmada.io/v1alpha1
        def(
            "autoscaling.karmada.io",
            "v1alpha1",
            "FederatedHPA",
            "federatedhpas",
        )
        .ns()
        .short(&["fhpa"])
        .cat(KARMADA)
        .status()
        .generation()
        .columns(&[
            ("REFERENCE-KIND", "string", ".spec.scaleTargetRef.kind", 0),
            ("REFERENCE-NAME", "string", ".spec.scaleTargetRef.name", 0),
            ("MINPODS", "integer", ".spec.minReplicas", 0),
            ("MAXPODS", "integer", ".spec.maxReplicas", 0),
            ("REPLICAS", "integer", ".status.currentReplicas", 0),
        ]),
        def(
            "autoscaling.karmada.io",
            "v1alpha1",
            "CronFederatedHPA",
            "cronfederatedhpas",
        )
        .ns()
        .short(&["cronfhpa"])
        .cat(KARMADA)
        .status()
        .generation()
        .columns(&[
            ("REFERENCE-KIND", "string", ".spec.scaleTargetRef.kind", 0),
            ("REFERENCE-NAME", "string", ".spec.scaleTargetRef.name", 0),
        ]),
        // apps.karmada.io/v1alpha1, remedy.karmada.io/v1alpha1
        def(
            "apps.karmada.io",
            "v1alpha1",
            "WorkloadRebalancer",
            "workloadrebalancers",
        )
        .cat(KARMADA)
        .status()
        .generation()
        .plain(),
        def("remedy.karmada.io", "v1alpha1", "Remedy", "remedies")
            .cat(KARMADA)
            .generation()
            .plain(),
        // search.karmada.io/v1alpha1, served by karmada-search's own API server: no category,
        // no short name, no generation, and kube's default table (NAME, CREATED AT).
        def(
            "search.karmada.io",
            "v1alpha1",
            "ResourceRegistry",
            "resourceregistries",
        )
        .status(),
    ];
    defs.into_iter().map(|d| d.0).collect()
}
