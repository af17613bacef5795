//! Lists: from the watch cache when it is current, from the store for exact or continued
//! reads, with limit/continue paging and selectors.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::sync::Arc;

use bytes::Bytes;
use flotilla_store::{KeyRange, RangeRequest, Revision};
use serde_json::json;

use super::Registry;
use crate::cache::{CachedObject, Change, ChangeKind, Subscription, TooOld};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::filter::Filter;
use crate::object;
use crate::request::Query;

/// How long a watch of an uncached resource waits for the cache to reach the listed revision.
const WATCH_START_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The options of a list request.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    pub filter: Filter,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

impl ListOptions {
    pub fn from_query(info: &ResourceInfo, query: &Query) -> Result<Self, ApiError> {
        let limit = match query.int("limit")? {
            Some(n) if n > 0 => Some(n as usize),
            _ => None,
        };
        Ok(ListOptions {
            filter: Filter::parse(info, query.get("labelSelector"), query.get("fieldSelector"))?,
            limit,
            continue_token: query
                .get("continue")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            resource_version: query.get("resourceVersion").map(str::to_owned),
            resource_version_match: query
                .get("resourceVersionMatch")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        })
    }
}

/// One item of a list page.
#[derive(Debug, Clone)]
pub enum ListItem {
    /// A watch-cache object, written out as served only when the body is sent: a list of
    /// 100,000 objects holds 100,000 references, not a second copy of 150 MB that the
    /// allocator keeps after the list is gone.
    Cached(Arc<CachedObject>),
    /// JSON already in its served form.
    Encoded(Bytes),
}

impl ListItem {
    /// The served JSON.
    pub fn json(&self) -> Bytes {
        match self {
            ListItem::Cached(object) => object.json(),
            ListItem::Encoded(json) => json.clone(),
        }
    }

