//! karmada-search in `up`: the API server's [`SearchBackend`] hook over the controllers'
//! multi-cluster cache, which the (not leader-elected) registry controller fills from member
//! clusters.

use std::sync::Arc;

use flotilla_apiserver::ApiError;
use flotilla_apiserver::search::{
    SearchBackend, SearchEvent, SearchList, SearchListOptions, SearchResource,
};
use flotilla_controllers::search::cache::{ListOptions, SearchError};
use flotilla_controllers::search::{Gvr, SearchCache};
use futures::StreamExt as _;
use futures::stream::BoxStream;
use serde_json::Value;

/// The hook.
#[derive(Debug, Clone)]
pub struct Search(pub Arc<SearchCache>);

fn gvr(resource: &SearchResource) -> Gvr {
    Gvr {
        group: resource.group.clone(),
        version: resource.version.clone(),
        resource: resource.resource.clone(),
    }
}

fn options(options: &SearchListOptions) -> ListOptions {
    ListOptions {
        label_selector: options.label_selector.clone(),
        field_selector: options.field_selector.clone(),
        limit: options.limit,
        continue_token: options.continue_token.clone(),
        resource_version: options.resource_version.clone(),
    }
}

/// The one place search errors become API errors.
fn api_error(error: SearchError) -> ApiError {
    let message = error.to_string();
    match error {
        SearchError::NotFound { .. } => ApiError::new(404, "NotFound", message),
        SearchError::Ambiguous { .. } => ApiError::new(409, "Conflict", message),
        SearchError::Expired { .. } => ApiError::new(410, "Expired", message),
        SearchError::BadRequest(_) => ApiError::bad_request(message),
    }
}

impl SearchBackend for Search {
    fn registered(&self, resource: &SearchResource) -> bool {
        self.0.registered(&gvr(resource))
    }

    fn search(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        name: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<Value>, ApiError> {
        self.0
            .search(&gvr(resource), namespace, name, labels)
            .map_err(api_error)
    }

    fn owner(
        &self,
        resource: &SearchResource,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError> {
        self.0
            .owner(&gvr(resource), namespace, name)
            .map_err(api_error)
    }

    fn get(
        &self,
        resource: &SearchResource,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        self.0
            .get(&gvr(resource), namespace, name)
            .map_err(api_error)
    }

    fn list(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        list: &SearchListOptions,
    ) -> Result<SearchList, ApiError> {
        let page = self
            .0
            .list(&gvr(resource), namespace, &options(list))
            .map_err(api_error)?;
        Ok(SearchList {
            items: page.items,
            resource_version: page.resource_version,
            continue_token: page.continue_token,
        })
    }

    fn watch(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        list: &SearchListOptions,
    ) -> Result<BoxStream<'static, SearchEvent>, ApiError> {
        let events = self
            .0
            .watch(&gvr(resource), namespace, &options(list))
            .map_err(api_error)?;
        Ok(events
            .map(|event| SearchEvent {
                type_: event.type_,
                object: event.object,
            })
            .boxed())
    }
}
