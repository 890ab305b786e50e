//! What commands say on standard error besides their results: progress, notes and detail, at
//! the level `-q/--quiet` and `-v/--verbose` choose. On a terminal progress is drawn in place;
//! when standard error is a pipe or a file it is a plain line every few seconds, so a log
//! shows that long work (training epochs, a benchmark, a bitstream build) is alive.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, WeakProgressBar};
use std::fmt::Display;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

const QUIET: u8 = 0;
const NORMAL: u8 = 1;
const VERBOSE: u8 = 2;

static LEVEL: AtomicU8 = AtomicU8::new(NORMAL);

/// Seconds between progress lines when standard error is not a terminal.
const LINE_EVERY_SECONDS: f64 = 5.0;

pub fn set_level(quiet: bool, verbose: bool) {
    let l = match (quiet, verbose) {
        (true, _) => QUIET,
        (false, true) => VERBOSE,
        (false, false) => NORMAL,
    };
    LEVEL.store(l, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) == QUIET
}

pub fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) == VERBOSE
}

/// A remark for the user (a choice made for them, a caveat): silent under `--quiet`.
pub fn note(msg: impl Display) {
    if !quiet() {
        eprintln!("{msg}");
    }
}

/// What only `--verbose` shows: the files a command checked, how long it took.
pub fn detail(msg: impl Display) {
    if verbose() {
        eprintln!("{msg}");
    }
}

/// A spinner for work of unknown length.
pub fn spinner(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}").unwrap());
    pb.set_message(msg.to_string());
    show(pb)
}

/// Puts a progress bar where the user sees it: drawn on a terminal, a line every few seconds
/// otherwise (the pace `EDGEFLOW_PROGRESS_SECONDS` overrides), nothing under `--quiet`.
pub fn show(pb: ProgressBar) -> ProgressBar {
    if quiet() {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    } else if std::io::stderr().is_terminal() {
        pb.enable_steady_tick(Duration::from_millis(150));
    } else {
        pb.set_draw_target(ProgressDrawTarget::hidden());
        let weak = pb.downgrade();
        std::thread::spawn(move || lines(weak, line_every()));
    }
    pb
}

fn line_every() -> Duration {
    let s = std::env::var("EDGEFLOW_PROGRESS_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(LINE_EVERY_SECONDS);
    Duration::from_secs_f64(s)
}

/// Prints the bar's state every `every` until it is finished or dropped.
fn lines(weak: WeakProgressBar, every: Duration) {
    loop {
        std::thread::sleep(every);
        let Some(pb) = weak.upgrade() else { return };
        if pb.is_finished() {
            return;
        }
        eprintln!("{}", line(&pb));
    }
}

fn line(pb: &ProgressBar) -> String {
    let mut s = String::from("edgeflow:");
    for part in [pb.prefix(), pb.message()] {
        if !part.is_empty() {
            s += " ";
            s += &part;
        }
    }
    if let Some(len) = pb.length() {
        s += &format!(" ({}/{len})", pb.position());
    }
    s + &format!(" [{:.0} s]", pb.elapsed().as_secs_f64())
}
