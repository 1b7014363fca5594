//! The ABI history part of `cargo xtask abi`: host (x86_64) bindings
//! generated with the shared bindgen options from three kernels' headers
//! (Debian bookworm 6.1, trixie 6.12, sid 7.2), checked to only grow, and
//! rendered into `abi-tests/ABI-HISTORY.md`.

use crate::headers::{self, Pin};
use crate::options;
use crate::shell::{self, Result};
use abi_tests::facts::Target;
use abi_tests::history::{self, Snapshot};

/// Oldest first.
const KERNELS: [Pin; 3] = [headers::BOOKWORM, headers::TRIXIE, headers::SID];
const ARCH: &str = "x86_64";
const TABLE: &str = "abi-tests/ABI-HISTORY.md";

/// Builds the snapshots, checks growth, writes (or with `check`, verifies)
/// the table.
pub fn main(check: bool) -> Result {
    shell::step("ABI history: x86_64 bindings of Linux 6.1, 6.12 and 7.2");
    let arch = options::ARCHES
        .iter()
        .find(|a| a.file == ARCH)
        .expect("x86_64 in the table");
    let target = Target::of(arch.file, arch.target_endian, arch.target_pointer_width);
    let wrapper = shell::root().join("wrapper.h");
    let mut snapshots = Vec::new();
    for pin in &KERNELS {
        let set = headers::fetch_pin(pin)?;
        let dirs = options::include_dirs(&set.include, arch.multiarch);
        let bindings = options::builder(&wrapper, arch.clang_target, &dirs)
            .generate()
            .map_err(|e| format!("bindgen on {}: {e}", set.description))?
            .to_string();
        let name = format!(
            "Linux {} ({} {} {})",
            set.kernel,
            pin.suite,
            headers::PACKAGE,
            pin.version
        );
        let snap = Snapshot::new(&name, &bindings, &target)?;
        eprintln!("  {name}: {} facts", snap.facts.len());
        snapshots.push(snap);
    }
    let mut broken = Vec::new();
    for (i, old) in snapshots.iter().enumerate() {
        for new in &snapshots[i + 1..] {
            broken.extend(history::breaks(old, new));
        }
    }
    if !broken.is_empty() {
        return Err(format!(
            "the ABI did not only grow:\n  {}",
            broken.join("\n  ")
        ));
    }
    eprintln!("  every fact of each older kernel holds in each newer one");
    let table = history::render(&snapshots, ARCH);
    let path = shell::root().join(TABLE);
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == table {
        eprintln!("  {TABLE} is up to date");
        Ok(())
    } else if check {
        Err(format!(
            "{TABLE} is out of date: run `cargo xtask abi` and commit it"
        ))
    } else {
        std::fs::write(&path, table).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("  wrote {TABLE}");
        Ok(())
    }
}
