//! `cargo xtask bindgen [--check] [--headers DIR] [--arch NAME]`: regenerate
//! `src/sys/<arch>.rs` and `src/sys/mod.rs` from one header set.

use crate::headers::{self, HeaderSet};
use crate::options::{self, Arch, ARCHES};
use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Parsed arguments of the `bindgen` task.
#[derive(Debug, Default)]
pub struct Args {
    /// Regenerate into a temporary directory and compare.
    pub check: bool,
    /// A header tree to use instead of the pinned package.
    pub headers: Option<PathBuf>,
    /// Limit to these architectures (file stems).
    pub arches: Vec<String>,
    /// With `--check`: compare with this directory instead of `src/sys`
    /// (CI proves on a mutated copy that the check fails).
    pub against: Option<PathBuf>,
}

impl Args {
    /// Parses `--check`, `--headers DIR`, `--arch NAME` (repeatable).
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Self> {
        let mut out = Args::default();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--check" => out.check = true,
                "--headers" => {
                    out.headers = Some(args.next().ok_or("--headers needs a directory")?.into())
                }
                "--arch" => out.arches.push(args.next().ok_or("--arch needs a name")?),
                "--against" => {
                    out.against = Some(args.next().ok_or("--against needs a directory")?.into())
                }
                other => return Err(format!("bindgen: unknown argument `{other}`\n{USAGE}")),
            }
        }
        Ok(out)
    }
}

/// Usage text of the task.
pub const USAGE: &str = "usage: cargo xtask bindgen [--check] [--headers DIR] [--arch NAME]...
  --check        regenerate into a temporary directory; fail with a diff if src/sys differs
  --headers DIR  use a kernel's `make headers_install` tree (or an unpacked linux-libc-dev)
                 instead of the pinned Debian package; a headers_install tree holds one
                 architecture, so name it with --arch
  --arch NAME    only this architecture (repeatable); one of the src/sys/<NAME>.rs stems
  --against DIR  with --check: compare with DIR instead of src/sys";

/// Runs the task.
pub fn main(args: &Args) -> Result {
    use_libclang_16()?;
    let set = match &args.headers {
        Some(dir) => headers::local(dir)?,
        None => headers::pinned()?,
    };
    let arches = select(args, &set)?;
    let root = shell::root();
    let sys = args.against.clone().unwrap_or_else(|| root.join("src/sys"));
    let out_dir = if args.check {
        let tmp = root.join("target/xtask/bindgen-check");
        let _ = std::fs::remove_dir_all(&tmp);
        tmp
    } else {
        sys.clone()
    };
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    shell::step(&format!(
        "bindgen: {} architecture(s) from {} (libclang {})",
        arches.len(),
        set.description,
        bindgen::clang_version().full
    ));
    let wrapper = root.join("wrapper.h");
    let mut files = Vec::new();
    for arch in &arches {
        let text = generate(&wrapper, &set, arch)?;
        let name = format!("{}.rs", arch.file);
        write(&out_dir.join(&name), &text)?;
        eprintln!("  {name:<16} {:>7} bytes", text.len());
        files.push(name);
    }
    if arches.len() == ARCHES.len() {
        write(&out_dir.join("mod.rs"), &rustfmt(&selector())?)?;
        files.push("mod.rs".to_owned());
    }
    if args.check {
        compare(&sys, &out_dir, &files)
    } else {
        Ok(())
    }
}

/// The architectures to generate, checked against the header tree.
fn select(args: &Args, set: &HeaderSet) -> Result<Vec<&'static Arch>> {
    let arches: Vec<&'static Arch> = if args.arches.is_empty() {
        ARCHES.iter().collect()
    } else {
        args.arches
            .iter()
            .map(|name| {
                ARCHES.iter().find(|a| a.file == name).ok_or_else(|| {
                    let known: Vec<_> = ARCHES.iter().map(|a| a.file).collect();
                    format!("unknown --arch {name}; known: {}", known.join(", "))
                })
            })
            .collect::<Result<_>>()?
    };
    if !set.multiarch && arches.len() != 1 {
        return Err(format!(
            "{} holds one architecture's headers (asm/ at the top): name it with --arch",
            set.include.display()
        ));
    }
    Ok(arches)
}

