//! `cargo xtask lab`: the verification lab. Boots real Debian kernels under
//! QEMU (TCG) and runs the crate's kernel-facing tests in them: aarch64
//! guests emulate a PMUv3 whose counters user space reads with `mrs`,
//! riscv64 guests an SBI PMU read with `csrr`, armhf guests a 32-bit ARMv7
//! PMU (read(2) only), s390x guests are big-endian, ppc64el guests emulate
//! a POWER10 PMU (read(2) only), mips64el (no PMU) and i386 (32-bit x86,
//! no PMU) complete the ioctl encodings; x86_64, aarch64 and i386 also
//! boot Linux 5.10. Guests have 4 CPUs (armhf and mips64el: 1, see
//! `Arch::cpus`). The host runs the same tests as the first column (unless
//! `--no-host`).
//!
//! - `install.rs`: QEMU and rustup targets on the host
//! - `pins.rs`: the pinned Debian kernels and busybox (pool path, size,
//!   SHA-256)
//! - `kernels.rs`: fetching them without apt into a content-addressed
//!   cache; what cannot be had is `unavailable`, with its reason
//! - `guests.rs`: architectures, CPU models, what each guest provides
//! - `testbins.rs`: a static test binary per architecture (every area)
//! - `deb_cache.rs`: the content-addressed cache of files from .debs
//! - `initramfs.rs`: the newc archive and its init
//! - `pipeline.rs`: builds and boots overlapping, guests as their
//!   architecture is built
//! - `qemu.rs`: boot, timeout, console capture
//! - `pvh.rs`: x86 kernels booted as their ELF (PVH entry), not
//!   decompressed under TCG
//! - `results.rs`, `matrix.rs`: parsing, the matrix, the verdict

mod deb_cache;
#[cfg(test)]
mod fetch_tests;
pub(crate) mod guests;
mod initramfs;
mod install;
mod kernels;
mod libperf;
mod matrix;
mod pins;
mod pipeline;
mod pvh;
mod qemu;
mod results;
mod testbins;
mod update_pins;

use crate::shell::{self, Result};
use guests::{Arch, Only};
use matrix::Column;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `cargo xtask lab --help`.
pub const USAGE: &str =
    "usage: cargo xtask lab [--only ARCH[:KERNEL]]... [--break] [--no-newest] [--offline]
                       [--strict] [--update-pins] [--no-host] [--jobs N]
                       [--timeout SECS]
  Boots pinned Debian kernels and sid's newest under QEMU: x86_64 and aarch64
  (emulated PMUv3) 5.10, 6.1, 6.12; riscv64 (SBI PMU) 6.12; s390x (big-endian),
  armhf (ARMv7 PMU), ppc64el (POWER10 PMU) and mips64el (no PMU) 6.1; i386
  5.10 and 6.1; all but mips64el and i386 at sid's newest (7.2). Runs the
  kernel-facing tests in each and on the host, and prints a matrix test x
  machine. Installs QEMU, cross linkers and rustup targets when missing.
  Pinned packages are fetched from their pool path and verified (SHA-256), no
  index needed; a pin Debian dropped is replaced by the newest of its series
  from the signed index and reported as stale. Files are cached by content in
  $PERF_EVENT_CORE_CACHE/lab (default ~/.cache/perf-event-core/lab).
  A guest whose kernel the archive could not give (404, wrong size or hash,
  no network) is `unavailable: archive (<reason>)` and does not fail the run,
  unless an architecture loses every guest; a failing test or a fetched guest
  that does not boot does.
  --only ARCH[:KERNEL]  only these guests (x86_64, aarch64, riscv64, s390x,
                 armhf, ppc64el, mips64el, i386; KERNEL as major.minor, e.g.
                 --only riscv64:7.2); repeatable
  --break        boot the guests with perf_event_core_lab_break=1: tests fail on
                 purpose there, and the run must fail (proves failures are seen)
  --no-newest    only the pinned kernels (no look-up of Debian sid)
  --offline      no network: boot from the cache alone (unavailable otherwise)
  --strict       any unavailable guest fails the run
  --update-pins  check every pin against its suite's signed index and rewrite
                 xtask/src/lab/pins.rs where Debian has moved on; boots nothing
  --no-host      no host column (`cargo xtask ci` runs the same test binaries
                 on the host in its `test` step, and runs the lab beside it)
  --jobs N       guests booted at a time (default: the number of CPUs)
  --timeout SECS a guest whose console is silent this long is stopped as hung
                 (default 600); one that keeps printing may run 4x that";

