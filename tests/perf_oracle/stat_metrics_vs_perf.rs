//! `perf stat -M` against perf 6.1 itself. This machine has no hardware
//! PMU; perf counts a vendor event anyway when the core PMU it finds is a
//! fake one: a `cpu` directory whose `type` is 1 (the software PMU) and
//! whose format puts every field in `config1` / `config2`, which the
//! software PMU ignores, so that every vendor event opens software event
//! 0 (cpu-clock). The fixture tree holds that `cpu` and the machine's own
//! PMUs (links to their directories: `msr/tsc/`, tracepoints), and is
//! bind-mounted over `/sys/bus/event_source/devices` in a private mount
//! namespace, with `PERF_CPUID` naming a Skylake-X (perf 6.1's table
//! `skylakex`).
//!
//! perf 6.1 and the stat example (built with perf 6.1's tables, feature
//! `vendor-6-1`, run with `--vendor-kernel 6.1`) then count the same
//! metrics of the same command, and for each tool's CSV: the events
//! printed, list by list, are those perf-event-vendor's selection opens
//! (each list compared as a multiset: perf's order inside a list is its
//! hash table's); the metric names printed are the selected ones; and
//! every metric value printed equals the value recomputed from the counts
//! printed in the same output (the counts are times and differ between
//! the tools), by the expressions and this machine's literals
//! (`VendorSystem::set_literals`), printed by perf 6.1's rule. The
//! unknown metric's message and perf's going on without it are compared
//! too. Needs root (`unshare -m`, `mount --bind`) and perf.

use crate::lab_support;
use crate::sysfs_support::Tree;
use perf_event_host::parse::System;
use perf_event_host::sysfs::Pmus;
use perf_event_host::vendor::{LiteralMachine, VendorSystem};
use perf_event_vendor::expr::ExprInputs;
use perf_event_vendor::metricgroup::{MetricOptions, MetricSelection, ScaleUnit};
use perf_event_vendor::Model;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A Skylake-X: perf 6.1's `skylakex` table.
const CPUID: &str = "GenuineIntel-6-55-4";

/// The fake core PMU's formats: every field of the x86 tables' core
/// events outside `config` (perf 6.1's skylakex uses `event`, `umask`,
/// `cmask`, `edge`, `inv`, `any`, `ldlat`, `frontend`, `offcore_rsp`).
const FAKE_FORMATS: &[(&str, &str)] = &[
    ("event", "config1:0-7"),
    ("umask", "config1:8-15"),
    ("edge", "config1:18"),
    ("pc", "config1:19"),
    ("any", "config1:21"),
    ("inv", "config1:23"),
    ("cmask", "config1:24-31"),
    ("in_tx", "config1:32"),
    ("in_tx_cp", "config1:33"),
    ("ldlat", "config2:0-15"),
    ("frontend", "config2:0-23"),
    ("offcore_rsp", "config2:0-63"),
];

/// The fixture: the fake `cpu` (type 1) and links to the machine's PMUs.
fn fake_tree() -> Tree {
    let tree = Tree::new("stat-metrics");
    let mut cpu = tree.pmu("cpu", 1);
    for (name, spec) in FAKE_FORMATS {
        cpu = cpu.format(name, spec);
    }
    let devices = Path::new("/sys/bus/event_source/devices");
    for entry in std::fs::read_dir(devices).unwrap().filter_map(Result::ok) {
        let target = std::fs::canonicalize(entry.path()).unwrap();
        std::os::unix::fs::symlink(target, tree.devices().join(entry.file_name())).unwrap();
    }
    tree
}

/// The stat example with perf 6.1's tables, built once into a target
/// directory of its own (the other tests' `examples/stat` has other
/// features).
fn example() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            crate::stat_support::example_binary(
                "perf-event-host",
                "stat",
                Some("vendor-6-1"),
                Some("stat-metrics"),
            )
        })
        .clone()
}

/// `argv` in a private mount namespace over `devices`, with `PERF_CPUID`:
/// (status, stderr).
fn in_namespace(devices: &Path, argv: &[&str]) -> Result<(i32, String), String> {
    let script = format!(
        "mount --bind {} /sys/bus/event_source/devices && exec \"$@\"",
        devices.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "bash", "-c", &script, "bash"])
        .args(argv)
        .env("PERF_CPUID", CPUID)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("mount: ") || stderr.contains("unshare: ") {
        return Err(stderr);
    }
    Ok((out.status.code().unwrap_or(-1), stderr))
}