/// bindgen must run on libclang >= 16 (clang 14 does not know loongarch64)
/// and on the same libclang every time, for byte-identical output.
fn use_libclang_16() -> Result {
    if std::env::var_os("LIBCLANG_PATH").is_some() {
        return Ok(());
    }
    let dir = Path::new("/usr/lib/llvm-16/lib");
    if !dir.join("libclang.so.1").exists() && !dir.join("libclang-16.so.1").exists() {
        shell::apt_install(&["libclang-16-dev", "clang-16"])?;
    }
    // SAFETY-free in edition 2021: xtask is single-threaded at this point.
    std::env::set_var("LIBCLANG_PATH", dir);
    Ok(())
}

/// Generates one architecture's file: preamble + bindgen output.
pub fn generate(wrapper: &Path, set: &HeaderSet, arch: &Arch) -> Result<String> {
    let include_dirs = options::include_dirs(&set.include, arch.multiarch);
    let bindings = options::builder(wrapper, arch.clang_target, &include_dirs)
        .generate()
        .map_err(|e| {
            format!(
                "bindgen failed for {} ({}): {e}",
                arch.file, arch.clang_target
            )
        })?;
    let asm_dir = if set.multiarch {
        format!("usr/include/{}", arch.multiarch)
    } else {
        "asm/ of the tree".to_owned()
    };
    let libclang = bindgen::clang_version()
        .parsed
        .map_or_else(|| "unknown".to_owned(), |(major, _)| major.to_string());
    let preamble = format!(
        "// Generated by `cargo xtask bindgen`: do not edit by hand.\n\
         // Regenerate with `cargo xtask bindgen`; `cargo xtask bindgen --check` verifies.\n\
         // Input: wrapper.h through bindgen_options.rs, libclang {libclang} \
         (bindgen's version: the comment below).\n\
         // Headers: {}.\n\
         // Kernel: Linux {} UAPI; architecture headers: {asm_dir}.\n\
         // Target: {} (clang --target={} -nostdinc); Rust cfg: target_arch = \"{}\", \
         target_endian = \"{}\", target_pointer_width = \"{}\".\n\n",
        set.description,
        set.kernel,
        arch.file,
        arch.clang_target,
        arch.target_arch,
        arch.target_endian,
        arch.target_pointer_width,
    );
    Ok(preamble + &bindings.to_string())
}

