//! Reads what the test binaries printed (libtest with `--test-threads=1
//! --nocapture`, on the host or between the init's markers on a guest's
//! console) into per-test outcomes.

use super::initramfs::marker;
use std::collections::BTreeMap;

/// The line a test prints when it cannot run on this machine, written by
/// `tests/support/lab_support.rs`:
/// `LAB-NOT-APPLICABLE <test> needs=<need>: <reason>`.
pub const NOT_APPLICABLE: &str = "LAB-NOT-APPLICABLE";

/// How one test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and passed.
    Passed,
    /// It failed.
    Failed,
    /// It passed without running: this machine lacks what it needs.
    NotApplicable {
        /// The need token (`aarch64-pmu`).
        need: String,
        /// Why, in the test's words.
        reason: String,
    },
    /// libtest skipped it (`#[ignore]`), which the project does not allow.
    Ignored,
}

/// One test binary's run.
#[derive(Clone, Debug, Default)]
pub struct BinaryRun {
    /// Cargo target name.
    pub name: String,
    /// Outcome per test name.
    pub tests: BTreeMap<String, Outcome>,
    /// What went wrong beyond single tests (crash, unparsable output).
    pub problems: Vec<String>,
}

/// One machine's run: the host or a guest.
#[derive(Clone, Debug, Default)]
pub struct MachineRun {
    /// `uname -r` as the guest reported it (empty: never came up).
    pub kernel: String,
    /// Test binaries in the order they ran.
    pub binaries: Vec<BinaryRun>,
}

