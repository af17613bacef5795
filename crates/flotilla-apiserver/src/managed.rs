//! `metadata.managedFields`: which manager owns which fields, in kube-apiserver's `FieldsV1`
//! form. An update gives its manager what it changed (taking it from others); an apply gives
//! its manager exactly the fields of its configuration, per list item for list-maps and sets
//! (see [`crate::lifted::smd`]).

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::catalog::ResourceInfo;
use crate::lifted::smd::fieldpath::Set;
use crate::lifted::smd::schema::Cursor;
use crate::lifted::smd::typed::{self, TypeError};
use crate::lifted::smd::update::{self, Manager};

pub use crate::lifted::smd::update::{ApplyError, Conflicts};

/// The schema cursor at the root of an object of `info`.
pub fn cursor(info: &ResourceInfo) -> Cursor<'_> {
    if info.crd.is_some() {
        Cursor::crd(info.schema.as_ref().map(|s| &s.root))
    } else {
        Cursor::builtin(&info.kind)
    }
}

/// The empty object of a kind that a create is compared with: kube compares with the kind's
/// zero value, whose non-pointer structs (metadata, spec, a pod template's metadata and spec,
/// a workload's strategy) exist already, so creating them adds no `.` of their own.
fn zero_object(info: &ResourceInfo, new: &Value) -> &'static Value {
    static ZEROS: LazyLock<Zeros> = LazyLock::new(Zeros::new);
    let zeros = &*ZEROS;
    if info.crd.is_some() || !new.get("spec").is_some_and(Value::is_object) {
        return &zeros.metadata_only;
    }
    match info.kind.as_str() {
        "Deployment" => &zeros.deployment,
        "StatefulSet" | "DaemonSet" => &zeros.stateful,
        "ReplicaSet" | "Job" | "ReplicationController" | "PodTemplate" => &zeros.templated,
        "CronJob" => &zeros.cron_job,
        "Pod" => &zeros.pod,
        _ => &zeros.spec_only,
    }
}

/// The zero objects of [`zero_object`], built once (a create used to build its kind's anew).
struct Zeros {
    metadata_only: Value,
    spec_only: Value,
    deployment: Value,
    stateful: Value,
    templated: Value,
    cron_job: Value,
    pod: Value,
}

impl Zeros {
    fn new() -> Self {
        // `containers` is not `omitempty`: the zero pod spec holds it as null.
        let template = json!({"metadata": {}, "spec": {"containers": null}});
        let with_spec = |spec: Value| json!({"metadata": {}, "spec": spec});
        Zeros {
            metadata_only: json!({"metadata": {}}),
            spec_only: with_spec(json!({})),
            deployment: with_spec(json!({"template": template, "strategy": {}})),
            stateful: with_spec(json!({"template": template, "updateStrategy": {}})),
            templated: with_spec(json!({"template": template})),
            cron_job: with_spec(
                json!({"jobTemplate": {"metadata": {}, "spec": {"template": template}}}),
            ),
            pod: with_spec(json!({"containers": null})),
        }
    }
}

fn entries_of(object: &Value) -> Vec<Manager> {
    update::parse(&object["metadata"]["managedFields"])
}

fn restore(object: &mut Value, managers: &[Manager]) {
    put_entries(object, update::encode(managers));
}

/// [`restore`] writing back the stored entries of unchanged managers.
fn restore_owned(object: &mut Value, managers: Vec<Manager>) {
    put_entries(object, update::encode_owned(managers));
}

/// Sets `metadata.managedFields` to `entries` (a list), or removes it when there are none.
fn put_entries(object: &mut Value, entries: Value) {
    let meta = crate::object::metadata_mut(object);
    if entries.as_array().is_some_and(Vec::is_empty) {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), entries);
    }
}

/// Records an update by `manager`: it owns what it changed from `old` (everything it set when
/// creating), and other managers lose those fields. An object the schema cannot key (a list-map
/// item without its key) keeps its entries as they were.
pub fn record_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    time: &str,
) {
    record_update_in(info, old, new, manager, time, None);
}

