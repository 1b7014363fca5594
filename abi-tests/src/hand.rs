//! The crate's hand-written ABI facts (`abi::ioctl_numbers` composed numbers,
//! `abi::AttrSize` and the field that ends each size, `abi::bitfield`
//! masks), stated for one target as facts C can check.

use crate::facts::{field_offset, root_size, Assert, Facts, Probe, Target};
use crate::model::Model;
use perf_event_core::abi::bitfield::{self, BitField as HandBitField};
use perf_event_core::abi::AttrSize;

/// The crate's hand-written facts, stated for `target`.
pub(crate) fn hand_written(
    model: &Model,
    target: &Target,
    facts: &mut Facts,
) -> Result<(), String> {
    for ioc in target.encoding.perf_requests(target.pointer_size as usize) {
        facts.asserts.push(Assert {
            label: format!("ioctl {} (const fn composer)", ioc.name),
            c_expr: ioc.name.to_owned(),
            rust_expr: None,
            expected: i128::from(ioc.request),
        });
    }
    let fields_after: [&str; 10] = [
        "config2",
        "branch_sample_type",
        "sample_regs_user",
        "sample_regs_intr",
        "aux_watermark",
        "aux_sample_size",
        "sig_data",
        "config3",
        "config4",
        "",
    ];
    for (size, next) in AttrSize::ALL.iter().zip(fields_after) {
        let n = size.version();
        facts.asserts.push(Assert {
            label: format!("attr size AttrSize::Ver{n}"),
            c_expr: format!("PERF_ATTR_SIZE_VER{n}"),
            rust_expr: None,
            expected: i128::from(size.bytes()),
        });
        let (label, c_expr) = if next.is_empty() {
            (
                "sizeof(struct perf_event_attr)".to_owned(),
                "sizeof(struct perf_event_attr)".to_owned(),
            )
        } else {
            (
                format!("offsetof(perf_event_attr, {next})"),
                format!("__builtin_offsetof(struct perf_event_attr, {next})"),
            )
        };
        facts.asserts.push(Assert {
            label: format!("attr size AttrSize::Ver{n} ends at {label}"),
            c_expr,
            rust_expr: None,
            expected: i128::from(size.bytes()),
        });
    }
    let words: [(&str, &str, &[HandBitField]); 3] = [
        (
            "struct perf_event_attr",
            "perf_event_attr",
            bitfield::attr_flags::ALL,
        ),
        (
            "struct perf_event_attr",
            "perf_event_attr__bindgen_ty_5__bindgen_ty_1",
            bitfield::aux_action::ALL,
        ),
        (
            "struct perf_event_mmap_page",
            "perf_event_mmap_page__bindgen_ty_1__bindgen_ty_1",
            bitfield::mmap_caps::ALL,
        ),
    ];
    for (c_type, agg_name, fields) in words {
        let word_offset = hand_word_offset(model, target, agg_name)?;
        let size = root_size(model, c_type)?;
        for f in fields {
            let mask = f.mask_for(target.big_endian);
            let ones = if f.width >= 64 {
                u64::MAX
            } else {
                (1u64 << f.width) - 1
            };
            // (value, raw word): all ones is the mask; 1 is the mask's lowest bit.
            for (value, word) in [(1, mask & mask.wrapping_neg()), (ones, mask)] {
                let bytes = match (f.word_bits, target.big_endian) {
                    (64, true) => word.to_be_bytes().to_vec(),
                    (64, false) => word.to_le_bytes().to_vec(),
                    (_, true) => (word as u32).to_be_bytes().to_vec(),
                    (_, false) => (word as u32).to_le_bytes().to_vec(),
                };
                let mut expected = vec![0u8; size as usize];
                let at = word_offset as usize;
                expected[at..at + bytes.len()].copy_from_slice(&bytes);
                let which = if value == 1 { "1" } else { "all ones" };
                facts.probes.push(Probe {
                    label: format!(
                        "abi::bitfield {}::{} = {which}",
                        c_type.split(' ').nth(1).unwrap_or(""),
                        f.name
                    ),
                    c_type: c_type.to_owned(),
                    field: format!(".{}", f.name),
                    value,
                    expected,
                    rust: None,
                });
            }
        }
    }
    Ok(())
}

/// Offset of the bit-field word of an aggregate inside its named root.
fn hand_word_offset(model: &Model, target: &Target, agg_name: &str) -> Result<u64, String> {
    // Walk up through the anonymous parents: X__bindgen_ty_N lives in X.
    let agg = model
        .aggregates
        .get(agg_name)
        .ok_or_else(|| format!("no {agg_name}"))?;
    let mut offset = field_offset(model, target, agg, "_bitfield_1")?;
    let mut child = agg_name.to_owned();
    while let Some(cut) = child.rfind("__bindgen_ty_") {
        let parent_name = child[..cut].to_owned();
        let parent = model
            .aggregates
            .get(&parent_name)
            .ok_or_else(|| format!("no {parent_name}"))?;
        let via = parent
            .fields
            .iter()
            .find(|f| f.ty == child)
            .ok_or_else(|| format!("{parent_name} has no field of type {child}"))?;
        offset += field_offset(model, target, parent, &via.name)?;
        child = parent_name;
    }
    Ok(offset)
}
