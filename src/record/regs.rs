//! Sampled registers by name (PERF_SAMPLE_REGS_USER / _INTR): the value of
//! a register is found from its number in the architecture's
//! `enum perf_event_<arch>_regs` (`asm/perf_regs.h`) and the attr's mask.
//!
//! The tables below list each architecture's enum in order, with the
//! kernel's names lower-cased (`PERF_REG_X86_IP` is `"ip"`); the test
//! `register_tables_match_the_generated_enums` reads every vendored
//! `src/sys/<arch>.rs` and fails if a name or number differs, so they
//! cannot drift from the generated bindings. All tables are available on
//! every host, so registers captured on another architecture can be named.

use super::sample::Regs;
use crate::sys;

pub(crate) use crate::abi::arch::RegsArch;

/// The register names of one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegNames {
    arch: RegsArch,
    table: &'static [(&'static str, u32)],
}

const X86: &[(&str, u32)] = &[
    ("ax", 0),
    ("bx", 1),
    ("cx", 2),
    ("dx", 3),
    ("si", 4),
    ("di", 5),
    ("bp", 6),
    ("sp", 7),
    ("ip", 8),
    ("flags", 9),
    ("cs", 10),
    ("ss", 11),
    ("ds", 12),
    ("es", 13),
    ("fs", 14),
    ("gs", 15),
    ("r8", 16),
    ("r9", 17),
    ("r10", 18),
    ("r11", 19),
    ("r12", 20),
    ("r13", 21),
    ("r14", 22),
    ("r15", 23),
    ("xmm0", 32),
    ("xmm1", 34),
    ("xmm2", 36),
    ("xmm3", 38),
    ("xmm4", 40),
    ("xmm5", 42),
    ("xmm6", 44),
    ("xmm7", 46),
    ("xmm8", 48),
    ("xmm9", 50),
    ("xmm10", 52),
    ("xmm11", 54),
    ("xmm12", 56),
    ("xmm13", 58),
    ("xmm14", 60),
    ("xmm15", 62),
];
const ARM: &[(&str, u32)] = &[
    ("r0", 0),
    ("r1", 1),
    ("r2", 2),
    ("r3", 3),
    ("r4", 4),
    ("r5", 5),
    ("r6", 6),
    ("r7", 7),
    ("r8", 8),
    ("r9", 9),
    ("r10", 10),
    ("fp", 11),
    ("ip", 12),
    ("sp", 13),
    ("lr", 14),
    ("pc", 15),
];
const ARM64: &[(&str, u32)] = &[
    ("x0", 0),
    ("x1", 1),
    ("x2", 2),
    ("x3", 3),
    ("x4", 4),
    ("x5", 5),
    ("x6", 6),
    ("x7", 7),
    ("x8", 8),
    ("x9", 9),
    ("x10", 10),
    ("x11", 11),
    ("x12", 12),
    ("x13", 13),
    ("x14", 14),
    ("x15", 15),
    ("x16", 16),
    ("x17", 17),
    ("x18", 18),
    ("x19", 19),
    ("x20", 20),
    ("x21", 21),
    ("x22", 22),
    ("x23", 23),
    ("x24", 24),
    ("x25", 25),
    ("x26", 26),
    ("x27", 27),
    ("x28", 28),
    ("x29", 29),
    ("lr", 30),
    ("sp", 31),
    ("pc", 32),
    ("vg", 46),
];
const RISCV: &[(&str, u32)] = &[
    ("pc", 0),
    ("ra", 1),
    ("sp", 2),
    ("gp", 3),
    ("tp", 4),
    ("t0", 5),
    ("t1", 6),
    ("t2", 7),
    ("s0", 8),
    ("s1", 9),
    ("a0", 10),
    ("a1", 11),
    ("a2", 12),
    ("a3", 13),
    ("a4", 14),
    ("a5", 15),
    ("a6", 16),
    ("a7", 17),
    ("s2", 18),
    ("s3", 19),
    ("s4", 20),
    ("s5", 21),
    ("s6", 22),
    ("s7", 23),
    ("s8", 24),
    ("s9", 25),
    ("s10", 26),
    ("s11", 27),
    ("t3", 28),
    ("t4", 29),
    ("t5", 30),
    ("t6", 31),
];
const S390: &[(&str, u32)] = &[
    ("r0", 0),
    ("r1", 1),
    ("r2", 2),
    ("r3", 3),
    ("r4", 4),
    ("r5", 5),
    ("r6", 6),
    ("r7", 7),
    ("r8", 8),
    ("r9", 9),
    ("r10", 10),
    ("r11", 11),
    ("r12", 12),
    ("r13", 13),
    ("r14", 14),
    ("r15", 15),
    ("fp0", 16),
    ("fp1", 17),
    ("fp2", 18),
    ("fp3", 19),
    ("fp4", 20),
    ("fp5", 21),
    ("fp6", 22),
    ("fp7", 23),
    ("fp8", 24),
    ("fp9", 25),
    ("fp10", 26),
    ("fp11", 27),
    ("fp12", 28),
    ("fp13", 29),
    ("fp14", 30),
    ("fp15", 31),
    ("mask", 32),
    ("pc", 33),
];
const POWERPC: &[(&str, u32)] = &[
    ("r0", 0),
    ("r1", 1),
    ("r2", 2),
    ("r3", 3),
    ("r4", 4),
    ("r5", 5),
    ("r6", 6),
    ("r7", 7),
    ("r8", 8),
    ("r9", 9),
    ("r10", 10),
    ("r11", 11),
    ("r12", 12),
    ("r13", 13),
    ("r14", 14),
    ("r15", 15),
    ("r16", 16),
    ("r17", 17),
    ("r18", 18),
    ("r19", 19),
    ("r20", 20),
    ("r21", 21),
    ("r22", 22),
    ("r23", 23),
    ("r24", 24),
    ("r25", 25),
    ("r26", 26),
    ("r27", 27),
    ("r28", 28),
    ("r29", 29),
    ("r30", 30),
    ("r31", 31),
    ("nip", 32),
    ("msr", 33),
    ("orig_r3", 34),
    ("ctr", 35),
    ("link", 36),
    ("xer", 37),
    ("ccr", 38),
    ("softe", 39),
    ("trap", 40),
    ("dar", 41),
    ("dsisr", 42),
    ("sier", 43),
    ("mmcra", 44),
    ("mmcr0", 45),
    ("mmcr1", 46),
    ("mmcr2", 47),
    ("mmcr3", 48),
    ("sier2", 49),
    ("sier3", 50),
    ("pmc1", 51),
    ("pmc2", 52),
    ("pmc3", 53),
    ("pmc4", 54),
    ("pmc5", 55),
    ("pmc6", 56),
    ("sdar", 57),
    ("siar", 58),
];
const LOONGARCH: &[(&str, u32)] = &[
    ("pc", 0),
    ("r1", 1),
    ("r2", 2),
    ("r3", 3),
    ("r4", 4),
    ("r5", 5),
    ("r6", 6),
    ("r7", 7),
    ("r8", 8),
    ("r9", 9),
    ("r10", 10),
    ("r11", 11),
    ("r12", 12),
    ("r13", 13),
    ("r14", 14),
    ("r15", 15),
    ("r16", 16),
    ("r17", 17),
    ("r18", 18),
    ("r19", 19),
    ("r20", 20),
    ("r21", 21),
    ("r22", 22),
    ("r23", 23),
    ("r24", 24),
    ("r25", 25),
    ("r26", 26),
    ("r27", 27),
    ("r28", 28),
    ("r29", 29),
    ("r30", 30),
    ("r31", 31),
];
const MIPS: &[(&str, u32)] = &[
    ("pc", 0),
    ("r1", 1),
    ("r2", 2),
    ("r3", 3),
    ("r4", 4),
    ("r5", 5),
    ("r6", 6),
    ("r7", 7),
    ("r8", 8),
    ("r9", 9),
    ("r10", 10),
    ("r11", 11),
    ("r12", 12),
    ("r13", 13),
    ("r14", 14),
    ("r15", 15),
    ("r16", 16),
    ("r17", 17),
    ("r18", 18),
    ("r19", 19),
    ("r20", 20),
    ("r21", 21),
    ("r22", 22),
    ("r23", 23),
    ("r24", 24),
    ("r25", 25),
    ("r26", 26),
    ("r27", 27),
    ("r28", 28),
    ("r29", 29),
    ("r30", 30),
    ("r31", 31),
];

