//! The patch path of [`Registry`]: one attempt per read of the object (the watch cache's copy
//! first, then the store's), retried while concurrent writes get in the way.

use serde_json::Value;

use super::{MAX_PATCH_RETRIES, Part, PatchKind, WriteOptions, Written, kept};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::lifted::guaranteed_update::Current;
use crate::object;
use crate::registry::{Registry, format_time};

impl Registry {
    /// Applies a patch, retrying on concurrent writes unless the patch carries a precondition.
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &[u8],
        part: Part,
        options: &WriteOptions,
    ) -> Result<(Value, bool), ApiError> {
        self.patch_with_warnings(info, namespace, name, kind, patch, part, options)
            .await
            .map(|(object, created, _)| (object, created))
    }

    /// [`Registry::patch`], also returning the `fieldValidation` warnings to send
    /// (see [`crate::fieldvalidation`]).
    #[allow(clippy::too_many_arguments)]
    pub async fn patch_with_warnings(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &[u8],
        part: Part,
        options: &WriteOptions,
    ) -> Result<(Value, bool, Vec<String>), ApiError> {
        let (written, created, warnings) = self
            .patch_written(info, namespace, name, kind, patch, part, options)
            .await?;
        Ok((written.into_object()?, created, warnings))
    }

    /// [`Registry::patch_with_warnings`], also returning the stored bytes.
    #[allow(clippy::too_many_arguments)]
    pub async fn patch_written(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &[u8],
        part: Part,
        options: &WriteOptions,
    ) -> Result<(Written, bool, Vec<String>), ApiError> {
        let mut options = options.clone();
        options.apply = kind == PatchKind::Apply;
        options.now = format_time(self.clock.now());
        // A status-part write is the status subresource's, or a CSR's approval.
        options.subresource = (part == Part::Status).then(|| {
            match options.subresource.as_deref() {
                Some("approval") => "approval",
                _ => "status",
            }
            .to_owned()
        });
        let options = &options;
        // fieldValidation: duplicate (and, for apply, unknown) fields of the patch document.
        let check = crate::fieldvalidation::PatchCheck::new(info, kind, patch);
        // A merge patch of `status` alone: the rest of the patched object is the original's.
        let status_only = part == Part::Status
            && kind == PatchKind::Merge
            && check
                .parsed()
                .and_then(Value::as_object)
                .is_some_and(|patch| patch.keys().all(|key| key == "status"));
        // Members the write cannot change that may pass through as bytes: `spec` (for kinds
        // checked not to read it on a status write) and an untracked writer's stored managed
        // fields.
        let keep = status_only && !options.dry_run && options.guard.is_none();
        let keep = (
            keep && options.untracked && kept::applies_to(info),
            keep && kept::spec_applies_to(info),
        );
        // The first attempt starts from the watch cache's copy when it has one (as
        // kube-apiserver's cacher hands its cached object to the store's update loop): the
        // store's compare-and-swap refuses it if it is not current, and whatever else it leads
        // to (an error, nothing to change) is decided again from the store.
        let mut cached = if options.dry_run {
            None
        } else {
            self.cached_current(info, namespace, name)
        };
        for _ in 0..MAX_PATCH_RETRIES {
            let (stored, current) = match cached.take() {
                Some((stored, revision)) => (stored, Current::cached(revision)),
                None => match self.read_kv(info, namespace, name).await {
                    Ok(kv) => {
                        let current = Current::read(&kv);
                        (kv.value, current)
                    }
                    Err(e) if e.code == 404 && kind == PatchKind::Apply && part == Part::Main => {
                        let mut body = crate::patch_apply::parse_apply_body(patch)?;
                        // fieldValidation: unknown fields of the configuration.
                        let warnings = check.finish(info, namespace, &mut body, options)?;
                        let created = self.create_written(info, namespace, body, options).await?;
                        return Ok((created, true, warnings));
                    }
                    Err(e) => return Err(e),
                },
            };
            match self
                .patch_once(
                    info,
                    namespace,
                    name,
                    kind,
                    patch,
                    part,
                    options,
                    &check,
                    (status_only, keep),
                    &stored,
                    current,
                )
                .await
            {
                Err(_) | Ok(Err(_)) if !current.settles() => continue,
                // The store refused the write: the object changed since it was read.
                Ok(Err(e)) if e.reason == "Conflict" => continue,
                Ok(result) => return result,
                Err(e) => return Err(e),
            }
        }
        Err(ApiError::conflict(info, name))
    }

    /// One attempt of [`Registry::patch_written`] on the object stored as `stored` at
    /// `current`: the outer error is the patch's own failure (not retried from a current
    /// copy), the inner one the write's.
    #[allow(clippy::too_many_arguments)]
    async fn patch_once(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &[u8],
        part: Part,
        options: &WriteOptions,
        check: &crate::fieldvalidation::PatchCheck,
        (status_only, (keep_managed_fields, keep_spec)): (bool, (bool, bool)),
        stored: &[u8],
        current: Current,
    ) -> Result<Result<(Written, bool, Vec<String>), ApiError>, ApiError> {
        let (mut original, kept) = match (keep_managed_fields || keep_spec)
            .then(|| kept::take(stored, keep_managed_fields, keep_spec))
            .flatten()
        {
            Some((without, kept)) => (object::decode_at(&without, current.revision)?, kept),
            None => (
                object::decode_at(stored, current.revision)?,
                kept::Kept::default(),
            ),
        };
        crate::conversion::to_served(info, &mut original);
        let mut patched =
            crate::patch_apply::apply_patch(info, &original, kind, patch, check.parsed(), options)?;
        // fieldValidation: unknown fields of the patched object.
        let warnings = check.finish(info, namespace, &mut patched, options)?;
        if let Some(rv) = object::meta_str(&patched, "resourceVersion")
            && object::parse_resource_version(rv)? != Some(current.revision)
        {
            // The patch's precondition.
            return Err(ApiError::conflict(info, name));
        }
        // The decoded object is the write's `old`: decoded once per attempt.
        Ok(self
            .write_update(
                info,
                namespace,
                name,
                current,
                original,
                patched,
                part,
                status_only,
                kept,
                options,
            )
            .await
            .map(|written| (written, false, warnings)))
    }
}
