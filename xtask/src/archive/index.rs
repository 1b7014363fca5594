//! Signed indexes of one suite: `dists/<suite>/InRelease`, checked with
//! `gpgv`, and the `main/binary-<arch>/Packages` it lists, checked against
//! the size and SHA-256 the signed text gives. A stale index file (a mirror
//! serving a `Packages.xz` older than its `Release`) is retried, then looked
//! for by hash, then as `Packages.gz`, before the suite's architecture is
//! given up, and the failure says which URL answered what.
//!
//! `Valid-Until` is not enforced: the archive a lab machine reaches may be a
//! frozen snapshot whose dates have passed; the signature and the hashes
//! still tie every byte to Debian's keys.

use super::{Failure, Fetcher, Kind, Want};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The verified text of one suite's `InRelease`.
pub struct Release {
    /// The archive URI (`.../debian`).
    pub base: String,
    /// The suite (`trixie`).
    pub suite: String,
    /// `(path, size, sha256)` of the `SHA256:` section.
    files: Vec<(String, u64, String)>,
}

impl Release {
    /// Fetches `dists/<suite>/InRelease` into `dir` and checks its signature
    /// against `keyring`; only the signed text is read.
    pub fn fetch(
        fetcher: &Fetcher,
        base: &str,
        suite: &str,
        keyring: &Path,
        dir: &Path,
    ) -> Result<Release, Failure> {
        let url = format!("{base}/dists/{suite}/InRelease");
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::new(&url, Kind::Network, format!("{}: {e}", dir.display())))?;
        let raw = dir.join("InRelease");
        fetcher.get(&url, &raw, None)?;
        let signed = dir.join("Release.verified");
        let _ = std::fs::remove_file(&signed);
        let out = Command::new("gpgv")
            .arg("--keyring")
            .arg(keyring)
            .arg("--output")
            .arg(&signed)
            .arg(&raw)
            .output()
            .map_err(|e| Failure::new(&url, Kind::Signature, format!("cannot start gpgv: {e}")))?;
        if !out.status.success() {
            let _ = std::fs::remove_file(&signed);
            return Err(Failure::new(
                &url,
                Kind::Signature,
                format!(
                    "gpgv against {} rejected it ({}): {}",
                    keyring.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
        let text = std::fs::read_to_string(&signed)
            .map_err(|e| Failure::new(&url, Kind::Signature, e.to_string()))?;
        Ok(Release {
            base: base.to_owned(),
            suite: suite.to_owned(),
            files: parse_sha256(&text),
        })
    }

    /// `(size, sha256)` the signed text gives for `path` (relative to
    /// `dists/<suite>/`).
    pub fn file(&self, path: &str) -> Option<(u64, &str)> {
        self.files
            .iter()
            .find(|(p, _, _)| p == path)
            .map(|(_, size, hash)| (*size, hash.as_str()))
    }

    /// The `main` packages of `arch`, fetched into `dir` and verified.
    pub fn packages(&self, fetcher: &Fetcher, arch: &str, dir: &Path) -> Result<Packages, Failure> {
        let dists = format!("{}/dists/{}", self.base, self.suite);
        let mut tried: Vec<Failure> = Vec::new();
        for (name, unpack) in [("Packages.xz", "xz"), ("Packages.gz", "gzip")] {
            let path = format!("main/binary-{arch}/{name}");
            let Some((size, sha256)) = self.file(&path) else {
                continue;
            };
            let want = Want {
                size: Some(size),
                sha256,
            };
            let file = dir.join(format!("{}-{arch}-{name}", self.suite));
            let by_hash = format!("{dists}/main/binary-{arch}/by-hash/SHA256/{sha256}");
            for url in [format!("{dists}/{path}"), by_hash] {
                match fetcher.get(&url, &file, Some(want)) {
                    Ok(()) => return Packages::unpack(&file, unpack, &url),
                    Err(mut f) => {
                        if f.kind == Kind::Size || f.kind == Kind::Hash {
                            f.detail
                                .push_str(" (the signed Release lists this file so)");
                        }
                        tried.push(f)
                    }
                }
            }
        }
        let Some(first) = tried.first().cloned() else {
            return Err(Failure::new(
                &format!("{dists}/InRelease"),
                Kind::NotListed,
                format!("lists no main/binary-{arch}/Packages.xz or .gz"),
            ));
        };
        let mut failure = first;
        if tried.len() > 1 {
            let rest: Vec<String> = tried[1..].iter().map(Failure::to_string).collect();
            failure
                .detail
                .push_str(&format!("; also tried {}", rest.join("; ")));
        }
        Err(failure)
    }
}

/// The `SHA256:` section of a Release file.
fn parse_sha256(text: &str) -> Vec<(String, u64, String)> {
    let mut files = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if !line.starts_with(' ') {
            inside = line.trim_end() == "SHA256:";
            continue;
        }
        if !inside {
            continue;
        }
        let mut words = line.split_whitespace();
        if let (Some(hash), Some(size), Some(path)) = (words.next(), words.next(), words.next()) {
            if let Ok(size) = size.parse() {
                files.push((path.to_owned(), size, hash.to_owned()));
            }
        }
    }
    files
}

/// One package record of a `Packages` index.
#[derive(Clone, Debug)]
pub struct Stanza(String);

impl Stanza {
    /// The value of a one-line field (`Package`, `Version`, `Filename`...).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.0.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k == name).then(|| v.trim())
        })
    }

    /// `Package`.
    pub fn package(&self) -> &str {
        self.field("Package").unwrap_or_default()
    }

    /// `Version`.
    pub fn version(&self) -> &str {
        self.field("Version").unwrap_or_default()
    }
}

