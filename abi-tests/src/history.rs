//! The perf ABI across kernel versions: every fact an older kernel's
//! bindings state must hold unchanged in every newer one (the ABI only
//! grows), except that reserved space may be put to use and aggregates may
//! grow at their end. What each kernel added is rendered as a table.

use crate::facts::{derive_bindings, Facts, Target};
use crate::model::Model;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One kernel's bindings for the host architecture.
#[derive(Debug)]
pub struct Snapshot {
    /// Header package and kernel version, for the table.
    pub name: String,
    /// The facts its bindings state.
    pub facts: Facts,
    /// The model they came from.
    pub model: Model,
}

impl Snapshot {
    /// Parses one kernel's generated bindings.
    pub fn new(name: &str, bindings: &str, target: &Target) -> Result<Snapshot, String> {
        let model = Model::parse(bindings).map_err(|e| format!("{name}: {e}"))?;
        let facts = derive_bindings(&model, target).map_err(|e| format!("{name}: {e}"))?;
        Ok(Snapshot {
            name: name.to_owned(),
            facts,
            model,
        })
    }

    fn values(&self) -> BTreeMap<&str, String> {
        let mut out: BTreeMap<&str, String> = BTreeMap::new();
        for a in &self.facts.asserts {
            out.insert(&a.label, a.expected.to_string());
        }
        for p in &self.facts.probes {
            // Non-zero bytes only: a probe of a grown aggregate keeps its value.
            out.insert(&p.label, crate::check::hex(&p.expected));
        }
        out
    }
}

/// Reserved space may change meaning between kernels.
fn is_reserved(label: &str) -> bool {
    ["::__reserved", "cap_____res", "::mem_rsvd", "::reserved "]
        .iter()
        .any(|r| label.contains(r))
        || label.ends_with("::reserved")
}

/// `*_MAX` enumerators count the values of an enumeration; the header marks
/// them "non-ABI" and they move whenever a value is added.
fn is_sentinel(label: &str) -> bool {
    label
        .strip_prefix("constant ")
        .is_some_and(|n| n.ends_with("_MAX") || n.ends_with("_MAX_SHIFT"))
}

/// Growth of an aggregate at its end is allowed.
fn may_grow(label: &str) -> bool {
    label.starts_with("size ")
}

/// Every way `new` breaks a fact of `old`.
pub fn breaks(old: &Snapshot, new: &Snapshot) -> Vec<String> {
    let (before, after) = (old.values(), new.values());
    let mut out = Vec::new();
    for (label, was) in &before {
        if is_reserved(label) || is_sentinel(label) {
            continue;
        }
        match after.get(label) {
            None => out.push(format!("{label}: in {} but gone in {}", old.name, new.name)),
            Some(now) if now == was => {}
            Some(now) if may_grow(label) && now.parse::<i128>().ok() > was.parse::<i128>().ok() => {
            }
            Some(now) => out.push(format!(
                "{label}: {was} in {}, {now} in {}",
                old.name, new.name
            )),
        }
    }
    out
}

/// What `new` adds over `old`, grouped for the table.
#[derive(Debug, Default)]
pub struct Added {
    /// `offset X::f` labels new in `new`, with the offset and size.
    pub fields: Vec<(String, String, String)>,
    /// Bit fields new in `new` (`X::f`).
    pub bitfields: Vec<String>,
    /// Constants new in `new`, with their value.
    pub constants: Vec<(String, String)>,
    /// Aggregates or types new in `new`, with their size.
    pub types: Vec<(String, String)>,
    /// Sizes that grew: (type, old, new).
    pub grown: Vec<(String, String, String)>,
    /// Reserved space that changed.
    pub reserved: Vec<String>,
    /// `*_MAX` sentinels that moved: (name, old, new).
    pub sentinels: Vec<(String, String, String)>,
}

