//! Running a target: every input under `catch_unwind`, a watchdog thread for hangs, and an
//! allocation guard for inputs whose declared sizes are trusted.

use crate::mutate::Mutator;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// A parser or protocol under test. `run` must return (an `Err` is a clean outcome); a panic,
/// a hang or an oversized allocation is a finding.
pub struct Target {
    pub name: &'static str,
    /// Whether token-level text edits apply.
    pub text: bool,
    pub seeds: Vec<Vec<u8>>,
    pub run: fn(&[u8]),
}

#[derive(Clone, Debug)]
pub struct Finding {
    /// `panic`, `hang` or `alloc`.
    pub kind: &'static str,
    pub message: String,
    pub input: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: &'static str,
    pub execs: u64,
    pub secs: f64,
    pub panics: u64,
    pub hangs: u64,
    /// The first input of each distinct panic message, and the hang if there was one.
    pub findings: Vec<Finding>,
}

impl Outcome {
    pub fn json(&self) -> String {
        format!(
            "{{\"target\": \"{}\", \"executions\": {}, \"seconds\": {:.1}, \"panics\": {}, \"hangs\": {}}}",
            self.name, self.execs, self.secs, self.panics, self.hangs
        )
    }
}

/// Largest single allocation an input may cause. Seeds and mutants are at most 64 KiB, so a
/// request past this means a size read from the input was trusted.
pub const ALLOC_LIMIT: usize = 1 << 28;

/// Wraps the system allocator: a request past [`ALLOC_LIMIT`] while a fuzzing thread runs an
/// input prints that input as hex (without allocating) and fails, which aborts the process.
pub struct Guard;

static CURRENT_PTR: AtomicUsize = AtomicUsize::new(0);
static CURRENT_LEN: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the thread running an input is guarded: tests beside it allocate as they like.
    // Const-initialized without a destructor, so reading it never allocates.
    static ARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn armed() -> bool {
    ARMED.try_with(|a| a.get()).unwrap_or(false)
}

unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > ALLOC_LIMIT && armed() {
            report_oversize(l.size());
            return std::ptr::null_mut();
        }
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > ALLOC_LIMIT && armed() {
            report_oversize(new);
            return std::ptr::null_mut();
        }
        System.realloc(p, l, new)
    }
}

/// Write the current input as hex to standard error with a stack buffer only.
unsafe fn report_oversize(size: usize) {
    let say = |s: &[u8]| {
        libc::write(2, s.as_ptr() as *const libc::c_void, s.len());
    };
    let mut num = [0u8; 20];
    let mut i = num.len();
    let mut n = size;
    loop {
        i -= 1;
        num[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    say(b"\nfuzz: alloc finding: an allocation of ");
    say(&num[i..]);
    say(b" bytes; input (hex):\n");
    let (p, len) = (
        CURRENT_PTR.load(Ordering::Relaxed) as *const u8,
        CURRENT_LEN.load(Ordering::Relaxed),
    );
    let input = std::slice::from_raw_parts(p, len);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for chunk in input.chunks(64) {
        let mut buf = [0u8; 128];
        for (k, b) in chunk.iter().enumerate() {
            buf[2 * k] = HEX[(b >> 4) as usize];
            buf[2 * k + 1] = HEX[(b & 15) as usize];
        }
        say(&buf[..2 * chunk.len()]);
    }
    say(b"\n");
}

thread_local! {
    static FUZZING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics on fuzzing threads are recorded, not printed; others go to the usual hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let ours = FUZZING.with(|f| {
                let mut f = f.borrow_mut();
                match f.as_mut() {
                    Some(slot) => {
                        let loc = info
                            .location()
                            .map(|l| format!(" at {}:{}", l.file(), l.line()))
                            .unwrap_or_default();
                        *slot = format!("{info}{loc}");
                        true
                    }
                    None => false,
                }
            });
            if !ours {
                prev(info);
            }
        }));
    });
}

