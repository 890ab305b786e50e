//! Where the reference model's training threads meet every block cycle, and the tuner that
//! decides whether more than one of them takes part.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Where a part stands: the number of block cycles it has finished.
#[repr(align(128))]
struct Progress(AtomicUsize);

/// The threads' meeting point at the end of every block cycle. A block cycle is
/// microseconds, so a thread first spins; when the cores are busy with other work it sleeps
/// instead, so that the thread it waits for can run.
pub(super) struct Meeting {
    finished: Vec<Progress>,
    failed: AtomicBool,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    woken: Condvar,
    active: AtomicUsize,
    resting: Condvar,
    over: AtomicBool,
}

/// Spins before a thread sleeps: a few tens of microseconds.
pub(super) const SPINS: u32 = 4096;

impl Meeting {
    pub(super) fn new(parts: usize, threads: usize) -> Meeting {
        Meeting {
            active: AtomicUsize::new(threads),
            resting: Condvar::new(),
            over: AtomicBool::new(false),
            finished: (0..parts).map(|_| Progress(AtomicUsize::new(0))).collect(),
            failed: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            woken: Condvar::new(),
        }
    }

    /// Threads taking part now (thread `t` takes part while `t < active`).
    pub(super) fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    pub(super) fn set_active(&self, threads: usize) {
        self.active.store(threads, Ordering::SeqCst);
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.resting.notify_all();
    }

    /// Rest while thread `me` is not to take part and the run goes on.
    pub(super) fn idle(&self, me: usize) {
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while me >= self.active() && !self.over.load(Ordering::SeqCst) {
            assert!(
                !self.failed.load(Ordering::SeqCst),
                "another training thread failed"
            );
            held = self
                .resting
                .wait_timeout(held, Duration::from_millis(5))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The run is over: resting threads leave.
    pub(super) fn end(&self) {
        self.over.store(true, Ordering::SeqCst);
        self.set_active(0);
    }

    /// The block cycle in progress: the fewest any part has finished.
    pub(super) fn current(&self) -> usize {
        (0..self.finished.len())
            .map(|i| self.finished(i))
            .min()
            .unwrap_or(0)
    }

    /// Block cycles part `part` has finished.
    pub(super) fn finished(&self, part: usize) -> usize {
        self.finished[part].0.load(Ordering::SeqCst)
    }

    pub(super) fn finish(&self, part: usize, cycle: usize) {
        self.finished[part].0.store(cycle + 1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.woken.notify_all();
        }
    }

    /// Wait until every part has finished the block cycles before `cycle`.
    pub(super) fn wait(&self, cycle: usize) {
        for p in &self.finished {
            let ready = || p.0.load(Ordering::SeqCst) >= cycle;
            let mut spins = 0;
            while !ready() && spins < SPINS {
                std::hint::spin_loop();
                spins += 1;
            }
            if ready() {
                continue;
            }
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            while !ready() {
                assert!(
                    !self.failed.load(Ordering::SeqCst),
                    "another training thread failed"
                );
                held = self
                    .woken
                    .wait_timeout(held, Duration::from_millis(1))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            drop(held);
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Block cycles per window of the [`Tuner`].
const WINDOW: usize = 256;
/// Windows the [`Tuner`] keeps its choice before it measures again.
const KEEP: usize = 30;

/// Decides, window by window, whether the helper threads take part. Threads that meet every
/// block cycle wait for each other whenever the operating system holds one back, so on cores
/// busy with other work one thread alone can be faster. The tuner times a window on every
/// thread and one on thread 0 alone, keeps the faster for [`KEEP`] windows, and times again.
/// Who runs a part never changes its bits.
pub(super) struct Tuner {
    threads: usize,
    started: Instant,
    window: usize,
    /// Seconds of the last window on every thread.
    all: f64,
}

impl Tuner {
    pub(super) fn new(threads: usize) -> Tuner {
        Tuner {
            threads,
            started: Instant::now(),
            window: 0,
            all: 0.0,
        }
    }

    /// At the start of block cycle `cycle`: the threads to take part from now, if that changes.
    pub(super) fn at(&mut self, cycle: usize) -> Option<usize> {
        if cycle == 0 || !cycle.is_multiple_of(WINDOW) {
            return None;
        }
        let last = self.started.elapsed().as_secs_f64();
        self.started = Instant::now();
        self.window += 1;
        match self.window % (KEEP + 2) {
            0 => Some(self.threads),
            1 => {
                self.all = last;
                Some(1)
            }
            2 => Some(if last < self.all { 1 } else { self.threads }),
            _ => None,
        }
    }
}

/// Tells the other threads when this one panics, so that none waits for it forever.
pub(super) struct FailGuard<'a>(pub(super) &'a Meeting);

impl Drop for FailGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Ordering::SeqCst);
        }
    }
}
