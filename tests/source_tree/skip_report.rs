//! No test passes without running and without a line in the skip report
//! (CONTRIBUTING.md, "Tests that cannot run on this machine"): every early
//! `return` of a function that returns nothing, in every test file, is
//! preceded by a call that reports the skip (`lab_support::skip`,
//! `lab_support::not_applicable`, or a helper of the same area that calls one
//! of them, such as `kernel_support::hw_breakpoints` or a `let Some(attr) =
//! prctl_tracepoint() else { return; }`), or ends a path the test has
//! asserted (`assert!`/`assert_eq!`/`assert_ne!` before it), or is one of
//! the few returns in [`NOT_SKIPS`] that are no skip at all.
//!
//! Every area is checked, the host-only ones too: `perf_oracle` and
//! `unprivileged` skip when perf or root is missing, and those skips belong
//! in the report as much as a guest's missing PMU; `simulated` and
//! `source_tree` have nothing to lack, so a bare `return` there is a test
//! that proves nothing on some path, and the same rule finds it.
//!
//! The check reads the source, not the syntax tree: comments and literals are
//! blanked out, a `return` belongs to the innermost `fn` around it (a
//! closure's `return` counts as its function's), and what "precedes" it is
//! the statement that opened its block (`if ...`, `let ... else`, a match
//! arm, an `if`/`else` chain) up to the `return`. A helper counts as
//! reporting when its body calls `skip`, `not_applicable` or another
//! reporting helper; that its every `None`/`false` path reports is the
//! helper's own business (each says so in its doc).

use super::rust_source::{blank, files, functions, word_at};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Returns that are no skip, each with why: `(file, function, why)`. Only a
/// function named here may return without a report, and only where the
/// reason holds.
const NOT_SKIPS: &[(&str, &str, &str)] = &[
    (
        "tests/set/workload_kernel.rs",
        "exec_failure_is_reported_as_perf_does",
        "in a child the test binary re-executed for another test's role (role_args): the \
         parent's test is the one that reports",
    ),
    (
        "tests/set/workload_kernel.rs",
        "dropped_before_release_exits_unexecuted",
        "in a child the test binary re-executed for another test's role (role_args)",
    ),
    (
        "tests/abi/fd_leak.rs",
        "opening_and_dropping_events_leaks_no_fd",
        "the re-executed child ran the check alone (check_alone asserts); the parent asserts \
         the child's exit status",
    ),
    (
        "tests/ring/ringset_kernel.rs",
        "Tally::round",
        "a merge round's helper, no test: the internal drain did the round, the rest of the \
         function is the external one",
    ),
    (
        "tests/perf_oracle/perf_data_fields.rs",
        "regs_text",
        "a formatting helper, no test: a sample without registers prints none",
    ),
];

/// The repository's root.
fn root() -> PathBuf {
    crate::root()
}

/// Whether `text` calls one of `reporting` (a free function named alone or
/// after a module path, `Type::name` for an associated one), or asserts.
fn reports(text: &[char], reporting: &BTreeSet<String>, asserts: bool) -> bool {
    let s: String = text.iter().collect();
    reporting.iter().any(|name| calls(&s, name))
        || (asserts
            && ["assert!(", "assert_eq!(", "assert_ne!("]
                .iter()
                .any(|a| s.contains(a)))
}

