//! The apply and update algorithms of structured-merge-diff's `merge.Updater` (v4.4), and
//! kube-apiserver's `managedFields` entries around them (`k8s.io/apiserver/pkg/util/managedfields`:
//! manager identity, the stripped metadata fields, entry order, conflict wording).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::fieldpath::{Path, PathElement, Set, display_path};
use super::schema::Cursor;
use super::typed::{self, Comparison, TypeError};

/// Metadata fields nobody owns (the `stripMetaManager` set, plus server-set bookkeeping).
pub(crate) const UNMANAGED_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generateName",
];

/// One `managedFields` entry with its field set parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Manager {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: Option<String>,
    pub set: Set,
    /// The entry as it was stored, while nothing of this manager changed: [`encode_owned`]
    /// writes it back as is instead of encoding `set` again (stored entries are this server's
    /// own encoding). Whatever changes the manager must clear it.
    pub entry: Option<Value>,
}

impl Manager {
    /// The entry's identity (kube's manager key): name, operation, subresource, and the API
    /// version for updates.
    fn is(
        &self,
        manager: &str,
        operation: &str,
        api_version: &str,
        subresource: Option<&str>,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
            && (operation == "Apply" || self.api_version == api_version)
    }

    /// How conflict messages name the manager (`printManager`): appliers by name, updaters
    /// with their API version.
    fn label(&self) -> String {
        let name = crate::auth::lifted::forbidden::go_quote(&self.manager);
        if self.operation == "Update" {
            format!("{name} using {}", self.api_version)
        } else {
            name
        }
    }
}

/// Parses `metadata.managedFields`.
pub fn parse(entries: &Value) -> Vec<Manager> {
    let Some(entries) = entries.as_array() else {
        return Vec::new();
    };
    entries.iter().map(manager_of).collect()
}

fn manager_of(e: &Value) -> Manager {
    Manager {
        manager: e["manager"].as_str().unwrap_or("").to_owned(),
        operation: e["operation"].as_str().unwrap_or("").to_owned(),
        api_version: e["apiVersion"].as_str().unwrap_or("").to_owned(),
        time: e["time"].as_str().map(str::to_owned),
        subresource: e["subresource"].as_str().map(str::to_owned),
        set: Set::from_fields_v1(&e["fieldsV1"]),
        entry: None,
    }
}

/// [`parse`] of entries this server stored, each kept for [`encode_owned`] to write back while
/// its manager is unchanged.
pub fn parse_owned(entries: Vec<Value>) -> Vec<Manager> {
    entries
        .into_iter()
        .map(|e| {
            let mut manager = manager_of(&e);
            manager.entry = Some(e);
            manager
        })
        .collect()
}

/// Encodes entries in kube-apiserver's order: operation, time, manager, API version.
pub fn encode(managers: &[Manager]) -> Value {
    let mut sorted: Vec<&Manager> = managers.iter().filter(|m| !m.set.is_empty()).collect();
    sorted.sort_by(|a, b| order(a, b));
    Value::Array(sorted.into_iter().map(entry_of).collect())
}

/// [`encode`], writing back the stored entry of each manager that did not change.
pub fn encode_owned(managers: Vec<Manager>) -> Value {
    Value::Array(encode_owned_entries(managers))
}

/// [`encode_owned`] as a list of entries.
pub fn encode_owned_entries(mut managers: Vec<Manager>) -> Vec<Value> {
    managers.retain(|m| !m.set.is_empty());
    managers.sort_by(order);
    managers
        .into_iter()
        .map(|mut m| m.entry.take().unwrap_or_else(|| entry_of(&m)))
        .collect()
}

/// The order of [`encode`] read from a stored entry, for entries kept without parsing their
/// field sets: operation, time, manager, API version, subresource.
pub fn entry_order(entry: &Value) -> (&str, Option<&str>, &str, &str, Option<&str>) {
    (
        entry["operation"].as_str().unwrap_or(""),
        entry["time"].as_str(),
        entry["manager"].as_str().unwrap_or(""),
        entry["apiVersion"].as_str().unwrap_or(""),
        entry["subresource"].as_str(),
    )
}

