//! Karmada's `cronfederatedhpa_handler_test.go` (`TestCreateCronJobForExecutor`,
//! `TestGetRuleNextExecuteTime`: how a rule's schedule and time zone are read and its next run
//! found) and `cronfederatedhpa_job_test.go` (`TestFindExecutionHistory` and the history kept by
//! `addSuccessExecutionHistory` / `addFailedExecutionHistory`: [`record`]).

use super::*;

/// The first run of `rule` after `now`, as starting it computes.
fn first_run(
    rule: &CronFederatedHPARule,
    now: jiff::Timestamp,
) -> Result<jiff::Timestamp, CronError> {
    Ok(rule_schedule(rule)?.next_after(now)?)
}

fn rule(name: &str, schedule: &str, zone: Option<&str>) -> CronFederatedHPARule {
    CronFederatedHPARule {
        name: name.into(),
        schedule: schedule.into(),
        time_zone: zone.map(str::to_owned),
        ..CronFederatedHPARule::default()
    }
}

#[test]
fn a_rule_starts_with_a_valid_zone_and_fails_with_an_unknown_one() {
    let now: jiff::Timestamp = "2026-12-06T10:02:30Z".parse().expect("timestamp");
    for (case, zone, ok) in [
        ("no time zone", None, true),
        ("a valid time zone", Some("America/New_York"), true),
        ("an invalid time zone", Some("Invalid/TimeZone"), false),
    ] {
        let result = first_run(&rule("test-rule", "*/5 * * * *", zone), now);
        assert_eq!(result.is_ok(), ok, "{case}: {result:?}");
        if !ok {
            assert!(
                matches!(
                    result,
                    Err(CronError::Schedule(ScheduleError::Location { .. }))
                ),
                "{case}"
            );
        }
    }
}

#[test]
fn the_next_run_of_a_rule_is_after_now() {
    let now = jiff::Timestamp::now();
    let next = first_run(&rule("test-rule", "*/5 * * * *", Some("UTC")), now).expect("next run");
    assert!(next > now);
    // Every five minutes: on a multiple of five, at most five minutes away.
    assert!(next.duration_since(now) <= jiff::SignedDuration::from_mins(5));
    assert_eq!(next.as_second() % 300, 0);
    let fixed: jiff::Timestamp = "2026-12-06T10:02:30Z".parse().expect("timestamp");
    assert_eq!(
        first_run(&rule("r", "*/5 * * * *", Some("UTC")), fixed)
            .expect("next run")
            .to_string(),
        "2026-12-06T10:05:00Z"
    );
}

#[test]
fn a_rules_history_is_found_by_its_name() {
    let histories = |names: &[&str]| -> Vec<ExecutionHistory> {
        names
            .iter()
            .map(|name| ExecutionHistory {
                rule_name: (*name).into(),
                ..ExecutionHistory::default()
            })
            .collect()
    };
    let position = |histories: &[ExecutionHistory], rule: &str| {
        histories.iter().position(|h| h.rule_name == rule)
    };
    assert_eq!(
        position(&histories(&["rule1", "rule2", "rule3"]), "rule2"),
        Some(1)
    );
    assert_eq!(position(&histories(&["rule1", "rule2"]), "rule3"), None);
    assert_eq!(position(&histories(&[]), "rule1"), None);
}

#[test]
fn a_success_records_what_the_rule_applied_and_when_it_was_due() {
    let rule = CronFederatedHPARule {
        target_min_replicas: Some(3),
        target_max_replicas: Some(10),
        ..rule("scale", "*/5 * * * *", None)
    };
    let due = at("2026-12-06T10:05:00Z");
    let mut history = ExecutionHistory {
        rule_name: "scale".into(),
        next_execution_time: Some(due.clone()),
        ..ExecutionHistory::default()
    };
    let ran = at("2026-12-06T10:05:00.3Z");
    record(
        &mut history,
        &rule,
        ran.clone(),
        Some(at("2026-12-06T10:10:00Z")),
        None,
    );
    assert_eq!(
        history.successful_executions,
        [SuccessfulExecution {
            schedule_time: Some(due),
            execution_time: Some(ran),
            applied_replicas: None,
            applied_max_replicas: Some(10),
            applied_min_replicas: Some(3),
        }]
    );
    assert!(history.failed_executions.is_empty());
    assert_eq!(
        history.next_execution_time,
        Some(at("2026-12-06T10:10:00Z"))
    );
}

#[test]
fn a_failure_records_its_message_and_moves_the_next_run_on() {
    let rule = rule("scale", "*/5 * * * *", None);
    let mut history = ExecutionHistory {
        rule_name: "scale".into(),
        next_execution_time: Some(at("2026-12-06T10:05:00Z")),
        ..ExecutionHistory::default()
    };
    record(
        &mut history,
        &rule,
        at("2026-12-06T10:05:01Z"),
        Some(at("2026-12-06T10:10:00Z")),
        Some(r#"deployments.apps "web" not found"#.into()),
    );
    assert_eq!(
        history.failed_executions,
        [FailedExecution {
            schedule_time: Some(at("2026-12-06T10:05:00Z")),
            execution_time: Some(at("2026-12-06T10:05:01Z")),
            message: r#"deployments.apps "web" not found"#.into(),
        }]
    );
    assert!(history.successful_executions.is_empty());
    assert_eq!(
        history.next_execution_time,
        Some(at("2026-12-06T10:10:00Z"))
    );
}

#[test]
fn without_limits_three_runs_of_each_kind_are_kept() {
    let rule = rule("scale", "*/1 * * * *", None);
    let mut history = ExecutionHistory {
        rule_name: "scale".into(),
        ..ExecutionHistory::default()
    };
    for minute in 0..5 {
        let now = at(&format!("2026-12-06T10:0{minute}:00Z"));
        record(&mut history, &rule, now.clone(), None, None);
        record(
            &mut history,
            &rule,
            now,
            None,
            Some(format!("run {minute}")),
        );
    }
    assert_eq!(history.successful_executions.len(), 3);
    let messages: Vec<&str> = history
        .failed_executions
        .iter()
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(messages, ["run 4", "run 3", "run 2"]);
}
