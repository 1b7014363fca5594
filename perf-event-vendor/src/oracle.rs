//! The proof against perf's own generator: `tests/jevents_oracle.py` runs
//! jevents.py's code on each pinned kernel source the tables were generated
//! from (each kernel's own jevents.py: 6.12's and 6.1's), and every table of
//! every kernel and architecture must read the same: each
//! mapfile row perf keeps (CPU id and tables), each event (name, terms,
//! PMU, topic, description, unit, compat, flags) and each metric (name,
//! PMU, groups, threshold, unit, description, compat, modes, and the
//! expression as metric.py reads it; 6.1 has no metric.py and compiles in
//! the string), in order. The same script gives
//! glibc's `regexec` matches, which the CPU id matcher must equal on every
//! mapfile pattern.
//!
//! The source tree is the lab's (`cargo xtask vendor-events` fetches and
//! unpacks it): `$PERF_EVENT_CORE_CACHE` or `$XDG_CACHE_HOME/perf-event-core`
//! or `~/.cache/perf-event-core`, then `lab/libperf/<package>`. Without it,
//! or without python3, the test says so on stderr (`SKIPPED ...`) and
//! returns.

use crate::cpuid::regex::Regex;
use crate::decode::Decoded;
use crate::model::Origin;
use crate::tables;
use crate::CpuidRule;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Reports a test that did not run here, as the workspace's tests do
/// (`tests/support/lab_support.rs`: a `SKIPPED` line written straight to
/// stderr, which libtest does not capture, unlike `eprintln!`).
/// With `PERF_EVENT_VENDOR_ORACLE=require` (CI's vendor-table step, which
/// has fetched the source first) a test that cannot run fails instead.
pub(crate) fn skip(what: &str, reason: &str) {
    use std::io::Write;
    if std::env::var_os("PERF_EVENT_VENDOR_ORACLE").is_some_and(|v| v == "require") {
        panic!("required, but cannot run ({what}): {reason}");
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test>");
    let line = format!("SKIPPED {test} ({what}): {reason}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A line on stderr that libtest does not capture: what was compared.
pub(crate) fn note(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("{line}\n").as_bytes());
}

/// The unpacked kernel source, if it is the one the tables name.
fn source_tree(origin: &Origin) -> Result<PathBuf, String> {
    let cache = std::env::var_os("PERF_EVENT_CORE_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(base.join("perf-event-core"))
        })
        .ok_or("no cache directory (neither PERF_EVENT_CORE_CACHE, XDG_CACHE_HOME nor HOME)")?;
    let tree = cache.join("lab/libperf").join(origin.package);
    let mark = std::fs::read_to_string(tree.join(".complete")).map_err(|e| {
        format!(
            "{}: {e}; `cargo xtask vendor-events` fetches and unpacks it",
            tree.display()
        )
    })?;
    if !mark.contains(origin.sha256) {
        return Err(format!(
            "{} is not unpacked from {} {} (its mark names {mark}); `cargo xtask \
             vendor-events` unpacks the pinned one",
            tree.display(),
            origin.package,
            origin.version
        ));
    }
    Ok(tree)
}

/// The oracle script and python3, or why not.
fn python() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jevents_oracle.py");
    if !script.is_file() {
        return Err(format!("{} is missing", script.display()));
    }
    match Command::new("python3").arg("--version").output() {
        Ok(out) if out.status.success() => Ok(script),
        Ok(out) => Err(format!("python3 --version failed: {}", out.status)),
        Err(e) => Err(format!("python3: {e}")),
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn opt(s: Option<&str>) -> String {
    escape(s.unwrap_or(""))
}

/// jevents' table name of a model directory, with its prefix.
fn c_name(prefix: &str, dir: &str) -> String {
    format!("{prefix}_{}", dir.replace(['/', '-'], "_"))
}

/// Whether the tables are Linux 6.1's: one `pme_` table of `struct
/// pmu_event` per model, mapping rows naming it (the script's `tables_6_1`).
fn is_6_1(tables: &Decoded) -> bool {
    tables
        .origin
        .as_ref()
        .is_some_and(|o| o.package == "linux-source-6.1")
}

/// Runs the script; its stdout.
fn run(script: &Path, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// A scratch file in the temporary directory.
fn scratch(name: &str, lines: &[String]) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "perf-event-vendor-oracle-{}-{name}",
        std::process::id()
    ));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).expect("scratch file");
    path
}

