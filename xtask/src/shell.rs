//! Running commands and installing what the tasks need, saying what happens.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A task failure: a sentence for the user, printed by `main`.
pub type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root (the directory holding the root Cargo.toml).
pub fn root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Prints a step heading, the way every task reports progress.
pub fn step(what: &str) {
    eprintln!("\n==> {what}");
}

/// Renders a command line for messages.
pub fn show(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        s.push(' ');
        s.push_str(&arg.to_string_lossy());
    }
    s
}

/// Runs a command with inherited stdio; a non-zero exit is an error naming it.
pub fn run(cmd: &mut Command) -> Result {
    eprintln!("$ {}", show(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start `{}`: {e}", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

/// Runs a command and returns its stdout; stderr is included in the error.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start `{}`: {e}", show(cmd)))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{}` failed ({}):\n{}{}",
            show(cmd),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Whether a program can be found on PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// A `cargo` command for a toolchain (`None`: the one running xtask).
///
/// The rustup proxy's `RUSTUP_TOOLCHAIN` and cargo's per-invocation
/// variables are cleared so the child picks its own toolchain cleanly.
pub fn cargo(toolchain: Option<&str>) -> Command {
    let mut cmd = match toolchain {
        Some(tc) => {
            let mut c = Command::new("rustup");
            c.args(["run", tc, "cargo"]);
            c.env_remove("RUSTUP_TOOLCHAIN");
            c
        }
        None => Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())),
    };
    for var in ["RUSTC", "RUSTDOC", "RUSTC_WRAPPER", "CARGO_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    cmd.current_dir(root());
    cmd
}

/// Installs Debian packages that are missing, all in one apt call
/// (the machines' docker-clean hook deletes .debs after each dpkg run).
pub fn apt_install(packages: &[&str]) -> Result {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            !output(Command::new("dpkg-query").args(["-W", "-f=${Status}", p]))
                .is_ok_and(|s| s.contains("install ok installed"))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    if !have("apt-get") {
        return Err(format!(
            "missing packages {missing:?} and no apt-get here: install them with your \
             distribution's package manager"
        ));
    }
    step(&format!(
        "installing Debian packages: {}",
        missing.join(" ")
    ));
    let sudo = !is_root();
    let mut update = Command::new(if sudo { "sudo" } else { "apt-get" });
    if sudo {
        update.arg("apt-get");
    }
    update.args(["update", "-qq"]);
    // One stale or unreachable index must not stop the install: apt keeps
    // the lists it could fetch, and the install below says whether the
    // packages were among them.
    if let Err(e) = run(&mut update) {
        eprintln!("apt-get update failed ({e}); installing from the lists it could fetch");
    }
    let mut install = Command::new(if sudo { "sudo" } else { "apt-get" });
    if sudo {
        install.arg("apt-get");
    }
    install
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive");
    run(&mut install)
}

fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_ok_and(|s| s.trim() == "0")
}

/// Adds rustup targets (and the nightly rust-src component) that are missing.
pub fn rustup_targets(toolchain: &str, targets: &[&str]) -> Result {
    let installed = output(Command::new("rustup").args([
        "target",
        "list",
        "--installed",
        "--toolchain",
        toolchain,
    ]))?;
    let missing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|t| !installed.lines().any(|l| l.trim() == *t))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    step(&format!("adding rustup targets: {}", missing.join(" ")));
    run(Command::new("rustup")
        .args(["target", "add", "--toolchain", toolchain])
        .args(&missing))
}

/// Adds rustup components that are missing from a toolchain.
pub fn rustup_components(toolchain: &str, components: &[&str]) -> Result {
    let installed = output(Command::new("rustup").args([
        "component",
        "list",
        "--installed",
        "--toolchain",
        toolchain,
    ]))
    .map_err(|e| format!("the {toolchain} toolchain is needed: {e}"))?;
    let missing: Vec<&str> = components
        .iter()
        .copied()
        .filter(|c| {
            !installed
                .lines()
                .any(|l| l == *c || l.starts_with(&format!("{c}-")))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    step(&format!(
        "adding rustup components to {toolchain}: {}",
        missing.join(" ")
    ));
    run(Command::new("rustup")
        .args(["component", "add", "--toolchain", toolchain])
        .args(&missing))
}

/// Installs a rustup toolchain (minimal profile) when it is missing.
pub fn rustup_toolchain(toolchain: &str) -> Result {
    let installed = output(Command::new("rustup").args(["toolchain", "list"]))?;
    if installed
        .lines()
        .any(|l| l.starts_with(&format!("{toolchain}-")))
    {
        return Ok(());
    }
    step(&format!("installing the Rust {toolchain} toolchain"));
    run(Command::new("rustup").args(["toolchain", "install", toolchain, "--profile", "minimal"]))
}
