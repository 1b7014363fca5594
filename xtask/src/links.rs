//! `cargo xtask links`: every link of the documents the package ships
//! (README.md, ARCHITECTURE.md, CONTRIBUTING.md, CHANGELOG.md) must lead
//! somewhere a reader of the published crate can follow: a file inside the
//! package (from `cargo package --list`), a heading of it, or an absolute
//! URL that answers (checked with curl; a machine without that network
//! access fails the step rather than pretend).

use crate::shell::{self, Result};
use std::collections::BTreeSet;
use std::process::Command;

/// The documents whose links are checked; each must be in the package.
pub const DOCUMENTS: &[&str] = &[
    "README.md",
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
];

/// Checks every link and reports all broken ones at once.
pub fn main() -> Result {
    let root = shell::root();
    let listed = shell::output(shell::cargo(None).args([
        "package",
        "--list",
        "--allow-dirty",
        "-p",
        "perf-event-core",
    ]))?;
    let package: BTreeSet<&str> = listed.lines().map(str::trim).collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in DOCUMENTS {
        if !package.contains(doc) {
            broken.push(format!(
                "{doc}: not in the package (`include` in Cargo.toml)"
            ));
            continue;
        }
        let text = std::fs::read_to_string(root.join(doc)).map_err(|e| format!("{doc}: {e}"))?;
        for (line, target) in links(&text) {
            checked += 1;
            if let Err(why) = check(&root, doc, &text, &target, &package) {
                broken.push(format!("{doc}:{line}: `{target}`: {why}"));
            }
        }
    }
    eprintln!("{checked} links in {} documents", DOCUMENTS.len());
    if broken.is_empty() {
        Ok(())
    } else {
        Err(format!("broken links:\n  {}", broken.join("\n  ")))
    }
}

fn check(
    root: &std::path::Path,
    doc: &str,
    text: &str,
    target: &str,
    package: &BTreeSet<&str>,
) -> Result {
    if target.starts_with("http://") || target.starts_with("https://") {
        return shell::output(Command::new("curl").args([
            "--silent",
            "--fail",
            "--location",
            "--head",
            "--max-time",
            "20",
            "--output",
            "/dev/null",
            target,
        ]))
        .map(drop)
        .map_err(|_| "does not answer from here (an absolute link must exist)".to_owned());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return Err("only https links or links into the package".to_owned());
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        doc.to_owned()
    } else {
        normalize(doc, path)?
    };
    let in_package = package.contains(file.as_str())
        || package.iter().any(|p| p.starts_with(&format!("{file}/")));
    if !in_package {
        return Err(format!("`{file}` is not in the published package"));
    }
    if let Some(anchor) = anchor {
        let body = if path.is_empty() {
            text.to_owned()
        } else {
            std::fs::read_to_string(root.join(&file)).map_err(|e| format!("{file}: {e}"))?
        };
        if !headings(&body).iter().any(|h| h == anchor) {
            return Err(format!("`{file}` has no heading `#{anchor}`"));
        }
    }
    Ok(())
}

/// `path` relative to the directory of `doc`, as a package path.
fn normalize(doc: &str, path: &str) -> Result<String> {
    let mut parts: Vec<&str> = doc.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts
                    .pop()
                    .ok_or_else(|| "points outside the package".to_owned())?;
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// `(line number, target)` of every inline link, image, autolink and
/// reference definition outside code blocks and code spans.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let line = without_code_spans(line);
        if let Some(rest) = line.trim_start().strip_prefix('[') {
            if let Some((_, dest)) = rest.split_once("]:") {
                out.push((n + 1, first_word(dest)));
                continue;
            }
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            out.push((n + 1, first_word(&rest[..end])));
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("<http") {
            rest = &rest[at + 1..];
            let end = rest.find('>').unwrap_or(rest.len());
            out.push((n + 1, rest[..end].to_owned()));
        }
    }
    out
}

fn first_word(s: &str) -> String {
    let s = s.trim();
    let s = s.strip_prefix('<').unwrap_or(s);
    s.split(|c: char| c.is_whitespace() || c == '>')
        .next()
        .unwrap_or("")
        .to_owned()
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    for (i, piece) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(piece);
        }
    }
    out
}

/// The anchors of a document's headings, as GitHub and docs.rs make them.
pub fn headings(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        out.push(slug);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_outside_code() {
        let text = "see [a](A.md#x) and ![i](img.png \"t\")\n\
                    `[not](a link)` <https://example.org/p>\n\
                    ```\n[no](code.md)\n```\n\
                    [ref]: CHANGELOG.md\n";
        let found: Vec<String> = links(text).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            found,
            ["A.md#x", "img.png", "https://example.org/p", "CHANGELOG.md"]
        );
    }

    #[test]
    fn anchors_like_github() {
        assert_eq!(
            headings("# A b\n## Try it from a clone\n### `sys`: semver!\n"),
            ["a-b", "try-it-from-a-clone", "sys-semver"]
        );
    }

    #[test]
    fn relative_paths_stay_in_the_package() {
        assert_eq!(
            normalize("README.md", "./src/lib.rs").unwrap(),
            "src/lib.rs"
        );
        assert_eq!(normalize("docs/x.md", "../README.md").unwrap(), "README.md");
        assert!(normalize("README.md", "../shared/DESIGN.md").is_err());
    }
}
