//! Boots one guest under QEMU's TCG (no KVM), captures its serial console to
//! a log file and ends it when it powers off, when its console has been
//! silent for the timeout (a hang), or after [`TOTAL_LIMIT_FACTOR`] times the
//! timeout in all.

use super::guests::{Guest, MEMORY_MIB};
use super::initramfs::{marker, BREAK_SWITCH};
use crate::shell::{self, Result};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A guest that keeps printing may run this many times the timeout in all.
/// The timeout itself bounds silence: a guest whose console prints nothing
/// for that long is taken as hung. A slower host (TCG shares the VM's two
/// CPUs with whatever else runs) stretches a guest that makes progress
/// without failing it. s390x 7.2 took just over 300 s in all in one CI
/// run; under a loaded host one s390x test (1,000 attaches) printed nothing
/// for 300 s, hence the lab's default of 600 s of silence.
pub const TOTAL_LIMIT_FACTOR: u32 = 4;

/// What a boot produced.
pub struct Boot {
    /// The whole console output, `\r` removed.
    pub console: String,
    /// Whether the init printed its last marker (all binaries ran).
    pub done: bool,
    /// Whether QEMU was killed at the timeout.
    pub timed_out: bool,
    /// Wall time of the boot.
    pub secs: f64,
    /// Host seconds since QEMU started at which the guest came up
    /// (`boot`) and each test binary ended (its name), in order.
    pub marks: Vec<(String, f64)>,
}

