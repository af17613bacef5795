//! Karmada's bundled third-party interpretation (`pkg/resourceinterpreter/default/thirdparty`)
//! for the multi-template kinds its scheduling e2e uses: Apache Flink's `FlinkDeployment`
//! (`flink.apache.org/v1beta1`) and Volcano's `Job` (`batch.volcano.sh/v1alpha1`). Karmada
//! ships these as Lua customizations; Flotilla implements the same rules natively (its own
//! code). They are consulted after ResourceInterpreterCustomizations and interpreter webhooks,
//! before the native interpreter, as in Karmada.
//!
//! - **Components** (`GetComponents`, used by the detector under gate
//!   `MultiplePodTemplatesScheduling`): a FlinkDeployment has `jobmanager`
//!   (`spec.jobManager.replicas`, default 1) and `taskmanager` (`spec.taskManager.replicas`, or
//!   ⌈`spec.job.parallelism` ÷ `taskmanager.numberOfTaskSlots`⌉, or 1), each requesting its
//!   `resource.cpu` and `resource.memory`, with the node selector, tolerations and priority
//!   class of `spec.podTemplate.spec`. A Volcano Job has one component per task (its name, or
//!   `task-<i>`), `minAvailable` replicas (default 1), requiring what its pod template requests.
//! - **Replicas** (`GetReplicas`, without the gate): a FlinkDeployment's job and task managers
//!   together, each requesting the larger of the two CPUs and memories. Karmada has no replica
//!   rule for Volcano Jobs.
//! - **Health** (`InterpretHealth`): a FlinkDeployment is healthy when its job runs, has ended
//!   (finished, failed, canceled, suspended) or is passing between states (cancelling, failing,
//!   restarting); while created, initializing or reconciling only if its error is the user's
//!   (an image pull or crash loop); with no job state, when the job manager is `READY` and the
//!   lifecycle `STABLE`. A Volcano Job is healthy in the phases Pending, Running, Restarting,
//!   Completing, Completed, Aborting, Aborted, Terminating and Terminated.

use flotilla_api::Quantity;
use flotilla_api::karmada::Component;
use flotilla_api::karmada::replicas::InterpretedReplicas;
use serde_json::{Map, Value};

const FLINK: (&str, &str) = ("flink.apache.org/v1beta1", "FlinkDeployment");
const VOLCANO_JOB: (&str, &str) = ("batch.volcano.sh/v1alpha1", "Job");

fn kind_of(object: &Value) -> (&str, &str) {
    (
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
    )
}

/// Whether a third-party rule gives `object`'s components.
pub fn has_components(object: &Value) -> bool {
    matches!(kind_of(object), FLINK | VOLCANO_JOB)
}

/// A number, or a string holding one (Lua's `tonumber`); `None` otherwise.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A quantity from a number (as Go decodes a JSON number into a Quantity).
fn quantity_of_number(n: f64) -> Option<Value> {
    Quantity::parse(&format!("{n}"))
        .ok()
        .and_then(|q| serde_json::to_value(q).ok())
}

/// A resource given as a number or a quantity string, as a canonical quantity.
fn quantity(value: &Value) -> Option<Value> {
    match value {
        Value::Number(n) => quantity_of_number(n.as_f64()?),
        Value::String(s) => Quantity::parse(s)
            .ok()
            .and_then(|q| serde_json::to_value(q).ok()),
        _ => None,
    }
}

/// The numeric value of a quantity (the `kube.getResourceQuantity` of Karmada's scripts).
fn quantity_value(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => Quantity::parse(s).ok().map(|q| q.as_f64()),
        _ => None,
    }
}

/// `requires` with `spec.podTemplate.spec`'s node selector, tolerations and priority class.
fn apply_pod_template(object: &Value, requires: &mut Map<String, Value>) {
    let template = &object["spec"]["podTemplate"]["spec"];
    if !template.is_object() {
        return;
    }
    let selector = &template["nodeSelector"];
    let tolerations = &template["tolerations"];
    if !selector.is_null() || !tolerations.is_null() {
        let mut claim = Map::new();
        if !selector.is_null() {
            claim.insert("nodeSelector".into(), selector.clone());
        }
        if !tolerations.is_null() {
            claim.insert("tolerations".into(), tolerations.clone());
        }
        requires.insert("nodeClaim".into(), Value::Object(claim));
    }
    if let Some(priority) = template["priorityClassName"]
        .as_str()
        .filter(|p| !p.is_empty())
    {
        requires.insert("priorityClassName".into(), priority.into());
    }
}

fn flink_task_managers(object: &Value) -> i32 {
    if let Some(replicas) = number(&object["spec"]["taskManager"]["replicas"]) {
        return replicas as i32;
    }
    let parallelism = number(&object["spec"]["job"]["parallelism"]);
    let slots = number(&object["spec"]["flinkConfiguration"]["taskmanager.numberOfTaskSlots"]);
    match (parallelism, slots) {
        (Some(p), Some(s)) if s != 0.0 => (p / s).ceil() as i32,
        _ => 1,
    }
}

