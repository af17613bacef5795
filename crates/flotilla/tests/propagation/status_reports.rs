//! What a binding records of its template and its Works' reports: the specification's version
//! (not the status writes'), and the reports that came while a cluster stays silent.

use super::*;

/// A binding names the template's resource version at which its specification last changed:
/// a status written on the template since (by the binding-status controller, or anyone) is not
/// a new version, so the binding is not rewritten (and rescheduled) for it — even when the
/// detector rebuilds it for another reason — while a change of the specification is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_names_the_templates_specification_version_not_its_status_writes() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ver"}}))
        .await;
    world
        .apply(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "ver"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                    "containers": [{"name": "web", "image": "nginx:1.27"}]}}}}))
        .await;
    let policy = |clusters: &[&str]| {
        json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "web", "namespace": "ver"},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "placement": {"clusterAffinity": {"clusterNames": clusters}}}})
    };
    world.apply(policy(&["member1"])).await;
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), "ver");
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "ver");
    let claimed = eventually("template bound", || async {
        let binding = rbs.get_opt("web-deployment").await.expect("get rb")?;
        Some(binding.spec.resource.resource_version)
    })
    .await;

    // A status write moves the template's resource version, not its specification.
    let mut template = deployments.get_status("web").await.expect("template");
    template.status = Some(serde_json::from_value(json!({"replicas": 2})).expect("status"));
    template.metadata.managed_fields = None;
    let written = deployments
        .replace_status("web", &PostParams::default(), &template)
        .await
        .expect("status written");
    assert_ne!(written.metadata.resource_version, Some(claimed.clone()));

    // The policy changes: the detector rebuilds the binding, which still names the version
    // of the specification.
    Api::<PropagationPolicy>::namespaced(world.client.clone(), "ver")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(policy(&["member1", "member2"])),
        )
        .await
        .expect("policy changed");
    let binding = eventually("binding rebuilt for the new placement", || async {
        let binding = rbs.get("web-deployment").await.expect("rb");
        let placement = serde_json::to_value(&binding.spec.placement).expect("json");
        (placement["clusterAffinity"]["clusterNames"] == json!(["member1", "member2"]))
            .then_some(binding)
    })
    .await;
    assert_eq!(binding.spec.resource.resource_version, claimed);

    // A change of the specification is named.
    let changed = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("scaled");
    let version = changed.metadata.resource_version.expect("version");
    eventually("binding names the new specification", || async {
        let binding = rbs.get("web-deployment").await.expect("rb");
        (binding.spec.resource.resource_version == version && binding.spec.replicas == 3)
            .then_some(())
    })
    .await;
}

/// A binding's status waits for its Works to report (one aggregation for all of them), but
/// not forever: the reports that came are shown while another cluster stays silent, and the
/// last report completes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_shows_the_reports_that_came_while_a_cluster_stays_silent() {
    let world = World::start(&["cn-shanghai", "us-west-2", "eu-central-1"]).await;
    world.apply(fixture("deployment.yaml")).await;
    world.apply(fixture("propagationpolicy.yaml")).await;
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), "default");
    let binding = eventually("binding scheduled", || async {
        let b = rbs.get_opt(BINDING).await.expect("get rb")?;
        (targets(&b).len() == 3).then_some(b)
    })
    .await;
    for cluster in targets(&binding).keys() {
        eventually("work rendered", || work_of(&world, cluster)).await;
    }
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), "default");
    let generation = deployments
        .get("vllm-inference")
        .await
        .expect("template")
        .metadata
        .generation
        .expect("generation");
    let report = |cluster: &'static str, replicas: i32| {
        let works = Api::<Work>::namespaced(world.client.clone(), &format!("karmada-es-{cluster}"));
        async move {
            works
                .patch_status(
                    &work_name("Deployment", "vllm-inference", "default"),
                    &PatchParams::default(),
                    &Patch::Merge(reported(replicas, generation)),
                )
                .await
                .expect("work status");
        }
    };
    report("cn-shanghai", 5).await;
    report("us-west-2", 3).await;
    // eu-central-1 stays silent: the two reports are aggregated after the wait.
    let partial = eventually("the reports that came, aggregated", || async {
        let status = rbs.get_opt(BINDING).await.expect("get rb")?.status?;
        (status
            .aggregated_status
            .iter()
            .filter(|i| i.applied)
            .count()
            == 2)
            .then_some(status)
    })
    .await;
    assert!(
        partial
            .conditions
            .iter()
            .any(|c| c.type_ == "FullyApplied" && c.status == "False"),
        "{:?}",
        partial.conditions
    );
    let ready = eventually("template status from two clusters", || async {
        let d = deployments.get("vllm-inference").await.expect("template");
        d.status?.ready_replicas
    })
    .await;
    assert_eq!(ready, 8);
    report("eu-central-1", 2).await;
    eventually("FullyApplied once the last cluster reported", || async {
        let status = rbs.get_opt(BINDING).await.expect("get rb")?.status?;
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "FullyApplied" && c.status == "True")
            .then_some(())
    })
    .await;
    eventually("template status from all clusters", || async {
        let d = deployments.get("vllm-inference").await.expect("template");
        (d.status?.ready_replicas == Some(10)).then_some(())
    })
    .await;
}
