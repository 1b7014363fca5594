//! Compiles the man page's seqlock loop (C, -O2) that the benchmark
//! compares with perf-event-core's snapshot.

fn main() {
    println!("cargo:rerun-if-changed=c/manpage_loop.c");
    cc::Build::new()
        .file("c/manpage_loop.c")
        .opt_level(2)
        .warnings(true)
        .compile("manpage_loop");
}