    /// Appends the served JSON to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            ListItem::Cached(object) => object.write_json(out),
            ListItem::Encoded(json) => out.extend_from_slice(json),
        }
    }

    /// The exact length of the served JSON.
    pub fn len(&self) -> usize {
        match self {
            ListItem::Cached(object) => object.served_len(),
            ListItem::Encoded(json) => json.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Bytes> for ListItem {
    fn from(json: Bytes) -> Self {
        ListItem::Encoded(json)
    }
}

/// One page of a list: each item's JSON, the list's resource version and the next token.
#[derive(Debug, Clone)]
pub struct ListPage {
    pub items: Vec<ListItem>,
    pub revision: Revision,
    pub continue_token: Option<String>,
}

fn encode_continue(revision: Revision, start: &str) -> String {
    BASE64.encode(json!({"v": "meta.k8s.io/v1", "rv": revision, "start": start}).to_string())
}

fn decode_continue(token: &str) -> Result<(Revision, String), ApiError> {
    let invalid = || {
        ApiError::bad_request(format!(
            "invalid continue token {token:?}: it was not issued by this server"
        ))
    };
    let bytes = BASE64.decode(token).map_err(|_| invalid())?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if value["v"] != "meta.k8s.io/v1" {
        return Err(invalid());
    }
    let revision = value["rv"].as_i64().ok_or_else(invalid)?;
    let start = value["start"].as_str().ok_or_else(invalid)?.to_owned();
    if start.contains("..") || start.starts_with('/') {
        return Err(invalid());
    }
    Ok((revision, start))
}

/// The revision of a `resourceVersionMatch=Exact` list, after refusing the values and
/// combinations kube-apiserver refuses.
fn exact_revision(
    options: &ListOptions,
    requested: Option<Revision>,
) -> Result<Option<Revision>, ApiError> {
    match (options.resource_version_match.as_deref(), requested) {
        (Some("Exact"), Some(revision)) if revision > 0 => Ok(Some(revision)),
        (Some("Exact"), _) => Err(ApiError::bad_request(
            "resourceVersionMatch=Exact requires a non-zero resourceVersion",
        )),
        (Some("NotOlderThan"), None) => Err(ApiError::bad_request(
            "resourceVersionMatch=NotOlderThan requires a resourceVersion",
        )),
        (Some(other), _) if other != "NotOlderThan" => Err(ApiError::bad_request(format!(
            "unsupported resourceVersionMatch {other:?}: valid values are \"Exact\" and \"NotOlderThan\""
        ))),
        _ => Ok(None),
    }
}

/// Appends the objects (in key order, under `prefix`) that the list's selectors select to
/// `items`, in their served form; once the list's `limit` is reached, returns the token that
/// continues at the next selected object.
fn select(
    info: &ResourceInfo,
    prefix: &str,
    options: &ListOptions,
    revision: Revision,
    objects: impl IntoIterator<Item = Arc<CachedObject>>,
    items: &mut Vec<ListItem>,
) -> Option<String> {
    let limit = options.limit.unwrap_or(usize::MAX);
    for object in objects {
        if !options.filter.matches(info, &object) {
            continue;
        }
        if items.len() == limit {
            let next = String::from_utf8_lossy(&object.key[prefix.len()..]).into_owned();
            return Some(encode_continue(revision, &next));
        }
        if crate::conversion::converts(info) {
            items.push(crate::conversion::to_served_bytes(info, &object.json()).into());
        } else {
            items.push(ListItem::Cached(object));
        }
    }
    None
}

impl Registry {
    /// Lists `info` in `namespace` (or everywhere) with Kubernetes' resourceVersion semantics.
    pub async fn list(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<ListPage, ApiError> {
        let prefix = info.storage_prefix_in(namespace);
        if let Some(token) = &options.continue_token {
            let (revision, start) = decode_continue(token)?;
            return self
                .list_from_store(info, &prefix, options, revision, Some(start))
                .await
                .map_err(|e| {
                    if e.code == 410 {
                        ApiError::expired(
                            "The provided continue parameter is too old to display a consistent \
                             list result. You can start a new list without the continue \
                             parameter.",
                        )
                    } else {
                        e
                    }
                });
        }
        let requested = match &options.resource_version {
            Some(rv) => object::parse_resource_version(rv)?,
            None => None,
        };
        let exact = exact_revision(options, requested)?;
        if let Some(revision) = exact {
            return self
                .list_from_store(info, &prefix, options, revision, None)
                .await;
        }
        if self.cache.is_uncached_prefix(prefix.as_bytes()) {
            return self.list_uncached(info, &prefix, options, requested).await;
        }
        match (options.resource_version_match.as_deref(), requested) {
            // resourceVersion="0": any state is fine.
            (_, Some(0)) => Ok(self.list_from_cache(info, &prefix, options)),
            // At least as new as the given version.
            (_, Some(revision)) => {
                if !self
                    .cache
                    .wait_for(revision, std::time::Duration::from_secs(3))
                    .await
                {
                    let current = self.cache.revision();
                    return Err(ApiError::too_large_resource_version(revision, current));
                }
                Ok(self.list_from_cache(info, &prefix, options))
            }
            // Unset: the most recent state.
            (_, None) => {
                if self.cache_is_current().await? {
                    Ok(self.list_from_cache(info, &prefix, options))
                } else {
                    let status = self
                        .store
                        .status()
                        .await
                        .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?;
                    self.list_from_store(info, &prefix, options, status.revision, None)
                        .await
                }
            }
        }
    }

    /// A list of a resource the watch cache does not keep (Events), not at an exact version:
    /// from the store at its current revision; a minimum newer than the store is refused.
    async fn list_uncached(
        &self,
        info: &ResourceInfo,
        prefix: &str,
        options: &ListOptions,
        requested: Option<Revision>,
    ) -> Result<ListPage, ApiError> {
        let current = self
            .store
            .status()
            .await
            .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?
            .revision;
        if let Some(revision) = requested
            && revision > current
        {
            return Err(ApiError::too_large_resource_version(revision, current));
        }
        self.list_from_store(info, prefix, options, current, None)
            .await
    }

    /// The current objects under `prefix`, from the watch cache, or from the store for an
    /// uncached prefix (Events).
    pub async fn current_objects(&self, prefix: &str) -> Result<Vec<Arc<CachedObject>>, ApiError> {
        if !self.cache.is_uncached_prefix(prefix.as_bytes()) {
            return Ok(self.cache.list(prefix.as_bytes(), None).0);
        }
        let revision = self
            .store
            .status()
            .await
            .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?
            .revision;
        self.objects_from_store(prefix, revision).await
    }

    /// Every object under `prefix` at `revision`, read from the store in pages.
    async fn objects_from_store(
        &self,
        prefix: &str,
        revision: Revision,
    ) -> Result<Vec<Arc<CachedObject>>, ApiError> {
        let mut request = RangeRequest::new(KeyRange::prefix(Bytes::from(prefix.to_owned())))
            .with_limit(1000)
            .at_revision(revision);
        let mut objects = Vec::new();
        loop {
            let response = self
                .store
                .range(request.clone())
                .await
                .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?;
            objects.extend(response.kvs.iter().filter_map(|kv| {
                CachedObject::from_stored(kv.key.clone(), &kv.value, kv.mod_revision).map(Arc::new)
            }));
            match response.next_page(&request) {
                Some(next) => request = next,
                None => return Ok(objects),
            }
        }
    }

    /// Where a watch under `prefix` starts: as [`WatchCache::subscribe`], except that the
    /// current objects of an uncached prefix (Events) are read from the store, at a revision
    /// the cache's window then continues from. The outer error is the store's; the inner one
    /// a resume point that fell out of the window.
    ///
    /// [`WatchCache::subscribe`]: crate::cache::WatchCache::subscribe
    pub async fn subscribe(
        &self,
        prefix: &str,
        after: Option<Revision>,
    ) -> Result<Result<Subscription, TooOld>, ApiError> {
        if after.is_some() || !self.cache.is_uncached_prefix(prefix.as_bytes()) {
            return Ok(self.cache.subscribe(prefix.as_bytes(), after));
        }
        let mut attempts = 0;
        loop {
            let revision = self
                .store
                .status()
                .await
                .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?
                .revision;
            let objects = self.objects_from_store(prefix, revision).await?;
            if !self.cache.wait_for(revision, WATCH_START_WAIT).await {
                return Err(ApiError::new(
                    503,
                    "ServiceUnavailable",
                    format!(
                        "the watch cache has not reached revision {revision} yet; retry the watch"
                    ),
                ));
            }
            // Every change after the listed revision is in the window (or the live feed).
            match self.cache.subscribe(prefix.as_bytes(), Some(revision)) {
                Ok(mut subscription) => {
                    let mut backlog: Vec<Arc<Change>> = objects
                        .into_iter()
                        .map(|object| {
                            Arc::new(Change {
                                kind: ChangeKind::Added,
                                revision: object.revision,
                                object,
                                prev: None,
                            })
                        })
                        .collect();
                    backlog.append(&mut subscription.backlog);
                    subscription.backlog = backlog;
                    return Ok(Ok(subscription));
                }
                // The window moved past the list while it was read: list again.
                Err(too_old) if attempts < 3 => {
                    attempts += 1;
                    tracing::debug!(?too_old, prefix, "uncached watch start: listing again");
                }
                Err(too_old) => return Ok(Err(too_old)),
            }
        }
    }

    fn list_from_cache(
        &self,
        info: &ResourceInfo,
        prefix: &str,
        options: &ListOptions,
    ) -> ListPage {
        let (objects, revision) = self.cache.list(prefix.as_bytes(), None);
        let mut items = Vec::new();
        let continue_token = select(info, prefix, options, revision, objects, &mut items);
        ListPage {
            items,
            revision,
            continue_token,
        }
    }

    async fn list_from_store(
        &self,
        info: &ResourceInfo,
        prefix: &str,
        options: &ListOptions,
        revision: Revision,
        start: Option<String>,
    ) -> Result<ListPage, ApiError> {
        let limit = options.limit.unwrap_or(usize::MAX);
        let range = KeyRange::prefix(Bytes::from(prefix.to_owned()));
        let first = match &start {
            Some(start) => Bytes::from(format!("{prefix}{start}")),
            None => range.start.clone(),
        };
        let mut request = RangeRequest::new(range.resume_at(first))
            .with_limit(limit.clamp(1, 1000))
            .at_revision(revision);
        let mut items = Vec::new();
        loop {
            let response = self
                .store
                .range(request.clone())
                .await
                .map_err(|e| ApiError::from_store(e, info, ""))?;
            // Served as the watch cache serves them: the stored bytes with `resourceVersion`
            // spliced in, selectors on the stored form.
            let objects = response.kvs.iter().filter_map(|kv| {
                CachedObject::from_stored(kv.key.clone(), &kv.value, kv.mod_revision).map(Arc::new)
            });
            if let Some(token) = select(info, prefix, options, revision, objects, &mut items) {
                return Ok(ListPage {
                    items,
                    revision,
                    continue_token: Some(token),
                });
            }
            match response.next_page(&request) {
                Some(next) => request = next,
                None => {
                    return Ok(ListPage {
                        items,
                        revision,
                        continue_token: None,
                    });
                }
            }
        }
    }
}
