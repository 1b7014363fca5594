//! With feature `bindgen`: the bindings build.rs generated from the installed
//! headers describe the same host ABI as the vendored file of this
//! architecture. Compared are every layout fact bindgen computed with clang
//! (size and alignment of every type, offset of every field) and the value
//! of every constant, in both files.
//!
//! `cargo xtask ci` runs this against the pinned header set (same kernel:
//! everything must be equal) through `PERF_EVENT_INCLUDE_DIR`. A unit test of
//! the crate: build.rs's `OUT_DIR` and `PERF_EVENT_CORE_VENDORED` are the
//! crate's own.
use std::collections::BTreeMap;
use std::format;
use std::string::String;
use std::vec::Vec;

const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/sys.rs"));
const VENDORED_FILE: &str = env!("PERF_EVENT_CORE_VENDORED");

/// bindgen's layout assertions, `["Size of X"][size_of::<X>() - 8usize]`,
/// as label -> number.
fn layout_facts(text: &str) -> BTreeMap<String, u64> {
    let mut facts = BTreeMap::new();
    let mut rest = text;
    while let Some(start) = rest.find("[\"") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find("\"]") else { break };
        let label = &rest[..end];
        rest = &rest[end..];
        let is_fact = ["Size of ", "Alignment of ", "Offset of field: "]
            .iter()
            .any(|p| label.starts_with(p));
        let Some(close) = rest.find("usize]") else {
            break;
        };
        if !is_fact {
            continue;
        }
        let expr = &rest[..close];
        let number = expr
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap_or("");
        let value = number
            .parse()
            .unwrap_or_else(|_| panic!("layout fact {label}: {expr}"));
        facts.insert(label.to_owned(), value);
    }
    facts
}

/// `pub const NAME: T = VALUE;` as name -> value text.
fn constants(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("pub const "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let value = rest.split_once('=')?.1.trim().trim_end_matches(';');
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

fn vendored() -> String {
    assert!(
        !VENDORED_FILE.is_empty(),
        "this target has no vendored bindings to compare with (feature `bindgen` is what \
         it builds with); run this test on an architecture listed in bindgen_options.rs"
    );
    let path = format!("{}/src/sys/{VENDORED_FILE}.rs", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn parser_sees_the_facts_it_compares() {
    let facts = layout_facts(GENERATED);
    assert_eq!(facts.get("Size of perf_event_header"), Some(&8));
    assert_eq!(
        facts.get("Offset of field: perf_event_mmap_page::data_head"),
        Some(&1024)
    );
    assert!(
        facts.len() >= 100,
        "only {} layout facts parsed",
        facts.len()
    );
    assert!(constants(GENERATED).contains_key("PERF_EVENT_IOC_ENABLE"));
}

#[test]
fn host_layouts_equal_the_vendored_ones() {
    let vendored_text = vendored();
    let (ours, theirs) = (layout_facts(GENERATED), layout_facts(&vendored_text));
    // Newer installed headers may add fields and grow perf_event_attr;
    // nothing the vendored file knows may move or disappear.
    let newer = constants(GENERATED).len() > constants(&vendored_text).len();
    let mut problems = Vec::new();
    for (label, want) in &theirs {
        match ours.get(label) {
            None => problems.push(format!("{label}: missing from the build-time bindings")),
            Some(got) if got == want => {}
            Some(got) if newer && label.starts_with("Size of ") && got > want => {}
            Some(got) => problems.push(format!("{label}: build-time {got}, vendored {want}")),
        }
    }
    if !newer {
        for label in ours.keys().filter(|l| !theirs.contains_key(*l)) {
            problems.push(format!("{label}: only in the build-time bindings"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} layout differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(theirs.len() >= 100);
}

#[test]
fn host_constants_equal_the_vendored_ones() {
    let vendored_text = vendored();
    let (ours, theirs) = (constants(GENERATED), constants(&vendored_text));
    let problems: Vec<String> = theirs
        .iter()
        .filter(|(name, value)| ours.get(*name) != Some(*value))
        .map(|(name, value)| format!("{name}: build-time {:?}, vendored {value}", ours.get(name)))
        .collect();
    assert!(
        problems.is_empty(),
        "{} constant differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // The ioctl numbers and the syscall number are among them.
    for name in [
        "PERF_EVENT_IOC_MODIFY_ATTRIBUTES",
        "__NR_perf_event_open",
        "PERF_ATTR_SIZE_VER9",
    ] {
        assert!(theirs.contains_key(name), "{name}");
    }
}

#[test]
fn same_headers_give_byte_identical_bindings() {
    let vendored_text = vendored();
    if constants(GENERATED) != constants(&vendored_text) {
        // Different headers: the layout and constant tests above decide.
        assert!(constants(GENERATED).len() > constants(&vendored_text).len());
        return;
    }
    // One options module drives both generators: below the preambles
    // (the `//` lines) the files are identical.
    let strip = |t: &str| -> String {
        t.lines()
            .skip_while(|l| l.starts_with("//") || l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        strip(GENERATED) == strip(&vendored_text),
        "build-time bindings differ from src/sys/{VENDORED_FILE}.rs below the preamble"
    );
}
