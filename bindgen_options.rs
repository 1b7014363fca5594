//! The bindgen configuration of `perf_event_core::sys`, shared by
//! `cargo xtask bindgen` (the vendored `src/sys/<arch>.rs`) and `build.rs`
//! with feature `bindgen` (bindings from the target's installed headers).
//!
//! Both include this file with `#[path]`, so there is exactly one list of
//! options: what the vendored files contain is what a build-time run produces
//! from the same headers. It depends only on `bindgen` and `std`.

use std::path::{Path, PathBuf};

include!("arches.rs");

/// The include directories for one architecture in a header tree `include`
/// (the directory holding `linux/`): Debian's `include/<multiarch>` first when
/// it exists (it holds that architecture's `asm/`), then `include` itself
/// (a `make headers_install` tree has `asm/` there).
pub fn include_dirs(include: &Path, multiarch: &str) -> Vec<PathBuf> {
    let arch_dir = include.join(multiarch);
    let mut dirs = Vec::new();
    if arch_dir.join("asm").is_dir() {
        dirs.push(arch_dir);
    }
    dirs.push(include.to_path_buf());
    dirs
}

/// Regex of every item bindgen emits (types, constants, enumerators,
/// and the `perf_event_core_*` declarations of `wrapper.h`).
pub const ALLOWLIST: &str =
    "perf_.*|PERF_.*|HW_BREAKPOINT_.*|PR_TASK_PERF_EVENTS_.*|perf_event_core_.*";

/// Renames the helper declarations of `wrapper.h` to the kernel's names.
#[derive(Debug)]
struct KernelNames;

impl bindgen::callbacks::ParseCallbacks for KernelNames {
    fn item_name(&self, item: bindgen::callbacks::ItemInfo) -> Option<String> {
        if let Some(ioc) = item.name.strip_prefix("perf_event_core_ioc_") {
            return Some(format!("PERF_EVENT_IOC_{ioc}"));
        }
        if item.name == "perf_event_core_nr_perf_event_open" {
            return Some("__NR_perf_event_open".to_owned());
        }
        None
    }
}

/// The clang arguments for one architecture: its target, no host headers
/// (`-nostdinc`), then `include_dirs` in order.
pub fn clang_args(clang_target: &str, include_dirs: &[PathBuf]) -> Vec<String> {
    let mut args = vec![format!("--target={clang_target}"), "-nostdinc".to_owned()];
    for dir in include_dirs {
        args.push("-isystem".to_owned());
        args.push(dir.display().to_string());
    }
    args
}

/// The bindgen builder for `wrapper.h` on one architecture.
///
/// Output is core-only (`core::ffi` types), rustfmt-formatted, and depends
/// only on the headers, the bindgen version and the libclang version.
pub fn builder(wrapper: &Path, clang_target: &str, include_dirs: &[PathBuf]) -> bindgen::Builder {
    bindgen::Builder::default()
        .header(wrapper.display().to_string())
        .clang_args(clang_args(clang_target, include_dirs))
        .rust_target(bindgen::RustTarget::stable(77, 0).expect("1.77 is a valid Rust target"))
        .rust_edition(bindgen::RustEdition::Edition2021)
        .use_core()
        .ctypes_prefix("core::ffi")
        .allowlist_item(ALLOWLIST)
        .prepend_enum_name(false)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .derive_default(true)
        .derive_debug(true)
        .impl_debug(false)
        .layout_tests(true)
        .wrap_unsafe_ops(true)
        .generate_comments(true)
        .formatter(bindgen::Formatter::Rustfmt)
        .parse_callbacks(Box::new(KernelNames))
}
