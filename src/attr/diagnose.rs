//! Why the kernel refused an attr: E2BIG (the attr is larger than the
//! kernel's and uses the extra bytes) and EINVAL (something the kernel does
//! not know), explained with the fields and the kernel versions involved.

use super::{Attr, AttrError};
use crate::abi::since::FIELDS;
use crate::abi::AttrSize;
use crate::abi::KernelVersion;
use core::fmt;

/// Bit of [`BeyondKernel`]'s mask for the aux_action word (no FIELDS entry).
const AUX_ACTION_BIT: u32 = 31;
const _: () = assert!(FIELDS.len() < AUX_ACTION_BIT as usize);

/// The fields in use that lie beyond the size a kernel accepts (E2BIG).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BeyondKernel {
    /// The size the kernel wrote back into `attr.size`.
    pub kernel_size: u32,
    /// Bit i: `FIELDS[i]` is in use beyond the kernel's size.
    mask: u32,
}

impl BeyondKernel {
    /// Lists the non-zero fields of `attr` that end beyond `kernel_size`.
    pub fn new(attr: &Attr, kernel_size: u32) -> BeyondKernel {
        let bytes = attr.bytes();
        let mut mask = 0;
        for (i, field) in FIELDS.iter().enumerate() {
            let beyond = field.offset + field.len > kernel_size as usize;
            let used = bytes[field.offset..field.offset + field.len]
                .iter()
                .any(|b| *b != 0);
            if beyond && used {
                mask |= 1 << i;
            }
        }
        if kernel_size < 120 && attr.get_aux_action() != 0 {
            mask |= 1 << AUX_ACTION_BIT;
        }
        BeyondKernel { kernel_size, mask }
    }

    /// The fields, each with the attr size and kernel that introduced it.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, AttrSize, KernelVersion)> + '_ {
        let aux = (self.mask & (1 << AUX_ACTION_BIT) != 0).then_some((
            "aux_action",
            AttrSize::Ver6,
            crate::abi::since::AUX_ACTION_SINCE,
        ));
        FIELDS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.mask & (1 << i) != 0)
            .map(|(_, f)| (f.name, f.size, f.since))
            .chain(aux)
    }
}

impl fmt::Display for BeyondKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (name, size, since) in self.fields() {
            if any {
                f.write_str("; ")?;
            }
            any = true;
            write!(
                f,
                "{name} needs PERF_ATTR_SIZE_VER{} ({} bytes, Linux {since})",
                size.version(),
                size.bytes()
            )?;
        }
        if !any {
            f.write_str("no field in use lies beyond the kernel's size")?;
        }
        write!(f, "; this kernel accepts {} bytes", self.kernel_size)
    }
}

/// The explanation of a failed open of an attr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Diagnosis {
    /// The attr failed validation before any syscall.
    Invalid(AttrError),
    /// E2BIG: fields beyond the kernel's attr size are in use.
    TooBig(BeyondKernel),
    /// EINVAL, and a feature in use is newer than the running kernel.
    NewerThanKernel {
        /// The newest such feature.
        what: &'static str,
        /// The kernel that introduced it.
        since: KernelVersion,
        /// The running kernel.
        running: KernelVersion,
    },
    /// Any other errno (issue-6 errors explain each; here it is passed on).
    Errno(i32),
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnosis::Invalid(e) => e.fmt(f),
            Diagnosis::TooBig(b) => write!(f, "perf_event_open: E2BIG: {b}"),
            Diagnosis::NewerThanKernel {
                what,
                since,
                running,
            } => write!(
                f,
                "perf_event_open: EINVAL: {what} needs Linux {since}, this kernel is {running}"
            ),
            Diagnosis::Errno(e) => write!(f, "perf_event_open: errno {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Diagnosis {}

impl Attr {
    /// Explains `errno` from opening this attr; `written_size` is what the
    /// kernel left in `attr.size` (it writes its own size on E2BIG).
    pub fn diagnose(
        &self,
        errno: i32,
        written_size: u32,
        running: Option<KernelVersion>,
    ) -> Diagnosis {
        if errno == crate::linux::errno::E2BIG {
            return Diagnosis::TooBig(BeyondKernel::new(self, written_size));
        }
        if errno == crate::linux::errno::EINVAL {
            if let Err(e) = self.check() {
                return Diagnosis::Invalid(e);
            }
            if let Some(running) = running {
                if let Some(r) = self.newer_than(running) {
                    return Diagnosis::NewerThanKernel {
                        what: r.what,
                        since: r.version,
                        running,
                    };
                }
            }
        }
        Diagnosis::Errno(errno)
    }
}
