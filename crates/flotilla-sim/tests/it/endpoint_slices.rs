//! The EndpointSlice controller: a Service's slice follows its Deployment's pods, goes with
//! the Service, and slices other controllers manage (Karmada's) are never touched. The same
//! worker keeps the Service's v1 Endpoints (kube's endpoint controller).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually, pods};

const OURS: &str = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io";
const KARMADA: &str = "endpointslice-dispatch-controller.karmada.io";

/// The controller's slices of Service `web`.
async fn managed(api: &Api<EndpointSlice>) -> Vec<EndpointSlice> {
    api.list(&ListParams::default().labels(&format!("{OURS},kubernetes.io/service-name=web")))
        .await
        .expect("endpoint slices")
        .items
}

/// The IPs of the Ready pods of `app=web`, in pod-name order, once there are `count`.
async fn ready_ips(client: &kube::Client, count: usize) -> Vec<(String, String)> {
    eventually(PATIENCE, "the pods are Ready with IPs", || async {
        let mut ready: Vec<(String, String)> = pods(client, "default")
            .await
            .into_iter()
            .filter(|p: &Pod| {
                crate::support::condition(p, "Ready").is_some_and(|c| c.status == "True")
            })
            .filter_map(|p| {
                let ip = p.status.as_ref()?.pod_ip.clone()?;
                Some((p.metadata.name?, ip))
            })
            .collect();
        ready.sort();
        (ready.len() == count).then_some(ready)
    })
    .await
}