fn flink_component(object: &Value, name: &str, manager: &str, replicas: i32) -> Component {
    let resource = &object["spec"][manager]["resource"];
    let mut request = Map::new();
    if let Some(cpu) = quantity(&resource["cpu"]) {
        request.insert("cpu".into(), cpu);
    }
    if let Some(memory) = quantity_value(&resource["memory"]).and_then(quantity_of_number) {
        request.insert("memory".into(), memory);
    }
    let mut requires = Map::new();
    requires.insert("resourceRequest".into(), Value::Object(request));
    apply_pod_template(object, &mut requires);
    Component {
        name: name.into(),
        replicas,
        replica_requirements: Some(Value::Object(requires)),
    }
}

/// The components of `object`, when a third-party rule knows its kind.
pub fn components(object: &Value) -> Option<Vec<Component>> {
    match kind_of(object) {
        FLINK => {
            let job_managers =
                number(&object["spec"]["jobManager"]["replicas"]).unwrap_or(1.0) as i32;
            Some(vec![
                flink_component(object, "jobmanager", "jobManager", job_managers),
                flink_component(
                    object,
                    "taskmanager",
                    "taskManager",
                    flink_task_managers(object),
                ),
            ])
        }
        VOLCANO_JOB => Some(
            object["spec"]["tasks"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, task)| {
                    let name = task["name"]
                        .as_str()
                        .filter(|n| !n.is_empty())
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("task-{i}"));
                    let requires = serde_json::from_value(task["template"]["spec"].clone())
                        .ok()
                        .and_then(|spec| {
                            flotilla_api::karmada::replicas::replica_requirements(&spec).ok()
                        })
                        .flatten()
                        .and_then(|r| serde_json::to_value(r).ok());
                    Component {
                        name,
                        replicas: number(&task["minAvailable"]).unwrap_or(1.0) as i32,
                        replica_requirements: requires,
                    }
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The replicas and per-replica requirements of `object`, when a third-party rule knows its
/// kind (FlinkDeployment only).
pub fn interpret_replica(object: &Value) -> Option<InterpretedReplicas> {
    if kind_of(object) != FLINK {
        return None;
    }
    let job_managers = number(&object["spec"]["jobManager"]["replicas"]).unwrap_or(1.0) as i32;
    let replicas = job_managers + flink_task_managers(object);
    let (jm, tm) = (
        &object["spec"]["jobManager"]["resource"],
        &object["spec"]["taskManager"]["resource"],
    );
    let mut request = Map::new();
    let cpu = match (number(&jm["cpu"]), number(&tm["cpu"])) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    if let Some(cpu) = cpu.and_then(quantity_of_number) {
        request.insert("cpu".into(), cpu);
    }
    // The larger memory, as written in the object.
    let memory = match (quantity_value(&jm["memory"]), quantity_value(&tm["memory"])) {
        (Some(a), Some(b)) => Some(if a > b { &jm["memory"] } else { &tm["memory"] }),
        (Some(_), None) => Some(&jm["memory"]),
        (None, Some(_)) => Some(&tm["memory"]),
        (None, None) => None,
    };
    if let Some(memory) = memory.and_then(quantity) {
        request.insert("memory".into(), memory);
    }
    let mut requires = Map::new();
    requires.insert("resourceRequest".into(), Value::Object(request));
    apply_pod_template(object, &mut requires);
    if let Some(namespace) = object["metadata"]["namespace"]
        .as_str()
        .filter(|n| !n.is_empty())
    {
        requires.insert("namespace".into(), namespace.into());
    }
    let requirements = serde_json::from_value(Value::Object(requires)).ok();
    Some(InterpretedReplicas {
        replicas,
        requirements,
    })
}

/// The health of `object`, when a third-party rule knows its kind.
pub fn health(object: &Value) -> Option<bool> {
    match kind_of(object) {
        FLINK => {
            let status = &object["status"];
            let state = status["jobStatus"]["state"].as_str();
            let Some(state) = state else {
                return Some(
                    status["jobManagerDeploymentStatus"] == "READY"
                        && status["lifecycleState"] == "STABLE",
                );
            };
            Some(match state {
                "RUNNING" | "FINISHED" | "FAILED" | "CANCELED" | "SUSPENDED" => true,
                "CANCELLING" | "FAILING" | "RESTARTING" => true,
                "CREATED" | "INITIALIZING" | "RECONCILING" => {
                    let error = status["error"].as_str().unwrap_or_default();
                    ["ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff"]
                        .iter()
                        .any(|user| error.contains(user))
                }
                _ => false,
            })
        }
        VOLCANO_JOB => Some(matches!(
            object["status"]["state"]["phase"].as_str(),
            Some(
                "Running"
                    | "Completed"
                    | "Pending"
                    | "Aborting"
                    | "Aborted"
                    | "Restarting"
                    | "Completing"
                    | "Terminating"
                    | "Terminated"
            )
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn flink() -> Value {
        json!({"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
        "metadata": {"name": "f", "namespace": "ns"},
        "spec": {
            "flinkConfiguration": {"taskmanager.numberOfTaskSlots": "2"},
            "job": {"parallelism": 2},
            "jobManager": {"replicas": 1, "resource": {"cpu": 0.05, "memory": "100m"}},
            "taskManager": {"resource": {"cpu": 0.1, "memory": "100m"}},
        }})
    }

    #[test]
    fn flink_deployments_have_a_job_and_a_task_manager() {
        let found = components(&flink()).unwrap();
        let summary: Vec<(String, i32, Value)> = found
            .into_iter()
            .map(|c| {
                (
                    c.name,
                    c.replicas,
                    c.replica_requirements.unwrap()["resourceRequest"].clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (
                    "jobmanager".to_owned(),
                    1,
                    json!({"cpu": "50m", "memory": "100m"})
                ),
                (
                    "taskmanager".to_owned(),
                    1,
                    json!({"cpu": "100m", "memory": "100m"})
                ),
            ]
        );
        // Task managers from parallelism and slots, rounded up; an explicit count wins.
        let mut more = flink();
        more["spec"]["job"]["parallelism"] = json!(5);
        assert_eq!(components(&more).unwrap()[1].replicas, 3);
        more["spec"]["taskManager"]["replicas"] = json!(4);
        assert_eq!(components(&more).unwrap()[1].replicas, 4);
        more["spec"]["podTemplate"] =
            json!({"spec": {"nodeSelector": {"zone": "a"}, "priorityClassName": "high"}});
        let requires = components(&more).unwrap()[0]
            .replica_requirements
            .clone()
            .unwrap();
        assert_eq!(
            requires["nodeClaim"],
            json!({"nodeSelector": {"zone": "a"}})
        );
        assert_eq!(requires["priorityClassName"], "high");
    }

    #[test]
    fn flink_replicas_count_both_managers_at_the_larger_request() {
        let mut object = flink();
        object["spec"]["taskManager"]["resource"]["memory"] = json!("1Gi");
        let interpreted = interpret_replica(&object).unwrap();
        assert_eq!(interpreted.replicas, 2);
        let requirements = serde_json::to_value(interpreted.requirements.unwrap()).unwrap();
        assert_eq!(
            requirements["resourceRequest"],
            json!({"cpu": "100m", "memory": "1Gi"})
        );
        assert_eq!(requirements["namespace"], "ns");
    }

    #[test]
    fn volcano_jobs_have_one_component_per_task() {
        let job = json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "spec": {"tasks": [
            {"name": "job-nginx1", "minAvailable": 1, "replicas": 1, "template": {"spec": {
                "containers": [{"name": "n", "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}}}],
                "nodeSelector": {"kubernetes.io/os": "linux"}}}},
            {"minAvailable": 2, "replicas": 3, "template": {"spec": {
                "containers": [{"name": "n", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}}},
        ]}});
        let found = components(&job).unwrap();
        assert_eq!(found[0].name, "job-nginx1");
        assert_eq!(found[0].replicas, 1);
        let first = found[0].replica_requirements.clone().unwrap();
        assert_eq!(
            first["resourceRequest"],
            json!({"cpu": "200m", "memory": "100Mi"})
        );
        assert_eq!(
            first["nodeClaim"]["nodeSelector"],
            json!({"kubernetes.io/os": "linux"})
        );
        assert_eq!(found[1].name, "task-1");
        assert_eq!(found[1].replicas, 2);
        assert!(interpret_replica(&job).is_none());
        assert!(components(&json!({"apiVersion": "apps/v1", "kind": "Deployment"})).is_none());
    }

    #[test]
    fn flink_and_volcano_health() {
        let mut flink = flink();
        assert_eq!(health(&flink), Some(false), "no status yet");
        flink["status"] =
            json!({"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE"});
        assert_eq!(health(&flink), Some(true));
        for (state, error, healthy) in [
            ("RUNNING", "", true),
            ("SUSPENDED", "", true),
            ("RESTARTING", "", true),
            ("CREATED", "", false),
            (
                "RECONCILING",
                "Back-off pulling image: ImagePullBackOff",
                true,
            ),
            ("SOMETHING", "", false),
        ] {
            flink["status"] = json!({"jobStatus": {"state": state}, "error": error});
            assert_eq!(health(&flink), Some(healthy), "{state} {error}");
        }
        let mut job = json!({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job"});
        assert_eq!(health(&job), Some(false));
        job["status"] = json!({"state": {"phase": "Running"}});
        assert_eq!(health(&job), Some(true));
        job["status"] = json!({"state": {"phase": "Failed"}});
        assert_eq!(health(&job), Some(false));
        assert_eq!(
            health(&json!({"apiVersion": "v1", "kind": "ConfigMap"})),
            None
        );
    }
}
