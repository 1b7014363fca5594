//! Debian kernel images and the static busybox the guests boot, fetched with
//! a private apt (see `apt.rs`), verified and cached under
//! `<cache>/lab`. The 6.1 and 6.12 kernels and busybox are pinned to exact
//! package versions and SHA-256 sums; the newest kernel in Debian sid is
//! discovered (at most once a day) and joins the lab when it boots.

use super::apt::{self, PrivateApt};
use super::guests::Arch;
use crate::headers;
use crate::shell::{self, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Which Debian suites the packages come from, for which architectures:
/// bullseye's 5.10 (amd64, arm64, i386); bookworm-security's 6.1 and 6.12
/// backport (amd64, arm64); bookworm's 6.1 and busybox (also s390x, armhf,
/// ppc64el, mips64el, i386); trixie's 6.12 and busybox for riscv64 (not a
/// bookworm architecture); sid for the newest kernel (not mips64el, which
/// sid dropped, nor i386, which has no kernel since trixie). The archive
/// URIs are the machine's own (`debian.rs`).
const SUITES: &[(&str, &[&str])] = &[
    ("bullseye", &["amd64", "arm64", "i386"]),
    ("bookworm-security", &["amd64", "arm64"]),
    (
        "bookworm",
        &[
            "amd64", "arm64", "s390x", "armhf", "ppc64el", "mips64el", "i386",
        ],
    ),
    ("trixie", &["riscv64"]),
    (
        "sid",
        &["amd64", "arm64", "riscv64", "s390x", "armhf", "ppc64el"],
    ),
];

/// A pinned Debian package.
struct Pin {
    arch: Arch,
    series: &'static str,
    package: &'static str,
    version: &'static str,
    sha256: &'static str,
    /// The tar wildcard of the one file used (kernel image, busybox).
    member: &'static str,
}

/// Kernel images: `boot/vmlinuz-*`; riscv64 ships an uncompressed
/// `boot/vmlinux-*` (an EFI-stub `Image` QEMU boots as is), ppc64el an
/// uncompressed ELF `boot/vmlinux-*` (SLOF loads it); mips64el's
/// `vmlinuz-*` is a self-decompressing ELF QEMU's malta loads.
const IMAGE: &str = "./boot/vmlinu[xz]-*";

/// The pinned kernels.
const KERNELS: &[Pin] = &[
    Pin {
        arch: Arch::X86_64,
        series: "5.10",
        package: "linux-image-5.10.0-32-amd64",
        version: "5.10.223-1",
        sha256: "86a6792f3a03ab15a643f385830cdaa921f15e3e9c8bf63aa55a9243c62fc797",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "5.10",
        package: "linux-image-5.10.0-32-arm64",
        version: "5.10.223-1",
        sha256: "53850b52e93158e3055c1d18a5527f9f95250f44b16ee48fb5ab0b42bed44665",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "6.1",
        package: "linux-image-6.1.0-56-arm64",
        version: "6.1.192-2",
        sha256: "6f4ed2d1cb9106bc977c2b1960008f175e2eed5740340634b7894e65ef5acc82",
        member: IMAGE,
    },
    Pin {
        arch: Arch::X86_64,
        series: "6.1",
        package: "linux-image-6.1.0-56-amd64",
        version: "6.1.192-2",
        sha256: "a86e2049672f52354c4536a089203b6c82639420424d31c91cf31a181fd4d8f1",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "6.12",
        package: "linux-image-6.12.117+deb12-arm64",
        version: "6.12.117-1~deb12u1",
        sha256: "29593b2ac908b9325be67b2bfb7252310d8500680bc05e89d540a9378abd01a1",
        member: IMAGE,
    },
    Pin {
        arch: Arch::X86_64,
        series: "6.12",
        package: "linux-image-6.12.117+deb12-amd64",
        version: "6.12.117-1~deb12u1",
        sha256: "803d36a7cda13355ae8152122470288b2636f19f1cb58162dd9d8b408af9b1b4",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Riscv64,
        series: "6.12",
        package: "linux-image-6.12.107+deb13-riscv64",
        version: "6.12.107-1",
        sha256: "abe9f65d74b434692149482b031db7a2aaf832921e09f69f775293c0e0c5799c",
        member: IMAGE,
    },
    Pin {
        arch: Arch::S390x,
        series: "6.1",
        package: "linux-image-6.1.0-50-s390x",
        version: "6.1.176-1",
        sha256: "a9cbaa26e37f70caa41b66b23f82169eb82042471c1ee89592613b659b12c0dd",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Armhf,
        series: "6.1",
        package: "linux-image-6.1.0-50-armmp-lpae",
        version: "6.1.176-1",
        sha256: "7a1a2b179324d910db6415d67b73c7495a58d239f61103d9cf2b79a11b7ece3e",
        member: IMAGE,
    },
    // pool/main/l/linux/linux-image-6.1.0-50-powerpc64le_6.1.176-1_ppc64el.deb
    // Size: 49160448
    Pin {
        arch: Arch::Ppc64el,
        series: "6.1",
        package: "linux-image-6.1.0-50-powerpc64le",
        version: "6.1.176-1",
        sha256: "0513cb05cef43064db6e62e5b71f6a316cf4854ea4fb873263e8e50a1254999e",
        member: IMAGE,
    },
    // pool/main/l/linux/linux-image-6.1.0-50-5kc-malta_6.1.176-1_mips64el.deb
    // Size: 46212788
    Pin {
        arch: Arch::Mips64el,
        series: "6.1",
        package: "linux-image-6.1.0-50-5kc-malta",
        version: "6.1.176-1",
        sha256: "36ad868468d91b54b4567064178dd326cfa8e2ee0c856f74f1d0cb1d41ed0a35",
        member: IMAGE,
    },
    // bullseye: pool/main/l/linux-signed-i386/linux-image-5.10.0-32-686-pae_5.10.223-1_i386.deb
    // Size: 46666012
    Pin {
        arch: Arch::I386,
        series: "5.10",
        package: "linux-image-5.10.0-32-686-pae",
        version: "5.10.223-1",
        sha256: "dddf0e76bd9a8aee8a86ba162af64dcb14d6adb21131a07b2d7e8b8cec4a9c4b",
        member: IMAGE,
    },
    // bookworm: pool/main/l/linux-signed-i386/linux-image-6.1.0-50-686-pae_6.1.176-1_i386.deb
    // Size: 52136644
    Pin {
        arch: Arch::I386,
        series: "6.1",
        package: "linux-image-6.1.0-50-686-pae",
        version: "6.1.176-1",
        sha256: "0d6241268f9344a998c3339c11e527ea8048d409d6c770f67c573707606a3f2e",
        member: IMAGE,
    },
];

/// The pinned static busybox, the guests' shell and tools (bookworm;
/// trixie for riscv64).
const BUSYBOX: &[Pin] = &[
    Pin {
        arch: Arch::Aarch64,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "732c9135564fc71337e0e05fb4da4d11e6c28c1834bce3e405e575afef2a52f5",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::X86_64,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "3d3fdbe91d4660c873e14b092c213fe81c1da6362daa236eb25d0171eb108744",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::S390x,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "65e29a4dea3ca365e9ee73a6b4fa2a42c8cbbd3b13753250e68b4835876fe316",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::Armhf,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "2f68dbeaebeda49f3cde34ac421d5add85fb1c837ff7c4a4971945340d9d66ff",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::Riscv64,
        series: "",
        package: "busybox-static",
        version: "1:1.37.0-6+b9",
        sha256: "4add476d2b185c5b487c285b38d790f0881a7e4a8e2ddde835f917e770eb8633",
        member: "./usr/bin/busybox",
    },
    // pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_ppc64el.deb
    // Size: 965108
    Pin {
        arch: Arch::Ppc64el,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "932deb885b840a8cf529708c03a1e87833dc64e66a70585721f8a356d9fe995b",
        member: "./bin/busybox",
    },
    // pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_mips64el.deb
    // Size: 905976
    Pin {
        arch: Arch::Mips64el,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "dccccdabb87cf616c950b72987116c0c5a4f3781e95dac4759899126ac7a285b",
        member: "./bin/busybox",
    },
    // pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_i386.deb
    // Size: 958344
    Pin {
        arch: Arch::I386,
        series: "",
        package: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        sha256: "725ef9e6fbac4ab79b353165b05005e8c140d6e42177ebbc202ff1e13ded8b7c",
        member: "./bin/busybox",
    },
];

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

/// Kernels and busybox binaries for every architecture.
pub struct Fetched {
    /// Every kernel, pinned ones first.
    pub kernels: Vec<Kernel>,
    /// Static busybox per architecture.
    pub busybox: Vec<(Arch, PathBuf)>,
}

/// The lab's cache directory.
pub fn lab_cache() -> PathBuf {
    headers::cache_dir().join("lab")
}

/// Fetches whatever is not cached yet and returns everything.
pub fn fetch(with_newest: bool, arches: &[Arch]) -> Result<Fetched> {
    let cache = lab_cache();
    let mut private_apt = LazyApt {
        dir: cache.join("apt"),
        apt: None,
    };
    // Everything missing in one apt call (each call loads the package
    // cache; a pin Debian dropped is named by the per-pin fetch below).
    let missing: Vec<String> = KERNELS
        .iter()
        .chain(BUSYBOX)
        .filter(|p| arches.contains(&p.arch))
        .filter(|p| !matches!(complete(&pin_dir(&cache, p)), Ok(Some(_))))
        .map(|p| format!("{}:{}={}", p.package, p.arch.debian(), p.version))
        .collect();
    if !missing.is_empty() {
        let apt = private_apt.get()?;
        shell::step(&format!("fetching {} pinned packages", missing.len()));
        let specs: Vec<&str> = missing.iter().map(String::as_str).collect();
        if let Err(e) = apt.download_all(&specs) {
            eprintln!("{e}: fetching them one at a time");
        }
    }
    let mut kernels = Vec::new();
    for pin in KERNELS.iter().filter(|p| arches.contains(&p.arch)) {
        let image = cached_file(&cache, pin, &mut private_apt)?;
        kernels.push(Kernel {
            arch: pin.arch,
            series: pin.series.to_owned(),
            order: series_order(pin.series),
            package: pin.package.to_owned(),
            version: pin.version.to_owned(),
            image,
            newest: false,
        });
    }
    let mut busybox = Vec::new();
    for pin in BUSYBOX.iter().filter(|p| arches.contains(&p.arch)) {
        let file = cached_file(&cache, pin, &mut private_apt)?;
        busybox.push((pin.arch, file));
    }
    if with_newest {
        for &arch in arches.iter().filter(|a| a.newest_meta().is_some()) {
            let newest = newest(&cache, arch, &mut private_apt)?;
            if !kernels
                .iter()
                .any(|k| k.arch == arch && k.series == newest.series)
            {
                kernels.push(newest);
            }
        }
    }
    Ok(Fetched { kernels, busybox })
}

/// The private apt, updated on first use only (a warm cache needs no network).
struct LazyApt {
    dir: PathBuf,
    apt: Option<PrivateApt>,
}

impl LazyApt {
    fn get(&mut self) -> Result<&PrivateApt> {
        if self.apt.is_none() {
            shell::step("fetching Debian package indexes (private apt state)");
            let archives = crate::debian::archives()?;
            let sources = SUITES
                .iter()
                .map(|(suite, arches)| archives.line(suite, arches))
                .collect::<Result<Vec<_>>>()?;
            let arches: Vec<&str> = Arch::ALL.iter().map(|a| a.debian()).collect();
            let apt = PrivateApt::new(&self.dir, &sources, &arches)?;
            apt.update()?;
            self.apt = Some(apt);
        }
        Ok(self.apt.as_ref().expect("just set"))
    }
}

/// Where a pin's file is cached.
fn pin_dir(cache: &Path, pin: &Pin) -> PathBuf {
    cache.join(format!(
        "{}_{}_{}",
        pin.package,
        pin.version.replace(':', "%3a"),
        pin.arch.debian()
    ))
}

/// The one file a pinned package contributes, fetched on first use.
fn cached_file(cache: &Path, pin: &Pin, apt: &mut LazyApt) -> Result<PathBuf> {
    let dir = pin_dir(cache, pin);
    if let Some(file) = complete(&dir)? {
        return Ok(file);
    }
    let apt = apt.get()?;
    let arch = pin.arch.debian();
    let deb = match apt.deb(pin.package, pin.version, arch, pin.sha256) {
        Ok(deb) => deb,
        Err(_) => {
            shell::step(&format!(
                "fetching {} {} ({arch})",
                pin.package, pin.version
            ));
            let spec = format!("{}:{arch}={}", pin.package, pin.version);
            apt.download_all(&[&spec])
                .and_then(|()| apt.deb(pin.package, pin.version, arch, pin.sha256))
                .map_err(|e| format!("{e}\n{}", moved_on(apt, pin)))?
        }
    };
    unpack(&deb, pin.member, &dir, pin.sha256)
}

/// Extracts `member` of `deb` into `dir`, marks it complete and returns it.
fn unpack(deb: &Path, member: &str, dir: &Path, sha256: &str) -> Result<PathBuf> {
    let partial = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    apt::extract(deb, member, &partial)?;
    let file = find_file(&partial)?;
    let name = file
        .strip_prefix(&partial)
        .expect("found inside")
        .to_owned();
    std::fs::write(
        partial.join(".complete"),
        format!("{}\n{sha256}\n", name.display()),
    )
    .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&partial, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(deb);
    Ok(dir.join(name))
}

/// The cached file of a completed directory (`.complete` names it).
fn complete(dir: &Path) -> Result<Option<PathBuf>> {
    match std::fs::read_to_string(dir.join(".complete")) {
        Ok(text) => {
            let name = text.lines().next().unwrap_or_default();
            let file = dir.join(name);
            Ok(file.is_file().then_some(file))
        }
        Err(_) => Ok(None),
    }
}

/// The single regular file under `dir`.
fn find_file(dir: &Path) -> Result<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.is_file() {
                return Ok(path);
            }
        }
    }
    Err(format!("{} holds no file after extraction", dir.display()))
}

