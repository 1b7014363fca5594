//! x86 guests (both widths) boot the kernel's own ELF `vmlinux` through its
//! PVH entry point, which QEMU enters directly from `-kernel` (the ELF note
//! `XEN_ELFNOTE_PHYS32_ENTRY`, Linux's `CONFIG_PVH`), instead of the
//! `bzImage`: under TCG the image's own decompressor took 8 of a 6.1
//! kernel's 21 s of boot on a quiet host (20 CPU-s from QEMU's start to the
//! power-off of an init that only powers off, 12 with the ELF). The ELF is
//! the image's payload (boot protocol 2.08 and later: `payload_offset` and
//! `payload_length` of the setup header), decompressed on the host with
//! `xz` or `zstd`. Whatever keeps it from being made (another compression,
//! no PVH note, a tool missing) boots the `bzImage` as before, with the
//! reason on the log.

use crate::shell::{self, Result};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The ELF note type of the PVH entry point (`XEN_ELFNOTE_PHYS32_ENTRY`).
const PHYS32_ENTRY: u32 = 18;

/// The kernel to boot: the ELF written to `out` from `image`, or `image`
/// itself (with the reason printed) when the ELF cannot be had.
pub fn boot_image(image: &Path, out: &Path) -> PathBuf {
    match uncompressed(image, out) {
        Ok(()) => out.to_path_buf(),
        Err(why) => {
            eprintln!(
                "booting the compressed {} (no PVH vmlinux: {why})",
                image.display()
            );
            image.to_path_buf()
        }
    }
}

/// Writes the ELF inside the `bzImage` `image` to `out`.
fn uncompressed(image: &Path, out: &Path) -> Result {
    let bytes =
        std::fs::read(image).map_err(|e| format!("cannot read {}: {e}", image.display()))?;
    let payload = payload(&bytes)?;
    let (tool, args, body): (&str, &[&str], &[u8]) = if payload.starts_with(b"\xfd7zXZ\0") {
        // --single-stream: the size the build appends after the stream is
        // not a second stream.
        ("xz", &["-dc", "--single-stream"], payload)
    } else if payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        // zstd reads the appended size as a frame it does not know.
        ("zstd", &["-dcq"], &payload[..payload.len() - 4])
    } else {
        return Err(format!(
            "a payload compressed neither by xz nor by zstd (magic {:02x?})",
            &payload[..payload.len().min(4)]
        ));
    };
    let elf = decompress(tool, args, body)?;
    let size = u32::from_le_bytes(payload[payload.len() - 4..].try_into().expect("4 bytes"));
    if elf.len() != size as usize {
        return Err(format!(
            "{tool} gave {} bytes where the image says {size}",
            elf.len()
        ));
    }
    if !has_pvh_entry(&elf)? {
        return Err("the kernel has no PVH entry note (CONFIG_PVH)".to_owned());
    }
    let partial = out.with_extension("partial");
    std::fs::write(&partial, &elf).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, out).map_err(|e| format!("{}: {e}", out.display()))
}

