//! Calls go downward only (ARCHITECTURE.md, "Layers"): every top-level
//! module of `src/` has a layer, and no module's code names a module of a
//! higher layer (`crate::MODULE` in code, doc comments and comments aside;
//! unit-test modules, which may use anything, aside). A module added to
//! `src/` without a layer fails here too, so the table stays complete.

use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may name modules of its own layer or
/// of a lower one.
const LAYERS: &[&[&str]] = &[
    // Generated bindings and pure byte helpers.
    &["sys", "byte_order"],
    // Hand-written ABI facts: no system call.
    &["abi"],
    // The OS boundary.
    &["linux"],
    // The typed core (no_std, no allocation).
    &["event"],
    &["attr", "read_format"],
    &["record", "fd"],
    &["open", "userpage", "ring"],
    // perf's fallbacks over open (no_std).
    &["fallback"],
    // The std-only layers.
    &["sysfs", "features", "workload"],
    &["parse"],
    &["set", "monitor"],
    &["ringset"],
    &["perf_data"],
    // Documentation of the whole crate.
    &["migration"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn src() -> PathBuf {
    crate::root().join("src")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files a module includes only under `#[cfg(test)]`: `mod NAME;` or
/// `#[path = "FILE"] mod NAME;` right after the attribute.
fn test_only_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    // `foo.rs`'s submodules live in `foo/`; `mod.rs`'s and `lib.rs`'s beside it.
    let sub = if stem == "mod" || stem == "lib" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l != "#[cfg(test)]" {
            continue;
        }
        let mut path = None;
        for next in lines.iter().skip(i + 1).take(2) {
            if let Some(p) = next
                .strip_prefix("#[path = \"")
                .and_then(|r| r.strip_suffix("\"]"))
            {
                path = Some(dir.join(p));
            } else if let Some(name) = next.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                out.push(
                    path.take()
                        .unwrap_or_else(|| sub.join(format!("{name}.rs"))),
                );
                break;
            } else {
                break;
            }
        }
    }
    out
}

/// The code of a file: comments removed, and everything from an inline
/// `#[cfg(test)] mod ... {` on (unit tests sit at the end of a file).
fn code(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim().starts_with("mod ") && n.trim().ends_with('{'))
        {
            break;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The modules `code` names as `crate::NAME`.
fn named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // `super::`-free paths only: `$crate::` in macros is the same crate.
        if !name.is_empty() {
            out.push(name);
        }
        rest = after;
    }
    out
}

#[test]
fn no_module_names_a_module_of_a_higher_layer() {
    let root = src();
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut test_only = Vec::new();
    for f in &all {
        test_only.extend(test_only_files(f, &std::fs::read_to_string(f).unwrap()));
    }
    let mut problems = Vec::new();
    for f in &all {
        if test_only.contains(f) {
            continue;
        }
        let rel = f.strip_prefix(&root).unwrap();
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "lib" {
            continue;
        }
        let Some(own) = layer(&module) else {
            problems.push(format!(
                "src/{module}: not in LAYERS (tests/source_tree/layers.rs): give it its layer"
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for name in named(&code(&text)) {
            match layer(&name) {
                Some(l) if l > own => problems.push(format!(
                    "{}: `{module}` (layer {own}) names `crate::{name}` (layer {l}), a higher \
                     layer",
                    rel.display()
                )),
                _ => {}
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "calls must go downward:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_name() {
    // A line of `linux` naming `set`, and the same line in a comment.
    let upward = "use crate::set::EventSet;\n// crate::set in a comment\n";
    assert_eq!(named(&code(upward)), ["set"]);
    assert!(layer("set") > layer("linux"));
    // Unit tests at the end of a file are not the module's code.
    let tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::set::X;\n}\n";
    assert!(named(&code(tests)).is_empty());
}

/// `unsafe` is allowed file by file, and only in files of the modules
/// ARCHITECTURE.md names ("Where `unsafe` is allowed").
#[test]
fn unsafe_is_allowed_only_in_the_named_modules() {
    const MAY: &[&str] = &["linux", "ring", "userpage", "sys"];
    let root = src();
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut problems = Vec::new();
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let allows = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("#![allow(unsafe_code)]") || l.starts_with("#[allow(unsafe_code)]")
        });
        if !allows {
            continue;
        }
        let rel = f.strip_prefix(&root).unwrap();
        let module = rel.iter().next().unwrap().to_str().unwrap();
        if !MAY.contains(&module) {
            problems.push(rel.display().to_string());
        }
    }
    assert!(
        problems.is_empty(),
        "allow(unsafe_code) outside linux, ring, userpage and sys: {problems:?}"
    );
    // The root denies it for everything else.
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]"));
    assert!(
        !lib.contains("#[allow(unsafe_code)]"),
        "no module-wide allow"
    );
}

/// One OS boundary: `libc::` appears in the code of `src/linux/` only (and
/// in the generated `src/sys/`).
#[test]
fn only_linux_calls_libc() {
    let root = src();
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut problems = Vec::new();
    for f in &all {
        let rel = f.strip_prefix(&root).unwrap();
        let module = rel.iter().next().unwrap().to_str().unwrap();
        if module == "linux" || module == "sys" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in code(&text).lines().enumerate() {
            if line.contains("libc::") {
                problems.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "libc:: outside src/linux:\n{}",
        problems.join("\n")
    );
}