/// Parses one binary's output; `rc` is its exit status (`None`: it never
/// finished).
pub fn parse_binary(name: &str, output: &str, rc: Option<i32>) -> BinaryRun {
    let mut run = BinaryRun {
        name: name.to_owned(),
        ..Default::default()
    };
    let mut not_applicable: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut results: BTreeMap<String, &str> = BTreeMap::new();
    let mut pending: Option<String> = None;
    let mut summary: Option<(usize, usize)> = None;
    for line in output.lines() {
        let line = line.trim_end();
        if let Some(at) = line.find(NOT_APPLICABLE) {
            match parse_not_applicable(&line[at..]) {
                Some((test, need, reason)) => {
                    not_applicable.insert(test, (need, reason));
                }
                None => run.problems.push(format!(
                    "printed a malformed `{}` (want `{NOT_APPLICABLE} <test> \
                     needs=<need>: <reason>`): a test skipped without a need the lab can \
                     check",
                    &line[at..]
                )),
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("test result: ") {
            summary = parse_summary(rest);
            pending = None;
            continue;
        }
        if let Some(rest) = line.strip_prefix("test ") {
            // libtest prints "test NAME ... " and, when the test printed
            // something (--nocapture), the result word on a later line.
            if let Some(test) = rest.strip_suffix(" ...") {
                pending = Some(test.to_owned());
                continue;
            }
            if let Some((test, result)) = rest.split_once(" ... ") {
                match word(result.trim()) {
                    Some(w) => {
                        results.insert(test.to_owned(), w);
                        pending = None;
                    }
                    None => pending = Some(test.to_owned()),
                }
                continue;
            }
        }
        if let (Some(test), Some(w)) = (&pending, word(line.trim())) {
            results.insert(test.clone(), w);
            pending = None;
        }
    }
    // libtest's names are `<area>::<file>::<test>` in the lab's binary;
    // the area is the run's name, the test `<file>::<test>`.
    let prefix = format!("{name}::");
    for (test, w) in &results {
        let outcome = match (*w, not_applicable.remove(test)) {
            ("FAILED", _) => Outcome::Failed,
            ("ignored", _) => Outcome::Ignored,
            (_, Some((need, reason))) => Outcome::NotApplicable { need, reason },
            _ => Outcome::Passed,
        };
        match test.strip_prefix(&prefix) {
            Some(own) => {
                run.tests.insert(own.to_owned(), outcome);
            }
            None => run.problems.push(format!(
                "ran `{test}`, which is not in area `{name}` (the filter `{prefix}` \
                 matched it): rename its file or module"
            )),
        }
    }
    for test in not_applicable.keys() {
        run.problems.push(format!(
            "`{test}` printed {NOT_APPLICABLE} but libtest reported no result for it"
        ));
    }
    let failed = run
        .tests
        .values()
        .filter(|o| **o == Outcome::Failed)
        .count();
    match (rc, summary) {
        (None, _) => run
            .problems
            .push("did not finish (the guest crashed, hung or powered off early)".to_owned()),
        (Some(_), None) => run
            .problems
            .push("printed no `test result:` line: it crashed before its summary".to_owned()),
        (Some(rc), Some((passed, summary_failed))) => {
            let ours = run
                .tests
                .values()
                .filter(|o| matches!(o, Outcome::Passed | Outcome::NotApplicable { .. }))
                .count();
            if passed != ours || summary_failed != failed {
                run.problems.push(format!(
                    "libtest counted {passed} passed and {summary_failed} failed, the lab \
                     read {ours} and {failed} from the output: a test printed without a \
                     final newline or the output is garbled"
                ));
            }
            if rc != 0 && failed == 0 {
                run.problems
                    .push(format!("exited with status {rc} without a failing test"));
            }
            if rc == 0 && failed > 0 {
                run.problems.push(format!(
                    "exited with status 0 despite {failed} failed tests"
                ));
            }
        }
    }
    run
}

fn word(s: &str) -> Option<&'static str> {
    ["ok", "FAILED", "ignored"].into_iter().find(|w| s == *w)
}

/// `(passed, failed)` from `ok. 3 passed; 0 failed; 0 ignored; ...`.
fn parse_summary(rest: &str) -> Option<(usize, usize)> {
    let count = |label: &str| {
        rest.split(';').find_map(|part| {
            let part = part.trim();
            let part = part.rsplit(". ").next().unwrap_or(part);
            part.strip_suffix(label)
                .and_then(|n| n.trim().parse::<usize>().ok())
        })
    };
    Some((count(" passed")?, count(" failed")?))
}

/// `(test, need, reason)` of a `LAB-NOT-APPLICABLE` line.
fn parse_not_applicable(line: &str) -> Option<(String, String, String)> {
    let rest = line.strip_prefix(NOT_APPLICABLE)?.trim_start();
    let (head, reason) = rest.split_once(": ")?;
    let (test, need) = head.split_once(" needs=")?;
    Some((test.to_owned(), need.to_owned(), reason.to_owned()))
}

/// Splits a guest console into its binaries' runs.
pub fn parse_console(console: &str) -> MachineRun {
    let mut machine = MachineRun::default();
    let mut current: Option<(String, String)> = None;
    for line in console.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix(marker::UP) {
            machine.kernel = rest
                .split_whitespace()
                .find_map(|f| f.strip_prefix("kernel="))
                .unwrap_or_default()
                .to_owned();
        } else if let Some(name) = line.strip_prefix(marker::BEGIN) {
            if let Some((name, text)) = current.take() {
                machine.binaries.push(parse_binary(&name, &text, None));
            }
            current = Some((name.trim().to_owned(), String::new()));
        } else if let Some(rest) = line.strip_prefix(marker::END) {
            let rc = rest
                .split_whitespace()
                .find_map(|f| f.strip_prefix("rc="))
                .and_then(|v| v.parse().ok());
            if let Some((name, text)) = current.take() {
                machine.binaries.push(parse_binary(&name, &text, rc));
            }
        } else if let Some((_, text)) = &mut current {
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some((name, text)) = current.take() {
        machine.binaries.push(parse_binary(&name, &text, None));
    }
    machine
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str =
        "\nrunning 3 tests\ntest t::a ... \nLAB-NOT-APPLICABLE t::a needs=aarch64-pmu: no PMU\nok\n\
        test t::b ... ok\ntest t::c ... \nthread 't::c' panicked at x.rs:1:1:\nboom\nFAILED\n\n\
        failures:\n    t::c\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; \
        0 filtered out; finished in 0.00s\n";

    #[test]
    fn outcomes_come_from_result_words_and_markers() {
        let run = parse_binary("t", OUTPUT, Some(101));
        assert_eq!(run.problems, Vec::<String>::new());
        assert_eq!(
            run.tests["a"],
            Outcome::NotApplicable {
                need: "aarch64-pmu".into(),
                reason: "no PMU".into()
            }
        );
        assert_eq!(run.tests["b"], Outcome::Passed);
        assert_eq!(run.tests["c"], Outcome::Failed);
    }

    /// On a guest console stdout and stderr are one stream: the
    /// `SKIPPED` line and the per-binary summary that `lab_support::skip`
    /// writes to stderr land between libtest's lines.
    #[test]
    fn skip_lines_on_the_console_leave_the_outcomes_alone() {
        let console = "\nrunning 2 tests\ntest t::a ... \n\
            LAB-NOT-APPLICABLE t::a needs=tracefs: not mounted\n\
            SKIPPED t::a (needs tracefs): not mounted\nok\ntest t::b ... ok\n\n\
            test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; \
            finished in 0.00s\n\n1 test of this binary was SKIPPED here: 1 needs tracefs\n";
        let run = parse_binary("t", console, Some(0));
        assert_eq!(run.problems, Vec::<String>::new());
        assert_eq!(
            run.tests["a"],
            Outcome::NotApplicable {
                need: "tracefs".into(),
                reason: "not mounted".into()
            }
        );
        assert_eq!(run.tests["b"], Outcome::Passed);
    }

    #[test]
    fn a_crash_or_a_miscount_is_a_problem() {
        assert!(!parse_binary("t", OUTPUT, None).problems.is_empty());
        assert!(!parse_binary("t", OUTPUT, Some(0)).problems.is_empty());
        let glued = OUTPUT.replace("test t::b ... ok", "test t::b ... no newlineok");
        assert!(!parse_binary("t", &glued, Some(101)).problems.is_empty());
    }

    /// An area's run takes its tests by the filter `<area>::`: a test of
    /// another area that the filter also matched is a problem, not a row.
    #[test]
    fn a_test_outside_the_runs_area_is_a_problem() {
        let foreign = OUTPUT.replace("test t::b ... ok", "test u::t::b ... ok");
        let run = parse_binary("t", &foreign, Some(101));
        assert!(!run.tests.contains_key("b"));
        assert!(
            run.problems.iter().any(|p| p.contains("`u::t::b`")),
            "{:?}",
            run.problems
        );
    }

    #[test]
    fn console_is_split_at_the_markers() {
        let console = format!(
            "[ 0.1] boot\nLAB-GUEST-UP kernel=6.1.0-56-arm64 machine=aarch64\n\
             LAB-BEGIN t\n{OUTPUT}LAB-END t rc=101\nLAB-BEGIN u\nrunning 1 test\n"
        );
        let m = parse_console(&console);
        assert_eq!(m.kernel, "6.1.0-56-arm64");
        assert_eq!(m.binaries.len(), 2);
        assert_eq!(m.binaries[0].tests.len(), 3);
        assert!(m.binaries[0].problems.is_empty());
        assert!(!m.binaries[1].problems.is_empty(), "u never ended");
    }
}