fn order(a: &Manager, b: &Manager) -> std::cmp::Ordering {
    (
        &a.operation,
        &a.time,
        &a.manager,
        &a.api_version,
        &a.subresource,
    )
        .cmp(&(
            &b.operation,
            &b.time,
            &b.manager,
            &b.api_version,
            &b.subresource,
        ))
}

fn entry_of(m: &Manager) -> Value {
    let mut entry = json!({
        "manager": m.manager,
        "operation": m.operation,
        "apiVersion": m.api_version,
    });
    if let Some(time) = &m.time {
        entry["time"] = time.clone().into();
    }
    entry["fieldsType"] = "FieldsV1".into();
    entry["fieldsV1"] = m.set.to_fields_v1();
    if let Some(sub) = &m.subresource {
        entry["subresource"] = sub.clone().into();
    }
    entry
}

/// A set without the fields nobody owns: `apiVersion`, `kind`, `status` (reset by the main
/// resource) and identity metadata.
pub fn strip(set: Set) -> Set {
    strip_in(set, None)
}

/// [`strip`] for a write through `subresource`: the status subresource resets everything but
/// `status` (kube's status strategies' `GetResetFields`), so its managers own status only.
pub fn strip_in(mut set: Set, subresource: Option<&str>) -> Set {
    if subresource == Some("status") {
        set.children
            .retain(|element, _| *element == PathElement::Field("status".into()));
        return set;
    }
    for field in ["apiVersion", "kind", "status"] {
        set.children.remove(&PathElement::Field(field.into()));
    }
    if let Some(meta) = set.children.get_mut(&PathElement::Field("metadata".into())) {
        meta.member = false;
        for field in UNMANAGED_METADATA {
            meta.children.remove(&PathElement::Field((*field).into()));
        }
    }
    set.children.retain(|_, child| !child.is_empty());
    set
}

/// Conflicts of an apply, as kube-apiserver reports them (409 with one cause per path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts {
    /// (manager label, path) in manager order, paths in set order.
    pub items: Vec<(String, String)>,
}

impl Conflicts {
    /// `Apply failed with N conflicts: ...`.
    pub fn message(&self) -> String {
        if let [(manager, path)] = self.items.as_slice() {
            return format!("Apply failed with 1 conflict: conflict with {manager}: {path}");
        }
        let mut lines = Vec::new();
        let mut last: Option<&str> = None;
        for (manager, path) in &self.items {
            if last != Some(manager.as_str()) {
                lines.push(format!("conflicts with {manager}:"));
                last = Some(manager);
            }
            lines.push(format!("- {path}"));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            self.items.len(),
            lines.join("\n")
        )
    }
}

/// Why an apply failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApplyError {
    #[error("{0}")]
    Type(#[from] TypeError),
    #[error("{}", .0.message())]
    Conflicts(Conflicts),
}

/// Converts an object to another API version of its resource, so that a manager recorded in
/// that version is compared in the fields it knows (structured-merge-diff's `merge.Converter`;
/// kube's converter goes through the internal type).
pub trait Converter {
    /// `object` as `api_version` serves it; `None` when that is the object's own version or
    /// no conversion is known (then the object is compared as it is).
    fn convert(&self, object: &Value, api_version: &str) -> Option<Value>;
}

/// Every manager is compared in the writer's version (one version, or versions alike).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoConversion;

impl Converter for NoConversion {
    fn convert(&self, _: &Value, _: &str) -> Option<Value> {
        None
    }
}

/// The change from `old` to `new` as each other manager's version sees it (`Updater.update`
/// keeps one comparison per version), keyed by API version; versions the converter does not
/// know use the writer's comparison.
fn comparisons_per_version(
    old: &Value,
    new: &Value,
    cursor: &Cursor<'_>,
    managers: &[Manager],
    api_version: &str,
    converter: &dyn Converter,
) -> Result<BTreeMap<String, Comparison>, TypeError> {
    let mut comparisons = BTreeMap::new();
    for manager in managers {
        let version = &manager.api_version;
        if version == api_version || comparisons.contains_key(version) {
            continue;
        }
        if let (Some(old), Some(new)) = (
            converter.convert(old, version),
            converter.convert(new, version),
        ) {
            comparisons.insert(version.clone(), typed::compare(&old, &new, cursor)?);
        }
    }
    Ok(comparisons)
}

