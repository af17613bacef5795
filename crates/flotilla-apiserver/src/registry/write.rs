//! Writes: create (generateName, dry run), update with optimistic concurrency, patch (JSON,
//! merge, strategic, apply), and the status and scale subresources. Deletes are in
//! `delete.rs`.

use bytes::Bytes;
use flotilla_store::{KeyValue, Revision, StoreError};
use serde_json::Value;

use self::kept::Kept;
use super::{Registry, format_time};
use crate::admission;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::lifted::guaranteed_update::Current;
use crate::metrics::webhook::{Operation, webhooks};
use crate::object;
use crate::request::{FieldValidation, Query};

/// A last check on an object about to be written, after defaulting and validation: what the
/// server adds per request that the registry cannot judge alone (RBAC escalation prevention,
/// which needs the caller). `old` is the stored object on update.
pub trait WriteGuard: std::fmt::Debug + Send + Sync {
    fn check(&self, info: &ResourceInfo, new: &Value, old: Option<&Value>) -> Result<(), ApiError>;
}

/// Options shared by create, update and patch.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Checked before the object is stored (see [`WriteGuard`]).
    pub guard: Option<std::sync::Arc<dyn WriteGuard>>,
    pub dry_run: bool,
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    pub force: bool,
    /// The write is a server-side apply (managed fields are recorded by the apply itself).
    pub apply: bool,
    /// The time recorded in managed fields (set by the registry).
    pub now: String,
    /// The subresource written (`status`), recorded in managed fields (set by the registry).
    pub subresource: Option<String>,
    /// The writer is one of [`crate::Builder::untracked_writer`]'s: its own fields are not
    /// recorded in `managedFields` (other managers still lose the fields it changes).
    pub untracked: bool,
    /// Who makes the write, for kinds whose create records it (a CSR's `spec.username`).
    pub requester: Option<crate::auth::authn::UserInfo>,
}

impl WriteOptions {
    pub fn from_query(query: &Query) -> Result<Self, ApiError> {
        Ok(WriteOptions {
            guard: None,
            dry_run: query.dry_run()?,
            field_manager: query.get("fieldManager").map(str::to_owned),
            field_validation: query.field_validation()?,
            force: query.flag("force")?,
            apply: false,
            now: String::new(),
            subresource: None,
            untracked: false,
            requester: None,
        })
    }
}

impl WriteOptions {
    /// From the query, naming the manager after the client (its User-Agent up to the first
    /// `/`) when the request does not, as kube-apiserver does.
    pub fn for_request(query: &Query, user_agent: &str) -> Result<Self, ApiError> {
        let mut options = Self::from_query(query)?;
        if options.field_manager.is_none() {
            options.field_manager = Some(crate::managed::manager_from_user_agent(user_agent));
        }
        Ok(options)
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            guard: None,
            dry_run: false,
            field_manager: None,
            field_validation: FieldValidation::Warn,
            force: false,
            apply: false,
            now: String::new(),
            subresource: None,
            untracked: false,
            requester: None,
        }
    }
}

/// The patch formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchKind {
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type.split(';').next().unwrap_or("").trim() {
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/strategic-merge-patch+json" => Some(PatchKind::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                Some(PatchKind::Apply)
            }
            _ => None,
        }
    }
}

/// An object a write returns, with the bytes stored for it when it was stored: the served
/// JSON is spliced from those (as the watch cache serves them) instead of encoding the object
/// a second time.
#[derive(Debug)]
pub struct Written {
    /// The object; its `metadata.managedFields` and `spec` are placeholders when `kept` holds
    /// them ([`Written::into_object`] puts them back).
    pub object: Value,
    /// The stored bytes and their revision (`None`: nothing was stored, or a dry run).
    pub stored: Option<(Bytes, Revision)>,
    /// Where the served form's `resourceVersion` goes into `stored`, noted when they were
    /// encoded ([`object::encode_spliced`]); `None`: found by scanning them.
    splice: Option<(u32, bool)>,
    /// The stored members that went through the write as bytes (see [`kept`]); in `stored`
    /// already.
    kept: Kept,
}