/// One tool's CSV: the event lines (name, count text) and the metrics
/// printed (label, value text, how many event lines came before).
struct Report {
    events: Vec<(String, String)>,
    metrics: Vec<(String, String, usize)>,
}

fn report(csv: &str) -> Report {
    let mut r = Report {
        events: Vec::new(),
        metrics: Vec::new(),
    };
    for line in csv.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let f: Vec<&str> = line.split(',').collect();
        let (value, label) = if !f[0].is_empty() && f.len() >= 7 {
            r.events.push((f[2].to_owned(), f[0].to_owned()));
            (f[5], f[6])
        } else if f.len() == 6 {
            (f[4], f[5])
        } else {
            continue;
        };
        if !label.is_empty() {
            r.metrics
                .push((label.to_owned(), value.to_owned(), r.events.len()));
        }
    }
    r
}

/// The name perf prints for a metric id's event.
fn event_name(id: &str) -> String {
    match id.split_once('@') {
        Some((pmu, rest)) => format!("{pmu}/{}/", rest.trim_end_matches('@')),
        None => id.to_owned(),
    }
}

/// perf 6.1's CSV text of a value (`%8.2f`, or `%8.1f` with a unit), cut
/// at the first character that is no digit or `.`.
fn csv_value(v: f64, unit: bool) -> String {
    let text = if v.is_nan() {
        "nan".to_owned()
    } else if v.is_infinite() {
        "inf".to_owned()
    } else if unit {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    text[..end].to_owned()
}

/// Checks one tool's CSV against the selection; the number of metric
/// values recomputed.
fn check_report(
    tool: &str,
    csv: &str,
    selection: &MetricSelection,
    literals: &ExprInputs,
) -> usize {
    check_report_with(tool, csv, selection, literals, None)
}

/// [`check_report`], `duration_time` read as `duration` seconds when
/// given (perf 6.1's metrics in `-I` mode: its wall-clock stats, the `-I`
/// period, not the interval's printed count).
fn check_report_with(
    tool: &str,
    csv: &str,
    selection: &MetricSelection,
    literals: &ExprInputs,
    duration: Option<f64>,
) -> usize {
    let r = report(csv);
    // The event lines, cut into the selection's lists.
    let mut at = 0;
    let mut segments = Vec::new();
    for list in selection.event_lists() {
        let n = list.ids().len();
        assert!(
            at + n <= r.events.len(),
            "{tool}: fewer event lines than the selection opens:\n{csv}"
        );
        let mut printed: Vec<&str> = r.events[at..at + n].iter().map(|e| e.0.as_str()).collect();
        let mut wanted: Vec<String> = list.ids().iter().map(|id| event_name(id)).collect();
        printed.sort_unstable();
        wanted.sort_unstable();
        assert_eq!(printed, wanted, "{tool}: list {}:\n{csv}", list.events());
        segments.push(at..at + n);
        at += n;
    }
    assert_eq!(at, r.events.len(), "{tool}: more event lines:\n{csv}");
    let mut names: Vec<&str> = r
        .metrics
        .iter()
        .filter_map(|(label, ..)| {
            selection
                .metrics()
                .iter()
                .find(|m| label.rsplit("  ").next() == Some(m.metric().name))
                .map(|m| m.metric().name)
        })
        .collect();
    let mut selected: Vec<&str> = selection
        .metrics()
        .iter()
        .map(|m| m.metric().name)
        .collect();
    names.sort_unstable();
    selected.sort_unstable();
    assert_eq!(names, selected, "{tool}: the metrics printed:\n{csv}");
    let mut checked = 0;
    for (label, value, _) in &r.metrics {
        let Some(m) = selection
            .metrics()
            .iter()
            .find(|m| label.rsplit("  ").next() == Some(m.metric().name))
        else {
            continue; // the tool's own shadow metric (CPUs utilized, ...)
        };
        let list = &selection.event_lists()[m.event_list()];
        let mut inputs = literals.clone();
        for (j, id) in segments[m.event_list()].clone().zip(list.ids()) {
            let name = event_name(id);
            let (_, count) = r.events[segments[m.event_list()].clone()]
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or(&r.events[j]);
            let scale = match id.as_str() {
                "duration_time" => 1e-9,
                "user_time" | "system_time" => 1e-6,
                _ => 1.0,
            };
            let count: f64 = count.parse().expect("a counted event");
            let value = match duration {
                Some(d) if id == "duration_time" => d,
                _ => count * scale,
            };
            inputs.insert(id.clone(), value);
        }
        let reading = m.evaluate(&inputs);
        let unit = m.metric().unit.map(ScaleUnit::parse);
        let expected = reading
            .raw
            .map(|raw| csv_value(raw * unit.as_ref().map_or(1.0, |u| u.scale), unit.is_some()))
            .unwrap_or_default();
        assert_eq!(
            value, &expected,
            "{tool}: {label} printed {value}, recomputed {expected} from the counts:\n{csv}"
        );
        checked += 1;
    }
    checked
}

/// root, perf; `None` (and SKIPPED) otherwise.
fn can_run() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        lab_support::skip(
            "needs root",
            "unshare -m and mount --bind need CAP_SYS_ADMIN",
        );
        return false;
    }
    if !Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return false;
    }
    true
}