/// A pinned kernel source tree (one of `pins::LINUX_SOURCES`) for tasks
/// beyond the lab.
pub struct LinuxSource {
    /// The unpacked tree (`tools/`, the UAPI headers).
    pub tree: std::path::PathBuf,
    /// The kernel's `major.minor` (`6.12`).
    pub series: &'static str,
    /// The Debian package and version.
    pub package: &'static str,
    pub version: &'static str,
    /// The SHA-256 of the `.deb`.
    pub sha256: &'static str,
}

/// Fetches (or finds in the lab's cache), verifies and unpacks the pinned
/// kernel source `pin` (one of `pins::LINUX_SOURCES`).
pub fn linux_source(pin: &pins::Pin) -> Result<LinuxSource> {
    let source = kernels::Source::machine(false)?;
    let tree = libperf::source_tree(&source, pin)?;
    Ok(LinuxSource {
        tree,
        series: pin.series,
        package: pin.package,
        version: pin.version,
        sha256: pin.sha256,
    })
}

/// The pinned kernel sources, newest first (`pins::LINUX_SOURCES`).
pub fn linux_source_pins() -> &'static [pins::Pin] {
    pins::LINUX_SOURCES
}

/// Parsed arguments.
struct Args {
    only: Vec<Only>,
    jobs: usize,
    break_guests: bool,
    newest: bool,
    offline: bool,
    strict: bool,
    update_pins: bool,
    host: bool,
    timeout: Duration,
}

impl Args {
    fn parse(args: impl Iterator<Item = String>) -> Result<Self> {
        let mut parsed = Args {
            only: Vec::new(),
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            break_guests: false,
            newest: true,
            offline: false,
            strict: false,
            update_pins: false,
            host: true,
            timeout: Duration::from_secs(600),
        };
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--break" => parsed.break_guests = true,
                "--only" => {
                    let cell = args
                        .next()
                        .ok_or("--only needs ARCH[:KERNEL], e.g. --only riscv64:7.2")?;
                    parsed.only.push(Only::parse(&cell)?);
                }
                "--no-newest" => parsed.newest = false,
                "--offline" => parsed.offline = true,
                "--strict" => parsed.strict = true,
                "--update-pins" => parsed.update_pins = true,
                "--no-host" => parsed.host = false,
                "--jobs" => {
                    parsed.jobs = args
                        .next()
                        .and_then(|s| s.parse().ok())
                        .filter(|n| *n > 0)
                        .ok_or("--jobs needs a number of guests at a time, e.g. --jobs 2")?;
                }
                "--timeout" => {
                    let secs = args
                        .next()
                        .and_then(|s| s.parse().ok())
                        .ok_or("--timeout needs a number of seconds, e.g. --timeout 600")?;
                    parsed.timeout = Duration::from_secs(secs);
                }
                other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
            }
        }
        Ok(parsed)
    }
}

/// What a run that passed leaves for the caller to repeat at its end.
#[derive(Debug, Default)]
pub struct Report {
    /// Guests left out because the archive failed them (`unavailable:
    /// archive (...)`), sid's newest kernels that did not boot, stale pins.
    pub notes: Vec<String>,
}

/// Runs the lab (`cargo xtask lab ARGS`).
pub fn main(args: impl Iterator<Item = String>) -> Result {
    let report = run(args)?;
    for note in &report.notes {
        eprintln!("  note: {note}");
    }
    Ok(())
}

