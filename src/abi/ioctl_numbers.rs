//! ioctl request numbers composed by `const fn`, per architecture family.
//!
//! Linux encodes an ioctl request as direction | size | type | number
//! (`_IOC` in `asm/ioctl.h`), but the field widths and direction values
//! differ by architecture. [`Encoding`] reproduces each family; the
//! `PERF_EVENT_IOC_*` constants below are composed for the compilation
//! target and asserted equal to the values clang computed in [`crate::sys`]
//! (at compile time, for every target the crate is built for).

use core::mem::size_of;

/// One architecture family's `_IOC` layout.
///
/// | family    | architectures                                   | dir bits | size bits | NONE / WRITE / READ |
/// |-----------|-------------------------------------------------|----------|-----------|---------------------|
/// | `Generic` | x86, arm, aarch64, riscv, s390, loongarch, ...  | 2 @ 30   | 14 @ 16   | 0 / 1 / 2           |
/// | `Powerpc` | powerpc, powerpc64                              | 3 @ 29   | 13 @ 16   | 1 / 4 / 2           |
/// | `Mips`    | mips, mips64                                    | 3 @ 29   | 13 @ 16   | 1 / 4 / 2           |
/// | `Sparc`   | sparc, sparc64                                  | 3 @ 29   | 13 @ 16   | 1 / 4 / 2           |
/// | `Alpha`   | alpha                                           | 3 @ 29   | 13 @ 16   | 1 / 4 / 2           |
///
/// The four non-generic families share numbers today but are distinct in the
/// kernel (`arch/*/include/uapi/asm/ioctl.h`) and are kept apart here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Encoding {
    /// `include/uapi/asm-generic/ioctl.h`.
    Generic,
    /// `arch/powerpc/include/uapi/asm/ioctl.h`.
    Powerpc,
    /// `arch/mips/include/uapi/asm/ioctl.h`.
    Mips,
    /// `arch/sparc/include/uapi/asm/ioctl.h`.
    Sparc,
    /// `arch/alpha/include/uapi/asm/ioctl.h`.
    Alpha,
}

/// Transfer direction of an ioctl, from user space's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `_IOC_NONE`: no data.
    None,
    /// `_IOC_WRITE`: user space writes, the kernel reads.
    Write,
    /// `_IOC_READ`: the kernel writes, user space reads.
    Read,
    /// `_IOC_READ | _IOC_WRITE`.
    ReadWrite,
}

impl Encoding {
    /// The encoding of the compilation target.
    pub const TARGET: Encoding = super::arch::TARGET.ioctl;

    /// Width of the size field in bits (`_IOC_SIZEBITS`).
    pub const fn size_bits(self) -> u32 {
        match self {
            Encoding::Generic => 14,
            _ => 13,
        }
    }

    /// Bit position of the direction field (`_IOC_DIRSHIFT`).
    pub const fn dir_shift(self) -> u32 {
        16 + self.size_bits()
    }

    /// The direction field's value for `dir`.
    pub const fn dir_value(self, dir: Direction) -> u32 {
        let (none, write, read) = match self {
            Encoding::Generic => (0, 1, 2),
            _ => (1, 4, 2),
        };
        match dir {
            Direction::None => none,
            Direction::Write => write,
            Direction::Read => read,
            Direction::ReadWrite => read | write,
        }
    }

    /// `_IOC(dir, type, nr, size)`. Sizes that do not fit the size field
    /// are a compile-time error when evaluated in a constant.
    pub const fn ioc(self, dir: Direction, ty: u8, nr: u8, size: usize) -> u32 {
        assert!(
            size < (1 << self.size_bits()),
            "ioctl argument too large for _IOC_SIZEBITS"
        );
        (self.dir_value(dir) << self.dir_shift())
            | ((size as u32) << 16)
            | ((ty as u32) << 8)
            | nr as u32
    }

    /// `_IO(type, nr)`.
    pub const fn io(self, ty: u8, nr: u8) -> u32 {
        self.ioc(Direction::None, ty, nr, 0)
    }

    /// `_IOR(type, nr, T)` with `size = sizeof(T)`.
    pub const fn ior(self, ty: u8, nr: u8, size: usize) -> u32 {
        self.ioc(Direction::Read, ty, nr, size)
    }

    /// `_IOW(type, nr, T)` with `size = sizeof(T)`.
    pub const fn iow(self, ty: u8, nr: u8, size: usize) -> u32 {
        self.ioc(Direction::Write, ty, nr, size)
    }

    /// `_IOWR(type, nr, T)` with `size = sizeof(T)`.
    pub const fn iowr(self, ty: u8, nr: u8, size: usize) -> u32 {
        self.ioc(Direction::ReadWrite, ty, nr, size)
    }

