//! Where this machine gets Debian packages from: the archive URIs of its own
//! apt configuration (`/etc/apt/sources.list`, `/etc/apt/sources.list.d/
//! *.list` and deb822 `*.sources`), so a user's mirror or proxy is honoured.
//! The xtask never writes an archive host of its own.

use crate::shell::Result;
use std::path::Path;

/// One `deb` entry of the machine's apt configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    uri: String,
    suites: Vec<String>,
}

/// The URIs of Debian's main archive and of its security archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archives {
    /// The archive serving `<codename>`, `<codename>-updates`, backports and
    /// every other suite (`.../debian`).
    pub main: String,
    /// The archive serving `<codename>-security`, when configured.
    pub security: Option<String>,
}

impl Archives {
    /// A one-line source for `suite` (`bookworm`, `bookworm-security`...),
    /// restricted to the Debian architectures `arches`.
    pub fn line(&self, suite: &str, arches: &[&str]) -> Result<String> {
        let uri = self.uri(suite)?;
        let arch = if arches.is_empty() {
            String::new()
        } else {
            format!("[arch={}] ", arches.join(","))
        };
        Ok(format!("deb {arch}{uri} {suite} main"))
    }
}

impl Archives {
    /// The archive URI that serves `suite`: the security archive for
    /// `*-security`, the main archive for every other suite.
    pub fn uri(&self, suite: &str) -> Result<&str> {
        if suite.ends_with("-security") {
            self.security.as_deref().ok_or_else(|| {
                format!(
                    "this machine's apt sources configure no Debian security archive, which \
                     serves {suite}: add one (deb822 `Suites: <codename>-security`) or a \
                     mirror of it"
                )
            })
        } else {
            Ok(&self.main)
        }
    }
}

/// The machine's Debian archives, read from `/etc/apt`.
pub fn archives() -> Result<Archives> {
    archives_in(Path::new("/etc/apt"))
}

/// [`archives`] for an apt configuration directory (tests).
fn archives_in(etc: &Path) -> Result<Archives> {
    let mut entries = Vec::new();
    if let Ok(text) = std::fs::read_to_string(etc.join("sources.list")) {
        entries.extend(one_line(&text));
    }
    let mut files: Vec<_> = std::fs::read_dir(etc.join("sources.list.d"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        match file.extension().and_then(|e| e.to_str()) {
            Some("list") => entries.extend(one_line(&text)),
            Some("sources") => entries.extend(deb822(&text)),
            _ => {}
        }
    }
    pick(&entries).ok_or_else(|| {
        format!(
            "no Debian archive in this machine's apt sources ({0}/sources.list, \
             {0}/sources.list.d/*.list or *.sources): the xtask downloads Debian packages \
             from the archive apt is configured with; add a `deb URI <codename> main` entry",
            etc.display()
        )
    })
}

/// Debian's suite names: codenames, their `-updates`/`-security`/
/// `-backports` variants and the aliases.
fn is_debian_suite(suite: &str) -> bool {
    const NAMES: &[&str] = &[
        "buster",
        "bullseye",
        "bookworm",
        "trixie",
        "forky",
        "duke",
        "sid",
        "stable",
        "testing",
        "unstable",
        "oldstable",
        "experimental",
    ];
    let base = suite.split('-').next().unwrap_or_default();
    NAMES.contains(&base)
}

fn pick(entries: &[Entry]) -> Option<Archives> {
    let debian: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.suites.iter().any(|s| is_debian_suite(s)))
        .collect();
    let security = debian
        .iter()
        .find(|e| e.suites.iter().all(|s| s.ends_with("-security")))
        .map(|e| e.uri.clone());
    let main = debian
        .iter()
        .find(|e| e.suites.iter().any(|s| !s.ends_with("-security")))?
        .uri
        .clone();
    Some(Archives { main, security })
}

/// `deb [options] URI suite component...` lines.
fn one_line(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let Some(rest) = line.strip_prefix("deb ") else {
            continue;
        };
        let mut rest = rest.trim_start();
        if rest.starts_with('[') {
            match rest.find(']') {
                Some(end) => rest = rest[end + 1..].trim_start(),
                None => continue,
            }
        }
        let mut words = rest.split_whitespace();
        if let (Some(uri), Some(suite)) = (words.next(), words.next()) {
            entries.push(Entry {
                uri: uri.trim_end_matches('/').to_owned(),
                suites: vec![suite.to_owned()],
            });
        }
    }
    entries
}

/// deb822 stanzas (`Types: deb`, `URIs:`, `Suites:`, `Enabled:`).
fn deb822(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    for stanza in text.split("\n\n") {
        let field = |name: &str| -> Option<String> {
            stanza
                .lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case(name)
                        .then(|| v.trim().to_owned())
                })
        };
        let types = field("Types").unwrap_or_default();
        if !types.split_whitespace().any(|t| t == "deb")
            || field("Enabled").is_some_and(|v| v.eq_ignore_ascii_case("no"))
        {
            continue;
        }
        let suites: Vec<String> = field("Suites")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        for uri in field("URIs").unwrap_or_default().split_whitespace() {
            entries.push(Entry {
                uri: uri.trim_end_matches('/').to_owned(),
                suites: suites.clone(),
            });
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deb822_and_one_line_sources_give_the_archives() {
        let dir = std::env::temp_dir().join(format!("xtask-debian-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sources.list.d")).unwrap();
        std::fs::write(
            dir.join("sources.list"),
            "# comment\ndeb https://packages.example/apt cloud-sdk main\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("sources.list.d/debian.sources"),
            "Types: deb\n# http://snapshot/\nURIs: http://mirror.example/debian/\n\
             Suites: bookworm bookworm-updates\nComponents: main\n\n\
             Types: deb\nURIs: http://mirror.example/debian-security\n\
             Suites: bookworm-security\nComponents: main\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("sources.list.d/node.sources"),
            "Types: deb\nURIs: https://node.example/node_20.x\nSuites: nodistro\n",
        )
        .unwrap();
        let a = archives_in(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(a.main, "http://mirror.example/debian");
        assert_eq!(
            a.security.as_deref(),
            Some("http://mirror.example/debian-security")
        );
        assert_eq!(
            a.line("sid", &["riscv64"]).unwrap(),
            "deb [arch=riscv64] http://mirror.example/debian sid main"
        );
        assert_eq!(
            a.line("bookworm-security", &[]).unwrap(),
            "deb http://mirror.example/debian-security bookworm-security main"
        );
    }

    #[test]
    fn one_line_entries_with_options() {
        let e = one_line("deb [arch=amd64 signed-by=/k.gpg] http://m/debian bookworm main\n");
        assert_eq!(
            e,
            vec![Entry {
                uri: "http://m/debian".into(),
                suites: vec!["bookworm".into()]
            }]
        );
        assert!(pick(&one_line("deb http://x/ nodistro main\n")).is_none());
    }
}
