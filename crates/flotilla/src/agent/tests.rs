use super::*;
use clap::Parser as _;

#[derive(Debug, clap::Parser)]
struct Cli {
    #[command(flatten)]
    agent: AgentArgs,
}

const HASH: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn parse(extra: &[&str]) -> AgentArgs {
    let mut argv = vec![
        "agent",
        "--cluster-name",
        "m1",
        "--cluster-kubeconfig",
        "member",
    ];
    argv.extend_from_slice(extra);
    Cli::try_parse_from(argv).expect("flags parse").agent
}

fn refused(extra: &[&str]) -> String {
    format!("{:#}", control_plane(&parse(extra)).expect_err("refused"))
}

#[test]
fn a_kubeconfig_runs_the_agent_without_bootstrap() {
    let (path, plan) = control_plane(&parse(&["--kubeconfig", "cp.conf"])).expect("valid");
    assert_eq!(path, PathBuf::from("cp.conf"));
    assert!(plan.is_none());
    assert!(refused(&[]).starts_with("--kubeconfig (the control plane's) is required"));
    assert!(
        refused(&["--kubeconfig", "cp", "--token", "abcdef.0123456789abcdef"])
            .contains("--bootstrap-server")
    );
}

#[test]
fn bootstrap_flags_make_a_plan_with_the_kubeconfig_under_the_cert_dir() {
    let (path, plan) = control_plane(&parse(&[
        "--bootstrap-server",
        "10.0.0.1:6443",
        "--token",
        "abcdef.0123456789abcdef",
        "--discovery-token-ca-cert-hash",
        HASH,
        "--cert-dir",
        "/var/lib/agent",
    ]))
    .expect("valid");
    assert_eq!(path, PathBuf::from("/var/lib/agent/karmada-agent.conf"));
    let plan = plan.expect("a bootstrap");
    assert_eq!(plan.server, "https://10.0.0.1:6443");
    assert_eq!(plan.token.id, "abcdef");
    assert_eq!(plan.kubeconfig, path);
    assert_eq!(plan.timeout, Duration::from_secs(300));
    assert_eq!(plan.expiration_seconds, 31_536_000);
    let (path, _) = control_plane(&parse(&[
        "--bootstrap-server",
        "https://cp:6443",
        "--token",
        "abcdef.0123456789abcdef",
        "--discovery-token-unsafe-skip-ca-verification",
        "--kubeconfig",
        "agent.conf",
    ]))
    .expect("valid");
    assert_eq!(path, PathBuf::from("agent.conf"));
}

#[test]
fn bad_bootstrap_input_names_the_flag() {
    let server = ["--bootstrap-server", "10.0.0.1:6443"];
    let token = ["--token", "abcdef.0123456789abcdef"];
    let hash = ["--discovery-token-ca-cert-hash", HASH];
    let with = |parts: &[&[&str]]| refused(&parts.concat());
    assert!(with(&[&server, &hash]).starts_with("--token is required"));
    assert!(with(&[&server, &["--token", "nope"], &hash]).starts_with("--token: "));
    assert!(with(&[&server, &token]).starts_with("--discovery-token-ca-cert-hash is needed"));
    assert!(
        with(&[
            &server,
            &token,
            &["--discovery-token-ca-cert-hash", "sha256:abc"]
        ])
        .starts_with("--discovery-token-ca-cert-hash: invalid")
    );
    assert!(
        with(&[&["--bootstrap-server", "http://cp:1"], &token, &hash])
            .starts_with("--bootstrap-server \"http://cp:1\"")
    );
    let mut bad_name = parse(&[&server[..], &token, &hash].concat());
    bad_name.cluster_name = "Not_A_Name".into();
    let error = format!("{:#}", control_plane(&bad_name).expect_err("refused"));
    assert!(error.starts_with("--cluster-name"), "{error}");
}

#[test]
fn cert_rotation_is_on_by_default_and_controllers_can_turn_it_off() {
    assert!(rotation_selected("*").expect("valid"));
    assert!(rotation_selected("*,-execution").expect("valid"));
    assert!(!rotation_selected("*,-certRotation").expect("valid"));
    assert!(!rotation_selected("-certRotation,*").expect("valid"));
    assert!(!rotation_selected("clusterStatus,execution").expect("valid"));
    assert!(rotation_selected("certRotation").expect("valid"));
    // Karmada's way of turning it on (off by default there) works too.
    assert!(rotation_selected("*,certRotation").expect("valid"));
    assert!(rotation_selected("*,,x").is_err());
    let args = parse(&["--kubeconfig", "cp.conf"]);
    assert_eq!(
        args.cert_rotation_checking_interval,
        Duration::from_secs(300)
    );
    assert_eq!(args.cert_rotation_remaining_time_threshold, 0.2);
}
