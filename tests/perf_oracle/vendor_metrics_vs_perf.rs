//! The metrics of perf's vendor tables as perf 6.1 lists them: `perf list
//! metric`, `perf list metricgroup`, `perf list --details metric` and the
//! "Metric Groups" section of `perf list`, given a CPU id by `PERF_CPUID`
//! (perf takes a table's metrics by the id alone, no PMU needed), against
//! the `list` example over Linux 6.1's tables (`--vendor-kernel 6.1`, the
//! tables of perf 6.1's own kernel), byte for byte.
//!
//! One difference is known and listed, with its reason: perf 6.1 lists a
//! metric without a `MetricGroup` whose JSON entry is an event too (an
//! `EventName` beside the `MetricName`) as the event only. The tables keep
//! the metric and the event as two records with nothing linking them, so
//! the example recognizes the pair where the event has the metric's name
//! (`LLC_MISSES.PCIE_READ`); skylakex's uncore `power_channel_ppd %` and
//! `power_self_refresh %` (events `unc_m_power_channel_ppd`, ...) it lists,
//! and perf 6.1 does not.

use super::vendor_vs_perf::{can_run, list_binary};
use crate::lab_support;
use std::process::Command;

/// The CPU ids compared, by perf 6.1's mapfile: skylakex, alderlake
/// (hybrid: cpu_core and cpu_atom metrics), amdzen3, icelakex,
/// sapphirerapids.
const CPU_IDS: &[&str] = &[
    "GenuineIntel-6-55-4",
    "GenuineIntel-6-97-2",
    "AuthenticAMD-25-1-1",
    "GenuineIntel-6-6A-6",
    "GenuineIntel-6-8F-8",
];

/// The entries perf 6.1 lists as events only (see the module docs), as
/// the names our listing shows them under.
const LISTED_AS_EVENTS_BY_PERF: &[(&str, &str)] = &[
    ("GenuineIntel-6-55-4", "power_channel_ppd %"),
    ("GenuineIntel-6-55-4", "power_self_refresh %"),
];

fn run(command: &str, args: &[&str], cpuid: &str) -> String {
    let out = Command::new(command)
        .args(args)
        .env("PERF_CPUID", cpuid)
        .output()
        .unwrap_or_else(|e| panic!("{command}: {e}"));
    assert!(
        out.status.success(),
        "{command} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The listing from its "Metric Groups:" or "Metrics:" heading on.
fn metrics_part(text: &str) -> &str {
    let at = ["\nMetric Groups:\n", "\nMetrics:\n"]
        .iter()
        .filter_map(|h| text.find(h))
        .min()
        .unwrap_or(text.len());
    &text[at..]
}

/// `text` without the entries (`  name` and its bracketed lines) of
/// `names`, and how many were removed.
fn without_entries(text: &str, names: &[&str]) -> (String, usize) {
    let mut out = String::new();
    let mut removed = 0;
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        let entry = line.strip_prefix("  ").filter(|l| !l.starts_with(' '));
        if let Some(name) = entry.map(|l| l.trim_end_matches('\n')) {
            skipping = names.contains(&name);
            removed += usize::from(skipping);
        } else if !line.starts_with("       [") {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    (out, removed)
}

#[test]
fn metric_listings_are_perf_6_1_s() {
    let Some(version) = can_run() else {
        return;
    };
    if !version.starts_with("perf version 6.1.") {
        lab_support::skip(
            "needs perf 6.1",
            &format!("{} lists its own kernel's tables", version.trim()),
        );
        return;
    }
    let ours = list_binary();
    let ours = ours.to_str().unwrap();
    let (mut compared, mut lines, mut known) = (0, 0, 0);
    for &cpuid in CPU_IDS {
        let exceptions: Vec<&str> = LISTED_AS_EVENTS_BY_PERF
            .iter()
            .filter(|(id, _)| *id == cpuid)
            .map(|&(_, name)| name)
            .collect();
        for args in [
            &["metric"][..],
            &["metricgroup"],
            &["--details", "metric"],
            &[],
        ] {
            let perf = run("perf", &[&["list"], args].concat(), cpuid);
            let example = run(ours, &[&["--vendor-kernel", "6.1"], args].concat(), cpuid);
            let perf = metrics_part(&perf);
            let (example, removed) = without_entries(metrics_part(&example), &exceptions);
            // Each known entry is listed once per group it is in, which
            // for these group-less ones is once.
            if args != ["metricgroup"] {
                assert_eq!(removed, exceptions.len(), "{cpuid} {args:?}");
            }
            assert!(
                perf.lines().count() > 8,
                "{cpuid} {args:?}: perf listed {perf}"
            );
            for (i, (p, o)) in perf.lines().zip(example.lines()).enumerate() {
                assert_eq!(p, o, "{cpuid} `list {}`, line {}", args.join(" "), i + 1);
            }
            assert_eq!(
                perf.lines().count(),
                example.lines().count(),
                "{cpuid} {args:?}"
            );
            compared += 1;
            lines += perf.lines().count();
            known += removed;
        }
    }
    eprintln!(
        "vendor_metrics_vs_perf: {compared} listings of {} CPU ids, {lines} lines equal to \
         perf 6.1's; {known} entries perf 6.1 lists as events left out of ours",
        CPU_IDS.len()
    );
}
