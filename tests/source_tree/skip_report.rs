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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments and the insides of string and char literals made
/// spaces (lines kept), so braces and words in them do not count.
fn blank(text: &str) -> Vec<char> {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if at(i) == '/' && at(i + 1) == '/' {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            wipe(&mut out, i, end);
            i = end;
        } else if at(i) == '/' && at(i + 1) == '*' {
            let (mut depth, mut k) = (0, i);
            while k < c.len() {
                if at(k) == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if at(k) == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    k += 1;
                }
            }
            wipe(&mut out, i, k);
            i = k;
        } else if at(i) == 'r' && (at(i + 1) == '"' || at(i + 1) == '#') && {
            // A raw string: r"..", r#".."#, br"..", cr"..".
            let before = if i > 0 && matches!(c[i - 1], 'b' | 'c') {
                i - 1
            } else {
                i
            };
            !ident(before)
        } {
            let hashes = (i + 1..c.len()).take_while(|&k| c[k] == '#').count();
            let open = i + 1 + hashes;
            if at(open) != '"' {
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut k = open + 1;
            while k < c.len() && !c[k..].starts_with(&close) {
                k += 1;
            }
            wipe(&mut out, open + 1, k);
            i = k + close.len();
        } else if at(i) == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i + 1, k);
            i = k + 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('{', '\'', '\n'); a lifetime has no closing quote.
            let mut k = i + 1;
            while k < c.len() && c[k] != '\'' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i + 1, k);
            i = k + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The index of the bracket that closes the one at `open`.
fn closing(c: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (k, &ch) in c.iter().enumerate().skip(open) {
        match ch {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    c.len()
}

/// Whether the word `w` starts at `i` (not inside a longer identifier).
fn word_at(c: &[char], i: usize, w: &str) -> bool {
    let is_id = |ch: char| ch.is_alphanumeric() || ch == '_';
    w.chars()
        .enumerate()
        .all(|(k, ch)| c.get(i + k) == Some(&ch))
        && (i == 0 || !is_id(c[i - 1]))
        && !c.get(i + w.chars().count()).copied().is_some_and(is_id)
}

/// The identifier starting at `i`.
fn ident_at(c: &[char], i: usize) -> String {
    c[i..]
        .iter()
        .take_while(|ch| ch.is_alphanumeric() || **ch == '_')
        .collect()
}

/// One function of a file.
struct Func {
    /// `name`, or `Type::name` inside `impl Type`.
    name: String,
    /// Its body's braces.
    body: (usize, usize),
    /// It returns `()` (no `->`).
    unit: bool,
    /// It has `#[test]`.
    test: bool,
}

/// The functions with a body in blanked text `c`.
fn functions(c: &[char]) -> Vec<Func> {
    // `impl ... Type {` spans, for qualified names.
    let mut impls = Vec::new();
    for i in 0..c.len() {
        if word_at(c, i, "impl") {
            let Some(open) = (i..c.len()).find(|&k| c[k] == '{' || c[k] == ';') else {
                continue;
            };
            if c[open] == ';' {
                continue;
            }
            let head: String = c[i + 4..open].iter().collect();
            let ty = head.rsplit(" for ").next().unwrap_or(&head);
            let ty = ty.split('<').next().unwrap_or(ty).trim();
            let ty = ty.rsplit("::").next().unwrap_or(ty).to_owned();
            impls.push((open, closing(c, open), ty));
        }
    }
    let mut out = Vec::new();
    for i in 0..c.len() {
        if !word_at(c, i, "fn") {
            continue;
        }
        let mut n = i + 2;
        while n < c.len() && c[n].is_whitespace() {
            n += 1;
        }
        let name = ident_at(c, n);
        if name.is_empty() {
            continue; // `fn(` in a type
        }
        let mut depth = 0i32;
        let mut open = None;
        for (k, &ch) in c.iter().enumerate().skip(n) {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                ';' if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let signature: String = c[n..open].iter().collect();
        // The attributes since the previous item.
        let item_start = (0..i)
            .rev()
            .find(|&k| matches!(c[k], ';' | '{' | '}'))
            .map_or(0, |k| k + 1);
        let attrs: String = c[item_start..i].iter().collect();
        let qualified = impls
            .iter()
            .filter(|(o, e, _)| *o < i && i < *e)
            .max_by_key(|(o, _, _)| *o)
            .map_or(name.clone(), |(_, _, ty)| format!("{ty}::{name}"));
        out.push(Func {
            name: qualified,
            body: (open, closing(c, open)),
            unit: !signature.contains("->"),
            test: attrs.contains("#[test]"),
        });
    }
    out
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
