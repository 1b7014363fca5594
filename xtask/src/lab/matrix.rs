//! The lab's answer: a matrix of tests x machines (host and guests) and the
//! verdict. The rules:
//!
//! - every machine ran every test binary to its end, and every test that
//!   appears anywhere appears everywhere (else `missing`);
//! - no test failed or was ignored anywhere;
//! - a test that was not applicable somewhere (`n/a`, it printed
//!   `LAB-NOT-APPLICABLE ... needs=NEED`) names a NEED the lab knows
//!   (`guests::Need`, the list in `tests/support/needs.rs`), is n/a only on machines that do not provide NEED
//!   (that is the expected mark), and passed on every machine that provides
//!   it, and on at least one machine (unless `--only` left out every guest
//!   that provides it);
//! - a guest that does not boot fails the run, unless it boots sid's newest
//!   kernel (best effort, marked so in the matrix);
//! - a guest whose kernel the archive could not give is `unavailable:
//!   archive (<reason>)`: listed, not a failure, unless its architecture
//!   lost every guest or `--strict` is given ([`families`]).

use super::guests::{Arch, Need};
use super::kernels::Unavailable;
use super::results::{MachineRun, Outcome};
use super::testbins::TARGETS;
use std::collections::BTreeSet;

/// Known failures the lab accepts, each with its reason: `(binary::test,
/// kernel series, why)`, where the binary is the test area and the test is
/// libtest's name, `file::function` (`ioctl_read::ioctl_kernel::...`). The
/// cell shows `xfail`; the run fails if such a test passes there (remove
/// the mark) or fails anywhere else.
pub const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[(
    "ioctl_read::ioctl_kernel::period_changes_the_sampling_period",
    "5.10",
    "Linux 5.10 writes 7 samples for 10 tracepoint hits at sample_period 2 where 6.1 and \
     later write 5 (seen on x86_64 and aarch64 5.10.223); the test asserts the newer \
     behaviour and is not keyed by version yet",
)];

/// The reason `binary::test` may fail on `column`, if it is marked.
fn expected_failure(column: &Column, name: &str) -> Option<&'static str> {
    let series = column.label.split_whitespace().nth(1)?;
    EXPECTED_FAILURES
        .iter()
        .find(|(n, s, _)| *n == name && *s == series)
        .map(|(_, _, why)| *why)
}

/// One column of the matrix.
pub struct Column {
    /// Short heading (`host`, `a64 6.12 a72`).
    pub label: String,
    /// What it is: kernel release, CPU model.
    pub detail: String,
    /// Needs this machine satisfies.
    pub provides: Vec<Need>,
    /// Its run; `None` when the guest never came up.
    pub run: Option<MachineRun>,
    /// A guest of the newest Debian kernel that is counted only if it boots.
    pub best_effort: bool,
    /// Problems of the machine as a whole (timeout).
    pub problems: Vec<String>,
    /// Its architecture.
    pub arch: Option<Arch>,
    /// Why the archive could not give its kernel (then `run` is `None`).
    pub unavailable: Option<String>,
    /// A best-effort guest (sid's newest kernel) that came up and then hung:
    /// why. Its results are left out (`run` is `None`) and it does not fail
    /// the run; the pinned kernels of its architecture still must pass.
    pub hung: Option<String>,
}

impl Column {
    /// The column of a guest whose kernel could not be fetched.
    pub fn unavailable(u: &Unavailable) -> Column {
        Column {
            label: format!("{} {}", u.arch.short(), u.series),
            detail: format!(
                "{} {}: unavailable: archive ({})",
                u.arch.name(),
                if u.newest {
                    "sid's newest kernel"
                } else {
                    &u.series
                },
                u.why
            ),
            provides: Vec::new(),
            run: None,
            best_effort: u.newest,
            problems: Vec::new(),
            arch: Some(u.arch),
            unavailable: Some(u.why.clone()),
            hung: None,
        }
    }

    /// Whether the machine ran the tests.
    fn ran(&self) -> bool {
        self.run.is_some()
    }

    /// The sentence for the end of the run when this guest was left out
    /// without failing it: unavailable, or sid's newest that did not boot.
    pub fn left_out(&self) -> Option<String> {
        match (&self.unavailable, &self.run) {
            (Some(why), _) => Some(format!("{}: unavailable: archive ({why})", self.label)),
            (None, None) if self.best_effort => Some(format!(
                "{}: sid's newest kernel did not boot (best effort; its console log is \
                 in target/lab/run)",
                self.label
            )),
            _ => None,
        }
    }
}

