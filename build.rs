//! Build script of perf-event-core.
//!
//! Without feature `bindgen` it does nothing: `src/sys` holds vendored
//! bindings and no libclang is needed. With feature `bindgen` it runs bindgen
//! on `wrapper.h` against the target's installed kernel headers, with the
//! options of `bindgen_options.rs` (the same module `cargo xtask bindgen` uses),
//! and writes `$OUT_DIR/sys.rs`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // `--cfg loom` is declared in Cargo.toml's [lints] table (check-cfg).
    #[cfg(feature = "bindgen")]
    generate::main();
}

#[cfg(feature = "bindgen")]
#[path = "bindgen_options.rs"]
#[allow(dead_code)]
mod options;

#[cfg(feature = "bindgen")]
mod generate {
    use super::options;
    use std::env;
    use std::path::PathBuf;

    fn var(name: &str) -> String {
        env::var(name).unwrap_or_default()
    }

    pub fn main() {
        for file in ["wrapper.h", "bindgen_options.rs"] {
            println!("cargo:rerun-if-changed={file}");
        }
        for var in ["PERF_EVENT_INCLUDE_DIR", "LIBCLANG_PATH"] {
            println!("cargo:rerun-if-env-changed={var}");
        }
        let arch = var("CARGO_CFG_TARGET_ARCH");
        let known = options::find_arch(
            &arch,
            &var("CARGO_CFG_TARGET_ENDIAN"),
            &var("CARGO_CFG_TARGET_POINTER_WIDTH"),
        );
        // An architecture without vendored bindings is exactly what this
        // feature is for: use rustc's target triple and the usual multiarch dir.
        let clang_target = known.map_or_else(
            || var("TARGET").replacen("riscv64gc", "riscv64", 1),
            |a| a.clang_target.to_owned(),
        );
        let multiarch =
            known.map_or_else(|| format!("{arch}-linux-gnu"), |a| a.multiarch.to_owned());

        let roots: Vec<PathBuf> = match env::var_os("PERF_EVENT_INCLUDE_DIR") {
            Some(dirs) => env::split_paths(&dirs).collect(),
            None => vec![PathBuf::from("/usr/include")],
        };
        let mut include_dirs = Vec::new();
        for root in &roots {
            include_dirs.extend(options::include_dirs(root, &multiarch));
        }
        if !include_dirs
            .iter()
            .any(|d| d.join("linux/perf_event.h").is_file())
        {
            fail(&format!(
                "no linux/perf_event.h under {roots:?}. Install the kernel UAPI headers \
                 (Debian/Ubuntu: linux-libc-dev; Fedora: kernel-headers; Alpine: linux-headers) \
                 or set PERF_EVENT_INCLUDE_DIR to a `make headers_install` include directory \
                 (several directories: separated by ':')."
            ));
        }
        if !include_dirs
            .iter()
            .any(|d| d.join("asm/unistd.h").is_file())
        {
            fail(&format!(
                "no asm/unistd.h for {arch} under {include_dirs:?}. Install the headers of the \
                 target architecture (Debian: linux-libc-dev:<arch>) or set PERF_EVENT_INCLUDE_DIR."
            ));
        }

        // bindgen panics when it cannot load libclang; turn that into a sentence.
        if std::panic::catch_unwind(bindgen::clang_version).is_err() {
            fail(
                "feature `bindgen` needs libclang and none was found. Install it \
                 (Debian/Ubuntu: `apt install libclang-dev`; Fedora: `dnf install clang-devel`; \
                 Alpine: `apk add clang-dev`) or point LIBCLANG_PATH at the directory holding \
                 libclang.so. Without the feature, the vendored bindings need no libclang.",
            );
        }

        let manifest = PathBuf::from(var("CARGO_MANIFEST_DIR"));
        let bindings = options::builder(&manifest.join("wrapper.h"), &clang_target, &include_dirs)
            .generate()
            .unwrap_or_else(|e| {
                fail(&format!(
                    "bindgen failed on wrapper.h for {clang_target} with {include_dirs:?}: {e}"
                ))
            });
        let text = bindings.to_string();
        // The crate is written against the ABI of its vendored bindings; older
        // headers lack fields it uses. Say so instead of failing in rustc.
        if !text.contains("pub const PERF_ATTR_SIZE_VER9:") {
            fail(&format!(
                "the headers in {include_dirs:?} are older than the ABI perf-event-core is \
                 written against (Linux 7.2 UAPI: PERF_ATTR_SIZE_VER9, config4). Feature \
                 `bindgen` is for newer or patched headers; the vendored bindings (build \
                 without the feature) run on older kernels too. Or point \
                 PERF_EVENT_INCLUDE_DIR at newer headers."
            ));
        }
        // Tells the crate's tests which vendored file the host bindings match.
        println!(
            "cargo:rustc-env=PERF_EVENT_CORE_VENDORED={}",
            known.map_or("", |a| a.file)
        );
        let out = PathBuf::from(var("OUT_DIR")).join("sys.rs");
        let header = format!(
            "// Generated at build time by perf-event-core's build.rs (feature `bindgen`)\n\
             // for {clang_target} from {include_dirs:?}.\n\n"
        );
        std::fs::write(&out, header + &text)
            .unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", out.display())));
    }

    fn fail(message: &str) -> ! {
        eprintln!("error: perf-event-core: {message}");
        println!("cargo:warning=perf-event-core: {message}");
        std::process::exit(1);
    }
}
