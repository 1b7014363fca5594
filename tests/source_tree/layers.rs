//! Calls go downward only (ARCHITECTURE.md, "Layers"), within a package
//! and across the workspace's packages: every top-level module of each
//! package's `src/` has a layer, and no module's code names a module of a
//! higher layer, its own package's (`crate::MODULE`) or a package above it
//! (`perf_event_host::MODULE`, ...), in code (doc comments and comments
//! aside; unit-test modules, which may use anything, aside). A module added
//! without a layer fails here too, so the tables stay complete. The same
//! walk enforces the other boundaries of ARCHITECTURE.md: `libc::` only in
//! the core's `linux` (the one OS boundary), and a path under /sys or
//! /proc only in perf-event-host's `sysfs` or the core's `linux::system`.

use std::path::{Path, PathBuf};

/// A package: the name its code uses for it, its `src/`, the layers of
/// its top-level modules, lowest first, and the packages before it that it
/// depends on. A module may name modules of its own layer or a lower one,
/// and any module of a package before it that it depends on.
struct Package {
    krate: &'static str,
    src: &'static str,
    layers: &'static [&'static [&'static str]],
    uses: &'static [&'static str],
}

/// The packages, lowest first: each depends only on those before it.
const PACKAGES: &[Package] = &[
    Package {
        krate: "perf_event_core",
        src: "src",
        layers: LAYERS,
        uses: &[],
    },
    Package {
        krate: "perf_event_vendor",
        src: "perf-event-vendor/src",
        // The typed records, their decoder, the embedded tables, the CPU
        // id rules, the metric expression language (strcmp_cpuid_str
        // compares CPU ids), `perf stat -M`'s selection of metrics over
        // a model's table, then the proof against jevents.py and metric.py
        // (tests only).
        layers: &[
            &["event", "metric", "model"],
            &["decode"],
            &["tables"],
            &["cpuid"],
            &["expr"],
            &["metricgroup"],
            &["oracle"],
        ],
        // GPL-2.0-only data: it stands on no package of the workspace;
        // only perf-event-host's optional feature `vendor` stands on it.
        uses: &[],
    },
    Package {
        krate: "perf_event_host",
        src: "perf-event-host/src",
        layers: &[
            &["sysfs", "features", "workload", "control"],
            &["parse"],
            &["set", "measure", "vendor"],
            &["ringset"],
        ],
        // perf_event_vendor: only with feature `vendor`, in module `vendor`.
        uses: &["perf_event_core", "perf_event_vendor"],
    },
    Package {
        krate: "perf_data_file",
        src: "perf-data-file/src",
        // One layer: the file format's parts use each other freely.
        layers: &[&[
            "build_id",
            "features",
            "header",
            "pipe",
            "reader",
            "spool",
            "synthesize",
            "tracing_data",
            "writer",
        ]],
        uses: &["perf_event_core", "perf_event_host"],
    },
    Package {
        krate: "perf_event_criterion",
        src: "perf-event-criterion/src",
        layers: &[],
        // The criterion adapter stands on the core alone.
        uses: &["perf_event_core"],
    },
];

/// The core's layers, lowest first.
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
    // Self-monitoring over open, fallback and userpage.
    &["monitor"],
    // Documentation of the whole crate.
    &["migration"],
];

/// The files (relative to the workspace's root) that still read a /sys or
/// /proc path themselves, each with why it cannot go through
/// perf-event-host's `sysfs` (or the core's `linux::system`): none. A new
/// one fails, and so does a stale entry.
const PATHS_ELSEWHERE: &[(&str, &str)] = &[];