/// The CSV of `perf stat -M list -x, true` and of the example's, both in
/// the namespace over `tree`.
fn both(tree: &Tree, list: &str, extra: &[&str]) -> Result<[(String, String); 2], String> {
    let example = example();
    let args = |head: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = head.iter().map(|s| s.to_string()).collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend(["-M", list, "-x,", "true"].map(str::to_owned));
        v
    };
    let run = |argv: Vec<String>| {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        in_namespace(&tree.devices(), &argv)
    };
    let perf = run(args(&["perf", "stat"]))?;
    let ours = run(args(&[example.to_str().unwrap(), "--vendor-kernel", "6.1"]))?;
    assert_eq!(perf.0, 0, "perf: {}", perf.1);
    assert_eq!(ours.0, 0, "ours: {}", ours.1);
    Ok([("perf 6.1".into(), perf.1), ("stat example".into(), ours.1)])
}

/// The fake tree, `VendorSystem` over it with Linux 6.1's tables (perf
/// 6.1's) for [`CPUID`], the skylakex model and the literals of `machine`.
fn fake_vendor(machine: &LiteralMachine) -> (Tree, &'static Model, ExprInputs) {
    let Some(tables) = perf_event_vendor::tables("6.1") else {
        panic!("the tests are built with perf-event-vendor's linux-6-1");
    };
    let tree = fake_tree();
    let system = System::new(Pmus::read_from(&tree.devices()).unwrap(), None);
    let vendor = VendorSystem::with_kernel_tables(system, tables, Some(CPUID)).unwrap();
    let model = vendor.core_model().expect("skylakex");
    let mut literals = ExprInputs::new();
    vendor.set_literals(&mut literals, machine).unwrap();
    (tree, model, literals)
}

#[test]
fn metrics_as_perf_computes_and_prints_them() {
    if !can_run() {
        return;
    }
    let (tree, model, literals) = fake_vendor(&LiteralMachine::running().unwrap());
    assert_eq!(model.name, "skylakex");
    // One metric, two sharing events, one with duration_time and msr/tsc/,
    // groups, a modifier in the table (`:k`), one whose `#SMT_on` leaves
    // no event but duration_time, top-down ratios with a ScaleUnit.
    // And Summary with --metric-no-merge: a list per metric.
    let no_merge: &[&str] = &["--metric-no-merge"];
    // And system-wide (`-a`: the event-set mode; `#core_wide` becomes
    // SMT-dependent).
    let all_cpus: &[&str] = &["-a"];
    let lists: [(&str, &[&str]); 10] = [
        ("IPC,CPI", &[]),
        ("Average_Frequency", &[]),
        ("Summary", &[]),
        ("Kernel_Utilization", &[]),
        ("SMT_2T_Utilization", &[]),
        ("TopdownL1", &[]),
        ("GFLOPs", &[]),
        ("Summary", no_merge),
        ("IPC,CPI", all_cpus),
        ("Summary", all_cpus),
    ];
    let mut system_wide = LiteralMachine::running().unwrap();
    system_wide.system_wide = true;
    let (_, _, wide_literals) = fake_vendor(&system_wide);
    let (mut checked, mut selected) = (0, 0);
    for (list, extra) in lists {
        let options = MetricOptions::new().no_merge(extra == no_merge);
        let literals = if extra == all_cpus {
            &wide_literals
        } else {
            &literals
        };
        let selection = MetricSelection::select(model, list, literals, &options).unwrap();
        selected += selection.metrics().len();
        let outputs = match both(&tree, list, extra) {
            Ok(o) => o,
            Err(e) => {
                lab_support::skip("needs a private mount namespace", &e);
                return;
            }
        };
        for (tool, csv) in &outputs {
            checked += check_report(tool, csv, &selection, literals);
        }
    }
    eprintln!(
        "stat_metrics_vs_perf: {checked} metric values checked in {} lists",
        lists.len()
    );
    // Every selected metric printed once by each tool, and recomputed.
    assert_eq!(checked, 2 * selected);
    assert_eq!(selected, 24);
}

