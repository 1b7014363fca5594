//! Project automation for perf-event-core. Run `cargo xtask help`.

#[path = "../../bindgen_options.rs"]
#[allow(dead_code)]
mod options;

mod abi;
mod ci;
mod cross;
mod generate;
mod headers;
mod history;
mod shell;

const USAGE: &str = "usage: cargo xtask <task>
  bindgen [--check] [--headers DIR] [--arch NAME]...
                 regenerate src/sys from the pinned kernel headers (see `bindgen --help`)
  abi [--check]  every ABI fact of every architecture vs the C compiler; the ABI history
                 (--check: fail if abi-tests/ABI-HISTORY.md is out of date instead of writing it)
  cross          cargo check --no-default-features for every vendored architecture
  ci             everything CI runs (fmt, clippy, tests, the userpage loom model, docs,
                 bindgen --check, cross, bindgen feature)
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
