//! Every kernel-facing test area in one binary, for `cargo xtask lab`: one
//! static build per guest architecture instead of one per area (the
//! library's generic code instantiated once, one link, one copy in the
//! initramfs). Each area is a module named as the area, so libtest calls
//! its tests `<area>::<file>::<test>` and the lab runs one area at a time
//! with the filter `<area>::` (`xtask/src/lab/testbins.rs`).
//!
//! Not a `cargo test` target (`test = false` in Cargo.toml): the area
//! binaries (`tests/<area>/main.rs`) run there, and this one is built with
//! `--test lab_areas` only. An area's files refer to the shared helpers as
//! `crate::<helper>` (declared here, once, as in each area's `main.rs`) and
//! to a file of their own area as `super::<file>`.

#[path = "../support/attr_want.rs"]
mod attr_want;
#[path = "../support/kernel_support.rs"]
mod kernel_support;
#[path = "../support/lab_support.rs"]
mod lab_support;
#[path = "../support/paranoid_support.rs"]
mod paranoid_support;
#[path = "../support/ringset_support.rs"]
mod ringset_support;
#[path = "../support/seccomp_support.rs"]
mod seccomp_support;
#[path = "../support/set_support.rs"]
mod set_support;
#[path = "../support/sysfs_support.rs"]
mod sysfs_support;

// Each area's `main.rs` declares the helpers it uses again, as modules of
// the area that nothing here calls: unused, not warned about.
#[allow(dead_code, unused_imports)]
#[path = "../abi/main.rs"]
mod abi;
#[allow(dead_code, unused_imports)]
#[path = "../fallback/main.rs"]
mod fallback;
#[allow(dead_code, unused_imports)]
#[path = "../ioctl_read/main.rs"]
mod ioctl_read;
#[allow(dead_code, unused_imports)]
#[path = "../monitor/main.rs"]
mod monitor;
#[allow(dead_code, unused_imports)]
#[path = "../ring/main.rs"]
mod ring;
#[allow(dead_code, unused_imports)]
#[path = "../set/main.rs"]
mod set;
#[allow(dead_code, unused_imports)]
#[path = "../sysfs/main.rs"]
mod sysfs;
#[allow(dead_code, unused_imports)]
#[path = "../userpage/main.rs"]
mod userpage;
