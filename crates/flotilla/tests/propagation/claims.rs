//! Which policy claims a template when policies come after it: preemption (and its events)
//! and Lazy activation, as Karmada's detector handles them (its e2e suites
//! `preemption_test.go` and `lazy_activation_policy_test.go`).

use flotilla_api::karmada::ResourceBinding;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use crate::world::{World, eventually};

const NS: &str = "claims";
const PP_NAME: &str = "propagationpolicy.karmada.io/name";
const PP_ID: &str = "propagationpolicy.karmada.io/permanent-id";

fn deployment(name: &str) -> Value {
    crate::world::deployment(NS, name)
}

/// A PropagationPolicy selecting the Deployment `target` by name, placing it on `cluster`,
/// with the `extra` spec fields.
fn policy(name: &str, target: &str, cluster: &str, extra: Value) -> Value {
    let mut policy = crate::world::policy(NS, name, target, cluster);
    let spec = policy["spec"].as_object_mut().expect("spec");
    for (key, value) in extra.as_object().expect("extra spec fields") {
        spec.insert(key.clone(), value.clone());
    }
    policy
}

/// The clusters a binding's placement names.
async fn placement(rbs: &Api<ResourceBinding>, name: &str) -> Option<Value> {
    let binding = rbs.get_opt(name).await.expect("get binding")?;
    let placement = serde_json::to_value(&binding.spec.placement).expect("json");
    Some(placement["clusterAffinity"]["clusterNames"].clone())
}

/// The policy named by the template's claim annotation.
async fn claimed_by(deployments: &Api<Deployment>, name: &str) -> Option<String> {
    let template = deployments.get(name).await.expect("template");
    template.metadata.annotations?.get(PP_NAME).cloned()
}

/// The notes of the template's events with `reason`.
async fn notes(events: &Api<Event>, name: &str, reason: &str) -> Vec<String> {
    let listed = events
        .list(&ListParams::default())
        .await
        .expect("list events");
    let mut notes: Vec<String> = listed
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .filter(|e| e.reason.as_deref() == Some(reason))
        .filter_map(|e| e.message)
        .collect();
    notes.sort();
    notes
}

/// A user's change of the template (Karmada's Lazy policies apply with the next one).
async fn touch(deployments: &Api<Deployment>, name: &str) {
    deployments
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .expect("template changed");
}

#[tokio::test]
async fn a_higher_priority_policy_preempts_and_says_so() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), NS);
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    let events = Api::<Event>::namespaced(world.client.clone(), NS);
    world.apply(deployment("web")).await;
    world
        .apply(policy("low", "web", "member1", json!({"priority": 1})))
        .await;
    eventually("bound by the low-priority policy", || async {
        (placement(&rbs, "web-deployment").await? == json!(["member1"])).then_some(())
    })
    .await;
    assert_eq!(
        notes(&events, "web", "ApplyPolicySucceed").await,
        ["Apply policy(claims/low) succeed"]
    );

    world
        .apply(policy(
            "high",
            "web",
            "member2",
            json!({"priority": 5, "preemption": "Always"}),
        ))
        .await;
    eventually("the higher priority policy takes over", || async {
        (placement(&rbs, "web-deployment").await? == json!(["member2"])).then_some(())
    })
    .await;
    assert_eq!(
        claimed_by(&deployments, "web").await.as_deref(),
        Some("high")
    );
    let preempted = eventually("the preemption is recorded", || async {
        let notes = notes(&events, "web", "PreemptPolicySucceed").await;
        (!notes.is_empty()).then_some(notes)
    })
    .await;
    assert_eq!(
        preempted,
        ["Propagation policy(claims/high) preempted propagation policy(claims/low) successfully"]
    );
    eventually("the new policy's application is recorded", || async {
        let notes = notes(&events, "web", "ApplyPolicySucceed").await;
        (notes.len() == 2).then_some(())
    })
    .await;
    assert_eq!(
        notes(&events, "web", "ApplyPolicySucceed").await,
        [
            "Apply policy(claims/high) succeed",
            "Apply policy(claims/low) succeed"
        ]
    );
}

