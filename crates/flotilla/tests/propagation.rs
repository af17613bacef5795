//! Propagation on the control plane: the resource detector, the live scheduler, the binding
//! controller and the binding status controller against an in-process API server with Cluster
//! objects (no members: the test plays the member side by writing Work status). The vLLM
//! scenario's manifests are the fixtures in `tests/propagation/`.

#[path = "propagation/world.rs"]
mod world;

#[path = "propagation/claims.rs"]
mod claims;

#[path = "propagation/override_events.rs"]
mod override_events;

#[path = "propagation/deps_and_namespaces.rs"]
mod deps_and_namespaces;

#[path = "propagation/work_deleted.rs"]
mod work_deleted;

#[path = "propagation/status_reports.rs"]
mod status_reports;

#[path = "propagation/failover_policies.rs"]
mod failover_policies;

#[path = "propagation/eviction.rs"]
mod eviction;

#[path = "propagation/cron_federated_hpa.rs"]
mod cron_federated_hpa;

#[path = "propagation/remedy.rs"]
mod remedy;

#[path = "propagation/workload_affinity.rs"]
mod workload_affinity;

#[path = "propagation/quota_join.rs"]
mod quota_join;

use std::collections::BTreeMap;

use flotilla_api::karmada::names::work_name;
use flotilla_api::karmada::{PropagationPolicy, ResourceBinding, Work};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use world::{World, eventually, fixture};

const PP_ID: &str = "propagationpolicy.karmada.io/permanent-id";
const BINDING: &str = "vllm-inference-deployment";

fn targets(binding: &ResourceBinding) -> BTreeMap<String, i32> {
    binding
        .spec
        .clusters
        .iter()
        .map(|c| (c.name.clone(), c.replicas))
        .collect()
}

fn expected(pairs: &[(&str, i32)]) -> BTreeMap<String, i32> {
    pairs.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect()
}

async fn work_of(world: &World, cluster: &str) -> Option<Work> {
    Api::<Work>::namespaced(world.client.clone(), &format!("karmada-es-{cluster}"))
        .get_opt(&work_name("Deployment", "vllm-inference", "default"))
        .await
        .expect("get work")
}