/// Installs what the lab needs on the host (QEMU, cross linkers, rustup
/// targets) for every architecture: `cargo xtask ci` does it before it
/// starts the lab beside its other steps, since two apt or rustup runs at
/// once would collide.
pub fn install_host_tools() -> Result {
    install::host_tools(&Arch::ALL)
}

/// Runs the lab and returns what a passing run should still tell.
pub fn run(args: impl Iterator<Item = String>) -> Result<Report> {
    let args = Args::parse(args)?;
    let started = Instant::now();
    let arches: Vec<Arch> = Arch::ALL
        .into_iter()
        .filter(|a| args.only.is_empty() || args.only.iter().any(|o| o.arch == *a))
        .collect();
    let source = kernels::Source::machine(args.offline)?;
    if args.update_pins {
        let file = shell::root().join("xtask/src/lab/pins.rs");
        let all: Vec<pins::Pin> = pins::KERNELS
            .iter()
            .chain(pins::BUSYBOX)
            .chain(pins::LINUX_SOURCES)
            .copied()
            .collect();
        let update = update_pins::update_pins(&source, &all, &file)?;
        for c in &update.changed {
            eprintln!("pin moved: {c}");
        }
        for u in &update.unchecked {
            eprintln!("pin not checked (its index could not be read): {u}");
        }
        if update.changed.is_empty() {
            eprintln!(
                "{} unchanged: {} pins still served, {} not checked",
                file.display(),
                all.len() - update.unchecked.len(),
                update.unchecked.len()
            );
        } else {
            eprintln!(
                "{} rewritten ({} pins); review with `git diff`",
                file.display(),
                update.changed.len()
            );
        }
        return Ok(Report {
            notes: update.unchecked,
        });
    }
    install::host_tools(&arches)?;
    let work = shell::root().join("target/lab/run");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let in_cell = |arch: Arch, series: &str| {
        args.only.is_empty() || args.only.iter().any(|o| o.covers(arch, series))
    };
    // At once: the kernels come over the network, the guests' test
    // binaries build (from the start), the host runs its column, and the
    // guests boot as their architecture is built (`pipeline.rs`).
    let pipeline = pipeline::Pipeline::new(started);
    let libperf_notes = Mutex::new(Vec::new());
    let build = |arch: Arch| -> Result<pipeline::Built> {
        let binaries = testbins::build_guest(arch)?;
        let mut extra = Vec::new();
        if libperf::ARCHES.contains(&arch) {
            match libperf::build(&source, arch) {
                Ok(path) => extra.push((libperf::GUEST_NAME, path)),
                Err(why) => libperf_notes
                    .lock()
                    .expect("no panic while holding it")
                    .push(format!(
                        "libperf comparison left out on {}: {why}",
                        arch.name()
                    )),
            }
        }
        Ok(pipeline::Built { binaries, extra })
    };
    let (fetched, guests, unavailable, host, guest_columns) = std::thread::scope(|scope| {
        scope.spawn(|| pipeline.build_all(&arches, build));
        let fetching = scope.spawn(|| {
            shell::step(&format!(
                "fetching kernels and busybox{}",
                if args.offline {
                    " (--offline: cache only)"
                } else {
                    ""
                }
            ));
            kernels::fetch(&source, pins::KERNELS, pins::BUSYBOX, args.newest, &arches)
        });
        let host = args.host.then(|| scope.spawn(|| host_column(&work)));
        let fetched = fetching.join().expect("the fetch does not panic");
        let guests: Vec<guests::Guest> = guests::for_kernels(&fetched.kernels)
            .into_iter()
            .filter(|g| in_cell(g.arch, &g.kernel.series))
            .collect();
        pipeline.want(guests.iter().map(|g| g.arch).collect());
        let unavailable: Vec<kernels::Unavailable> = fetched
            .unavailable
            .iter()
            .filter(|u| u.newest || in_cell(u.arch, &u.series))
            .cloned()
            .collect();
        let initrd = |arch: Arch, built: &pipeline::Built| -> Result<std::path::PathBuf> {
            let busybox = fetched
                .busybox
                .iter()
                .find(|(a, _)| *a == arch)
                .map(|(_, p)| p.clone())
                .expect("a kernel is fetched only with its busybox");
            let extra: Vec<(&str, &Path)> =
                built.extra.iter().map(|(n, p)| (*n, p.as_path())).collect();
            let initrd = work.join(format!("initramfs-{}.cpio", arch.name()));
            initramfs::write(&initrd, &busybox, &built.binaries, &extra)?;
            Ok(initrd)
        };
        let columns = pipeline.boot_all(&guests, args.jobs, initrd, |guest, initrd| {
            run_guest(guest, initrd, &work, &args)
        });
        let host = host.map(|h| h.join().expect("the host column does not panic"));
        (fetched, guests, unavailable, host, columns)
    });
    let mut columns = Vec::new();
    if let Some(host) = host {
        columns.push(host?);
    }
    columns.extend(guest_columns?);
    let mut notes: Vec<String> = fetched.stale.clone();
    notes.extend(
        libperf_notes
            .into_inner()
            .expect("no panic while holding it"),
    );
    let build_secs = pipeline.builds_secs();
    columns.extend(unavailable.iter().map(matrix::Column::unavailable));

    shell::step(&format!(
        "lab matrix{}",
        if args.break_guests {
            " (--break: guest tests fail on purpose)"
        } else {
            ""
        }
    ));
    println!("{}", matrix::render(&columns));
    let planned: Vec<guests::Need> = guests.iter().flat_map(|g| g.provides.clone()).collect();
    let mut errors = matrix::verdict(&columns, &planned);
    errors.extend(matrix::families(&columns, &arches, args.strict));
    notes.extend(columns.iter().filter_map(matrix::Column::left_out));
    eprintln!(
        "lab: {:.0} s in all (the last guest build done at {:.0} s, guests booting \
         meanwhile; {} guests, {} at a time, {} unavailable); console logs in {}",
        started.elapsed().as_secs_f64(),
        build_secs,
        guests.len(),
        args.jobs.min(guests.len().max(1)),
        unavailable.len(),
        work.display()
    );
    for note in &notes {
        eprintln!("  - {note}");
    }
    if errors.is_empty() {
        eprintln!("lab passed");
        Ok(Report { notes })
    } else {
        for e in &errors {
            eprintln!("  - {e}");
        }
        Err(format!(
            "the lab failed ({} problems, listed above){}",
            errors.len(),
            if args.break_guests {
                ", as --break demands"
            } else {
                ""
            }
        ))
    }
}

