//! Karmada's own scheduling cases (the tables of karmada-io/karmada `pkg/scheduler/core`,
//! `pkg/scheduler/core/spreadconstraint`, `pkg/scheduler/framework/plugins` and
//! `pkg/estimator/client`, v1.19), restated as inputs to our whole core: Clusters with status, a
//! placement, the workload's replicas and requirements, the previous result and status. Each
//! case is described in our words; the expected placements and messages are Karmada's.
//!
//! Unit tables that hand Karmada's functions synthetic scores are run with a test score plugin
//! reading the label `test.flotilla.io/score`; allocatable replicas come from
//! `resourceSummary.allocatable.pods` (the general estimator's answer for a replica without
//! requests).

use std::sync::Arc;

use flotilla_api::karmada::{Cluster, ResourceBindingSpec, ResourceBindingStatus};
use flotilla_scheduler::framework::{PluginContext, PluginEntry, PluginResult, ScorePlugin};
use flotilla_scheduler::{Registry, ScheduleOptions, Snapshot, schedule};
use serde_json::{Value, json};

#[path = "karmada_cases/division.rs"]
mod division;
#[path = "karmada_cases/estimation.rs"]
mod estimation;
#[path = "karmada_cases/filters.rs"]
mod filters;
#[path = "karmada_cases/selection.rs"]
mod selection;

/// A UID whose FNV-1a 32 hash is odd: ties go to the larger cluster name.
const ODD_UID: &str = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c";

/// Label our test score plugin reads.
const SCORE_LABEL: &str = "test.flotilla.io/score";

/// Scores a cluster with the number in its `test.flotilla.io/score` label (0 without).
#[derive(Debug)]
struct LabelScore;

impl ScorePlugin for LabelScore {
    fn name(&self) -> &'static str {
        "TestLabelScore"
    }

    fn score(&self, ctx: &PluginContext<'_>) -> Result<i64, PluginResult> {
        Ok(ctx
            .cluster
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SCORE_LABEL))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0))
    }
}

/// A member serving Deployments and ConfigMaps whose general estimate for a replica without requests
/// is `pods`.
fn member(name: &str, pods: i64) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"syncMode": "Push"},
        "status": {
            "apiEnablements": [
                {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
                {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}],
            "resourceSummary": {"allocatable": {"pods": pods.to_string()}}
        }
    })
}

/// Deep-merges `patch` into `base` (objects merge, everything else replaces).
fn merge(mut base: Value, patch: Value) -> Value {
    match (&mut base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                let current = b.remove(&k).unwrap_or(Value::Null);
                b.insert(k, merge(current, v));
            }
            base
        }
        (_, p) => p,
    }
}

/// `member` with extra fields merged in.
fn member_with(name: &str, pods: i64, patch: Value) -> Value {
    merge(member(name, pods), patch)
}

/// `member` scored `score` by the test plugin.
fn scored(name: &str, pods: i64, score: i64) -> Value {
    member_with(
        name,
        pods,
        json!({"metadata": {"labels": {SCORE_LABEL: score.to_string()}}}),
    )
}

fn dynamic() -> Value {
    json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"}}})
}

fn aggregated() -> Value {
    json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Aggregated"}})
}

