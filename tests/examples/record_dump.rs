//! Records one thread's `syscalls:sys_enter_prctl` samples (IP, TID, TIME,
//! ID, CPU, PERIOD, READ, CALLCHAIN, RAW, user registers and stack, with
//! COMM/FORK side-band records and `sample_id_all`) and prints, on stdout:
//!
//! - `ORDER Big|Little` and `ARCH <RegsArch>`: this machine's byte order
//!   and register architecture,
//! - `ATTR <hex>`: the attr as this machine's kernel read it,
//! - `REGS <mask>`: the user register mask,
//! - `FORMAT <hex>`: the tracepoint's tracefs `format` file,
//! - per record, `REC <hex>` (its bytes) and `VAL <values>` (every value
//!   this crate decodes from it, in this machine's byte order).
//!
//! This is how the big-endian fixture of `tests/ring/foreign_records.rs` was
//! made: run in an s390x guest (see `tests/ring/fixtures/s390x/README.md`), its
//! output is parsed on a little-endian host, which must print the same
//! values. Needs tracefs (`mount -t tracefs nodev /sys/kernel/tracing`).
//!
//! ```sh
//! cargo run -p perf-event-tests --example record_dump
//! ```

#[path = "../ring/foreign_records/describe.rs"]
mod describe;

fn main() {
    match describe::capture() {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