/// Run `target` for `execs` inputs (the seeds first, then mutants), each within `limit`.
pub fn fuzz(target: &Target, execs: u64, seed: u64, limit: Duration) -> Outcome {
    install_hook();
    let t0 = Instant::now();
    let done = Arc::new(AtomicU64::new(0));
    // Start of the input in flight, in µs since t0 plus one; 0 when idle.
    let started = Arc::new(AtomicU64::new(0));
    let current = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let (seeds, run, text) = (target.seeds.clone(), target.run, target.text);
    let worker = {
        let (done, started, current, stop) =
            (done.clone(), started.clone(), current.clone(), stop.clone());
        std::thread::Builder::new()
            .name(format!("fuzz-{}", target.name))
            .spawn(move || {
                FUZZING.with(|f| *f.borrow_mut() = Some(String::new()));
                let mut m = Mutator::new(seed, text);
                let (mut panics, mut findings) = (0u64, Vec::<Finding>::new());
                for i in 0..execs {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let input = match seeds.get(i as usize) {
                        Some(s) => s.clone(),
                        None => m.next(&seeds),
                    };
                    current.lock().unwrap().clone_from(&input);
                    CURRENT_LEN.store(input.len(), Ordering::Relaxed);
                    CURRENT_PTR.store(input.as_ptr() as usize, Ordering::Relaxed);
                    ARMED.with(|a| a.set(true));
                    started.store(t0.elapsed().as_micros() as u64 + 1, Ordering::Release);
                    let r = panic::catch_unwind(AssertUnwindSafe(|| run(&input)));
                    started.store(0, Ordering::Release);
                    ARMED.with(|a| a.set(false));
                    CURRENT_PTR.store(0, Ordering::Relaxed);
                    done.fetch_add(1, Ordering::Relaxed);
                    if r.is_err() {
                        panics += 1;
                        let msg = FUZZING.with(|f| f.borrow().clone().unwrap_or_default());
                        let key = msg.split(" at ").last().unwrap_or("").to_string();
                        if findings.len() < 16
                            && !findings.iter().any(|f| f.message.ends_with(&key))
                        {
                            findings.push(Finding {
                                kind: "panic",
                                message: msg,
                                input,
                            });
                        }
                    }
                }
                (panics, findings)
            })
            .expect("spawn fuzz worker")
    };
    let limit_us = limit.as_micros() as u64;
    loop {
        std::thread::sleep(Duration::from_millis(5));
        if worker.is_finished() {
            let (panics, findings) = worker.join().expect("fuzz worker");
            return Outcome {
                name: target.name,
                execs: done.load(Ordering::Relaxed),
                secs: t0.elapsed().as_secs_f64(),
                panics,
                hangs: 0,
                findings,
            };
        }
        let s = started.load(Ordering::Acquire);
        let now = t0.elapsed().as_micros() as u64 + 1;
        if s != 0 && now.saturating_sub(s) > limit_us {
            // The worker cannot be interrupted; it is left behind and the target stops here.
            stop.store(true, Ordering::Relaxed);
            let input = current.lock().map(|c| c.clone()).unwrap_or_default();
            return Outcome {
                name: target.name,
                execs: done.load(Ordering::Relaxed),
                secs: t0.elapsed().as_secs_f64(),
                panics: 0,
                hangs: 1,
                findings: vec![Finding {
                    kind: "hang",
                    message: format!("no result within {limit:?}"),
                    input,
                }],
            };
        }
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Save a finding's input to a file in the temp dir and describe it with its hex, to be
/// reproduced by feeding the file to the command (docs/fuzz/README.md).
pub fn describe(target: &str, f: &Finding) -> String {
    let path = std::env::temp_dir().join(format!(
        "edgeflow-fuzz-{target}-{}-{}.bin",
        f.kind,
        std::process::id()
    ));
    let saved = match std::fs::write(&path, &f.input) {
        Ok(()) => format!("saved to {}", path.display()),
        Err(e) => format!("not saved ({e})"),
    };
    format!(
        "{target}: {} ({}), input {saved}, {} bytes, hex:\n{}",
        f.kind,
        f.message,
        f.input.len(),
        hex(&f.input)
    )
}
