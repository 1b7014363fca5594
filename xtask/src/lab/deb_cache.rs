//! The lab's content-addressed cache of files taken from Debian packages:
//! `<cache>/lab/sha256/<sha256 of the .deb>/` holds the one file used from
//! that package, marked complete only once it is whole; the downloads into
//! it run [`PARALLEL`] at a time.

use crate::archive;
use crate::shell::Result;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Downloads at a time.
const PARALLEL: usize = 3;

/// The content directory of a .deb's SHA-256.
pub(super) fn content_dir(cache: &Path, sha256: &str) -> PathBuf {
    cache.join("sha256").join(sha256)
}

/// The file cached for a .deb's SHA-256, if complete.
pub(super) fn cached(cache: &Path, sha256: &str) -> Option<PathBuf> {
    let dir = content_dir(cache, sha256);
    let text = std::fs::read_to_string(dir.join(".complete")).ok()?;
    let file = dir.join(text.lines().next()?);
    file.is_file().then_some(file)
}

/// Extracts `member` of a verified `deb` into `dir`, marks it complete and
/// returns it.
pub(super) fn unpack(deb: &Path, member: &str, dir: &Path) -> Result<PathBuf> {
    let partial = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    archive::extract(deb, member, &partial)?;
    let file = find_file(&partial)?;
    let name = file
        .strip_prefix(&partial)
        .expect("found inside")
        .to_owned();
    std::fs::write(partial.join(".complete"), format!("{}\n", name.display()))
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&partial, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir.join(name))
}

/// The single regular file under `dir`.
fn find_file(dir: &Path) -> Result<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.is_file() {
                return Ok(path);
            }
        }
    }
    Err(format!("{} holds no file after extraction", dir.display()))
}

/// `work` over `items`, [`PARALLEL`] at a time, results in order.
pub(super) fn in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL.min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = work(item);
                done.lock().expect("no panic while holding it")[i] = Some(r);
            });
        }
    });
    done.into_inner()
        .expect("no panic")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}
