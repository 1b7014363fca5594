//! `cargo xtask lab --update-pins`: every pin checked against its suite's
//! signed index (through the fetcher of `kernels.rs`) and `pins.rs`
//! rewritten where Debian has moved on.

use super::kernels::{Remote, Run, Source};
use super::pins::Pin;
use crate::archive::index;
use crate::shell::Result;
use std::path::Path;
use std::sync::Mutex;

/// What `--update-pins` did.
pub struct PinUpdate {
    /// `old -> new` per rewritten pin.
    pub changed: Vec<String>,
    /// Pins whose index could not be read, with the reason (left as they
    /// are).
    pub unchecked: Vec<String>,
}

/// `cargo xtask lab --update-pins`: every pin checked against its suite's
/// signed index; a pin whose exact version is gone is rewritten in
/// `xtask/src/lab/pins.rs` to the newest of its series. A pin whose index
/// cannot be read is left as it is and reported.
pub fn update_pins(source: &Source, pins: &[Pin], file: &Path) -> Result<PinUpdate> {
    let run = Run {
        source,
        indexes: Mutex::default(),
        stale: Mutex::default(),
    };
    let mut text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut changed = Vec::new();
    let mut unchecked = Vec::new();
    for pin in pins {
        let packages = match run.packages(pin.suite, pin.arch.debian()) {
            Ok(p) => p,
            Err(e) => {
                unchecked.push(format!("{} ({}): {e}", pin.package, pin.arch.debian()));
                continue;
            }
        };
        if packages
            .records(pin.package)
            .any(|s| s.version() == pin.version && s.field("SHA256") == Some(pin.sha256))
        {
            continue;
        }
        let now = packages
            .newest_matching(|n| index::glob(pin.family, n))
            .ok_or_else(|| {
                format!(
                    "{} lists no package of the series {}: edit the pin by hand",
                    packages.url, pin.family
                )
            })?;
        let now = Remote::of_stanza(pin.suite, now, pin.member)?;
        text = rewrite(&text, pin, &now)?;
        changed.push(format!(
            "{} {} ({}) -> {} {}",
            pin.package,
            pin.version,
            pin.arch.debian(),
            now.package,
            now.version
        ));
    }
    if !changed.is_empty() {
        std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(PinUpdate { changed, unchecked })
}

/// `pins.rs` text with one pin's fields replaced.
fn rewrite(text: &str, pin: &Pin, now: &Remote) -> Result<String> {
    let at = text
        .find(&format!("sha256: \"{}\"", pin.sha256))
        .ok_or_else(|| format!("pins.rs has no pin with sha256 {}", pin.sha256))?;
    let start = text[..at]
        .rfind("Pin {")
        .ok_or("pins.rs: no `Pin {` before the hash")?;
    let end = at
        + text[at..]
            .find("},")
            .ok_or("pins.rs: no `},` after the hash")?;
    let mut block = text[start..end].to_owned();
    for (field, old, new) in [
        (
            "package",
            format!("\"{}\"", pin.package),
            format!("\"{}\"", now.package),
        ),
        (
            "version",
            format!("\"{}\"", pin.version),
            format!("\"{}\"", now.version),
        ),
        (
            "filename",
            format!("\"{}\"", pin.filename),
            format!("\"{}\"", now.filename),
        ),
        ("size", pin.size.to_string(), now.size.to_string()),
        (
            "sha256",
            format!("\"{}\"", pin.sha256),
            format!("\"{}\"", now.sha256),
        ),
    ] {
        let from = format!("{field}: {old},");
        if !block.contains(&from) {
            return Err(format!(
                "pins.rs: the pin of {} has no `{from}`",
                pin.package
            ));
        }
        block = block.replace(&from, &format!("{field}: {new},"));
    }
    Ok(format!("{}{block}{}", &text[..start], &text[end..]))
}
