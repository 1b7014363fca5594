//! Hand-written facts about the perf ABI that the rest of the crate relies on.
//!
//! - [`layout`]: offsets and sizes that user-space readers of the mmap page
//!   and the ring buffer depend on, and the syscall number, as compile-time
//!   assertions evaluated for every target the crate is built for.
//! - [`attr_size`]: the published `perf_event_attr` sizes.
//! - [`bitfield`]: the bit fields of the attr flags word, `aux_action` and
//!   the mmap page capabilities as constants over the raw word.
//! - [`flags`]: typed flag sets for `sample_type` and `branch_sample_type`.
//! - [`since`]: the kernel version of every attr field, flag and format bit.
//! - [`paranoid`]: the `perf_event_paranoid` levels and what each allows.
//! - [`ioctl`]: the `_IOC` encodings as `const fn`, and every perf ioctl
//!   request composed for the target.
//! - [`arch`]: every per-architecture fact, one file per architecture.
//!
//! Each fact is checked against the C compiler for every architecture by
//! `cargo xtask abi` (the `abi-tests` crate).

pub mod arch;
pub mod attr_size;
pub mod bitfield;
pub mod flags;
pub mod ioctl;
pub mod layout;
pub mod paranoid;
pub mod since;

pub use attr_size::AttrSize;
pub use bitfield::BitField;
pub use flags::{BranchSampleType, SampleType};
pub use paranoid::Paranoid;
pub use since::KernelVersion;
