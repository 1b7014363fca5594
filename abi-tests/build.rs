//! Generates `$OUT_DIR/host_facts.rs`: every fact about the host's vendored
//! bindings as Rust code that computes it with rustc's own layout
//! (`size_of`, `offset_of!`, the bindgen setters), so the host test can
//! compare the running Rust program with the running C program.

#[path = "src/model.rs"]
#[allow(dead_code)]
mod model;

#[path = "src/facts.rs"]
#[allow(dead_code)]
mod facts;

#[path = "src/hand.rs"]
mod hand;

include!("../arches.rs");

use std::fmt::Write;

fn main() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let root = std::path::PathBuf::from(var("CARGO_MANIFEST_DIR")).join("..");
    println!("cargo:rerun-if-changed=src/model.rs");
    println!("cargo:rerun-if-changed=src/facts.rs");
    println!("cargo:rerun-if-changed=src/hand.rs");
    let arch = find_arch(
        &var("CARGO_CFG_TARGET_ARCH"),
        &var("CARGO_CFG_TARGET_ENDIAN"),
        &var("CARGO_CFG_TARGET_POINTER_WIDTH"),
    )
    .expect("abi-tests runs on an architecture with vendored bindings");
    let path = root.join("src/sys").join(format!("{}.rs", arch.file));
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path).expect("vendored bindings");
    let model = model::Model::parse(&text).expect("parse vendored bindings");
    let target = facts::Target::of(arch.file, arch.target_endian, arch.target_pointer_width);
    let facts = facts::derive(&model, &target).expect("derive facts");

    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// The vendored file these facts come from.\npub const ARCH_FILE: &str = {:?};",
        arch.file
    );
    out.push_str("/// (label, value rustc computes) for every fact about the bindings.\n");
    out.push_str("#[allow(clippy::all)] // generated: `0 + offset_of!(..)`, casts of any width\n");
    out.push_str("pub fn rust_values() -> Vec<(&'static str, i128)> {\n    vec![\n");
    for a in &facts.asserts {
        if let Some(expr) = &a.rust_expr {
            let _ = writeln!(out, "        ({:?}, ({expr}) as i128),", a.label);
        }
    }
    out.push_str("    ]\n}\n\n");
    out.push_str("/// (label, bytes of the zeroed root object after the bindgen setter ran).\n");
    out.push_str("#[allow(clippy::all)] // generated\n");
    out.push_str("pub fn rust_probes() -> Vec<(&'static str, Vec<u8>)> {\n    vec![\n");
    for p in &facts.probes {
        let Some(setter) = &p.rust else { continue };
        let root = p.c_type.split(' ').nth(1).expect("struct or union NAME");
        let _ = writeln!(
            out,
            "        ({:?}, {{\n            \
             // SAFETY: the perf structs are plain integers; all-zero is valid.\n            \
             let mut v: sys::{root} = unsafe {{ core::mem::zeroed() }};\n            \
             // SAFETY: the union members on the path are the C layout's; setting\n            \
             // a bit field writes only its storage bytes.\n            \
             #[allow(unused_unsafe)]\n            \
             unsafe {{ v.{setter}({}u64 as _) }};\n            \
             bytes_of(&v)\n        }}),",
            p.label, p.value
        );
    }
    out.push_str("    ]\n}\n");
    let dest = std::path::PathBuf::from(var("OUT_DIR")).join("host_facts.rs");
    std::fs::write(dest, out).expect("write host_facts.rs");
}
