//! Mutation fuzzing on stable Rust: a seeded mutator ([`mutate`]), a runner that catches
//! panics, hangs and oversized allocations ([`run`]), and the targets of the library crates
//! ([`targets`]). See docs/fuzz/README.md.

pub mod mutate;
pub mod run;
pub mod targets;

pub use run::{describe, fuzz, Finding, Outcome, Target};

/// Per-input time limit: every parser answers a 64 KiB input in milliseconds.
pub const TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Run each target for `execs` inputs; the outcomes, and the findings described on stderr.
pub fn run_all(targets: &[Target], execs: u64, seed: u64) -> Vec<Outcome> {
    targets
        .iter()
        .map(|t| {
            let o = fuzz(t, execs, seed, TIME_LIMIT);
            for f in &o.findings {
                eprintln!("{}", describe(t.name, f));
            }
            o
        })
        .collect()
}
