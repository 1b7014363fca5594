//! A private apt: its own source list, package lists and download cache under
//! the lab's cache directory, so fetching Debian packages of any architecture
//! never touches the machine's apt configuration, state or foreign
//! architectures (no `dpkg --add-architecture` is needed to *download*).

use crate::shell::{self, output, run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One private apt state directory.
pub struct PrivateApt {
    dir: PathBuf,
    opts: Vec<String>,
}

/// Index targets the machine's apt.conf.d may enable that the lab never needs
/// (AppStream metadata and icons): skipping them saves tens of megabytes.
const SKIPPED_INDEXES: &[&str] = &[
    "DEP-11",
    "DEP-11-icons-small",
    "DEP-11-icons",
    "DEP-11-icons-hidpi",
];

impl PrivateApt {
    /// A private apt in `dir` reading `sources` (one-line `deb` format) for
    /// the given Debian architectures.
    pub fn new(dir: &Path, sources: &[String], arches: &[&str]) -> Result<Self> {
        for tool in ["apt-get", "apt-cache", "dpkg-deb", "sha256sum"] {
            if !shell::have(tool) {
                return Err(format!(
                    "the lab fetches Debian kernels with `{tool}`, which is missing: run \
                     `cargo xtask lab` on Debian or Ubuntu"
                ));
            }
        }
        for sub in ["lists/partial", "cache/archives/partial", "download"] {
            std::fs::create_dir_all(dir.join(sub))
                .map_err(|e| format!("cannot create {}: {e}", dir.join(sub).display()))?;
        }
        let list = dir.join("sources.list");
        std::fs::write(&list, sources.join("\n") + "\n")
            .map_err(|e| format!("cannot write {}: {e}", list.display()))?;
        let mut opts = vec![
            format!("-oDir::Etc::SourceList={}", list.display()),
            "-oDir::Etc::SourceParts=/dev/null".to_owned(),
            format!("-oDir::State::Lists={}", dir.join("lists").display()),
            format!("-oDir::Cache={}", dir.join("cache").display()),
            "-oDir::State::status=/dev/null".to_owned(),
            "-oAPT::Sandbox::User=root".to_owned(),
            // Keep the parsed package cache next to the lists: Docker-style
            // images (docker-clean) set these to "", and then every apt call
            // re-parses hundreds of megabytes of lists (minutes on a busy
            // two-core machine).
            "-oDir::Cache::pkgcache=pkgcache.bin".to_owned(),
            "-oDir::Cache::srcpkgcache=srcpkgcache.bin".to_owned(),
            format!("-oAPT::Architecture={}", arches[0]),
        ];
        for arch in arches {
            opts.push(format!("-oAPT::Architectures::={arch}"));
        }
        for target in SKIPPED_INDEXES {
            opts.push(format!(
                "-oAcquire::IndexTargets::deb::{target}::DefaultEnabled=false"
            ));
        }
        opts.push("-qq".to_owned());
        Ok(Self {
            dir: dir.to_path_buf(),
            opts,
        })
    }

    /// `apt-get update` of the private lists.
    pub fn update(&self) -> Result {
        run(Command::new("apt-get").args(&self.opts).arg("update"))
            .map_err(|e| format!("{e}\nDebian's archive could not be reached: check the network"))
    }

    /// `apt-cache show PACKAGE` fields of every version, newest first.
    pub fn show(&self, package: &str) -> Result<Vec<Stanza>> {
        let text = output(
            Command::new("apt-cache")
                .args(&self.opts)
                .args(["show", package]),
        )?;
        Ok(text
            .split("\n\n")
            .filter(|s| !s.trim().is_empty())
            .map(|s| Stanza(s.to_owned()))
            .collect())
    }

    /// Downloads every `name:arch=version` of `packages` in one apt call
    /// into the download directory (left there; see [`PrivateApt::deb`]).
    pub fn download_all(&self, packages: &[&str]) -> Result {
        run(Command::new("apt-get")
            .args(&self.opts)
            .arg("download")
            .args(packages)
            .current_dir(self.dir.join("download")))
    }

    /// The downloaded .deb of `name` `version` for Debian architecture
    /// `arch` (apt's file name, `:` of an epoch as `%3a`), verified.
    pub fn deb(&self, name: &str, version: &str, arch: &str, sha256: &str) -> Result<PathBuf> {
        let deb = self
            .dir
            .join("download")
            .join(format!("{name}_{}_{arch}.deb", version.replace(':', "%3a")));
        if !deb.is_file() {
            return Err(format!("apt-get download left no {}", deb.display()));
        }
        self.verify(&deb, Some(sha256))?;
        Ok(deb)
    }

    fn verify(&self, deb: &Path, sha256: Option<&str>) -> Result {
        if let Some(want) = sha256 {
            let got = sha256_of(deb)?;
            if got != want {
                let _ = std::fs::remove_file(deb);
                return Err(format!(
                    "{} has sha256 {got} but {want} is pinned: refusing to use it \
                     (rerun; if it persists, the pin is wrong)",
                    deb.display(),
                ));
            }
        }
        Ok(())
    }
}

/// One `apt-cache show` record.
pub struct Stanza(String);

impl Stanza {
    /// The value of a field (`Version`, `Depends`, `SHA256`, ...).
    pub fn field(&self, name: &str) -> Option<&str> {
        let prefix = format!("{name}: ");
        self.0
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .map(str::trim)
    }
}

/// The SHA-256 of a file, as lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String> {
    let sum = output(Command::new("sha256sum").arg(path))?;
    sum.split_whitespace()
        .next()
        .map(str::to_owned)
        .ok_or_else(|| format!("sha256sum printed nothing for {}", path.display()))
}

/// Extracts the members of a .deb whose paths match `pattern` (a tar
/// wildcard such as `./boot/vmlinuz-*`) into `dest`, without unpacking the
/// rest (a kernel package carries hundreds of megabytes of modules).
pub fn extract(deb: &Path, pattern: &str, dest: &Path) -> Result {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let mut dpkg = Command::new("dpkg-deb")
        .arg("--fsys-tarfile")
        .arg(deb)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start dpkg-deb: {e}"))?;
    let tar_input = dpkg.stdout.take().expect("piped stdout");
    let tar = Command::new("tar")
        .args(["-x", "--wildcards", "-C"])
        .arg(dest)
        .arg(pattern)
        .stdin(tar_input)
        .status();
    let dpkg_status = dpkg.wait().map_err(|e| e.to_string())?;
    let tar_status = tar.map_err(|e| format!("cannot start tar: {e}"))?;
    if tar_status.success() && dpkg_status.success() {
        Ok(())
    } else {
        Err(format!(
            "extracting {pattern} from {} failed (dpkg-deb {dpkg_status}, tar {tar_status})",
            deb.display()
        ))
    }
}