/// Takes what changed from the other managers (`Updater.update`): refuses, unless forced, when
/// another manager owns a field the change sets; forced or not, removed fields leave every
/// other manager. `mine` says which entry is the writer's; managers of another version are
/// compared with that version's comparison from `versions` when there is one.
fn take_from_others(
    managers: &mut Vec<Manager>,
    comparison: &Comparison,
    versions: &BTreeMap<String, Comparison>,
    mine: impl Fn(&Manager) -> bool,
    force: bool,
) -> Result<(), Conflicts> {
    // What changed (set or modified) and what was removed, per version: computed once.
    fn changed(comparison: &Comparison) -> (Set, &Set) {
        (
            comparison.modified.union(&comparison.added),
            &comparison.removed,
        )
    }
    let writers = changed(comparison);
    let others: BTreeMap<&str, (Set, &Set)> = versions
        .iter()
        .map(|(version, comparison)| (version.as_str(), changed(comparison)))
        .collect();
    let changed_in = |version: &str| {
        let (changed, removed) = others.get(version).unwrap_or(&writers);
        (changed, *removed)
    };
    let mut conflicts: Vec<(String, Path)> = Vec::new();
    // A forced change takes what it changed without asking: no conflicts to list.
    for other in managers.iter().filter(|m| !force && !mine(m)) {
        let owned = other.set.intersection(changed_in(&other.api_version).0);
        for path in owned.paths() {
            conflicts.push((other.label(), path));
        }
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort_by(|a, b| a.0.cmp(&b.0));
        return Err(Conflicts {
            items: conflicts
                .into_iter()
                .map(|(m, p)| (m, display_path(&p)))
                .collect(),
        });
    }
    for other in managers.iter_mut().filter(|m| !mine(m)) {
        let (changed, removed) = changed_in(&other.api_version);
        // In place: `difference` would copy every other manager's whole set.
        if other.set.subtract(changed) | other.set.subtract(removed) {
            other.entry = None;
        }
    }
    managers.retain(|m| !m.set.is_empty());
    Ok(())
}

/// Server-side apply of `config` by `manager` to `live` (`Updater.Apply`): the merged object
/// and the new entries. `now` stamps the applier's entry when the object or its set changed.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: &Value,
    config: &Value,
    cursor: &Cursor<'_>,
    managers: Vec<Manager>,
    manager: &str,
    api_version: &str,
    force: bool,
    now: &str,
) -> Result<(Value, Vec<Manager>), ApplyError> {
    apply_versioned(
        live,
        config,
        cursor,
        managers,
        manager,
        api_version,
        force,
        now,
        &NoConversion,
        None,
    )
}

/// [`apply`] where managers of other API versions are compared in their version, through
/// `subresource` (`Some("status")`: the entry is the status subresource's).
#[allow(clippy::too_many_arguments)]
pub fn apply_versioned(
    live: &Value,
    config: &Value,
    cursor: &Cursor<'_>,
    mut managers: Vec<Manager>,
    manager: &str,
    api_version: &str,
    force: bool,
    now: &str,
    converter: &dyn Converter,
    subresource: Option<&str>,
) -> Result<(Value, Vec<Manager>), ApplyError> {
    let is_mine = |m: &Manager| m.is(manager, "Apply", api_version, subresource);
    let merged = typed::merge(live, config, cursor)?;
    let previous = managers.iter().find(|m| is_mine(m)).cloned();
    let applied = strip_in(typed::to_set(config, cursor)?, subresource);
    let last = previous.as_ref().map(|m| m.set.clone()).unwrap_or_default();
    // Everyone's sets with the applier's new one: what prune must keep.
    let mut everyone = applied.clone();
    for other in managers.iter().filter(|m| !is_mine(m)) {
        everyone = everyone.union(&other.set);
    }
    let new_object = prune(&merged, &last, &everyone, cursor)?;
    let comparison = typed::compare(live, &new_object, cursor)?;
    let versions =
        comparisons_per_version(live, &new_object, cursor, &managers, api_version, converter)?;
    take_from_others(&mut managers, &comparison, &versions, is_mine, force)
        .map_err(ApplyError::Conflicts)?;
    let time = match &previous {
        Some(p) if p.set == applied && comparison.is_same() => p.time.clone(),
        _ => Some(now.to_owned()),
    };
    managers.retain(|m| !is_mine(m));
    if applied.is_empty() {
        return Ok((new_object, managers));
    }
    managers.push(Manager {
        manager: manager.to_owned(),
        operation: "Apply".into(),
        api_version: api_version.to_owned(),
        time,
        subresource: subresource.map(str::to_owned),
        set: applied,
        entry: None,
    });
    Ok((new_object, managers))
}