fn manifest(work: &Work) -> Value {
    work.spec
        .workload
        .manifests
        .first()
        .expect("one manifest")
        .to_value()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllm_is_bound_scheduled_and_rendered_into_works_with_overrides() {
    let world = World::start(&["cn-shanghai", "us-west-2", "eu-central-1"]).await;
    world.apply(fixture("overridepolicy.yaml")).await;
    world.apply(fixture("deployment.yaml")).await;
    world.apply(fixture("propagationpolicy.yaml")).await;

    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "default");
    let binding = eventually("binding scheduled 5/3/2", || async {
        let b = rbs.get_opt(BINDING).await.expect("get rb")?;
        (targets(&b) == expected(&[("cn-shanghai", 5), ("us-west-2", 3), ("eu-central-1", 2)]))
            .then_some(b)
    })
    .await;

    // The binding: Karmada's spec, owner, claim metadata.
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), "default");
    let template = deployments.get("vllm-inference").await.expect("template");
    let policy = Api::<PropagationPolicy>::namespaced(world.client.clone(), "default")
        .get("vllm-propagation")
        .await
        .expect("policy");
    let policy_id = policy.metadata.labels.as_ref().expect("labels")[PP_ID].clone();
    let spec = serde_json::to_value(&binding.spec).expect("spec");
    assert_eq!(spec["resource"]["apiVersion"], "apps/v1");
    assert_eq!(spec["resource"]["kind"], "Deployment");
    assert_eq!(spec["resource"]["namespace"], "default");
    assert_eq!(spec["resource"]["name"], "vllm-inference");
    assert_eq!(
        spec["resource"]["uid"],
        json!(template.metadata.uid.clone().expect("uid"))
    );
    assert_eq!(spec["replicas"], 10);
    assert_eq!(
        spec["replicaRequirements"]["resourceRequest"],
        json!({"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"})
    );
    assert_eq!(
        spec["replicaRequirements"]["nodeClaim"]["hardNodeAffinity"]["nodeSelectorTerms"][0]["matchExpressions"]
            [0]["key"],
        "nvidia.com/gpu.memory"
    );
    assert_eq!(
        spec["placement"]["replicaScheduling"]["replicaSchedulingType"],
        "Divided"
    );
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["conflictResolution"], "Abort");
    let owner = &binding.metadata.owner_references.as_ref().expect("owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Deployment", "vllm-inference", Some(true))
    );
    assert_eq!(owner.uid, template.metadata.uid.clone().expect("uid"));
    assert_eq!(
        binding.metadata.labels.as_ref().expect("labels")[PP_ID],
        policy_id
    );
    assert!(
        binding
            .metadata
            .labels
            .as_ref()
            .expect("labels")
            .contains_key("resourcebinding.karmada.io/permanent-id")
    );
    assert_eq!(
        binding.metadata.finalizers,
        Some(vec!["karmada.io/binding-controller".to_owned()])
    );
    let annotations = binding.metadata.annotations.clone().expect("annotations");
    assert_eq!(
        annotations["propagationpolicy.karmada.io/name"],
        "vllm-propagation"
    );
    assert_eq!(
        annotations["propagationpolicy.karmada.io/namespace"],
        "default"
    );

    // The template is claimed.
    let labels = template.metadata.labels.clone().expect("labels");
    assert_eq!(labels[PP_ID], policy_id);
    let annotations = template.metadata.annotations.clone().expect("annotations");
    assert_eq!(
        annotations["propagationpolicy.karmada.io/name"],
        "vllm-propagation"
    );

    // One Work per cluster, replicas revised, overrides applied.
    let rb_id = binding.metadata.labels.as_ref().expect("labels")
        ["resourcebinding.karmada.io/permanent-id"]
        .clone();
    for (cluster, replicas, image) in [
        (
            "cn-shanghai",
            5,
            "registry.cn-shanghai.example.com/vllm-project/vllm:v0.4.2",
        ),
        ("us-west-2", 3, "ghcr.io/vllm-project/vllm:v0.4.2"),
        ("eu-central-1", 2, "ghcr.io/vllm-project/vllm:v0.4.2"),
    ] {
        let work = eventually("work written", || work_of(&world, cluster)).await;
        let m = manifest(&work);
        assert_eq!(m["spec"]["replicas"], replicas, "{cluster}");
        assert_eq!(
            m["spec"]["template"]["spec"]["containers"][0]["image"],
            image
        );
        assert_eq!(
            m["spec"]["template"]["spec"]["nodeSelector"],
            json!({"topology.kubernetes.io/region": cluster})
        );
        assert_eq!(m["metadata"]["labels"]["karmada.io/managed"], "true");
        assert_eq!(
            m["metadata"]["labels"]["resourcebinding.karmada.io/permanent-id"],
            json!(rb_id)
        );
        assert!(m.get("status").is_none());
        assert!(m["metadata"].get("uid").is_none());
        let a = &m["metadata"]["annotations"];
        assert_eq!(a["resourcebinding.karmada.io/name"], BINDING);
        assert_eq!(
            a["work.karmada.io/namespace"],
            format!("karmada-es-{cluster}")
        );
        assert_eq!(a["work.karmada.io/conflict-resolution"], "abort");
        assert_eq!(
            a["resourcetemplate.karmada.io/uid"],
            json!(template.metadata.uid.clone().expect("uid"))
        );
        let work_annotations = work.metadata.annotations.clone().expect("annotations");
        let applied: Value =
            serde_json::from_str(&work_annotations["policy.karmada.io/applied-overrides"])
                .expect("applied overrides JSON");
        assert_eq!(applied[0]["policyName"], "vllm-regional");
        assert_eq!(
            applied[0]["overriders"]["plaintext"][0]["value"],
            json!({"topology.kubernetes.io/region": cluster})
        );
        assert_eq!(
            work.metadata.labels.as_ref().expect("labels")["resourcebinding.karmada.io/permanent-id"],
            rb_id
        );
        assert_eq!(
            work.metadata.finalizers,
            Some(vec!["karmada.io/execution-controller".to_owned()])
        );
    }

    // Scale up: the schedule and the Works follow.
    deployments
        .patch(
            "vllm-inference",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 20}})),
        )
        .await
        .expect("scale");
    for (cluster, replicas) in [("cn-shanghai", 10), ("us-west-2", 6), ("eu-central-1", 4)] {
        eventually("work scaled", || async {
            let work = work_of(&world, cluster).await?;
            (manifest(&work)["spec"]["replicas"] == replicas).then_some(())
        })
        .await;
    }

    // eu-central-1 leaves the placement: its Work is deleted.
    let policies = Api::<PropagationPolicy>::namespaced(world.client.clone(), "default");
    policies
        .patch(
            "vllm-propagation",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"placement": {"clusterAffinity": {
                "clusterNames": ["cn-shanghai", "us-west-2"]}}}})),
        )
        .await
        .expect("placement change");
    // Deleted: the execution controller (not running here) would clean the member and then
    // drop the Work's finalizer.
    eventually("eu-central-1 Work deleted", || async {
        let work = work_of(&world, "eu-central-1").await;
        work.is_none_or(|w| w.metadata.deletion_timestamp.is_some())
            .then_some(())
    })
    .await;
    let binding = eventually("rescheduled on two clusters", || async {
        let b = rbs.get_opt(BINDING).await.expect("get rb")?;
        (targets(&b).len() == 2).then_some(b)
    })
    .await;
    let split = targets(&binding);
    assert_eq!(split.values().sum::<i32>(), 20);

    // The test plays the members: Work status → binding aggregatedStatus → template status.
    let template = deployments.get("vllm-inference").await.expect("template");
    let generation = template.metadata.generation.expect("generation");
    for (cluster, replicas) in &split {
        let status = reported(*replicas, generation);
        Api::<Work>::namespaced(world.client.clone(), &format!("karmada-es-{cluster}"))
            .patch_status(
                &work_name("Deployment", "vllm-inference", "default"),
                &PatchParams::default(),
                &Patch::Merge(&status),
            )
            .await
            .expect("work status");
    }
    let binding = eventually("FullyApplied", || async {
        let b = rbs.get_opt(BINDING).await.expect("get rb")?;
        let status = b.status.clone()?;
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "FullyApplied" && c.status == "True")
            .then_some(b)
    })
    .await;
    let items = binding.status.expect("status").aggregated_status;
    let clusters: Vec<&str> = items.iter().map(|i| i.cluster_name.as_str()).collect();
    let mut sorted = clusters.clone();
    sorted.sort_unstable();
    assert_eq!(clusters, sorted, "aggregatedStatus is sorted by cluster");
    assert!(items.iter().all(|i| i.applied && i.health == "Healthy"));
    let template = eventually("template status aggregated", || async {
        let d = deployments.get("vllm-inference").await.expect("template");
        (d.status.as_ref()?.ready_replicas == Some(20)).then_some(d)
    })
    .await;
    // The status writes leave the template's managed fields in place (they are sent without
    // them): the creator's entry is still there, and the status has its own manager.
    let managers: Vec<(Option<&str>, Option<&str>)> = template
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| (e.manager.as_deref(), e.subresource.as_deref()))
        .collect();
    assert!(
        managers.iter().any(|(_, sub)| sub.is_none()),
        "{managers:?}"
    );
    assert!(
        managers.iter().any(|(_, sub)| *sub == Some("status")),
        "{managers:?}"
    );
    let status = template.status.expect("status");
    assert_eq!(status.replicas, Some(20));
    assert_eq!(status.available_replicas, Some(20));
    assert_eq!(status.observed_generation, Some(generation));

    // Deleting the policy unclaims the template and the binding, then lets the policy go.
    policies
        .delete("vllm-propagation", &DeleteParams::default())
        .await
        .expect("delete policy");
    eventually("policy gone", || async {
        policies
            .get_opt("vllm-propagation")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
    let template = eventually("template unclaimed", || async {
        let d = deployments.get("vllm-inference").await.expect("template");
        (!d.metadata
            .labels
            .clone()
            .unwrap_or_default()
            .contains_key(PP_ID))
        .then_some(d)
    })
    .await;
    assert!(
        !template
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key("propagationpolicy.karmada.io/name")
    );
    let binding = eventually("binding unclaimed", || async {
        let b = rbs.get_opt(BINDING).await.expect("get rb")?;
        (!b.metadata
            .labels
            .clone()
            .unwrap_or_default()
            .contains_key(PP_ID))
        .then_some(b)
    })
    .await;
    assert_eq!(
        targets(&binding).len(),
        2,
        "the binding (and members' objects) stay"
    );
    assert!(work_of(&world, "cn-shanghai").await.is_some());
}

async fn work_in(
    world: &World,
    cluster: &str,
    kind: &str,
    name: &str,
    namespace: &str,
) -> Option<Work> {
    Api::<Work>::namespaced(world.client.clone(), &format!("karmada-es-{cluster}"))
        .get_opt(&work_name(kind, name, namespace))
        .await
        .expect("get work")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_dependencies_overrides_and_cluster_scoped_templates_propagate() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
        .await;
    // The namespace reaches every cluster.
    for cluster in ["member1", "member2"] {
        let work = eventually("namespace Work", || {
            work_in(&world, cluster, "Namespace", "shop", "")
        })
        .await;
        let m = manifest(&work);
        assert_eq!(
            (m["kind"].as_str(), m["metadata"]["name"].as_str()),
            (Some("Namespace"), Some("shop"))
        );
        assert_eq!(m["metadata"]["labels"]["karmada.io/managed"], "true");
        let owner = &work.metadata.owner_references.as_ref().expect("owner")[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("Namespace", "shop")
        );
    }

    // A Deployment with propagateDeps carries its ConfigMap along (Duplicated to both).
    world
        .apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "shop"}, "data": {"level": "info"}}))
        .await;
    world
        .apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27",
                     "envFrom": [{"configMapRef": {"name": "settings"}}]}]}}}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"propagateDeps": true,
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}))
        .await;
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "shop");
    let web = eventually("web duplicated", || async {
        let b = rbs.get_opt("web-deployment").await.expect("get")?;
        (targets(&b) == expected(&[("member1", 2), ("member2", 2)])).then_some(b)
    })
    .await;
    let web_id =
        web.metadata.labels.as_ref().expect("labels")["resourcebinding.karmada.io/permanent-id"]
            .clone();
    let attached = eventually("attached ConfigMap binding", || async {
        let b = rbs.get_opt("settings-configmap").await.expect("get")?;
        (b.spec.required_by.len() == 1 && b.spec.required_by[0].clusters.len() == 2).then_some(b)
    })
    .await;
    assert_eq!(attached.spec.required_by[0].name, "web-deployment");
    assert_eq!(attached.spec.required_by[0].namespace, "shop");
    assert!(
        attached
            .metadata
            .labels
            .as_ref()
            .expect("labels")
            .iter()
            .any(|(k, v)| k.starts_with("resourcebinding.karmada.io/depended-by-") && *v == web_id)
    );
    assert_eq!(
        attached.metadata.owner_references.as_ref().expect("owner")[0].kind,
        "ConfigMap"
    );
    for cluster in ["member1", "member2"] {
        let work = eventually("ConfigMap Work", || {
            work_in(&world, cluster, "ConfigMap", "settings", "shop")
        })
        .await;
        assert_eq!(manifest(&work)["data"], json!({"level": "info"}));
    }
    let recorded: Value = eventually("dependencies recorded", || async {
        let web = rbs.get("web-deployment").await.expect("web");
        let text = web
            .metadata
            .annotations?
            .remove("resourcebinding.karmada.io/dependencies")?;
        Some(serde_json::from_str(&text).expect("dependencies JSON"))
    })
    .await;
    assert_eq!(
        recorded,
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "settings"}])
    );

    // An OverridePolicy added later updates only the targeted cluster's Work.
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
            "metadata": {"name": "prod-labels", "namespace": "shop"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "overrideRules": [{"targetCluster": {"clusterNames": ["member2"]},
                    "overriders": {
                        "labelsOverrider": [{"operator": "add", "value": {"env": "prod"}}],
                        "argsOverrider": [{"containerName": "web", "operator": "add", "value": ["--prod"]}]}}]}}))
        .await;
    let work = eventually("override applied in member2", || async {
        let w = work_in(&world, "member2", "Deployment", "web", "shop").await?;
        (manifest(&w)["metadata"]["labels"]["env"] == "prod").then_some(w)
    })
    .await;
    assert_eq!(
        manifest(&work)["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["--prod"])
    );
    let member1 = work_in(&world, "member1", "Deployment", "web", "shop")
        .await
        .expect("work");
    assert!(
        manifest(&member1)["metadata"]["labels"]
            .get("env")
            .is_none()
    );
    assert!(
        !member1
            .metadata
            .annotations
            .unwrap_or_default()
            .contains_key("policy.karmada.io/applied-overrides")
    );

    // A cluster-scoped template: ClusterPropagationPolicy → ClusterResourceBinding → Works.
    world
        .apply(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        )
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": "roles"},
            "spec": {"resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}}))
        .await;
    let crbs = Api::<flotilla_api::karmada::ClusterResourceBinding>::all(world.client.clone());
    let crb = eventually("ClusterResourceBinding scheduled", || async {
        let b = crbs.get_opt("reader-clusterrole").await.expect("get")?;
        (!b.spec.clusters.is_empty()).then_some(b)
    })
    .await;
    assert_eq!(
        crb.metadata.finalizers,
        Some(vec![
            "karmada.io/cluster-resource-binding-controller".to_owned()
        ])
    );
    assert_eq!(
        crb.metadata.annotations.as_ref().expect("annotations")["clusterpropagationpolicy.karmada.io/name"],
        "roles"
    );
    let work = eventually("ClusterRole Work", || {
        work_in(&world, "member1", "ClusterRole", "reader", "")
    })
    .await;
    assert_eq!(
        work.metadata.annotations.as_ref().expect("annotations")["clusterresourcebinding.karmada.io/name"],
        "reader-clusterrole"
    );
    assert_eq!(manifest(&work)["rules"][0]["verbs"], json!(["get"]));
    assert!(
        work_in(&world, "member2", "ClusterRole", "reader", "")
            .await
            .is_none()
    );

    // Deleting the template removes its binding (owner reference), whose finalizers first
    // delete its Works and withdraw the attached ConfigMap binding.
    Api::<Deployment>::namespaced(world.client.clone(), "shop")
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete template");
    eventually("binding gone", || async {
        rbs.get_opt("web-deployment")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
    eventually("attached binding gone", || async {
        rbs.get_opt("settings-configmap")
            .await
            .expect("get")
            .is_none()
            .then_some(())
    })
    .await;
    for cluster in ["member1", "member2"] {
        let work = work_in(&world, cluster, "Deployment", "web", "shop").await;
        assert!(
            work.is_none_or(|w| w.metadata.deletion_timestamp.is_some()),
            "the Work of {cluster} is being deleted"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_resources_are_discovered_and_propagated() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}}))
        .await;
    world
        .apply(
            json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": "widgets"},
            "spec": {"resourceSelectors": [{"apiVersion": "example.com/v1", "kind": "Widget",
                    "labelSelector": {"matchLabels": {"propagate": "yes"}}}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}}),
        )
        .await;
    let widget = |name: &str, propagate: &str| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default", "labels": {"propagate": propagate}},
            "spec": {"size": 3}})
    };
    // The CRD may still be settling into discovery: retry creation until the kind is served.
    let served = eventually("Widget served", || async {
        let discovery = kube::discovery::pinned_kind(
            &world.client,
            &kube::api::GroupVersionKind::gvk("example.com", "v1", "Widget"),
        )
        .await;
        discovery.ok().map(|_| ())
    })
    .await;
    let () = served;
    world.apply(widget("blue", "yes")).await;
    world.apply(widget("red", "no")).await;
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "default");
    let binding = eventually("Widget bound and scheduled", || async {
        let b = rbs.get_opt("blue-widget").await.expect("get")?;
        (!b.spec.clusters.is_empty()).then_some(b)
    })
    .await;
    assert_eq!(binding.spec.resource.kind, "Widget");
    assert_eq!(binding.spec.replicas, 0, "custom kinds are not workloads");
    let work = eventually("Widget Work", || {
        work_in(&world, "member1", "Widget", "blue", "default")
    })
    .await;
    assert_eq!(manifest(&work)["spec"], json!({"size": 3}));
    assert!(
        rbs.get_opt("red-widget").await.expect("get").is_none(),
        "the label selector does not select red"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_created_or_changed_after_its_workload_follows_it() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "late"}}))
        .await;
    // The Deployment and its policy first; the Secret it mounts does not exist yet.
    world
        .apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "late", "labels": {"app": "api"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
                "template": {"metadata": {"labels": {"app": "api"}}, "spec": {
                    "containers": [{"name": "api", "image": "nginx:1.27"}],
                    "volumes": [{"name": "creds", "secret": {"secretName": "db-creds"}}]}}}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "api", "namespace": "late"},
            "spec": {"propagateDeps": true,
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}))
        .await;
    for cluster in ["member1", "member2"] {
        eventually("Deployment Work", || {
            work_in(&world, cluster, "Deployment", "api", "late")
        })
        .await;
    }
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "late");
    eventually(
        "dependencies recorded though the Secret is missing",
        || async {
            let api = rbs.get("api-deployment").await.expect("binding");
            api.metadata
                .annotations?
                .get("resourcebinding.karmada.io/dependencies")
                .cloned()
        },
    )
    .await;
    assert!(
        rbs.get_opt("db-creds-secret").await.expect("get").is_none(),
        "no attached binding for a Secret that does not exist"
    );

    // The Secret arrives later: it is attached and reaches both clusters.
    world
        .apply(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db-creds", "namespace": "late"},
            "stringData": {"password": "one"}}))
        .await;
    let encoded = |s: &str| {
        use base64::Engine as _;
        Value::from(base64::engine::general_purpose::STANDARD.encode(s))
    };
    for cluster in ["member1", "member2"] {
        let work = eventually("Secret Work", || {
            work_in(&world, cluster, "Secret", "db-creds", "late")
        })
        .await;
        assert_eq!(manifest(&work)["data"]["password"], encoded("one"));
    }

    // A change to the Secret is carried to the members too.
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(world.client.clone(), "late")
        .patch(
            "db-creds",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"password": encoded("two")}})),
        )
        .await
        .expect("secret updated");
    for cluster in ["member1", "member2"] {
        eventually("Secret Work updated", || async {
            let work = work_in(&world, cluster, "Secret", "db-creds", "late").await?;
            (manifest(&work)["data"]["password"] == encoded("two")).then_some(())
        })
        .await;
    }
}

