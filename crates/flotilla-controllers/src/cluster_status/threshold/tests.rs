use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

fn condition(status: &str, reason: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }
}

#[tokio::test(start_paused = true)]
async fn one_failed_probe_does_not_flap_and_a_lasting_failure_is_published_after_the_threshold() {
    let mut t = Thresholds::new(Duration::from_secs(30), Duration::from_secs(30));
    let start = Instant::now();
    let ready = condition("True", "ClusterReady");
    let down = condition("False", "ClusterNotReachable");
    // First observation: published as is.
    assert_eq!(t.adjust("m", None, ready.clone(), start), ready);
    // One failed probe at 10 s, then healthy again at 20 s: Ready never changes.
    let s10 = start + Duration::from_secs(10);
    assert_eq!(t.adjust("m", Some(&ready), down.clone(), s10), ready);
    let s20 = start + Duration::from_secs(20);
    assert_eq!(t.adjust("m", Some(&ready), ready.clone(), s20), ready);
    // A failure from 30 s on is published at 60 s, not before.
    let s30 = start + Duration::from_secs(30);
    assert_eq!(t.adjust("m", Some(&ready), down.clone(), s30), ready);
    let s59 = start + Duration::from_secs(59);
    assert_eq!(t.adjust("m", Some(&ready), down.clone(), s59), ready);
    let s60 = start + Duration::from_secs(60);
    assert_eq!(t.adjust("m", Some(&ready), down.clone(), s60), down);
    // Recovery needs the success threshold too.
    let s70 = start + Duration::from_secs(70);
    assert_eq!(t.adjust("m", Some(&down), ready.clone(), s70), down);
    let s100 = start + Duration::from_secs(100);
    assert_eq!(t.adjust("m", Some(&down), ready.clone(), s100), ready);
}

#[tokio::test(start_paused = true)]
async fn changes_between_not_true_states_are_published_at_once() {
    let mut t = Thresholds::new(Duration::from_secs(30), Duration::from_secs(30));
    let start = Instant::now();
    let unreachable = condition("False", "ClusterNotReachable");
    let unknown = condition("Unknown", "ClusterStatusUnknown");
    assert_eq!(t.adjust("m", None, unreachable.clone(), start), unreachable);
    // Unknown → False (not-True to not-True): no threshold.
    let s1 = start + Duration::from_secs(1);
    assert_eq!(
        t.adjust("m", Some(&unknown), unreachable.clone(), s1),
        unreachable
    );
    // A new reason with the same status is published at once as well.
    let not_ready = condition("False", "ClusterNotReady");
    assert_eq!(
        t.adjust("m", Some(&unreachable), not_ready.clone(), s1),
        not_ready
    );
}