/// [`record_update`] through a subresource (`Some("status")`): the manager's entry is the
/// subresource's own (`subresource: status`), as kube-apiserver records it.
pub fn record_update_in(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    time: &str,
    subresource: Option<&str>,
) {
    let api_version = info.api_version();
    let cursor = cursor(info);
    let Some(old) = old else {
        // Creating: one walk against the zero object (the hot path); nobody to take from.
        let zero = zero_object(info, new);
        let entries = match typed::created_fields_v1(zero, new, &cursor) {
            Ok(fields) if !fields.is_empty() => {
                // Built by hand: `json!` would copy `fields` (it serializes each value).
                let mut entry = serde_json::Map::with_capacity(6);
                entry.insert("manager".into(), manager.into());
                entry.insert("operation".into(), "Update".into());
                entry.insert("apiVersion".into(), api_version.into());
                entry.insert("time".into(), time.into());
                entry.insert("fieldsType".into(), "FieldsV1".into());
                entry.insert("fieldsV1".into(), Value::Object(fields));
                vec![Value::Object(entry)]
            }
            Ok(_) => Vec::new(),
            Err(error) => {
                tracing::debug!(%error, "no managed fields: the object does not fit its schema");
                Vec::new()
            }
        };
        put_entries(new, Value::Array(entries));
        return;
    };
    // The stored entries, moved out of `new` when it carries them unchanged (a patch or an
    // update that leaves managedFields alone): unchanged managers are written back as they were
    // stored, not encoded again. Stored managedFields take part in the comparison as one atomic
    // field, which `strip` then leaves unowned, so comparing without them gives the same result.
    let stored = &old["metadata"]["managedFields"];
    // Taken, not removed: `null` keeps the member's place, which `restore_owned` fills again.
    let entries = match new.pointer_mut("/metadata/managedFields") {
        Some(entries) if entries == stored && entries.is_array() => match std::mem::take(entries) {
            Value::Array(entries) => update::parse_owned(entries),
            _ => entries_of(old),
        },
        _ => entries_of(old),
    };
    match update::update_versioned(
        old,
        new,
        &cursor,
        entries,
        manager,
        &api_version,
        time,
        &crate::events::ManagedVersions,
        subresource,
    ) {
        Ok(managers) => restore_owned(new, managers),
        Err(error) => {
            tracing::debug!(%error, "managed fields kept: the object does not fit its schema");
            restore(new, &entries_of(old));
        }
    }
}

/// [`record_update_in`] of a status write (not an apply): `new` is `old` but for `status` (the
/// status part carries the rest over), so only `status` is compared, and only the entries that
/// own something in it, and the writer's own, are parsed. The others cannot lose a field: they
/// are written back as stored, in their place in kube-apiserver's order. Falls back to
/// [`record_update_in`] when an entry that owns status is at another API version (its
/// comparison needs a conversion). The caller guarantees what the write carried over: the
/// stored entries among it.
pub fn record_status_update(
    info: &ResourceInfo,
    old: &Value,
    new: &mut Value,
    manager: &str,
    time: &str,
) {
    const STATUS: Option<&str> = Some("status");
    let api_version = info.api_version();
    let stored = &old["metadata"]["managedFields"];
    let is_mine = |entry: &Value| {
        entry["manager"] == manager
            && entry["operation"] == "Update"
            && entry["subresource"] == "status"
            && entry["apiVersion"] == api_version.as_str()
    };
    let owns_status = |entry: &Value| entry["fieldsV1"].get("f:status").is_some();
    let fits = stored.as_array().is_some_and(|entries| {
        entries
            .iter()
            .all(|entry| !owns_status(entry) || entry["apiVersion"] == api_version.as_str())
    });
    // Carried over with the rest: not compared again (a deep walk of every entry) but in tests.
    debug_assert!(new.pointer("/metadata/managedFields") == stored.as_array().map(|_| stored));
    if !fits {
        return record_update_in(info, Some(old), new, manager, time, STATUS);
    }
    let cursor = cursor(info);
    let comparison = match typed::compare_member(old, new, &cursor, "status") {
        Ok(comparison) => comparison,
        Err(error) => {
            tracing::debug!(%error, "managed fields kept: the status does not fit its schema");
            return;
        }
    };
    if comparison.is_same() {
        return;
    }
    let Some(Value::Array(entries)) = new
        .pointer_mut("/metadata/managedFields")
        .map(std::mem::take)
    else {
        return;
    };
    let (involved, kept): (Vec<Value>, Vec<Value>) = entries
        .into_iter()
        .partition(|entry| owns_status(entry) || is_mine(entry));
    let managers = update::update_compared(
        update::parse_owned(involved),
        &comparison,
        &Default::default(),
        manager,
        &api_version,
        time,
        STATUS,
    );
    let mut entries = update::encode_owned_entries(managers);
    entries.extend(kept);
    // Both parts are in order already; a stable sort keeps ties as `encode` would.
    entries.sort_by(|a, b| update::entry_order(a).cmp(&update::entry_order(b)));
    put_entries(new, Value::Array(entries));
}

