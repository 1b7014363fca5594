//! ABI proof for perf-event-core: what the Rust side says about every
//! architecture, checked against what the C compiler says about the real
//! headers.
//!
//! - [`model`] reads a vendored bindings file;
//! - [`facts`] turns it, plus the crate's hand-written ABI facts, into
//!   checkable facts for one target;
//! - [`cgen`] renders them as C (static assertions, bit-field probes, a
//!   host program);
//! - [`check`] runs clang and reports every disagreement by name;
//! - [`history`] compares the ABI of several kernels.
//!
//! `cargo xtask abi` drives all of it for every vendored architecture.

pub mod cgen;
pub mod check;
pub mod elf;
pub mod facts;
mod hand;
pub mod history;
pub mod model;

include!("../../arches.rs");

/// Loads and derives the facts of a vendored architecture.
pub fn arch_facts(repo: &std::path::Path, arch: &Arch) -> Result<facts::Facts, String> {
    let path = repo.join("src/sys").join(format!("{}.rs", arch.file));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let model = model::Model::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let target = facts::Target::of(arch.file, arch.target_endian, arch.target_pointer_width);
    facts::derive(&model, &target).map_err(|e| format!("{}: {e}", arch.file))
}
