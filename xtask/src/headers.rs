//! The pinned header set: Debian's `linux-libc-dev` (architecture `all`),
//! which carries the UAPI headers of every architecture under
//! `usr/include/<multiarch>`. Fetched with apt against a private source list
//! and private state (the machine's apt configuration is not touched),
//! verified against the pinned SHA-256, and cached.

use crate::shell::{self, output, run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The package every pin names.
pub const PACKAGE: &str = "linux-libc-dev";

/// One exact `linux-libc-dev` from one Debian suite. Debian drops old
/// versions (sid at once, stable suites at point releases); when a pinned
/// one is gone, `fetch` says which version replaced it and how to move.
#[derive(Clone, Copy, Debug)]
pub struct Pin {
    /// Debian suite.
    pub suite: &'static str,
    /// Exact package version.
    pub version: &'static str,
    /// `all` (every architecture's headers) or one architecture.
    pub arch: &'static str,
    /// SHA-256 of the .deb.
    pub sha256: &'static str,
    /// The constant in this file to edit when moving the pin.
    pub constant: &'static str,
}

/// The header set the vendored bindings are generated from (Linux 7.2).
pub const SID: Pin = Pin {
    suite: "sid",
    version: "7.2.13-1",
    arch: "all",
    sha256: "8b33c2a408bbab537e753102dce181dc211007f64c1e2516065bc677f60d5d99",
    constant: "SID",
};

/// Debian 13 (trixie), Linux 6.12: a step of the ABI history.
pub const TRIXIE: Pin = Pin {
    suite: "trixie",
    version: "6.12.107-1",
    arch: "all",
    sha256: "dc68dd53c7356598d005866da0d19d7bd33af2a62971aced624cdf04492902b4",
    constant: "TRIXIE",
};

/// Debian 12 (bookworm), Linux 6.1: the oldest step of the ABI history.
/// Its package is per architecture (amd64 holds only x86_64's `asm/`).
pub const BOOKWORM: Pin = Pin {
    suite: "bookworm",
    version: "6.1.176-1",
    arch: "amd64",
    sha256: "8bb258735b9dffbb111da778ebdd024750878e435ffd9dfcadcb6762ede6b4cf",
    constant: "BOOKWORM",
};

impl Pin {
    fn deb(&self) -> String {
        format!("{PACKAGE}_{}_{}.deb", self.version, self.arch)
    }
}

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

/// The header set of the vendored bindings ([`SID`]), fetched on first use.
pub fn pinned() -> Result<HeaderSet> {
    fetch_pin(&SID)
}

/// A pinned header set, fetched on first use.
pub fn fetch_pin(pin: &Pin) -> Result<HeaderSet> {
    let dir = cache_dir().join(pin.deb().trim_end_matches(".deb"));
    if !dir.join(".complete").is_file() {
        fetch(pin, &dir)?;
    }
    let include = dir.join("usr/include");
    let kernel = kernel_version(&include)?;
    Ok(HeaderSet {
        include,
        description: format!(
            "Debian {PACKAGE} {} ({}), sha256 {}",
            pin.version, pin.arch, pin.sha256
        ),
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
        // Keep the parsed package cache (docker-clean images disable it).
        "-oDir::Cache::pkgcache=pkgcache.bin".to_owned(),
        "-oDir::Cache::srcpkgcache=srcpkgcache.bin".to_owned(),
        "-qq".to_owned(),
    ]
}

/// Downloads, verifies and unpacks a pinned package into `dest`.
fn fetch(pin: &Pin, dest: &Path) -> Result {
    for tool in ["apt-get", "apt-cache", "dpkg-deb", "sha256sum"] {
        if !shell::have(tool) {
            return Err(format!(
                "fetching the pinned headers needs `{tool}` (a Debian or Ubuntu machine); \
                 elsewhere pass --headers DIR with an unpacked {}",
                pin.deb()
            ));
        }
    }
    shell::step(&format!(
        "fetching {PACKAGE} {} from Debian {} (private apt state)",
        pin.version, pin.suite
    ));
    let apt = cache_dir().join(format!("apt-{}", pin.suite));
    for sub in ["lists/partial", "cache/archives/partial", "download"] {
        std::fs::create_dir_all(apt.join(sub)).map_err(|e| format!("{}: {e}", apt.display()))?;
    }
    let source = crate::debian::archives()?.line(pin.suite, &[])? + "\n";
    std::fs::write(apt.join("sources.list"), source).map_err(|e| e.to_string())?;
    let opts = apt_options(&apt);
    run(Command::new("apt-get").args(&opts).arg("update"))?;
    let download = apt.join("download");
    let got = run(Command::new("apt-get")
        .args(&opts)
        .args(["download", &format!("{PACKAGE}={}", pin.version)])
        .current_dir(&download));
    if got.is_err() {
        return Err(moved_on(pin, &opts));
    }
    let deb = download.join(pin.deb());
    let sum = output(Command::new("sha256sum").arg(&deb))?;
    if sum.split_whitespace().next() != Some(pin.sha256) {
        return Err(format!(
            "{} has sha256 {} but {} is pinned: refusing to use it",
            deb.display(),
            sum.split_whitespace().next().unwrap_or("?"),
            pin.sha256
        ));
    }
    let partial = dest.with_file_name(pin.deb().replace(".deb", ".partial"));
    let _ = std::fs::remove_dir_all(&partial);
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&partial))?;
    std::fs::write(partial.join(".complete"), format!("{}\n", pin.sha256))
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(&partial, dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let _ = std::fs::remove_file(&deb);
    Ok(())
}

/// The error when the suite no longer carries the pinned version.
fn moved_on(pin: &Pin, opts: &[String]) -> String {
    let show =
        output(Command::new("apt-cache").args(opts).args(["show", PACKAGE])).unwrap_or_default();
    let field = |name: &str| {
        show.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| "?".to_owned())
    };
    format!(
        "Debian {} no longer has {PACKAGE} {} (Debian drops old versions).\n\
         It now has {PACKAGE} {} with sha256 {}.\n\
         To move the pin: set version and sha256 of `{}` in xtask/src/headers.rs to those \
         values, run `cargo xtask bindgen` and `cargo xtask abi`, review `git diff` \
         (new fields, changed sizes, abi-tests/ABI-HISTORY.md), update the tests that name \
         the kernel version, and commit.\n\
         Or generate from another tree: `cargo xtask bindgen --headers DIR`.",
        pin.suite,
        pin.version,
        field("Version:"),
        field("SHA256:"),
        pin.constant
    )
}
