//! What the lab boots: guest architectures, their QEMU machines and CPU
//! models, how their test binaries are built, and what each guest provides
//! to the tests that need it.

use super::kernels::Kernel;

/// A guest architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arch {
    /// x86_64: `-M q35`; TCG emulates no PMU, so it serves older kernels.
    X86_64,
    /// 64-bit Arm: `-M virt`, an emulated PMUv3 user space can read.
    Aarch64,
    /// 64-bit RISC-V: `-M virt` with OpenSBI; `-cpu max` has Sscofpmf, so
    /// the SBI PMU driver counts user-only cycles and instructions, and
    /// user space reads them with `csrr`.
    Riscv64,
    /// IBM Z, big-endian: `-M s390-ccw-virtio`, no PMU (software events,
    /// tracepoints and rings).
    S390x,
    /// 32-bit Arm (ARMv7, hard float): `-M virt -cpu max` with the PMU node
    /// of the device tree made `arm,cortex-a15-pmu`, which these kernels
    /// bind; no user-space counter access on arm32.
    Armhf,
    /// 64-bit POWER, little-endian: `-M pseries,x-vof=on -cpu POWER10` (VOF, console
    /// `hvc0`). QEMU 10's TCG implements the POWER PMU (PMC1-6 with PMC5
    /// instructions and PMC6 cycles) and the kernel binds it (`cpu` PMU,
    /// `caps/pmu_name` POWER10): cycles and instructions count through
    /// `read(2)`; powerpc gives user space no counter read
    /// (`cap_user_rdpmc` 0). The ioctl encoding of its own: 13-bit size,
    /// 3 direction bits.
    Ppc64el,
    /// 64-bit MIPS, little-endian (n64): `-M malta -cpu MIPS64R2-generic`
    /// with Debian's `5kc-malta` kernel, console `ttyS0`. No PMU: QEMU
    /// implements no MIPS performance counters (the kernel says "Performance
    /// counters: Either hardware does not support performance counters, or
    /// not yet implemented"), and no breakpoint PMU. Its own ioctl
    /// direction bits and syscall numbers (n64: 5000 + n). The kernel's
    /// `syscalls:*` tracepoints never fire for n64 programs (they are
    /// mapped to the n32 numbers only); `raw_syscalls` do.
    Mips64el,
    /// 32-bit x86: `-M pc -cpu max` with Debian's `686-pae` kernels (on
    /// `q35` the 6.1 kernel stops after "isapnp: Scanning for PnP cards"
    /// and never reaches init), console `ttyS0`. No PMU (TCG
    /// emulates none, as on x86_64); the breakpoint PMU exists. 32-bit
    /// pointers in the ioctl arguments (where other Rust perf crates met
    /// EFAULT).
    I386,
}

impl Arch {
    /// Every guest architecture.
    pub const ALL: [Arch; 8] = [
        Arch::X86_64,
        Arch::Aarch64,
        Arch::Riscv64,
        Arch::S390x,
        Arch::Armhf,
        Arch::Ppc64el,
        Arch::Mips64el,
        Arch::I386,
    ];