/// Computes what `new` adds over `old`.
pub fn added(old: &Snapshot, new: &Snapshot) -> Added {
    let (before, after) = (old.values(), new.values());
    let mut add = Added::default();
    for (label, now) in &after {
        let was = before.get(label);
        if let Some(field) = label.strip_prefix("offset ") {
            if was.is_none() {
                let size = after
                    .get(format!("field size {field}").as_str())
                    .cloned()
                    .unwrap_or_default();
                add.fields.push((field.to_owned(), now.clone(), size));
            }
        } else if let Some(bf) = label
            .strip_prefix("bitfield ")
            .and_then(|b| b.strip_suffix(" = 1"))
        {
            if was.is_none() && !is_reserved(label) {
                add.bitfields.push(bf.to_owned());
            }
        } else if let Some(name) = label.strip_prefix("constant ") {
            match was {
                None => add.constants.push((name.to_owned(), now.clone())),
                Some(w) if w != now && is_sentinel(label) => {
                    add.sentinels
                        .push((name.to_owned(), w.clone(), now.clone()))
                }
                _ => {}
            }
        } else if let Some(ty) = label.strip_prefix("size ") {
            match was {
                None => add.types.push((ty.to_owned(), now.clone())),
                Some(w) if w != now => add.grown.push((ty.to_owned(), w.clone(), now.clone())),
                _ => {}
            }
        }
        if is_reserved(label) && was.is_some_and(|w| w != now) && label.ends_with("= all ones") {
            add.reserved.push(
                label
                    .trim_start_matches("bitfield ")
                    .trim_end_matches(" = all ones")
                    .to_owned(),
            );
        }
    }
    for label in before
        .keys()
        .filter(|l| is_reserved(l) && !after.contains_key(*l))
    {
        if let Some(field) = label.strip_prefix("offset ") {
            add.reserved.push(format!("{field} (now used)"));
        }
    }
    add
}

/// The checked-in table: what each kernel added over the previous one.
pub fn render(snapshots: &[Snapshot], arch: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# perf UAPI history ({arch})\n");
    s.push_str(
        "Generated by `cargo xtask abi` from the kernel headers below, through the same\n\
         bindgen options as `src/sys` (do not edit by hand; `cargo xtask abi --check` verifies).\n\
         Every fact an older kernel states holds unchanged in every newer one (checked),\n\
         except reserved space being put to use and aggregates growing at their end.\n\n",
    );
    for snap in snapshots {
        let attr = snap
            .model
            .sizes
            .get("perf_event_attr")
            .copied()
            .unwrap_or_default();
        let newest = snap
            .model
            .constants
            .keys()
            .filter(|k| k.starts_with("PERF_ATTR_SIZE_VER"))
            .max_by_key(|k| {
                k.trim_start_matches("PERF_ATTR_SIZE_VER")
                    .parse::<u32>()
                    .unwrap_or(0)
            })
            .cloned()
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "- {}: sizeof(perf_event_attr) = {attr} ({newest}), {} facts",
            snap.name,
            snap.facts.len()
        );
    }
    for pair in snapshots.windows(2) {
        let (old, new) = (&pair[0], &pair[1]);
        let add = added(old, new);
        let _ = writeln!(s, "\n## {} -> {}\n", old.name, new.name);
        if !add.grown.is_empty() {
            s.push_str("| grown | from | to |\n|---|---|---|\n");
            for (ty, was, now) in &add.grown {
                let _ = writeln!(s, "| `{ty}` | {was} | {now} |");
            }
            s.push('\n');
        }
        if !add.fields.is_empty() {
            s.push_str("| new field | offset | size |\n|---|---|---|\n");
            for (field, off, size) in &add.fields {
                let _ = writeln!(s, "| `{field}` | {off} | {size} |");
            }
            s.push('\n');
        }
        if !add.bitfields.is_empty() {
            s.push_str("New bit fields: ");
            let list: Vec<String> = add.bitfields.iter().map(|b| format!("`{b}`")).collect();
            s.push_str(&list.join(", "));
            s.push_str("\n\n");
        }
        if !add.reserved.is_empty() {
            s.push_str("Reserved space put to use: ");
            let list: Vec<String> = add.reserved.iter().map(|b| format!("`{b}`")).collect();
            s.push_str(&list.join(", "));
            s.push_str("\n\n");
        }
        if !add.sentinels.is_empty() {
            s.push_str("Sentinels moved (non-ABI): ");
            let list: Vec<String> = add
                .sentinels
                .iter()
                .map(|(n, w, v)| format!("`{n}` {w} -> {v}"))
                .collect();
            s.push_str(&list.join(", "));
            s.push_str("\n\n");
        }
        if !add.types.is_empty() {
            s.push_str("New types: ");
            let list: Vec<String> = add
                .types
                .iter()
                .map(|(t, n)| format!("`{t}` ({n} bytes)"))
                .collect();
            s.push_str(&list.join(", "));
            s.push_str("\n\n");
        }
        if !add.constants.is_empty() {
            s.push_str("| new constant | value |\n|---|---|\n");
            for (name, value) in &add.constants {
                let _ = writeln!(s, "| `{name}` | {value} |");
            }
        }
    }
    s
}