/// Static weights by cluster name.
fn static_weights(weights: &[(&str, i64)]) -> Value {
    let list: Vec<Value> = weights
        .iter()
        .map(|(n, w)| json!({"targetCluster": {"clusterNames": [n]}, "weight": w}))
        .collect();
    json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": list}}})
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Want {
    /// `spec.clusters` (sorted by name).
    Placed(Vec<(String, i32)>),
    /// The `Scheduled` condition's reason and message.
    Failed(&'static str, String),
}

/// One case: the inputs of a scheduling run.
struct Case {
    name: &'static str,
    clusters: Vec<Value>,
    placement: Value,
    replicas: i32,
    requirements: Option<Value>,
    previous: Value,
    status: Value,
    uid: &'static str,
    kind: &'static str,
    triggered_at: Option<&'static str>,
    extra: Value,
    want: Option<Want>,
}

impl Case {
    fn new(name: &'static str, clusters: Vec<Value>, placement: Value, replicas: i32) -> Self {
        Self {
            name,
            clusters,
            placement,
            replicas,
            requirements: None,
            previous: json!([]),
            status: json!({}),
            uid: "",
            kind: "Deployment",
            triggered_at: None,
            extra: json!({}),
            want: None,
        }
    }

    /// The previous result (`spec.clusters`).
    fn previous(mut self, pairs: &[(&str, i32)]) -> Self {
        self.previous = pairs
            .iter()
            .map(|(n, r)| json!({"name": n, "replicas": r}))
            .collect();
        self
    }

    fn status(mut self, status: Value) -> Self {
        self.status = status;
        self
    }

    fn requirements(mut self, requirements: Value) -> Self {
        self.requirements = Some(requirements);
        self
    }

    fn uid(mut self, uid: &'static str) -> Self {
        self.uid = uid;
        self
    }

    fn kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }

    /// More binding spec fields (e.g. `gracefulEvictionTasks`).
    fn spec(mut self, extra: Value) -> Self {
        self.extra = extra;
        self
    }

    /// `spec.rescheduleTriggeredAt`.
    fn triggered_at(mut self, time: &'static str) -> Self {
        self.triggered_at = Some(time);
        self
    }

    fn placed(mut self, pairs: &[(&str, i32)]) -> Self {
        self.want = Some(Want::Placed(
            pairs.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect(),
        ));
        self
    }

    fn fails(mut self, reason: &'static str, message: &str) -> Self {
        self.want = Some(Want::Failed(reason, message.to_owned()));
        self
    }

    /// Runs the core as `flotilla schedule` does (policy defaults applied, every in-tree plugin
    /// plus the test score plugin).
    fn run(&self) -> Want {
        let clusters: Vec<Cluster> = self
            .clusters
            .iter()
            .map(|c| {
                let mut cluster: Cluster = serde_json::from_value(c.clone()).expect("cluster");
                cluster.apply_server_defaults();
                cluster
            })
            .collect();
        let spec_json = merge(
            json!({
            "resource": {"apiVersion": if self.kind == "Deployment" {"apps/v1"} else {"v1"},
                "kind": self.kind, "namespace": "default", "name": "app", "uid": self.uid},
            "replicas": self.replicas,
            "replicaRequirements": self.requirements,
            "placement": self.placement,
            "clusters": self.previous,
            "rescheduleTriggeredAt": self.triggered_at,
            }),
            self.extra.clone(),
        );
        let mut spec: ResourceBindingSpec =
            serde_json::from_value(spec_json).expect("binding spec");
        if let Some(p) = &mut spec.placement {
            p.apply_defaults();
        }
        let status: ResourceBindingStatus =
            serde_json::from_value(self.status.clone()).expect("binding status");
        let mut plugins = flotilla_scheduler::plugins::in_tree();
        plugins.push(PluginEntry {
            name: "TestLabelScore",
            filter: None,
            score: Some(Arc::new(LabelScore)),
        });
        let framework = Registry::new(plugins).framework(&["*"]).expect("framework");
        let options = ScheduleOptions {
            framework: &framework,
            estimators: &[],
            enable_empty_workload_propagation: false,
            divide_by_node_count: None,
            gpu_topology: None,
            workload_peers: None,
            assumed: None,
        };
        match schedule(&Snapshot::new(clusters), &spec, &status, &options) {
            Ok(result) => Want::Placed(
                result
                    .clusters
                    .into_iter()
                    .map(|c| (c.name, c.replicas))
                    .collect(),
            ),
            Err(e) => Want::Failed(e.reason(), e.to_string()),
        }
    }
}

/// Runs every case and reports all mismatches at once.
fn check(cases: Vec<Case>) {
    let mut failures = Vec::new();
    for case in cases {
        let want = case
            .want
            .clone()
            .expect("every case states its expectation");
        let got = case.run();
        if got != want {
            failures.push(format!("{}:\n   got {got:?}\n  want {want:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