#[tokio::test]
async fn a_lazy_policy_applies_with_the_templates_next_change() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), NS);
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);

    // The template first, then a Lazy policy: claimed, not propagated. A template created while
    // the Lazy policy exists is a change and propagates (Karmada's too), so the detector must
    // have taken the template's creation in before the policy comes.
    world.apply(deployment("late")).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    world
        .apply(policy(
            "lazy",
            "late",
            "member1",
            json!({"activationPreference": "Lazy"}),
        ))
        .await;
    eventually("the Lazy policy claims the template", || async {
        (claimed_by(&deployments, "late").await.as_deref() == Some("lazy")).then_some(())
    })
    .await;
    // Its own claim is Karmada's change, not the user's: still no binding a while later.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(placement(&rbs, "late-deployment").await, None);
    touch(&deployments, "late").await;
    eventually("the template's change applies the Lazy policy", || async {
        (placement(&rbs, "late-deployment").await? == json!(["member1"])).then_some(())
    })
    .await;

    // A Lazy policy preempting a bound template moves the claim, not the binding.
    world.apply(deployment("moved")).await;
    world
        .apply(policy("first", "moved", "member1", json!({"priority": 1})))
        .await;
    eventually("bound by the first policy", || async {
        (placement(&rbs, "moved-deployment").await? == json!(["member1"])).then_some(())
    })
    .await;
    world
        .apply(policy(
            "second",
            "moved",
            "member2",
            json!({"priority": 2, "preemption": "Always", "activationPreference": "Lazy"}),
        ))
        .await;
    eventually("the Lazy policy preempts the claim", || async {
        (claimed_by(&deployments, "moved").await.as_deref() == Some("second")).then_some(())
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        placement(&rbs, "moved-deployment").await,
        Some(json!(["member1"])),
        "the binding waits for the template's next change"
    );
    touch(&deployments, "moved").await;
    eventually(
        "the template's change applies the preempting policy",
        || async {
            (placement(&rbs, "moved-deployment").await? == json!(["member2"])).then_some(())
        },
    )
    .await;

    // A template created after its Lazy policy propagates at once (its creation is a change).
    world
        .apply(policy(
            "early",
            "fresh",
            "member2",
            json!({"activationPreference": "Lazy"}),
        ))
        .await;
    world.apply(deployment("fresh")).await;
    eventually("a new template propagates under a Lazy policy", || async {
        (placement(&rbs, "fresh-deployment").await? == json!(["member2"])).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_policy_that_stops_selecting_unclaims_template_and_binding() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), NS);
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    world.apply(deployment("web")).await;
    world
        .apply(policy("only", "web", "member1", json!({})))
        .await;
    let claimed = |labels: Option<&std::collections::BTreeMap<String, String>>| {
        labels.is_some_and(|l| l.contains_key(PP_ID))
    };
    eventually("bound and claimed", || async {
        let binding = rbs.get_opt("web-deployment").await.expect("get rb")?;
        claimed(binding.metadata.labels.as_ref()).then_some(())
    })
    .await;

    // Karmada's "modify the old propagationPolicy to unbind": the selector moves elsewhere.
    Api::<flotilla_api::karmada::PropagationPolicy>::namespaced(world.client.clone(), NS)
        .patch(
            "only",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"resourceSelectors": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-fake"}]}})),
        )
        .await
        .expect("policy changed");
    eventually("template and binding unclaimed", || async {
        let template = deployments.get("web").await.expect("template");
        let binding = rbs.get("web-deployment").await.expect("the binding stays");
        let annotated = |a: Option<&std::collections::BTreeMap<String, String>>| {
            a.is_some_and(|a| a.contains_key(PP_NAME))
        };
        (!claimed(template.metadata.labels.as_ref())
            && !annotated(template.metadata.annotations.as_ref())
            && !claimed(binding.metadata.labels.as_ref())
            && !annotated(binding.metadata.annotations.as_ref()))
        .then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_kube_priority_class_sets_the_bindings_schedule_priority() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world
        .apply(
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "gpu-high"}, "value": 1000}),
        )
        .await;
    let rbs = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    world.apply(deployment("web")).await;
    world
        .apply(policy(
            "prioritized",
            "web",
            "member1",
            json!({"schedulePriority": {"priorityClassSource": "KubePriorityClass",
                "priorityClassName": "gpu-high"}}),
        ))
        .await;
    let priority = eventually("the binding carries the class's value", || async {
        let binding = rbs.get_opt("web-deployment").await.expect("get rb")?;
        let spec = serde_json::to_value(&binding.spec).expect("json");
        spec["schedulePriority"]["priority"].as_i64()
    })
    .await;
    assert_eq!(priority, 1000);
}
