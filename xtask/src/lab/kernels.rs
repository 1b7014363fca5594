//! Debian kernel images and the static busybox the guests boot, fetched
//! without apt (see `crate::archive`) into a cache addressed by content.
//!
//! - A pin (`pins.rs`) is downloaded from its pool path and verified against
//!   its size and SHA-256: no index is needed.
//! - A pin Debian no longer serves (HTTP 404) is replaced by the newest
//!   version of its package series in the suite's signed index, verified
//!   against the index's hash and reported as stale (`--update-pins`
//!   rewrites `pins.rs`).
//! - Sid's newest kernel is discovered in sid's signed index (at most once a
//!   day; `--offline` uses the last one found).
//! - Whatever cannot be had (an index of the wrong size, a 404, a truncated
//!   or mis-hashed .deb, no network) is retried, then costs only the guests
//!   that need it: they are returned as [`Unavailable`] with the URL and the
//!   error. Nothing is unpacked before its hash matched.
//!
//! The cache: `deb_cache.rs`; `<cache>/lab/names/` records which package a
//! replaced pin or sid's newest kernel resolved to (for `--offline`).

use super::deb_cache::{cached, content_dir, in_parallel, unpack};
use super::guests::Arch;
use super::pins::{Pin, IMAGE};
use crate::archive::index::{self, Packages, Release, Stanza};
use crate::archive::{self, Failure, Fetcher, Kind, Want};
use crate::debian::Archives;
use crate::headers;
use crate::shell::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long the discovered newest kernel is trusted before sid is asked again.
const NEWEST_TTL: Duration = Duration::from_secs(24 * 3600);

/// A kernel image ready to boot.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Guest architecture.
    pub arch: Arch,
    /// `major.minor`, e.g. `6.12`.
    pub series: String,
    /// `(major, minor)` for ordering.
    pub order: (u32, u32),
    /// Debian package and version it came from.
    pub package: String,
    /// Package version.
    pub version: String,
    /// The `vmlinuz` file.
    pub image: PathBuf,
    /// Whether this is sid's newest kernel rather than a pinned one.
    pub newest: bool,
}

/// A kernel the run has to do without, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// Guest architecture.
    pub arch: Arch,
    /// Kernel `major.minor`, or `newest` when sid's could not be found.
    pub series: String,
    /// Whether it is sid's newest kernel.
    pub newest: bool,
    /// The URL and what went wrong.
    pub why: String,
}

/// Kernels and busybox binaries for every architecture.
pub struct Fetched {
    /// Every kernel, pinned ones first.
    pub kernels: Vec<Kernel>,
    /// Static busybox per architecture.
    pub busybox: Vec<(Arch, PathBuf)>,
    /// The kernels that could not be had.
    pub unavailable: Vec<Unavailable>,
    /// Pins Debian has moved on from, and what replaced them.
    pub stale: Vec<String>,
}

/// Where files come from and go.
pub struct Source {
    /// The machine's archive URIs.
    pub archives: Archives,
    /// The keyring `InRelease` files are checked against.
    pub keyring: PathBuf,
    /// Transfers: attempts, timeouts, `--offline`.
    pub fetcher: Fetcher,
    /// The lab's cache directory.
    pub cache: PathBuf,
}

impl Source {
    /// The machine's archives and keyring, the default cache.
    pub fn machine(offline: bool) -> Result<Source> {
        Ok(Source {
            archives: crate::debian::archives()?,
            keyring: archive::debian_keyring(),
            fetcher: Fetcher {
                offline,
                ..Fetcher::default()
            },
            cache: lab_cache(),
        })
    }
}

/// The lab's cache directory.
pub fn lab_cache() -> PathBuf {
    headers::cache_dir().join("lab")
}

/// One package to fetch: a pin, or a record of a signed index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Remote {
    pub(super) suite: String,
    pub(super) package: String,
    pub(super) version: String,
    pub(super) filename: String,
    pub(super) size: u64,
    pub(super) sha256: String,
    pub(super) member: String,
}

impl Remote {
    fn of_pin(pin: &Pin) -> Remote {
        Remote {
            suite: pin.suite.to_owned(),
            package: pin.package.to_owned(),
            version: pin.version.to_owned(),
            filename: pin.filename.to_owned(),
            size: pin.size,
            sha256: pin.sha256.to_owned(),
            member: pin.member.to_owned(),
        }
    }

    pub(super) fn of_stanza(
        suite: &str,
        s: &Stanza,
        member: &str,
    ) -> std::result::Result<Remote, String> {
        let field = |name: &str| {
            s.field(name)
                .map(str::to_owned)
                .ok_or_else(|| format!("{suite}'s record of {} has no {name}", s.package()))
        };
        Ok(Remote {
            suite: suite.to_owned(),
            package: s.package().to_owned(),
            version: s.version().to_owned(),
            filename: field("Filename")?,
            size: field("Size")?
                .parse()
                .map_err(|_| format!("{suite}'s record of {} has a bad Size", s.package()))?,
            sha256: field("SHA256")?,
            member: member.to_owned(),
        })
    }