/// A verified `Packages` index.
pub struct Packages {
    stanzas: Vec<Stanza>,
    /// Where it came from.
    pub url: String,
}

impl Packages {
    fn unpack(file: &Path, tool: &str, url: &str) -> Result<Packages, Failure> {
        let out = Command::new(tool)
            .arg("-dc")
            .arg(file)
            .output()
            .map_err(|e| Failure::new(url, Kind::Hash, format!("cannot start {tool}: {e}")))?;
        if !out.status.success() {
            return Err(Failure::new(
                url,
                Kind::Hash,
                format!(
                    "{tool} -dc failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ),
            ));
        }
        Ok(Packages::parse(&String::from_utf8_lossy(&out.stdout), url))
    }

    /// Parses the text of a `Packages` file.
    pub fn parse(text: &str, url: &str) -> Packages {
        Packages {
            stanzas: text
                .split("\n\n")
                .filter(|s| !s.trim().is_empty())
                .map(|s| Stanza(s.to_owned()))
                .collect(),
            url: url.to_owned(),
        }
    }

    /// Every record of `package`.
    pub fn records<'a>(&'a self, package: &'a str) -> impl Iterator<Item = &'a Stanza> + 'a {
        self.stanzas.iter().filter(move |s| s.package() == package)
    }

    /// The record of `package` at its newest version.
    pub fn newest(&self, package: &str) -> Option<&Stanza> {
        self.newest_matching(|p| p == package)
    }

    /// The record with the newest version among the packages whose name
    /// `matches`.
    pub fn newest_matching(&self, matches: impl Fn(&str) -> bool) -> Option<&Stanza> {
        self.newest_where(|s| matches(s.package()))
    }

    /// The record with the newest version among those that pass `keep`.
    pub fn newest_where(&self, keep: impl Fn(&Stanza) -> bool) -> Option<&Stanza> {
        self.stanzas
            .iter()
            .filter(|s| keep(s))
            .max_by(|a, b| super::version::compare(a.version(), b.version()))
    }
}

/// `*` in `pattern` matches a run of characters without `-` (one `*` at
/// most: `linux-image-6.1.0-*-amd64` takes `56` but not `56-cloud`).
pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() > head.len() + tail.len()
                && name.starts_with(head)
                && name.ends_with(tail)
                && !name[head.len()..name.len() - tail.len()].contains('-')
        }
    }
}

/// Where a suite's verified index files are kept.
pub fn dir(cache: &Path, suite: &str) -> PathBuf {
    cache.join("index").join(suite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_sha256_section_and_globs() {
        let text = "Suite: trixie\nMD5Sum:\n 576c 9387120 main/binary-riscv64/Packages.xz\n\
                    SHA256:\n f602 9387120 main/binary-riscv64/Packages.xz\n \
                    ec98 118 main/binary-riscv64/Release\n";
        let files = parse_sha256(text);
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[0],
            (
                "main/binary-riscv64/Packages.xz".into(),
                9_387_120,
                "f602".into()
            )
        );
        assert!(glob(
            "linux-image-6.1.0-*-amd64",
            "linux-image-6.1.0-56-amd64"
        ));
        assert!(!glob(
            "linux-image-6.1.0-*-amd64",
            "linux-image-6.1.0-56-cloud-amd64x"
        ));
        assert!(glob("busybox-static", "busybox-static"));
    }

    #[test]
    fn newest_of_a_series() {
        let p = Packages::parse(
            "Package: linux-image-6.1.0-55-amd64\nVersion: 6.1.190-1\n\n\
             Package: linux-image-6.1.0-56-amd64\nVersion: 6.1.192-2\n\n\
             Package: linux-image-6.12.117+deb12-amd64\nVersion: 6.12.117-1~deb12u1\n",
            "x",
        );
        let n = p
            .newest_matching(|n| glob("linux-image-6.1.0-*-amd64", n))
            .unwrap();
        assert_eq!(n.version(), "6.1.192-2");
    }
}
