//! The one list of what a test may need that a machine may lack: each need's
//! token (the `needs=` field of `LAB-NOT-APPLICABLE`, the summary's "needs
//! TOKEN") and what it means. Included by `#[path]` in both places that use
//! it, so they cannot disagree:
//!
//! - `tests/support/lab_support.rs`, where a test reports that it did not
//!   run here (`not_applicable(Need::Tracefs, reason)`);
//! - `xtask/src/lab/guests.rs`, which says which lab guest provides which
//!   need (a test that is n/a with a need it does not know fails the lab).
//!
//! A new need is one row of the table below, and the guests that provide it
//! in `xtask/src/lab/guests.rs` (`for_kernels`).

macro_rules! needs {
    ($($variant:ident => $token:literal: $meaning:literal,)*) => {
        /// Something a test needs that a machine may lack. The token is
        /// what the lab matches against the guests that provide it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Need {
            $(
                #[doc = $meaning]
                $variant,
            )*
        }

        impl Need {
            /// Every need, in the order of the table.
            pub const ALL: &'static [Need] = &[$(Need::$variant),*];

            /// The token in the `needs=` field (`aarch64-pmu`).
            pub const fn token(self) -> &'static str {
                match self {
                    $(Need::$variant => $token,)*
                }
            }

            /// What the need means, and which machines provide it.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(Need::$variant => $meaning,)*
                }
            }

            /// The need whose token is `token`.
            pub fn from_token(token: &str) -> Option<Need> {
                Need::ALL.iter().copied().find(|n| n.token() == token)
            }
        }
    };
}

needs! {
    Aarch64Pmu => "aarch64-pmu":
        "An aarch64 PMUv3 with user-space counter access: the hardware events open, and \
         `/proc/sys/kernel/perf_user_access` is 1 (counters read with `mrs`; the lab's \
         aarch64 guests but 5.10, which predates perf_user_access).",
    Riscv64Pmu => "riscv64-pmu":
        "A riscv64 SBI PMU with Sscofpmf (user-only hardware events open) and \
         `perf_user_access` = 1: user space reads counters with `csrr` (the lab's riscv64 \
         guests, `-cpu max`).",
    ArmhfPmu => "armhf-pmu":
        "A 32-bit Arm PMU the kernel binds (`armv7_cortex_a15` in the lab's armhf guests): \
         hardware events count through `read(2)`.",
    Ppc64elPmu => "ppc64el-pmu":
        "A 64-bit POWER PMU the kernel binds (QEMU's pseries POWER10 in the lab's ppc64el \
         guests): hardware events count through `read(2)`.",
    Linux510 => "linux-5.10":
        "A Linux 5.10 kernel: attr size VER6, no VER7 fields (the lab's x86_64, aarch64 \
         and i386 5.10 guests).",
    Tracefs => "tracefs":
        "A tracefs mount (or the right to mount it at /sys/kernel/tracing): tracepoint ids \
         (every lab guest).",
    SyscallTracepoints => "syscall-tracepoints":
        "Per-syscall tracepoints (`syscalls:sys_enter_*`) that fire for this code's system \
         calls: every lab guest but mips64el (a 64-bit MIPS kernel maps them to the n32 \
         syscall numbers only, so an n64 program's calls never fire them; `raw_syscalls` \
         do).",
    X86Msr => "x86-msr":
        "The x86 `msr` PMU (`arch/x86/events/msr.c`): `msr/tsc/`, aperf, mperf (the lab's \
         x86_64 and i386 guests).",
    PerfTool => "perf-tool":
        "The perf tool (Debian `linux-perf`) and the right to `perf record`: the tests that \
         compare this crate with perf's own decoding (the host only, when installed; no \
         lab guest has it).",
    CortexA72 => "cortex-a72":
        "An aarch64 CPU that is a Cortex-A72 (MIDR 0x410fd08x), whose PMU counts: perf's \
         vendor table arm/cortex-a57-a72 applies (the lab's aarch64 6.12 a72 guest, QEMU \
         `-cpu cortex-a72`).",
    X86VendorTables => "x86-vendor-tables":
        "perf's x86 vendor tables in the binary: perf-event-vendor embeds the target's \
         architecture's only (the host, the lab's x86_64 and i386 guests).",
    Arm64VendorTables => "arm64-vendor-tables":
        "perf's arm64 vendor tables in the binary, sys tables included: perf-event-vendor \
         embeds the target's architecture's only (the lab's aarch64 guests).",
    HwBreakpoint => "hw-breakpoint":
        "A hardware write breakpoint that fires: the `breakpoint` PMU opens a write \
         watchpoint and a watched write counts (the lab's x86_64, aarch64 and i386 guests; \
         QEMU's riscv64, s390x and mips64el have no breakpoint PMU, its 32-bit Arm answers \
         ENODEV, its pseries accepts a breakpoint that never fires).",
}
