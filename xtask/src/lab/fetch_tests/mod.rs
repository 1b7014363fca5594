//! The fetcher against a Debian-style archive this test makes and serves on
//! 127.0.0.1: real .debs (`dpkg-deb --build`), a `Release` signed with a
//! key made for the test (`gpg`), `Packages.xz` and `.gz`. Each scenario
//! breaks one thing and checks which guests run, which are unavailable and
//! why, the lab's exit rule, and that no kernel whose bytes were not the
//! pinned ones reaches a guest or the cache.

use super::guests::{for_kernels, Arch};
use super::kernels::{fetch, Fetched, Source};
use super::matrix::{families, Column};
use super::pins::{Pin, IMAGE};
use super::results::MachineRun;
use crate::archive::{sha256_of, Fetcher};
use crate::debian::Archives;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

mod server;
use server::Server;

fn sh(cmd: &mut Command) {
    let out = cmd.output().expect("the command starts");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One package of the test archive.
struct Deb {
    package: &'static str,
    version: &'static str,
    arch: &'static str,
    /// Path inside the package and its bytes.
    member: String,
    bytes: Vec<u8>,
}

/// The archive on disk: `<root>/debian/{pool,dists}`, signed by a fresh key.
struct TestArchive {
    root: PathBuf,
    gnupg: PathBuf,
    keyring: PathBuf,
    /// `(deb, pool path, size, sha256)`.
    debs: Vec<(Deb, String, u64, String)>,
}

impl TestArchive {
    fn new(root: &Path) -> TestArchive {
        let _ = std::fs::remove_dir_all(root);
        let gnupg = root.join("gnupg");
        std::fs::create_dir_all(&gnupg).unwrap();
        let gpg = |args: &[&str]| {
            let mut c = Command::new("gpg");
            c.env("GNUPGHOME", &gnupg)
                .args([
                    "--batch",
                    "--quiet",
                    "--pinentry-mode",
                    "loopback",
                    "--passphrase",
                    "",
                ])
                .args(args);
            c
        };
        sh(&mut gpg(&[
            "--quick-gen-key",
            "lab fetcher test <lab@test.invalid>",
            "ed25519",
            "sign",
            "never",
        ]));
        let keyring = root.join("keyring.gpg");
        sh(&mut gpg(&[
            "--output",
            keyring.to_str().unwrap(),
            "--export",
        ]));
        TestArchive {
            root: root.to_owned(),
            gnupg,
            keyring,
            debs: Vec::new(),
        }
    }

    fn add(&mut self, deb: Deb) {
        let build = self
            .root
            .join("build")
            .join(format!("{}_{}", deb.package, deb.arch));
        let _ = std::fs::remove_dir_all(&build);
        let file = build.join(deb.member.trim_start_matches("./"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &deb.bytes).unwrap();
        std::fs::create_dir_all(build.join("DEBIAN")).unwrap();
        std::fs::write(
            build.join("DEBIAN/control"),
            format!(
                "Package: {}\nVersion: {}\nArchitecture: {}\nMaintainer: lab <lab@test.invalid>\n\
                 Description: lab fetcher test\n",
                deb.package, deb.version, deb.arch
            ),
        )
        .unwrap();
        let pool = format!(
            "pool/main/t/test/{}_{}_{}.deb",
            deb.package,
            deb.version.replace(':', "%3a"),
            deb.arch
        );
        let out = self.root.join("debian").join(&pool);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        sh(Command::new("dpkg-deb")
            .args(["--root-owner-group", "-Zgzip", "--build"])
            .arg(&build)
            .arg(&out));
        let size = std::fs::metadata(&out).unwrap().len();
        let sha = sha256_of(&out).unwrap();
        self.debs.push((deb, pool, size, sha));
    }

    /// Writes `dists/<suite>` for every architecture with packages whose
    /// name passes `listed`, and signs its Release.
    fn publish(&self, suite: &str, arches: &[&str], listed: impl Fn(&Deb) -> bool) {
        let dists = self.root.join("debian/dists").join(suite);
        let mut sums = String::new();
        for arch in arches {
            let mut text = String::new();
            for (deb, pool, size, sha) in &self.debs {
                if deb.arch == *arch && listed(deb) {
                    text.push_str(&format!(
                        "Package: {}\nVersion: {}\nArchitecture: {}\nDepends: {}\n\
                         Filename: {pool}\nSize: {size}\nSHA256: {sha}\n\n",
                        deb.package,
                        deb.version,
                        deb.arch,
                        if deb.package.starts_with("linux-image-") && !deb.package.contains('.') {
                            // A meta package: depends on the versioned image.
                            format!("linux-image-7.2.0-1-{arch}")
                        } else {
                            "libc6".to_owned()
                        }
                    ));
                }
            }
            let dir = dists.join(format!("main/binary-{arch}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("Packages"), &text).unwrap();
            sh(Command::new("xz").args(["-kf"]).arg(dir.join("Packages")));
            sh(Command::new("gzip").args(["-kf"]).arg(dir.join("Packages")));
            for name in ["Packages.xz", "Packages.gz"] {
                let f = dir.join(name);
                sums.push_str(&format!(
                    " {} {} main/binary-{arch}/{name}\n",
                    sha256_of(&f).unwrap(),
                    std::fs::metadata(&f).unwrap().len()
                ));
            }
        }
        let release = dists.join("Release");
        std::fs::write(
            &release,
            format!("Suite: {suite}\nCodename: {suite}\nSHA256:\n{sums}"),
        )
        .unwrap();
        sh(Command::new("gpg")
            .env("GNUPGHOME", &self.gnupg)
            .args(["--batch", "--quiet", "--yes", "--pinentry-mode", "loopback"])
            .args(["--passphrase", "", "--clearsign", "--output"])
            .arg(dists.join("InRelease"))
            .arg(&release));
    }

    fn pool(&self, package: &str, arch: &str) -> PathBuf {
        let (_, pool, _, _) = self
            .debs
            .iter()
            .find(|(d, ..)| d.package == package && d.arch == arch)
            .unwrap();
        self.root.join("debian").join(pool)
    }

    /// A pin of a package of this archive.
    fn pin(&self, arch: Arch, series: &'static str, package: &str, family: &'static str) -> Pin {
        let (deb, pool, size, sha) = self
            .debs
            .iter()
            .find(|(d, ..)| d.package == package && d.arch == arch.debian())
            .unwrap();
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        Pin {
            arch,
            series,
            suite: "stable",
            package: deb.package,
            family,
            version: deb.version,
            filename: leak(pool),
            size: *size,
            sha256: leak(sha),
            member: if series.is_empty() {
                "./bin/busybox"
            } else {
                IMAGE
            },
        }
    }
}

fn kernel(package: &'static str, version: &'static str, arch: &'static str) -> Deb {
    let release = package.trim_start_matches("linux-image-");
    Deb {
        package,
        version,
        arch,
        member: format!("./boot/vmlinuz-{release}"),
        bytes: format!("kernel {package} {version} {arch}\n")
            .repeat(1000)
            .into_bytes(),
    }
}

/// Everything a scenario looks at.
struct Outcome {
    fetched: Fetched,
    /// `(label, why)` of the unavailable guests.
    unavailable: Vec<(String, String)>,
    /// Labels of the guests that would boot.
    booted: Vec<String>,
    /// The lab's rule on the architectures (errors; empty: exit 0).
    errors: Vec<String>,
}

fn run(
    scenario: &str,
    archive: &TestArchive,
    uri: &str,
    cache: &Path,
    offline: bool,
    pins: &[Pin],
) -> Outcome {
    let source = Source {
        archives: Archives {
            main: uri.to_owned(),
            security: None,
        },
        keyring: archive.keyring.clone(),
        fetcher: Fetcher {
            attempts: 2,
            delay: Duration::from_millis(10),
            timeout: Duration::from_secs(20),
            offline,
        },
        cache: cache.to_owned(),
    };
    let (kernels, busybox): (Vec<Pin>, Vec<Pin>) = pins.iter().partition(|p| !p.series.is_empty());
    let arches = [Arch::X86_64, Arch::Aarch64];
    let fetched = fetch(&source, &kernels, &busybox, true, &arches);
    let guests = for_kernels(&fetched.kernels);
    let mut columns: Vec<Column> = guests
        .iter()
        .map(|g| Column {
            label: g.label.clone(),
            detail: String::new(),
            provides: Vec::new(),
            run: Some(MachineRun::default()),
            best_effort: g.best_effort,
            problems: Vec::new(),
            arch: Some(g.arch),
            unavailable: None,
            hung: None,
        })
        .collect();
    columns.extend(fetched.unavailable.iter().map(Column::unavailable));
    let errors = families(&columns, &arches, false);
    eprintln!(
        "{scenario}:\n  guests that boot: {:?}\n  unavailable: {:#?}\n  stale: {:?}\n  lab exit: {}",
        guests.iter().map(|g| &g.label).collect::<Vec<_>>(),
        fetched.unavailable.iter().map(|u| format!("{} {}: {}", u.arch.short(), u.series, u.why)).collect::<Vec<_>>(),
        fetched.stale,
        if errors.is_empty() { "0".to_owned() } else { format!("1 ({})", errors.join("; ")) }
    );
    Outcome {
        unavailable: columns
            .iter()
            .filter_map(|c| c.unavailable.clone().map(|w| (c.label.clone(), w)))
            .collect(),
        booted: guests.iter().map(|g| g.label.clone()).collect(),
        errors,
        fetched,
    }
}

/// The bytes of every regular file under `dir`.
fn contents(dir: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == ".complete") {
                continue;
            } else if let Ok(b) = std::fs::read(&p) {
                out.push(b);
            }
        }
    }
    out
}

#[test]
fn a_broken_archive_costs_only_the_guests_that_need_the_broken_file() {
    for tool in ["gpg", "gpgv", "curl", "dpkg-deb", "xz", "gzip"] {
        assert!(
            crate::shell::have(tool),
            "the fetcher test needs `{tool}` (cargo xtask ci installs it)"
        );
    }
    let root = std::env::temp_dir().join(format!("xtask-fetch-test-{}", std::process::id()));
    let mut a = TestArchive::new(&root);
    for arch in ["amd64", "arm64"] {
        a.add(Deb {
            package: "busybox-static",
            version: "1:1.35.0-4",
            arch,
            member: "./bin/busybox".to_owned(),
            bytes: format!("busybox {arch}\n").into_bytes(),
        });
    }
    a.add(kernel("linux-image-6.1.0-1-amd64", "6.1.10-1", "amd64"));
    a.add(kernel(
        "linux-image-6.12.5+deb12-amd64",
        "6.12.5-1",
        "amd64",
    ));
    a.add(kernel("linux-image-6.1.0-1-arm64", "6.1.10-1", "arm64"));
    a.add(kernel("linux-image-6.1.0-2-arm64", "6.1.12-1", "arm64"));
    a.add(kernel("linux-image-7.2.0-1-amd64", "7.2.1-1", "amd64"));
    a.add(kernel("linux-image-7.2.0-1-arm64", "7.2.1-1", "arm64"));
    for arch in ["amd64", "arm64"] {
        a.add(Deb {
            package: if arch == "amd64" {
                "linux-image-amd64"
            } else {
                "linux-image-arm64"
            },
            version: "7.2.1-1",
            arch,
            member: "./usr/share/doc/meta".to_owned(),
            bytes: b"meta".to_vec(),
        });
    }
    // stable lists everything but the meta packages and 7.2; sid lists
    // those.
    a.publish("stable", &["amd64", "arm64"], |d| {
        d.package.contains("6.") || d.package == "busybox-static"
    });
    a.publish("sid", &["amd64", "arm64"], |d| {
        !d.package.contains("6.") && d.package != "busybox-static"
    });
    let pins = vec![
        a.pin(Arch::X86_64, "", "busybox-static", "busybox-static"),
        a.pin(Arch::Aarch64, "", "busybox-static", "busybox-static"),
        a.pin(
            Arch::X86_64,
            "6.1",
            "linux-image-6.1.0-1-amd64",
            "linux-image-6.1.0-*-amd64",
        ),
        a.pin(
            Arch::X86_64,
            "6.12",
            "linux-image-6.12.5+deb12-amd64",
            "linux-image-6.12.*+deb12-amd64",
        ),
        a.pin(
            Arch::Aarch64,
            "6.1",
            "linux-image-6.1.0-1-arm64",
            "linux-image-6.1.0-*-arm64",
        ),
    ];
    let server = Server::start(root.clone());
    let uri = server.uri();
    let good: Vec<Vec<u8>> = a.debs.iter().map(|(d, ..)| d.bytes.clone()).collect();

    // Baseline: every pin and both newest kernels.
    let cache = root.join("cache-ok");
    let o = run("baseline", &a, &uri, &cache, false, &pins);
    assert_eq!(o.unavailable, Vec::<(String, String)>::new());
    assert_eq!(o.booted.len(), 5, "{:?}", o.booted);
    assert!(o.errors.is_empty(), "{:?}", o.errors);
    // ... and from the cache alone.
    let o = run(
        "--offline, warm cache",
        &a,
        "http://127.0.0.1:1/nowhere",
        &cache,
        true,
        &pins,
    );
    assert_eq!(
        o.booted.len(),
        5,
        "--offline from a warm cache: {:?}",
        o.unavailable
    );

    // (1) sid's amd64 index of the wrong size (.xz and .gz): only the newest
    // amd64 kernel is lost; the pins need no index.
    let sid = root.join("debian/dists/sid/main/binary-amd64");
    let saved: Vec<(PathBuf, Vec<u8>)> = ["Packages.xz", "Packages.gz"]
        .iter()
        .map(|n| (sid.join(n), std::fs::read(sid.join(n)).unwrap()))
        .collect();
    for (f, bytes) in &saved {
        std::fs::write(f, &bytes[..bytes.len() - 7]).unwrap();
    }
    let o = run(
        "(1) sid amd64 index of the wrong size",
        &a,
        &uri,
        &root.join("cache-1"),
        false,
        &pins,
    );
    assert_eq!(o.unavailable.len(), 1, "{:?}", o.unavailable);
    let (label, why) = &o.unavailable[0];
    assert_eq!(label, "x86 newest");
    assert!(
        why.contains("dists/sid/main/binary-amd64/Packages.xz") && why.contains("bytes where"),
        "{why}"
    );
    assert!(
        o.booted.contains(&"a64 7.2 max".to_owned()),
        "{:?}",
        o.booted
    );
    assert_eq!(o.booted.len(), 4);
    assert!(
        o.errors.is_empty(),
        "x86_64 keeps its pinned guests: {:?}",
        o.errors
    );
    for (f, bytes) in &saved {
        std::fs::write(f, bytes).unwrap();
    }

    // (2) a pinned version removed from the pool: the newest of its series
    // (6.1.0-2, 6.1.12-1) from the signed index boots instead, reported.
    let gone = a.pool("linux-image-6.1.0-1-arm64", "arm64");
    let kept = std::fs::read(&gone).unwrap();
    std::fs::remove_file(&gone).unwrap();
    let o = run(
        "(2) pinned version removed",
        &a,
        &uri,
        &root.join("cache-2"),
        false,
        &pins,
    );
    assert!(o.unavailable.is_empty(), "{:?}", o.unavailable);
    let k = o
        .fetched
        .kernels
        .iter()
        .find(|k| k.arch == Arch::Aarch64 && k.series == "6.1")
        .expect("a replacement");
    assert_eq!(
        (k.package.as_str(), k.version.as_str()),
        ("linux-image-6.1.0-2-arm64", "6.1.12-1")
    );
    assert_eq!(
        std::fs::read(&k.image).unwrap(),
        kernel("linux-image-6.1.0-2-arm64", "6.1.12-1", "arm64").bytes
    );
    assert_eq!(o.fetched.stale.len(), 1);
    assert!(
        o.fetched.stale[0].contains("linux-image-6.1.0-1-arm64 6.1.10-1"),
        "{:?}",
        o.fetched.stale
    );
    assert!(o.errors.is_empty());
    std::fs::write(&gone, kept).unwrap();

    // (3) a truncated .deb and (4) a .deb of the right size with a wrong
    // hash: those two guests are unavailable, nothing of theirs is unpacked.
    let truncated = a.pool("linux-image-6.12.5+deb12-amd64", "amd64");
    let tampered = a.pool("linux-image-6.1.0-1-arm64", "arm64");
    let (t_bytes, m_bytes) = (
        std::fs::read(&truncated).unwrap(),
        std::fs::read(&tampered).unwrap(),
    );
    std::fs::write(&truncated, &t_bytes[..t_bytes.len() / 2]).unwrap();
    let mut bad = m_bytes.clone();
    let at = bad.len() - 100;
    bad[at] ^= 0xff;
    std::fs::write(&tampered, &bad).unwrap();
    let cache = root.join("cache-34");
    let o = run(
        "(3) truncated .deb, (4) wrong hash",
        &a,
        &uri,
        &cache,
        false,
        &pins,
    );
    let mut labels: Vec<&str> = o.unavailable.iter().map(|(l, _)| l.as_str()).collect();
    labels.sort_unstable();
    assert_eq!(labels, ["a64 6.1", "x86 6.12"], "{:?}", o.unavailable);
    for (label, why) in &o.unavailable {
        let want = if label == "x86 6.12" {
            "bytes where"
        } else {
            "SHA-256"
        };
        assert!(
            why.contains(want) && why.contains("/pool/main/t/test/"),
            "{label}: {why}"
        );
        assert!(why.contains("(2 attempts)"), "retried: {why}");
    }
    assert_eq!(o.booted.len(), 3, "{:?}", o.booted);
    assert!(o.errors.is_empty(), "{:?}", o.errors);
    for file in contents(&cache.join("sha256")) {
        assert!(
            good.contains(&file),
            "the cache holds a file that came from no verified package ({} bytes)",
            file.len()
        );
    }
    for k in &o.fetched.kernels {
        assert!(
            good.contains(&std::fs::read(&k.image).unwrap()),
            "{} boots unverified bytes",
            k.package
        );
    }
    std::fs::write(&truncated, t_bytes).unwrap();
    std::fs::write(&tampered, m_bytes).unwrap();

    // (5) the server down: everything unavailable with curl's error, and
    // the run fails because both architectures lost every guest.
    drop(server);
    std::thread::sleep(Duration::from_millis(50));
    let o = run(
        "(5) server down",
        &a,
        &uri,
        &root.join("cache-5"),
        false,
        &pins,
    );
    assert!(o.booted.is_empty(), "{:?}", o.booted);
    assert_eq!(o.unavailable.len(), 5, "{:?}", o.unavailable);
    assert!(
        o.unavailable
            .iter()
            .all(|(_, why)| why.contains("127.0.0.1") && why.contains("onnect")),
        "{:?}",
        o.unavailable
    );
    assert_eq!(o.errors.len(), 2, "{:?}", o.errors);
    assert!(o.errors.iter().all(|e| e.contains("lost all its machines")));
    let _ = std::fs::remove_dir_all(&root);
}