/// The rank of `module` of the package at `index`: the package first,
/// then the layer within it. `None` for a name that is not a top-level
/// module of that package (an item of its root).
fn rank(index: usize, module: &str) -> Option<(usize, usize)> {
    PACKAGES[index]
        .layers
        .iter()
        .position(|l| l.contains(&module))
        .map(|layer| (index, layer))
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

/// The modules `code` names as `PREFIX::NAME`, with `PREFIX` `crate` or a
/// package's name: (index of the package, `NAME`). A bare package name
/// (`perf_data_file::Writer`, an item of its root) names the package at
/// its lowest layer.
fn named(code: &str, own: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let prefixes = std::iter::once(("crate", own))
        .chain(PACKAGES.iter().enumerate().map(|(i, p)| (p.krate, i)));
    for (prefix, index) in prefixes {
        let needle = format!("{prefix}::");
        let mut rest = code;
        while let Some(at) = rest.find(&needle) {
            let before = rest[..at].chars().next_back();
            let after = &rest[at + needle.len()..];
            rest = after;
            // `$crate::` in macros is the same crate; a longer identifier
            // ending in the prefix is not the prefix.
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((index, name));
            }
        }
    }
    out
}

/// A package's source files that are not test-only, with their top-level
/// module (`lib` for the crate root).
fn sources(package: &Package) -> Vec<(PathBuf, String)> {
    let root = crate::root().join(package.src);
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut test_only = Vec::new();
    for f in &all {
        test_only.extend(test_only_files(f, &std::fs::read_to_string(f).unwrap()));
    }
    all.into_iter()
        .filter(|f| !test_only.contains(f))
        .map(|f| {
            let module = f
                .strip_prefix(&root)
                .unwrap()
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_str()
                .unwrap()
                .trim_end_matches(".rs")
                .to_owned();
            (f, module)
        })
        .collect()
}

/// The problems of the package at `index`: a module without a layer, and
/// names of higher layers or packages.
fn upward_names(index: usize) -> Vec<String> {
    let package = &PACKAGES[index];
    let mut problems = Vec::new();
    for (f, module) in sources(package) {
        let rel = f.strip_prefix(crate::root()).unwrap().display().to_string();
        // A crate root may name its own modules; criterion's is all of it.
        let own = if module == "lib" {
            (index, 0)
        } else if let Some(own) = rank(index, &module) {
            own
        } else {
            problems.push(format!(
                "{}/{module}: not in the layers of {} (tests/source_tree/layers.rs): give it its \
                 layer",
                package.src, package.krate
            ));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for (to, name) in named(&code(&text), index) {
            if to != index && !package.uses.contains(&PACKAGES[to].krate) {
                problems.push(format!(
                    "{rel}: `{}::{module}` names `{}::{name}`, a package it does not use (it \
                     uses {:?})",
                    package.krate, PACKAGES[to].krate, package.uses
                ));
                continue;
            }
            let target = rank(to, &name).unwrap_or((to, 0));
            if target > own {
                problems.push(format!(
                    "{rel}: `{}::{module}` names `{}::{name}`, a higher layer or package",
                    package.krate, PACKAGES[to].krate
                ));
            }
        }
    }
    problems
}

/// `libc::` outside the core's `linux`, and /sys or /proc paths outside
/// perf-event-host's `sysfs` and the core's `linux/system.rs`, in every
/// package: (file, what).
fn boundary_crossings() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for package in PACKAGES {
        for (f, module) in sources(package) {
            let rel = f.strip_prefix(crate::root()).unwrap().display().to_string();
            let code = code(&std::fs::read_to_string(&f).unwrap());
            let core = package.krate == "perf_event_core";
            if code.contains("libc::") && !(core && module == "linux") {
                out.push((rel.clone(), "libc::"));
            }
            let reads_paths = match package.krate {
                "perf_event_core" => rel != "src/linux/system.rs",
                "perf_event_host" => module != "sysfs",
                _ => true,
            };
            if reads_paths && path_literal(&code) {
                out.push((rel, "a /sys or /proc path"));
            }
        }
    }
    out
}

/// Whether `code` holds a string literal that starts with a /sys or /proc
/// path (`"/proc/self/fd"`, `format!("/proc/{pid}/task")`); a path inside
/// a message (`"... (see /sys/devices/...)"`) is not one.
fn path_literal(code: &str) -> bool {
    ["\"/sys/", "\"/proc/", "\"/sys\"", "\"/proc\""]
        .iter()
        .any(|p| code.contains(p))
}

