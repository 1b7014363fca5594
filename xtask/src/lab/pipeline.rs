//! Building and booting overlap: one thread builds each architecture's test
//! binaries in turn (and libperf where the guests compare with it), from
//! the start of the run, while the kernels are still being fetched and the
//! host runs its column; guests boot, `--jobs` at a time, as soon as their
//! architecture is built (its initramfs is written by the first guest that
//! needs it), instead of after every architecture. A build compiles with
//! both of a 2-core machine's CPUs only part of the time (one crate at a
//! time at its start, one test binary left at its end); the guests fill
//! the rest.

use super::guests::{Arch, Guest};
use super::matrix::Column;
use super::testbins::TestBinary;
use crate::shell::Result;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// What the build thread made for one architecture: the test binaries and
/// the extra programs of its initramfs (`/lab/NAME`).
pub struct Built {
    /// The kernel-facing test binaries.
    pub binaries: Vec<TestBinary>,
    /// Extra programs (libperf's reader where built).
    pub extra: Vec<(&'static str, PathBuf)>,
}

/// Where an architecture stands.
enum Stage {
    Built(Built),
    Initrd(PathBuf),
    Failed,
}

#[derive(Default)]
struct State {
    /// Architectures the build thread is done with, in build order.
    arches: Vec<(Arch, Stage)>,
    /// The build thread has finished (every architecture built or failed).
    builds_done: bool,
    /// When it finished, in seconds since the run started.
    builds_secs: f64,
    /// The architectures that have guests (known once the kernels are
    /// fetched; until then every architecture is built).
    wanted: Option<Vec<Arch>>,
    /// Build and initramfs errors: no further guest is started.
    errors: Vec<String>,
    /// Guests taken by a worker.
    taken: Vec<bool>,
}

/// The shared state of one lab run's builds and boots.
pub struct Pipeline {
    state: Mutex<State>,
    changed: Condvar,
    started: Instant,
}

impl Pipeline {
    /// A pipeline timed from `started` (the run's start).
    pub fn new(started: Instant) -> Self {
        Pipeline {
            state: Mutex::default(),
            changed: Condvar::new(),
            started,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("no panic while holding it")
    }

    /// The build thread's work: `build` for each of `arches` in turn,
    /// skipping those [`Pipeline::want`] has since left out.
    pub fn build_all(&self, arches: &[Arch], build: impl Fn(Arch) -> Result<Built>) {
        // Marks the builds done however this ends, a panic included: the
        // guests' workers must not wait for a build thread that is gone.
        struct Done<'a>(&'a Pipeline);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
                state.builds_done = true;
                state.builds_secs = self.0.started.elapsed().as_secs_f64();
                if std::thread::panicking() {
                    state.errors.push("the build thread panicked".to_owned());
                }
                drop(state);
                self.0.changed.notify_all();
            }
        }
        let _done = Done(self);
        for arch in arches {
            let skip = {
                let state = self.lock();
                !state.errors.is_empty() || state.wanted.as_ref().is_some_and(|w| !w.contains(arch))
            };
            if skip {
                continue;
            }
            let stage = match build(*arch) {
                Ok(built) => Stage::Built(built),
                Err(e) => {
                    self.lock().errors.push(e);
                    Stage::Failed
                }
            };
            self.lock().arches.push((*arch, stage));
            self.changed.notify_all();
        }
    }

    /// Tells the build thread which architectures have guests at all.
    pub fn want(&self, arches: Vec<Arch>) {
        self.lock().wanted = Some(arches);
    }

    /// Boots `guests`, `jobs` at a time, each as soon as its architecture
    /// is built; `initrd(arch, built)` writes an architecture's initramfs
    /// once, `boot` runs one guest. Returns the columns in the guests'
    /// order, or the build errors.
    pub fn boot_all(
        &self,
        guests: &[Guest],
        jobs: usize,
        initrd: impl Fn(Arch, &Built) -> Result<PathBuf> + Sync,
        boot: impl Fn(&Guest, &Path) -> Result<Column> + Sync,
    ) -> Result<Vec<Column>> {
        self.lock().taken = vec![false; guests.len()];
        let done: Mutex<Vec<Option<Result<Column>>>> =
            Mutex::new(guests.iter().map(|_| None).collect());
        std::thread::scope(|scope| {
            for _ in 0..jobs.clamp(1, guests.len().max(1)) {
                scope.spawn(|| {
                    while let Some((i, path)) = self.next_guest(guests, &initrd) {
                        let column = boot(&guests[i], &path);
                        done.lock().expect("no panic while holding it")[i] = Some(column);
                    }
                });
            }
        });
        let errors = std::mem::take(&mut self.lock().errors);
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        done.into_inner()
            .expect("no panic while holding it")
            .into_iter()
            .map(|c| c.expect("every guest ran"))
            .collect()
    }

    /// The next guest whose architecture is built (its initramfs written
    /// here if it is the first), waiting while builds are under way; `None`
    /// when every guest is taken or nothing more can be booted.
    fn next_guest(
        &self,
        guests: &[Guest],
        initrd: &(impl Fn(Arch, &Built) -> Result<PathBuf> + Sync),
    ) -> Option<(usize, PathBuf)> {
        let mut state = self.lock();
        loop {
            if !state.errors.is_empty() {
                return None;
            }
            let ready = (0..guests.len()).find(|&i| {
                !state.taken[i]
                    && state.arches.iter().any(|(a, s)| {
                        *a == guests[i].arch && matches!(s, Stage::Built(_) | Stage::Initrd(_))
                    })
            });
            if let Some(i) = ready {
                state.taken[i] = true;
                let at = state
                    .arches
                    .iter()
                    .position(|(a, _)| *a == guests[i].arch)
                    .expect("found above");
                if let Stage::Built(built) = &state.arches[at].1 {
                    // Written under the lock: a second guest of the same
                    // architecture waits for it (a second or two).
                    match initrd(guests[i].arch, built) {
                        Ok(path) => state.arches[at].1 = Stage::Initrd(path),
                        Err(e) => {
                            state.errors.push(e);
                            state.arches[at].1 = Stage::Failed;
                            self.changed.notify_all();
                            return None;
                        }
                    }
                }
                let Stage::Initrd(path) = &state.arches[at].1 else {
                    unreachable!("written above")
                };
                return Some((i, path.clone()));
            }
            if state.builds_done || state.taken.iter().all(|t| *t) {
                return None;
            }
            state = self.changed.wait(state).expect("no panic while holding it");
        }
    }

    /// Seconds from the run's start until the last architecture was built.
    pub fn builds_secs(&self) -> f64 {
        self.lock().builds_secs
    }
}