/// Whether `s` calls `name` (`skip(`, `lab_support::skip(`, `Source::new(`,
/// `Self::new(` inside the impl), not a method `.skip(`.
fn calls(s: &str, name: &str) -> bool {
    let (ty, bare) = match name.rsplit_once("::") {
        Some((ty, bare)) => (Some(ty), bare),
        None => (None, name),
    };
    let c: Vec<char> = s.chars().collect();
    (0..c.len()).any(|i| {
        if !word_at(&c, i, bare) {
            return false;
        }
        let after = c[i + bare.chars().count()..]
            .iter()
            .find(|ch| !ch.is_whitespace());
        if after != Some(&'(') {
            return false;
        }
        let before: String = c[i.saturating_sub(120)..i].iter().collect();
        let before = before.trim_end();
        match ty {
            Some(ty) => before.ends_with(&format!("{ty}::")) || before.ends_with("Self::"),
            None => {
                if before.ends_with('.') || before.ends_with("fn") {
                    return false;
                }
                // `module::name(` but not `Type::name(`.
                match before.strip_suffix("::") {
                    Some(path) => path
                        .rsplit(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                        .next()
                        .is_some_and(|seg| seg.starts_with(|ch: char| ch.is_lowercase())),
                    None => true,
                }
            }
        }
    })
}

/// Where the statement that opened the block at `open` starts: back over an
/// `if`/`else` chain, to the previous `;`, `,` (a match arm) or the
/// enclosing block's `{`.
fn statement_start(c: &[char], open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i > 0 {
        i -= 1;
        match c[i] {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            '}' if depth > 0 => depth += 1,
            '}' => {
                let rest: String = c[i + 1..open].iter().collect();
                if !rest.trim_start().starts_with("else") {
                    return i + 1;
                }
                depth += 1;
            }
            '{' if depth > 0 => depth -= 1,
            '{' | '(' | '[' | ';' | ',' if depth == 0 => return i + 1,
            _ => {}
        }
    }
    0
}

/// The early returns of `text` (a file of `area`) that no report precedes:
/// `(line, function)`. `reporting` holds the area's reporting functions.
fn silent_returns(text: &str, reporting: &BTreeSet<String>) -> Vec<(usize, String)> {
    let c = blank(text);
    let funcs = functions(&c);
    let mut out = Vec::new();
    for i in 0..c.len() {
        if !word_at(&c, i, "return") {
            continue;
        }
        let Some(f) = funcs
            .iter()
            .filter(|f| f.body.0 < i && i < f.body.1)
            .min_by_key(|f| f.body.1 - f.body.0)
        else {
            continue;
        };
        let rest: String = c[i + 6..].iter().take(12).collect();
        let rest = rest.trim_start();
        let bare = rest.starts_with([';', '}', ',']);
        let passes = (f.unit && bare) || (f.test && rest.starts_with("Ok(())"));
        if !passes {
            continue;
        }
        // The innermost block around the return.
        let mut depth = 0;
        let mut open = f.body.0;
        for k in (f.body.0..i).rev() {
            match c[k] {
                '}' => depth += 1,
                '{' if depth == 0 => {
                    open = k;
                    break;
                }
                '{' => depth -= 1,
                _ => {}
            }
        }
        let head = &c[statement_start(&c, open)..i];
        if !reports(head, reporting, true) {
            let line = c[..i].iter().filter(|ch| **ch == '\n').count() + 1;
            out.push((line, f.name.clone()));
        }
    }
    out
}

/// The reporting functions of a set of files: `skip`, `not_applicable`, and
/// every function whose body calls one (to a fixed point).
fn reporting(texts: &[String]) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = ["skip", "not_applicable"].map(String::from).into();
    let bodies: Vec<(String, Vec<char>)> = texts
        .iter()
        .flat_map(|t| {
            let c = blank(t);
            functions(&c)
                .into_iter()
                .map(|f| (f.name, c[f.body.0..f.body.1].to_vec()))
                .collect::<Vec<_>>()
        })
        .collect();
    loop {
        let before = set.len();
        for (name, body) in &bodies {
            if !set.contains(name) && reports(body, &set, false) {
                set.insert(name.clone());
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

#[test]
fn every_early_return_of_a_test_is_in_the_skip_report() {
    let tests = root().join("tests");
    let mut support_files = Vec::new();
    files(&tests.join("support"), &mut support_files);
    let support: Vec<String> = support_files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    // Each area with the shared helpers it may include; a loose file alone.
    let mut areas: Vec<Vec<PathBuf>> = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        if path.ends_with("support") {
            continue;
        }
        let mut area = Vec::new();
        if path.is_dir() {
            files(&path, &mut area);
        } else if path.extension().is_some_and(|e| e == "rs") {
            area.push(path);
        }
        areas.push(area);
    }
    let mut problems = Vec::new();
    let mut returns = 0;
    let mut used = BTreeSet::new();
    for area in areas {
        let texts: Vec<String> = area
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .chain(support.iter().cloned())
            .collect();
        let reporting = reporting(&texts);
        for (f, text) in area.iter().zip(&texts) {
            let rel = f.strip_prefix(root()).unwrap().to_str().unwrap().to_owned();
            returns += text.matches("return").count();
            for (line, func) in silent_returns(text, &reporting) {
                let allowed = NOT_SKIPS
                    .iter()
                    .position(|(file, name, _)| *file == rel && *name == func);
                used.extend(allowed);
                if allowed.is_none() {
                    problems.push(format!(
                        "{rel}:{line}: `{func}` returns early with no skip report before it \
                         (call lab_support::skip or not_applicable, or a helper that does, \
                         then return)"
                    ));
                }
            }
        }
    }
    // The shared helpers themselves.
    let reporting = reporting(&support);
    for (f, text) in support_files.iter().zip(&support) {
        let rel = f.strip_prefix(root()).unwrap().display();
        for (line, func) in silent_returns(text, &reporting) {
            problems.push(format!(
                "{rel}:{line}: `{func}` returns early with no skip report"
            ));
        }
    }
    assert!(
        returns > 100,
        "only {returns} returns seen: the scan is broken"
    );
    for (i, (file, name, _)) in NOT_SKIPS.iter().enumerate() {
        if !used.contains(&i) {
            problems.push(format!(
                "{file}: `{name}` is in NOT_SKIPS (tests/source_tree/skip_report.rs) but has \
                 no return without a report: remove its entry"
            ));
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "tests that pass without running and without a line in the skip report:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_sees_a_silent_return_and_the_reported_ones() {
    let helpers = "
        fn prctl_tracepoint() -> Option<u64> {
            if let Err(why) = syscall_tracepoints() {
                lab_support::not_applicable(Need::Tracefs, &why);
                return None;
            }
            Some(1)
        }
        impl Source { fn new() -> Option<Self> { skip(\"x\", \"y\"); None } }
    ";
    let tests = "
        #[test]
        fn reported() {
            let Some(tp) = prctl_tracepoint() else { return; };
            let Some(s) = Source::new() else {
                return;
            };
            if !ok() {
                crate::lab_support::skip(\"needs {\", \"}\");
                return;
            }
            match x { Ok(v) => v, Err(e) => { assert_eq!(e, 1); return; } }
        }
        #[test]
        fn silent() {
            let v: Vec<u8> = (0..3).skip(1).collect();
            if v.is_empty() {
                return;
            }
            let Some(tp) = Attr::new() else { return };
        }
        fn value() -> bool { if x { return false; } true }
    ";
    let set = reporting(&[helpers.to_owned(), tests.to_owned()]);
    assert!(set.contains("prctl_tracepoint") && set.contains("Source::new"));
    assert!(!set.contains("silent") && !set.contains("value"));
    let lines: Vec<usize> = silent_returns(tests, &set)
        .into_iter()
        .map(|(line, f)| {
            assert_eq!(f, "silent");
            line
        })
        .collect();
    assert_eq!(lines, [18, 20]);
}
