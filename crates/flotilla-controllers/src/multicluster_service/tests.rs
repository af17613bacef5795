use flotilla_api::karmada::{ClusterSelector, ClusterStatus};
use kube::runtime::reflector;

use super::*;

fn cluster(name: &str, ready: bool) -> Cluster {
    let mut cluster = Cluster::default();
    cluster.metadata.name = Some(name.into());
    cluster.status = Some(ClusterStatus {
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: if ready { "True" } else { "False" }.into(),
            reason: String::new(),
            message: String::new(),
            last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
            observed_generation: None,
        }],
        ..ClusterStatus::default()
    });
    cluster
}

#[test]
fn empty_selector_lists_mean_every_cluster() {
    let (reader, mut writer) = reflector::store::<Cluster>();
    for name in ["b", "a"] {
        writer.apply_watcher_event(&WatchEvent::Apply(cluster(name, true)));
    }
    let all: Vec<String> = clusters_of(&[], &reader).into_iter().collect();
    assert_eq!(all, ["a", "b"]);
    let named = clusters_of(
        &[ClusterSelector {
            name: "missing".into(),
        }],
        &reader,
    );
    assert_eq!(named.into_iter().collect::<Vec<_>>(), ["missing"]);
}

#[test]
fn only_membership_and_readiness_changes_concern_multicluster_services() {
    let mut readiness = ClusterReadiness::default();
    let (a, a_down) = (cluster("a", true), cluster("a", false));
    assert!(
        !readiness.changed(&WatchEvent::InitApply(&a)),
        "the initial list"
    );
    assert!(!readiness.changed(&WatchEvent::Apply(&a)), "a heartbeat");
    assert!(readiness.changed(&WatchEvent::Apply(&a_down)));
    assert!(
        readiness.changed(&WatchEvent::Apply(&cluster("b", true))),
        "a new cluster"
    );
    assert!(readiness.changed(&WatchEvent::Delete(&a)));
    assert!(!readiness.changed(&WatchEvent::Delete(&a)));
}

#[test]
fn works_carry_karmadas_marks_and_the_suspension() {
    let meta = ObjectMeta {
        name: Some("w".into()),
        namespace: Some("karmada-es-m1".into()),
        ..ObjectMeta::default()
    };
    let work = work_for(
        meta,
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
               "metadata": {"name": "s", "namespace": "ns", "uid": "u1"}}),
        true,
    );
    assert_eq!(work.spec.suspend_dispatching, Some(true));
    assert!(work_holds(&work, "discovery.k8s.io/v1", "EndpointSlice"));
    assert!(!work_holds(
        &work,
        "networking.karmada.io/v1alpha1",
        "MultiClusterService"
    ));
    let manifest = &work.spec.workload.values()[0];
    assert_eq!(manifest["metadata"]["labels"]["karmada.io/managed"], "true");
    let annotations = &manifest["metadata"]["annotations"];
    assert_eq!(annotations["work.karmada.io/name"], "w");
    assert_eq!(annotations["work.karmada.io/namespace"], "karmada-es-m1");
    assert_eq!(annotations["resourcetemplate.karmada.io/uid"], "u1");
    let dispatched = work_for(ObjectMeta::default(), json!({"metadata": {}}), false);
    assert_eq!(dispatched.spec.suspend_dispatching, None);
}
