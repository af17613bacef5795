//! Checks around the burst: why a Deployment stalled (what each hop holds), and that the
//! members hold exactly what was propagated once it is over.

use std::collections::HashMap;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams};
use serde_json::json;

use super::{BURST_NS, PropagateBenchOptions, SEQ_NS, track, world};

/// What the control plane and the members hold for a template that stalled, for the stall
/// message: the template's status, its binding's per-cluster aggregated status, each Work's
/// manifest status and the member's own Deployment status — so one failing run shows at which
/// hop the status stopped travelling.
pub(super) async fn explain_stall(
    client: &kube::Client,
    members: &world::Members,
    (namespace, name): &track::Key,
) -> String {
    use kube::api::DynamicObject;
    let mut out = Vec::new();
    let get = |api: Api<DynamicObject>, name: String| async move {
        match api.get_opt(&name).await {
            Ok(Some(o)) => o.data,
            Ok(None) => json!("not found"),
            Err(e) => json!(format!("error: {e}")),
        }
    };
    let resource = |group: &str, version: &str, kind: &str, plural: &str| kube::api::ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    };
    let deployments = resource("apps", "v1", "Deployment", "deployments");
    let template = get(
        Api::namespaced_with(client.clone(), namespace, &deployments),
        name.clone(),
    )
    .await;
    out.push(format!("template status {}", template["status"]));
    let binding = get(
        Api::namespaced_with(
            client.clone(),
            namespace,
            &resource(
                "work.karmada.io",
                "v1alpha2",
                "ResourceBinding",
                "resourcebindings",
            ),
        ),
        format!("{name}-deployment"),
    )
    .await;
    out.push(format!(
        "binding clusters {} aggregatedStatus {}",
        binding["spec"]["clusters"], binding["status"]["aggregatedStatus"]
    ));
    let works = resource("work.karmada.io", "v1alpha1", "Work", "works");
    for target in binding["spec"]["clusters"].as_array().into_iter().flatten() {
        let Some(cluster) = target["name"].as_str() else {
            continue;
        };
        let list = Api::<DynamicObject>::namespaced_with(
            client.clone(),
            &format!("karmada-es-{cluster}"),
            &works,
        )
        .list(&ListParams::default())
        .await;
        let work = list.ok().and_then(|l| {
            l.items.into_iter().find(|w| {
                w.data["spec"]["workload"]["manifests"][0]["metadata"]["name"] == name.as_str()
            })
        });
        let (conditions, manifest) = work.map_or((json!(null), json!(null)), |w| {
            (
                w.data["status"]["conditions"].clone(),
                w.data["status"]["manifestStatuses"].clone(),
            )
        });
        out.push(format!(
            "{cluster}: Work conditions {conditions} manifestStatuses {manifest}"
        ));
        match crate::join::probe::load_member(&members.sim.kubeconfig, Some(cluster)).await {
            Ok(member) => {
                let d = get(
                    Api::namespaced_with(member.client.clone(), namespace, &deployments),
                    name.clone(),
                )
                .await;
                out.push(format!(
                    "{cluster}: member generation {} status {}",
                    d["metadata"]["generation"], d["status"]
                ));
            }
            Err(e) => out.push(format!("{cluster}: {e}")),
        }
    }
    out.join("\n  ")
}

/// After the timing: every member holds the Deployments it should, with the replicas it should
/// (read from the members themselves, not from the Works).
pub(super) async fn verify(
    options: &PropagateBenchOptions,
    members: &world::Members,
) -> anyhow::Result<()> {
    let mut found: HashMap<&str, (usize, i64)> = HashMap::new();
    for name in &members.names {
        let member =
            crate::join::probe::load_member(&members.sim.kubeconfig, Some(name.as_str())).await?;
        for namespace in [SEQ_NS, BURST_NS] {
            let api = Api::<Deployment>::namespaced(member.client.clone(), namespace);
            let list = match api.list(&ListParams::default()).await {
                Ok(list) => list.items,
                Err(kube::Error::Api(e)) if e.code == 404 => Vec::new(),
                Err(error) => return Err(error).with_context(|| format!("list in {name}")),
            };
            let entry = found.entry(namespace).or_default();
            for d in list {
                entry.0 += 1;
                entry.1 += i64::from(d.spec.and_then(|s| s.replicas).unwrap_or(1));
            }
        }
    }
    let per = options.clusters.min(3);
    let replicas = i64::from(options.replicas);
    for (namespace, count) in [
        (SEQ_NS, options.sequential),
        (BURST_NS, options.deployments),
    ] {
        let want = (count * per, count as i64 * replicas);
        let got = found.get(namespace).copied().unwrap_or_default();
        anyhow::ensure!(
            got == want,
            "members hold {} Deployments with {} replicas in {namespace}, want {} with {}",
            got.0,
            got.1,
            want.0,
            want.1
        );
    }
    Ok(())
}