/// Runs the host's test binaries the way the guests run them.
fn host_column(work: &Path) -> Result<Column> {
    let binaries = testbins::build_host()?;
    shell::step("running the tests on the host");
    let mut run = results::MachineRun {
        kernel: shell::output(Command::new("uname").arg("-r"))?
            .trim()
            .to_owned(),
        binaries: Vec::new(),
    };
    let mut log = String::new();
    for b in &binaries {
        let out = Command::new(&b.path)
            .args([b.filter().as_str(), "--test-threads=1", "--nocapture"])
            .current_dir(shell::root())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", b.path.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        log.push_str(&format!(
            "LAB-BEGIN {}\n{stdout}{}LAB-END {} rc={:?}\n",
            b.name,
            String::from_utf8_lossy(&out.stderr),
            b.name,
            out.status.code()
        ));
        run.binaries
            .push(results::parse_binary(&b.name, &stdout, out.status.code()));
    }
    let _ = std::fs::write(work.join("host.log"), log);
    Ok(Column {
        label: "host".to_owned(),
        detail: format!("{} {} (this machine)", std::env::consts::ARCH, run.kernel),
        provides: Vec::new(),
        run: Some(run),
        best_effort: false,
        problems: Vec::new(),
        arch: None,
        unavailable: None,
        hung: None,
    })
}

