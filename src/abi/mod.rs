//! Hand-written facts about the perf ABI that the rest of the crate relies on.
//!
//! - [`layout`]: offsets and sizes that user-space readers of the mmap page
//!   and the ring buffer depend on, and the syscall number, as compile-time
//!   assertions evaluated for every target the crate is built for.
//! - [`AttrSize`]: the published `perf_event_attr` sizes.
//! - [`bitfield`]: the bit fields of the attr flags word, `aux_action` and
//!   the mmap page capabilities as constants over the raw word
//!   ([`bitfield::BitField`]).
//! - [`SampleType`], [`BranchSampleType`]: typed flag sets for
//!   `sample_type` and `branch_sample_type`.
//! - [`KernelVersion`], and [`since`]: the kernel version of every attr
//!   field, flag and format bit.
//! - [`Paranoid`]: the `perf_event_paranoid` levels and what each allows.
//! - [`ioctl_numbers`]: the `_IOC` encodings as `const fn`, and every perf ioctl
//!   request composed for the target.
//! - [`arch`]: every per-architecture fact, one file per architecture.
//!
//! Each fact is checked against the C compiler for every architecture by
//! `cargo xtask abi` (the `abi-tests` crate).

pub mod arch;
mod attr_size;
#[cfg(all(test, feature = "bindgen"))]
mod bindgen_layout;
pub mod bitfield;
pub(crate) mod flags;
pub mod ioctl_numbers;
mod kernel_version;
pub mod layout;
mod paranoid;
pub mod since;

pub use attr_size::AttrSize;
pub use flags::{BranchSampleType, SampleType};
pub use kernel_version::KernelVersion;
pub use paranoid::Paranoid;