impl RegNames {
    /// The names of `arch`'s registers.
    pub const fn of(arch: RegsArch) -> RegNames {
        let table = match arch {
            RegsArch::X86 => X86,
            RegsArch::Arm => ARM,
            RegsArch::Arm64 => ARM64,
            RegsArch::Riscv => RISCV,
            RegsArch::S390 => S390,
            RegsArch::Powerpc => POWERPC,
            RegsArch::Loongarch => LOONGARCH,
            RegsArch::Mips => MIPS,
        };
        RegNames { arch, table }
    }

    /// The architecture this code was built for, if it has a register ABI
    /// (sparc64 has none). The table is the kernel's enum, shared by the
    /// 32- and 64-bit variants: for 32-bit x86 code keep to the registers
    /// [`RegNames::in_abi`] gives `PERF_SAMPLE_REGS_ABI_32` (a 32-bit
    /// kernel refuses `r8`-`r15` in `sample_regs_user` with EINVAL).
    pub const fn native() -> Option<RegNames> {
        let Some(arch) = crate::abi::arch::TARGET.regs else {
            return None;
        };
        Some(RegNames::of(arch))
    }

    /// The architecture.
    pub const fn arch(&self) -> RegsArch {
        self.arch
    }

    /// The register number (`PERF_REG_*`) of `name` (lower case, as the
    /// kernel's enum without its prefix: `"ip"`, `"sp"`, `"x29"`, `"r15"`).
    pub fn number(&self, name: &str) -> Option<u32> {
        self.table.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
    }

