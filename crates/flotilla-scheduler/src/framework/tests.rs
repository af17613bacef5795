use super::*;

#[test]
fn star_enables_everything_in_order() {
    let framework = Registry::in_tree().framework(&["*"]).expect("framework");
    let names: Vec<_> = framework.names().collect();
    assert_eq!(
        names,
        [
            "APIEnablement",
            "TaintToleration",
            "ClusterAffinity",
            "SpreadConstraint",
            "ClusterLocality",
            "ClusterEviction"
        ]
    );
}

#[test]
fn minus_disables_even_before_star() {
    let registry = Registry::in_tree();
    for list in [vec!["*", "-ClusterLocality"], vec!["-ClusterLocality", "*"]] {
        let framework = registry.framework(&list).expect("framework");
        assert!(
            !framework.names().any(|n| n == "ClusterLocality"),
            "{list:?}"
        );
        assert_eq!(framework.names().count(), 5);
    }
}

#[test]
fn explicit_names_enable_only_those() {
    let framework = Registry::in_tree()
        .framework(&["TaintToleration", "ClusterAffinity"])
        .expect("framework");
    assert_eq!(
        framework.names().collect::<Vec<_>>(),
        ["TaintToleration", "ClusterAffinity"]
    );
    let empty: [&str; 0] = [];
    assert_eq!(
        Registry::in_tree()
            .framework(&empty)
            .expect("framework")
            .names()
            .count(),
        6
    );
}

#[test]
fn unknown_names_are_errors() {
    let err = Registry::in_tree()
        .framework(&["*", "-Nope"])
        .expect_err("unknown");
    assert_eq!(err, RegistryError::UnknownPlugin("Nope".into()));
}

#[test]
fn later_names_win_in_order() {
    let registry = Registry::in_tree();
    let on = |list: &[&str]| registry.framework(list).expect("framework").names().count();
    assert_eq!(on(&["ClusterLocality", "-ClusterLocality"]), 0);
    assert_eq!(on(&["-ClusterLocality", "ClusterLocality"]), 1);
    assert_eq!(on(&["*", "-ClusterLocality", "ClusterLocality"]), 6);
}

#[test]
fn the_workload_affinity_plugins_exist_only_with_their_gate() {
    let off: Vec<_> = Registry::in_tree_gated(false).names().collect();
    assert_eq!(off, Registry::in_tree().names().collect::<Vec<_>>());
    assert!(
        Registry::in_tree_gated(false)
            .framework(&["WorkloadAffinity"])
            .is_err()
    );
    let on = Registry::in_tree_gated(true)
        .framework(&["*", "-WorkloadAntiAffinity"])
        .expect("known names");
    let names: Vec<_> = on.names().collect();
    assert_eq!(names.last(), Some(&"WorkloadAffinity"));
    assert!(!names.contains(&"WorkloadAntiAffinity"));
}