/// Our tables in the script's record format; the distinct expressions in
/// order, whose `P` records come back after the others.
fn ours(tables: &Decoded, parsed: &[String]) -> (Vec<String>, Vec<String>) {
    let v6_1 = is_6_1(tables);
    let events_prefix = if v6_1 { "pme" } else { "pmu_events_" };
    let mut exprs: Vec<String> = Vec::new();
    for model in &tables.models {
        for m in &model.metrics {
            if !exprs.iter().any(|e| e == m.expr) {
                exprs.push(m.expr.to_owned());
            }
        }
    }
    let mut lines = Vec::new();
    for row in &tables.map {
        let model = tables.models.iter().find(|m| m.name == row.model);
        let model = model.expect("decode checks every row's model");
        if v6_1 {
            let table = c_name(events_prefix, model.name);
            lines.push(format!("C\t{}\t{table}", escape(row.cpuid)));
            continue;
        }
        let events = if model.events.is_empty() {
            "NULL".to_owned()
        } else {
            c_name("pmu_events_", model.name)
        };
        let metrics = if model.metrics.is_empty() {
            "NULL".to_owned()
        } else {
            c_name("pmu_metrics_", model.name)
        };
        lines.push(format!("C\t{}\t{events}\t{metrics}", escape(row.cpuid)));
    }
    for model in &tables.models {
        let table = c_name(events_prefix, model.name);
        for e in &model.events {
            let flag = |b: bool| if b { "1" } else { "0" };
            lines.push(format!(
                "E\t{table}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                escape(e.name),
                escape(e.pmu),
                escape(e.terms),
                escape(e.topic),
                opt(e.desc),
                opt(e.unit),
                opt(e.compat),
                flag(e.deprecated),
                flag(e.perpkg)
            ));
        }
        for m in &model.metrics {
            let at = exprs.iter().position(|e| e == m.expr).expect("listed");
            let expr = parsed.get(at).map_or("<not parsed>", String::as_str);
            lines.push(format!(
                "X\t{table}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                escape(m.name),
                escape(m.pmu),
                opt(m.groups),
                opt(m.threshold),
                opt(m.unit),
                opt(m.desc),
                opt(m.compat),
                m.aggr_mode.map_or(String::new(), |a| format!("{a:?}")),
                m.event_grouping.map_or(String::new(), |g| format!("{g:?}")),
                opt(m.no_group_groups),
                opt(m.default_groups),
                expr
            ));
        }
    }
    (lines, exprs.iter().map(|e| escape(e)).collect())
}

/// Compares one architecture; its counts and differences.
fn compare_arch(script: &Path, pmu_events: &Path, arch: &str, tables: &Decoded) -> Report {
    let (_, exprs) = ours(tables, &[]);
    let kernel = tables.origin.as_ref().map_or("", |o| o.package);
    let exprs_file = scratch(&format!("{kernel}-{arch}-exprs"), &exprs);
    let out = run(
        script,
        &[
            "tables",
            pmu_events.to_str().expect("UTF-8 path"),
            arch,
            exprs_file.to_str().expect("UTF-8 path"),
        ],
    );
    let _ = std::fs::remove_file(&exprs_file);
    let (mut theirs, mut parsed) = (Vec::new(), Vec::new());
    for line in out.lines() {
        match line.strip_prefix("P\t") {
            Some(p) => parsed.push(p.to_owned()),
            None => theirs.push(line.to_owned()),
        }
    }
    assert_eq!(
        parsed.len(),
        exprs.len(),
        "{arch}: one parsed form per expression"
    );
    let (mine, _) = ours(tables, &parsed);
    let mut report = Report::default();
    for kind in ["C", "E", "X"] {
        let a: Vec<&String> = mine.iter().filter(|l| l.starts_with(kind)).collect();
        let b: Vec<&String> = theirs.iter().filter(|l| l.starts_with(kind)).collect();
        report
            .counts
            .push(format!("{arch} {kind}: {} vs {}", a.len(), b.len()));
        report.compared += a.len().max(b.len());
        for i in 0..a.len().max(b.len()) {
            if a.get(i) != b.get(i) {
                report.differences.push(format!(
                    "{arch} {kind} #{i}:\n  ours:    {}\n  jevents: {}",
                    a.get(i).map_or("<none>", |s| s.as_str()),
                    b.get(i).map_or("<none>", |s| s.as_str())
                ));
            }
        }
    }
    report
}

