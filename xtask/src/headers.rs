//! The pinned header set: Debian's `linux-libc-dev` (architecture `all`),
//! which carries the UAPI headers of every architecture under
//! `usr/include/<multiarch>`. Fetched from its pool path in the machine's
//! Debian archive (no apt, no index), verified against the pinned size and
//! SHA-256, and cached. A pin the archive no longer serves, or an archive
//! that cannot be reached, gives an error starting with [`UNAVAILABLE`]:
//! CI reports the steps that need the headers as left out, not failed.

use crate::archive::{index::Release, Fetcher, Kind, Want};
use crate::shell::{self, run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How an error of [`fetch_pin`] begins when the archive, not the
/// project, is the cause.
pub const UNAVAILABLE: &str = "unavailable: archive";

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
    /// Pool path below the archive URI.
    pub filename: &'static str,
    /// Size of the .deb in bytes.
    pub size: u64,
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
    filename: "pool/main/l/linux/linux-libc-dev_7.2.13-1_all.deb",
    size: 2034488,
    sha256: "8b33c2a408bbab537e753102dce181dc211007f64c1e2516065bc677f60d5d99",
    constant: "SID",
};

/// Debian 13 (trixie), Linux 6.12: a step of the ABI history.
pub const TRIXIE: Pin = Pin {
    suite: "trixie",
    version: "6.12.107-1",
    arch: "all",
    filename: "pool/main/l/linux/linux-libc-dev_6.12.107-1_all.deb",
    size: 2919204,
    sha256: "dc68dd53c7356598d005866da0d19d7bd33af2a62971aced624cdf04492902b4",
    constant: "TRIXIE",
};

/// Debian 12 (bookworm), Linux 6.1: the oldest step of the ABI history.
/// Its package is per architecture (amd64 holds only x86_64's `asm/`).
pub const BOOKWORM: Pin = Pin {
    suite: "bookworm",
    version: "6.1.176-1",
    arch: "amd64",
    filename: "pool/main/l/linux/linux-libc-dev_6.1.176-1_amd64.deb",
    size: 2303828,
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

/// Downloads, verifies and unpacks a pinned package into `dest`.
fn fetch(pin: &Pin, dest: &Path) -> Result {
    for tool in ["curl", "dpkg-deb", "sha256sum"] {
        if !shell::have(tool) {
            return Err(format!(
                "fetching the pinned headers needs `{tool}`; elsewhere pass --headers DIR \
                 with an unpacked {}",
                pin.deb()
            ));
        }
    }
    shell::step(&format!(
        "fetching {PACKAGE} {} from Debian {} ({})",
        pin.version, pin.suite, pin.filename
    ));
    let archives = crate::debian::archives()?;
    let base = archives.uri(pin.suite)?;
    let url = format!("{base}/{}", pin.filename);
    let download = cache_dir().join("download");
    std::fs::create_dir_all(&download).map_err(|e| format!("{}: {e}", download.display()))?;
    let deb = download.join(pin.deb());
    let fetcher = Fetcher::default();
    let want = Want {
        size: Some(pin.size),
        sha256: pin.sha256,
    };
    if let Err(failure) = fetcher.get(&url, &deb, Some(want)) {
        return Err(if failure.kind == Kind::NotFound {
            moved_on(pin, base, &fetcher, &failure.to_string())
        } else {
            format!("{UNAVAILABLE} ({failure})")
        });
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

/// The error when the suite no longer carries the pinned version: what its
/// signed index has now, and how to move the pin.
fn moved_on(pin: &Pin, base: &str, fetcher: &Fetcher, failure: &str) -> String {
    let dir = cache_dir().join("index-headers").join(pin.suite);
    let arch = if pin.arch == "all" { "amd64" } else { pin.arch };
    let now = Release::fetch(
        fetcher,
        base,
        pin.suite,
        &crate::archive::debian_keyring(),
        &dir,
    )
    .and_then(|r| r.packages(fetcher, arch, &dir))
    .map(|p| {
        p.newest(PACKAGE).map_or_else(
            || format!("its index lists no {PACKAGE}"),
            |s| {
                format!(
                    "it now has {PACKAGE} {}: {} ({} bytes, sha256 {})",
                    s.version(),
                    s.field("Filename").unwrap_or("?"),
                    s.field("Size").unwrap_or("?"),
                    s.field("SHA256").unwrap_or("?")
                )
            },
        )
    })
    .unwrap_or_else(|e| format!("its index could not be read either: {e}"));
    format!(
        "{UNAVAILABLE} ({failure}): Debian {} no longer has {PACKAGE} {} (Debian drops old \
         versions); {now}.\n\
         To move the pin: set version, filename, size and sha256 of `{}` in \
         xtask/src/headers.rs to those values, run `cargo xtask bindgen` and `cargo xtask abi`, \
         review `git diff` (new fields, changed sizes, abi-tests/ABI-HISTORY.md), update the \
         tests that name the kernel version, and commit.\n\
         Or generate from another tree: `cargo xtask bindgen --headers DIR`.",
        pin.suite, pin.version, pin.constant
    )
}
