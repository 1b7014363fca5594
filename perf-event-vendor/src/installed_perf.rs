//! A cross-check against the perf installed on the machine: perf compiles
//! its vendor tables into its binary as C strings (jevents.py's one big
//! string, each field ended by a NUL, a string that ends another folded
//! into it), so every name, term string and description of our tables of
//! that perf's kernel must be in the binary, as a NUL-ended string or the
//! end of one. Where the installed perf is 6.1 (Debian bookworm's), this
//! checks the 6.1 tables of the target's architecture against what that
//! perf really holds, which may be a later 6.1 stable release than the
//! pinned source; the 6.12 tables, checked the same way, must miss many
//! (the check tells the kernels apart).
//!
//! Without `perf` on the PATH, with one that is not an ELF binary (a
//! wrapper script), of a kernel whose tables are not here, or built without
//! tables (`NO_JEVENTS`), the test says so on stderr (`SKIPPED ...`).

use crate::oracle::{note, skip};
use crate::tables;
use std::process::Command;

/// The installed perf's binary and its kernel's `major.minor`.
fn installed_perf() -> Result<(Vec<u8>, String), String> {
    let out = Command::new("perf")
        .arg("--version")
        .output()
        .map_err(|e| format!("perf: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let number = version
        .strip_prefix("perf version ")
        .ok_or_else(|| format!("perf --version printed {version:?}"))?;
    let series: Vec<&str> = number.split('.').take(2).collect();
    let series = series.join(".");
    let path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("perf"))
        .find(|p| p.is_file())
        .ok_or("perf is not a file on the PATH")?;
    let binary = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !binary.starts_with(b"\x7fELF") {
        return Err(format!(
            "{} is not an ELF binary (a wrapper?): its tables are elsewhere",
            path.display()
        ));
    }
    Ok((binary, series))
}

/// The binary's NUL-ended strings, reversed and sorted: a string is in
/// the binary, whole or as the end of a longer one, when a reversed one
/// starts with it reversed.
struct Strings(Vec<String>);

impl Strings {
    fn of(binary: &[u8]) -> Strings {
        let mut reversed: Vec<String> = binary
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .filter_map(|s| std::str::from_utf8(s).ok())
            .map(|s| s.chars().rev().collect())
            .collect();
        reversed.sort_unstable();
        reversed.dedup();
        Strings(reversed)
    }

    fn has(&self, s: &str) -> bool {
        let r: String = s.chars().rev().collect();
        let at = self.0.partition_point(|x| *x < r);
        self.0.get(at).is_some_and(|x| x.starts_with(&r))
    }
}

/// The strings of one kernel's tables of the target's architecture that
/// the binary lacks, and how many were looked for.
fn missing(strings: &Strings, kernel: &str) -> Option<(usize, Vec<String>)> {
    let t = tables::all()
        .iter()
        .find(|t| t.kernel == kernel && Some(t.arch) == crate::ARCH)?;
    let mut wanted: Vec<&str> = Vec::new();
    for model in &t.tables.models {
        for e in &model.events {
            wanted.extend([e.name, e.terms]);
            wanted.extend(e.desc);
        }
        for m in &model.metrics {
            wanted.push(m.name);
            // 6.12 compiles in metric.py's form of the expression.
            if kernel == "6.1" {
                wanted.push(m.expr);
            }
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    let lacking = wanted
        .iter()
        .filter(|s| !strings.has(s))
        .map(|s| s.to_string())
        .collect();
    Some((wanted.len(), lacking))
}

#[test]
fn the_installed_perfs_binary_holds_our_tables_of_its_kernel() {
    let (binary, series) = match installed_perf() {
        Ok(found) => found,
        Err(reason) => return skip("needs an installed perf", &reason),
    };
    let strings = Strings::of(&binary);
    let Some((looked, lacking)) = missing(&strings, &series) else {
        return skip(
            "needs a perf of a kernel we have tables of",
            &format!(
                "perf is {series}; tables of {} for {}",
                tables::ALL.map(|(k, _)| k).join(", "),
                crate::ARCH.unwrap_or("no architecture")
            ),
        );
    };
    if lacking.len() == looked {
        return skip(
            "needs a perf with vendor tables",
            &format!("perf {series} holds none of our {looked} strings (built with NO_JEVENTS=1?)"),
        );
    }
    note(&format!(
        "perf {series}'s binary: {} of our {looked} distinct {series} names, terms, descriptions \
         (and 6.1's expressions) present",
        looked - lacking.len()
    ));
    assert!(
        lacking.is_empty(),
        "{} of {looked} strings of our {series} tables are not in perf's binary (first 20):\n{}",
        lacking.len(),
        lacking[..lacking.len().min(20)].join("\n")
    );
    // The same check tells kernels apart: the other kernel's tables miss
    // many strings.
    for (other, _) in tables::ALL.iter().filter(|(k, _)| *k != series) {
        if let Some((looked, lacking)) = missing(&strings, other) {
            note(&format!(
                "perf {series}'s binary lacks {} of our {looked} {other} strings",
                lacking.len()
            ));
            assert!(
                lacking.len() * 10 > looked,
                "{other}: the check tells nothing apart"
            );
        }
    }
}

#[test]
fn suffixes_count_as_present() {
    let strings = Strings::of(b"\0cpu_cycles\0event=0x11\0");
    assert!(strings.has("cpu_cycles") && strings.has("cycles") && strings.has("event=0x11"));
    assert!(!strings.has("cpu_cycle") && !strings.has("xcpu_cycles"));
}