/// `src/sys/mod.rs`: selects the vendored file by cfg, or the build-time
/// bindings with feature `bindgen`; any other target is a compile_error!.
pub fn selector() -> String {
    let mut s = String::from(
        "// Generated by `cargo xtask bindgen` from the table in bindgen_options.rs:\n\
         // do not edit by hand.\n\n\
         //! Raw bindings to the kernel's perf UAPI, generated by bindgen from\n\
         //! `linux/perf_event.h`, `linux/hw_breakpoint.h`, `asm/perf_regs.h`,\n\
         //! the `perf_event_open` syscall number and the `PR_TASK_PERF_EVENTS_*` prctl\n\
         //! numbers (see `wrapper.h`). Names, types and comments are the kernel's;\n\
         //! perf_event_open(2) documents their meaning.\n\
         //!\n\
         //! The `PERF_EVENT_IOC_*` values were computed by clang with the target's own\n\
         //! `_IOC` encoding, and `__NR_perf_event_open` is the target's syscall number.\n\
         //!\n\
         //! By default the vendored file for the target architecture is used; with\n\
         //! feature `bindgen` the bindings are generated at build time from the\n\
         //! installed headers (or `PERF_EVENT_INCLUDE_DIR`).\n\n",
    );
    s.push_str(
        "#[allow(\n    non_camel_case_types,\n    non_upper_case_globals,\n    \
         non_snake_case,\n    dead_code,\n    missing_docs,\n    unsafe_code,\n    clippy::all,\n    \
         clippy::pedantic,\n    clippy::undocumented_unsafe_blocks,\n    rustdoc::all\n)]\nmod generated {\n    \
         #[cfg(feature = \"bindgen\")]\n    \
         include!(concat!(env!(\"OUT_DIR\"), \"/sys.rs\"));\n",
    );
    let mut conds = Vec::new();
    for a in ARCHES {
        let cond = format!(
            "target_arch = \"{}\",\n        target_endian = \"{}\",\n        \
             target_pointer_width = \"{}\"",
            a.target_arch, a.target_endian, a.target_pointer_width
        );
        s.push_str(&format!(
            "\n    #[cfg(all(\n        not(feature = \"bindgen\"),\n        {cond}\n    ))]\n    \
             include!(\"{}.rs\");\n",
            a.file
        ));
        conds.push(format!("all({})", cond.replace("\n        ", " ")));
    }
    s.push_str("}\n\n");
    s.push_str(&format!(
        "#[cfg(not(any(feature = \"bindgen\", {})))]\n",
        conds.join(", ")
    ));
    s.push_str(
        "compile_error!(\n    \"perf-event-core has no vendored perf bindings for this target \
         (architecture, endianness or pointer width). Enable feature `bindgen` to generate \
         them at build time from the installed kernel headers (needs libclang; \
         PERF_EVENT_INCLUDE_DIR selects the headers), or add the architecture to \
         bindgen_options.rs and run `cargo xtask bindgen`.\"\n);\n\n",
    );
    s.push_str("pub use generated::*;\n");
    s
}

/// Formats Rust source with the toolchain's rustfmt, as bindgen does.
fn rustfmt(source: &str) -> Result<String> {
    use std::io::Write;
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt (rustup component add rustfmt): {e}"))?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(source.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed on the generated mod.rs ({})",
            out.status
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

fn write(path: &Path, text: &str) -> Result {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Compares regenerated files with the vendored ones; prints a diff and the
/// command to run when anything differs.
fn compare(sys: &Path, fresh: &Path, files: &[String]) -> Result {
    let mut differ = Vec::new();
    for name in files {
        let old = std::fs::read(sys.join(name)).unwrap_or_default();
        let new = std::fs::read(fresh.join(name)).map_err(|e| e.to_string())?;
        if old != new {
            // diff exits 1 when the files differ; its output is what matters.
            let diff = Command::new("diff")
                .args(["-u", "--label", &format!("src/sys/{name} (vendored)")])
                .args(["--label", &format!("src/sys/{name} (regenerated)")])
                .arg(sys.join(name))
                .arg(fresh.join(name))
                .output()
                .map_err(|e| format!("cannot run diff: {e}"))?;
            println!("{}", String::from_utf8_lossy(&diff.stdout));
            differ.push(name.clone());
        }
    }
    if files.len() == ARCHES.len() + 1 {
        let stale = std::fs::read_dir(sys)
            .map_err(|e| format!("{}: {e}", sys.display()))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".rs") && !files.contains(n));
        differ.extend(stale.map(|n| format!("{n} (not generated any more)")));
    }
    if differ.is_empty() {
        eprintln!("{} is up to date ({} files)", sys.display(), files.len());
        Ok(())
    } else {
        Err(format!(
            "{} differs from what the generator produces: {}.\n\
             Run `cargo xtask bindgen` to regenerate, review `git diff src/sys`, and commit.",
            sys.display(),
            differ.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    /// `src/sys/mod.rs` depends only on the architecture table, so it can
    /// be checked without headers or libclang (`bindgen --check` checks it
    /// too, with everything else).
    #[test]
    fn the_vendored_selector_is_what_the_generator_writes() {
        let vendored =
            std::fs::read_to_string(crate::shell::root().join("src/sys/mod.rs")).unwrap();
        assert!(
            super::rustfmt(&super::selector()).unwrap() == vendored,
            "src/sys/mod.rs differs from the generator's selector: run `cargo xtask bindgen`"
        );
    }
}