    /// `package version filename size sha256 member`, one line.
    fn note(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}\n",
            self.suite,
            self.package,
            self.version,
            self.filename,
            self.size,
            self.sha256,
            self.member
        )
    }

    fn from_note(text: &str) -> Option<Remote> {
        let f: Vec<&str> = text.split_whitespace().collect();
        let [suite, package, version, filename, size, sha256, member] = f[..] else {
            return None;
        };
        Some(Remote {
            suite: suite.to_owned(),
            package: package.to_owned(),
            version: version.to_owned(),
            filename: filename.to_owned(),
            size: size.parse().ok()?,
            sha256: sha256.to_owned(),
            member: member.to_owned(),
        })
    }
}

/// Signed indexes fetched so far (and failures, so a broken index is asked
/// for once per run).
#[derive(Default)]
pub(super) struct Indexes {
    releases: HashMap<String, std::result::Result<Arc<Release>, Failure>>,
    packages: HashMap<(String, String), std::result::Result<Arc<Packages>, Failure>>,
}

/// The one fetcher of a run: source, indexes, notes for the report.
pub(super) struct Run<'a> {
    pub(super) source: &'a Source,
    pub(super) indexes: Mutex<Indexes>,
    pub(super) stale: Mutex<Vec<String>>,
}

impl Run<'_> {
    /// The verified `Packages` of `suite` for `arch`.
    pub(super) fn packages(
        &self,
        suite: &str,
        arch: &str,
    ) -> std::result::Result<Arc<Packages>, Failure> {
        let mut idx = self.indexes.lock().expect("no panic while holding it");
        let key = (suite.to_owned(), arch.to_owned());
        if let Some(known) = idx.packages.get(&key) {
            return known.clone();
        }
        let dir = index::dir(&self.source.cache, suite);
        let base = self
            .source
            .archives
            .uri(suite)
            .map_err(|e| Failure::new(suite, Kind::Network, e))?
            .to_owned();
        let release = idx
            .releases
            .entry(suite.to_owned())
            .or_insert_with(|| {
                crate::shell::step(&format!("fetching the signed index of {suite}"));
                Release::fetch(
                    &self.source.fetcher,
                    &base,
                    suite,
                    &self.source.keyring,
                    &dir,
                )
                .map(Arc::new)
            })
            .clone();
        let packages = release.and_then(|r| {
            crate::shell::step(&format!("fetching {suite}'s {arch} package index"));
            r.packages(&self.source.fetcher, arch, &dir).map(Arc::new)
        });
        idx.packages.insert(key, packages.clone());
        packages
    }

    /// The file a pin contributes, and the package and version it came
    /// from: from the cache, the pool, or (the pin gone) the newest of its
    /// series.
    fn pinned(&self, pin: &Pin) -> std::result::Result<(PathBuf, String, String), String> {
        let cache = &self.source.cache;
        let pinned = |file| (file, pin.package.to_owned(), pin.version.to_owned());
        if let Some(file) = cached(cache, pin.sha256) {
            return Ok(pinned(file));
        }
        let note = cache.join("names").join(format!(
            "stale-{}_{}_{}",
            pin.package,
            pin.version.replace(':', "%3a"),
            pin.arch.debian()
        ));
        let replaced = std::fs::read_to_string(&note)
            .ok()
            .and_then(|t| Remote::from_note(&t));
        if let Some(file) = replaced
            .as_ref()
            .and_then(|r| cached(cache, &r.sha256).map(|f| (r, f)))
            .map(|(r, f)| {
                self.report_stale(pin, r);
                (f, r.package.clone(), r.version.clone())
            })
        {
            return Ok(file);
        }
        let failure = match self.get(&Remote::of_pin(pin)) {
            Ok(file) => return Ok(pinned(file)),
            Err(f) => f,
        };
        if failure.kind != Kind::NotFound {
            return Err(failure.to_string());
        }
        // Gone from the pool: what does the signed index serve now?
        let packages = self.packages(pin.suite, pin.arch.debian()).map_err(|e| {
            format!("{failure} (the pin is gone) and its index could not be read: {e}")
        })?;
        // The pinned package moved within the pool, or the newest of its
        // series (never the record whose file just answered 404).
        let record = packages
            .records(pin.package)
            .find(|s| {
                s.version() == pin.version
                    && s.field("SHA256") == Some(pin.sha256)
                    && s.field("Filename") != Some(pin.filename)
            })
            .or_else(|| {
                packages.newest_where(|s| {
                    index::glob(pin.family, s.package())
                        && s.field("Filename") != Some(pin.filename)
                })
            })
            .ok_or_else(|| {
                format!(
                    "{failure}, and {} lists no package of the series {}",
                    packages.url, pin.family
                )
            })?;
        let remote = Remote::of_stanza(pin.suite, record, pin.member)?;
        let file = self.get(&remote).map_err(|e| e.to_string())?;
        if remote.sha256 != pin.sha256 {
            let _ = std::fs::create_dir_all(note.parent().expect("in names/"));
            let _ = std::fs::write(&note, remote.note());
            self.report_stale(pin, &remote);
        }
        Ok((file, remote.package, remote.version))
    }

    fn report_stale(&self, pin: &Pin, now: &Remote) {
        let line = format!(
            "stale pin: {} {} ({}) is no longer served by {}; booting {} {} from its signed \
             index instead (`cargo xtask lab --update-pins` rewrites the pin)",
            pin.package,
            pin.version,
            pin.arch.debian(),
            pin.suite,
            now.package,
            now.version
        );
        eprintln!("{line}");
        self.stale.lock().expect("no panic").push(line);
    }

    /// Downloads, verifies and unpacks one package into the content cache.
    fn get(&self, remote: &Remote) -> std::result::Result<PathBuf, Failure> {
        let cache = &self.source.cache;
        if let Some(file) = cached(cache, &remote.sha256) {
            return Ok(file);
        }
        let base = self
            .source
            .archives
            .uri(&remote.suite)
            .map_err(|e| Failure::new(&remote.filename, Kind::Network, e))?;
        let url = format!("{base}/{}", remote.filename);
        let downloads = cache.join("downloads");
        std::fs::create_dir_all(&downloads).map_err(|e| {
            Failure::new(&url, Kind::Network, format!("{}: {e}", downloads.display()))
        })?;
        let deb = downloads.join(format!("{}.deb", remote.sha256));
        if !self.source.fetcher.offline {
            eprintln!(
                "fetching {} {} ({} bytes)",
                remote.package,
                remote.version,
                archive::thousands(remote.size)
            );
        }
        self.source.fetcher.get(
            &url,
            &deb,
            Some(Want {
                size: Some(remote.size),
                sha256: &remote.sha256,
            }),
        )?;
        let file = unpack(&deb, &remote.member, &content_dir(cache, &remote.sha256))
            .map_err(|e| Failure::new(&url, Kind::Hash, e));
        let _ = std::fs::remove_file(&deb);
        file
    }

    /// Sid's newest kernel for `arch`.
    fn newest(&self, arch: Arch) -> std::result::Result<Kernel, String> {
        let cache = &self.source.cache;
        let note = cache
            .join("names")
            .join(format!("newest-{}", arch.debian()));
        let fresh = std::fs::metadata(&note)
            .and_then(|m| m.modified())
            .is_ok_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() < NEWEST_TTL);
        let known = std::fs::read_to_string(&note)
            .ok()
            .and_then(|t| Remote::from_note(&t));
        let remote = match known {
            Some(r) if fresh || self.source.fetcher.offline => r,
            _ => {
                let packages = self
                    .packages("sid", arch.debian())
                    .map_err(|e| e.to_string())?;
                let found = discover(&packages, arch)?;
                let _ = std::fs::create_dir_all(cache.join("names"));
                let _ = std::fs::write(&note, found.note());
                found
            }
        };
        let image = self.get(&remote).map_err(|e| e.to_string())?;
        let release = match image.file_name().and_then(|n| n.to_str()) {
            Some("vmlinuz") => image
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or_default(),
            Some(name) => name
                .strip_prefix("vmlinuz-")
                .or_else(|| name.strip_prefix("vmlinux-"))
                .unwrap_or_default(),
            None => "",
        };
        let (major, minor) = series_order(release);
        Ok(Kernel {
            arch,
            series: format!("{major}.{minor}"),
            order: (major, minor),
            package: remote.package,
            version: remote.version,
            image,
            newest: true,
        })
    }
}

