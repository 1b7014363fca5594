//! Addresses to (object, symbol) as `perf report --sort dso,sym` names
//! them: ELF symbol tables of the mapped files (through the `object` crate)
//! and /proc/kallsyms for the kernel. Rust and C++ names are demangled
//! (rustc-demangle, cpp_demangle) as perf 6.1 prints them: Rust paths
//! without the `::h<hash>` suffix, C++ names without their parameter list
//! (perf shows those only with `-v`).

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::HashMap;

/// One executable mapping of a process (PERF_RECORD_MMAP2 or /proc/PID/maps).
#[derive(Clone, Debug)]
pub struct Map {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub file: String,
}

/// The symbols of one file: sorted (address, size, name), and its
/// segments (file offset, size, virtual address) to turn offsets into
/// addresses.
#[derive(Default)]
struct Symbols {
    syms: Vec<(u64, u64, String)>,
    segments: Vec<(u64, u64, u64)>,
}

impl Symbols {
    fn load(path: &str) -> Symbols {
        let Ok(data) = std::fs::read(path) else {
            return Symbols::default();
        };
        let Ok(file) = object::File::parse(&*data) else {
            return Symbols::default();
        };
        let mut syms = text_symbols(&file);
        // A stripped file's full symbol table is in its separate debug
        // file, found by build id (Debian's -dbg / -dbgsym packages), where
        // perf looks for it too.
        let debug = file.build_id().ok().flatten().map(|id| {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            format!("/usr/lib/debug/.build-id/{}/{}.debug", &hex[..2], &hex[2..])
        });
        if let Some(data) = debug.and_then(|p| std::fs::read(p).ok()) {
            if let Ok(dbg) = object::File::parse(&*data) {
                syms.extend(text_symbols(&dbg));
            }
        }
        syms.sort();
        syms.dedup_by_key(|s| s.0);
        let segments = file
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        Symbols { syms, segments }
    }

    /// The symbol containing virtual address `addr` (a sized symbol must
    /// contain it; an unsized one is taken up to the next symbol).
    fn find(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (start, size, name) = &self.syms[i];
        (*size == 0 || addr < start + size).then_some(name.as_str())
    }

    fn vaddr(&self, offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|(off, size, _)| (*off..off + size).contains(&offset))
            .map(|(off, _, va)| offset - off + va)
    }
}

/// The function symbols of a file (both tables), as mangled (demangled
/// when a sample hits them: a large library has 100,000s).
fn text_symbols(file: &object::File) -> Vec<(u64, u64, String)> {
    file.symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
        .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
        .collect()
}

/// A symbol name as perf report prints it.
pub fn demangle(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    if name.starts_with("_Z") {
        let opts = cpp_demangle::DemangleOptions::new().no_params();
        let symbol = cpp_demangle::Symbol::new(name.as_bytes());
        if let Some(d) = symbol
            .ok()
            .and_then(|s| s.demangle_with_options(&opts).ok())
        {
            return d;
        }
    }
    name.to_string()
}

/// Resolves addresses, loading each file once.
#[derive(Default)]
pub struct Resolver {
    files: HashMap<String, Symbols>,
    kallsyms: Option<Vec<(u64, String)>>,
}