/// The rule for whole architectures: every architecture of the run must
/// keep at least one guest that ran; with `strict`, no guest may be
/// unavailable.
pub fn families(columns: &[Column], arches: &[Arch], strict: bool) -> Vec<String> {
    let mut errors = Vec::new();
    for arch in arches {
        let of: Vec<&Column> = columns.iter().filter(|c| c.arch == Some(*arch)).collect();
        if !of.is_empty() && !of.iter().any(|c| c.ran()) {
            errors.push(format!(
                "every {} guest is missing ({}): the architecture lost all its machines",
                arch.name(),
                of.iter()
                    .map(|c| c
                        .left_out()
                        .unwrap_or_else(|| format!("{}: did not boot", c.label)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    if strict {
        errors.extend(
            columns
                .iter()
                .filter(|c| c.unavailable.is_some())
                .filter_map(|c| c.left_out().map(|l| format!("{l} (--strict)"))),
        );
    }
    errors
}

/// A row: (binary, test).
type Row = (usize, String, String);

fn rows(columns: &[Column]) -> BTreeSet<Row> {
    let mut rows = BTreeSet::new();
    for run in columns.iter().filter_map(|c| c.run.as_ref()) {
        for b in &run.binaries {
            let order = TARGETS
                .iter()
                .position(|t| *t == b.name)
                .unwrap_or(usize::MAX);
            for test in b.tests.keys() {
                rows.insert((order, b.name.clone(), test.clone()));
            }
        }
    }
    rows
}

fn outcome<'a>(column: &'a Column, binary: &str, test: &str) -> Option<&'a Outcome> {
    column
        .run
        .as_ref()?
        .binaries
        .iter()
        .find(|b| b.name == binary)?
        .tests
        .get(test)
}

fn cell(column: &Column, binary: &str, test: &str) -> &'static str {
    if column.unavailable.is_some() {
        return "unavail";
    }
    if column.run.is_none() {
        return "no boot";
    }
    match outcome(column, binary, test) {
        Some(Outcome::Passed) => "passed",
        Some(Outcome::Failed)
            if expected_failure(column, &format!("{binary}::{test}")).is_some() =>
        {
            "xfail"
        }
        Some(Outcome::Failed) => "FAILED",
        Some(Outcome::NotApplicable { .. }) => "n/a",
        Some(Outcome::Ignored) => "ignored",
        None => "missing",
    }
}

/// The matrix as text: a legend of the columns, then one line per test.
pub fn render(columns: &[Column]) -> String {
    let rows = rows(columns);
    let names: Vec<String> = rows.iter().map(|(_, b, t)| format!("{b}::{t}")).collect();
    let first = names.iter().map(String::len).max().unwrap_or(4).max(4);
    let widths: Vec<usize> = columns.iter().map(|c| c.label.len().max(7)).collect();
    let mut out = String::from("columns:\n");
    for c in columns {
        out.push_str(&format!("  {:<14} {}\n", c.label, c.detail));
    }
    out.push_str(&format!("\n{:<first$}", "test"));
    for (c, w) in columns.iter().zip(&widths) {
        out.push_str(&format!("  {:<w$}", c.label));
    }
    out.push('\n');
    for (name, (_, binary, test)) in names.iter().zip(&rows) {
        out.push_str(&format!("{name:<first$}"));
        for (c, w) in columns.iter().zip(&widths) {
            out.push_str(&format!("  {:<w$}", cell(c, binary, test)));
        }
        out.push('\n');
    }
    let count = |what: &str| {
        rows.iter()
            .flat_map(|(_, b, t)| columns.iter().map(move |c| cell(c, b, t)))
            .filter(|c| *c == what)
            .count()
    };
    for (name, series, why) in EXPECTED_FAILURES {
        out.push_str(&format!(
            "\nxfail: {name} on Linux {series} (marked expected): {why}\n"
        ));
    }
    out.push_str("\nper machine (tests not run are named, by need):\n");
    for c in columns {
        out.push_str(&summary(c));
    }
    out.push_str(&format!(
        "\n{} tests x {} machines: {} passed, {} failed, {} n/a, {} missing, {} unavailable \
         machines\n",
        rows.len(),
        columns.iter().filter(|c| c.ran()).count(),
        count("passed"),
        count("FAILED"),
        count("n/a"),
        count("missing"),
        columns.iter().filter(|c| c.unavailable.is_some()).count(),
    ));
    out
}

/// One column's counts and its n/a tests grouped by need.
fn summary(c: &Column) -> String {
    if let Some(why) = &c.unavailable {
        return format!("  {:<14} unavailable: archive ({why})\n", c.label);
    }
    if let Some(why) = &c.hung {
        return format!(
            "  {:<14} hung (sid's newest kernel, best effort: left out): {why}\n",
            c.label
        );
    }
    let Some(run) = &c.run else {
        return format!(
            "  {:<14} did not boot{}\n",
            c.label,
            if c.best_effort {
                " (sid's newest kernel, best effort: expected)"
            } else {
                ""
            }
        );
    };
    let mut passed = 0;
    let mut failed = 0;
    let mut xfail = 0;
    let mut not_run: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for b in &run.binaries {
        for (test, o) in &b.tests {
            match o {
                Outcome::Passed => passed += 1,
                Outcome::NotApplicable { need, .. } => not_run
                    .entry(need.as_str())
                    .or_default()
                    .push(format!("{}::{test}", b.name)),
                Outcome::Failed
                    if expected_failure(c, &format!("{}::{test}", b.name)).is_some() =>
                {
                    xfail += 1
                }
                Outcome::Failed | Outcome::Ignored => failed += 1,
            }
        }
    }
    let na: usize = not_run.values().map(Vec::len).sum();
    let mut out = format!(
        "  {:<14} {} tests: {passed} passed, {failed} failed, {xfail} xfail, {na} n/a\n",
        c.label,
        passed + failed + xfail + na
    );
    for (need, tests) in not_run {
        out.push_str(&format!(
            "  {:<14}   n/a, needs {need}: {}\n",
            "",
            tests.join(", ")
        ));
    }
    out
}

/// Everything that fails the run, as sentences. `planned` holds the needs
/// the guests of this run provide (all of them unless `--only`).
pub fn verdict(columns: &[Column], planned: &[Need]) -> Vec<String> {
    let mut errors = Vec::new();
    for c in columns {
        errors.extend(c.problems.iter().map(|p| format!("{}: {p}", c.label)));
        let Some(run) = &c.run else {
            if !c.best_effort && c.unavailable.is_none() {
                errors.push(format!(
                    "{} ({}) did not boot: its console log is printed above",
                    c.label, c.detail
                ));
            }
            continue;
        };
        for t in TARGETS {
            match run.binaries.iter().find(|b| b.name == *t) {
                None => errors.push(format!("{}: test area `{t}` never started", c.label)),
                Some(b) => errors.extend(
                    b.problems
                        .iter()
                        .map(|p| format!("{}: test area `{t}` {p}", c.label)),
                ),
            }
        }
    }
    for (_, binary, test) in rows(columns) {
        let name = format!("{binary}::{test}");
        let mut need_of = None;
        let mut passed_somewhere = false;
        for c in columns.iter().filter(|c| c.run.is_some()) {
            match outcome(c, &binary, &test) {
                None => errors.push(format!("{name} is missing on {}", c.label)),
                Some(Outcome::Failed) => {
                    if expected_failure(c, &name).is_none() {
                        errors.push(format!("{name} FAILED on {}", c.label));
                    }
                }
                Some(Outcome::Passed) if expected_failure(c, &name).is_some() => {
                    errors.push(format!(
                        "{name} passed on {}, where it is marked as an expected failure: \
                         remove its mark in xtask/src/lab/matrix.rs",
                        c.label
                    ))
                }
                Some(Outcome::Ignored) => errors.push(format!(
                    "{name} is #[ignore]d on {}: the project runs every test",
                    c.label
                )),
                Some(Outcome::Passed) => passed_somewhere = true,
                Some(Outcome::NotApplicable { need, reason }) => {
                    let known = Need::from_token(need);
                    if known.is_none() {
                        errors.push(format!(
                            "{name} is n/a on {} with need `{need}`, which the lab does not \
                             know (tests/support/needs.rs): {reason}",
                            c.label
                        ));
                    }
                    if known.is_some_and(|n| c.provides.contains(&n)) {
                        errors.push(format!(
                            "{name} did not run on {}, which provides `{need}` and must run \
                             it: {reason}",
                            c.label
                        ));
                    }
                    need_of = Some(need.clone());
                }
            }
        }
        if let (Some(need), false) = (need_of, passed_somewhere) {
            if !Need::from_token(&need).is_some_and(|n| planned.contains(&n)) {
                // `--only` left out every guest that provides it.
                continue;
            }
            let meaning = Need::from_token(&need).map_or("", |n| n.meaning());
            errors.push(format!(
                "{name} ran nowhere: it needs `{need}` and no machine that provides it passed \
                 it ({meaning})"
            ));
        }
    }
    errors
}
