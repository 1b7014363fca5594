//! One architecture directory walked as perf's jevents.py walks it: the
//! architecture standard events of its top-level JSON files
//! (`preprocess_arch_std_files`), then a file tree walk in name order
//! (jevents' `ftw`) where each directory with no subdirectory but `sys` starts
//! a table and each JSON file at depth 1 to 4 adds its events and metrics to
//! the current table (`process_one_file`, topics from `get_topic`); then the
//! mapfile rows whose table exists (`print_mapping_table`).
//!
//! Linux 6.1's jevents.py ([`Jevents::V6_1`]) differs in the walk too: a
//! table starts at a directory with no subdirectory at all, and is a sys
//! table when the directory is named `sys`; its tables are named `pme_...`;
//! the standard events of `test/` count too (its walk starts after every
//! architecture directory's standard events are read); `metricgroups.json`
//! is not skipped; empty tables and every mapfile row are kept (a row
//! without its table would not compile); two events of one name are not
//! refused.

use super::json_event::{read_json_events, truthy, ArchStd, Jevents, JsonEvent};
use std::path::{Path, PathBuf};

/// One table of perf's: a model directory's events and metrics.
pub struct Table {
    /// The directory, relative to the architecture's (`arm/cortex-a53`).
    pub dir: String,
    /// jevents' C name of the events table (`pmu_events__arm_cortex_a53`).
    pub c_name: String,
    /// Objects with an event name, in walk order.
    pub events: Vec<JsonEvent>,
    /// Objects with a metric name, in walk order.
    pub metrics: Vec<JsonEvent>,
    /// Whether jevents registers it as a sys table (matched by `Compat`,
    /// never by the mapfile): 6.12 when its name ends in `_sys`, 6.1 when
    /// the directory is `sys`.
    pub sys: bool,
}

impl Table {
    /// Whether it is a sys table.
    pub fn is_sys(&self) -> bool {
        self.sys
    }
}

/// A mapfile row jevents keeps (its table exists).
pub struct MapRow {
    pub cpuid: String,
    pub version: String,
    pub model: String,
    pub kind: String,
}

/// An architecture's tables and mapfile, as jevents produces them.
pub struct Arch {
    pub tables: Vec<Table>,
    pub map: Vec<MapRow>,
    /// Mapfile rows jevents drops because no table has their name.
    pub dropped_rows: Vec<String>,
}

/// jevents' `file_name_to_table_name("pmu_events_", parents, dirname)`
/// (6.1: `file_name_to_table_name(parents, dirname)`, `pme_...`).
pub fn table_name(rules: Jevents, path: &str) -> String {
    let prefix = match rules {
        Jevents::V6_1 => "pme_",
        Jevents::V6_12 => "pmu_events__",
    };
    format!("{prefix}{}", path.replace('/', "_")).replace('-', "_")
}

/// jevents' `get_topic`.
fn topic(file: &str) -> String {
    if file.ends_with("metrics.json") {
        return "metrics".to_owned();
    }
    file.strip_suffix(".json").unwrap_or(file).replace('-', " ")
}

/// The entries of `dir` sorted by name (jevents' `ftw`), as (name, path,
/// is a directory) with symbolic links followed.
fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>, String> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| format!("{}: {n:?} is not UTF-8", dir.display()))?;
        entries.push((name, path.clone(), path.is_dir()));
    }
    // Python sorts str by code point, as Rust sorts String.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// jevents' `is_leaf_dir_ignoring_sys` (6.1: `is_leaf_dir`, which counts
/// `sys` as any subdirectory).
fn is_leaf(rules: Jevents, dir: &Path) -> Result<bool, String> {
    Ok(sorted_entries(dir)?
        .iter()
        .all(|(name, _, is_dir)| !is_dir || (rules == Jevents::V6_12 && name == "sys")))
}

/// Reads the architecture standard events of the top-level JSON files of
/// `dirs`, in that order (a later directory's definition wins, as in
/// jevents). jevents takes one directory's files in `os.scandir` order,
/// which the file system chooses; a name defined in two files of one
/// directory is an error here, so that order never matters (within a file
/// the later definition wins, as in jevents). 6.1 keys them by event name
/// only.
fn arch_std(dirs: &[PathBuf], rules: Jevents) -> Result<ArchStd, String> {
    let mut std = ArchStd::new();
    for dir in dirs {
        arch_std_dir(dir, rules, &mut std)?;
    }
    Ok(std)
}