/// Boots one guest and turns its console into a column.
fn run_guest(guest: &guests::Guest, initrd: &Path, work: &Path, args: &Args) -> Result<Column> {
    shell::step(&format!(
        "booting {}: {} {} ({}), -cpu {}",
        guest.label,
        guest.kernel.package,
        guest.kernel.version,
        guest.arch.debian(),
        guest.cpu
    ));
    let log = work.join(format!("{}.log", guest.label.replace(' ', "-")));
    let dtb = if guest.a15_pmu_dtb {
        Some(qemu::a15_pmu_dtb(
            guest,
            &work.join(guest.label.replace(' ', "-")),
        )?)
    } else {
        None
    };
    let kernel = if guest.arch.pvh() {
        pvh::boot_image(
            &guest.kernel.image,
            &work.join(format!("{}.vmlinux", guest.label.replace(' ', "-"))),
        )
    } else {
        guest.kernel.image.clone()
    };
    let boot = qemu::boot(
        guest,
        &kernel,
        initrd,
        dtb.as_deref(),
        args.break_guests,
        &log,
        args.timeout,
    )?;
    let run = results::parse_console(&boot.console);
    let came_up = !run.kernel.is_empty();
    let tests: usize = run.binaries.iter().map(|b| b.tests.len()).sum();
    let mut problems = Vec::new();
    let mut hung = None;
    if boot.done {
        eprintln!(
            "{}: kernel {} ran {} test areas, {tests} tests in {:.1} s ({}; log {})",
            guest.label,
            run.kernel,
            run.binaries.len(),
            boot.secs,
            boot.phases(),
            log.display()
        );
    } else {
        let why = if boot.timed_out {
            format!(
                "no {} (stopped after {:.0} s: console silent for {} s, or {} s in all)",
                initramfs::marker::DONE,
                boot.secs,
                args.timeout.as_secs(),
                args.timeout.as_secs() * u64::from(qemu::TOTAL_LIMIT_FACTOR)
            )
        } else {
            "the guest stopped before its last marker".to_owned()
        };
        eprintln!(
            "{}: {why}; console tail ({}):\n{}",
            guest.label,
            log.display(),
            boot.tail(40)
        );
        if guest.best_effort && !came_up {
            eprintln!(
                "{}: the newest Debian kernel does not boot here; it is left out (warning)",
                guest.label
            );
        } else if guest.best_effort && boot.timed_out {
            let last = run
                .binaries
                .last()
                .map_or("before the first test area".to_owned(), |b| {
                    format!("in test area `{}`", b.name)
                });
            eprintln!(
                "{}: sid's newest kernel hung here ({why}, {last}); its results are left \
                 out (warning)",
                guest.label
            );
            hung = Some(format!("{why}, {last}; console log {}", log.display()));
        } else if came_up {
            problems.push(why);
        }
    }
    Ok(Column {
        label: guest.label.clone(),
        detail: format!(
            "{} {} -cpu {} -smp {}{}{}{}{}",
            guest.arch.name(),
            if came_up {
                &run.kernel
            } else {
                &guest.kernel.version
            },
            guest.cpu,
            guest.arch.cpus(),
            if guest.extra.is_empty() { "" } else { " " },
            guest.extra.join(" "),
            if guest.a15_pmu_dtb {
                " -dtb (PMU node arm,cortex-a15-pmu)"
            } else {
                ""
            },
            if guest.best_effort {
                " [sid's newest: may fail to boot]"
            } else {
                ""
            }
        ),
        provides: guest.provides.clone(),
        run: (came_up && hung.is_none()).then_some(run),
        best_effort: guest.best_effort,
        problems,
        arch: Some(guest.arch),
        unavailable: None,
        hung,
    })
}
