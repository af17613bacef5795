//! `flotilla schedule` on YAML fixtures: the binary's output, exit codes and messages.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schedule")
        .join(name)
}

fn example(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(path)
}

fn flotilla_schedule(args: &[(&str, PathBuf)], extra: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flotilla"));
    command.arg("schedule");
    for (flag, path) in args {
        command.arg(flag).arg(path);
    }
    command.args(extra);
    command.output().expect("run flotilla schedule")
}

fn scheduled(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

fn clusters(binding: &Value) -> Vec<(String, i64)> {
    binding["spec"]["clusters"]
        .as_array()
        .expect("spec.clusters")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("name").to_owned(),
                c["replicas"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, i64)]) -> Vec<(String, i64)> {
    p.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect()
}

#[test]
fn vllm_example_splits_five_three_two() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-vllm.yaml")),
            ("--policy", example("vllm/propagationpolicy.yaml")),
            ("--workload", example("vllm/deployment.yaml")),
        ],
        &["-o", "json"],
    );
    let binding = scheduled(&out);
    assert_eq!(binding["apiVersion"], "work.karmada.io/v1alpha2");
    assert_eq!(binding["kind"], "ResourceBinding");
    assert_eq!(binding["metadata"]["name"], "vllm-inference-deployment");
    assert_eq!(binding["metadata"]["namespace"], "default");
    assert_eq!(binding["spec"]["replicas"], 10);
    assert_eq!(
        binding["spec"]["replicaRequirements"]["resourceRequest"]["nvidia.com/gpu"],
        "2"
    );
    assert_eq!(
        clusters(&binding),
        pairs(&[("cn-shanghai", 5), ("eu-central-1", 2), ("us-west-2", 3)])
    );
}

#[test]
fn yaml_output_by_default() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-duplicated.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let binding: Value = yaml_serde::from_slice(&out.stdout).expect("YAML output");
    assert_eq!(clusters(&binding), pairs(&[("member1", 6), ("member2", 6)]));
}

#[test]
fn dynamic_weights_follow_capacity_and_skip_tainted_clusters() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &["-o", "json"],
    );
    assert_eq!(
        clusters(&scheduled(&out)),
        pairs(&[("member1", 4), ("member2", 2)])
    );
}

#[test]
fn aggregated_uses_the_previous_binding() {
    let first = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-aggregated.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &["-o", "json"],
    );
    assert_eq!(clusters(&scheduled(&first)), pairs(&[("member3", 6)]));
    let scale_up = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-aggregated.yaml")),
            ("--workload", fixture("web.yaml")),
            ("--binding", fixture("binding-previous.yaml")),
        ],
        &["-o", "json"],
    );
    assert_eq!(
        clusters(&scheduled(&scale_up)),
        pairs(&[("member1", 5), ("member2", 1)])
    );
}

#[test]
fn nodes_feed_the_accurate_estimator() {
    let args = |workload: &str| {
        vec![
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture(workload)),
            ("--nodes", fixture("nodes.yaml")),
        ]
    };
    let out = flotilla_schedule(&args("web.yaml"), &["-o", "json"]);
    assert_eq!(
        clusters(&scheduled(&out)),
        pairs(&[("member1", 2), ("member2", 4)])
    );
    let out = flotilla_schedule(&args("web-7.yaml"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "failed to assign replicas: failed to scale up: Clusters available replicas 6 are not enough to schedule."
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn no_fit_prints_karmadas_condition_message() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-nofit.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "0/3 clusters are available: 1 cluster(s) had untolerated taint {maintenance=true:NoSchedule}, \
         2 cluster(s) did not match the placement cluster affinity constraint."
    );
}

#[test]
fn bad_input_names_the_file_and_field() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-other.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &["-o", "json"],
    );
    // A policy written for another workload: still scheduled by its placement, with a warning
    // naming the file and field.
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: ")
            && stderr.contains("policy-other.yaml")
            && stderr.contains("spec.resourceSelectors"),
        "{stderr}"
    );
    assert!(
        !scheduled(&out)["spec"]["clusters"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );

    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("does-not-exist.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does-not-exist.yaml"));

    // A workload given as the clusters file: wrong kind, named with its document.
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("web.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("web.yaml: document 1: kind is \"Deployment\", expected Cluster"),
        "{stderr}"
    );
}

#[test]
fn default_resource_models_bound_the_general_estimate() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-models.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web-7.yaml")),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "failed to assign replicas: failed to scale up: Clusters available replicas 6 are not enough to schedule."
    );
}

#[test]
fn node_count_division_extension() {
    let run = |nodes: Option<&str>| {
        let mut args = vec![
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-nodecount.yaml")),
            ("--workload", fixture("web.yaml")),
        ];
        if let Some(n) = nodes {
            args.push(("--nodes", fixture(n)));
        }
        flotilla_schedule(&args, &["-o", "json"])
    };
    // member1 has one node with room for a replica, member2 three: 6 replicas at 1:3.
    let out = run(Some("nodes-two.yaml"));
    assert_eq!(
        clusters(&scheduled(&out)),
        pairs(&[("member1", 2), ("member2", 4)])
    );
    let out = run(None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("flotilla.io/replica-division"));
}