impl Written {
    fn unstored(object: Value) -> Self {
        Written {
            object,
            stored: None,
            splice: None,
            kept: Kept::default(),
        }
    }

    /// The object, with the members kept as bytes decoded back into it.
    pub fn into_object(self) -> Result<Value, ApiError> {
        let mut object = self.object;
        self.kept.restore(&mut object)?;
        Ok(object)
    }

    /// The object's JSON as served (`resourceVersion` set).
    pub fn json(&self) -> Bytes {
        if let Some((bytes, revision)) = &self.stored {
            let cached = match self.splice {
                Some((at, comma)) => Some(crate::cache::CachedObject::spliced(
                    bytes.clone(),
                    at,
                    comma,
                    *revision,
                )),
                None => crate::cache::CachedObject::from_stored(Bytes::new(), bytes, *revision),
            };
            if let Some(cached) = cached {
                return cached.json();
            }
        }
        let json = serde_json::to_vec(&self.object).expect("JSON values serialize");
        if self.kept.is_empty() {
            return json.into();
        }
        kept::put_back(&json, &self.kept)
            .map(|(json, _)| json.into())
            .unwrap_or_else(|| json.into())
    }
}

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource: everything but status (when the kind has a status subresource).
    Main,
    /// The status subresource: status only.
    Status,
}

mod kept;
mod managed_fields;
mod patch;

pub(super) const MAX_PATCH_RETRIES: usize = 8;

impl Registry {
    /// Creates an object in `namespace` (URL namespace for namespaced kinds).
    pub async fn create(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: Value,
        options: &WriteOptions,
    ) -> Result<Value, ApiError> {
        self.create_written(info, namespace, body, options)
            .await
            .map(|written| written.object)
    }