/// One pinned package's member file (from the cache, the pool, or the
/// newest of its series), or why it cannot be had.
pub fn fetch_pin(source: &Source, pin: &Pin) -> std::result::Result<PathBuf, String> {
    let run = Run {
        source,
        indexes: Mutex::default(),
        stale: Mutex::default(),
    };
    run.pinned(pin).map(|(file, _, _)| file)
}

/// Fetches whatever is not cached yet; what cannot be had is listed in
/// [`Fetched::unavailable`] with its reason.
pub fn fetch(
    source: &Source,
    kernels: &[Pin],
    busybox: &[Pin],
    with_newest: bool,
    arches: &[Arch],
) -> Fetched {
    let run = Run {
        source,
        indexes: Mutex::default(),
        stale: Mutex::default(),
    };
    let pins: Vec<&Pin> = busybox
        .iter()
        .chain(kernels)
        .filter(|p| arches.contains(&p.arch))
        .collect();
    let files = in_parallel(&pins, |pin| run.pinned(pin));
    let mut fetched = Fetched {
        kernels: Vec::new(),
        busybox: Vec::new(),
        unavailable: Vec::new(),
        stale: Vec::new(),
    };
    let mut no_busybox: Vec<(Arch, String)> = Vec::new();
    for (pin, file) in pins.iter().zip(&files) {
        if !pin.series.is_empty() {
            continue;
        }
        match file {
            Ok((f, _, _)) => fetched.busybox.push((pin.arch, f.clone())),
            Err(why) => no_busybox.push((pin.arch, format!("busybox-static: {why}"))),
        }
    }
    for &arch in arches {
        if !busybox.iter().any(|p| p.arch == arch) {
            no_busybox.push((arch, format!("no busybox is pinned for {}", arch.name())));
        }
    }
    let busybox_missing = |arch: Arch| no_busybox.iter().find(|(a, _)| *a == arch);
    for (pin, file) in pins.iter().zip(files) {
        if pin.series.is_empty() {
            continue;
        }
        let why = match (busybox_missing(pin.arch), file) {
            (Some((_, why)), _) => why.clone(),
            (None, Err(why)) => why,
            (None, Ok((image, package, version))) => {
                fetched.kernels.push(Kernel {
                    arch: pin.arch,
                    series: pin.series.to_owned(),
                    order: series_order(pin.series),
                    package,
                    version,
                    image,
                    newest: false,
                });
                continue;
            }
        };
        fetched.unavailable.push(Unavailable {
            arch: pin.arch,
            series: pin.series.to_owned(),
            newest: false,
            why,
        });
    }
    if with_newest {
        // Sid has no kernel for some (mips64el dropped, i386 none since trixie).
        let with_sid: Vec<Arch> = arches
            .iter()
            .copied()
            .filter(|a| a.newest_meta().is_some())
            .collect();
        let newest = in_parallel(&with_sid, |arch| run.newest(*arch));
        for (&arch, kernel) in with_sid.iter().zip(newest) {
            let why = match (busybox_missing(arch), kernel) {
                (None, Ok(k)) => {
                    if !fetched
                        .kernels
                        .iter()
                        .any(|p| p.arch == arch && p.series == k.series)
                    {
                        fetched.kernels.push(k);
                    }
                    continue;
                }
                (Some((_, why)), _) => why.clone(),
                (None, Err(why)) => why,
            };
            fetched.unavailable.push(Unavailable {
                arch,
                series: "newest".to_owned(),
                newest: true,
                why,
            });
        }
    }
    fetched.stale = run.stale.into_inner().expect("no panic");
    fetched
}