/// The slice once it lists exactly `pods` (name, IP), all ready.
async fn slice_listing(api: &Api<EndpointSlice>, pods: &[(String, String)]) -> EndpointSlice {
    eventually(PATIENCE, "the slice lists the pods", || async {
        let slices = managed(api).await;
        let [slice] = slices.as_slice() else {
            return None;
        };
        let listed: Vec<(String, String, bool)> = slice
            .endpoints
            .iter()
            .map(|e| {
                (
                    e.target_ref
                        .as_ref()
                        .and_then(|r| r.name.clone())
                        .unwrap_or_default(),
                    e.addresses.join(","),
                    e.conditions.as_ref().and_then(|c| c.ready) == Some(true),
                )
            })
            .collect();
        let want: Vec<(String, String, bool)> = pods
            .iter()
            .map(|(name, ip)| (name.clone(), ip.clone(), true))
            .collect();
        (listed == want).then(|| slice.clone())
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_services_slice_follows_its_pods_and_leaves_karmadas_alone() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    // A slice Karmada's dispatch controller wrote for the same Service, from another member.
    let karmada = create::<EndpointSlice>(
        &client,
        "default",
        json!({
            "metadata": {"name": "imported-member2-web", "labels": {
                "kubernetes.io/service-name": "web",
                "endpointslice.kubernetes.io/managed-by": KARMADA,
            }},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.200.0.7"], "conditions": {"ready": true}}],
            "ports": [{"name": "", "port": 8080, "protocol": "TCP"}],
        }),
    )
    .await;
    let service = create::<Service>(
        &client,
        "default",
        json!({
            "metadata": {"name": "web", "labels": {"tier": "front"}},
            "spec": {"selector": {"app": "web"},
                "ports": [{"port": 80, "targetPort": "http"}]},
        }),
    )
    .await;
    create::<Deployment>(
        &client,
        "default",
        json!({
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "resources": {"requests": {"cpu": "100m"}}}]}}},
        }),
    )
    .await;

    // Two Ready pods: one slice with both, the named target port resolved.
    let ips = ready_ips(&client, 2).await;
    let slice = slice_listing(&slices, &ips).await;
    let name = slice.metadata.name.clone().expect("a name");
    assert!(
        name.starts_with("web-") && name.len() == "web-".len() + 5,
        "{name}"
    );
    assert_eq!(slice.address_type, "IPv4");
    let labels = slice.metadata.labels.clone().expect("labels");
    assert_eq!(labels["kubernetes.io/service-name"], "web");
    assert_eq!(
        labels["endpointslice.kubernetes.io/managed-by"],
        "endpointslice-controller.k8s.io"
    );
    assert_eq!(labels["tier"], "front", "the Service's labels are copied");
    let owner = &slice.metadata.owner_references.as_ref().expect("owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", "web")
    );
    assert_eq!(Some(&owner.uid), service.metadata.uid.as_ref());
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(
        serde_json::to_value(&slice.ports).expect("json"),
        json!([{"name": "", "port": 8080, "protocol": "TCP"}])
    );
    let endpoint = &slice.endpoints[0];
    assert!(endpoint.node_name.is_some());
    assert_eq!(
        serde_json::to_value(&endpoint.conditions).expect("json"),
        json!({"ready": true, "serving": true, "terminating": false})
    );
    let target = endpoint.target_ref.as_ref().expect("a target");
    assert_eq!(target.kind.as_deref(), Some("Pod"));
    assert_eq!(target.namespace.as_deref(), Some("default"));
    assert!(target.uid.is_some());

    // Scaled to three: the same slice, three endpoints.
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("scaled");
    let ips = ready_ips(&client, 3).await;
    let scaled = slice_listing(&slices, &ips).await;
    assert_eq!(scaled.metadata.name.as_deref(), Some(name.as_str()));
    // Settled: the slice is not written again.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let settled = slices.get(&name).await.expect("the slice");
    assert_eq!(
        settled.metadata.resource_version,
        scaled.metadata.resource_version
    );

    // The Endpoints `web`: the three Ready pods by IP, the resolved port, the Service's labels.
    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), "default");
    let mut by_ip: Vec<String> = ips.iter().map(|(_, ip)| ip.clone()).collect();
    by_ip.sort_by_key(|ip| ip.parse::<std::net::Ipv4Addr>().expect("an IPv4 address"));
    let listed = |e: &Endpoints| -> Vec<String> {
        e.subsets
            .iter()
            .flatten()
            .flat_map(|s| s.addresses.iter().flatten())
            .map(|a| a.ip.clone())
            .collect()
    };
    let web = eventually(PATIENCE, "the Endpoints lists the pods", || async {
        let web = endpoints.get_opt("web").await.expect("read")?;
        (listed(&web) == by_ip).then_some(web)
    })
    .await;
    let subsets = serde_json::to_value(&web.subsets).expect("json");
    assert_eq!(
        subsets[0]["ports"],
        json!([{"port": 8080, "protocol": "TCP"}])
    );
    assert_eq!(subsets[0]["addresses"][0]["targetRef"]["kind"], "Pod");
    assert!(subsets[0].get("notReadyAddresses").is_none(), "{subsets}");
    assert_eq!(web.metadata.labels.expect("labels")["tier"], "front");
    // Deleted by hand: written again.
    endpoints
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually(PATIENCE, "the Endpoints is written again", || async {
        let web = endpoints.get_opt("web").await.expect("read")?;
        (listed(&web) == by_ip).then_some(())
    })
    .await;
    // The API server's own `kubernetes` Endpoints (a Service without a selector) is left alone.
    let kubernetes = endpoints.get("kubernetes").await.expect("kube's Endpoints");
    assert_eq!(
        kubernetes.metadata.labels.expect("labels")["endpointslice.kubernetes.io/skip-mirror"],
        "true"
    );

    // The Service goes: so do its slice and Endpoints; Karmada's slice stays as it was.
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually(
        PATIENCE,
        "the slice and the Endpoints are deleted",
        || async {
            let gone = endpoints.get_opt("web").await.expect("read").is_none();
            (gone && managed(&slices).await.is_empty()).then_some(())
        },
    )
    .await;
    let kept = slices
        .get("imported-member2-web")
        .await
        .expect("Karmada's slice is still there");
    assert_eq!(
        kept.metadata.resource_version,
        karmada.metadata.resource_version
    );
    assert_eq!(kept.endpoints, karmada.endpoints);
}

#[tokio::test(start_paused = true)]
async fn a_service_without_a_selector_gets_no_slice_and_losing_it_removes_the_slice() {
    let world = World::cpu(1, "").await;
    let client = world.client();
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), "default");
    create::<Service>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    )
    .await;
    create::<Service>(
        &client,
        "default",
        json!({"metadata": {"name": "external"}, "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    // No pods yet: kube's placeholder slice, without endpoints or ports.
    let placeholder = eventually(PATIENCE, "a placeholder slice", || async {
        managed(&slices).await.into_iter().next()
    })
    .await;
    assert!(placeholder.endpoints.is_empty());
    assert_eq!(placeholder.ports, None);

    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"selector": null}})),
        )
        .await
        .expect("selector removed");
    eventually(PATIENCE, "the slice is deleted", || async {
        managed(&slices).await.is_empty().then_some(())
    })
    .await;
    // Only the API server's own `kubernetes` slice is left (none for `external`).
    let all = slices
        .list(&ListParams::default())
        .await
        .expect("endpoint slices");
    let names: Vec<_> = all
        .items
        .iter()
        .filter_map(|s| s.metadata.name.as_deref())
        .collect();
    assert_eq!(names, ["kubernetes"], "{:?}", all.items);
}