#[test]
fn no_module_names_a_module_of_a_higher_layer_or_package() {
    let mut problems: Vec<String> = (0..PACKAGES.len()).flat_map(upward_names).collect();
    problems.sort();
    problems.dedup();
    assert!(
        problems.is_empty(),
        "calls must go downward:\n{}",
        problems.join("\n")
    );
}

/// The workspace packages a package's `Cargo.toml` lists under
/// `[dependencies]`, by the name its code uses (`perf-event-host` as
/// `perf_event_host`).
fn manifest_uses(package: &Package) -> Vec<String> {
    let dir = Path::new(package.src).parent().unwrap_or(Path::new(""));
    let manifest = std::fs::read_to_string(crate::root().join(dir).join("Cargo.toml")).unwrap();
    let mut section = "";
    let mut out = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]" {
            let name = line
                .split(['=', ' '])
                .next()
                .unwrap_or("")
                .replace('-', "_");
            if PACKAGES.iter().any(|p| p.krate == name) {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn each_package_depends_on_the_packages_it_uses_and_no_others() {
    for package in PACKAGES {
        let mut uses: Vec<String> = package.uses.iter().map(|u| u.to_string()).collect();
        uses.sort();
        assert_eq!(
            manifest_uses(package),
            uses,
            "{}: the workspace packages in its Cargo.toml [dependencies] against `uses` in \
             tests/source_tree/layers.rs",
            package.krate
        );
    }
}

#[test]
fn libc_only_in_linux_and_sys_and_proc_paths_only_in_sysfs() {
    let mut problems = Vec::new();
    let found = boundary_crossings();
    for (file, what) in &found {
        let known = *what != "libc::" && PATHS_ELSEWHERE.iter().any(|(f, _)| f == file);
        if !known {
            problems.push(format!(
                "{file}: {what} outside its boundary (libc:: only in the core's linux; /sys and \
                 /proc paths only in perf-event-host's sysfs or the core's linux::system)"
            ));
        }
    }
    for (file, why) in PATHS_ELSEWHERE {
        if !found.iter().any(|(f, w)| f == file && *w != "libc::") {
            problems.push(format!(
                "{file} is in PATHS_ELSEWHERE ({why}) but reads no such path any more: remove \
                 the entry"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checks_see_an_upward_name_libc_and_a_path() {
    // A line of the core naming a higher module, and another package, and
    // the same in a comment.
    let upward = "use crate::monitor::Monitor;\n// crate::set in a comment\n";
    assert_eq!(named(&code(upward), 0), [(0, "monitor".to_owned())]);
    assert!(rank(0, "monitor") > rank(0, "linux"));
    let host = "use perf_event_host::set::EventSet;\n";
    let h = PACKAGES
        .iter()
        .position(|p| p.krate == "perf_event_host")
        .unwrap();
    assert_eq!(named(&code(host), 0), [(h, "set".to_owned())]);
    assert!(rank(h, "set").unwrap() > rank(0, "migration").unwrap());
    // `$crate::` and `my_crate::` are not `crate::`.
    assert!(named("$crate::x::y; my_crate::z", 0).is_empty());
    // Unit tests at the end of a file are not the module's code.
    let tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::set::X;\n}\n";
    assert!(named(&code(tests), 1).is_empty());
    // Paths: a literal that starts with one, not a message that names one.
    assert!(path_literal(&code(
        "let d = format!(\"/proc/{pid}/task\");"
    )));
    assert!(path_literal(&code(
        "read(\"/sys/devices/system/cpu/online\")"
    )));
    assert!(!path_literal(&code(
        "\"no PMU (see /sys/bus/event_source)\""
    )));
    assert!(!path_literal(&code("// reads \"/proc/self/fd\"")));
}

/// Every public type, trait and module of the snapshots
/// (`public-api/*.txt`, `cargo xtask public-api`), and every re-export of
/// another package's item, by its last name, with the paths it has; the generated `sys` (the kernel's own names) and
/// items inside a type (associated types) aside.
fn public_names(snapshots: &[String]) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut names: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for text in snapshots {
        for line in text.lines() {
            // Attributes first (`#[non_exhaustive] pub enum ...`).
            let mut line = line;
            while let Some(rest) = line.strip_prefix("#[") {
                line = rest.split_once("] ").map_or("", |(_, item)| item);
            }
            // `pub use`: a re-export of another package's item.
            let Some(rest) = ["struct", "enum", "union", "trait", "type", "mod", "use"]
                .iter()
                .find_map(|kind| line.strip_prefix(&format!("pub {kind} ")))
            else {
                continue;
            };
            let path: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<&str> = path.split("::").collect();
            let inside_a_type = segments[..segments.len() - 1]
                .iter()
                .any(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
            if segments.len() < 2 || segments[1] == "sys" || inside_a_type {
                continue;
            }
            let paths = names
                .entry(segments[segments.len() - 1].to_owned())
                .or_default();
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    names
}

#[test]
fn one_public_path_and_one_name_per_type() {
    let dir = crate::root().join("public-api");
    let snapshots: Vec<String> = std::fs::read_dir(&dir)
        .expect("public-api/")
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        snapshots.len() >= 4,
        "one snapshot per published package in public-api/"
    );
    let names = public_names(&snapshots);
    let mut problems = Vec::new();
    for (name, paths) in &names {
        if paths.len() > 1 {
            problems.push(format!(
                "`{name}` is public at {}: one path per type, one type per name",
                paths.join(" and ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_public_path_check_sees_a_re_export() {
    let snapshot = "pub mod perf_event_core::userpage\n\
                    pub struct perf_event_core::userpage::reader::CounterReader\n\
                    pub struct perf_event_core::userpage::CounterReader\n\
                    #[non_exhaustive] pub enum perf_event_core::userpage::ReadPath\n\
                    #[repr(u32)] #[non_exhaustive] pub enum perf_event_host::x::ReadPath\n\
                    pub type perf_event_core::abi::SampleType::Output = u64\n\
                    pub struct perf_event_core::sys::perf_event_attr\n\
                    pub struct perf_event_host::sys::perf_event_attr\n";
    let names = public_names(&[snapshot.to_owned()]);
    assert_eq!(names["CounterReader"].len(), 2);
    assert_eq!(
        names["ReadPath"].len(),
        2,
        "attributes before the item are skipped"
    );
    assert!(!names.contains_key("Output"));
    assert!(!names.contains_key("perf_event_attr"));
}

/// `unsafe` is allowed file by file, and only in files of the core's
/// modules ARCHITECTURE.md names ("Where `unsafe` is allowed"); every
/// package's root denies it for everything else.
#[test]
fn unsafe_is_allowed_only_in_the_named_modules() {
    const MAY: &[&str] = &["linux", "ring", "userpage", "sys"];
    let mut problems = Vec::new();
    for (index, package) in PACKAGES.iter().enumerate() {
        for (f, module) in sources(package) {
            let text = std::fs::read_to_string(&f).unwrap();
            let rel = f.strip_prefix(crate::root()).unwrap().display().to_string();
            if module == "lib" {
                if !text.contains("#![deny(unsafe_code)]") || text.contains("#[allow(unsafe_code)]")
                {
                    problems.push(format!(
                        "{rel}: the root must deny unsafe_code, with no module-wide allow"
                    ));
                }
                continue;
            }
            let allows = text.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with("#![allow(unsafe_code)]") || l.starts_with("#[allow(unsafe_code)]")
            });
            if allows && !(index == 0 && MAY.contains(&module.as_str())) {
                problems.push(rel);
            }
        }
    }
    assert!(
        problems.is_empty(),
        "allow(unsafe_code) outside the core's linux, ring, userpage and sys: {problems:?}"
    );
}