/// The compressed kernel inside a `bzImage` (its trailing 4 bytes are the
/// decompressed size).
fn payload(image: &[u8]) -> Result<&[u8]> {
    let u16_at = |at: usize| {
        image
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        image
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    if image.get(0x202..0x206) != Some(b"HdrS") {
        return Err("not a bzImage (no HdrS)".to_owned());
    }
    let version = u16_at(0x206).unwrap_or(0);
    if version < 0x208 {
        return Err(format!(
            "boot protocol {version:#x} has no payload fields (2.08)"
        ));
    }
    let setup_sects = match image.get(0x1f1) {
        Some(0) | None => 4,
        Some(&n) => usize::from(n),
    };
    let (Some(offset), Some(length)) = (u32_at(0x248), u32_at(0x24c)) else {
        return Err("the setup header is cut".to_owned());
    };
    let start = (setup_sects + 1) * 512 + offset as usize;
    image
        .get(start..start + length as usize)
        .filter(|p| p.len() > 8)
        .ok_or_else(|| format!("payload {start}+{length} is outside the image"))
}

/// `tool args` over `input`, its standard output.
fn decompress(tool: &str, args: &[&str], input: &[u8]) -> Result<Vec<u8>> {
    if !shell::have(tool) {
        return Err(format!("{tool} is not installed"));
    }
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {tool}: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{tool}: {e}"))?;
    let written = writer.join().expect("the writer does not panic");
    if !out.status.success() {
        return Err(format!(
            "{tool} {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    written.map_err(|e| format!("writing to {tool}: {e}"))?;
    Ok(out.stdout)
}

/// Whether a little-endian ELF (32 or 64 bits) has the PVH entry note in a
/// `PT_NOTE` segment.
fn has_pvh_entry(elf: &[u8]) -> Result<bool> {
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(5) != Some(&1) {
        return Err("the payload is not a little-endian ELF".to_owned());
    }
    let wide = match elf.get(4) {
        Some(1) => false,
        Some(2) => true,
        _ => return Err("an ELF of neither 32 nor 64 bits".to_owned()),
    };
    let cut = || "the ELF is cut".to_owned();
    let int = |at: usize, n: usize| -> Result<u64> {
        let b = elf.get(at..at + n).ok_or_else(cut)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |v, &byte| (v << 8) | u64::from(byte)))
    };
    let (phoff, phentsize, phnum) = if wide {
        (int(0x20, 8)?, int(0x36, 2)?, int(0x38, 2)?)
    } else {
        (int(0x1c, 4)?, int(0x2a, 2)?, int(0x2c, 2)?)
    };
    for i in 0..phnum {
        let ph = (phoff + i * phentsize) as usize;
        if int(ph, 4)? != 4 {
            continue; // not PT_NOTE
        }
        let (offset, size) = if wide {
            (int(ph + 8, 8)?, int(ph + 32, 8)?)
        } else {
            (int(ph + 4, 4)?, int(ph + 16, 4)?)
        };
        let (mut at, end) = (offset as usize, (offset + size) as usize);
        while at + 12 <= end {
            let (namesz, descsz, kind) = (int(at, 4)?, int(at + 4, 4)?, int(at + 8, 4)?);
            let name = elf
                .get(at + 12..at + 12 + namesz as usize)
                .ok_or_else(cut)?;
            if name == b"Xen\0" && kind == u64::from(PHYS32_ENTRY) {
                return Ok(true);
            }
            let align = |n: u64| (n as usize).div_ceil(4) * 4;
            at += 12 + align(namesz) + align(descsz);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::{has_pvh_entry, payload};

    /// A 64-bit ELF with one PT_NOTE segment holding `notes`.
    fn elf64(notes: &[(&[u8], u32)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, kind) in notes {
            body.extend_from_slice(&(name.len() as u32).to_le_bytes());
            body.extend_from_slice(&4u32.to_le_bytes());
            body.extend_from_slice(&kind.to_le_bytes());
            body.extend_from_slice(name);
            body.resize(body.len().div_ceil(4) * 4, 0);
            body.extend_from_slice(&[1, 2, 3, 4]);
        }
        let mut elf = vec![0u8; 64 + 56];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        elf[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        elf[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        elf[64..68].copy_from_slice(&4u32.to_le_bytes());
        elf[64 + 8..64 + 16].copy_from_slice(&120u64.to_le_bytes());
        elf[64 + 32..64 + 40].copy_from_slice(&(body.len() as u64).to_le_bytes());
        elf.extend_from_slice(&body);
        elf
    }

    #[test]
    fn the_pvh_note_is_found_among_others_and_missed_where_absent() {
        assert!(has_pvh_entry(&elf64(&[(b"GNU\0", 3), (b"Xen\0", 18)])).unwrap());
        assert!(!has_pvh_entry(&elf64(&[(b"Xen\0", 6), (b"GNU\0", 18)])).unwrap());
        let mut cut = elf64(&[(b"Xen\0", 18)]);
        cut.truncate(130);
        assert!(has_pvh_entry(&cut).is_err());
        assert!(has_pvh_entry(b"MZ not an elf").is_err());
    }

    #[test]
    fn the_payload_is_where_the_setup_header_says() {
        let mut image = vec![0u8; 5 * 512 + 100];
        image[0x1f1] = 4;
        image[0x202..0x206].copy_from_slice(b"HdrS");
        image[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
        image[0x248..0x24c].copy_from_slice(&10u32.to_le_bytes());
        image[0x24c..0x250].copy_from_slice(&20u32.to_le_bytes());
        image[5 * 512 + 10] = 0xfd;
        let p = payload(&image).unwrap();
        assert_eq!((p.len(), p[0]), (20, 0xfd));
        image[0x24c..0x250].copy_from_slice(&2000u32.to_le_bytes());
        assert!(payload(&image).is_err(), "a length past the end");
        image[0x202] = b'X';
        assert!(payload(&image).is_err(), "no HdrS");
    }
}