/// The Work status the members' side reports for the vLLM Deployment.
fn reported(replicas: i32, generation: i64) -> Value {
    json!({"status": {
        "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful",
            "message": "Manifest has been successfully applied",
            "lastTransitionTime": "2026-12-01T00:00:00Z"}],
        "manifestStatuses": [{
            "identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                "resource": "deployments", "namespace": "default", "name": "vllm-inference"},
            "status": {"replicas": replicas, "updatedReplicas": replicas,
                "readyReplicas": replicas, "availableReplicas": replicas,
                "observedGeneration": 1, "generation": 1,
                "resourceTemplateGeneration": generation},
            "health": "Healthy"}]}})
}

/// Karmada's `JobReplicaScheduling` e2e case: a Job Divided by static weights 1:2:3 with
/// parallelism = completions = 6. Each member's Job gets its share of both (Karmada's binding
/// controller divides `completions` by the clusters' replicas), so the members run 6
/// completions between them, not 6 each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_divided_job_shares_its_completions_across_clusters() {
    let clusters = ["member1", "member2", "member3"];
    let world = World::start(&clusters).await;
    let weights: Vec<Value> = clusters
        .iter()
        .zip(1..)
        .map(|(name, weight)| json!({"targetCluster": {"clusterNames": [name]}, "weight": weight}))
        .collect();
    world
        .apply(
            json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "pi", "namespace": "default"},
            "spec": {"resourceSelectors": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi"}],
                "placement": {"clusterAffinity": {"clusterNames": clusters},
                    "replicaScheduling": {"replicaSchedulingType": "Divided",
                        "replicaDivisionPreference": "Weighted",
                        "weightPreference": {"staticWeightList": weights}}}}}),
        )
        .await;
    world
        .apply(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default"},
            "spec": {"parallelism": 6, "completions": 6,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "perl:5.34"}]}}}}))
        .await;
    for (cluster, share) in clusters.iter().zip(1..) {
        let work = eventually("the Job's Work", || {
            work_in(&world, cluster, "Job", "pi", "default")
        })
        .await;
        let spec = &manifest(&work)["spec"];
        assert_eq!(spec["parallelism"], share, "{cluster}: {spec}");
        assert_eq!(spec["completions"], share, "{cluster}: {spec}");
    }
}
