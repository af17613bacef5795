//! Faults on a member take it NotReady with Karmada's reason and the not-ready taint, and it
//! recovers; the Ready condition never flips on its own.

use flotilla_sim::serve::{Mode, NetFault};

use crate::support::{World, ready, taint_keys};

const SIM: &str = "seed: 4\nstartLatency: '0'\nclusters:\n- name: m1\n  nodePools: [{name: p, count: 2, profile: cpu}]\n";

async fn goes(world: &World, reason: &str, status: &str) {
    let what = format!("Ready={status} ({reason}) with the right taint");
    let taint = if status == "True" {
        None
    } else {
        Some("cluster.karmada.io/not-ready")
    };
    world
        .cluster_until("m1", &what, |c| {
            ready(c) == Some((status.to_owned(), reason.to_owned()))
                && taint_keys(c) == taint.into_iter().map(str::to_owned).collect::<Vec<_>>()
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_take_a_member_not_ready_with_the_right_reason_and_taint_and_it_recovers() {
    let world = World::start(SIM).await;
    world.join("m1").await;
    goes(&world, "ClusterReady", "True").await;
    let member = world.member("m1");
    for (fault, reason) in [
        (
            NetFault {
                mode: Mode::Down,
                ..NetFault::default()
            },
            "ClusterNotReachable",
        ),
        (
            NetFault {
                readyz_fail: true,
                ..NetFault::default()
            },
            "ClusterNotReady",
        ),
        (
            NetFault {
                mode: Mode::Blackhole,
                ..NetFault::default()
            },
            "ClusterNotReachable",
        ),
    ] {
        member.set_net_fault(fault);
        goes(&world, reason, "False").await;
        let cluster = world.cluster("m1").await.expect("the cluster");
        let message = &crate::support::ready_message(&cluster);
        assert!(!message.is_empty());
        member.set_net_fault(NetFault::default());
        goes(&world, "ClusterReady", "True").await;
    }
    // The same story in Prometheus: three falls and three recoveries, failed probes counted,
    // Ready again now (the gauge follows the status the controller wrote).
    let text = world.scrape();
    for line in [
        "cluster_health_transitions_total{member_cluster=\"m1\",from_state=\"True\",to_state=\"False\"} 3",
        "cluster_ready_state{member_cluster=\"m1\"} 1.0",
        "cluster_node_number{member_cluster=\"m1\"} 2.0",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
    }
    let value = |series: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // A first collection may fail before the member's client is ready: then it recovered once more.
    let recoveries = value(
        "cluster_health_transitions_total{member_cluster=\"m1\",from_state=\"False\",to_state=\"True\"}",
    );
    assert!(
        (3..=4).contains(&recoveries),
        "recoveries {recoveries}\n{text}"
    );
    let errors = value("cluster_health_probe_total{member_cluster=\"m1\",result=\"error\"}");
    assert!(errors >= 3, "failed probes counted: {errors}\n{text}");
}
