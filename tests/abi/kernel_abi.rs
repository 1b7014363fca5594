//! How kernels of different versions answer `perf_event_open(2)` for ABI
//! they do or do not know: the E2BIG size handshake, `read_format` bits,
//! flag bits and newer attr fields. Every expectation is keyed by the
//! running kernel's version (`uname -r`), so the same tests pass on the host
//! (6.18 here) and in the lab's guests (Debian 6.1, 6.12 and the newest),
//! and fail where a kernel answers differently from what its version
//! promises. Software events only: no PMU needed.

use crate::lab_support;

use lab_support::{close, errno_name, kernel_release, kernel_version, perf_event_open};
use perf_event_core::sys;
use std::mem::{offset_of, size_of};

/// An attr in a page-plus-a-bit buffer, so sizes beyond `perf_event_attr`
/// (up to more than a page) can be handed to the kernel.
#[repr(C, align(8))]
struct AttrBuf([u8; 8192]);

impl AttrBuf {
    /// A disabled user-only task-clock counter with `size` set to
    /// `size_of::<perf_event_attr>()`, possibly changed by `edit`.
    fn task_clock(edit: impl FnOnce(&mut sys::perf_event_attr)) -> Box<Self> {
        let mut attr = sys::perf_event_attr {
            type_: sys::PERF_TYPE_SOFTWARE,
            size: size_of::<sys::perf_event_attr>() as u32,
            config: u64::from(sys::PERF_COUNT_SW_TASK_CLOCK),
            ..Default::default()
        };
        attr.set_disabled(1);
        attr.set_exclude_kernel(1);
        attr.set_exclude_hv(1);
        edit(&mut attr);
        let mut buf = Box::new(AttrBuf([0; 8192]));
        // SAFETY: perf_event_attr is plain old data of size_of bytes, and
        // the buffer is larger.
        let bytes = unsafe {
            core::slice::from_raw_parts(
                (&attr as *const sys::perf_event_attr).cast::<u8>(),
                size_of::<sys::perf_event_attr>(),
            )
        };
        buf.0[..bytes.len()].copy_from_slice(bytes);
        buf
    }

    fn set_u32(&mut self, offset: usize, value: u32) {
        self.0[offset..offset + 4].copy_from_slice(&value.to_ne_bytes());
    }

    fn set_u64(&mut self, offset: usize, value: u64) {
        self.0[offset..offset + 8].copy_from_slice(&value.to_ne_bytes());
    }

    /// `attr.size` as it is now (the kernel writes it on E2BIG).
    fn size(&self) -> u32 {
        let at = offset_of!(sys::perf_event_attr, size);
        u32::from_ne_bytes(self.0[at..at + 4].try_into().expect("4 bytes"))
    }

    fn set_size(&mut self, size: u32) {
        self.set_u32(offset_of!(sys::perf_event_attr, size), size);
    }

    /// Opens the attr for the calling thread; the fd or the errno.
    fn open(&mut self) -> Result<libc::c_int, i32> {
        // SAFETY: the buffer is 8192 bytes, longer than any size the tests
        // set, aligned for perf_event_attr, and starts with a valid attr.
        unsafe {
            perf_event_open(
                self.0.as_mut_ptr().cast(),
                0,
                -1,
                -1,
                libc::c_ulong::from(sys::PERF_FLAG_FD_CLOEXEC),
            )
        }
    }
}

/// The `perf_event_attr` size a kernel of version `v` knows, where the
/// kernel history fixes it: VER6 (aux_sample_size) 5.5, VER7 (sig_data)
/// 5.13, VER8 (config3) 6.3, still VER8 in 6.18; 7.2, the UAPI the crate
/// vendors, has VER9 (config4) as its latest size. Kernels between 6.18 and
/// 7.2, and after it, are not pinned down: `None`.
fn known_attr_size(v: (u32, u32)) -> Option<u32> {
    match v {
        (7, 2) => Some(sys::PERF_ATTR_SIZE_VER9),
        v if v > (6, 18) => None,
        v if v >= (6, 3) => Some(sys::PERF_ATTR_SIZE_VER8),
        v if v >= (5, 13) => Some(sys::PERF_ATTR_SIZE_VER7),
        v if v >= (5, 5) => Some(sys::PERF_ATTR_SIZE_VER6),
        v if v >= (4, 1) => Some(sys::PERF_ATTR_SIZE_VER5),
        _ => None,
    }
}

fn page_size() -> u32 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u32::try_from(page).expect("page size fits u32")
}

/// The size the running kernel writes back for a size it refuses outright
/// (larger than a page: E2BIG on every kernel).
fn kernels_attr_size() -> u32 {
    let mut attr = AttrBuf::task_clock(|_| {});
    attr.set_size(page_size() + 8);
    assert_eq!(
        attr.open().map_err(errno_name),
        Err(errno_name(libc::E2BIG)),
        "an attr larger than a page must be refused with E2BIG"
    );
    attr.size()
}