/// What perf report prints for a sample: the object's short name, the
/// mode mark (`[k]` or `[.]`) and the symbol (or the address in hex).
pub type Key = (String, &'static str, String);

fn basename(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// A line of /proc/kallsyms (`ADDR TYPE NAME[\t[MODULE]]`, one space
/// between the first three fields) as `(address, name)` when it names a
/// text symbol (type `t`, `T`, `w` or `W`) at a nonzero address (an
/// unprivileged reader sees zeros). The file has over a hundred thousand
/// lines: each is cut with `split_once` (memchr) and looked at by index,
/// where a debug build decoding every char (`split_whitespace`) spent half
/// a second on it per report.
fn kallsyms_text_symbol(line: &str) -> Option<(u64, String)> {
    let (addr, rest) = line.split_once(' ')?;
    let (kind, name) = rest.split_once(' ')?;
    if !matches!(kind, "t" | "T" | "w" | "W") {
        return None;
    }
    let addr = u64::from_str_radix(addr, 16).ok().filter(|&a| a != 0)?;
    let name = name.split_once('\t').map_or(name, |(name, _module)| name);
    Some((addr, name.to_owned()))
}

impl Resolver {
    fn kallsyms(&mut self) -> &[(u64, String)] {
        self.kallsyms.get_or_insert_with(|| {
            let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
            let mut v: Vec<(u64, String)> = text.lines().filter_map(kallsyms_text_symbol).collect();
            v.sort();
            v
        })
    }

    /// A kernel address.
    pub fn kernel(&mut self, ip: u64) -> Key {
        let syms = self.kallsyms();
        let name = syms
            .partition_point(|s| s.0 <= ip)
            .checked_sub(1)
            .map(|i| syms[i].1.clone())
            .unwrap_or_else(|| format!("{ip:#018x}"));
        ("[kernel.kallsyms]".into(), "[k]", name)
    }

    /// A user address inside `map`.
    pub fn user(&mut self, ip: u64, map: Option<&Map>) -> Key {
        let Some(map) = map else {
            return ("[unknown]".into(), "[.]", format!("{ip:#018x}"));
        };
        let offset = ip - map.start + map.pgoff;
        let syms = self
            .files
            .entry(map.file.clone())
            .or_insert_with(|| Symbols::load(&map.file));
        let name = syms
            .vaddr(offset)
            .and_then(|va| syms.find(va))
            .map(demangle)
            .unwrap_or_else(|| format!("{offset:#018x}"));
        (basename(&map.file), "[.]", name)
    }
}

/// The executable mappings of `pid` now, from /proc/PID/maps (for
/// processes that were running before the sampling began: their mappings
/// were made before any PERF_RECORD_MMAP2 could report them).
pub fn proc_maps(pid: u32) -> Vec<Map> {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms, off) = (f.next()?, f.next()?, f.next()?);
            let (_dev, _ino) = (f.next()?, f.next()?);
            let file = f.next()?;
            if !perms.contains('x') || !file.starts_with('/') {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Map {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                pgoff: u64::from_str_radix(off, 16).ok()?,
                file: file.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{demangle, kallsyms_text_symbol};

    #[test]
    fn kallsyms_lines_give_text_symbols_with_their_module_cut() {
        let sym = kallsyms_text_symbol;
        assert_eq!(
            sym("ffffffff81000000 T _text"),
            Some((0xffff_ffff_8100_0000, "_text".into()))
        );
        assert_eq!(
            sym("ffffffffc0a01000 t nft_do_chain\t[nf_tables]"),
            Some((0xffff_ffff_c0a0_1000, "nft_do_chain".into()))
        );
        assert_eq!(
            sym("ffffffff81001000 W weak_fn"),
            Some((0xffff_ffff_8100_1000, "weak_fn".into()))
        );
        // Data, a hidden address, a cut or empty line: none.
        assert_eq!(sym("ffffffff82000000 D jiffies"), None);
        assert_eq!(sym("0000000000000000 T _text"), None);
        assert_eq!(sym("ffffffff81000000 T"), None);
        assert_eq!(sym("ffffffff81000000"), None);
        assert_eq!(sym(""), None);
        assert_eq!(sym("zz T x"), None);
    }

    #[test]
    fn names_as_perf_report_prints_them() {
        // Rust legacy and v0 manglings: the path, no hash.
        assert_eq!(
            demangle("_ZN4spin4work9spin_loop17he11b2887626830efE"),
            "spin::work::spin_loop"
        );
        assert_eq!(
            demangle("_RNvNtCs1234_4spin4work9spin_loop"),
            "spin::work::spin_loop"
        );
        // C++: no parameter list (perf 6.1 shows it only with -v).
        assert_eq!(
            demangle("_ZN2ns3BoxImE4spinEm"),
            "ns::Box<unsigned long>::spin"
        );
        assert_eq!(demangle("hot_twice"), "hot_twice");
    }
}
