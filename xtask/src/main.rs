//! Project automation for perf-event-core. Run `cargo xtask help`.

#[path = "../../bindgen_options.rs"]
#[allow(dead_code)]
mod options;

mod abi;
mod archive;
mod ci;
mod ci_bindgen;
mod ci_lab;
mod cpu_time;
mod cross;
mod debian;
mod fuzz;
mod generate;
mod headers;
mod history;
mod lab;
mod links;
mod msrv;
mod package;
mod public_api;
mod shell;
mod vendor_events;

const USAGE: &str = "usage: cargo xtask <task>
  bindgen [--check] [--headers DIR] [--arch NAME]...
                 regenerate src/sys from the pinned kernel headers (see `bindgen --help`)
  abi [--check]  every ABI fact of every architecture vs the C compiler; the ABI history
                 (--check: fail if abi-tests/ABI-HISTORY.md is out of date instead of writing it)
  fuzz [SECONDS] every fuzz target (fuzz/) for SECONDS (default 25) from the checked-in corpus
  miri           the parser tests under miri
  cross          cargo check --no-default-features for every vendored architecture
  lab [--only ARCH[:KERNEL]]... [--break] [--no-newest] [--offline] [--strict] [--update-pins]
      [--jobs N] [--timeout SECS]
                 boot Debian kernels 5.10 to 7.2 under QEMU (x86_64, aarch64 and riscv64
                 with PMUs, s390x, armhf), run the kernel-facing tests there, print the matrix
  vendor-events [--check]
                 perf's vendor event tables (perf-event-vendor/src/tables) from each pinned
                 kernel source's tools/perf/pmu-events, by its jevents.py's rules
  public-api [--bless | --prove-it-fails]
                 the public API vs the snapshots public-api/PACKAGE.txt (diff);
                 --bless writes the snapshot after a deliberate change;
                 --prove-it-fails: a copy with one public item removed must fail
  links          every link of README/ARCHITECTURE/CONTRIBUTING/CHANGELOG leads into the package
  package        cargo publish --dry-run without warnings; the unpacked .crate builds,
                 runs its examples and doctests
  msrv           cargo check with the rust-version toolchain (installed with rustup)
  ci             everything CI runs (fmt, clippy, tests, docs, msrv, links, package,
                 public-api, bindgen --check, cross, bindgen feature, userpage loom
                 model, miri, fuzz, lab)
  help           this text";

fn main() {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_else(|| "help".to_owned());
    let result = match task.as_str() {
        "bindgen" => {
            let rest: Vec<String> = args.collect();
            if rest.iter().any(|a| a == "--help" || a == "-h") {
                println!("{}", generate::USAGE);
                Ok(())
            } else {
                generate::Args::parse(rest.into_iter()).and_then(|a| generate::main(&a))
            }
        }
        "abi" => abi::main(&args.collect::<Vec<_>>()),
        "cross" => cross::main(),
        "fuzz" => match args.next().map(|s| s.parse::<u32>()) {
            None => fuzz::main(fuzz::CI_SECONDS),
            Some(Ok(n)) => fuzz::main(n),
            Some(Err(_)) => Err("fuzz takes a number of seconds".to_owned()),
        },
        "miri" => fuzz::miri(),
        "lab" => {
            let rest: Vec<String> = args.collect();
            if rest.iter().any(|a| a == "--help" || a == "-h") {
                println!("{}", lab::USAGE);
                Ok(())
            } else {
                lab::main(rest.into_iter())
            }
        }
        "public-api" => public_api::main(&args.collect::<Vec<_>>()),
        "vendor-events" => vendor_events::main(&args.collect::<Vec<_>>()),
        "links" => links::main(),
        "package" => package::main(),
        "msrv" => msrv::main(),
        "ci" => ci::main(),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown task `{other}`\n{USAGE}")),
    };
    if let Err(e) = result {
        eprintln!("\nerror: {e}");
        std::process::exit(1);
    }
}
