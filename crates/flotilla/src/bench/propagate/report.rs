//! The human-readable table and the last-line JSON of `flotilla bench propagate`.

use serde_json::json;

use super::Figures;

pub(super) fn per(writes: &[(String, u64)], n: usize) -> f64 {
    let total: u64 = writes.iter().map(|(_, c)| c).sum();
    (total as f64 / n.max(1) as f64 * 10.0).round() / 10.0
}

/// `--explain-writes`: every kind of write, per workload, most first.
fn explained(writes: &[(String, u64)], n: usize) {
    for (what, count) in writes {
        println!("    {:6.2}  {what}", *count as f64 / n.max(1) as f64);
    }
}

/// The top resources written, as `resource n/workload`.
fn breakdown(writes: &[(String, u64)], n: usize) -> String {
    writes
        .iter()
        .take(6)
        .map(|(r, c)| {
            format!(
                "{} {:.1}",
                r.rsplit('/').next().unwrap_or(r),
                *c as f64 / n.max(1) as f64
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a / b` to three significant digits (a burst's Works/s is ~0.004 of raw creates/s).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 && a > 0.0 {
        let r = a / b;
        let scale = 10f64.powi(2 - r.log10().floor() as i32);
        (r * scale).round() / scale
    } else {
        0.0
    }
}

pub fn report(f: &Figures) {
    let row = |k: &str, v: String| println!("{k:<58} {v:>16}");
    row("MEASURE", "VALUE".into());
    row(
        "clusters × nodes (sim, child process)",
        format!("{} × {}", f.clusters, f.nodes),
    );
    row(
        "start sim + control plane + join s",
        format!("{:.1}", f.start_s),
    );
    row(
        "baseline: raw Work creates/s (fresh API server)",
        format!("{:.0}", f.baseline.creates_per_s),
    );
    row(
        "baseline: one Work create P50 ms",
        format!("{:.2}", f.baseline.single_p50_ms),
    );
    if let Some(s) = &f.sequential {
        row(
            "one at a time: workloads (3 idle clusters)",
            s.workloads.to_string(),
        );
        row(
            "one at a time: apply→applied P50/P95/P99 ms",
            format!(
                "{}/{}/{}",
                s.applied.p50_ms, s.applied.p95_ms, s.applied.p99_ms
            ),
        );
        row(
            "one at a time: apply→ready P50/P95/P99 ms",
            format!("{}/{}/{}", s.ready.p50_ms, s.ready.p95_ms, s.ready.p99_ms),
        );
        row(
            "one at a time: control-plane writes per workload",
            format!("{:.1}", s.writes_per_workload),
        );
        println!("  by resource: {}", breakdown(&s.writes, s.workloads));
        explained(&s.writes_explained, s.workloads);
    }
    if let Some(b) = &f.burst {
        row(
            "burst: Deployments (Divided 2:1:1 over 3)",
            b.deployments.to_string(),
        );
        row("burst: Works", b.works.to_string());
        if let Some(rate) = b.rate {
            row("burst: created at (Deployments/s)", format!("{rate}"));
        }
        row("burst: creates done s", format!("{:.1}", b.create_s));
        row("burst: all applied s", format!("{:.1}", b.all_applied_s));
        row("burst: all ready s", format!("{:.1}", b.all_ready_s));
        row("burst: Works applied/s", format!("{:.0}", b.works_per_s));
        row(
            "burst: create→applied P50/P95/P99 ms",
            format!(
                "{}/{}/{}",
                b.applied.p50_ms, b.applied.p95_ms, b.applied.p99_ms
            ),
        );
        row(
            "burst: create→ready P50/P95/P99 ms",
            format!("{}/{}/{}", b.ready.p50_ms, b.ready.p95_ms, b.ready.p99_ms),
        );
        row(
            "burst: control-plane CPU s (sim apart)",
            format!("{:.1}", b.control_plane_cpu_s),
        );
        row("burst: sim CPU s", format!("{:.1}", b.sim_cpu_s));
        row(
            "burst: control-plane writes per Deployment",
            format!("{:.1}", b.writes_per_deployment),
        );
        println!("  by resource: {}", breakdown(&b.writes, b.deployments));
        if let (Some(commits), Some(per)) = (b.store_commits, b.store_writes_per_commit) {
            row(
                "burst: store commits (fsyncs) / writes per commit",
                format!("{commits}/{per:.1}"),
            );
        }
        explained(&b.writes_explained, b.deployments);
        row(
            "control-plane RSS MiB: idle / end / peak",
            format!(
                "{:.0}/{:.0}/{:.0}",
                f.rss_idle_mib, b.control_plane_rss_mib, b.control_plane_peak_rss_mib
            ),
        );
        row(
            "sim RSS MiB (child process)",
            format!("{:.0}", b.sim_rss_mib),
        );
        row(
            "burst Works/s / raw Work creates/s",
            format!("{}", ratio(b.works_per_s, f.baseline.creates_per_s)),
        );
    }
    let mut ratios = serde_json::Map::new();
    if let Some(s) = &f.sequential {
        ratios.insert(
            "applied_p50_vs_one_work_create".into(),
            json!(ratio(s.applied.p50_ms, f.baseline.single_p50_ms)),
        );
    }
    if let Some(b) = &f.burst {
        ratios.insert(
            "works_per_s_vs_raw_work_creates".into(),
            json!(ratio(b.works_per_s, f.baseline.creates_per_s)),
        );
    }
    println!(
        "{}",
        json!({"bench": "propagate", "clusters": f.clusters, "nodes": f.nodes,
            "replicas": f.replicas, "start_s": (f.start_s * 10.0).round() / 10.0,
            "rss_before_control_plane_mib": f.rss_before_control_plane_mib.round(),
            "control_plane_idle_rss_mib": f.rss_idle_mib.round(),
            "sequential": f.sequential, "burst": f.burst, "baseline": f.baseline,
            "ratios": ratios})
    );
}

#[cfg(test)]
mod tests {
    use super::ratio;

    #[test]
    fn ratios_keep_three_significant_digits_however_small() {
        assert_eq!(ratio(192.4, 49_555.8), 0.00388);
        assert_eq!(ratio(3.0, 2.0), 1.5);
        assert_eq!(ratio(2_000.0, 3.0), 667.0);
        assert_eq!(ratio(1.0, 0.0), 0.0);
    }
}