/// The E2BIG handshake: a too-large or too-small `size`, or non-zero bytes
/// beyond what the kernel knows, make it answer E2BIG and write its own
/// attr size into `attr.size`, the number a caller retries with.
#[test]
fn e2big_writes_the_kernels_attr_size_back() {
    let release = kernel_release();
    let version = kernel_version();
    let theirs = kernels_attr_size();
    println!("kernel {release}: attr size {theirs}");
    match known_attr_size(version) {
        Some(want) => assert_eq!(
            theirs, want,
            "kernel {release} should know attr size {want}, it wrote back {theirs}"
        ),
        None => assert!(
            theirs >= sys::PERF_ATTR_SIZE_VER8 && theirs % 8 == 0,
            "kernel {release} is newer than 6.18 and wrote back {theirs}, not a size >= 136"
        ),
    }

    // Smaller than PERF_ATTR_SIZE_VER0 (64): refused the same way.
    let mut tiny = AttrBuf::task_clock(|_| {});
    tiny.set_size(sys::PERF_ATTR_SIZE_VER0 - 4);
    assert_eq!(
        tiny.open().map_err(errno_name),
        Err(errno_name(libc::E2BIG))
    );
    assert_eq!(
        tiny.size(),
        theirs,
        "size written back for a too-small attr"
    );

    // VER9 with config4 set: beyond what a VER8 kernel knows.
    let mut ver9 = AttrBuf::task_clock(|a| a.config4 = 1);
    ver9.set_size(sys::PERF_ATTR_SIZE_VER9);
    match ver9.open() {
        Err(e) => {
            assert_eq!(errno_name(e), errno_name(libc::E2BIG), "VER9 + config4");
            assert!(
                theirs < sys::PERF_ATTR_SIZE_VER9,
                "a VER9 kernel refused config4"
            );
            assert_eq!(ver9.size(), theirs, "size written back for config4");
        }
        Ok(fd) => {
            close(fd);
            assert!(
                theirs >= sys::PERF_ATTR_SIZE_VER9,
                "kernel {release} (attr size {theirs}) accepted a non-zero config4"
            );
        }
    }

    // The same size with the tail all zero: every kernel accepts it.
    let mut zero_tail = AttrBuf::task_clock(|_| {});
    zero_tail.set_size(sys::PERF_ATTR_SIZE_VER9);
    let fd = zero_tail
        .open()
        .unwrap_or_else(|e| panic!("VER9 with a zero tail: {}", errno_name(e)));
    close(fd);
    lab_support::deliberate_failure_point();
}

/// `PERF_FORMAT_LOST` (Linux 6.0): `read()` returns value, id and lost, 24
/// bytes, and refuses a shorter buffer with ENOSPC. Older kernels refuse the
/// bit with EINVAL.
#[test]
fn read_format_lost_is_known_from_linux_6_0() {
    let release = kernel_release();
    let mut attr = AttrBuf::task_clock(|a| {
        a.read_format = u64::from(sys::PERF_FORMAT_ID | sys::PERF_FORMAT_LOST);
        a.set_disabled(0);
    });
    let fd = match attr.open() {
        Ok(fd) => fd,
        Err(e) => {
            assert!(
                kernel_version() < (6, 0),
                "kernel {release} refused PERF_FORMAT_LOST with {}",
                errno_name(e)
            );
            assert_eq!(errno_name(e), errno_name(libc::EINVAL));
            return;
        }
    };
    assert!(
        kernel_version() >= (6, 0) || lab_support::read_format_lost_backported(),
        "{release} accepted PERF_FORMAT_LOST"
    );
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer.
    let r = unsafe { libc::ioctl(fd, sys::PERF_EVENT_IOC_ID as _, &mut id as *mut u64) };
    assert_eq!(r, 0, "PERF_EVENT_IOC_ID");
    let mut values = [0u64; 3];
    // SAFETY: 24 writable bytes.
    let n = unsafe { libc::read(fd, values.as_mut_ptr().cast(), 24) };
    assert_eq!(
        n,
        24,
        "value, id, lost: {}",
        std::io::Error::last_os_error()
    );
    assert_eq!(
        values[1], id,
        "the id in the read matches PERF_EVENT_IOC_ID"
    );
    assert_eq!(values[2], 0, "a counting event loses nothing");
    // SAFETY: 16 writable bytes; the kernel must refuse to write 24.
    let n = unsafe { libc::read(fd, values.as_mut_ptr().cast(), 16) };
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    assert_eq!((n, errno_name(errno)), (-1, errno_name(libc::ENOSPC)));
    close(fd);
}

