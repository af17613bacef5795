//! Defaults of apps/v1 workloads.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/apps/v1/defaults.go at v1.32:
//! `SetDefaults_Deployment`, `SetDefaults_DaemonSet`, `SetDefaults_StatefulSet` (with the
//! `StatefulSetAutoDeletePVC` feature, on by default since v1.27), `SetDefaults_ReplicaSet`;
//! and from zz_generated.defaults.go the pod template defaults of each and the claim defaults
//! of a StatefulSet's `volumeClaimTemplates`.
//!
//! A StatefulSet's `serviceName` has no default upstream (it is optional since v1.32).

use serde_json::Value;

use super::core::persistent_volume_claim;
use super::fields::{Obj, child, items, or_insert, or_insert_str, str_of};
use super::pod;

fn template(spec: &mut Obj) {
    if let Some(template) = child(spec, "template") {
        pod::template(template);
    }
}

pub fn deployment(deployment: &mut Obj) {
    let Some(spec) = child(deployment, "spec") else {
        return;
    };
    or_insert(spec, "replicas", 1);
    if let Some(strategy) = child(spec, "strategy") {
        or_insert_str(strategy, "type", "RollingUpdate");
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = child(strategy, "rollingUpdate")
        {
            or_insert(rolling, "maxUnavailable", "25%");
            or_insert(rolling, "maxSurge", "25%");
        }
    }
    or_insert(spec, "revisionHistoryLimit", 10);
    or_insert(spec, "progressDeadlineSeconds", 600);
    template(spec);
}

pub fn daemon_set(daemon_set: &mut Obj) {
    let Some(spec) = child(daemon_set, "spec") else {
        return;
    };
    if let Some(strategy) = child(spec, "updateStrategy") {
        or_insert_str(strategy, "type", "RollingUpdate");
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = child(strategy, "rollingUpdate")
        {
            or_insert(rolling, "maxUnavailable", 1);
            or_insert(rolling, "maxSurge", 0);
        }
    }
    or_insert(spec, "revisionHistoryLimit", 10);
    template(spec);
}

pub fn stateful_set(stateful_set: &mut Obj) {
    let Some(spec) = child(stateful_set, "spec") else {
        return;
    };
    or_insert_str(spec, "podManagementPolicy", "OrderedReady");
    if let Some(strategy) = child(spec, "updateStrategy") {
        // Only a defaulted type brings a rollingUpdate block; an explicit RollingUpdate
        // without one stays without.
        if str_of(strategy, "type").is_empty() {
            strategy.insert("type".into(), "RollingUpdate".into());
            or_insert(strategy, "rollingUpdate", Obj::new());
        }
        if str_of(strategy, "type") == "RollingUpdate"
            && let Some(rolling) = strategy
                .get_mut("rollingUpdate")
                .and_then(Value::as_object_mut)
        {
            or_insert(rolling, "partition", 0);
        }
    }
    if let Some(retention) = child(spec, "persistentVolumeClaimRetentionPolicy") {
        or_insert_str(retention, "whenDeleted", "Retain");
        or_insert_str(retention, "whenScaled", "Retain");
    }
    or_insert(spec, "replicas", 1);
    or_insert(spec, "revisionHistoryLimit", 10);
    template(spec);
    for claim in items(spec, "volumeClaimTemplates") {
        persistent_volume_claim(claim);
    }
}

pub fn replica_set(replica_set: &mut Obj) {
    let Some(spec) = child(replica_set, "spec") else {
        return;
    };
    or_insert(spec, "replicas", 1);
    template(spec);
}