    /// Debian's name for it.
    pub fn debian(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Aarch64 => "arm64",
            Arch::Riscv64 => "riscv64",
            Arch::S390x => "s390x",
            Arch::Armhf => "armhf",
            Arch::Ppc64el => "ppc64el",
            Arch::Mips64el => "mips64el",
            Arch::I386 => "i386",
        }
    }

    /// The name `cargo xtask lab --only` and the matrix use.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
            Arch::Riscv64 => "riscv64",
            Arch::S390x => "s390x",
            Arch::Armhf => "armhf",
            Arch::Ppc64el => "ppc64el",
            Arch::Mips64el => "mips64el",
            Arch::I386 => "i386",
        }
    }

    /// The architecture called `name` (`--only`).
    pub fn from_name(name: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Short prefix of the matrix's column labels.
    pub fn short(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86",
            Arch::Aarch64 => "a64",
            Arch::Riscv64 => "rv64",
            Arch::S390x => "s390x",
            Arch::Armhf => "armhf",
            Arch::Ppc64el => "ppc64",
            Arch::Mips64el => "mips64",
            Arch::I386 => "i386",
        }
    }

    /// The Rust target the guest test binaries are built for. Static musl
    /// where rustup serves it; riscv64 and s390x musl are not served, so
    /// those (and armhf, ppc64el, mips64el, i386) are glibc targets linked
    /// statically (`crt-static`) by Debian's cross gcc. rustup serves no
    /// standard library for mips64el at all: it is built from source
    /// ([`Arch::build_std`]).
    pub fn rust_target(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64-unknown-linux-musl",
            Arch::Aarch64 => "aarch64-unknown-linux-musl",
            Arch::Riscv64 => "riscv64gc-unknown-linux-gnu",
            Arch::S390x => "s390x-unknown-linux-gnu",
            Arch::Armhf => "armv7-unknown-linux-gnueabihf",
            Arch::Ppc64el => "powerpc64le-unknown-linux-gnu",
            Arch::Mips64el => "mips64el-unknown-linux-gnuabi64",
            Arch::I386 => "i686-unknown-linux-gnu",
        }
    }

    /// Whether the standard library is built from source with the nightly
    /// toolchain (`cargo +nightly test -Zbuild-std`, rust-src): the
    /// tier-3 targets rustup serves no `rust-std` for (mips64el).
    pub fn build_std(self) -> bool {
        matches!(self, Arch::Mips64el)
    }

    /// The linker cargo uses for [`Arch::rust_target`] and the Debian
    /// package that provides it (`None`: the toolchain's own `rust-lld`).
    pub fn linker(self) -> (&'static str, Option<&'static [&'static str]>) {
        match self {
            Arch::X86_64 | Arch::Aarch64 => ("rust-lld", None),
            Arch::Riscv64 => (
                "riscv64-linux-gnu-gcc",
                Some(&["gcc-riscv64-linux-gnu", "libc6-dev-riscv64-cross"]),
            ),
            Arch::S390x => (
                "s390x-linux-gnu-gcc",
                Some(&["gcc-s390x-linux-gnu", "libc6-dev-s390x-cross"]),
            ),
            Arch::Armhf => (
                "arm-linux-gnueabihf-gcc",
                Some(&["gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross"]),
            ),
            Arch::Ppc64el => (
                "powerpc64le-linux-gnu-gcc",
                Some(&["gcc-powerpc64le-linux-gnu", "libc6-dev-ppc64el-cross"]),
            ),
            Arch::Mips64el => (
                "mips64el-linux-gnuabi64-gcc",
                Some(&["gcc-mips64el-linux-gnuabi64", "libc6-dev-mips64el-cross"]),
            ),
            Arch::I386 => (
                "i686-linux-gnu-gcc",
                Some(&["gcc-i686-linux-gnu", "libc6-dev-i386-cross"]),
            ),
        }
    }

    /// Extra `rustflags` for the guest build: glibc targets link statically.
    pub fn rustflags(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 | Arch::Aarch64 => None,
            Arch::Riscv64
            | Arch::S390x
            | Arch::Armhf
            | Arch::Ppc64el
            | Arch::Mips64el
            | Arch::I386 => Some("-C target-feature=+crt-static"),
        }
    }

    /// The QEMU system emulator.
    pub fn qemu(self) -> &'static str {
        match self {
            Arch::X86_64 => "qemu-system-x86_64",
            Arch::Aarch64 => "qemu-system-aarch64",
            Arch::Riscv64 => "qemu-system-riscv64",
            Arch::S390x => "qemu-system-s390x",
            Arch::Armhf => "qemu-system-arm",
            Arch::Ppc64el => "qemu-system-ppc64",
            Arch::Mips64el => "qemu-system-mips64el",
            Arch::I386 => "qemu-system-i386",
        }
    }

    /// The Debian package with [`Arch::qemu`] (bookworm-backports).
    pub fn qemu_package(self) -> &'static str {
        match self {
            Arch::X86_64 | Arch::I386 => "qemu-system-x86",
            Arch::Aarch64 | Arch::Armhf => "qemu-system-arm",
            Arch::Riscv64 => "qemu-system-riscv",
            Arch::S390x => "qemu-system-s390x",
            Arch::Ppc64el => "qemu-system-ppc",
            Arch::Mips64el => "qemu-system-mips",
        }
    }

    /// The QEMU machine (`-M`). ppc64el boots through QEMU's Virtual Open
    /// Firmware (`x-vof=on`, QEMU 6.2 and later) instead of SLOF: the
    /// kernel (an ELF `vmlinux`) is entered directly, where SLOF's
    /// emulated firmware took 15 CPU-s of a 6.1 kernel's boot to a panic
    /// for want of a root, and VOF 5.
    pub fn machine(self) -> &'static str {
        match self {
            Arch::X86_64 => "q35",
            Arch::Aarch64 | Arch::Riscv64 | Arch::Armhf => "virt",
            Arch::S390x => "s390-ccw-virtio",
            Arch::Ppc64el => "pseries,x-vof=on",
            Arch::Mips64el => "malta",
            Arch::I386 => "pc",
        }
    }

    /// Whether the guest boots the kernel's ELF through its PVH entry
    /// instead of the compressed image (`pvh.rs`): x86 of both widths.
    pub fn pvh(self) -> bool {
        matches!(self, Arch::X86_64 | Arch::I386)
    }

    /// The serial console for the kernel command line (`None`: s390x's
    /// SCLP console needs no `console=`).
    pub fn console(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 | Arch::Riscv64 | Arch::Mips64el | Arch::I386 => Some("ttyS0"),
            Arch::Aarch64 | Arch::Armhf => Some("ttyAMA0"),
            // The sPAPR hypervisor console (SLOF's vty).
            Arch::Ppc64el => Some("hvc0"),
            Arch::S390x => None,
        }
    }

    /// Kernel parameters of this architecture's guests. x86 (both widths)
    /// under `-icount`: without them, calibrating the local APIC timer
    /// against an emulated clock (0.22 s of guest time, a busy-wait on
    /// emulated timer reads) took 8 s of a quiet host's time and 40 s of
    /// a loaded one's, and the delay-loop and TSC checks more; the timer
    /// ticks come from the HPET broadcast instead (`noapictimer`), the
    /// delay loop is given (`lpj`) and the TSC trusted (`tsc=reliable`:
    /// under `-icount` it is exact). An x86_64 6.1 guest came up in 45 s
    /// instead of 109-124 s on the loaded host.
    pub fn boot_params(self) -> &'static str {
        match self {
            Arch::X86_64 | Arch::I386 => "noapictimer lpj=4000000 tsc=reliable",
            _ => "",
        }
    }

    /// The Debian meta package whose dependency names sid's newest kernel;
    /// `None` where sid has none for this lab: sid dropped mips64el, and
    /// Debian builds no i386 kernels since trixie.
    pub fn newest_meta(self) -> Option<&'static str> {
        match self {
            Arch::X86_64 => Some("linux-image-amd64"),
            Arch::Aarch64 => Some("linux-image-arm64"),
            Arch::Riscv64 => Some("linux-image-riscv64"),
            Arch::S390x => Some("linux-image-s390x"),
            Arch::Armhf => Some("linux-image-armmp-lpae"),
            Arch::Ppc64el => Some("linux-image-powerpc64le"),
            Arch::Mips64el | Arch::I386 => None,
        }
    }
}

