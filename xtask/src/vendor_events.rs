//! `cargo xtask vendor-events [--check]`: perf's vendor event tables, one
//! data file per architecture in `perf-event-vendor/src/tables/`, generated
//! from `tools/perf/pmu-events/arch/` of the pinned kernel source (the lab's
//! `LINUX_SOURCE`, fetched and verified by SHA-256 like every pin) by the
//! rules of perf's own generator, jevents.py (see `json_event.rs` and
//! `walk.rs`). The `jevents_oracle` test of perf-event-vendor compares the
//! result with what jevents.py itself reads.

mod data_file;
mod json_event;
mod walk;

use crate::shell::{self, Result};
use std::path::PathBuf;

/// `cargo xtask vendor-events --help`.
pub const USAGE: &str = "usage: cargo xtask vendor-events [--check]
  Reads tools/perf/pmu-events/arch/{x86,arm64,powerpc,s390,riscv} of the pinned
  linux-source package (fetched into the lab's cache and verified) the way perf's
  jevents.py does and writes perf-event-vendor/src/tables/<arch>.tsv.
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
    shell::step("the pinned kernel source");
    let source = crate::lab::linux_source()?;
    let origin = data_file::Origin {
        package: source.package,
        version: source.version,
        sha256: source.sha256,
    };
    let pmu_events = source.tree.join("tools/perf/pmu-events/arch");
    let mut stale = Vec::new();
    for arch in ARCHES {
        shell::step(&format!("{arch}: tools/perf/pmu-events/arch/{arch}"));
        let tables = walk::walk(&pmu_events.join(arch)).map_err(|e| format!("{arch}: {e}"))?;
        let text = data_file::render(arch, &tables, &origin).map_err(|e| format!("{arch}: {e}"))?;
        report(arch, &tables, &text);
        let file = tables_dir().join(format!("{arch}.tsv"));
        if check {
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            if let Some(difference) = first_difference(&committed, &text) {
                stale.push(format!("{}: {difference}", file.display()));
            }
        } else {
            std::fs::create_dir_all(tables_dir()).map_err(|e| e.to_string())?;
            std::fs::write(&file, &text).map_err(|e| format!("{}: {e}", file.display()))?;
            eprintln!("wrote {}", file.display());
        }
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
