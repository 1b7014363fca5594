//! The pinned header set: Debian's `linux-libc-dev` (architecture `all`),
//! which carries the UAPI headers of every architecture under
//! `usr/include/<multiarch>`. Fetched with apt against a private source list
//! and private state (the machine's apt configuration is not touched),
//! verified against the pinned SHA-256, and cached.

use crate::shell::{self, output, run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned package. Debian sid moves on and drops old versions; when this
/// one is gone, `fetch` says which version replaced it and how to move.
pub const PACKAGE: &str = "linux-libc-dev";
/// Version of [`PACKAGE`] the vendored bindings are generated from.
pub const VERSION: &str = "7.2.13-1";
/// SHA-256 of `linux-libc-dev_<VERSION>_all.deb`.
pub const SHA256: &str = "8b33c2a408bbab537e753102dce181dc211007f64c1e2516065bc677f60d5d99";
/// Where the package comes from.
pub const SOURCE: &str = "deb http://deb.debian.org/debian sid main";

/// A header tree the generator reads.
#[derive(Debug)]
pub struct HeaderSet {
    /// Directory holding `linux/` (and `asm/` or `<multiarch>/asm/`).
    pub include: PathBuf,
    /// How the preamble names the tree.
    pub description: String,
    /// `major.minor.sublevel` from `linux/version.h`.
    pub kernel: String,
    /// Whether `include/<multiarch>/asm` directories exist (Debian layout);
    /// otherwise the tree is one architecture's `make headers_install`.
    pub multiarch: bool,
}

/// Where downloads are cached: `$PERF_EVENT_CORE_CACHE`, else
/// `$XDG_CACHE_HOME/perf-event-core`, else `~/.cache/perf-event-core`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PERF_EVENT_CORE_CACHE") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| shell::root().join("target"));
    base.join("perf-event-core")
}

/// The pinned header set, fetched on first use.
pub fn pinned() -> Result<HeaderSet> {
    let dir = cache_dir().join(format!("{PACKAGE}_{VERSION}_all"));
    if !dir.join(".complete").is_file() {
        fetch(&dir)?;
    }
    let include = dir.join("usr/include");
    let kernel = kernel_version(&include)?;
    Ok(HeaderSet {
        include,
        description: format!("Debian {PACKAGE} {VERSION} (all), sha256 {SHA256}"),
        kernel,
        multiarch: true,
    })
}

/// A user-supplied tree: a `make headers_install` output (`DIR/include` or
/// `DIR` holding `linux/`), or an unpacked linux-libc-dev (`DIR/usr/include`).
pub fn local(dir: &Path) -> Result<HeaderSet> {
    let include = [
        dir.join("usr/include"),
        dir.join("include"),
        dir.to_path_buf(),
    ]
    .into_iter()
    .find(|d| d.join("linux/perf_event.h").is_file())
    .ok_or_else(|| {
        format!(
            "{} holds no linux/perf_event.h (looked in DIR/usr/include, DIR/include, DIR); \
                 pass the output directory of `make headers_install INSTALL_HDR_PATH=DIR`",
            dir.display()
        )
    })?;
    let kernel = kernel_version(&include)?;
    let multiarch = !include.join("asm").is_dir();
    Ok(HeaderSet {
        description: format!("local tree (--headers), kernel {kernel}"),
        include,
        kernel,
        multiarch,
    })
}

/// Reads `LINUX_VERSION_CODE` from `linux/version.h`.
fn kernel_version(include: &Path) -> Result<String> {
    let path = include.join("linux/version.h");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let code: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("#define LINUX_VERSION_CODE "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{} has no LINUX_VERSION_CODE", path.display()))?;
    Ok(format!(
        "{}.{}.{}",
        code >> 16,
        (code >> 8) & 0xff,
        code & 0xff
    ))
}

fn apt_options(apt: &Path) -> Vec<String> {
    vec![
        format!(
            "-oDir::Etc::SourceList={}",
            apt.join("sources.list").display()
        ),
        "-oDir::Etc::SourceParts=/dev/null".to_owned(),
        format!("-oDir::State::Lists={}", apt.join("lists").display()),
        format!("-oDir::Cache={}", apt.join("cache").display()),
        "-oAPT::Sandbox::User=root".to_owned(),
        "-qq".to_owned(),
    ]
}

/// Downloads, verifies and unpacks the pinned package into `dest`.
fn fetch(dest: &Path) -> Result {
    for tool in ["apt-get", "apt-cache", "dpkg-deb", "sha256sum"] {
        if !shell::have(tool) {
            return Err(format!(
                "fetching the pinned headers needs `{tool}` (a Debian or Ubuntu machine); \
                 elsewhere pass --headers DIR with an unpacked {PACKAGE}_{VERSION}_all.deb"
            ));
        }
    }
    shell::step(&format!(
        "fetching {PACKAGE} {VERSION} from Debian sid (private apt state)"
    ));
    let apt = cache_dir().join("apt-sid");
    for sub in ["lists/partial", "cache/archives/partial", "download"] {
        std::fs::create_dir_all(apt.join(sub)).map_err(|e| format!("{}: {e}", apt.display()))?;
    }
    std::fs::write(apt.join("sources.list"), format!("{SOURCE}\n")).map_err(|e| e.to_string())?;
    let opts = apt_options(&apt);
    run(Command::new("apt-get").args(&opts).arg("update"))?;
    let download = apt.join("download");
    let got = run(Command::new("apt-get")
        .args(&opts)
        .args(["download", &format!("{PACKAGE}={VERSION}")])
        .current_dir(&download));
    if got.is_err() {
        return Err(moved_on(&opts));
    }
    let deb = download.join(format!("{PACKAGE}_{VERSION}_all.deb"));
    let sum = output(Command::new("sha256sum").arg(&deb))?;
    if sum.split_whitespace().next() != Some(SHA256) {
        return Err(format!(
            "{} has sha256 {} but {SHA256} is pinned: refusing to use it",
            deb.display(),
            sum.split_whitespace().next().unwrap_or("?")
        ));
    }
    let partial = dest.with_file_name(format!("{PACKAGE}_{VERSION}_all.partial"));
    let _ = std::fs::remove_dir_all(&partial);
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&partial))?;
    std::fs::write(partial.join(".complete"), format!("{SHA256}\n")).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(&partial, dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let _ = std::fs::remove_file(&deb);
    Ok(())
}

/// The error when sid no longer carries the pinned version.
fn moved_on(opts: &[String]) -> String {
    let show =
        output(Command::new("apt-cache").args(opts).args(["show", PACKAGE])).unwrap_or_default();
    let field = |name: &str| {
        show.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| "?".to_owned())
    };
    format!(
        "Debian sid no longer has {PACKAGE} {VERSION} (sid drops old versions).\n\
         It now has {PACKAGE} {} with sha256 {}.\n\
         To move the pin: set VERSION and SHA256 in xtask/src/headers.rs to those values, \
         run `cargo xtask bindgen`, review `git diff src/sys` (new fields, changed sizes), \
         update the layout assertions and tests that name the kernel version, and commit.\n\
         Or generate from another tree: `cargo xtask bindgen --headers DIR`.",
        field("Version:"),
        field("SHA256:")
    )
}
