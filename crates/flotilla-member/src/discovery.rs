//! What Karmada's cluster status controller learns from a member's discovery: the Kubernetes
//! version and the served group versions with their resources (`status.apiEnablements`,
//! sorted by group version and resource name, subresources left out), and whether that list is
//! complete (`CompleteAPIEnablements`). Aggregated discovery (two requests) is tried first;
//! members without it are read group version by group version.

use flotilla_api::karmada::{ApiEnablement, ApiResource};

/// The API enablements and whether every group version could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enablements {
    pub list: Vec<ApiEnablement>,
    /// `None` when complete, else why not (e.g. one group version failed).
    pub incomplete: Option<String>,
}

/// `ServerVersion().GitVersion`.
pub async fn kubernetes_version(client: &kube::Client) -> Result<String, kube::Error> {
    Ok(client.apiserver_version().await?.git_version)
}

/// The served group versions and resources.
pub async fn api_enablements(client: &kube::Client) -> Enablements {
    match aggregated(client).await {
        Ok(list) => Enablements {
            list: sorted(list),
            incomplete: None,
        },
        Err(_) => legacy(client).await,
    }
}

fn sorted(mut list: Vec<ApiEnablement>) -> Vec<ApiEnablement> {
    for e in &mut list {
        e.resources.sort_by(|a, b| a.name.cmp(&b.name));
    }
    list.sort_by(|a, b| a.group_version.cmp(&b.group_version));
    list
}

async fn aggregated(client: &kube::Client) -> Result<Vec<ApiEnablement>, kube::Error> {
    let core = client.list_core_api_versions_aggregated().await?;
    let groups = client.list_api_groups_aggregated().await?;
    if core.items.is_empty() && groups.items.is_empty() {
        return Err(kube::Error::Discovery(
            kube::error::DiscoveryError::MissingResource("aggregated discovery is empty".into()),
        ));
    }
    let mut list = Vec::new();
    for group in core.items.iter().chain(groups.items.iter()) {
        let name = group
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_default();
        for version in &group.versions {
            let Some(v) = &version.version else { continue };
            if version.freshness.as_deref() == Some("Stale") {
                return Err(kube::Error::Discovery(
                    kube::error::DiscoveryError::MissingResource(format!(
                        "discovery of {name}/{v} is stale"
                    )),
                ));
            }
            let group_version = if name.is_empty() {
                v.clone()
            } else {
                format!("{name}/{v}")
            };
            let resources = version
                .resources
                .iter()
                .filter_map(|r| {
                    Some(ApiResource {
                        name: r.resource.clone()?,
                        kind: r.response_kind.as_ref()?.kind.clone()?,
                    })
                })
                .collect();
            list.push(ApiEnablement {
                group_version,
                resources,
            });
        }
    }
    Ok(list)
}

async fn legacy(client: &kube::Client) -> Enablements {
    let mut versions = Vec::new();
    let mut failures = Vec::new();
    match client.list_core_api_versions().await {
        Ok(core) => versions.extend(core.versions),
        Err(error) => failures.push(format!("/api: {error}")),
    }
    match client.list_api_groups().await {
        Ok(groups) => {
            for group in groups.groups {
                versions.extend(group.versions.into_iter().map(|v| v.group_version));
            }
        }
        Err(error) => failures.push(format!("/apis: {error}")),
    }
    let mut list = Vec::new();
    for gv in versions {
        let listed = if gv.contains('/') {
            client.list_api_group_resources(&gv).await
        } else {
            client.list_core_api_resources(&gv).await
        };
        match listed {
            Ok(resources) => list.push(ApiEnablement {
                group_version: gv,
                resources: resources
                    .resources
                    .into_iter()
                    .filter(|r| !r.name.contains('/'))
                    .map(|r| ApiResource {
                        name: r.name,
                        kind: r.kind,
                    })
                    .collect(),
            }),
            Err(error) => failures.push(format!("{gv}: {error}")),
        }
    }
    Enablements {
        list: sorted(list),
        incomplete: (!failures.is_empty()).then(|| failures.join("; ")),
    }
}