/// Bits no kernel up to the vendored UAPI (Linux 7.2) defines are refused
/// with EINVAL: the first undefined `read_format` bit (`PERF_FORMAT_MAX`),
/// the first undefined `sample_type` bit, and the top reserved flag bit.
#[test]
fn unknown_bits_are_refused_with_einval() {
    let release = kernel_release();
    if kernel_version() > (7, 2) {
        lab_support::skip(
            "needs a kernel not newer than the vendored 7.2 UAPI",
            &format!("kernel {release} may know these bits"),
        );
        return;
    }
    let flags = offset_of!(sys::perf_event_attr, read_format) + 8;
    let cases: [(&str, Box<AttrBuf>); 3] = [
        (
            "read_format PERF_FORMAT_MAX",
            AttrBuf::task_clock(|a| a.read_format = u64::from(sys::PERF_FORMAT_MAX)),
        ),
        (
            "sample_type PERF_SAMPLE_MAX",
            AttrBuf::task_clock(|a| a.sample_type = u64::from(sys::PERF_SAMPLE_MAX)),
        ),
        ("flag bit 63", {
            let mut b = AttrBuf::task_clock(|_| {});
            let word = u64::from_ne_bytes(b.0[flags..flags + 8].try_into().expect("8"));
            // C bit fields fill the word from its least significant bit on
            // little-endian targets and from its most significant bit on
            // big-endian ones (s390x): the 64th flag bit is bit 63 or bit 0.
            let top = if cfg!(target_endian = "big") {
                1
            } else {
                1 << 63
            };
            b.set_u64(flags, word | top);
            b
        }),
    ];
    for (what, mut attr) in cases {
        match attr.open() {
            Ok(fd) => {
                close(fd);
                panic!("kernel {release} accepted {what}");
            }
            Err(e) => assert_eq!(errno_name(e), errno_name(libc::EINVAL), "{what}"),
        }
    }
}

/// A feature a kernel version introduced, probed by opening an event.
struct Feature {
    name: &'static str,
    since: (u32, u32),
    /// How an older kernel refuses it.
    refused_with: i32,
    attr: fn() -> Box<AttrBuf>,
}

const FEATURES: &[Feature] = &[
    Feature {
        name: "read_format PERF_FORMAT_LOST",
        since: (6, 0),
        refused_with: libc::EINVAL,
        attr: || AttrBuf::task_clock(|a| a.read_format = u64::from(sys::PERF_FORMAT_LOST)),
    },
    Feature {
        name: "config3 (attr size VER8)",
        since: (6, 3),
        refused_with: libc::E2BIG,
        attr: || {
            let mut b = AttrBuf::task_clock(|a| a.config3 = 1);
            b.set_size(sys::PERF_ATTR_SIZE_VER8);
            b
        },
    },
    Feature {
        name: "sigtrap with remove_on_exec",
        since: (5, 13),
        refused_with: libc::EINVAL,
        attr: || {
            AttrBuf::task_clock(|a| {
                a.set_remove_on_exec(1);
                a.set_sigtrap(1);
            })
        },
    },
    Feature {
        name: "inherit_thread",
        since: (5, 13),
        refused_with: libc::EINVAL,
        attr: || {
            AttrBuf::task_clock(|a| {
                a.set_inherit(1);
                a.set_inherit_thread(1);
            })
        },
    },
];

/// Feature probing: each feature opens exactly on the kernels whose version
/// has it, and older kernels refuse it with the documented errno. Between
/// 6.1 and 6.12 this separates config3; the host and newer guests accept all.
#[test]
fn feature_probes_match_the_kernel_version() {
    let release = kernel_release();
    let version = kernel_version();
    for f in FEATURES {
        let result = (f.attr)().open();
        println!(
            "kernel {release}: {} (since {}.{}): {}",
            f.name,
            f.since.0,
            f.since.1,
            match result {
                Ok(_) => "accepted".to_owned(),
                Err(e) => format!("refused with {}", errno_name(e)),
            }
        );
        match result {
            Ok(fd) => {
                close(fd);
                let backported = f.name == "read_format PERF_FORMAT_LOST"
                    && lab_support::read_format_lost_backported();
                assert!(
                    version >= f.since || backported,
                    "kernel {release} accepted {}, which needs {}.{}",
                    f.name,
                    f.since.0,
                    f.since.1
                );
            }
            Err(e) => {
                assert!(
                    version < f.since,
                    "kernel {release} refused {} with {}",
                    f.name,
                    errno_name(e)
                );
                assert_eq!(errno_name(e), errno_name(f.refused_with), "{}", f.name);
            }
        }
    }
}

#[test]
fn release_strings_parse_to_major_and_minor() {
    use lab_support::parse_version;
    assert_eq!(parse_version("6.1.0-56-arm64"), (6, 1));
    assert_eq!(parse_version("6.12.117+deb12-amd64"), (6, 12));
    assert_eq!(parse_version("6.18.44-fc-v657"), (6, 18));
    assert_eq!(parse_version("7.2.13+deb14-arm64"), (7, 2));
    assert_eq!(known_attr_size((6, 1)), Some(128));
    assert_eq!(known_attr_size((6, 12)), Some(136));
    assert_eq!(known_attr_size((7, 2)), Some(144));
}