    /// The name of register number `reg`.
    pub fn name(&self, reg: u32) -> Option<&'static str> {
        self.table.iter().find(|(_, r)| *r == reg).map(|(n, _)| *n)
    }

    /// Whether register `reg` exists for tasks of register ABI `abi`
    /// (`PERF_SAMPLE_REGS_ABI_*`): on x86, 32-bit tasks have only the
    /// registers below `PERF_REG_X86_32_MAX` (and the XMM registers).
    pub fn in_abi(&self, reg: u32, abi: u64) -> bool {
        if abi == sys::PERF_SAMPLE_REGS_ABI_NONE as u64 {
            return false;
        }
        if self.arch == RegsArch::X86 && abi == sys::PERF_SAMPLE_REGS_ABI_32 as u64 {
            // PERF_REG_X86_32_MAX, PERF_REG_X86_XMM0.
            return !(16..32).contains(&reg);
        }
        true
    }

    /// `(name, value)` of every register of `mask` present in `regs`, in
    /// mask order.
    pub fn named<'r>(
        &'r self,
        regs: &'r Regs<'_>,
        mask: u64,
    ) -> impl Iterator<Item = (&'static str, u64)> + 'r {
        (0..64u32)
            .filter(move |r| mask & (1 << r) != 0)
            .filter_map(move |r| Some((self.name(r)?, regs.value(r, mask)?)))
    }
}

