//! What a bindgen output file says about the ABI, read with `syn`: the
//! aggregates with their fields and bit fields, the type aliases, the
//! constants, and bindgen's layout numbers (size, alignment, field offsets),
//! which rustc checks against its own layout whenever the file is compiled.

use std::collections::BTreeMap;
use syn::{Expr, Fields, Item, Lit, Type};

/// Struct or union.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `struct`.
    Struct,
    /// `union`.
    Union,
}

/// One field of an aggregate, in declaration order.
#[derive(Clone, Debug)]
pub struct Field {
    /// The Rust (and, except for bindgen's own names, C) field name.
    pub name: String,
    /// The field's Rust type, as tokens.
    pub ty: String,
}

/// One bit field, read from bindgen's accessor `fn name(&self)`.
#[derive(Clone, Debug)]
pub struct BitField {
    /// The C name.
    pub name: String,
    /// The storage field (`_bitfield_1`, ...).
    pub unit: String,
    /// First bit within the storage unit, in bindgen's numbering.
    pub bit: u32,
    /// Width in bits.
    pub width: u32,
}

/// A struct or union of the bindings.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// The Rust name (C tag for named types; `Parent__bindgen_ty_N` for
    /// anonymous ones).
    pub name: String,
    /// Struct or union.
    pub kind: Kind,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Bit fields, from the accessors in `impl` blocks.
    pub bitfields: Vec<BitField>,
}

/// Everything the checks use from one bindings file.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// Aggregates by name.
    pub aggregates: BTreeMap<String, Aggregate>,
    /// `pub type X = Y;` aliases.
    pub aliases: BTreeMap<String, String>,
    /// `pub const NAME: T = V;` constants (not bindgen's layout blocks).
    pub constants: BTreeMap<String, (String, i128)>,
    /// bindgen's `["Size of X"]` numbers.
    pub sizes: BTreeMap<String, u64>,
    /// bindgen's `["Alignment of X"]` numbers.
    pub aligns: BTreeMap<String, u64>,
    /// bindgen's `["Offset of field: X::f"]` numbers, by (X, f).
    pub offsets: BTreeMap<(String, String), u64>,
}

/// Type names bindgen defines for its own machinery; not part of the ABI.
pub fn is_bindgen_helper(name: &str) -> bool {
    name.starts_with("__BindgenBitfieldUnit")
        || name.starts_with("__IncompleteArrayField")
        || name.starts_with("__BindgenUnionField")
}