#[path = "../../../tests/support/needs.rs"]
mod needs;
/// Needs a test can declare in its `LAB-NOT-APPLICABLE` line: the one list
/// the tests use too (`tests/support/needs.rs`). A test that is n/a with a
/// token not listed there fails the lab.
pub use needs::Need;

/// One guest: a kernel, a CPU model and the QEMU flags that make it.
#[derive(Clone, Debug)]
pub struct Guest {
    /// Column heading in the matrix, e.g. `a64 6.12 a72`.
    pub label: String,
    /// Guest architecture.
    pub arch: Arch,
    /// The kernel it boots.
    pub kernel: Kernel,
    /// The `-cpu` value.
    pub cpu: &'static str,
    /// Further QEMU flags.
    pub extra: &'static [&'static str],
    /// Whether it boots with a device tree whose PMU node is made
    /// `arm,cortex-a15-pmu` (see `qemu.rs`).
    pub a15_pmu_dtb: bool,
    /// Needs (see [`Need`]) whose tests must pass here.
    pub provides: Vec<Need>,
    /// A guest of the newest Debian kernel: counted only if it boots.
    pub best_effort: bool,
}

/// Virtual CPUs of the guests: per-CPU event sets and rings need several.
pub const CPUS: u32 = 4;

impl Arch {
    /// `-smp` of this architecture's guests: [`CPUS`], except
    ///
    /// - armhf: its Debian armmp kernels on QEMU's 32-bit `virt -cpu max`
    ///   under `-icount` hang with more than one CPU (soft lockups in
    ///   `multi_cpu_stop` at `-smp 2`, no init at `-smp 4`);
    /// - mips64el: QEMU's malta starts secondary CPUs only through the MT
    ///   ASE (34Kf, a 32-bit core) or the CPS of MIPS64 release 6 cores
    ///   (I6400), and neither runs Debian's 64-bit release 2 kernels; with
    ///   `-smp 2` and `MIPS64R2-generic` the guest prints nothing at all
    ///   (and `5kc-malta` has `NR_CPUS=2`).
    ///
    /// so those guests run on one CPU.
    pub fn cpus(self) -> u32 {
        match self {
            Arch::Armhf | Arch::Mips64el => 1,
            _ => CPUS,
        }
    }
}