#[test]
fn an_unknown_metric_as_perf_reports_it() {
    if !can_run() {
        return;
    }
    let tree = fake_tree();
    let example = example();
    let run = |argv: &[&str]| in_namespace(&tree.devices(), argv);
    let perf = run(&["perf", "stat", "-M", "NoSuchMetric", "-x,", "true"]);
    let ours = run(&[
        example.to_str().unwrap(),
        "--vendor-kernel",
        "6.1",
        "-M",
        "NoSuchMetric",
        "-x,",
        "true",
    ]);
    let (perf, ours) = match (perf, ours) {
        (Ok(p), Ok(o)) => (p, o),
        (Err(e), _) | (_, Err(e)) => {
            lab_support::skip("needs a private mount namespace", &e);
            return;
        }
    };
    // perf 6.1 says so, then counts its default events, status 0.
    let first = |s: &str| s.lines().next().unwrap_or("").to_owned();
    assert_eq!(first(&perf.1), "Cannot find metric or group `NoSuchMetric'");
    assert_eq!(first(&ours.1), first(&perf.1));
    assert_eq!((ours.0, perf.0), (0, 0));
    let names = |s: &str| -> Vec<String> { report(s).events.into_iter().map(|(n, _)| n).collect() };
    assert_eq!(names(&ours.1), names(&perf.1));
}

/// The table (no `-x`) and the CSV of `-M IPC,CPI` are perf 6.1's line
/// for line once the numbers are masked (Summary's CSV as a multiset of
/// lines): perf puts its clock shadow
/// metric (`CPUs utilized`: the fake events are cpu-clock) on each event's
/// line and the metrics on lines of their own (`#` in column 51, `%8.2f`,
/// the name padded to the metric's 35 columns), and so does the example.
#[test]
fn metric_lines_as_perf_lays_them_out() {
    if !can_run() {
        return;
    }
    let tree = fake_tree();
    let example = example();
    let run = |argv: &[&str]| in_namespace(&tree.devices(), argv);
    let perf = run(&["perf", "stat", "-M", "IPC,CPI", "true"]);
    let ours = run(&[
        example.to_str().unwrap(),
        "--vendor-kernel",
        "6.1",
        "-M",
        "IPC,CPI",
        "true",
    ]);
    let (perf, ours) = match (perf, ours) {
        (Ok(p), Ok(o)) => (p.1, o.1),
        (Err(e), _) | (_, Err(e)) => {
            lab_support::skip("needs a private mount namespace", &e);
            return;
        }
    };
    // Both counts of the group are cpu-clock ns of the same time: the
    // ratios print 1.00.
    let own_line = |name: &str| format!("{:50}#     1.00 {name:<23}", "");
    for text in [&perf, &ours] {
        for metric in ["IPC", "CPI"] {
            assert!(text.lines().any(|l| l == own_line(metric)), "{text}");
        }
    }
    assert_eq!(masked(&ours), masked(&perf), "{ours}\n{perf}");
    // The CSV of IPC,CPI line for line; of Summary (duration_time,
    // msr/tsc/: perf's per-second shadow metric on them) as a multiset of
    // lines, since perf's order inside a list is its hash table's (and so
    // which event a metric's line follows).
    let [(_, perf), (_, ours)] = both(&tree, "IPC,CPI", &[]).unwrap();
    assert_eq!(masked(&ours), masked(&perf), "{ours}\n{perf}");
    let [(_, perf), (_, ours)] = both(&tree, "Summary", &[]).unwrap();
    let sorted = |text: &str| {
        let mut lines = masked(text);
        lines.sort();
        lines
    };
    assert_eq!(sorted(&ours), sorted(&perf), "{ours}\n{perf}");
}

