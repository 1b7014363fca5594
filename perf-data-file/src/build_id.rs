//! Build ids of the objects a recording mapped: the GNU build-id note of
//! each file's ELF headers (read with the `object` crate, only the parts
//! of the file it needs), and the running kernel's from its notes
//! (`/sys/kernel/notes`, read by perf-event-host's `sysfs`).

use object::elf::{FileHeader64, NT_GNU_BUILD_ID};
use object::read::elf::NoteIterator;
use object::read::ReadCache;
use object::{Endianness, Object};

/// The build id of the ELF file at `path`, if it has one.
pub fn of_file(path: &str) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let cache = ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    elf.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// The GNU build id among ELF notes (`/sys/kernel/notes`: the running
/// kernel's note section, 4-byte aligned).
pub fn of_notes(notes: &[u8]) -> Option<Vec<u8>> {
    let mut it =
        NoteIterator::<FileHeader64<Endianness>>::new(Endianness::default(), 4, notes).ok()?;
    while let Ok(Some(note)) = it.next() {
        if note.name() == b"GNU" && note.n_type(Endianness::default()) == NT_GNU_BUILD_ID {
            return Some(note.desc().to_vec());
        }
    }
    None
}

/// The running kernel's build id.
pub fn of_kernel() -> Option<Vec<u8>> {
    of_notes(&perf_event_host::sysfs::kernel_notes().ok()?)
}
