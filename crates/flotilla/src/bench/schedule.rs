//! `flotilla bench schedule`: runs [`flotilla_scheduler::bench`] and prints a table and a JSON
//! line last.

use flotilla_scheduler::bench::Figures;
use serde_json::json;

/// Runs the benchmark.
pub fn run(clusters: usize, bindings: usize, nodes: usize) -> anyhow::Result<Figures> {
    Ok(flotilla_scheduler::bench::run(clusters, bindings, nodes)?)
}

/// Prints the table and the JSON line (with the end-to-end figures when measured).
pub fn report(f: &Figures, e2e: Option<&super::schedule_e2e::E2eFigures>) {
    let rows: Vec<(&str, String)> = vec![
        ("clusters", f.clusters.to_string()),
        ("bindings (mixed strategies)", f.bindings.to_string()),
        ("bindings ending in an error", f.errors.to_string()),
        (
            "baseline: general estimator per s",
            format!("{:.0}", f.baseline_per_s),
        ),
        (
            "baseline: general estimator P99 ms",
            format!("{:.3}", f.baseline_p99_ms),
        ),
        (
            "core: bindings scheduled per s",
            format!("{:.0}", f.bindings_per_s),
        ),
        ("core: P50 ms", format!("{:.3}", f.p50_ms)),
        ("core: P99 ms", format!("{:.3}", f.p99_ms)),
        (
            "core time / baseline time",
            format!("{:.2}", f.ratio_to_baseline),
        ),
        ("accurate: nodes", f.nodes.to_string()),
        (
            "accurate: index build ms",
            format!("{:.1}", f.index_build_ms),
        ),
        (
            "baseline: plain node pass P99 ms",
            format!("{:.3}", f.node_pass_p99_ms),
        ),
        (
            "accurate: estimate P50 ms",
            format!("{:.3}", f.accurate_p50_ms),
        ),
        (
            "accurate: estimate P99 ms",
            format!("{:.3}", f.accurate_p99_ms),
        ),
    ];
    let mut rows = rows;
    if let Some(e2e) = e2e {
        rows.extend(super::schedule_e2e::rows(e2e));
    }
    println!("{:<48} {:>14}", "MEASURE", "VALUE");
    for (name, value) in &rows {
        println!("{name:<48} {value:>14}");
    }
    let mut line = serde_json::to_value(f).unwrap_or_default();
    line["bench"] = json!("schedule");
    line["core_vs_target_20k_per_s"] = json!(f.bindings_per_s / 20_000.0);
    line["accurate_p99_vs_target_10ms"] = json!(f.accurate_p99_ms / 10.0);
    if let Some(e2e) = e2e {
        line["e2e"] = serde_json::to_value(e2e).unwrap_or_default();
        line["e2e_backlog_vs_target_2k_per_s"] = json!(e2e.backlog_per_s / 2_000.0);
        line["e2e_live_vs_target_2k_per_s"] = json!(e2e.live_per_s / 2_000.0);
    }
    println!("{line}");
}
