use serde_json::json;

use super::*;

fn flink(job_cpu: &str, task_cpu: &str) -> Vec<Component> {
    serde_json::from_value(json!([
        {"name": "jobmanager", "replicas": 1,
            "replicaRequirements": {"resourceRequest": {"cpu": job_cpu, "memory": "100Mi"}}},
        {"name": "taskmanager", "replicas": 1,
            "replicaRequirements": {"resourceRequest": {"cpu": task_cpu, "memory": "100Mi"}}}
    ]))
    .expect("components")
}

fn target(name: &str, replicas: i32) -> TargetCluster {
    TargetCluster::new(name, replicas)
}

fn shape<'a>(
    components: &'a [Component],
    requirements: Option<&'a ReplicaRequirements>,
    replicas: i32,
) -> WorkloadShape<'a> {
    WorkloadShape {
        name: "web",
        namespace: "ns",
        replicas,
        requirements,
        components,
    }
}

#[test]
fn a_schedule_assumes_its_footprint_in_each_cluster_until_the_ttl() {
    let now = Instant::now();
    let mut assumptions = Assumptions::new(Duration::from_secs(300));
    let components = flink("50m", "100m");
    assumptions.record_schedule(
        "ns/a",
        &shape(&components, None, 0),
        &[],
        &[target("m1", 0)],
        now,
    );
    let by = assumptions.by_cluster(["m1", "m2"], now);
    assert_eq!(by.len(), 1);
    assert_eq!(by["m1"][0].namespace, "ns");
    assert_eq!(
        demands(&by["m1"][0].components),
        (
            2,
            BTreeMap::from([
                ("cpu".to_owned(), 150),
                ("memory".to_owned(), 200 * 1024 * 1024)
            ])
        )
    );
    // Expired footprints are not counted, then collected.
    assert!(
        assumptions
            .by_cluster(["m1"], now + Duration::from_secs(301))
            .is_empty()
    );
    assert_eq!(assumptions.gc(now + Duration::from_secs(301)), 1);
    assert!(!assumptions.exists("ns/a"));
}

#[test]
fn single_template_bindings_assume_each_clusters_replicas() {
    let now = Instant::now();
    let requirements: ReplicaRequirements = serde_json::from_value(json!({
        "namespace": "ns", "priorityClassName": "high", "resourceRequest": {"cpu": "200m"}
    }))
    .unwrap();
    let mut assumptions = Assumptions::default();
    assumptions.record_schedule(
        "ns/web",
        &shape(&[], Some(&requirements), 5),
        &[],
        &[target("m1", 3), target("m2", 2)],
        now,
    );
    let by = assumptions.by_cluster(["m1", "m2"], now);
    assert_eq!(by["m1"][0].components[0].replicas, 3);
    assert_eq!(by["m2"][0].components[0].replicas, 2);
    assert_eq!(priority_class(&by["m1"][0].components[0]), "high");
    assert_eq!(demands(&by["m1"][0].components).1["cpu"], 600);
    // A non-workload (no replicas, no components) is never assumed.
    assumptions.record_schedule("ns/cm", &shape(&[], None, 0), &[], &[target("m1", 0)], now);
    assert!(!assumptions.exists("ns/cm"));
}

#[test]
fn leaving_a_cluster_turning_healthy_or_deletion_release_footprints() {
    let now = Instant::now();
    let mut assumptions = Assumptions::default();
    let components = flink("50m", "100m");
    let workload = shape(&components, None, 0);
    assumptions.record_schedule(
        "ns/a",
        &workload,
        &[],
        &[target("m1", 0), target("m2", 0)],
        now,
    );
    // Rescheduled from m1+m2 to m2+m3: m1 released.
    assumptions.record_schedule(
        "ns/a",
        &workload,
        &[target("m1", 0), target("m2", 0)],
        &[target("m2", 0), target("m3", 0)],
        now,
    );
    let by = assumptions.by_cluster(["m1", "m2", "m3"], now);
    assert_eq!(by.keys().collect::<Vec<_>>(), ["m2", "m3"]);
    // m2 turns Healthy: released; m3 already Healthy before does not count as a transition.
    assumptions.observe_health("ns/a", BTreeSet::from(["m3".to_owned()]));
    assumptions.record_schedule(
        "ns/a",
        &workload,
        &[],
        &[target("m2", 0), target("m3", 0)],
        now,
    );
    assumptions.observe_health("ns/a", BTreeSet::from(["m2".to_owned(), "m3".to_owned()]));
    let by = assumptions.by_cluster(["m2", "m3"], now);
    assert_eq!(by.keys().collect::<Vec<_>>(), ["m3"]);
    assumptions.release("ns/a");
    assert!(assumptions.by_cluster(["m3"], now).is_empty());
}
