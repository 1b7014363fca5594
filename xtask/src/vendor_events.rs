//! `cargo xtask vendor-events [--check]`: perf's vendor event tables, one
//! data file per kernel and architecture in
//! `perf-event-vendor/src/tables/<kernel>/<arch>.tsv`, generated from
//! `tools/perf/pmu-events/arch/` of each pinned kernel source (the lab's
//! `LINUX_SOURCES`, fetched and verified by size and SHA-256 like every pin)
//! by the rules of that kernel's own generator, jevents.py (see
//! `json_event.rs`, `json_event_6_1.rs` and `walk.rs`). The `jevents_oracle`
//! test of perf-event-vendor compares each kernel's
//! result with what jevents.py itself reads.

mod data_file;
mod json_event;
mod json_event_6_1;
mod walk;

use crate::shell::{self, Result};
use std::path::PathBuf;

/// `cargo xtask vendor-events --help`.
pub const USAGE: &str = "usage: cargo xtask vendor-events [--check]
  Reads tools/perf/pmu-events/arch/{x86,arm64,powerpc,s390,riscv} of each pinned
  linux-source package (6.12, 6.1: fetched into the lab's cache and verified) the
  way that kernel's jevents.py does and writes
  perf-event-vendor/src/tables/<kernel>/<arch>.tsv (none where the kernel has no
  such directory: 6.1 has no riscv).
  --check   generate in memory; fail, naming the first differing line, when a
            committed file differs";

/// perf's architecture directories with tables, in the order they are written.
pub const ARCHES: [&str; 5] = ["x86", "arm64", "powerpc", "s390", "riscv"];

/// The directory of the data files.
fn tables_dir() -> PathBuf {
    shell::root().join("perf-event-vendor/src/tables")
}

pub fn main(args: &[String]) -> Result {
    let mut check = false;
    for arg in args {
        match arg.as_str() {
            "--check" => check = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let mut stale = Vec::new();
    for pin in crate::lab::linux_source_pins() {
        shell::step(&format!("the pinned kernel source {}", pin.package));
        let source = crate::lab::linux_source(pin)?;
        stale.extend(kernel(&source, check)?);
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the vendor tables are not what the pinned source generates:\n{}\n\
             run `cargo xtask vendor-events` and commit the result",
            stale.join("\n")
        ))
    }
}

/// The tables of one kernel source, written or (`check`) compared with the
/// committed files; the differences found.
fn kernel(source: &crate::lab::LinuxSource, check: bool) -> Result<Vec<String>> {
    let origin = data_file::Origin {
        package: source.package,
        version: source.version,
        sha256: source.sha256,
    };
    let rules = json_event::Jevents::of_series(source.series)?;
    let dir = tables_dir().join(source.series);
    let pmu_events = source.tree.join("tools/perf/pmu-events/arch");
    let mut stale = Vec::new();
    for arch in ARCHES {
        let file = dir.join(format!("{arch}.tsv"));
        if !pmu_events.join(arch).is_dir() {
            eprintln!(
                "{} {}: no tools/perf/pmu-events/arch/{arch}: no tables",
                source.package, source.version
            );
            if file.exists() && check {
                stale.push(format!("{}: the source has no such tables", file.display()));
            } else if file.exists() {
                std::fs::remove_file(&file).map_err(|e| format!("{}: {e}", file.display()))?;
                eprintln!("removed {}", file.display());
            }
            continue;
        }
        shell::step(&format!(
            "{}: tools/perf/pmu-events/arch/{arch}",
            source.series
        ));
        let tables = walk::walk(&pmu_events, arch, rules).map_err(|e| format!("{arch}: {e}"))?;
        let text =
            data_file::render(arch, &tables, &origin, rules).map_err(|e| format!("{arch}: {e}"))?;
        report(arch, &tables, &text);
        if check {
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            if let Some(difference) = first_difference(&committed, &text) {
                stale.push(format!("{}: {difference}", file.display()));
            }
        } else {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
            eprintln!("wrote {}", file.display());
        }
    }
    Ok(stale)
}

/// Counts for the log.
fn report(arch: &str, tables: &walk::Arch, text: &str) {
    let events: usize = tables.tables.iter().map(|t| t.events.len()).sum();
    let metrics: usize = tables.tables.iter().map(|t| t.metrics.len()).sum();
    let sys = tables.tables.iter().filter(|t| t.is_sys()).count();
    let unique = |kind: &str| text.lines().filter(|l| l.starts_with(kind)).count();
    eprintln!(
        "{arch}: {} tables ({sys} sys), {} mapfile rows kept, {events} events ({} distinct), \
         {metrics} metrics ({} distinct), {} bytes",
        tables.tables.len(),
        tables.map.len(),
        unique("e\t"),
        unique("x\t"),
        text.len()
    );
    for row in &tables.dropped_rows {
        eprintln!("{arch}: mapfile row without a table, dropped as jevents drops it: {row}");
    }
}

/// The first line where `committed` and `generated` differ, for `--check`.
fn first_difference(committed: &str, generated: &str) -> Option<String> {
    if committed == generated {
        return None;
    }
    let mut c = committed.lines();
    let mut g = generated.lines();
    let clip = |s: &str| s.chars().take(160).collect::<String>();
    for line in 1.. {
        match (c.next(), g.next()) {
            (None, None) => return Some("the last line's end differs".to_owned()),
            (a, b) if a == b => continue,
            (a, b) => {
                return Some(format!(
                    "line {line}: committed {:?}, generated {:?}",
                    a.map_or("<end of file>".to_owned(), clip),
                    b.map_or("<end of file>".to_owned(), clip)
                ))
            }
        }
    }
    unreachable!("the loop returns")
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn check_names_the_first_differing_line() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        assert_eq!(
            first_difference("a\nb\nc\n", "a\nB\nc\n").as_deref(),
            Some("line 2: committed \"b\", generated \"B\"")
        );
        assert_eq!(
            first_difference("a\n", "a\nb\n").as_deref(),
            Some("line 2: committed \"<end of file>\", generated \"b\"")
        );
    }
}