/// A command whose length is set by its work (hashing 200 MB: several
/// 100 ms intervals), not by sleeping.
const WORK: &[&str] = &[
    "bash",
    "-c",
    "head -c 200M /dev/zero | sha256sum >/dev/null",
];

/// `argv` of each tool (perf 6.1's, the example's) with `args` then
/// `-- WORK`, in the namespace over `tree`: their stderr.
fn both_on_work(tree: &Tree, args: &[&str]) -> Result<[String; 2], String> {
    let example = example();
    let run = |head: &[&str]| {
        let mut argv: Vec<&str> = head.to_vec();
        argv.extend(args);
        argv.push("--");
        argv.extend(WORK);
        in_namespace(&tree.devices(), &argv)
    };
    let perf = run(&["perf", "stat"])?;
    let ours = run(&[example.to_str().unwrap(), "--vendor-kernel", "6.1"])?;
    assert_eq!(perf.0, 0, "perf: {}", perf.1);
    assert_eq!(ours.0, 0, "ours: {}", ours.1);
    Ok([perf.1, ours.1])
}

/// A `-I` report's lines cut by interval: each interval's lines without
/// their time stamp (the first `sep`-separated field), in order. The
/// table's headings (`#`) are left out.
fn intervals(text: &str, sep: &str) -> Vec<Vec<String>> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let line = line.trim_start();
        let (stamp, rest) = line.split_once(sep).unwrap_or((line, ""));
        match out.last_mut() {
            Some((s, lines)) if s == stamp => lines.push(rest.to_owned()),
            _ => out.push((stamp.to_owned(), vec![rest.to_owned()])),
        }
    }
    out.into_iter().map(|(_, lines)| lines).collect()
}

/// `-M` with `-I 100` as perf 6.1 computes and prints it: in each
/// interval of each tool's CSV the events and metric names printed are
/// the selection's and each metric value equals the value recomputed from
/// the counts printed for that interval, `duration_time` as perf 6.1's
/// metrics read it in interval mode (the `-I` period, 0.1 s, also for the
/// last, shorter interval; its printed count is the interval's length).
/// The number of intervals may differ between the tools (the command's
/// pace); each prints at least two. `--interval-count 2` stops both after
/// two. The table's lines of each interval are perf's once numbers are
/// masked (as a multiset: perf's order inside a list is its hash table's),
/// the headings too.
#[test]
fn metrics_per_interval_as_perf_computes_and_prints_them() {
    if !can_run() {
        return;
    }
    let (tree, model, literals) = fake_vendor(&LiteralMachine::running().unwrap());
    let (mut checked, mut counted_intervals, mut uncounted) = (0, [0, 0], [0, 0]);
    let lists = [
        "IPC,CPI",
        "Average_Frequency",
        "Kernel_Utilization",
        "Summary",
    ];
    for list in lists {
        let selection =
            MetricSelection::select(model, list, &literals, &MetricOptions::new()).unwrap();
        let outputs = match both_on_work(&tree, &["-I", "100", "-M", list, "-x,"]) {
            Ok(o) => o,
            Err(e) => {
                lab_support::skip("needs a private mount namespace", &e);
                return;
            }
        };
        for (t, (tool, csv)) in ["perf 6.1", "stat example"]
            .iter()
            .zip(&outputs)
            .enumerate()
        {
            let cut = intervals(csv, ",");
            assert!(cut.len() >= 2, "{tool}: fewer than two intervals:\n{csv}");
            counted_intervals[t] += cut.len();
            let before = uncounted[t];
            for lines in &cut {
                let text = lines.join("\n");
                // An interval after the command's last run (both tools
                // read once more as it exits): nothing counted, no metric
                // printed (perf 6.1 prints none on `<not counted>` lines).
                if text.contains("<not counted>") {
                    uncounted[t] += 1;
                    continue;
                }
                let n = check_report_with(tool, &text, &selection, &literals, Some(0.1));
                assert_eq!(n, selection.metrics().len(), "{tool}:\n{csv}");
                checked += n;
            }
            assert!(
                cut.len() - (uncounted[t] - before) >= 2,
                "{tool}: fewer than two intervals counted:\n{csv}"
            );
        }
    }
    // --interval-count 2: two intervals each, then the command ends.
    let [perf, ours] = both_on_work(
        &tree,
        &["-I", "100", "--interval-count", "2", "-M", "IPC,CPI", "-x,"],
    )
    .unwrap();
    assert_eq!(intervals(&perf, ",").len(), 2, "{perf}");
    assert_eq!(intervals(&ours, ",").len(), 2, "{ours}");
    // The table: each interval's lines as a multiset, numbers masked.
    let mut layouts = 0;
    for list in ["IPC,CPI", "Average_Frequency"] {
        let [perf, ours] = both_on_work(&tree, &["-I", "100", "-M", list]).unwrap();
        let sorted = |lines: &[String]| {
            let mut m = masked(&lines.join("\n"));
            m.sort();
            m
        };
        let perf_cut = intervals(&perf, " ");
        let want = sorted(&perf_cut[0]);
        for lines in perf_cut.iter().chain(&intervals(&ours, " ")) {
            assert_eq!(sorted(lines), want, "{ours}\n{perf}");
            layouts += 1;
        }
        let headings = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(headings(&ours)[..1], headings(&perf)[..1], "{ours}\n{perf}");
    }
    eprintln!(
        "stat_metrics_vs_perf: -I: {checked} metric values checked in {} + {} intervals \
         (perf 6.1, ours; {} + {} of them not counted) of {} lists; {layouts} intervals' \
         table layouts",
        counted_intervals[0],
        counted_intervals[1],
        uncounted[0],
        uncounted[1],
        lists.len()
    );
}

