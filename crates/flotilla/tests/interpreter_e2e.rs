//! ResourceInterpreterCustomization (Lua) end to end through the real binary and the real
//! kubectl: `flotilla up --demo` with Karmada's e2e feature gates, and the cases of Karmada's
//! `resourceinterpreter_test.go` ("Resource interpreter customization testing"): each operation
//! replaced by a Lua script for `apps/v1` Deployments, plus the webhook's refusals.
//!
//! Then Karmada's webhook cases: a ResourceInterpreterWebhookConfiguration pointing at an
//! HTTPS webhook the test serves, answering every operation ahead of the native rules.
//!
//! The customizations are cluster-scoped and all target Deployments, so the cases run one after
//! another (Karmada's suite is serial too), each deleting its customizations when done.

#[path = "propagate_e2e/support.rs"]
#[allow(dead_code)]
mod support;

#[path = "interpreter_e2e/scenarios.rs"]
mod scenarios;

#[path = "interpreter_e2e/webhook.rs"]
mod webhook;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lua_customizations_replace_the_native_interpreter() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plane = support::ControlPlane::demo_with(
        dir.path(),
        &["--feature-gates=AllAlpha=true,AllBeta=true"],
    )
    .await;
    scenarios::webhook_refuses_bad_scripts_and_conflicts(&plane).await;
    scenarios::interpret_replica(&plane).await;
    scenarios::revise_replica(&plane).await;
    scenarios::retain(&plane).await;
    scenarios::aggregate_status(&plane).await;
    scenarios::interpret_status(&plane).await;
    scenarios::interpret_health(&plane).await;
    scenarios::dependency_interpretation(&plane).await;
    let webhook = webhook::Webhook::start(dir.path()).await;
    scenarios::webhook_interprets_every_operation(&plane, &webhook).await;
}
