//! The architecture check: every dependency edge between workspace crates must be one that
//! DESIGN.md's crate table allows. Reads `cargo metadata`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Crate → workspace crates it may depend on (normal and build dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("flotilla-api", &[]),
    ("flotilla-store", &[]),
    ("flotilla-store-redb", &["flotilla-store"]),
    ("flotilla-store-etcd", &["flotilla-store"]),
    ("flotilla-apiserver", &["flotilla-api", "flotilla-store"]),
    ("flotilla-runtime", &[]),
    ("flotilla-member", &["flotilla-api", "flotilla-runtime"]),
    (
        "flotilla-controllers",
        &["flotilla-api", "flotilla-runtime", "flotilla-member"],
    ),
    ("flotilla-scheduler", &["flotilla-api", "flotilla-runtime"]),
    (
        "flotilla-agent",
        &[
            "flotilla-api",
            "flotilla-runtime",
            "flotilla-member",
            "flotilla-controllers",
        ],
    ),
    (
        "flotilla-sim",
        &[
            "flotilla-api",
            "flotilla-store",
            "flotilla-apiserver",
            "flotilla-runtime",
        ],
    ),
    // The binary may use every library crate.
    (
        "flotilla",
        &[
            "flotilla-api",
            "flotilla-store",
            "flotilla-store-redb",
            "flotilla-store-etcd",
            "flotilla-apiserver",
            "flotilla-runtime",
            "flotilla-member",
            "flotilla-controllers",
            "flotilla-scheduler",
            "flotilla-agent",
            "flotilla-sim",
        ],
    ),
];

/// Tests (dev-dependencies) may also use these: the crate itself (to enable its `testing`
/// feature), the simulator as a test world, and the memory store as a fixture.
const TEST_ONLY: &[&str] = &["flotilla-sim", "flotilla-store"];

#[derive(Debug)]
struct Edge {
    from: String,
    to: String,
    dev: bool,
}

fn workspace_edges() -> (BTreeSet<String>, Vec<Edge>) {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect();
    let mut edges = Vec::new();
    for package in packages {
        let from = package["name"].as_str().expect("name");
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let to = dependency["name"].as_str().expect("dependency name");
            if members.contains(to) {
                edges.push(Edge {
                    from: from.to_owned(),
                    to: to.to_owned(),
                    dev: dependency["kind"].as_str() == Some("dev"),
                });
            }
        }
    }
    (members, edges)
}

fn violations(members: &BTreeSet<String>, edges: &[Edge]) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut problems = Vec::new();
    for member in members {
        if member != "xtask" && !allowed.contains_key(member.as_str()) {
            problems.push(format!(
                "crate {member} is not in DESIGN.md's crate table; add it there and here first"
            ));
        }
    }
    for edge in edges {
        let Some(targets) = allowed.get(edge.from.as_str()) else {
            continue;
        };
        let ok = targets.contains(&edge.to.as_str())
            || (edge.dev && (edge.to == edge.from || TEST_ONLY.contains(&edge.to.as_str())));
        if !ok {
            problems.push(format!(
                "{} -> {}{} is not allowed by DESIGN.md's crate table",
                edge.from,
                edge.to,
                if edge.dev { " (dev)" } else { "" }
            ));
        }
    }
    problems
}

#[test]
fn workspace_dependency_edges_follow_the_design_table() {
    let (members, edges) = workspace_edges();
    let problems = violations(&members, &edges);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_catches_a_forbidden_edge() {
    let members: BTreeSet<String> = ["flotilla-store", "flotilla-api", "flotilla-apiserver"]
        .map(String::from)
        .into();
    let edges = vec![
        Edge {
            from: "flotilla-store".into(),
            to: "flotilla-api".into(),
            dev: false,
        },
        Edge {
            from: "flotilla-apiserver".into(),
            to: "flotilla-store".into(),
            dev: false,
        },
    ];
    let problems = violations(&members, &edges);
    assert_eq!(
        problems,
        ["flotilla-store -> flotilla-api is not allowed by DESIGN.md's crate table"]
    );
}
