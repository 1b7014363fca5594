//! Files from Debian's archive, fetched without apt: each pinned package by
//! its pool path and verified against its pinned size and SHA-256; indexes
//! (`InRelease`, `Packages`) only where something must be discovered, their
//! signature checked with `gpgv` against the machine's Debian keyring and
//! every index file against the hash the signed `Release` gives. Failures
//! are values that name the URL and what went wrong (HTTP status, curl's
//! error, wrong size, wrong hash), so a caller can drop just what needed
//! that file. The archive URIs are the machine's own (`crate::debian`).

pub mod index;
pub mod version;

use crate::shell::{self, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What went wrong with one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// HTTP 404 or 410: the archive does not have it (any more).
    NotFound,
    /// Another HTTP error status.
    Http,
    /// No answer: connection refused, DNS, timeout, reset (curl's error).
    Network,
    /// The file arrived with another size than the signed index or the pin
    /// says (a mirror in the middle of a sync, a truncated transfer).
    Size,
    /// The file arrived with another SHA-256.
    Hash,
    /// `InRelease` failed `gpgv`.
    Signature,
    /// The signed index does not list what was looked for.
    NotListed,
    /// `--offline` and not in the cache.
    Offline,
}

/// One file that could not be had, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The URL (or, for [`Kind::Offline`], what was looked for).
    pub url: String,
    /// The kind of failure.
    pub kind: Kind,
    /// The specifics: status, curl's message, sizes, hashes.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.detail)
    }
}

impl Failure {
    /// A failure of `kind` for `url`.
    pub fn new(url: &str, kind: Kind, detail: impl Into<String>) -> Self {
        Failure {
            url: url.to_owned(),
            kind,
            detail: detail.into(),
        }
    }
}

/// What a downloaded file must be.
#[derive(Clone, Copy, Debug)]
pub struct Want<'a> {
    /// Size in bytes, when known.
    pub size: Option<u64>,
    /// Lowercase hex SHA-256.
    pub sha256: &'a str,
}

/// How files are fetched: attempts, the wait between them, and whether the
/// network may be used at all.
#[derive(Clone, Debug)]
pub struct Fetcher {
    /// Attempts per file for failures that may pass (network, HTTP 5xx,
    /// wrong size or hash); a 404 is not retried.
    pub attempts: u32,
    /// The wait after the first failed attempt; doubled after each.
    pub delay: Duration,
    /// Per-transfer limit.
    pub timeout: Duration,
    /// `--offline`: every fetch fails with [`Kind::Offline`].
    pub offline: bool,
}

impl Default for Fetcher {
    fn default() -> Self {
        Fetcher {
            attempts: 3,
            delay: Duration::from_secs(2),
            timeout: Duration::from_secs(900),
            offline: false,
        }
    }
}

impl Fetcher {
    /// Downloads `url` to `dest`, verified against `want` when given (a
    /// failed check removes the file: nothing unverified is left in place).
    pub fn get(
        &self,
        url: &str,
        dest: &Path,
        want: Option<Want<'_>>,
    ) -> std::result::Result<(), Failure> {
        if self.offline {
            return Err(Failure::new(url, Kind::Offline, "not fetched: --offline"));
        }
        if !shell::have("curl") {
            return Err(Failure::new(
                url,
                Kind::Network,
                "curl is not installed (apt-get install curl)",
            ));
        }
        let partial = dest.with_extension("partial");
        let mut delay = self.delay;
        let mut last = None;
        for attempt in 1..=self.attempts.max(1) {
            if attempt > 1 {
                std::thread::sleep(delay);
                delay *= 2;
            }
            let _ = std::fs::remove_file(&partial);
            let failure = match self.transfer(url, &partial) {
                Err(f) => f,
                Ok(()) => match want.map(|w| check(&partial, url, w)) {
                    Some(Err(f)) => f,
                    _ => {
                        std::fs::rename(&partial, dest).map_err(|e| {
                            Failure::new(url, Kind::Network, format!("{}: {e}", dest.display()))
                        })?;
                        return Ok(());
                    }
                },
            };
            let _ = std::fs::remove_file(&partial);
            let final_kind = failure.kind == Kind::NotFound;
            last = Some(failure);
            if final_kind {
                break;
            }
        }
        let mut failure = last.expect("at least one attempt");
        if failure.kind != Kind::NotFound && self.attempts > 1 {
            failure
                .detail
                .push_str(&format!(" ({} attempts)", self.attempts));
        }
        Err(failure)
    }

    /// One curl transfer of `url` into `dest`.
    fn transfer(&self, url: &str, dest: &Path) -> std::result::Result<(), Failure> {
        let out = Command::new("curl")
            .args(["--silent", "--show-error", "--location", "--globoff"])
            .args(["--connect-timeout", "20", "--max-time"])
            .arg(self.timeout.as_secs().to_string())
            .args(["--write-out", "%{http_code}", "--output"])
            .arg(dest)
            .arg(url)
            .output()
            .map_err(|e| Failure::new(url, Kind::Network, format!("cannot start curl: {e}")))?;
        let status: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0);
        let error = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        match status {
            200..=299 if out.status.success() => Ok(()),
            404 | 410 => Err(Failure::new(url, Kind::NotFound, format!("HTTP {status}"))),
            0 => Err(Failure::new(
                url,
                Kind::Network,
                if error.is_empty() {
                    format!("curl {}", out.status)
                } else {
                    error
                },
            )),
            _ if !out.status.success() && (200..300).contains(&status) => Err(Failure::new(
                url,
                Kind::Network,
                format!("HTTP {status}, then {error}"),
            )),
            _ => Err(Failure::new(url, Kind::Http, format!("HTTP {status}"))),
        }
    }
}

/// Checks a downloaded file's size and hash.
fn check(file: &Path, url: &str, want: Want<'_>) -> std::result::Result<(), Failure> {
    let got = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    if let Some(size) = want.size {
        if got != size {
            return Err(Failure::new(
                url,
                Kind::Size,
                format!(
                    "{} bytes where {} were expected",
                    thousands(got),
                    thousands(size)
                ),
            ));
        }
    }
    let hash = sha256_of(file).map_err(|e| Failure::new(url, Kind::Hash, e))?;
    if hash != want.sha256 {
        return Err(Failure::new(
            url,
            Kind::Hash,
            format!("SHA-256 {hash} where {} was expected", want.sha256),
        ));
    }
    Ok(())
}

/// `9387120` as `9,387,120`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The SHA-256 of a file, as lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String> {
    let sum = shell::output(Command::new("sha256sum").arg(path))?;
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

/// The keyring `InRelease` files are checked against: the machine's Debian
/// archive keyring (package debian-archive-keyring).
pub fn debian_keyring() -> PathBuf {
    PathBuf::from("/usr/share/keyrings/debian-archive-keyring.gpg")
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_digits() {
        assert_eq!(super::thousands(9_387_120), "9,387,120");
        assert_eq!(super::thousands(118), "118");
        assert_eq!(super::thousands(1000), "1,000");
    }
}