    /// Every `PERF_EVENT_IOC_*` request of `linux/perf_event.h` for this
    /// encoding and a pointer size in bytes (several take a pointer type as
    /// their `_IOC` size argument), in the header's order, with the version
    /// of Linux that added it.
    pub const fn perf_requests(self, pointer_size: usize) -> [PerfIoctl; 12] {
        const T: u8 = b'$';
        let p = pointer_size;
        [
            PerfIoctl::new("PERF_EVENT_IOC_ENABLE", self.io(T, 0), "2.6.31"),
            PerfIoctl::new("PERF_EVENT_IOC_DISABLE", self.io(T, 1), "2.6.31"),
            PerfIoctl::new("PERF_EVENT_IOC_REFRESH", self.io(T, 2), "2.6.31"),
            PerfIoctl::new("PERF_EVENT_IOC_RESET", self.io(T, 3), "2.6.31"),
            PerfIoctl::new(
                "PERF_EVENT_IOC_PERIOD",
                self.iow(T, 4, size_of::<u64>()),
                "2.6.36",
            ),
            PerfIoctl::new("PERF_EVENT_IOC_SET_OUTPUT", self.io(T, 5), "2.6.36"),
            PerfIoctl::new("PERF_EVENT_IOC_SET_FILTER", self.iow(T, 6, p), "2.6.32"),
            PerfIoctl::new("PERF_EVENT_IOC_ID", self.ior(T, 7, p), "3.12"),
            PerfIoctl::new(
                "PERF_EVENT_IOC_SET_BPF",
                self.iow(T, 8, size_of::<u32>()),
                "4.1",
            ),
            PerfIoctl::new(
                "PERF_EVENT_IOC_PAUSE_OUTPUT",
                self.iow(T, 9, size_of::<u32>()),
                "4.7",
            ),
            PerfIoctl::new("PERF_EVENT_IOC_QUERY_BPF", self.iowr(T, 10, p), "4.16"),
            PerfIoctl::new(
                "PERF_EVENT_IOC_MODIFY_ATTRIBUTES",
                self.iow(T, 11, p),
                "4.17",
            ),
        ]
    }
}

/// One perf ioctl request: its name in `linux/perf_event.h`, its number,
/// and the Linux version that introduced it (perf_event_open(2)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfIoctl {
    /// The macro's name, e.g. `PERF_EVENT_IOC_ENABLE`.
    pub name: &'static str,
    /// The request number.
    pub request: u32,
    /// First Linux version with this request.
    pub since: &'static str,
}

impl PerfIoctl {
    const fn new(name: &'static str, request: u32, since: &'static str) -> Self {
        PerfIoctl {
            name,
            request,
            since,
        }
    }
}

/// All perf ioctl requests composed for the compilation target.
pub const PERF_REQUESTS: [PerfIoctl; 12] = Encoding::TARGET.perf_requests(size_of::<*const u8>());

/// `PERF_EVENT_IOC_ENABLE`: enable the event (or group, with `PERF_IOC_FLAG_GROUP`).
pub const PERF_EVENT_IOC_ENABLE: u32 = PERF_REQUESTS[0].request;
/// `PERF_EVENT_IOC_DISABLE`: disable the event (or group).
pub const PERF_EVENT_IOC_DISABLE: u32 = PERF_REQUESTS[1].request;
/// `PERF_EVENT_IOC_REFRESH`: add to the overflow count before disabling (sampling, signals).
pub const PERF_EVENT_IOC_REFRESH: u32 = PERF_REQUESTS[2].request;
/// `PERF_EVENT_IOC_RESET`: zero the count.
pub const PERF_EVENT_IOC_RESET: u32 = PERF_REQUESTS[3].request;
/// `PERF_EVENT_IOC_PERIOD`: new sample period, passed as a pointer to `u64`.
pub const PERF_EVENT_IOC_PERIOD: u32 = PERF_REQUESTS[4].request;
/// `PERF_EVENT_IOC_SET_OUTPUT`: redirect samples to another event's ring buffer (-1 stops).
pub const PERF_EVENT_IOC_SET_OUTPUT: u32 = PERF_REQUESTS[5].request;
/// `PERF_EVENT_IOC_SET_FILTER`: set a tracepoint or address filter (C string).
pub const PERF_EVENT_IOC_SET_FILTER: u32 = PERF_REQUESTS[6].request;
/// `PERF_EVENT_IOC_ID`: write the event id through a `u64` pointer.
pub const PERF_EVENT_IOC_ID: u32 = PERF_REQUESTS[7].request;
/// `PERF_EVENT_IOC_SET_BPF`: attach a BPF program (fd) to a tracepoint event.
pub const PERF_EVENT_IOC_SET_BPF: u32 = PERF_REQUESTS[8].request;
/// `PERF_EVENT_IOC_PAUSE_OUTPUT`: pause (1) or resume (0) ring-buffer output.
pub const PERF_EVENT_IOC_PAUSE_OUTPUT: u32 = PERF_REQUESTS[9].request;
/// `PERF_EVENT_IOC_QUERY_BPF`: list attached BPF program ids (`perf_event_query_bpf`).
pub const PERF_EVENT_IOC_QUERY_BPF: u32 = PERF_REQUESTS[10].request;
/// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: change a breakpoint event's attr.
pub const PERF_EVENT_IOC_MODIFY_ATTRIBUTES: u32 = PERF_REQUESTS[11].request;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_and_generic_differ_where_the_headers_do() {
        // asm-generic: _IOW('$', 4, __u64) = 1<<30 | 8<<16 | 0x24<<8 | 4.
        assert_eq!(Encoding::Generic.iow(b'$', 4, 8), 0x4008_2404);
        // alpha: _IOC_WRITE = 4 at bit 29.
        assert_eq!(Encoding::Alpha.iow(b'$', 4, 8), 0x8008_2404);
        assert_eq!(Encoding::Alpha.io(b'$', 0), 0x2000_2400);
        assert_eq!(Encoding::Alpha.iowr(b'$', 10, 8), 0xc008_240a);
    }
}