/// Removes what the applier owned before and no longer applies, unless someone (the applier's
/// new configuration included) owns it (`Updater.prune`, `addBackOwnedItems`,
/// `addBackDanglingItems`).
fn prune(
    merged: &Value,
    last: &Set,
    everyone: &Set,
    cursor: &Cursor<'_>,
) -> Result<Value, TypeError> {
    if last.is_empty() {
        return Ok(merged.clone());
    }
    let last = last.all_members();
    let merged_set = typed::to_set(merged, cursor)?.all_members();
    let pruned = typed::remove_items(merged, &last, cursor);
    let pruned_set = typed::to_set(&pruned, cursor)?.all_members();
    let managed = everyone.all_members();
    let unowned = merged_set.difference(&pruned_set.union(&managed));
    let pruned = typed::remove_items(merged, &unowned, cursor);
    let pruned_set = typed::to_set(&pruned, cursor)?.all_members();
    let dangling = merged_set.difference(&pruned_set).intersection(&last);
    Ok(typed::remove_items(merged, &dangling, cursor))
}

/// A non-apply write by `manager` from `old` (`None`: a create, compared with the kind's empty
/// object) to `new` (`Updater.Update` through kube's `managedFieldsUpdater`): the manager gains
/// what changed, others lose it, removed fields leave everyone; the manager's time moves only
/// when it gained something.
pub fn update(
    old: &Value,
    new: &Value,
    cursor: &Cursor<'_>,
    managers: Vec<Manager>,
    manager: &str,
    api_version: &str,
    now: &str,
) -> Result<Vec<Manager>, TypeError> {
    update_versioned(
        old,
        new,
        cursor,
        managers,
        manager,
        api_version,
        now,
        &NoConversion,
        None,
    )
}

/// [`update`] where managers of other API versions are compared in their version, through
/// `subresource` (`Some("status")`: the entry is the status subresource's).
#[allow(clippy::too_many_arguments)]
pub fn update_versioned(
    old: &Value,
    new: &Value,
    cursor: &Cursor<'_>,
    managers: Vec<Manager>,
    manager: &str,
    api_version: &str,
    now: &str,
    converter: &dyn Converter,
    subresource: Option<&str>,
) -> Result<Vec<Manager>, TypeError> {
    let comparison = typed::compare(old, new, cursor)?;
    if comparison.is_same() {
        return Ok(managers);
    }
    let versions = comparisons_per_version(old, new, cursor, &managers, api_version, converter)?;
    Ok(update_compared(
        managers,
        &comparison,
        &versions,
        manager,
        api_version,
        now,
        subresource,
    ))
}

/// The bookkeeping of [`update_versioned`] once the objects are compared (`versions`: the
/// comparison in each other API version a manager is at).
pub fn update_compared(
    mut managers: Vec<Manager>,
    comparison: &Comparison,
    versions: &BTreeMap<String, Comparison>,
    manager: &str,
    api_version: &str,
    now: &str,
    subresource: Option<&str>,
) -> Vec<Manager> {
    if comparison.is_same() {
        return managers;
    }
    let is_mine = |m: &Manager| m.is(manager, "Update", api_version, subresource);
    // Forced: an update never conflicts.
    let _ = take_from_others(&mut managers, comparison, versions, |_| false, true);
    let gained = strip_in(comparison.modified.union(&comparison.added), subresource);
    if gained.is_empty() {
        return managers;
    }
    let previous = managers
        .iter()
        .position(is_mine)
        .map(|i| managers.remove(i).set)
        .unwrap_or_default();
    managers.push(Manager {
        manager: manager.to_owned(),
        operation: "Update".into(),
        api_version: api_version.to_owned(),
        time: Some(now.to_owned()),
        subresource: subresource.map(str::to_owned),
        set: previous.union(&gained),
        entry: None,
    });
    managers
}