/// `(major, minor)` of `6.12`-style text.
pub fn series_order(series: &str) -> (u32, u32) {
    let mut parts = series.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Sid's newest kernel image package for `arch`: `linux-image-<flavour>`
/// depends on the versioned image package, which either holds
/// `boot/vmlinuz-*` or (Linux 7 packaging) depends on the `linux-binary-*`
/// package that holds `usr/lib/modules/<release>/vmlinuz`.
fn discover(packages: &Packages, arch: Arch) -> std::result::Result<Remote, String> {
    let meta = arch
        .newest_meta()
        .ok_or_else(|| format!("sid has no kernel of {} for the lab", arch.debian()))?;
    let record = packages
        .newest(meta)
        .ok_or_else(|| format!("{} lists no {meta}", packages.url))?;
    let depends = record
        .field("Depends")
        .ok_or_else(|| format!("sid's {meta} has no Depends: Debian changed its packaging"))?;
    let image = dependency(depends, "linux-image-")
        .ok_or_else(|| format!("sid's {meta} depends on no linux-image-*: {depends}"))?;
    let stanza = packages
        .newest(&image)
        .ok_or_else(|| format!("{} lists no {image}", packages.url))?;
    let (stanza, member) = match stanza
        .field("Depends")
        .and_then(|d| dependency(d, "linux-binary-"))
    {
        Some(binary) => (
            packages
                .newest(&binary)
                .ok_or_else(|| format!("{} lists no {binary}", packages.url))?,
            "./usr/lib/modules/*/vmlinuz",
        ),
        None => (stanza, IMAGE),
    };
    Remote::of_stanza("sid", stanza, member)
}

/// The first package in a Depends field whose name starts with `prefix`.
fn dependency(depends: &str, prefix: &str) -> Option<String> {
    depends
        .split([',', '|'])
        .map(|d| d.split_whitespace().next().unwrap_or_default())
        .find(|name| name.starts_with(prefix))
        .map(str::to_owned)
}