/// The message when the archive no longer carries a pinned version.
fn moved_on(apt: &PrivateApt, pin: &Pin) -> String {
    let name = format!("{}:{}", pin.package, pin.arch.debian());
    let now = apt.show(&name).ok().and_then(|s| {
        s.first()
            .and_then(|s| s.field("Version").map(str::to_owned))
    });
    format!(
        "Debian no longer serves {name} {} (the pinned version{}). Pick the current \
         package of that series (`apt-cache search linux-image-{}` against the \
         suite of this pin in SUITES), then set package, version and sha256 of this pin in \
         xtask/src/lab/kernels.rs from `apt-cache show` and rerun `cargo xtask lab`.",
        pin.version,
        now.map(|v| format!("; it now has {v}")).unwrap_or_default(),
        pin.series,
    )
}

/// `(major, minor)` of `6.12`-style text.
pub fn series_order(series: &str) -> (u32, u32) {
    let mut parts = series.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Sid's newest kernel for `arch`: `linux-image-<arch>` depends on the
/// versioned image package, which either holds `boot/vmlinuz-*` or (Linux
/// 7 packaging) depends on the `linux-binary-*` package that does.
fn newest(cache: &Path, arch: Arch, apt: &mut LazyApt) -> Result<Kernel> {
    let note = cache.join(format!("newest-{}.txt", arch.debian()));
    let fresh = std::fs::metadata(&note)
        .and_then(|m| m.modified())
        .is_ok_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() < NEWEST_TTL);
    let known = std::fs::read_to_string(&note).unwrap_or_default();
    let mut fields = known.split_whitespace();
    let (package, version, sha256) = match (fresh, fields.next(), fields.next(), fields.next()) {
        (true, Some(p), Some(v), Some(s)) => (p.to_owned(), v.to_owned(), s.to_owned()),
        _ => {
            let found = discover(apt.get()?, arch)?;
            std::fs::write(&note, format!("{} {} {}\n", found.0, found.1, found.2))
                .map_err(|e| format!("{}: {e}", note.display()))?;
            found
        }
    };
    let dir = cache.join(format!("{package}_{version}_{}", arch.debian()));
    let image = match complete(&dir)? {
        Some(file) => file,
        None => {
            let apt = apt.get()?;
            shell::step(&format!(
                "fetching the newest Debian kernel: {package} {version} ({})",
                arch.debian()
            ));
            let spec = format!("{package}:{}={version}", arch.debian());
            apt.download_all(&[&spec])?;
            let deb = apt.deb(&package, &version, arch.debian(), &sha256)?;
            // Linux 7 packaging (linux-binary-*) ships the image as
            // usr/lib/modules/<release>/vmlinuz, older packages as
            // boot/vmlinuz-<release>.
            let member = if package.starts_with("linux-binary-") {
                "./usr/lib/modules/*/vmlinuz"
            } else {
                IMAGE
            };
            unpack(&deb, member, &dir, &sha256)?
        }
    };
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
        package,
        version,
        image,
        newest: true,
    })
}

