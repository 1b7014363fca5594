//! Runs clang on the rendered facts for one target and reports every fact
//! the C compiler disagrees with, by label.

use crate::cgen;
use crate::elf;
use crate::facts::Facts;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to compile for one target.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// The clang binary (>= 16 for loongarch64).
    pub clang: PathBuf,
    /// `--target` for clang.
    pub clang_target: String,
    /// Header directories, searched in order (`-nostdinc` is always given).
    pub include_dirs: Vec<PathBuf>,
    /// The directory holding `wrapper.h`.
    pub wrapper_dir: PathBuf,
}

/// The outcome of checking one target.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Static assertions compiled.
    pub asserts: usize,
    /// Bit-field probes compared.
    pub probes: usize,
    /// One line per disagreement, starting with the fact's label.
    pub failures: Vec<String>,
}

impl Compiler {
    fn command(&self, source: &Path) -> Command {
        let mut cmd = Command::new(&self.clang);
        cmd.arg(format!("--target={}", self.clang_target))
            .args([
                "-nostdinc",
                "-std=gnu11",
                "-ferror-limit=0",
                "-Wno-everything",
            ])
            .arg("-iquote")
            .arg(&self.wrapper_dir);
        for dir in &self.include_dirs {
            cmd.arg("-isystem").arg(dir);
        }
        cmd.arg(source);
        cmd
    }
}

/// Checks `facts` with clang for one target, writing sources into `work`.
pub fn check(facts: &Facts, compiler: &Compiler, work: &Path) -> Result<Report, String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut report = Report {
        asserts: facts.asserts.len(),
        probes: facts.probes.len(),
        ..Default::default()
    };

    let asserts = work.join("asserts.c");
    std::fs::write(&asserts, cgen::static_asserts(facts)).map_err(|e| e.to_string())?;
    let out = compiler
        .command(&asserts)
        .arg("-fsyntax-only")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.clang.display()))?;
    report
        .failures
        .extend(static_assert_failures(&String::from_utf8_lossy(
            &out.stderr,
        )));
    if !out.status.success() && report.failures.is_empty() {
        return Err(format!(
            "clang failed without a static assertion failure:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }

    let probes = work.join("probes.c");
    let object = work.join("probes.o");
    std::fs::write(&probes, cgen::probe_objects(facts)).map_err(|e| e.to_string())?;
    let out = compiler
        .command(&probes)
        .arg("-c")
        .arg("-o")
        .arg(&object)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", compiler.clang.display()))?;
    if !out.status.success() {
        return Err(format!(
            "clang could not compile the probes:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let data = std::fs::read(&object).map_err(|e| e.to_string())?;
    let sections = elf::sections(&data, ".probe.")?;
    for (i, probe) in facts.probes.iter().enumerate() {
        match sections.get(&cgen::probe_section(i)) {
            Some(bytes) if *bytes == probe.expected => {}
            Some(bytes) => report.failures.push(format!(
                "{}: clang lays out {} but the Rust side predicts {}",
                probe.label,
                hex(bytes),
                hex(&probe.expected)
            )),
            None => report
                .failures
                .push(format!("{}: clang emitted no probe object", probe.label)),
        }
    }
    Ok(report)
}

/// The labels of failed `_Static_assert`s in clang's diagnostics, with the
/// requirement clang printed.
pub fn static_assert_failures(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| {
            let at = line.find("static assertion failed")?;
            let rest = &line[at..];
            let label = match rest.rfind("': ") {
                Some(i) => &rest[i + 3..],
                None => rest.split_once(": ").map_or(rest, |(_, l)| l),
            };
            Some(format!("{label}: {}", rest.trim()))
        })
        .collect()
}

/// Bytes as hex, with the non-zero ones' positions easy to see.
pub fn hex(bytes: &[u8]) -> String {
    let nonzero: Vec<String> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b != 0)
        .map(|(i, b)| format!("[{i}]={b:02x}"))
        .collect();
    if nonzero.is_empty() {
        "all zero".to_owned()
    } else {
        nonzero.join(" ")
    }
}
