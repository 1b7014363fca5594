//! The facts the Rust side states about one architecture's ABI, in a form
//! both C and Rust can evaluate.
//!
//! From the bindings ([`Model`]): size and alignment of every named struct
//! and union, offset, size and alignment of every field (members of
//! anonymous structs and unions included, addressed through their named
//! parent as C does), the storage of every bit field, and the value of every
//! constant and enumerator. From the crate's hand-written ABI facts: the
//! ioctl numbers composed by `const fn`, the published attr sizes and the
//! fields that end them, and the bit-field masks over the raw words.

use crate::model::{Aggregate, Kind, Model};
use perf_event_core::abi::ioctl_numbers::Encoding;

/// What the checks need to know about a target beyond its bindings.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// Byte order.
    pub big_endian: bool,
    /// Size of a pointer and of C `long`, in bytes.
    pub pointer_size: u64,
    /// Largest alignment of a scalar (4 for 8-byte integers on i386).
    pub max_scalar_align: u64,
    /// The architecture's `_IOC` family.
    pub encoding: Encoding,
}

impl Target {
    /// The target of a vendored architecture, by file stem and cfg values.
    pub fn of(file: &str, endian: &str, pointer_width: &str) -> Target {
        let encoding = if file.starts_with("powerpc") {
            Encoding::Powerpc
        } else if file.starts_with("mips") {
            Encoding::Mips
        } else if file.starts_with("sparc") {
            Encoding::Sparc
        } else {
            Encoding::Generic
        };
        Target {
            big_endian: endian == "big",
            pointer_size: if pointer_width == "64" { 8 } else { 4 },
            max_scalar_align: if file == "x86" { 4 } else { 8 },
            encoding,
        }
    }
}

/// `(c_expression) == expected`, checked by `_Static_assert` in C and by
/// evaluating the same fact in Rust on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assert {
    /// Names the item: `offset perf_event_mmap_page::data_head`.
    pub label: String,
    /// The C expression.
    pub c_expr: String,
    /// The Rust expression computing the same fact on the host, when the
    /// fact is about the bindings (None for hand-written constants).
    pub rust_expr: Option<String>,
    /// What the Rust side says.
    pub expected: i128,
}

/// A bit field set to all ones in an otherwise zeroed object: the object's
/// bytes as the Rust side predicts them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Names the item: `bitfield perf_event_attr::precise_ip`.
    pub label: String,
    /// The C type of the object (`struct perf_event_attr`).
    pub c_type: String,
    /// The C designator (`.precise_ip`).
    pub field: String,
    /// The all-ones value of the field.
    pub value: u64,
    /// The object's bytes as the Rust side predicts them.
    pub expected: Vec<u8>,
    /// For the host check: the Rust path from the root object to the
    /// setter (`__bindgen_anon_1.__bindgen_anon_1.set_cap_user_rdpmc`).
    pub rust: Option<String>,
}

/// Every fact about one architecture.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Static assertions.
    pub asserts: Vec<Assert>,
    /// Bit-field probes.
    pub probes: Vec<Probe>,
}

