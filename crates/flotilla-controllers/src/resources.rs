//! What the control plane serves, from discovery: the `ApiResource` (plural, scope) of a kind,
//! so controllers can read any template through a dynamic `Api`. Refreshed on a miss and when
//! the detector sees CRDs change.

use std::collections::HashMap;

use kube::api::{Api, ApiResource, DynamicObject};
use kube::discovery::{ApiCapabilities, Discovery, Scope, verbs};
use parking_lot::RwLock;

/// A served kind.
#[derive(Debug, Clone)]
pub struct ServedKind {
    pub resource: ApiResource,
    pub namespaced: bool,
    /// Has list, watch, get, create, update and delete.
    pub propagatable: bool,
}

/// Why a kind could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("discovery failed: {}", flotilla_runtime::errors::message(.0))]
    Discovery(#[source] kube::Error),
    #[error("the server does not serve {api_version} {kind}")]
    NotServed { api_version: String, kind: String },
}

/// The discovery cache.
pub struct Resources {
    client: kube::Client,
    kinds: RwLock<HashMap<(String, String), ServedKind>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("kinds", &self.kinds.read().len())
            .finish()
    }
}

impl Resources {
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            kinds: RwLock::new(HashMap::new()),
        }
    }

    /// Runs discovery again and returns every served kind (preferred versions and all others).
    pub async fn refresh(&self) -> Result<Vec<ServedKind>, ResolveError> {
        let discovery = Discovery::new(self.client.clone())
            .run()
            .await
            .map_err(ResolveError::Discovery)?;
        let mut kinds = HashMap::new();
        for group in discovery.groups() {
            for version in group.versions() {
                for (resource, capabilities) in group.versioned_resources(version) {
                    let served = served(resource, &capabilities);
                    kinds.insert(
                        (
                            served.resource.api_version.clone(),
                            served.resource.kind.clone(),
                        ),
                        served,
                    );
                }
            }
        }
        let mut all: Vec<ServedKind> = kinds.values().cloned().collect();
        all.sort_by(|a, b| {
            (&a.resource.api_version, &a.resource.kind)
                .cmp(&(&b.resource.api_version, &b.resource.kind))
        });
        *self.kinds.write() = kinds;
        Ok(all)
    }

    /// The served kind `api_version`/`kind`, running discovery when it is not known yet.
    pub async fn resolve(&self, api_version: &str, kind: &str) -> Result<ServedKind, ResolveError> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(found) = self.kinds.read().get(&key) {
            return Ok(found.clone());
        }
        self.refresh().await?;
        self.kinds
            .read()
            .get(&key)
            .cloned()
            .ok_or_else(|| ResolveError::NotServed {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            })
    }

    /// A dynamic `Api` of `served` (in `namespace` when namespaced).
    pub fn api(&self, served: &ServedKind, namespace: &str) -> Api<DynamicObject> {
        if served.namespaced {
            Api::namespaced_with(self.client.clone(), namespace, &served.resource)
        } else {
            Api::all_with(self.client.clone(), &served.resource)
        }
    }
}

fn served(resource: ApiResource, capabilities: &ApiCapabilities) -> ServedKind {
    let propagatable = [
        verbs::LIST,
        verbs::WATCH,
        verbs::GET,
        verbs::CREATE,
        verbs::UPDATE,
        verbs::DELETE,
    ]
    .iter()
    .all(|v| capabilities.supports_operation(v));
    ServedKind {
        resource,
        namespaced: capabilities.scope == Scope::Namespaced,
        propagatable,
    }
}
