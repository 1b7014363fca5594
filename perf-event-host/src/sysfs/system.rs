//! The machine and the running kernel as procfs and sysfs describe them:
//! what perf writes into a perf.data file's feature sections (the CPUs'
//! description, memory, host name) and needs to resolve kernel addresses
//! (the kernel's `_text` and build id).
//!
//! The kernel release is `uname(2)`'s
//! ([`perf_event_core::linux::system::kernel_release`]), the perf sysctls
//! [`Limits`](super::Limits)'.

use super::{read_text, Problem, SysfsError};
use std::io::BufRead;
use std::path::Path;

/// `/proc/cpuinfo`: the architecture's description of each CPU, `key :
/// value` lines (`model name`, `vendor_id`, `cpu family`, ... on x86; `cpu
/// model` on mips, `cpu` on powerpc; the keys are the architecture's own),
/// with the first CPU's lines first.
pub fn cpuinfo() -> Result<String, SysfsError> {
    read_text(Path::new("/proc/cpuinfo"))
}

/// `/proc/meminfo`: the kernel's memory counters, `Key: value kB` lines
/// (`MemTotal:` first: the usable RAM).
pub fn meminfo() -> Result<String, SysfsError> {
    read_text(Path::new("/proc/meminfo"))
}

/// The host name of the caller's UTS namespace: `kernel.hostname`
/// (`/proc/sys/kernel/hostname`, the `nodename` of `uname(2)`), without
/// its newline.
pub fn hostname() -> Result<String, SysfsError> {
    read_text(Path::new("/proc/sys/kernel/hostname")).map(|t| t.trim().to_owned())
}

/// `cpuN/regs/identification/midr_el1` under
/// [`CpuList::DIR`](super::CpuList::DIR) (arm64, since Linux 4.8): CPU
/// `cpu`'s Main ID Register as the kernel prints it (`0x00000000410fd083`),
/// trimmed. Empty where the kernel has no valid value for it; absent on
/// other architectures and older kernels.
pub fn midr_el1(cpu: u32) -> Result<String, SysfsError> {
    let path =
        Path::new(super::CpuList::DIR).join(format!("cpu{cpu}/regs/identification/midr_el1"));
    read_text(&path).map(|t| t.trim().to_owned())
}

/// `/sys/kernel/notes` (since Linux 2.6.23): the running kernel's ELF note
/// section, 4-byte aligned notes, among them its GNU build id.
pub fn kernel_notes() -> Result<Vec<u8>, SysfsError> {
    let path = Path::new("/sys/kernel/notes");
    std::fs::read(path).map_err(|e| SysfsError::new(path, Problem::Io(e)))
}

/// The address of the kernel symbol `name` (`_text`, ...) from
/// `/proc/kallsyms`, `address type name [module]` lines: the first line
/// naming it with a hexadecimal address. Read line by line up to that
/// line (the file is over a hundred thousand lines the kernel formats on
/// read, and `_text` is among the first). `None` when the file cannot be
/// read or names no such symbol. The address is 0 where the kernel hides
/// addresses from the caller (`kernel.kptr_restrict`, since Linux 2.6.38:
/// 1 hides them without CAP_SYSLOG, 2 from everyone).
pub fn kallsyms_address(name: &str) -> Option<u64> {
    let file = std::fs::File::open("/proc/kallsyms").ok()?;
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            let mut w = l.split_whitespace();
            let (addr, _, symbol) = (w.next()?, w.next()?, w.next()?);
            (symbol == name).then(|| u64::from_str_radix(addr, 16).ok())?
        })
}