/// A `-A` or `--per-*` CSV report's lines cut by interval (`stamped`:
/// `-I`) and key (the first `key_fields` fields: `CPU0`; `S0-D0-C1,2`
/// with its CPU count): each group's lines without the stamp and key, in
/// order; a metric's own line with the whole's four empty fields (perf
/// 6.1 prints one or two more per key). The tool events' counted lines,
/// which perf 6.1 prints for the first CPU's key alone (the others'
/// `<not counted>`), join every key's group where they come (each key's
/// metrics read them).
fn per_key(text: &str, stamped: bool, key_fields: usize) -> Vec<Vec<String>> {
    let mut out: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut tools: Vec<(String, usize, String)> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let line = line.trim_start();
        let (stamp, rest) = if stamped {
            line.split_once(',').unwrap_or((line, ""))
        } else {
            ("", line)
        };
        let f: Vec<&str> = rest.splitn(key_fields + 1, ',').collect();
        if f.len() <= key_fields {
            continue;
        }
        let key = f[0];
        let mut rest = f[key_fields].to_owned();
        if rest.starts_with(",,,,") {
            rest = format!(",,,,{}", rest.trim_start_matches(','));
        }
        let tool = ["duration_time", "user_time", "system_time"]
            .iter()
            .any(|t| rest.split(',').nth(2) == Some(*t));
        let group = out.iter().position(|(s, k, _)| s == stamp && k == key);
        if tool {
            // Where it stands among its key's lines, the same for all.
            let at = group.map_or(0, |g| out[g].2.len());
            if !rest.starts_with("<not counted>") {
                tools.push((stamp.to_owned(), at, rest));
            }
            continue;
        }
        match group {
            Some(g) => out[g].2.push(rest),
            None => out.push((stamp.to_owned(), key.to_owned(), vec![rest])),
        }
    }
    for (stamp, _, lines) in &mut out {
        for (n, (_, at, line)) in tools.iter().filter(|(s, ..)| s == stamp).enumerate() {
            lines.insert((at + n).min(lines.len()), line.clone());
        }
    }
    out.into_iter().map(|(_, _, lines)| lines).collect()
}

