//! What the lab boots: guest architectures, their QEMU machines and CPU
//! models, and what each guest provides to the tests that need it.

use super::kernels::Kernel;

/// A guest architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arch {
    /// 64-bit Arm: `-M virt`, an emulated PMUv3 user space can read.
    Aarch64,
    /// x86_64: `-M q35`; TCG emulates no PMU, so it serves older kernels.
    X86_64,
}

impl Arch {
    /// Both guest architectures.
    pub const ALL: [Arch; 2] = [Arch::Aarch64, Arch::X86_64];

    /// Debian's name for it.
    pub fn debian(self) -> &'static str {
        match self {
            Arch::Aarch64 => "arm64",
            Arch::X86_64 => "amd64",
        }
    }

    /// The Rust target the guest test binaries are built for: static musl.
    pub fn rust_target(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64-unknown-linux-musl",
            Arch::X86_64 => "x86_64-unknown-linux-musl",
        }
    }

    /// How `uname -m` and the matrix name it.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64",
            Arch::X86_64 => "x86_64",
        }
    }

    /// The QEMU system emulator.
    pub fn qemu(self) -> &'static str {
        match self {
            Arch::Aarch64 => "qemu-system-aarch64",
            Arch::X86_64 => "qemu-system-x86_64",
        }
    }

    /// Machine arguments before `-cpu`.
    pub fn machine(self) -> &'static [&'static str] {
        match self {
            Arch::Aarch64 => &["-M", "virt", "-m", "1024"],
            Arch::X86_64 => &["-M", "q35", "-m", "512"],
        }
    }

    /// The serial console device for the kernel command line.
    pub fn console(self) -> &'static str {
        match self {
            Arch::Aarch64 => "ttyAMA0",
            Arch::X86_64 => "ttyS0",
        }
    }
}

/// A need a test can declare in its `LAB-NOT-APPLICABLE` line
/// (`tests/lab_support/mod.rs` defines the same tokens).
pub const NEED_AARCH64_PMU: &str = "aarch64-pmu";

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
    /// Needs (see [`NEED_AARCH64_PMU`]) whose tests must pass here.
    pub provides: &'static [&'static str],
    /// A guest of the newest Debian kernel: counted only if it boots.
    pub best_effort: bool,
}

/// `-icount shift=0`: instructions retire at a fixed rate, so the emulated
/// PMU's instruction counter moves (without it INST_RETIRED never counts).
const ICOUNT: &[&str] = &["-icount", "shift=0"];

/// The guests for the fetched kernels: every aarch64 kernel with `-cpu max`
/// (PMUv3 with 64-bit event counters), the 6.12 aarch64 kernel also with
/// `-cpu cortex-a72` (32-bit event counters only), every x86_64 kernel.
pub fn for_kernels(kernels: &[Kernel]) -> Vec<Guest> {
    let mut guests = Vec::new();
    for kernel in kernels {
        let series = &kernel.series;
        match kernel.arch {
            Arch::Aarch64 => {
                guests.push(Guest {
                    label: format!("a64 {series} max"),
                    arch: Arch::Aarch64,
                    kernel: kernel.clone(),
                    cpu: "max,pmu=on",
                    extra: ICOUNT,
                    provides: &[NEED_AARCH64_PMU],
                    best_effort: kernel.newest,
                });
                if series == "6.12" {
                    guests.push(Guest {
                        label: format!("a64 {series} a72"),
                        arch: Arch::Aarch64,
                        kernel: kernel.clone(),
                        cpu: "cortex-a72",
                        extra: ICOUNT,
                        provides: &[NEED_AARCH64_PMU],
                        best_effort: false,
                    });
                }
            }
            Arch::X86_64 => guests.push(Guest {
                label: format!("x86 {series}"),
                arch: Arch::X86_64,
                kernel: kernel.clone(),
                cpu: "max",
                extra: &[],
                provides: &[],
                best_effort: kernel.newest,
            }),
        }
    }
    guests.sort_by(|a, b| (a.arch, &a.kernel.order).cmp(&(b.arch, &b.kernel.order)));
    guests
}