fn arch_std_dir(arch_dir: &Path, rules: Jevents, std: &mut ArchStd) -> Result<(), String> {
    let mut seen = std::collections::HashMap::new();
    for (name, path, is_dir) in sorted_entries(arch_dir)? {
        if is_dir || !name.ends_with(".json") {
            continue;
        }
        let text = read(&path)?;
        // jevents reads each standard file before adding any of its events.
        let events = read_json_events(&text, std, rules).map_err(|e| format!("{name}: {e}"))?;
        for mut event in events {
            event.topic = Some(String::new());
            let keys = match rules {
                Jevents::V6_1 => vec![event.name.clone()],
                Jevents::V6_12 => vec![event.name.clone(), event.metric_name.clone()],
            };
            for key in &keys {
                if truthy(key) {
                    let key = key.as_deref().expect("truthy").to_lowercase();
                    let first = seen.insert(key.clone(), name.clone());
                    if let Some(first) = first.filter(|f| *f != name) {
                        return Err(format!(
                            "architecture standard event {key} is defined in {first} and \
                             {name}: jevents' choice would depend on the directory order"
                        ));
                    }
                    std.insert(key, event.clone());
                }
            }
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The walk's state: jevents' pending tables.
struct Walk {
    rules: Jevents,
    std: ArchStd,
    tables: Vec<Table>,
}

impl Walk {
    fn ftw(&mut self, dir: &Path, parents: &[String]) -> Result<(), String> {
        for (name, path, is_dir) in sorted_entries(dir)? {
            self.action(parents, &name, &path, is_dir)?;
            if is_dir {
                let mut below = parents.to_vec();
                below.push(name);
                self.ftw(&path, &below)?;
            }
        }
        Ok(())
    }

    /// jevents' `process_one_file`.
    fn action(
        &mut self,
        parents: &[String],
        name: &str,
        path: &Path,
        is_dir: bool,
    ) -> Result<(), String> {
        if is_dir && is_leaf(self.rules, path)? {
            let mut dir = parents.join("/");
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(name);
            let c_name = table_name(self.rules, &dir);
            let sys = match self.rules {
                Jevents::V6_1 => name == "sys",
                Jevents::V6_12 => c_name.ends_with("_sys"),
            };
            if self.tables.iter().any(|t| t.c_name == c_name) {
                return Err(format!(
                    "{dir}: a second table named {c_name} (jevents' C would not compile)"
                ));
            }
            self.tables.push(Table {
                dir,
                c_name,
                events: Vec::new(),
                metrics: Vec::new(),
                sys,
            });
            return Ok(());
        }
        let level = parents.len();
        if level == 0 || level > 4 {
            return Ok(());
        }
        // 6.12 reads metricgroups.json apart (its descriptions of groups).
        let groups = self.rules == Jevents::V6_12 && name == "metricgroups.json";
        if is_dir || !name.ends_with(".json") || groups {
            return Ok(());
        }
        let table = self
            .tables
            .last_mut()
            .ok_or_else(|| format!("{}: a JSON file before any model directory", path.display()))?;
        let text = read(path)?;
        let events = read_json_events(&text, &self.std, self.rules)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for mut event in events {
            event.topic = Some(topic(name));
            if truthy(&event.metric_name) {
                table.metrics.push(event.clone());
            }
            if truthy(&event.name) {
                table.events.push(event);
            }
        }
        Ok(())
    }
}

/// Splits a mapfile line as Python's `csv.reader` does for the lines the
/// mapfiles hold (no quoting: a `"` is refused).
fn csv_row(line: &str) -> Result<Vec<String>, String> {
    if line.contains('"') {
        return Err(format!(
            "mapfile line {line:?}: quoted CSV is not supported"
        ));
    }
    Ok(line.split(',').map(str::to_owned).collect())
}

/// Walks `<arch_root>/<arch>` (`tools/perf/pmu-events/arch/<arch>`) by the
/// rules of `rules`' jevents.py.
pub fn walk(arch_root: &Path, arch: &str, rules: Jevents) -> Result<Arch, String> {
    let arch_dir = arch_root.join(arch);
    let std_dirs: Vec<PathBuf> = match rules {
        // perf's build runs `jevents.py ARCH pmu-events/arch`: ARCH and
        // test, in name order, all read before the walk.
        Jevents::V6_1 => {
            let mut names = vec![arch, "test"];
            names.sort_unstable();
            names.dedup();
            names.iter().map(|n| arch_root.join(n)).collect()
        }
        Jevents::V6_12 => vec![arch_dir.clone()],
    };
    let mut walk = Walk {
        rules,
        std: arch_std(&std_dirs, rules)?,
        tables: Vec::new(),
    };
    walk.ftw(&arch_dir, &[])?;
    let mut tables = walk.tables;
    if rules == Jevents::V6_12 {
        tables.retain(|t| !t.events.is_empty() || !t.metrics.is_empty());
    }
    for table in tables.iter().filter(|_| rules == Jevents::V6_12) {
        let mut seen = std::collections::HashSet::new();
        for e in &table.events {
            if !seen.insert((e.pmu.clone(), e.name.clone())) {
                return Err(format!(
                    "{}: duplicate event {}/{} (jevents asserts)",
                    table.dir,
                    e.pmu.as_deref().unwrap_or(""),
                    e.name.as_deref().unwrap_or("")
                ));
            }
        }
    }
    let mapfile = read(&arch_dir.join("mapfile.csv"))?;
    let mut map = Vec::new();
    let mut dropped_rows = Vec::new();
    // Python reads the file in universal-newline mode.
    for (index, line) in mapfile.lines().enumerate() {
        // jevents skips the first row (a header or comment), empty rows
        // and rows starting with '#' (a line that starts with '#' has no
        // quote before it).
        if index == 0 || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let row = csv_row(line)?;
        if row.len() < 3 {
            return Err(format!("mapfile row {line:?}: fewer than 3 columns"));
        }
        let c_name = table_name(rules, &row[2]);
        let found = tables
            .iter()
            .find(|t| t.c_name == c_name && (rules == Jevents::V6_1 || !t.is_sys()));
        let Some(table) = found else {
            if rules == Jevents::V6_1 {
                return Err(format!(
                    "mapfile row {line:?}: no table {c_name} (jevents 6.1's C would not compile)"
                ));
            }
            dropped_rows.push(line.to_owned());
            continue;
        };
        if table.dir != row[2] {
            return Err(format!(
                "mapfile row {line:?} names {} but jevents matches the directory {} by its \
                 table name: not supported",
                row[2], table.dir
            ));
        }
        map.push(MapRow {
            cpuid: row[0].clone(),
            version: row[1].clone(),
            model: row[2].clone(),
            // jevents does not read the fourth column.
            kind: row.get(3).cloned().unwrap_or_default(),
        });
    }
    Ok(Arch {
        tables,
        map,
        dropped_rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pmu-events tree in a scratch directory: `files` are (path, text).
    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("xtask-walk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        root
    }

    const EVENT: &str = r#"[{"EventName": "A", "EventCode": "0x1"}]"#;

    #[test]
    fn the_walks_of_6_1_and_6_12() {
        let root = tree(
            "kernels",
            &[
                (
                    "arm64/mapfile.csv",
                    "Family,Version,Filename,EventType\nX,v1,v/m,core\n",
                ),
                ("arm64/v/m/a.json", EVENT),
                ("arm64/v/m/sys/b.json", EVENT),
                ("arm64/v/empty/readme.txt", ""),
                (
                    "test/std.json",
                    r#"[{"EventName": "S", "EventCode": "0x5"}]"#,
                ),
                ("arm64/v/n/c.json", r#"[{"ArchStdEvent": "S"}]"#),
            ],
        );
        // 6.12: v/m is a table beside its sys; the empty one is dropped;
        // test's standard events are not read for arm64.
        let err = walk(&root, "arm64", Jevents::V6_12).err().unwrap();
        assert!(err.contains("Cannot find arch std event: S"), "{err}");
        std::fs::remove_file(root.join("arm64/v/n/c.json")).unwrap();
        let a = walk(&root, "arm64", Jevents::V6_12).unwrap();
        let dirs: Vec<_> = a.tables.iter().map(|t| (t.dir.as_str(), t.sys)).collect();
        assert_eq!(dirs, [("v/m", false), ("v/m/sys", true)]);
        assert_eq!(a.tables[0].c_name, "pmu_events__v_m");
        // 6.1: v/m has a subdirectory, so only v/m/sys is a table, and the
        // mapfile row names a table that does not exist; the empty one
        // stays.
        let err = walk(&root, "arm64", Jevents::V6_1).err().unwrap();
        assert!(err.contains("no table pme_v_m"), "{err}");
        std::fs::remove_dir_all(root.join("arm64/v/m/sys")).unwrap();
        std::fs::write(root.join("arm64/v/n/c.json"), r#"[{"ArchStdEvent": "S"}]"#).unwrap();
        let a = walk(&root, "arm64", Jevents::V6_1).unwrap();
        let dirs: Vec<_> = a.tables.iter().map(|t| t.dir.as_str()).collect();
        assert_eq!(dirs, ["v/empty", "v/m", "v/n"]);
        assert_eq!(a.map.len(), 1);
        let from_test = &a.tables[2].events[0];
        assert_eq!(
            from_test.event.as_deref(),
            Some("event=0x5"),
            "test's standard event"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
