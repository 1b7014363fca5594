//! A tracepoint's `format` file (`<tracefs>/events/<system>/<event>/format`,
//! since Linux 2.6.31) and the decoding of a sample's PERF_SAMPLE_RAW
//! payload into named, typed values, as libtraceevent does for perf.
//!
//! Each `field:` line gives a C declaration, the field's offset and size in
//! the payload and whether it is signed:
//!
//! ```text
//! field:char prev_comm[16];    offset:8;    size:16;    signed:0;
//! field:__data_loc char[] name;    offset:24;    size:4;    signed:0;
//! ```
//!
//! A fixed array (`[16]`) holds `size / len` bytes per element. A
//! `__data_loc` field is a u32 whose low 16 bits are the data's offset from
//! the start of the payload and high 16 bits its length; `__rel_loc` (since
//! Linux 5.18) is the same with the offset counted from the end of the
//! field itself. Strings (`char` arrays) end at their first NUL.
//!
//! The payload is in the byte order of the machine that recorded it: pass
//! the record's [`ByteOrder`].

use core::fmt;
use perf_event_core::byte_order::ByteOrder;
use std::string::{String, ToString};
use std::vec::Vec;

/// How a field's bytes are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// An integer of `size` bytes (1, 2, 4 or 8), pointers included.
    Scalar,
    /// A fixed array of `len` elements (`char comm[16]`; `char buf[]` of
    /// ftrace's own events has `len` 0 and `size` 0).
    Array {
        /// Number of elements.
        len: usize,
    },
    /// `__data_loc T[] name`: offset and length from the payload's start.
    DataLoc,
    /// `__rel_loc T[] name`: offset from the end of the field (Linux 5.18).
    RelLoc,
}

/// One `field:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceField {
    /// The field's name (`prev_comm`).
    pub name: String,
    /// The C type without the name and array suffix (`char`, `const char *`,
    /// `unsigned long`; for `__data_loc char[]` it is `char`).
    pub type_name: String,
    /// Offset in the payload.
    pub offset: usize,
    /// Size in the payload (4 for `__data_loc` / `__rel_loc`).
    pub size: usize,
    /// Whether the values are signed.
    pub signed: bool,
    /// Its layout.
    pub kind: FieldKind,
}

impl TraceField {
    /// Whether this is one of the `common_*` fields every tracepoint has.
    pub fn is_common(&self) -> bool {
        self.name.starts_with("common_")
    }

    /// Whether this is an array of `char` (decoded as a string up to its
    /// first NUL; `unsigned char` / `u8` arrays are bytes).
    pub fn is_string(&self) -> bool {
        let t = self.type_name.trim_start_matches("const ").trim();
        !matches!(self.kind, FieldKind::Scalar) && matches!(t, "char" | "signed char")
    }

    /// Bytes per element: `size` for scalars, `size / len` for arrays, and
    /// the C type's size for dynamic arrays (1 when unknown).
    pub fn element_size(&self) -> usize {
        match self.kind {
            FieldKind::Scalar => self.size,
            FieldKind::Array { len: 0 } => c_type_size(&self.type_name),
            FieldKind::Array { len } => self.size / len,
            FieldKind::DataLoc | FieldKind::RelLoc => c_type_size(&self.type_name),
        }
    }
}

/// The size of a C scalar type name as tracepoint formats spell it (LP64).
fn c_type_size(t: &str) -> usize {
    let t = t.trim_start_matches("const ").trim();
    if t.ends_with('*') {
        return 8;
    }
    match t {
        "short" | "unsigned short" | "u16" | "s16" | "__u16" | "__s16" | "uint16_t" | "int16_t" => {
            2
        }
        "int" | "unsigned int" | "unsigned" | "u32" | "s32" | "__u32" | "__s32" | "uint32_t"
        | "int32_t" | "pid_t" => 4,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "u64" | "s64" | "__u64"
        | "__s64" | "uint64_t" | "int64_t" | "size_t" => 8,
        _ => 1,
    }
}

/// A parsed `format` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFormat {
    /// `name:` (the event's name).
    pub name: String,
    /// `ID:` (the tracepoint id, the attr's `config`).
    pub id: Option<u64>,
    /// The fields in file order, `common_*` first.
    pub fields: Vec<TraceField>,
    /// `print fmt:` as written (the kernel's printk format and arguments).
    pub print_fmt: String,
}

/// Why a `format` file could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFormatError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub why: String,
}

impl fmt::Display for TraceFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tracepoint format, line {}: {}", self.line, self.why)
    }
}

impl std::error::Error for TraceFormatError {}

/// Why a raw payload could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceDecodeError {
    /// The field.
    pub field: String,
    /// Where its bytes (or its dynamic data) would start.
    pub offset: usize,
    /// How many bytes it needs there.
    pub size: usize,
    /// The payload's length.
    pub len: usize,
}