/// Server-side apply of `config` by `manager` to `live` (with its managed fields): the new
/// object carrying the new entries.
pub fn apply(
    info: &ResourceInfo,
    live: &Value,
    config: &Value,
    manager: &str,
    force: bool,
    time: &str,
    subresource: Option<&str>,
) -> Result<Value, ApplyError> {
    let cursor = cursor(info);
    let mut managers = entries_of(live);
    let mut plain = live.clone();
    if let Some(meta) = plain.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if managers.is_empty() {
        managers = before_first_apply(info, &plain, &cursor, time);
    }
    let (mut merged, managers) = update::apply_versioned(
        &plain,
        config,
        &cursor,
        managers,
        manager,
        &info.api_version(),
        force,
        time,
        &crate::events::ManagedVersions,
        subresource,
    )?;
    restore(&mut merged, &managers);
    Ok(merged)
}

/// The manager kube-apiserver gives an object's existing fields when it is applied to for the
/// first time without any managed fields (written before server-side apply, or with its
/// entries cleared): `before-first-apply` owns everything, so the first applier conflicts on
/// the fields it changes (kubernetes/kubernetes, staging/src/k8s.io/apiserver/pkg/util/
/// managedfields/internal/skipnonapplied.go, v1.32).
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

fn before_first_apply(
    info: &ResourceInfo,
    live: &Value,
    cursor: &Cursor<'_>,
    time: &str,
) -> Vec<Manager> {
    let zero = zero_object(info, live);
    match typed::created_fields_v1(zero, live, cursor) {
        Ok(fields) if !fields.is_empty() => update::parse(&json!([{
            "manager": BEFORE_FIRST_APPLY,
            "operation": "Update",
            "apiVersion": info.api_version(),
            "time": time,
            "fieldsType": "FieldsV1",
            "fieldsV1": Value::Object(fields),
        }])),
        Ok(_) => Vec::new(),
        Err(error) => {
            tracing::debug!(%error, "no before-first-apply entry: the object does not fit its schema");
            Vec::new()
        }
    }
}

/// The entries of an object created by an apply: the applier owns its configuration.
pub fn created_by_apply(
    info: &ResourceInfo,
    config: &Value,
    manager: &str,
    time: &str,
) -> Result<Value, TypeError> {
    let set = update::strip(typed::to_set(config, &cursor(info))?);
    Ok(update::encode(&[Manager {
        manager: manager.to_owned(),
        operation: "Apply".into(),
        api_version: info.api_version(),
        time: Some(time.to_owned()),
        subresource: None,
        set,
        entry: None,
    }]))
}

/// The field set of one `fieldsV1` value (for tests and tools).
pub fn parse_fields_v1(fields: &Value) -> Set {
    Set::from_fields_v1(fields)
}

/// The manager name kube-apiserver derives from a User-Agent when a write names none:
/// the part before the first `/` (`kubectl.1.33/v1.33.1 (linux/amd64)` → `kubectl.1.33`).
pub fn manager_from_user_agent(user_agent: &str) -> String {
    let name = user_agent.split('/').next().unwrap_or("").trim();
    let name: String = name.chars().take(128).collect();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests;
