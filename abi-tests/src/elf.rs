//! Just enough ELF to read the bytes of named sections from a relocatable
//! object of any architecture (32/64-bit, either byte order).

use std::collections::BTreeMap;

fn slice(data: &[u8], at: usize, len: usize) -> Result<&[u8], String> {
    data.get(at..at.checked_add(len).ok_or("ELF offset overflow")?)
        .ok_or_else(|| {
            format!(
                "ELF read of {len} bytes at {at} past the end ({})",
                data.len()
            )
        })
}

struct Reader<'a> {
    data: &'a [u8],
    big: bool,
    wide: bool,
}

impl Reader<'_> {
    fn u16(&self, at: usize) -> Result<u64, String> {
        let b: [u8; 2] = slice(self.data, at, 2)?.try_into().expect("2 bytes");
        Ok(u64::from(if self.big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }))
    }
    fn u32(&self, at: usize) -> Result<u64, String> {
        let b: [u8; 4] = slice(self.data, at, 4)?.try_into().expect("4 bytes");
        Ok(u64::from(if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }))
    }
    fn word(&self, at: usize) -> Result<u64, String> {
        if !self.wide {
            return self.u32(at);
        }
        let b: [u8; 8] = slice(self.data, at, 8)?.try_into().expect("8 bytes");
        Ok(if self.big {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }
}

/// The contents of every section whose name starts with `prefix`.
pub fn sections(data: &[u8], prefix: &str) -> Result<BTreeMap<String, Vec<u8>>, String> {
    if slice(data, 0, 4)? != b"\x7fELF" {
        return Err("not an ELF object".to_owned());
    }
    let r = Reader {
        data,
        wide: data[4] == 2,
        big: data[5] == 2,
    };
    let (shoff, shentsize, shnum, shstrndx) = if r.wide {
        (r.word(0x28)?, r.u16(0x3a)?, r.u16(0x3c)?, r.u16(0x3e)?)
    } else {
        (r.word(0x20)?, r.u16(0x2e)?, r.u16(0x30)?, r.u16(0x32)?)
    };
    // (name offset, file offset, size) of section i.
    let header = |i: u64| -> Result<(u64, u64, u64), String> {
        let at = (shoff + i * shentsize) as usize;
        if r.wide {
            Ok((r.u32(at)?, r.word(at + 0x18)?, r.word(at + 0x20)?))
        } else {
            Ok((r.u32(at)?, r.word(at + 0x10)?, r.word(at + 0x14)?))
        }
    };
    let (_, names_at, names_len) = header(shstrndx)?;
    let names = slice(data, names_at as usize, names_len as usize)?;
    let mut out = BTreeMap::new();
    for i in 0..shnum {
        let (name_off, off, size) = header(i)?;
        let name = names
            .get(name_off as usize..)
            .and_then(|n| n.split(|b| *b == 0).next())
            .ok_or("bad section name")?;
        let name = String::from_utf8_lossy(name);
        if name.starts_with(prefix) {
            out.insert(
                name.into_owned(),
                slice(data, off as usize, size as usize)?.to_vec(),
            );
        }
    }
    Ok(out)
}
