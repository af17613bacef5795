//! Karmada's `mcs_test.go` "CrossCluster MultiClusterService testing" through `up --demo` with
//! gate `MultiClusterService`: a Deployment placed by a PropagationPolicy, its Service exposed
//! by a MultiClusterService; the Service reaches the provider and consumer clusters, the
//! providers' EndpointSlices (written by the simulated members' EndpointSlice controller) are
//! copied into every other consumer as `<provider>-<slice>` with as many endpoints, the
//! MultiClusterService records `EndpointSliceDispatched` and Karmada's events; provider and
//! consumer changes move the copies; a provider that does not exist is named in an event.

use crate::support::{ControlPlane, MEMBERS, eventually};

fn manifests(
    ns: &str,
    app: &str,
    placement: &[&str],
    providers: &[&str],
    consumers: &[&str],
) -> String {
    let list = |names: &[&str]| {
        format!(
            "[{}]",
            names
                .iter()
                .map(|n| format!("{{name: {n}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n\
apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  replicas: 2\n  selector: {{matchLabels: {{app: {app}}}}}\n  template:\n    metadata: {{labels: {{app: {app}}}}}\n    spec: {{containers: [{{name: web, image: nginx, ports: [{{containerPort: 8080, name: http}}]}}]}}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  selector: {{app: {app}}}\n  ports: [{{port: 80, targetPort: http}}]\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: {app}}}]\n  placement:\n    clusterAffinity: {{clusterNames: {}}}\n    replicaScheduling: {{replicaSchedulingType: Duplicated}}\n---\n\
apiVersion: networking.karmada.io/v1alpha1\nkind: MultiClusterService\nmetadata: {{name: {app}, namespace: {ns}}}\nspec:\n  types: [CrossCluster]\n  providerClusters: {}\n  consumerClusters: {}\n",
        list(placement).replace("{name: ", "").replace('}', ""),
        list(providers),
        list(consumers),
    )
}

/// `(name, endpoints, managed-by)` of the Service's slices in `cluster`.
async fn slices(
    plane: &ControlPlane,
    cluster: &str,
    ns: &str,
    service: &str,
) -> Vec<(String, usize, String)> {
    plane.endpoint_slices(Some(cluster), ns, service).await
}

/// Karmada's `checkEndpointSliceWithMultiClusterService`, stricter: every provider that runs
/// the Service has its own slice, and every consumer but the provider holds a copy
/// `<provider>-<slice>` with as many endpoints; `ready` providers have endpoints.
async fn synced(
    plane: &ControlPlane,
    ns: &str,
    service: &str,
    providers: &[&str],
    consumers: &[&str],
    ready: &[&str],
) -> Result<(), String> {
    let providers: Vec<&str> = if providers.is_empty() {
        MEMBERS.to_vec()
    } else {
        providers.to_vec()
    };
    let consumers: Vec<&str> = if consumers.is_empty() {
        MEMBERS.to_vec()
    } else {
        consumers.to_vec()
    };
    for provider in &providers {
        let own: Vec<_> = slices(plane, provider, ns, service)
            .await
            .into_iter()
            .filter(|(_, _, by)| by != "endpointslice-dispatch-controller.karmada.io")
            .collect();
        if own.is_empty() {
            return Err(format!("{provider} has no slice of its own"));
        }
        if ready.contains(provider) && own.iter().all(|(_, n, _)| *n == 0) {
            return Err(format!(
                "{provider}'s slices have no endpoints yet: {own:?}"
            ));
        }
        for consumer in &consumers {
            if consumer == provider {
                continue;
            }
            let copies = slices(plane, consumer, ns, service).await;
            for (name, endpoints, _) in &own {
                let want = format!("{provider}-{name}");
                let found = copies.iter().find(|(n, _, _)| *n == want);
                match found {
                    Some((_, n, by))
                        if n == endpoints
                            && by == "endpointslice-dispatch-controller.karmada.io" => {}
                    other => {
                        return Err(format!(
                            "{consumer} lacks {want} with {endpoints} endpoints: {other:?} in {copies:?}"
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

async fn dispatched(plane: &ControlPlane, ns: &str, name: &str) {
    eventually("EndpointSliceDispatched is True", || async {
        let got = plane
            .get(
                None,
                ns,
                &format!("multiclusterservice/{name}"),
                "{.status.conditions[?(@.type==\"EndpointSliceDispatched\")].status}",
            )
            .await;
        if got == "True" { Ok(()) } else { Err(got) }
    })
    .await;
}

pub(crate) async fn exposed(
    plane: &ControlPlane,
    ns: &str,
    app: &str,
    placement: &[&str],
    providers: &[&str],
    consumers: &[&str],
) {
    plane
        .apply(None, &manifests(ns, app, placement, providers, consumers))
        .await;
    dispatched(plane, ns, app).await;
    eventually("the providers' slices copied into the consumers", || {
        synced(plane, ns, app, providers, consumers, placement)
    })
    .await;
}

/// Case 1: provider [member1], consumer [member2]; the Service is claimed by the
/// MultiClusterService and reaches both, with Karmada's events.
pub async fn one_provider_one_consumer(plane: &ControlPlane) {
    let (ns, app) = ("mcs-e2e-one", "mcs-one");
    exposed(plane, ns, app, &[MEMBERS[0]], &[MEMBERS[0]], &[MEMBERS[1]]).await;
    plane
        .await_events(
            ns,
            "MultiClusterService",
            app,
            &["SyncServiceSucceed", "DispatchEndpointSliceSucceed"],
        )
        .await;
    let claimed = plane
        .get(
            None,
            ns,
            &format!("service/{app}"),
            "{.metadata.labels.resourcetemplate\\.karmada\\.io/claimed-by}",
        )
        .await;
    assert_eq!(claimed, "MultiClusterService");
    for member in [MEMBERS[0], MEMBERS[1]] {
        let service = plane
            .get(
                Some(member),
                ns,
                &format!("service/{app}"),
                "{.metadata.name}",
            )
            .await;
        assert_eq!(service, app, "the Service in {member}");
    }
    // Scaling the Deployment changes the copy's endpoints.
    plane
        .kubectl(&["-n", ns, "scale", "deployment", app, "--replicas=3"])
        .await;
    eventually("three endpoints copied", || async {
        let copies = slices(plane, MEMBERS[1], ns, app).await;
        if copies.iter().any(|(_, n, _)| *n == 3) {
            Ok(())
        } else {
            Err(format!("{copies:?}"))
        }
    })
    .await;
    // Deleting the MultiClusterService removes the copies and releases the Service.
    plane
        .kubectl(&["-n", ns, "delete", "multiclusterservice", app])
        .await;
    eventually("the copies gone", || async {
        let copies: Vec<_> = slices(plane, MEMBERS[1], ns, app)
            .await
            .into_iter()
            .filter(|(_, _, by)| by == "endpointslice-dispatch-controller.karmada.io")
            .collect();
        if copies.is_empty() {
            Ok(())
        } else {
            Err(format!("{copies:?}"))
        }
    })
    .await;
    eventually("the Service released", || async {
        let claimed = plane
            .get(None, ns, &format!("service/{app}"), "{.metadata.labels}")
            .await;
        if claimed.contains("claimed-by") {
            Err(claimed)
        } else {
            Ok(())
        }
    })
    .await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
}

/// Cases 2 and 3: providers [member1, member2] → consumers [member2]; then provider [member2],
/// consumer [member1]; then a provider that does not exist is named in a `ClusterNotFound`.
pub async fn providers_and_consumers_change(plane: &ControlPlane) {
    let (ns, app) = ("mcs-e2e-change", "mcs-change");
    let (m1, m2) = (MEMBERS[0], MEMBERS[1]);
    exposed(plane, ns, app, &[m1, m2], &[m1, m2], &[m2]).await;
    let patch = format!(
        "{{\"spec\":{{\"providerClusters\":[{{\"name\":\"{m2}\"}}],\"consumerClusters\":[{{\"name\":\"{m1}\"}}]}}}}"
    );
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "multiclusterservice",
            app,
            "--type=merge",
            "-p",
            &patch,
        ])
        .await;
    let (only_m1, only_m2) = ([m1], [m2]);
    eventually("member2's slices copied into member1", || {
        synced(plane, ns, app, &only_m2, &only_m1, &only_m2)
    })
    .await;
    // member1 is no longer a consumer: the copies of member1's old slices in member2 go.
    eventually("member2 holds no copies any more", || async {
        let copies: Vec<_> = slices(plane, m2, ns, app)
            .await
            .into_iter()
            .filter(|(_, _, by)| by == "endpointslice-dispatch-controller.karmada.io")
            .collect();
        if copies.is_empty() {
            Ok(())
        } else {
            Err(format!("{copies:?}"))
        }
    })
    .await;
    let patch = format!(
        "{{\"spec\":{{\"providerClusters\":[{{\"name\":\"{m2}\"}},{{\"name\":\"member-not-found\"}}]}}}}"
    );
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "multiclusterservice",
            app,
            "--type=merge",
            "-p",
            &patch,
        ])
        .await;
    plane
        .await_events(ns, "MultiClusterService", app, &["ClusterNotFound"])
        .await;
    plane
        .kubectl(&["-n", ns, "delete", "multiclusterservice", app])
        .await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
}

/// Cases 4 to 6: an empty provider or consumer list means every cluster.
pub async fn empty_lists_mean_every_cluster(plane: &ControlPlane) {
    let (ns, app) = ("mcs-e2e-all", "mcs-all");
    exposed(plane, ns, app, &[MEMBERS[0]], &[], &[MEMBERS[1]]).await;
    let patch = format!(
        "{{\"spec\":{{\"providerClusters\":[{{\"name\":\"{}\"}}],\"consumerClusters\":null}}}}",
        MEMBERS[0]
    );
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "multiclusterservice",
            app,
            "--type=merge",
            "-p",
            &patch,
        ])
        .await;
    eventually("member1's slices copied into every other cluster", || {
        synced(plane, ns, app, &[MEMBERS[0]], &[], &[MEMBERS[0]])
    })
    .await;
    let patch = "{\"spec\":{\"providerClusters\":null,\"consumerClusters\":null}}";
    plane
        .kubectl(&[
            "-n",
            ns,
            "patch",
            "multiclusterservice",
            app,
            "--type=merge",
            "-p",
            patch,
        ])
        .await;
    eventually("every cluster's slices copied into every other", || {
        synced(plane, ns, app, &[], &[], &[MEMBERS[0]])
    })
    .await;
    plane
        .kubectl(&["-n", ns, "delete", "multiclusterservice", app])
        .await;
    plane
        .kubectl(&["delete", "namespace", ns, "--wait=false"])
        .await;
}