#[derive(Default)]
struct Report {
    counts: Vec<String>,
    compared: usize,
    differences: Vec<String>,
}

/// Compares every architecture of the kernel `kernel` with its jevents.py.
fn compare_kernel(kernel: &str) -> Result<(usize, Vec<String>), (&'static str, String)> {
    let arches: Vec<_> = tables::all()
        .iter()
        .filter(|t| t.kernel == kernel)
        .collect();
    let origin = arches[0].tables.origin.clone().expect("an origin record");
    let tree = source_tree(&origin).map_err(|r| ("needs the pinned kernel source", r))?;
    let script = python().map_err(|r| ("needs python3", r))?;
    let pmu_events = tree.join("tools/perf/pmu-events");
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = arches
            .iter()
            .map(|t| {
                let (script, pmu_events) = (&script, &pmu_events);
                scope.spawn(move || compare_arch(script, pmu_events, t.arch, &t.tables))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let mut compared = 0;
    let mut differences = Vec::new();
    for r in reports {
        note(&format!("{kernel}: {}", r.counts.join(", ")));
        compared += r.compared;
        differences.extend(r.differences);
    }
    note(&format!(
        "{kernel}: compared {compared} records with {} {}'s jevents.py: {} differences",
        origin.package,
        origin.version,
        differences.len()
    ));
    Ok((compared, differences))
}

/// Asserts one kernel's comparison: enough records, no difference.
fn assert_kernel(kernel: &str, at_least: usize) {
    let (compared, differences) = match compare_kernel(kernel) {
        Ok(result) => result,
        Err((what, reason)) => return skip(what, &reason),
    };
    assert!(compared > at_least, "only {compared} records compared");
    assert!(
        differences.is_empty(),
        "{} of {compared} records differ from jevents.py (first 20):\n{}",
        differences.len(),
        differences[..differences.len().min(20)].join("\n")
    );
}

#[test]
fn every_table_equals_what_jevents_reads() {
    assert_kernel("6.12", 50_000);
}

#[test]
fn every_6_1_table_equals_what_jevents_6_1_reads() {
    assert_kernel("6.1", 40_000);
}

/// CPU ids to try each pattern of an architecture on: real ones and their
/// neighbours in every field.
fn candidates(arch: &str) -> Vec<String> {
    let mut ids = Vec::new();
    match arch {
        "x86" => {
            for (vendor, families) in [
                ("GenuineIntel", &[6u32, 15][..]),
                ("AuthenticAMD", &[23, 24, 25, 26][..]),
            ] {
                for family in families {
                    for model in 0..=255u32 {
                        ids.push(format!("{vendor}-{family}-{model:X}"));
                        for stepping in [0u32, 4, 5, 10, 15] {
                            ids.push(format!("{vendor}-{family}-{model:X}-{stepping:X}"));
                        }
                    }
                }
            }
            ids.push("GenuineIntel-6-55-4-1".to_owned());
            ids.push("genuineintel-6-55-4".to_owned());
        }
        // perf 6.1's arm64 CPU id: the MIDR with variant and revision
        // cleared; a few with them set, which no row matches.
        "arm64" => {
            for implementer in [0x41u32, 0x42, 0x43, 0x46, 0x48, 0x4e, 0x50, 0x51, 0xc0] {
                for part in (0..0x10u32).chain(0xa0..0xb0).chain(0xd00..0xd50) {
                    ids.push(format!("0x00000000{implementer:02x}0f{part:03x}0"));
                    ids.push(format!("0x00000000{implementer:02x}1f{part:03x}4"));
                }
            }
        }
        "powerpc" => {
            let highs = [0x3f, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x65, 0x66, 0x67];
            for high in highs.into_iter().chain(0x7f..=0x83) {
                for low in [0u32, 0x100, 0x201, 0x1202, 0xabcd, 0xffff] {
                    ids.push(format!("0x{high:04x}{low:04x}"));
                    ids.push(format!("0x{high:04x}{low:04X}"));
                }
                ids.push(format!("0x{high:04x}12"));
                ids.push(format!("0x{high:04x}120201"));
            }
        }
        "s390" => {
            let types = [
                2097, 2098, 2817, 2818, 2827, 2828, 2964, 2965, 3906, 3907, 8561, 8562, 3931, 3932,
                9175,
            ];
            let levels = [
                "",
                ",1.2,0002",
                ",1.5,002f",
                ",1.6,0002",
                ",3.5,002f",
                ",3.6,002f",
                ",3.7,0002",
                ",4.1,0002",
                ",3.6,",
                ",3.6,xyz",
            ];
            for t in types {
                for level in levels {
                    ids.push(format!("IBM,{t},704,A01{level}"));
                    ids.push(format!("IBM,{t},704{level}"));
                }
            }
        }
        "riscv" => {
            let vendors = ["0x489", "0x5b7", "0x67e", "0x31e", "0x0"];
            let archs = [
                "0x8000000000000007",
                "0x0",
                "0x80000000db000080",
                "0x80000000db000090",
                "0x80000000db0000a0",
                "0x8000000000008a45",
                "0x8000000000008a46",
            ];
            let imps = ["0x0", "0x20181004", "0x1", "0x", "0xg", "0x5000000"];
            for v in vendors {
                for a in archs {
                    for i in imps {
                        ids.push(format!("{v}-{a}-{i}"));
                    }
                }
            }
        }
        _ => {}
    }
    ids
}

#[test]
fn the_cpuid_matcher_finds_what_glibc_regexec_finds() {
    let script = match python() {
        Ok(script) => script,
        Err(reason) => return skip("needs python3", &reason),
    };
    let mut pairs = Vec::new();
    for t in tables::all() {
        if t.rule == CpuidRule::Arm64 {
            continue;
        }
        let ids = candidates(t.arch);
        for row in &t.tables.map {
            for id in &ids {
                pairs.push((row.cpuid, id.clone()));
            }
        }
    }
    let lines: Vec<String> = pairs.iter().map(|(p, id)| format!("{p}\t{id}")).collect();
    let file = scratch("regex-pairs", &lines);
    let out = run(&script, &["regex", file.to_str().expect("UTF-8 path")]);
    let _ = std::fs::remove_file(&file);
    let glibc: Vec<&str> = out.lines().collect();
    assert_eq!(glibc.len(), pairs.len(), "one answer per pair");
    let mut differences = Vec::new();
    let mut matched = 0;
    let mut compiled = std::collections::HashMap::new();
    for ((pattern, id), theirs) in pairs.iter().zip(glibc) {
        let regex = compiled
            .entry(*pattern)
            .or_insert_with(|| Regex::new(pattern));
        let ours = match regex {
            Err(_) => "E".to_owned(),
            Ok(re) => re
                .find(id)
                .map_or("-".to_owned(), |(s, e)| format!("{s}\t{e}")),
        };
        let theirs = if theirs.starts_with('E') { "E" } else { theirs };
        matched += usize::from(theirs != "-" && theirs != "E");
        if ours != theirs {
            differences.push(format!(
                "{pattern:?} on {id:?}: ours {ours:?}, glibc {theirs:?}"
            ));
        }
    }
    note(&format!(
        "compared {} pattern/CPU id pairs with glibc regexec ({matched} matches): {} differences",
        pairs.len(),
        differences.len()
    ));
    assert!(pairs.len() > 100_000 && matched > 1_000);
    assert!(
        differences.is_empty(),
        "{}",
        differences[..differences.len().min(20)].join("\n")
    );
}

/// Each distinct `MetricExpr` of every architecture, read by our
/// [`Expr`](crate::expr::Expr) and by metric.py: the simplified form must
/// be the text jevents compiles into perf (so the trees, precedence and
/// folding agree), and its ids the events metric.py's tree names.
#[test]
fn every_metric_expr_reads_as_metric_py_reads_it() {
    use crate::expr::Expr;
    // metric.py is 6.12's (6.1's jevents compiles the JSON strings in as
    // they are): the 6.12 tables' expressions.
    let newest: Vec<_> = tables::all()
        .iter()
        .filter(|t| t.kernel == "6.12")
        .collect();
    let origin = newest[0].tables.origin.clone().expect("an origin record");
    let tree = match source_tree(&origin) {
        Ok(tree) => tree,
        Err(reason) => return skip("needs the pinned kernel source", &reason),
    };
    let script = match python() {
        Ok(script) => script,
        Err(reason) => return skip("needs python3", &reason),
    };
    let mut exprs: Vec<&str> = Vec::new();
    for t in newest {
        for model in &t.tables.models {
            for m in &model.metrics {
                exprs.push(m.expr);
            }
        }
    }
    exprs.sort_unstable();
    exprs.dedup();
    let lines: Vec<String> = exprs.iter().map(|e| escape(e)).collect();
    let file = scratch("metric-exprs", &lines);
    let pmu_events = tree.join("tools/perf/pmu-events");
    let out = run(
        &script,
        &[
            "metric-ids",
            pmu_events.to_str().expect("UTF-8 path"),
            file.to_str().expect("UTF-8 path"),
        ],
    );
    let _ = std::fs::remove_file(&file);
    let theirs: Vec<&str> = out.lines().collect();
    assert_eq!(theirs.len(), exprs.len(), "one answer per expression");
    let mut differences = Vec::new();
    let mut ids_compared = 0;
    for (expr, theirs) in exprs.iter().zip(theirs) {
        let fields: Vec<String> = theirs.split('\t').map(unescape).collect();
        let ours = match Expr::parse(expr) {
            Ok(e) => e.simplify(),
            Err(e) => {
                differences.push(format!("{expr:?}: ours fails: {e}; metric.py: {theirs:?}"));
                continue;
            }
        };
        if fields[0] != "I" {
            differences.push(format!("{expr:?}: metric.py fails: {theirs:?}"));
            continue;
        }
        // metric.py keeps a literal's spelling (`#SMT_on`); ours is the
        // literal perf computes, named in lower case.
        let text = canonical_literals(&fields[1]);
        if ours.to_string() != text {
            differences.push(format!(
                "{expr:?}:\n  ours:      {ours}\n  metric.py: {text}"
            ));
        }
        let mut ids = match ours.ids() {
            Ok(ids) => ids,
            Err(e) => {
                differences.push(format!("{expr:?}: ids fail: {e}"));
                continue;
            }
        };
        ids.sort();
        ids_compared += ids.len();
        if ids != fields[2..] {
            differences.push(format!(
                "{expr:?} ids:\n  ours:      {ids:?}\n  metric.py: {:?}",
                &fields[2..]
            ));
        }
    }
    note(&format!(
        "compared {} distinct metric expressions ({ids_compared} ids) with metric.py: {} differences",
        exprs.len(),
        differences.len()
    ));
    assert!(exprs.len() > 2_000);
    assert!(
        differences.is_empty(),
        "{} of {} expressions differ from metric.py (first 20):\n{}",
        differences.len(),
        exprs.len(),
        differences[..differences.len().min(20)].join("\n")
    );
}

/// Literals written in the case perf names them (`#SMT_on`, which perf
/// compares ignoring case, as `#smt_on`).
fn canonical_literals(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let len = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .map_or(rest.len() - at, |n| n + 1);
        let literal = &rest[at..at + len];
        match crate::expr::ExprLiteral::from_name(literal) {
            Some(l) => out.push_str(l.name()),
            None => out.push_str(literal),
        }
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

/// The script's escaping undone.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(c) => out.push(c),
            None => {}
        }
    }
    out
}