#[test]
fn gpu_topology_extension_prefers_whole_numa_nodes() {
    let run = |policy: &str, nodes: bool| {
        let mut args = vec![
            ("--clusters", fixture("clusters-gpu.yaml")),
            ("--policy", fixture(policy)),
            ("--workload", fixture("llm.yaml")),
        ];
        if nodes {
            args.push(("--nodes", fixture("nodes-gpu.yaml")));
        }
        flotilla_schedule(&args, &["-o", "json"])
    };
    // Both members fit two 3-GPU replicas by count, but on alpha (2 GPUs busy) only one stays on
    // one NUMA node: the preference sends both to beta; Karmada's counting picks alpha.
    let out = run("policy-gpu-topology.yaml", true);
    assert_eq!(clusters(&scheduled(&out)), pairs(&[("beta", 2)]));
    let out = run("policy-gpu-plain.yaml", true);
    assert_eq!(clusters(&scheduled(&out)), pairs(&[("alpha", 2)]));
    let out = run("policy-gpu-topology.yaml", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("flotilla.io/gpu-topology"));
}

#[test]
fn one_file_with_workload_policies_and_overrides() {
    // Karmada's own sample keeps the Deployment and its policy in one file.
    let nginx = example("nginx/nginx.yaml");
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", nginx.clone()),
            ("--workload", nginx),
        ],
        &["-o", "json"],
    );
    let binding = scheduled(&out);
    assert_eq!(clusters(&binding), pairs(&[("member1", 1), ("member2", 1)]));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two policies select `web`: the one naming it wins over the match-all one, as Karmada's
    // detector decides; the OverridePolicy is skipped.
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("bundle.yaml")),
            ("--workload", fixture("bundle.yaml")),
        ],
        &["-o", "json"],
    );
    let binding = scheduled(&out);
    assert_eq!(clusters(&binding), pairs(&[("member1", 4), ("member2", 2)]));
    let meta = &binding["metadata"];
    assert_eq!(
        meta["annotations"]["propagationpolicy.karmada.io/name"],
        "web"
    );
    assert_eq!(
        meta["annotations"]["propagationpolicy.karmada.io/namespace"],
        "default"
    );
    assert_eq!(
        meta["labels"]["propagationpolicy.karmada.io/permanent-id"],
        "9d0b0c40-0000-4000-8000-000000000002"
    );
    assert_eq!(meta["finalizers"][0], "karmada.io/binding-controller");
    assert_eq!(meta["ownerReferences"][0]["kind"], "Deployment");
    assert_eq!(
        meta["ownerReferences"][0]["uid"],
        "4858ca61-3ff8-4095-8267-f3d059d8074c"
    );
    assert_eq!(meta["ownerReferences"][0]["controller"], true);
    let condition = &binding["status"]["conditions"][0];
    assert_eq!(condition["type"], "Scheduled");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "Success");
    assert_eq!(
        condition["message"],
        "Binding has been scheduled successfully."
    );
    assert!(binding["status"]["lastScheduledTime"].is_string());
}

#[test]
fn typed_cluster_lists_are_read() {
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-typed-list.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &["-o", "json"],
    );
    assert_eq!(
        clusters(&scheduled(&out)),
        pairs(&[("member1", 4), ("member2", 2)])
    );
}

#[test]
fn a_stored_binding_alone_is_enough() {
    // Scaled from 4 to 6: only the 2 new replicas are divided (by 10:4 free), on top of 3/1.
    let out = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-typed-list.yaml")),
            ("--binding", fixture("binding-only.yaml")),
        ],
        &["-o", "json"],
    );
    let binding = scheduled(&out);
    assert_eq!(clusters(&binding), pairs(&[("member1", 4), ("member2", 2)]));
    // The stored metadata is kept; the status is Karmada's after a success.
    assert_eq!(binding["metadata"]["generation"], 3);
    assert_eq!(
        binding["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"],
        "9d0b0c40-0000-4000-8000-000000000002"
    );
    assert_eq!(binding["status"]["schedulerObservedGeneration"], 3);
    assert_ne!(
        binding["status"]["lastScheduledTime"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(binding["spec"]["replicas"], 6);
}

#[test]
fn the_output_fed_back_is_a_steady_state() {
    let first = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-list.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
        ],
        &["-o", "json"],
    );
    let binding = scheduled(&first);
    let dir = std::env::temp_dir().join(format!("flotilla-schedule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let previous = dir.join("previous.json");
    std::fs::write(&previous, &first.stdout).expect("write previous");
    // Fewer clusters now have room: a Divided binding whose replicas did not change is not
    // rescheduled, so the previous result stands.
    let again = flotilla_schedule(
        &[
            ("--clusters", fixture("clusters-typed-list.yaml")),
            ("--policy", fixture("policy-dynamic.yaml")),
            ("--workload", fixture("web.yaml")),
            ("--binding", previous),
        ],
        &["-o", "json"],
    );
    let second = scheduled(&again);
    assert_eq!(clusters(&second), clusters(&binding));
    assert_eq!(
        second["status"]["lastScheduledTime"],
        binding["status"]["lastScheduledTime"]
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn empty_workload_propagation_keeps_clusters_without_replicas() {
    // Static weights give member2 nothing for 1 replica out of 2 equal clusters (the smaller name
    // wins the tie); Karmada's flag lists it anyway.
    let args = [
        ("--clusters", fixture("clusters-typed-list.yaml")),
        ("--binding", fixture("binding-static-one.yaml")),
    ];
    let plain = scheduled(&flotilla_schedule(&args, &["-o", "json"]));
    assert_eq!(clusters(&plain), pairs(&[("member1", 1)]));
    let listed = scheduled(&flotilla_schedule(
        &args,
        &["-o", "json", "--enable-empty-workload-propagation"],
    ));
    assert_eq!(clusters(&listed), pairs(&[("member1", 1), ("member2", 0)]));
}