impl Facts {
    /// Total number of facts.
    pub fn len(&self) -> usize {
        self.asserts.len() + self.probes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where an aggregate sits in C: under which named root, at which offset,
/// and through which member path (empty for anonymous members).
#[derive(Clone, Debug)]
struct Place {
    root: String,
    base: u64,
    path: String,
    rust_base: String,
    /// Rust field path from the root to this aggregate, ending in `.`.
    rust_path: String,
}

/// Derives every fact for one architecture: the bindings' and the crate's
/// hand-written ones.
pub fn derive(model: &Model, target: &Target) -> Result<Facts, String> {
    let mut facts = derive_bindings(model, target)?;
    crate::hand::hand_written(model, target, &mut facts)?;
    Ok(facts)
}

/// Derives the facts the bindings alone state (no hand-written ones).
pub fn derive_bindings(model: &Model, target: &Target) -> Result<Facts, String> {
    let mut facts = Facts::default();
    for agg in model.aggregates.values() {
        if agg.name.contains("__bindgen_ty_") {
            continue; // reached through its named parent
        }
        let c_type = c_type(agg);
        for (what, map, c_fn, rust_fn) in [
            ("size", &model.sizes, "sizeof", "size_of"),
            ("align", &model.aligns, "_Alignof", "align_of"),
        ] {
            let n = map
                .get(&agg.name)
                .ok_or_else(|| format!("no {what} of {}", agg.name))?;
            facts.asserts.push(Assert {
                label: format!("{what} {}", agg.name),
                c_expr: format!("{c_fn}({c_type})"),
                rust_expr: Some(format!("core::mem::{rust_fn}::<sys::{}>()", agg.name)),
                expected: i128::from(*n),
            });
        }
        let place = Place {
            root: c_type.clone(),
            base: 0,
            path: String::new(),
            rust_base: "0".to_owned(),
            rust_path: String::new(),
        };
        fields(model, target, agg, &place, &mut facts)?;
    }
    aliases(model, target, &mut facts)?;
    constants(model, &mut facts);
    Ok(facts)
}

fn c_type(agg: &Aggregate) -> String {
    let kind = match agg.kind {
        Kind::Struct => "struct",
        Kind::Union => "union",
    };
    format!("{kind} {}", agg.name)
}

fn fields(
    model: &Model,
    target: &Target,
    agg: &Aggregate,
    place: &Place,
    facts: &mut Facts,
) -> Result<(), String> {
    for field in &agg.fields {
        let name = &field.name;
        if name.starts_with("_bitfield_")
            || name.starts_with("__bindgen_padding")
            || name == "_bindgen_align"
        {
            continue; // bindgen's storage and alignment helpers, not C members
        }
        let offset = field_offset(model, target, agg, name)?;
        let abs = place.base + offset;
        let rust_off = format!(
            "{} + core::mem::offset_of!(sys::{}, {name})",
            place.rust_base, agg.name
        );
        if name.starts_with("__bindgen_anon_") {
            let inner = model
                .aggregates
                .get(&field.ty)
                .ok_or_else(|| format!("{}::{name} has unknown type {}", agg.name, field.ty))?;
            let inner_place = Place {
                root: place.root.clone(),
                base: abs,
                path: place.path.clone(),
                rust_base: rust_off,
                rust_path: format!("{}{name}.", place.rust_path),
            };
            fields(model, target, inner, &inner_place, facts)?;
            continue;
        }
        let member = format!("{}{}", place.path, c_name(name));
        let label = format!("{}::{member}", place.root.split(' ').nth(1).unwrap_or(""));
        let c_null = format!("(({} *)0)->{member}", place.root);
        let (size, align) = type_layout(model, target, &field.ty)?;
        let rust_ty = rust_type(model, &field.ty);
        facts.asserts.push(Assert {
            label: format!("offset {label}"),
            c_expr: format!("__builtin_offsetof({}, {member})", place.root),
            rust_expr: Some(rust_off.clone()),
            expected: i128::from(abs),
        });
        if field.ty.starts_with("__IncompleteArrayField") {
            continue; // a flexible array member: C has no sizeof for it
        }
        facts.asserts.push(Assert {
            label: format!("field size {label}"),
            c_expr: format!("sizeof({c_null})"),
            rust_expr: Some(format!("core::mem::size_of::<{rust_ty}>()")),
            expected: i128::from(size),
        });
        facts.asserts.push(Assert {
            label: format!("field align {label}"),
            c_expr: format!("__alignof__({c_null})"),
            rust_expr: Some(format!("core::mem::align_of::<{rust_ty}>()")),
            expected: i128::from(align),
        });
        if let Some(c_ty) = c_declared_type(model, &field.ty) {
            facts.asserts.push(Assert {
                label: format!("field type {label} is {c_ty}"),
                c_expr: format!("__builtin_types_compatible_p(__typeof__({c_null}), {c_ty})"),
                rust_expr: None,
                expected: 1,
            });
        }
        if let Some(signed) = integer_signedness(model, &field.ty) {
            facts.asserts.push(Assert {
                label: format!("signedness {label}"),
                c_expr: format!("(__typeof__({c_null}))-1 < 0"),
                rust_expr: Some(format!("(0 as {rust_ty}).checked_sub(1).is_some()")),
                expected: i128::from(signed),
            });
        }
    }
    for bf in &agg.bitfields {
        let unit_offset = field_offset(model, target, agg, &bf.unit)?;
        let root_size = root_size(model, &place.root)?;
        let mut expected = vec![0u8; root_size as usize];
        for i in bf.bit..bf.bit + bf.width {
            let byte = (place.base + unit_offset) as usize + (i / 8) as usize;
            let bit = if target.big_endian { 7 - i % 8 } else { i % 8 };
            *expected
                .get_mut(byte)
                .ok_or("bit field beyond its struct")? |= 1 << bit;
        }
        let label = format!(
            "{}::{}{}",
            place.root.split(' ').nth(1).unwrap_or(""),
            place.path,
            c_name(&bf.name)
        );
        let field = format!(".{}{}", place.path, c_name(&bf.name));
        let setter = format!("{}set_{}", place.rust_path, c_name(&bf.name));
        // The value 1: where the field's least significant bit is. bindgen's
        // accessors store a value most significant bit first on big-endian
        // targets (as C compilers do), so there it is the field's last bit.
        let mut lowest = vec![0u8; root_size as usize];
        let low_bit = if target.big_endian {
            bf.bit + bf.width - 1
        } else {
            bf.bit
        };
        let byte = (place.base + unit_offset) as usize + (low_bit / 8) as usize;
        let bit = if target.big_endian {
            7 - low_bit % 8
        } else {
            low_bit % 8
        };
        *lowest.get_mut(byte).ok_or("bit field beyond its struct")? |= 1 << bit;
        facts.probes.push(Probe {
            label: format!("bitfield {label} = 1"),
            c_type: place.root.clone(),
            field: field.clone(),
            value: 1,
            expected: lowest,
            rust: Some(setter.clone()),
        });
        facts.probes.push(Probe {
            label: format!("bitfield {label} = all ones"),
            c_type: place.root.clone(),
            field,
            value: if bf.width >= 64 {
                u64::MAX
            } else {
                (1u64 << bf.width) - 1
            },
            expected,
            rust: Some(setter),
        });
    }
    Ok(())
}

/// Rust's strict and reserved keywords: bindgen appends `_` to C names
/// that are one of these.
const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// The C name of a field or bit field as bindgen named it in Rust.
pub fn c_name(rust: &str) -> &str {
    match rust.strip_suffix('_') {
        Some(k) if RUST_KEYWORDS.contains(&k) => k,
        _ => rust,
    }
}

pub(crate) fn root_size(model: &Model, root: &str) -> Result<u64, String> {
    let name = root.split(' ').nth(1).unwrap_or(root);
    model
        .sizes
        .get(name)
        .copied()
        .ok_or_else(|| format!("no size of {name}"))
}

/// The offset of a field: bindgen's number, or for the bit-field storage
/// (which bindgen gives none) the end of the previous field aligned to the
/// storage's alignment, as `repr(C)` places it.
pub(crate) fn field_offset(
    model: &Model,
    target: &Target,
    agg: &Aggregate,
    name: &str,
) -> Result<u64, String> {
    if let Some(n) = model.offsets.get(&(agg.name.clone(), name.to_owned())) {
        return Ok(*n);
    }
    if agg.kind == Kind::Union {
        return Ok(0);
    }
    let mut end: u64 = 0;
    for field in &agg.fields {
        let (size, align) = type_layout(model, target, &field.ty)?;
        let start = model
            .offsets
            .get(&(agg.name.clone(), field.name.clone()))
            .copied()
            .unwrap_or(end.div_ceil(align) * align);
        if field.name == name {
            return Ok(start);
        }
        end = start + size;
    }
    Err(format!("{}::{name}: no such field", agg.name))
}

/// Size and alignment of a Rust type of the bindings on the target.
pub fn type_layout(model: &Model, target: &Target, ty: &str) -> Result<(u64, u64), String> {
    let ty = model.resolve(ty.trim());
    if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let (elem, count) = inner
            .rsplit_once(';')
            .ok_or_else(|| format!("array {ty}"))?;
        let count: u64 = count
            .trim()
            .trim_end_matches("usize")
            .trim()
            .parse()
            .map_err(|_| ty.to_owned())?;
        let (size, align) = type_layout(model, target, elem)?;
        return Ok((size * count, align));
    }
    if let Some(inner) = ty.strip_prefix("__BindgenBitfieldUnit < ") {
        let (_, align) = type_layout(model, target, "u8")?;
        let (size, _) = type_layout(model, target, inner.trim_end_matches('>').trim())?;
        return Ok((size, align));
    }
    if let Some(inner) = ty.strip_prefix("__IncompleteArrayField < ") {
        let (_, align) = type_layout(model, target, inner.trim_end_matches('>').trim())?;
        return Ok((0, align));
    }
    let scalar = |size: u64| Ok((size, size.min(target.max_scalar_align)));
    match ty.rsplit(' ').next().unwrap_or(ty) {
        "u8" | "i8" | "c_uchar" | "c_schar" | "c_char" => scalar(1),
        "u16" | "i16" | "c_ushort" | "c_short" => scalar(2),
        "u32" | "i32" | "c_uint" | "c_int" => scalar(4),
        "u64" | "i64" | "c_ulonglong" | "c_longlong" => scalar(8),
        "c_ulong" | "c_long" | "usize" | "isize" => scalar(target.pointer_size),
        name => match (model.sizes.get(name), model.aligns.get(name)) {
            (Some(s), Some(a)) => Ok((*s, *a)),
            _ => Err(format!("unknown type {ty}")),
        },
    }
}

/// Whether an integer type is signed (None for non-integers).
fn integer_signedness(model: &Model, ty: &str) -> Option<bool> {
    match model.resolve(ty.trim()).rsplit(' ').next()? {
        "u8" | "u16" | "u32" | "u64" | "c_uchar" | "c_ushort" | "c_uint" | "c_ulong"
        | "c_ulonglong" | "usize" => Some(false),
        "i8" | "i16" | "i32" | "i64" | "c_schar" | "c_short" | "c_int" | "c_long"
        | "c_longlong" | "isize" => Some(true),
        _ => None,
    }
}

/// A bindings type as a Rust path usable outside `sys` (`sys::__u64`).
fn rust_type(model: &Model, ty: &str) -> String {
    let mut out = String::new();
    for tok in ty.split(' ') {
        let ident = tok.trim_start_matches(['[', '(', '<', '&']);
        out.push_str(&tok[..tok.len() - ident.len()]);
        let ours = ident.starts_with("__") || ident.starts_with("perf_");
        if ours || model.aliases.contains_key(ident) {
            out.push_str("sys::");
        }
        out.push_str(ident);
        out.push(' ');
    }
    out.trim_end().replace(" :: ", "::")
}

/// The C spelling of a field's Rust type, when it is a typedef of the
/// headers (`__u64`), an enumeration, an integer or an array of those.
fn c_declared_type(model: &Model, ty: &str) -> Option<String> {
    let ty = ty.trim();
    if let Some(inner) = ty.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        let (elem, count) = inner.rsplit_once(';')?;
        let count = count.trim().trim_end_matches("usize");
        return c_declared_type(model, elem).map(|e| format!("{e}[{count}]"));
    }
    if ty.starts_with("__") && model.aliases.contains_key(ty) && !ty.starts_with("__Bindgen") {
        return Some(ty.to_owned());
    }
    if model.aggregates.contains_key(ty) && !ty.contains("__bindgen_ty_") {
        return Some(c_type(&model.aggregates[ty]));
    }
    None
}