impl fmt::Display for TraceDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tracepoint field {} needs bytes {}..{} but the payload has {}",
            self.field,
            self.offset,
            self.offset.saturating_add(self.size),
            self.len
        )
    }
}

impl std::error::Error for TraceDecodeError {}

/// A decoded field value, borrowing the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceValue<'a> {
    /// A signed integer (sign-extended from its size).
    Signed(i64),
    /// An unsigned integer or pointer.
    Unsigned(u64),
    /// A character array or string, up to its first NUL.
    Str(&'a [u8]),
    /// Another array: its bytes, element size, signedness and byte order.
    Array(TraceArray<'a>),
}

/// The elements of an array field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceArray<'a> {
    /// The raw bytes.
    pub bytes: &'a [u8],
    /// Bytes per element (1, 2, 4 or 8; anything else is read as bytes).
    pub element_size: usize,
    /// Whether elements are signed.
    pub signed: bool,
    /// The payload's byte order.
    pub order: ByteOrder,
}

impl TraceArray<'_> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len().checked_div(self.element_size).unwrap_or(0)
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`, widened to 64 bits (sign-extended when signed).
    pub fn get(&self, i: usize) -> Option<TraceValue<'static>> {
        let n = self.element_size;
        let b = self.bytes.get(i.checked_mul(n)?..(i + 1).checked_mul(n)?)?;
        Some(int(b, self.signed, self.order))
    }
}

/// An integer of 1, 2, 4 or 8 bytes in `order` (other sizes: the first 8
/// bytes, zero-extended).
fn int(b: &[u8], signed: bool, order: ByteOrder) -> TraceValue<'static> {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    let v = match order {
        ByteOrder::Little => {
            w[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(w)
        }
        ByteOrder::Big => {
            w[8 - n..].copy_from_slice(&b[..n]);
            u64::from_be_bytes(w)
        }
    };
    if signed && n > 0 {
        let shift = 64 - 8 * n as u32;
        TraceValue::Signed(((v << shift) as i64) >> shift)
    } else {
        TraceValue::Unsigned(v)
    }
}

fn number(s: &str, line: usize, what: &str) -> Result<usize, TraceFormatError> {
    s.trim().parse().map_err(|_| TraceFormatError {
        line,
        why: std::format!("{what} is not a number: {s:?}"),
    })
}

/// Splits a field's C declaration into (type, name, kind).
fn declaration(decl: &str, line: usize) -> Result<(String, String, FieldKind), TraceFormatError> {
    let bad = |why: &str| TraceFormatError {
        line,
        why: std::format!("{why}: {decl:?}"),
    };
    let decl = decl.trim();
    let (decl, loc) = if let Some(rest) = decl.strip_prefix("__data_loc ") {
        (rest, Some(FieldKind::DataLoc))
    } else if let Some(rest) = decl.strip_prefix("__rel_loc ") {
        (rest, Some(FieldKind::RelLoc))
    } else {
        (decl, None)
    };
    // The name is the last identifier, after any array suffix is removed.
    let (head, array) = match decl.strip_suffix(']') {
        Some(d) => {
            let open = d.rfind('[').ok_or_else(|| bad("unbalanced ']'"))?;
            (&d[..open], Some(d[open + 1..].trim()))
        }
        None => (decl, None),
    };
    let head = head.trim_end();
    let split = head
        .char_indices()
        .rfind(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &head[split..];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return Err(bad("no field name"));
    }
    let mut ty = head[..split].trim().to_string();
    if let Some(kind) = loc {
        // `__data_loc char[] name`: the brackets sit on the type.
        ty = ty.trim_end_matches("[]").trim().to_string();
        return Ok((ty, name.to_string(), kind));
    }
    let kind = match array {
        None => FieldKind::Scalar,
        // `char buf[]`: a flexible array (ftrace's own events), length 0.
        Some("") => FieldKind::Array { len: 0 },
        Some(len) => FieldKind::Array {
            len: len
                .parse()
                .map_err(|_| bad("array length is not a number"))?,
        },
    };
    if ty.is_empty() {
        return Err(bad("no type"));
    }
    Ok((ty, name.to_string(), kind))
}

impl TraceFormat {
    /// Parses the text of a `format` file.
    pub fn parse(text: &str) -> Result<TraceFormat, TraceFormatError> {
        let mut out = TraceFormat {
            name: String::new(),
            id: None,
            fields: Vec::new(),
            print_fmt: String::new(),
        };
        let mut lines = text.lines().enumerate();
        while let Some((i, raw)) = lines.next() {
            let line = i + 1;
            let l = raw.trim();
            if let Some(v) = l.strip_prefix("name:") {
                out.name = v.trim().to_string();
            } else if let Some(v) = l.strip_prefix("ID:") {
                out.id = Some(number(v, line, "ID")? as u64);
            } else if let Some(v) = l.strip_prefix("print fmt:") {
                // The format string may hold newlines: the rest of the file.
                let mut fmt = v.trim().to_string();
                for (_, more) in lines.by_ref() {
                    fmt.push('\n');
                    fmt.push_str(more);
                }
                out.print_fmt = fmt.trim_end().to_string();
            } else if let Some(rest) = l
                .strip_prefix("field:")
                .or_else(|| l.strip_prefix("field special:"))
            {
                out.fields.push(Self::field(rest, line)?);
            } else if !(l.is_empty() || l == "format:") {
                return Err(TraceFormatError {
                    line,
                    why: std::format!("unexpected line {l:?}"),
                });
            }
        }
        if out.fields.is_empty() {
            return Err(TraceFormatError {
                line: text.lines().count(),
                why: "no field: lines".to_string(),
            });
        }
        Ok(out)
    }

    fn field(rest: &str, line: usize) -> Result<TraceField, TraceFormatError> {
        let mut parts = rest.split(';').map(str::trim);
        let decl = parts.next().unwrap_or("");
        let (mut offset, mut size, mut signed) = (None, None, false);
        for p in parts.filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once(':').ok_or_else(|| TraceFormatError {
                line,
                why: std::format!("expected key:value, found {p:?}"),
            })?;
            match k.trim() {
                "offset" => offset = Some(number(v, line, "offset")?),
                "size" => size = Some(number(v, line, "size")?),
                "signed" => signed = number(v, line, "signed")? != 0,
                _ => {} // later kernels may add keys
            }
        }
        let (type_name, name, kind) = declaration(decl, line)?;
        let missing = |what: &str| TraceFormatError {
            line,
            why: std::format!("field {name} has no {what}"),
        };
        let offset = offset.ok_or_else(|| missing("offset"))?;
        let size = size.ok_or_else(|| missing("size"))?;
        Ok(TraceField {
            name,
            type_name,
            offset,
            size,
            signed,
            kind,
        })
    }

    /// The field called `name`.
    pub fn field_named(&self, name: &str) -> Option<&TraceField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Decodes field `f` of a PERF_SAMPLE_RAW payload.
    pub fn value<'a>(
        &self,
        f: &TraceField,
        raw: &'a [u8],
        order: ByteOrder,
    ) -> Result<TraceValue<'a>, TraceDecodeError> {
        let err = |offset: usize, size: usize| TraceDecodeError {
            field: f.name.clone(),
            offset,
            size,
            len: raw.len(),
        };
        let own = raw
            .get(
                f.offset
                    ..f.offset
                        .checked_add(f.size)
                        .ok_or_else(|| err(f.offset, f.size))?,
            )
            .ok_or_else(|| err(f.offset, f.size))?;
        let data = match f.kind {
            FieldKind::Scalar => return Ok(int(own, f.signed, order)),
            FieldKind::Array { .. } => own,
            FieldKind::DataLoc | FieldKind::RelLoc => {
                let TraceValue::Unsigned(loc) = int(&own[..own.len().min(4)], false, order) else {
                    return Err(err(f.offset, 4));
                };
                let (mut at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
                if f.kind == FieldKind::RelLoc {
                    at += f.offset + f.size;
                }
                raw.get(at..at + len).ok_or_else(|| err(at, len))?
            }
        };
        if f.is_string() {
            let end = data.iter().position(|c| *c == 0).unwrap_or(data.len());
            return Ok(TraceValue::Str(&data[..end]));
        }
        Ok(TraceValue::Array(TraceArray {
            bytes: data,
            element_size: f.element_size().max(1),
            signed: f.signed,
            order,
        }))
    }

    /// Every field of a payload by name, in file order; the first field
    /// that does not fit fails the whole decode.
    pub fn decode<'f, 'a>(
        &'f self,
        raw: &'a [u8],
        order: ByteOrder,
    ) -> Result<Vec<(&'f str, TraceValue<'a>)>, TraceDecodeError> {
        self.fields
            .iter()
            .map(|f| Ok((f.name.as_str(), self.value(f, raw, order)?)))
            .collect()
    }
}

impl super::Tracefs {
    /// Reads and parses `events/<system>/<event>/format`.
    pub fn format(&self, system: &str, event: &str) -> Result<TraceFormat, TraceFormatError> {
        let path = self
            .root()
            .join("events")
            .join(system)
            .join(event)
            .join("format");
        let text = std::fs::read_to_string(&path).map_err(|e| TraceFormatError {
            line: 0,
            why: std::format!("cannot read {}: {e}", path.display()),
        })?;
        TraceFormat::parse(&text)
    }
}

#[cfg(test)]
#[path = "tracefs_format_tests.rs"]
mod tests;
