//! The command line: perf stat's options.

use crate::DEFAULT_EVENTS;

pub struct Options {
    pub events: String,
    pub runs: usize,
    pub csv: Option<String>,
    pub command: Vec<String>,
}

pub fn usage(msg: &str) -> ! {
    eprintln!("stat: {msg}\nusage: stat [-e EVENTS]... [-r N] [-x SEP] [--] CMD [ARGS...]");
    std::process::exit(129)
}

pub fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let (mut events, mut runs, mut csv) = (Vec::new(), 1, None);
    let mut command = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-e" => events.push(args.next().unwrap_or_else(|| usage("-e needs events"))),
            "-r" => {
                runs = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| usage("-r needs a count"))
            }
            "-x" => csv = Some(args.next().unwrap_or_else(|| usage("-x needs a separator"))),
            "--" => {
                command.extend(args.by_ref());
                break;
            }
            _ => {
                command.push(a);
                command.extend(args.by_ref());
                break;
            }
        }
    }
    if command.is_empty() {
        usage("no command given");
    }
    let events = if events.is_empty() {
        DEFAULT_EVENTS.to_owned()
    } else {
        events.join(",")
    };
    Options {
        events,
        runs,
        csv,
        command,
    }
}