impl Regs<'_> {
    /// The value of register number `reg` given the attr's register mask
    /// (`sample_regs_user` or `sample_regs_intr`): `None` when the mask does
    /// not hold it or the sample has no registers (ABI_NONE).
    pub fn value(&self, reg: u32, mask: u64) -> Option<u64> {
        if reg >= 64 || mask & (1 << reg) == 0 || self.abi == 0 {
            return None;
        }
        self.values
            .get((mask & ((1u64 << reg) - 1)).count_ones() as usize)
    }

    /// The value of register `name` of architecture `names`, honouring the
    /// sample's ABI word (see [`RegNames::in_abi`]).
    pub fn get(&self, names: &RegNames, name: &str, mask: u64) -> Option<u64> {
        let reg = names.number(name)?;
        if !names.in_abi(reg, self.abi) {
            return None;
        }
        self.value(reg, mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(not(miri))]
    use std::string::String;

    // Reads the generated src/sys files: file I/O, which miri's isolation
    // refuses; `cargo test` runs it.
    #[cfg(not(miri))]
    #[test]
    fn register_tables_match_the_generated_enums() {
        let files = [
            (RegsArch::X86, "x86_64", "PERF_REG_X86_"),
            (RegsArch::X86, "x86", "PERF_REG_X86_"),
            (RegsArch::Arm, "arm", "PERF_REG_ARM_"),
            (RegsArch::Arm64, "aarch64", "PERF_REG_ARM64_"),
            (RegsArch::Riscv, "riscv64", "PERF_REG_RISCV_"),
            (RegsArch::S390, "s390x", "PERF_REG_S390_"),
            (RegsArch::Powerpc, "powerpc64", "PERF_REG_POWERPC_"),
            (RegsArch::Powerpc, "powerpc", "PERF_REG_POWERPC_"),
            (RegsArch::Loongarch, "loongarch64", "PERF_REG_LOONGARCH_"),
            (RegsArch::Mips, "mips64", "PERF_REG_MIPS_"),
            (RegsArch::Mips, "mipsel", "PERF_REG_MIPS_"),
        ];
        for (arch, file, prefix) in files {
            let path = std::format!("{}/src/sys/{file}.rs", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).unwrap();
            let mut generated = std::vec::Vec::new();
            for line in text.lines() {
                let Some(rest) = line.strip_prefix("pub const ") else {
                    continue;
                };
                let Some(rest) = rest.strip_prefix(prefix) else {
                    continue;
                };
                let (name, value) = rest.split_once(':').unwrap();
                if name.ends_with("MAX") {
                    continue;
                }
                let value: u32 = value
                    .rsplit('=')
                    .next()
                    .unwrap()
                    .trim()
                    .trim_end_matches(';')
                    .parse()
                    .unwrap();
                generated.push((name.to_ascii_lowercase(), value));
            }
            let table: std::vec::Vec<(String, u32)> = RegNames::of(arch)
                .table
                .iter()
                .map(|(n, v)| (String::from(*n), *v))
                .collect();
            assert_eq!(table, generated, "{file}: {arch:?}");
        }
        let native = RegNames::native().unwrap();
        #[cfg(target_arch = "x86_64")]
        assert_eq!(native.number("ip"), Some(sys::PERF_REG_X86_IP));
        assert!(native.table.len() > 10);
    }

    #[test]
    fn values_follow_the_mask_order_and_the_abi() {
        let bytes: std::vec::Vec<u8> = [10u64, 20, 30]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let regs = Regs {
            abi: sys::PERF_SAMPLE_REGS_ABI_32 as u64,
            values: super::super::U64s::new(&bytes, false),
        };
        let x86 = RegNames::of(RegsArch::X86);
        // mask: sp (7), ip (8), r8 (16)
        let mask = (1 << 7) | (1 << 8) | (1 << 16);
        assert_eq!(regs.get(&x86, "sp", mask), Some(10));
        assert_eq!(regs.get(&x86, "ip", mask), Some(20));
        assert_eq!(regs.get(&x86, "r8", mask), None, "no r8 in a 32-bit task");
        assert_eq!(regs.value(16, mask), Some(30));
        assert_eq!(regs.get(&x86, "ax", mask), None, "not in the mask");
        let named: std::vec::Vec<_> = x86.named(&regs, mask).collect();
        assert_eq!(named, [("sp", 10), ("ip", 20), ("r8", 30)]);
    }
}