impl Boot {
    /// Where the wall time went: `boot 20.1 s, abi 3.0 s, ...` (each test
    /// binary's share is the time since the previous marker).
    pub fn phases(&self) -> String {
        let mut last = 0.0;
        self.marks
            .iter()
            .map(|(name, at)| {
                let part = format!("{name} {:.1} s", at - last);
                last = *at;
                part
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Boot {
    /// The last `lines` lines of the console, for error messages.
    pub fn tail(&self, lines: usize) -> String {
        tail(&self.console, lines)
    }
}

/// The QEMU command line for a guest booting `kernel` (its image, or the
/// ELF of `pvh.rs`); `dtb` replaces the board's own device tree (armhf,
/// see [`a15_pmu_dtb`]).
pub fn command(
    guest: &Guest,
    kernel: &Path,
    initrd: &Path,
    dtb: Option<&Path>,
    break_switch: bool,
) -> Command {
    let mut append = String::new();
    if let Some(console) = guest.arch.console() {
        append.push_str(&format!("console={console} "));
    }
    // mitigations=off: no speculative-execution mitigations (page-table
    // isolation, return trampolines, buffer flushes on every kernel exit),
    // which TCG emulates at a high cost and which change nothing the tests
    // look at (kernel 5.2 and later).
    append.push_str("panic=-1 loglevel=3 mitigations=off rdinit=/init");
    if !guest.arch.boot_params().is_empty() {
        append.push(' ');
        append.push_str(guest.arch.boot_params());
    }
    if break_switch {
        append.push(' ');
        append.push_str(BREAK_SWITCH);
    }
    let mut cmd = Command::new(guest.arch.qemu());
    cmd.args(["-accel", "tcg", "-nodefaults", "-display", "none"])
        .args(["-no-reboot", "-serial", "stdio", "-monitor", "none"])
        .args(["-M", guest.arch.machine()])
        .args(["-m", &MEMORY_MIB.to_string()])
        .args(["-cpu", guest.cpu, "-smp", &guest.arch.cpus().to_string()])
        .args(guest.extra);
    if let Some(dtb) = dtb {
        cmd.arg("-dtb").arg(dtb);
    }
    cmd.arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(initrd)
        .args(["-append", &append]);
    cmd
}

/// The device tree of QEMU's 32-bit Arm `virt` board for `guest` (same
/// `-cpu`, `-m`, `-smp`), with the PMU node's compatible `arm,armv8-pmuv3`
/// (what QEMU writes for `-cpu max`, which Debian's armmp kernels do not
/// bind: CONFIG_ARM_PMUV3 is not set) rewritten to `arm,cortex-a15-pmu`, so
/// the ARMv7 PMU driver binds to the emulated PMU (AArch32 PMUv3). QEMU's
/// `-cpu cortex-a15` model has no PMU at all. Files are `<prefix>-*.dtb`.
pub fn a15_pmu_dtb(guest: &Guest, prefix: &Path) -> Result<std::path::PathBuf> {
    const QEMU_PMU: &str = "\"arm,armv8-pmuv3\"";
    let file = |suffix: &str| {
        let mut name = prefix.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    let board = file("-board.dtb");
    let out = file("-a15-pmu.dtb");
    shell::run(
        Command::new(guest.arch.qemu())
            .args(["-accel", "tcg", "-nodefaults", "-display", "none"])
            .arg("-M")
            .arg(format!(
                "{},dumpdtb={}",
                guest.arch.machine(),
                board.display()
            ))
            .args(["-m", &MEMORY_MIB.to_string()])
            .args(["-cpu", guest.cpu, "-smp", &guest.arch.cpus().to_string()])
            .stdout(Stdio::null()),
    )?;
    let source = shell::output(
        Command::new("dtc")
            .args(["-q", "-I", "dtb", "-O", "dts"])
            .arg(&board),
    )?;
    if !source.contains(QEMU_PMU) {
        return Err(format!(
            "QEMU's {} device tree for -cpu {} has no {QEMU_PMU} PMU node: this QEMU \
             describes the PMU differently, so the armhf guests would have none",
            guest.arch.machine(),
            guest.cpu
        ));
    }
    let patched = source.replace(QEMU_PMU, "\"arm,cortex-a15-pmu\"");
    let dts = file("-a15-pmu.dts");
    std::fs::write(&dts, patched).map_err(|e| format!("{}: {e}", dts.display()))?;
    shell::run(
        Command::new("dtc")
            .args(["-q", "-I", "dts", "-O", "dtb", "-o"])
            .arg(&out)
            .arg(&dts),
    )?;
    Ok(out)
}

/// Boots a guest, writing its console to `log`.
pub fn boot(
    guest: &Guest,
    kernel: &Path,
    initrd: &Path,
    dtb: Option<&Path>,
    break_switch: bool,
    log: &Path,
    timeout: Duration,
) -> Result<Boot> {
    let mut cmd = command(guest, kernel, initrd, dtb, break_switch);
    eprintln!("$ {}", shell::show(&cmd));
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", guest.arch.qemu()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let mut file =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    // Each console line with the host time it was complete at (`SECS LINE`):
    // where a guest's time went, test by test.
    let times_path = log.with_extension("times");
    let mut times = std::fs::File::create(&times_path)
        .map_err(|e| format!("cannot create {}: {e}", times_path.display()))?;
    // Milliseconds from `started` to the console's last output.
    let last_output = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&last_output);
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut marks = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
            let _ = file.write_all(&buf[..n]);
            let line_start = all.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            all.extend_from_slice(&buf[..n]);
            // Host time of each marker line completed by this read.
            let secs = started.elapsed().as_secs_f64();
            let complete: Vec<&[u8]> = all[line_start..].split(|b| *b == b'\n').collect();
            for line in &complete[..complete.len() - 1] {
                let _ = write!(times, "{secs:.3} ");
                let _ = times.write_all(line);
                let _ = times.write_all(b"\n");
            }
            for line in complete.iter().rev().skip(1) {
                let line = String::from_utf8_lossy(line);
                let line = line.trim_end();
                if line.starts_with(marker::UP) {
                    marks.push(("boot".to_owned(), secs));
                } else if let Some(rest) = line.strip_prefix("LAB-END ") {
                    let name = rest.split_whitespace().next().unwrap_or(rest);
                    marks.push((name.to_owned(), secs));
                }
            }
        }
        (all, marks)
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        let elapsed = started.elapsed();
        let silent =
            elapsed.saturating_sub(Duration::from_millis(last_output.load(Ordering::Relaxed)));
        if silent > timeout || elapsed > timeout * TOTAL_LIMIT_FACTOR {
            timed_out = true;
            let _ = child.kill();
            break child.wait().map_err(|e| e.to_string())?;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (bytes, mut marks) = reader.join().unwrap_or_default();
    // Lines completed by one read were pushed last first.
    marks.sort_by(|a, b| a.1.total_cmp(&b.1));
    let qemu_errors = errors.join().unwrap_or_default();
    let console = String::from_utf8_lossy(&bytes).replace('\r', "");
    let done = console.lines().any(|l| l.trim_end() == marker::DONE);
    if !timed_out && !status.success() && !done {
        return Err(format!(
            "{} exited with {status} before the guest finished:\n{qemu_errors}\n\
             console tail:\n{}",
            guest.arch.qemu(),
            tail(&console, 30)
        ));
    }
    Ok(Boot {
        console,
        done,
        timed_out,
        secs: started.elapsed().as_secs_f64(),
        marks,
    })
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
