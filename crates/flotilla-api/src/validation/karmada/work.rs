//! What Karmada's Work mutating webhook does to each manifest: drop the fields a member
//! cluster owns (`prune.RemoveIrrelevantFields` with `RemoveJobTTLSeconds`,
//! pkg/resourceinterpreter/default/native/prune), then record the managed annotation and label
//! keys and stamp the Work's permanent id (`util.SetLabelsAndAnnotationsForWorkload`).

use serde_json::{Map, Value};

use super::defaults::WORK_PERMANENT_ID;
use super::schema::str_at;

/// Annotation listing the manifest's annotation keys Karmada manages.
pub const MANAGED_ANNOTATIONS: &str = "resourcetemplate.karmada.io/managed-annotations";
/// Annotation listing the manifest's label keys Karmada manages.
pub const MANAGED_LABELS: &str = "resourcetemplate.karmada.io/managed-labels";

/// PVC annotation naming the node a volume was provisioned for.
const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

const METADATA_OWNED_BY_MEMBER: &[&str] = &[
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
    "ownerReferences",
    "finalizers",
];

/// Prunes and stamps every manifest of a Work (`spec.workload.manifests[]`).
pub fn prune_manifests(work: &mut Value) {
    let work_id = work["metadata"]["labels"][WORK_PERMANENT_ID]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let manifests = work
        .get_mut("spec")
        .and_then(|s| s.get_mut("workload"))
        .and_then(|w| w.get_mut("manifests"))
        .and_then(Value::as_array_mut);
    for manifest in manifests
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        prune(manifest);
        stamp(manifest, &work_id);
    }
}

/// Removes what the member cluster owns from one manifest.
pub fn prune(object: &mut Map<String, Value>) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in METADATA_OWNED_BY_MEMBER {
            meta.remove(*field);
        }
    }
    object.remove("status");
    let kind = str_at(object, "kind").to_owned();
    match kind.as_str() {
        "Deployment" => {
            remove_annotations(
                object,
                &[
                    "deployment.kubernetes.io/revision",
                    "deployment.kubernetes.io/revision-history",
                ],
            );
        }
        "Job" => {
            let manual = object["spec"]["manualSelector"].as_bool() == Some(true);
            if !manual {
                let generated = ["controller-uid", "batch.kubernetes.io/controller-uid"];
                remove_keys(object, &["spec", "selector", "matchLabels"], &generated);
                remove_keys(
                    object,
                    &["spec", "template", "metadata", "labels"],
                    &[
                        generated[0],
                        generated[1],
                        "job-name",
                        "batch.kubernetes.io/job-name",
                    ],
                );
            }
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("ttlSecondsAfterFinished");
            }
        }
        "Secret" if str_at(object, "type") == "kubernetes.io/service-account-token" => {
            remove_annotations(object, &["kubernetes.io/service-account.uid"]);
            object.insert("data".into(), Value::Null);
        }
        "ServiceAccount" => {
            let name = object["metadata"]["name"].as_str().unwrap_or("").to_owned();
            let prefix = format!("{name}-token-");
            if let Some(secrets) = object.get_mut("secrets").and_then(Value::as_array_mut) {
                // Every match goes, so a second pass changes nothing (Karmada's loop skips the
                // entry after each one it removes: of adjacent token secrets one in two stays).
                secrets.retain(|s| !s["name"].as_str().is_some_and(|n| n.starts_with(&prefix)));
            }
        }
        "Service" => {
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
                && spec
                    .get("clusterIP")
                    .and_then(Value::as_str)
                    .is_some_and(|ip| ip != "None")
            {
                spec.remove("clusterIP");
                spec.remove("clusterIPs");
            }
        }
        // Karmada drops the selected node only when it names one: an empty value is kept.
        "PersistentVolumeClaim"
            if !str_at_path(object, &["metadata", "annotations", SELECTED_NODE]).is_empty() =>
        {
            remove_annotations(object, &[SELECTED_NODE]);
        }
        _ => {}
    }
}

/// The string at `path`, or `""`.
fn str_at_path<'a>(object: &'a Map<String, Value>, path: &[&str]) -> &'a str {
    let Some((first, rest)) = path.split_first() else {
        return "";
    };
    object
        .get(*first)
        .and_then(|v| rest.iter().try_fold(v, |v, k| v.get(*k)))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn remove_annotations(object: &mut Map<String, Value>, keys: &[&str]) {
    remove_keys(object, &["metadata", "annotations"], keys);
}

fn remove_keys(object: &mut Map<String, Value>, path: &[&str], keys: &[&str]) {
    let mut current = object;
    for segment in path {
        match current.get_mut(*segment).and_then(Value::as_object_mut) {
            Some(next) => current = next,
            None => return,
        }
    }
    for key in keys {
        current.remove(*key);
    }
}

/// Records the annotation keys (with the two bookkeeping keys), adds the Work's permanent id
/// as a label, then records the label keys; lists are sorted and comma-joined.
fn stamp(object: &mut Map<String, Value>, work_id: &str) {
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let mut keys: Vec<String> = meta
        .get("annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .filter(|k| k != MANAGED_ANNOTATIONS && k != MANAGED_LABELS)
        .collect();
    keys.push(MANAGED_ANNOTATIONS.into());
    keys.push(MANAGED_LABELS.into());
    keys.sort();
    set_string(meta, "annotations", MANAGED_ANNOTATIONS, keys.join(","));
    if !work_id.is_empty() {
        set_string(meta, "labels", WORK_PERMANENT_ID, work_id.to_owned());
    }
    let mut labels: Vec<String> = meta
        .get("labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    labels.sort();
    set_string(meta, "annotations", MANAGED_LABELS, labels.join(","));
}

fn set_string(meta: &mut Map<String, Value>, map: &str, key: &str, value: String) {
    let entry = meta.entry(map).or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Some(entries) = entry.as_object_mut() {
        entries.insert(key.into(), value.into());
    }
}