    /// [`Registry::create`], also returning the stored bytes.
    pub async fn create_written(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        mut body: Value,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        admission::check_type(info, &body)?;
        // What an apply that creates the object owns: the fields it sent, not the defaults.
        let applied_entries = if options.apply {
            let manager = options.field_manager.as_deref().unwrap_or("unknown");
            let entries = crate::managed::created_by_apply(info, &body, manager, &options.now)
                .map_err(|e| {
                    crate::patch_apply::apply_error(info, crate::managed::ApplyError::Type(e))
                })?;
            Some(entries)
        } else {
            None
        };
        let meta = object::metadata_mut(&mut body);
        match (namespace, meta.get("namespace").and_then(Value::as_str)) {
            (Some(url), Some(obj)) if !obj.is_empty() && obj != url => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => {}
        }
        if info.namespaced {
            let ns = namespace.ok_or_else(|| {
                ApiError::bad_request(format!(
                    "{} is namespaced: create it in a namespace",
                    info.qualified_plural()
                ))
            })?;
            meta.insert("namespace".into(), ns.into());
        } else {
            meta.remove("namespace");
        }
        if meta
            .get("resourceVersion")
            .and_then(Value::as_str)
            .is_some_and(|rv| !rv.is_empty())
        {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let generated = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty();
        if generated
            && let Some(base) = meta.get("generateName").and_then(Value::as_str)
            && !base.is_empty()
        {
            let name = format!("{base}{}", random_suffix());
            meta.insert("name".into(), name.into());
        }
        let now = format_time(self.clock.now());
        meta.insert("uid".into(), uuid::Uuid::new_v4().to_string().into());
        meta.insert("creationTimestamp".into(), now.into());
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        if info.generation {
            meta.insert("generation".into(), 1.into());
        } else {
            meta.remove("generation");
        }
        if info.status && info.kind != "Namespace" {
            // Status is written through the status subresource only.
            if let Some(map) = body.as_object_mut() {
                map.remove("status");
            }
        }
        crate::certificates::on_create(info, &mut body, options);
        let (mutating, validating) = webhooks(&info.group, &info.plural, Operation::Create);
        self.webhooks
            .call(mutating, || admission::default_on_create(info, &mut body));
        if let Some(ips) = &self.service_ips
            && info.group.is_empty()
            && info.plural == "services"
        {
            ips.on_create(&mut body);
        }
        let name = object::name(&body).unwrap_or("").to_owned();
        self.webhooks.call(validating, || {
            admission::validate(info, &body, None, self.webhook)
        })?;
        crate::certificates::validate(info, &body, None, Part::Main, options)?;
        self.check_federated_quota(info, &body, None)?;
        self.check_interpreter_customization(info, &body)?;
        if let Some(guard) = &options.guard {
            guard.check(info, &body, None)?;
        }
        if let Some(ns) = namespace.filter(|_| info.namespaced) {
            self.check_namespace_open(ns).await?;
        }
        self.managed_fields_on_write(info, &mut body, None, Part::Main, options);
        if let Some(entries) = applied_entries {
            object::metadata_mut(&mut body).insert("managedFields".into(), entries);
        }
        if options.dry_run {
            return Ok(Written::unstored(body));
        }
        let key = Self::key(info, namespace, &name);
        let (encoded, splice, stored) = encode_served_and_stored(info, &body, self.compact)?;
        let kv = self
            .store
            .create(key.clone(), stored)
            .await
            .map_err(|e| ApiError::from_store(e, info, &name))?;
        self.note_write(&key, kv.mod_revision);
        object::set_resource_version(&mut body, kv.mod_revision);
        self.fence_namespace_write(info, kv.mod_revision);
        crate::crd::after_write(&self.catalog, info, &body);
        Ok(Written {
            object: body,
            stored: Some((encoded, kv.mod_revision)),
            splice,
            kept: Kept::default(),
        })
    }

    /// Replaces an object (PUT), optimistic on the body's resourceVersion when set.
    pub async fn update(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        part: Part,
        options: &WriteOptions,
    ) -> Result<Value, ApiError> {
        admission::check_type(info, &body)?;
        match object::name(&body) {
            Some(n) if n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        let expected = match object::meta_str(&body, "resourceVersion") {
            Some(rv) => object::parse_resource_version(rv)?,
            None => None,
        };
        // The version the body was read at, when the watch cache still holds it, is where the
        // write starts (the store's compare-and-swap verifies it is current); anything else it
        // leads to (an error, nothing to change) is decided again from the store.
        if let Some(expected) = expected
            && !options.dry_run
            && let Some((stored, revision)) = self.cached_current(info, namespace, name)
            && revision == expected
        {
            let mut old = object::decode_at(&stored, revision)?;
            crate::conversion::to_served(info, &mut old);
            let first = Current::cached(revision);
            if let Ok(written) = self
                .write_update(
                    info,
                    namespace,
                    name,
                    first,
                    old,
                    body.clone(),
                    part,
                    false,
                    Kept::default(),
                    options,
                )
                .await
            {
                return Ok(written.object);
            }
        }
        let current = self.read_kv(info, namespace, name).await?;
        if let Some(expected) = expected
            && expected != current.mod_revision
        {
            return Err(ApiError::conflict(info, name));
        }
        let mut old = object::decode(&current)?;
        crate::conversion::to_served(info, &mut old);
        self.write_update(
            info,
            namespace,
            name,
            Current::read(&current),
            old,
            body,
            part,
            false,
            Kept::default(),
            options,
        )
        .await
        .map(|written| written.object)
    }

    /// A PUT: [`Registry::update`], or a create when the object does not exist and the kind
    /// allows create on update (Events, see [`crate::events::allows_create_on_update`]).
    /// Returns the object and whether it was created.
    pub async fn update_or_create(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        part: Part,
        options: &WriteOptions,
    ) -> Result<(Value, bool), ApiError> {
        let creatable = part == Part::Main && crate::events::allows_create_on_update(info);
        if !creatable {
            return Ok((
                self.update(info, namespace, name, body, part, options)
                    .await?,
                false,
            ));
        }
        match self
            .update(info, namespace, name, body.clone(), part, options)
            .await
        {
            Err(e) if e.code == 404 => {
                // The name on the URL names the object; a resourceVersion sent has nothing to
                // match (kube creates without checking it).
                admission::check_type(info, &body)?;
                let meta = object::metadata_mut(&mut body);
                meta.insert("name".into(), name.into());
                meta.remove("resourceVersion");
                let created = self.create(info, namespace, body, options).await?;
                Ok((created, true))
            }
            result => result.map(|object| (object, false)),
        }
    }

    /// The watch cache's copy of an object: its stored bytes and their revision. It may lag
    /// behind the store (a write starting from it is verified by the store's
    /// compare-and-swap); none when it is older than a write this server made (see
    /// [`super::recent`]).
    pub(super) fn cached_current(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<(Bytes, Revision)> {
        let key = Self::key(info, namespace, name);
        let cached = self.cache.get(&key)?;
        if self.recent_writes.may_be_newer(&key, cached.revision) {
            return None;
        }
        Some((cached.stored()?.clone(), cached.revision))
    }

    pub(super) async fn read_kv(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<KeyValue, ApiError> {
        let key = Self::key(info, namespace, name);
        match self.store.get(&key).await {
            Ok(Some(kv)) => Ok(kv),
            Ok(None) => Err(ApiError::not_found(info, name)),
            Err(e) => Err(ApiError::from_store(e, info, name)),
        }
    }

    /// Carries what a write may not change from `current` (decoded and converted: `old`) into
    /// `new`, validates, and stores it if anything changed. Finishes a deletion when the last
    /// finalizer goes. `rest_as_old`: a status write whose `new` is `old` but for `status`
    /// already (a merge patch of `status` alone).
    #[allow(clippy::too_many_arguments)]
    async fn write_update(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        current: Current,
        old: Value,
        mut new: Value,
        part: Part,
        rest_as_old: bool,
        kept: Kept,
        options: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if part == Part::Status {
            // Taken, not removed: the member keeps its place for the comparison below.
            let status = new.get_mut("status").map(std::mem::take);
            // An apply brings the managed fields it computed.
            let applied_fields = options
                .apply
                .then(|| {
                    new.get_mut("metadata")
                        .and_then(Value::as_object_mut)
                        .and_then(|meta| meta.remove("managedFields"))
                })
                .flatten();
            // Everything but status as in `old`: members the patch left alone are kept (a copy
            // of the whole object was a tenth of a status patch's cost), the others copied back.
            match (new.as_object_mut(), old.as_object()) {
                // A merge patch of status alone: the rest was copied from `old`.
                (Some(_), Some(_)) if rest_as_old => {}
                (Some(new), Some(old)) if same_members_but_status(new, old) => {
                    for (key, value) in new.iter_mut() {
                        if let Some(before) = old.get(key)
                            && key != "status"
                            && value != before
                        {
                            value.clone_from(before);
                        }
                    }
                }
                _ => new = old.clone(),
            }
            if let Some(fields) = applied_fields {
                object::metadata_mut(&mut new).insert("managedFields".into(), fields);
            }
            match status {
                Some(status) => new["status"] = status,
                None => {
                    if let Some(map) = new.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        } else if info.status && info.kind != "Namespace" {
            match old.get("status") {
                Some(status) => new["status"] = status.clone(),
                None => {
                    if let Some(map) = new.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        crate::certificates::on_update(
            info,
            &mut new,
            &old,
            part,
            options,
            &format_time(self.clock.now()),
        );
        admission::check_type(info, &new)?;
        // Defaults first, as kube-apiserver defaults while decoding: an undefaulted body equal to
        // the stored object is not a change.
        // Status writes are another resource to Karmada's webhook rules: not sent.
        let (mutating, validating) = match part {
            Part::Main => webhooks(&info.group, &info.plural, Operation::Update),
            _ => (None, None),
        };
        self.webhooks
            .call(mutating, || admission::default_on_update(info, &mut new));
        if let Some(ips) = &self.service_ips
            && part == Part::Main
            && info.group.is_empty()
            && info.plural == "services"
        {
            ips.on_update(&old, &mut new);
        }
        kept.reset_spec(&mut new);
        {
            let old_meta = old.get("metadata");
            let meta = object::metadata_mut(&mut new);
            for field in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ] {
                match old_meta.and_then(|m| m.get(field)) {
                    Some(value) => meta.insert(field.into(), value.clone()),
                    None => meta.remove(field),
                };
            }
            meta.insert(
                "resourceVersion".into(),
                current.revision.to_string().into(),
            );
        }
        if info.generation && part == Part::Main && spec_changed(&old, &new) {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            object::metadata_mut(&mut new).insert("generation".into(), generation.into());
        }
        if part == Part::Status && !options.apply {
            admission::validate_status(info, &new, &old, self.webhook)?;
        } else {
            self.webhooks.call(validating, || {
                admission::validate(info, &new, Some(&old), self.webhook)
            })?;
            if part == Part::Main {
                self.check_federated_quota(info, &new, Some(&old))?;
                self.check_interpreter_customization(info, &new)?;
            }
        }
        crate::certificates::validate(info, &new, Some(&old), part, options)?;
        if let Some(guard) = &options.guard {
            guard.check(info, &new, Some(&old))?;
        }
        // Kept as bytes: an untracked writer's status write that no entry owns anything of
        // (what `untracked_update` leaves as it was).
        if kept.managed_fields.is_none() {
            self.managed_fields_on_write(info, &mut new, Some(&old), part, options);
        }
        let deleting = old["metadata"].get("deletionTimestamp").is_some();
        // A namespace also waits for its content (`spec.finalizers`, see `lifecycle`).
        let namespace_held = info.group.is_empty()
            && info.kind == "Namespace"
            && new["spec"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty());
        let finalizers_gone = deleting && object::finalizers(&new).is_empty() && !namespace_held;
        // Status first: a status write that changes it is told apart without walking the rest.
        let unchanged = old.get("status") == new.get("status") && old == new;
        if unchanged && !finalizers_gone {
            if !current.settles() {
                // Nothing to change in the cache's copy: the store's may differ.
                return Err(ApiError::conflict(info, name));
            }
            return Ok(Written {
                kept,
                ..Written::unstored(old)
            });
        }
        if options.dry_run {
            object::set_resource_version(&mut new, current.revision);
            return Ok(Written::unstored(new));
        }
        let key = Self::key(info, namespace, name);
        if finalizers_gone {
            let (_, revision) = self
                .store
                .delete(key.clone(), Some(current.revision))
                .await
                .map_err(|e| ApiError::from_store(e, info, name))?;
            self.note_write(&key, revision);
            object::set_resource_version(&mut new, revision);
            self.fence_namespace_write(info, revision);
            return Ok(Written {
                kept,
                ..Written::unstored(new)
            });
        }
        let (encoded, splice, stored) = if kept.is_empty() {
            encode_served_and_stored(info, &new, self.compact)?
        } else {
            kept::encode(info, &new, &kept, self.compact)?
        };
        let kv = self
            .store
            .update(key.clone(), stored, current.revision)
            .await
            .map_err(|e| match e {
                StoreError::NotFound { .. } => ApiError::not_found(info, name),
                other => ApiError::from_store(other, info, name),
            })?;
        self.note_write(&key, kv.mod_revision);
        object::set_resource_version(&mut new, kv.mod_revision);
        self.fence_namespace_write(info, kv.mod_revision);
        crate::crd::after_write(&self.catalog, info, &new);
        Ok(Written {
            object: new,
            stored: Some((encoded, kv.mod_revision)),
            splice,
            kept,
        })
    }

    /// Refuses writes into a namespace that does not exist or is being deleted.
    async fn check_namespace_open(&self, namespace: &str) -> Result<(), ApiError> {
        let info = self
            .catalog
            .get("", "v1", "namespaces")
            .expect("namespaces are built in");
        // The watch cache answers without a store read (as kube-apiserver's NamespaceLifecycle
        // admission answers from its informer) once it holds this server's namespace writes,
        // so a create right after `DELETE namespace` is refused. A namespace the cache does
        // not hold (just created elsewhere, or gone) is read from the store.
        let key = Self::key(&info, None, namespace);
        let cached = self
            .cache_has_namespace_writes()
            .then(|| self.cache.get(&key))
            .flatten();
        let terminating = match cached {
            Some(cached) => cached.is_terminating(),
            None => self.get(&info, None, namespace).await?["metadata"]
                .get("deletionTimestamp")
                .is_some(),
        };
        if terminating {
            return Err(ApiError::forbidden(format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            )));
        }
        Ok(())
    }
}

/// The bytes to store for `object`, served as `info` serves it; in the compact form
/// ([`object::compact`]) if `compact`.
pub(super) fn encode_stored(
    info: &ResourceInfo,
    object: &Value,
    compact: bool,
) -> Result<bytes::Bytes, ApiError> {
    let stored = match crate::conversion::to_stored(info, object) {
        Some(stored) => object::encode(&stored)?,
        None => object::encode(object)?,
    };
    Ok(compacted(info, stored, compact))
}

fn compacted(info: &ResourceInfo, stored: bytes::Bytes, compact: bool) -> bytes::Bytes {
    if compact {
        object::compact::compress(&info.storage_prefix(), stored)
    } else {
        stored
    }
}

/// The served form's bytes (what the response is spliced from, with where `resourceVersion`
/// goes in) and the bytes to store: the same allocation unless the kind is served converted (CRD
/// versions, events.k8s.io) or stored `compact`.
#[allow(clippy::type_complexity)]
fn encode_served_and_stored(
    info: &ResourceInfo,
    object: &Value,
    compact: bool,
) -> Result<(bytes::Bytes, Option<(u32, bool)>, bytes::Bytes), ApiError> {
    let (served, splice) = object::encode_spliced(object)?;
    let splice = splice.and_then(|(at, comma)| Some((u32::try_from(at).ok()?, comma)));
    let stored = match crate::conversion::to_stored(info, object) {
        Some(stored) => object::encode(&stored)?,
        None => served.clone(),
    };
    Ok((served, splice, compacted(info, stored, compact)))
}

/// Whether `new` and `old` have the same members but for `status`, in the same order.
fn same_members_but_status(
    new: &serde_json::Map<String, Value>,
    old: &serde_json::Map<String, Value>,
) -> bool {
    new.keys()
        .filter(|k| *k != "status")
        .eq(old.keys().filter(|k| *k != "status"))
}

/// Whether anything but metadata and status differs (compared in place, without copies).
fn spec_changed(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return old != new;
    };
    let rest = |map: &'_ serde_json::Map<String, Value>| {
        map.iter()
            .filter(|(key, _)| key.as_str() != "metadata" && key.as_str() != "status")
            .count()
    };
    rest(old) != rest(new)
        || old
            .iter()
            .filter(|(key, _)| key.as_str() != "metadata" && key.as_str() != "status")
            .any(|(key, value)| new.get(key) != Some(value))
}

/// Five characters from Kubernetes' generateName alphabet (no vowels, no confusable digits).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let uuid = uuid::Uuid::new_v4();
    uuid.as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}
