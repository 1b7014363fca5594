//! No function of any package's examples is over [`MAX_LINES`] lines, from
//! the line of its `fn` to the line of its closing brace: the examples are
//! read to learn the packages, and a longer function is split into
//! functions named for what each part does (opening, attaching, running
//! the workload, reporting).
//!
//! The examples are the `.rs` files under `examples/` of the workspace
//! root and of every package beside it (a directory with a `Cargo.toml`),
//! in every subdirectory (`perf-event-host/examples/stat/`,
//! `perf-data-file/examples/sample/`). Functions are found as the skip
//! report finds them (`rust_source`): comments and literals blanked, a
//! nested function or an `impl`'s method counted on its own as well.

use super::rust_source::{blank, files, functions};
use std::path::PathBuf;

/// The longest an example's function may be, in lines.
const MAX_LINES: usize = 80;

/// The examples' directories: the root package's `examples/` and that of
/// every package beside it.
fn example_dirs() -> Vec<PathBuf> {
    let root = crate::root();
    let mut dirs = vec![root.join("examples")];
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            dirs.push(dir.join("examples"));
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.sort();
    dirs
}

/// The functions of `text` over `max` lines: `(line of its fn, lines,
/// name)`, `Type::name` for a method.
fn too_long(text: &str, max: usize) -> Vec<(usize, usize, String)> {
    let c = blank(text);
    let line = |i: usize| c[..i].iter().filter(|ch| **ch == '\n').count() + 1;
    functions(&c)
        .into_iter()
        .filter_map(|f| {
            let (first, last) = (line(f.start), line(f.body.1));
            let lines = last - first + 1;
            (lines > max).then_some((first, lines, f.name))
        })
        .collect()
}

#[test]
fn no_function_of_an_example_is_over_80_lines() {
    let root = crate::root();
    let dirs = example_dirs();
    let (mut problems, mut seen) = (Vec::new(), 0);
    for dir in &dirs {
        let mut paths = Vec::new();
        files(dir, &mut paths);
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            seen += functions(&blank(&text)).len();
            let rel = path.strip_prefix(&root).unwrap().display();
            for (line, lines, name) in too_long(&text, MAX_LINES) {
                problems.push(format!(
                    "{rel}:{line}: `{name}` is {lines} lines: split it into functions named \
                     for what each part does"
                ));
            }
        }
    }
    assert!(
        dirs.len() >= 3 && seen > 100,
        "only {seen} functions in {} example directories: the scan is broken",
        dirs.len()
    );
    assert!(
        problems.is_empty(),
        "functions of the examples over {MAX_LINES} lines (from `fn` to its closing brace):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_counts_from_fn_to_the_closing_brace() {
    let text = "fn short() {\n    let s = \"}\"; // }\n}\n\nimpl Tool {\n    pub fn long(&self) \
                {\n        a();\n\n        b('}');\n    }\n}\n";
    assert_eq!(too_long(text, 3), [(6, 5, "Tool::long".to_owned())]);
    assert_eq!(
        too_long(text, 2),
        [(1, 3, "short".to_owned()), (6, 5, "Tool::long".to_owned())]
    );
    assert!(too_long(text, 5).is_empty());
}