impl Model {
    /// Parses rustfmt'ed bindgen output.
    pub fn parse(source: &str) -> Result<Model, String> {
        let file = syn::parse_file(source).map_err(|e| format!("not Rust: {e}"))?;
        let mut model = Model::default();
        for item in &file.items {
            match item {
                Item::Struct(s) => {
                    let fields = match &s.fields {
                        Fields::Named(named) => named
                            .named
                            .iter()
                            .map(|f| Field {
                                name: f.ident.as_ref().expect("named").to_string(),
                                ty: tokens(&f.ty),
                            })
                            .collect(),
                        _ => continue,
                    };
                    model.add(s.ident.to_string(), Kind::Struct, fields);
                }
                Item::Union(u) => {
                    let fields = u
                        .fields
                        .named
                        .iter()
                        .map(|f| Field {
                            name: f.ident.as_ref().expect("named").to_string(),
                            ty: tokens(&f.ty),
                        })
                        .collect();
                    model.add(u.ident.to_string(), Kind::Union, fields);
                }
                Item::Type(t) => {
                    model.aliases.insert(t.ident.to_string(), tokens(&t.ty));
                }
                Item::Const(c) if c.ident == "_" => model.layout_block(&c.expr)?,
                Item::Const(c) => {
                    let value = int_value(&c.expr)
                        .ok_or_else(|| format!("constant {} is not an integer", c.ident))?;
                    model
                        .constants
                        .insert(c.ident.to_string(), (tokens(&c.ty), value));
                }
                Item::Impl(imp) => {
                    if let Type::Path(p) = &*imp.self_ty {
                        let name = p.path.segments.last().expect("path").ident.to_string();
                        let found = bitfield_accessors(imp);
                        if let Some(agg) = model.aggregates.get_mut(&name) {
                            agg.bitfields.extend(found);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(model)
    }

    fn add(&mut self, name: String, kind: Kind, fields: Vec<Field>) {
        if is_bindgen_helper(&name) {
            return;
        }
        self.aggregates.insert(
            name.clone(),
            Aggregate {
                name,
                kind,
                fields,
                bitfields: Vec::new(),
            },
        );
    }

    /// `const _: () = { ["Size of X"][size_of::<X>() - 8usize]; ... };`
    fn layout_block(&mut self, expr: &Expr) -> Result<(), String> {
        let Expr::Block(block) = expr else {
            return Ok(());
        };
        for stmt in &block.block.stmts {
            let syn::Stmt::Expr(Expr::Index(index), _) = stmt else {
                continue;
            };
            let Expr::Array(label) = &*index.expr else {
                continue;
            };
            let Some(Expr::Lit(lit)) = label.elems.first() else {
                continue;
            };
            let Lit::Str(label) = &lit.lit else { continue };
            let Expr::Binary(bin) = &*index.index else {
                continue;
            };
            let value = int_value(&bin.right)
                .ok_or_else(|| format!("layout fact {:?} has no number", label.value()))?;
            let value = u64::try_from(value).map_err(|_| "negative layout number".to_owned())?;
            let label = label.value();
            if let Some(ty) = label.strip_prefix("Size of ") {
                self.sizes.insert(ty.to_owned(), value);
            } else if let Some(ty) = label.strip_prefix("Alignment of ") {
                self.aligns.insert(ty.to_owned(), value);
            } else if let Some(path) = label.strip_prefix("Offset of field: ") {
                let (ty, field) = path.split_once("::").ok_or("offset label without ::")?;
                self.offsets
                    .insert((ty.to_owned(), field.to_owned()), value);
            }
        }
        Ok(())
    }

    /// The Rust type an alias finally names (`__u64` -> `core :: ffi :: c_ulonglong`).
    pub fn resolve<'a>(&'a self, mut ty: &'a str) -> &'a str {
        while let Some(next) = self.aliases.get(ty) {
            ty = next;
        }
        ty
    }
}

/// Tokens of a type or expression as one string (`core :: ffi :: c_uint`).
pub fn tokens(t: &impl quote::ToTokens) -> String {
    t.to_token_stream().to_string()
}

/// An integer literal, possibly negated or cast (`-1`, `4usize`, `7 as u32`).
fn int_value(expr: &Expr) -> Option<i128> {
    match expr {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<i128>().ok(),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int_value(&u.expr).map(|v| -v),
        Expr::Paren(p) => int_value(&p.expr),
        Expr::Cast(c) => int_value(&c.expr),
        _ => None,
    }
}

/// Bit fields from `pub fn name(&self) -> T { ... self._bitfield_N.get_const::<BIT, W>() ... }`.
fn bitfield_accessors(imp: &syn::ItemImpl) -> Vec<BitField> {
    let mut out = Vec::new();
    for item in &imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        if name.starts_with("set_") || name.ends_with("_raw") || name.starts_with("new_") {
            continue;
        }
        let body = tokens(&f.block);
        let Some(at) = body.find(". get_const :: < ") else {
            continue;
        };
        let before = &body[..at];
        let Some(unit_at) = before.rfind("_bitfield_") else {
            continue;
        };
        let unit = before[unit_at..].trim().to_owned();
        let args = &body[at + ". get_const :: < ".len()..];
        let mut nums = args
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty());
        let (Some(bit), Some(width)) = (nums.next(), nums.next()) else {
            continue;
        };
        let (Ok(bit), Ok(width)) = (bit.parse(), width.parse()) else {
            continue;
        };
        out.push(BitField {
            name,
            unit,
            bit,
            width,
        });
    }
    out
}