/// Size, alignment and signedness of every typedef and enumeration type the
/// bindings alias (`__u64`, `perf_type_id`, ...).
fn aliases(model: &Model, target: &Target, facts: &mut Facts) -> Result<(), String> {
    for (name, ty) in &model.aliases {
        if name.starts_with("_bindgen_ty_") || name.starts_with("__Bindgen") {
            continue; // anonymous enums have no C name
        }
        let c = if name.starts_with("perf_") {
            format!("enum {name}")
        } else {
            name.clone()
        };
        let (size, align) = type_layout(model, target, ty)?;
        let rust = format!("sys::{name}");
        for (what, c_fn, rust_fn, n) in [
            ("size", "sizeof", "size_of", size),
            ("align", "_Alignof", "align_of", align),
        ] {
            facts.asserts.push(Assert {
                label: format!("{what} of type {c}"),
                c_expr: format!("{c_fn}({c})"),
                rust_expr: Some(format!("core::mem::{rust_fn}::<{rust}>()")),
                expected: i128::from(n),
            });
        }
        if let Some(signed) = integer_signedness(model, ty) {
            facts.asserts.push(Assert {
                label: format!("signedness of type {c}"),
                c_expr: format!("({c})-1 < 0"),
                rust_expr: Some(format!("(0 as {rust}).checked_sub(1).is_some()")),
                expected: i128::from(signed),
            });
        }
    }
    Ok(())
}

fn constants(model: &Model, facts: &mut Facts) {
    for (name, (_, value)) in &model.constants {
        facts.asserts.push(Assert {
            label: format!("constant {name}"),
            c_expr: name.clone(),
            rust_expr: Some(format!("sys::{name}")),
            expected: *value,
        });
    }
}