/// Finds (package, version, sha256) of the newest kernel image in sid.
fn discover(apt: &PrivateApt, arch: Arch) -> Result<(String, String, String)> {
    let meta = arch
        .newest_meta()
        .ok_or_else(|| format!("sid has no kernel of {} for the lab", arch.debian()))?;
    let meta = format!("{meta}:{}/sid", arch.debian());
    let stanzas = apt.show(&meta)?;
    let depends = stanzas
        .first()
        .and_then(|s| s.field("Depends"))
        .ok_or_else(|| format!("sid's {meta} has no Depends: Debian changed its packaging"))?;
    let image = dependency(depends, "linux-image-")
        .ok_or_else(|| format!("sid's {meta} depends on no linux-image-*: {depends}"))?;
    let mut pick = image.clone();
    let stanza = apt.show(&format!("{image}:{}/sid", arch.debian()))?;
    let first = stanza
        .first()
        .ok_or_else(|| format!("sid has no {image}"))?;
    if let Some(binary) = first
        .field("Depends")
        .and_then(|d| dependency(d, "linux-binary-"))
    {
        pick = binary;
    }
    let record = apt.show(&format!("{pick}:{}/sid", arch.debian()))?;
    let record = record.first().ok_or_else(|| format!("sid has no {pick}"))?;
    let version = record.field("Version").unwrap_or_default().to_owned();
    let sha256 = record.field("SHA256").unwrap_or_default().to_owned();
    if version.is_empty() || sha256.is_empty() {
        return Err(format!("sid's record of {pick} lacks Version or SHA256"));
    }
    Ok((pick, version, sha256))
}

/// The first package in a Depends field whose name starts with `prefix`.
fn dependency(depends: &str, prefix: &str) -> Option<String> {
    depends
        .split([',', '|'])
        .map(|d| d.split_whitespace().next().unwrap_or_default())
        .find(|name| name.starts_with(prefix))
        .map(str::to_owned)
}