/// `-a -A -M` and `-a --per-core` / `--per-socket -M` as perf 6.1
/// computes and prints them, alone and with `-I 100`: each key's (and
/// interval's) metrics recomputed from that key's counts printed (the
/// CSV), `duration_time` counted once, for the first CPU's key; the
/// table's lines perf's once numbers are masked (as a set: perf's order
/// inside a list is its hash table's).
#[test]
fn metrics_per_cpu_as_perf_computes_and_prints_them() {
    if !can_run() {
        return;
    }
    let mut machine = LiteralMachine::running().unwrap();
    machine.system_wide = true;
    let (tree, model, literals) = fake_vendor(&machine);
    let cpus = perf_event_host::sysfs::CpuList::online().map_or(0, |c| c.len());
    let (mut checked, mut groups) = (0, 0);
    let cases: [(&str, usize, &[&str]); 3] = [
        ("-A", 1, &["IPC,CPI", "Average_Frequency", "Summary"]),
        ("--per-core", 2, &["IPC,CPI", "Average_Frequency"]),
        ("--per-socket", 2, &["Average_Frequency"]),
    ];
    for (mode, key_fields, lists) in cases {
        for list in lists {
            let selection =
                MetricSelection::select(model, list, &literals, &MetricOptions::new()).unwrap();
            for interval in [false, true] {
                let mut args = vec!["-a", mode, "-M", list, "-x,"];
                if interval {
                    args.extend(["-I", "100"]);
                }
                let outputs = match both_on_work(&tree, &args) {
                    Ok(o) => o,
                    Err(e) => {
                        lab_support::skip("needs a private mount namespace", &e);
                        return;
                    }
                };
                for (tool, csv) in ["perf 6.1", "stat example"].iter().zip(&outputs) {
                    let cut = per_key(csv, interval, key_fields);
                    assert!(!cut.is_empty(), "{tool} {mode}:\n{csv}");
                    for lines in &cut {
                        let text = lines.join("\n");
                        if text.contains("<not counted>") {
                            continue;
                        }
                        let duration = interval.then_some(0.1);
                        let n = check_report_with(tool, &text, &selection, &literals, duration);
                        assert_eq!(n, selection.metrics().len(), "{tool} {mode}:\n{csv}");
                        checked += n;
                        groups += 1;
                    }
                }
            }
        }
    }
    let mut layouts = 0;
    for mode in ["-A", "--per-core", "--per-socket"] {
        for interval in [&[][..], &["-I", "100"]] {
            let mut args = vec!["-a", mode, "-M", "IPC,CPI,Average_Frequency"];
            args.extend(interval);
            let [perf, ours] = both_on_work(&tree, &args).unwrap();
            let sorted = |text: &str| {
                let mut m = masked(text);
                m.sort();
                m.dedup();
                m
            };
            assert_eq!(sorted(&ours), sorted(&perf), "{ours}\n{perf}");
            layouts += 1;
        }
    }
    eprintln!(
        "stat_metrics_vs_perf: -A, --per-core, --per-socket: {checked} metric values checked \
         in {groups} key groups ({cpus} CPUs; both tools, with and without -I); {layouts} \
         table layouts"
    );
}

/// A report with its numbers as `N` and its blank runs as one blank: what
/// stays is the layout (names, units, metric names, lines). The prefix of
/// a per-second rate follows the numbers and goes too (`duration_time`'s
/// rate over the clocks' count is `G/sec` where the clocks counted less
/// than the time elapsed: a loaded machine, a short last interval).
fn masked(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let l = ["K/sec", "M/sec", "G/sec"]
                .iter()
                .fold(l.to_owned(), |t, p| t.replace(p, "/sec"));
            let mut out = String::new();
            let mut last = ' ';
            for c in l.chars() {
                let c = if c.is_ascii_digit() || c == '.' {
                    'N'
                } else {
                    c
                };
                if (c == 'N' && last == 'N') || (c == ' ' && last == ' ') {
                    continue;
                }
                out.push(c);
                last = c;
            }
            out
        })
        .collect()
}

/// Built without feature `vendor` (the other tests' stat example), `-M`
/// is refused with the way to get it, status 129 as a usage error.
#[test]
fn metrics_without_feature_vendor_say_how_to_get_them() {
    let out = crate::stat_support::stat(&["-M", "IPC", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(129), "{stderr}");
    assert!(stderr.contains("--features vendor"), "{stderr}");
}