/// Guest memory in MiB.
pub const MEMORY_MIB: u32 = 1024;

/// `-icount shift=0`: instructions retire at a fixed rate, so the emulated
/// PMU's instruction counter moves (aarch64: without it INST_RETIRED never
/// counts; riscv64: without it the counters follow host time), and guest
/// time follows the guest's work (every guest uses it).
const ICOUNT: &[&str] = &["-icount", "shift=0"];

/// The guests for the fetched kernels: every aarch64 kernel with `-cpu max`
/// (PMUv3 with 64-bit event counters), the 6.12 aarch64 kernel also with
/// `-cpu cortex-a72` (32-bit event counters only), every x86_64, riscv64
/// (`-cpu max`: Sscofpmf), s390x and armhf (`-cpu max`, A15 PMU node)
/// kernel.
pub fn for_kernels(kernels: &[Kernel]) -> Vec<Guest> {
    let mut guests = Vec::new();
    for kernel in kernels {
        let series = &kernel.series;
        let mut base = Guest {
            label: format!("{} {series}", kernel.arch.short()),
            arch: kernel.arch,
            kernel: kernel.clone(),
            cpu: "max",
            extra: &[],
            a15_pmu_dtb: false,
            provides: vec![Need::Tracefs],
            best_effort: kernel.newest,
        };
        if series == "5.10" {
            base.provides.push(Need::Linux510);
        }
        if kernel.arch != Arch::Mips64el {
            base.provides.push(Need::SyscallTracepoints);
        }
        if matches!(kernel.arch, Arch::X86_64 | Arch::Aarch64 | Arch::I386) {
            base.provides.push(Need::HwBreakpoint);
        }
        if matches!(kernel.arch, Arch::X86_64 | Arch::I386) {
            base.provides.push(Need::X86Msr);
            base.provides.push(Need::X86VendorTables);
        }
        if kernel.arch == Arch::Aarch64 {
            base.provides.push(Need::Arm64VendorTables);
        }
        match kernel.arch {
            Arch::Aarch64 => {
                let mut max = base.clone();
                max.label.push_str(" max");
                max.cpu = "max,pmu=on";
                max.extra = ICOUNT;
                max.provides.push(Need::Aarch64Pmu);
                // Linux 5.10 predates perf_user_access (5.17): no user access.
                if series == "5.10" {
                    max.provides.retain(|n| *n != Need::Aarch64Pmu);
                }
                guests.push(max);
                if series == "6.12" {
                    let mut a72 = base;
                    a72.label.push_str(" a72");
                    a72.cpu = "cortex-a72";
                    a72.extra = ICOUNT;
                    a72.provides.push(Need::Aarch64Pmu);
                    a72.provides.push(Need::CortexA72);
                    a72.best_effort = false;
                    guests.push(a72);
                }
            }
            Arch::X86_64 | Arch::S390x | Arch::Mips64el | Arch::I386 => {
                // Without a PMU to count, -icount still matters: with
                // several vCPUs on a busy host, time (task-clock, sample
                // timestamps) would follow host scheduling, not the work.
                base.extra = ICOUNT;
                if kernel.arch == Arch::Mips64el {
                    // A MIPS64 release 2 core with 1 GiB reachable (`5KEf`
                    // sees 256 MiB); `5kc-malta` is built for release 2.
                    base.cpu = "MIPS64R2-generic";
                }
                guests.push(base);
            }
            Arch::Riscv64 => {
                base.extra = ICOUNT;
                base.provides.push(Need::Riscv64Pmu);
                guests.push(base);
            }
            Arch::Armhf => {
                base.extra = ICOUNT;
                base.a15_pmu_dtb = true;
                base.provides.push(Need::ArmhfPmu);
                guests.push(base);
            }
            Arch::Ppc64el => {
                base.cpu = "POWER10";
                base.extra = ICOUNT;
                base.provides.push(Need::Ppc64elPmu);
                guests.push(base);
            }
        }
    }
    guests.sort_by(|a, b| (a.arch, &a.kernel.order).cmp(&(b.arch, &b.kernel.order)));
    guests
}

