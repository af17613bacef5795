//! karmada-metrics-adapter's resource metrics in `up`: the API server's `metrics.k8s.io/v1beta1`
//! answers from every Ready member at once. A list asks each member's own metrics API (its
//! metrics-server, or a simulated member's model) with the same namespace and label selector, a
//! get asks each for the name; every object comes back annotated with the member it came from
//! (`resource.karmada.io/query-from-cluster`), as Karmada's adapter annotates it. A member that
//! does not answer within a few seconds is left out of the answer.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flotilla_api::karmada::{CONDITION_READY, Cluster};
use flotilla_apiserver::ApiError;
use flotilla_apiserver::resource_metrics::{MetricsQuery, ResourceMetricsBackend};
use flotilla_member::MemberClients;
use futures::future::BoxFuture;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;

/// The annotation naming the member a metric came from (Karmada's `QuerySourceAnnotationKey`).
pub const QUERY_SOURCE_ANNOTATION: &str = "resource.karmada.io/query-from-cluster";

/// How long one member may take.
const MEMBER_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Clone, Copy)]
enum Which {
    Pods,
    Nodes,
}

impl Which {
    fn resource(self) -> ApiResource {
        let (kind, plural) = match self {
            Which::Pods => ("PodMetrics", "pods"),
            Which::Nodes => ("NodeMetrics", "nodes"),
        };
        ApiResource {
            group: "metrics.k8s.io".into(),
            version: "v1beta1".into(),
            api_version: "metrics.k8s.io/v1beta1".into(),
            kind: kind.into(),
            plural: plural.into(),
        }
    }
}

struct Bound {
    client: kube::Client,
    members: Arc<dyn MemberClients>,
}

/// The hook; bound to the control plane and the members once both exist.
#[derive(Clone, Default)]
pub struct MetricsAdapter {
    bound: Arc<OnceLock<Bound>>,
}

impl std::fmt::Debug for MetricsAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsAdapter")
            .field("bound", &self.bound.get().is_some())
            .finish()
    }
}

impl MetricsAdapter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reaches members with `members`, listing Clusters with `client`.
    pub fn bind(&self, client: kube::Client, members: Arc<dyn MemberClients>) {
        let _ = self.bound.set(Bound { client, members });
    }

    fn query(
        &self,
        which: Which,
        query: MetricsQuery,
    ) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        let bound = self.bound.clone();
        Box::pin(async move {
            let Some(bound) = bound.get() else {
                return Err(ApiError::new(
                    503,
                    "ServiceUnavailable",
                    "the metrics adapter is starting",
                ));
            };
            let clusters = Api::<Cluster>::all(bound.client.clone())
                .list(&ListParams::default())
                .await
                .map_err(|error| {
                    ApiError::new(500, "InternalError", format!("listing clusters: {error}"))
                })?;
            let mut ready: Vec<String> = clusters
                .items
                .iter()
                .filter(|c| {
                    c.status.as_ref().is_some_and(|s| {
                        s.conditions
                            .iter()
                            .any(|c| c.type_ == CONDITION_READY && c.status == "True")
                    })
                })
                .filter_map(|c| c.metadata.name.clone())
                .collect();
            ready.sort();
            let asks = ready.into_iter().map(|cluster| {
                let members = bound.members.clone();
                let query = query.clone();
                async move {
                    let asked = tokio::time::timeout(
                        MEMBER_TIMEOUT,
                        from_member(members.as_ref(), &cluster, which, &query),
                    )
                    .await;
                    match asked {
                        Ok(Ok(items)) => items,
                        Ok(Err(error)) => {
                            tracing::debug!(%cluster, %error, "metrics: member left out");
                            Vec::new()
                        }
                        Err(_) => {
                            tracing::debug!(%cluster, "metrics: member timed out");
                            Vec::new()
                        }
                    }
                }
            });
            Ok(futures::future::join_all(asks)
                .await
                .into_iter()
                .flatten()
                .collect())
        })
    }
}

async fn from_member(
    members: &dyn MemberClients,
    cluster: &str,
    which: Which,
    query: &MetricsQuery,
) -> Result<Vec<Value>, String> {
    let client = members.client(cluster).await.map_err(|e| e.to_string())?;
    let resource = which.resource();
    let api: Api<DynamicObject> = match (&query.namespace, which) {
        (Some(namespace), Which::Pods) => Api::namespaced_with(client, namespace, &resource),
        _ => Api::all_with(client, &resource),
    };
    let objects = match &query.name {
        Some(name) => api
            .get_opt(name)
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .collect(),
        None => {
            let mut params = ListParams::default();
            if let Some(selector) = &query.label_selector {
                params = params.labels(selector);
            }
            api.list(&params).await.map_err(|e| e.to_string())?.items
        }
    };
    Ok(objects
        .into_iter()
        .filter_map(|mut object| {
            object
                .metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(QUERY_SOURCE_ANNOTATION.into(), cluster.into());
            let mut value = serde_json::to_value(&object).ok()?;
            value["apiVersion"] = "metrics.k8s.io/v1beta1".into();
            value["kind"] = match which {
                Which::Pods => "PodMetrics",
                Which::Nodes => "NodeMetrics",
            }
            .into();
            Some(value)
        })
        .collect())
}

impl ResourceMetricsBackend for MetricsAdapter {
    fn pods(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        self.query(Which::Pods, query)
    }

    fn nodes(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        self.query(Which::Nodes, query)
    }
}
