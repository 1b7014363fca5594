//! `format` files as the kernel writes them, and payloads built by hand.

use super::*;

const SCHED_SWITCH: &str = "name: sched_switch
ID: 372
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid
";

const DYN: &str = "name: dyn
ID: 9
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:__data_loc char[] name;\toffset:4;\tsize:4;\tsigned:0;
\tfield:__rel_loc char[] rel;\toffset:8;\tsize:4;\tsigned:0;
\tfield:__data_loc u32[] ids;\toffset:12;\tsize:4;\tsigned:0;
\tfield:const char * filename;\toffset:16;\tsize:8;\tsigned:0;
\tfield:s16 deltas[2];\toffset:24;\tsize:4;\tsigned:1;

print fmt: \"%s\", __get_str(name)
";

#[test]
fn sched_switch_fields() {
    let f = TraceFormat::parse(SCHED_SWITCH).unwrap();
    assert_eq!(
        (f.name.as_str(), f.id, f.fields.len()),
        ("sched_switch", Some(372), 11)
    );
    let c = f.field_named("prev_comm").unwrap();
    assert_eq!(
        (
            c.type_name.as_str(),
            c.offset,
            c.size,
            c.kind,
            c.is_string()
        ),
        ("char", 8, 16, FieldKind::Array { len: 16 }, true)
    );
    let s = f.field_named("prev_state").unwrap();
    assert_eq!(
        (s.type_name.as_str(), s.signed, s.kind),
        ("long", true, FieldKind::Scalar)
    );
    assert!(f.fields[0].is_common() && !c.is_common());
    assert!(f.print_fmt.starts_with("\"prev_comm"));

    let mut raw = vec![0u8; 64];
    raw[0..2].copy_from_slice(&372u16.to_le_bytes());
    raw[4..8].copy_from_slice(&(-1i32).to_le_bytes());
    raw[8..12].copy_from_slice(b"bash");
    raw[24..28].copy_from_slice(&1234i32.to_le_bytes());
    raw[32..40].copy_from_slice(&(-2i64).to_le_bytes());
    raw[40..55].copy_from_slice(b"swapper/0\0junk!");
    let v = f.decode(&raw, ByteOrder::Little).unwrap();
    let get = |n: &str| v.iter().find(|(k, _)| *k == n).unwrap().1;
    assert_eq!(get("common_type"), TraceValue::Unsigned(372));
    assert_eq!(get("common_pid"), TraceValue::Signed(-1));
    assert_eq!(get("prev_comm"), TraceValue::Str(b"bash"));
    assert_eq!(get("prev_pid"), TraceValue::Signed(1234));
    assert_eq!(get("prev_state"), TraceValue::Signed(-2));
    assert_eq!(get("next_comm"), TraceValue::Str(b"swapper/0"));
    // One byte short: the field and the bytes it needs are named.
    let e = f.decode(&raw[..63], ByteOrder::Little).unwrap_err();
    assert_eq!(
        (e.field.as_str(), e.offset, e.size, e.len),
        ("next_prio", 60, 4, 63)
    );
}

#[test]
fn data_loc_rel_loc_pointers_and_arrays_in_both_orders() {
    let f = TraceFormat::parse(DYN).unwrap();
    let name = f.field_named("name").unwrap();
    assert_eq!(
        (name.type_name.as_str(), name.kind),
        ("char", FieldKind::DataLoc)
    );
    assert_eq!(f.field_named("rel").unwrap().kind, FieldKind::RelLoc);
    assert_eq!(f.field_named("ids").unwrap().element_size(), 4);
    assert_eq!(f.field_named("filename").unwrap().type_name, "const char *");
    for order in [ByteOrder::Little, ByteOrder::Big] {
        let u16b = |v: u16| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let u32b = |v: u32| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let mut raw = vec![0u8; 28];
        raw[0..2].copy_from_slice(&u16b(9));
        // name at 28, 6 bytes "hello\0"; rel: 4 bytes "ab\0\0" right after
        // the 6 name bytes, counted from the end of `rel` (offset 12).
        raw[4..8].copy_from_slice(&u32b(6 << 16 | 28));
        raw[8..12].copy_from_slice(&u32b(4 << 16 | (34 - 12)));
        raw[12..16].copy_from_slice(&u32b(8 << 16 | 38));
        raw[16..24].copy_from_slice(&match order {
            ByteOrder::Little => 0xdead_beefu64.to_le_bytes(),
            ByteOrder::Big => 0xdead_beefu64.to_be_bytes(),
        });
        raw[24..26].copy_from_slice(&u16b(0xfffe));
        raw[26..28].copy_from_slice(&u16b(3));
        raw.extend(b"hello\0ab\0\0");
        raw.extend(u32b(7));
        raw.extend(u32b(8));
        let v = f.decode(&raw, order).unwrap();
        let get = |n: &str| v.iter().find(|(k, _)| *k == n).unwrap().1;
        assert_eq!(get("name"), TraceValue::Str(b"hello"));
        assert_eq!(get("rel"), TraceValue::Str(b"ab"));
        assert_eq!(get("filename"), TraceValue::Unsigned(0xdead_beef));
        let TraceValue::Array(ids) = get("ids") else {
            panic!()
        };
        assert_eq!((ids.len(), ids.get(1)), (2, Some(TraceValue::Unsigned(8))));
        let TraceValue::Array(d) = get("deltas") else {
            panic!()
        };
        assert_eq!(
            (d.get(0), d.get(1)),
            (Some(TraceValue::Signed(-2)), Some(TraceValue::Signed(3)))
        );
        // A __data_loc pointing past the payload is an error naming it.
        raw[4..8].copy_from_slice(&u32b(60 << 16 | 28));
        let e = f.decode(&raw, order).unwrap_err();
        assert_eq!((e.field.as_str(), e.offset, e.size), ("name", 28, 60));
    }
}

#[test]
fn malformed_files_name_their_line() {
    let e = TraceFormat::parse("name: x\nformat:\n\tfield:int;\toffset:0;\tsize:4;\n").unwrap_err();
    assert_eq!(e.line, 3);
    let e = TraceFormat::parse("name: x\n\tfield:int a;\toffset:zz;\tsize:4;\n").unwrap_err();
    assert!(e.why.contains("offset"), "{e}");
    let e = TraceFormat::parse("name: x\n\tfield:int a[;\toffset:0;\tsize:4;\n").unwrap_err();
    assert_eq!(e.line, 2);
    let e = TraceFormat::parse("name: x\n\tfield:int a;\tsize:4;\n").unwrap_err();
    assert!(e.why.contains("no offset"), "{e}");
    assert!(TraceFormat::parse("name: x\nID: 3\n").is_err());
    assert!(TraceFormat::parse("what is this\n").is_err());
}

/// Every format file of the running kernel parses, and a zeroed payload of
/// each event's fixed size decodes without error (dynamic fields point at
/// offset 0 with length 0).
#[test]
fn every_format_of_this_kernel_parses() {
    let Ok(tracefs) = super::super::Tracefs::find() else {
        println!(
            "not applicable: tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)"
        );
        return;
    };
    let events = tracefs.root().join("events");
    let mut n = 0;
    for sys in std::fs::read_dir(&events).unwrap().flatten() {
        let Ok(evs) = std::fs::read_dir(sys.path()) else {
            continue;
        };
        for ev in evs.flatten() {
            let path = ev.path().join("format");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let f = TraceFormat::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let end = f.fields.iter().map(|x| x.offset + x.size).max().unwrap();
            f.decode(&vec![0; end], ByteOrder::NATIVE)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    println!("{n} tracepoint formats parsed");
    assert!(n > 10);
}