/// A `--only ARCH[:SERIES]` filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Only {
    /// The architecture.
    pub arch: Arch,
    /// `major.minor`, or every kernel of the architecture.
    pub series: Option<String>,
}

impl Only {
    /// Parses `riscv64` or `riscv64:7.2`.
    pub fn parse(text: &str) -> Result<Only, String> {
        let (arch, series) = match text.split_once(':') {
            Some((a, s)) => (a, Some(s.to_owned())),
            None => (text, None),
        };
        let arch = Arch::from_name(arch).ok_or_else(|| {
            format!(
                "--only {text}: unknown architecture `{arch}`; one of {}",
                Arch::ALL.map(Arch::name).join(", ")
            )
        })?;
        Ok(Only { arch, series })
    }

    /// Whether a guest of `arch` booting a `series` kernel belongs to this
    /// cell.
    pub fn covers(&self, arch: Arch, series: &str) -> bool {
        arch == self.arch && self.series.as_deref().is_none_or(|s| s == series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(arch: Arch, series: &str) -> Kernel {
        Kernel {
            arch,
            series: series.to_owned(),
            order: super::super::kernels::series_order(series),
            package: String::new(),
            version: String::new(),
            image: std::path::PathBuf::new(),
            newest: false,
        }
    }

    #[test]
    fn every_architecture_is_found_by_its_name() {
        for arch in Arch::ALL {
            assert_eq!(Arch::from_name(arch.name()), Some(arch));
            assert_eq!(Only::parse(arch.name()).map(|o| o.arch), Ok(arch));
        }
        assert!(Only::parse("sparc64").is_err());
    }

    #[test]
    fn every_need_is_one_row_of_the_shared_list_and_a_guest_provides_it() {
        let kernels: Vec<Kernel> = Arch::ALL
            .iter()
            // 6.12: the aarch64 a72 guest (cortex-a72) is that series' only.
            .flat_map(|a| [kernel(*a, "5.10"), kernel(*a, "6.1"), kernel(*a, "6.12")])
            .collect();
        let guests = for_kernels(&kernels);
        // The tests report needs through the same list (no second one).
        let support =
            std::fs::read_to_string(crate::shell::root().join("tests/support/lab_support.rs"))
                .expect("tests/support/lab_support.rs");
        assert!(
            support.contains("#[path = \"needs.rs\"]") && support.contains("pub use needs::Need;")
        );
        assert!(!support.contains("enum Need"));
        for (i, need) in Need::ALL.iter().enumerate() {
            assert_eq!(Need::from_token(need.token()), Some(*need), "{need:?}");
            assert!(!Need::ALL[..i].iter().any(|n| n.token() == need.token()));
            assert!(!need.meaning().is_empty());
            // Only the perf tool is the host's alone.
            let provided = guests.iter().any(|g| g.provides.contains(need));
            assert_eq!(provided, *need != Need::PerfTool, "{need:?}");
        }
        assert_eq!(Need::from_token("no-such-need"), None);
        let provides = |arch: Arch, need: Need| {
            guests
                .iter()
                .filter(|g| g.arch == arch)
                .all(|g| g.provides.contains(&need))
        };
        assert!(provides(Arch::Ppc64el, Need::Ppc64elPmu));
        assert!(provides(Arch::I386, Need::HwBreakpoint));
        assert!(!provides(Arch::Ppc64el, Need::HwBreakpoint));
        assert!(!provides(Arch::Mips64el, Need::HwBreakpoint));
        assert!(!provides(Arch::Mips64el, Need::SyscallTracepoints));
        assert!(provides(Arch::S390x, Need::SyscallTracepoints));
        assert_eq!(Arch::Mips64el.cpus(), 1);
        assert_eq!(Arch::Ppc64el.cpus(), CPUS);
        assert!(Arch::Mips64el.build_std() && !Arch::I386.build_std());
        assert_eq!(Arch::I386.newest_meta(), None);
    }
}
