// The architectures perf-event-core ships vendored bindings for.
// Included (with `include!`) by bindgen_options.rs, and by abi-tests, so the
// generator, the selector in src/sys/mod.rs and the ABI checks share one list.
// Plain data, no dependencies.

/// One architecture the crate ships vendored bindings for.
#[derive(Debug)]
pub struct Arch {
    /// Stem of the vendored file, `src/sys/<file>.rs`.
    pub file: &'static str,
    /// `cfg(target_arch)` value.
    pub target_arch: &'static str,
    /// `cfg(target_endian)` value; bitfield order follows it.
    pub target_endian: &'static str,
    /// `cfg(target_pointer_width)` value (x86_64 vs x32).
    pub target_pointer_width: &'static str,
    /// The `--target` clang uses for this architecture's C ABI.
    pub clang_target: &'static str,
    /// Debian multiarch directory holding the architecture's `asm/` headers.
    pub multiarch: &'static str,
    /// A rustc target of this architecture, for cross-checking the crate.
    pub rust_target: &'static str,
    /// Whether rustup ships `rust-std` for `rust_target`; when it does not,
    /// the cross-check uses `cargo +nightly check -Zbuild-std=core`.
    pub rustup_std: bool,
}

macro_rules! arch {
    ($file:literal, $arch:literal, $endian:literal, $width:literal, $clang:literal,
     $multiarch:literal, $rust:literal, $rustup:literal) => {
        Arch {
            file: $file,
            target_arch: $arch,
            target_endian: $endian,
            target_pointer_width: $width,
            clang_target: $clang,
            multiarch: $multiarch,
            rust_target: $rust,
            rustup_std: $rustup,
        }
    };
}

/// Every architecture with vendored bindings. `src/sys/mod.rs` selects among
/// exactly these by `target_arch`, `target_endian` and `target_pointer_width`.
#[rustfmt::skip]
pub const ARCHES: &[Arch] = &[
    //    file           arch          endian    width  clang target                 Debian multiarch            rustc target                        rustup std
    arch!("x86_64",      "x86_64",     "little", "64", "x86_64-linux-gnu",           "x86_64-linux-gnu",         "x86_64-unknown-linux-gnu",         true),
    arch!("x32",         "x86_64",     "little", "32", "x86_64-linux-gnux32",        "x86_64-linux-gnux32",      "x86_64-unknown-linux-gnux32",      false),
    arch!("x86",         "x86",        "little", "32", "i686-linux-gnu",             "i386-linux-gnu",           "i686-unknown-linux-gnu",           true),
    arch!("aarch64",     "aarch64",    "little", "64", "aarch64-linux-gnu",          "aarch64-linux-gnu",        "aarch64-unknown-linux-gnu",        true),
    arch!("arm",         "arm",        "little", "32", "armv7-linux-gnueabihf",      "arm-linux-gnueabihf",      "armv7-unknown-linux-gnueabihf",    true),
    arch!("riscv64",     "riscv64",    "little", "64", "riscv64-linux-gnu",          "riscv64-linux-gnu",        "riscv64gc-unknown-linux-gnu",      true),
    arch!("powerpc64",   "powerpc64",  "big",    "64", "powerpc64-linux-gnu",        "powerpc64-linux-gnu",      "powerpc64-unknown-linux-gnu",      true),
    arch!("powerpc64le", "powerpc64",  "little", "64", "powerpc64le-linux-gnu",      "powerpc64le-linux-gnu",    "powerpc64le-unknown-linux-gnu",    true),
    arch!("powerpc",     "powerpc",    "big",    "32", "powerpc-linux-gnu",          "powerpc-linux-gnu",        "powerpc-unknown-linux-gnu",        true),
    arch!("mips64",      "mips64",     "big",    "64", "mips64-linux-gnuabi64",      "mips64el-linux-gnuabi64",  "mips64-unknown-linux-gnuabi64",    false),
    arch!("mips64el",    "mips64",     "little", "64", "mips64el-linux-gnuabi64",    "mips64el-linux-gnuabi64",  "mips64el-unknown-linux-gnuabi64",  false),
    arch!("mips",        "mips",       "big",    "32", "mips-linux-gnu",             "mips-linux-gnu",           "mips-unknown-linux-gnu",           false),
    arch!("mipsel",      "mips",       "little", "32", "mipsel-linux-gnu",           "mipsel-linux-gnu",         "mipsel-unknown-linux-gnu",         false),
    arch!("s390x",       "s390x",      "big",    "64", "s390x-linux-gnu",            "s390x-linux-gnu",          "s390x-unknown-linux-gnu",          true),
    arch!("loongarch64", "loongarch64","little", "64", "loongarch64-linux-gnu",      "loongarch64-linux-gnu",    "loongarch64-unknown-linux-gnu",    false),
    arch!("sparc64",     "sparc64",    "big",    "64", "sparc64-linux-gnu",          "sparc64-linux-gnu",        "sparc64-unknown-linux-gnu",        false),
];

/// The vendored architecture matching a target's `cfg` values, if any.
pub fn find_arch(target_arch: &str, endian: &str, pointer_width: &str) -> Option<&'static Arch> {
    ARCHES.iter().find(|a| {
        a.target_arch == target_arch
            && a.target_endian == endian
            && a.target_pointer_width == pointer_width
    })
}
