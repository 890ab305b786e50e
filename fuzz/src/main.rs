//! `edgeflow-fuzz [EXECS] [--slow N] [--seed N] [--only NAME] [--json FILE]`: the long run
//! of docs/fuzz/run.sh over the library crates' targets; the slow ones (a simulation per
//! input) get `--slow` inputs, EXECS/1000 unless given.

use edgeflow_fuzz::run::Guard;

#[global_allocator]
static GUARD: Guard = Guard;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut execs, mut seed, mut only, mut json) = (1_000_000u64, 1u64, None, None);
    let mut slow = None;
    while let Some(a) = args.next() {
        let mut val = |flag: &str| {
            args.next()
                .unwrap_or_else(|| fail(&format!("{flag} needs a value")))
        };
        match a.as_str() {
            "--seed" => {
                seed = val("--seed")
                    .parse()
                    .unwrap_or_else(|_| fail("--seed: a number"))
            }
            "--slow" => {
                slow = Some(
                    val("--slow")
                        .parse()
                        .unwrap_or_else(|_| fail("--slow: a number")),
                )
            }
            "--only" => only = Some(val("--only")),
            "--json" => json = Some(val("--json")),
            n => {
                execs = n.parse().unwrap_or_else(|_| {
                    fail(&format!("{n}: expected a number of executions per target"))
                })
            }
        }
    }
    let slow = slow.unwrap_or((execs / 1000).max(1));
    let targets: Vec<_> = (edgeflow_fuzz::targets::cheap()
        .into_iter()
        .map(|t| (t, execs)))
    .chain(
        edgeflow_fuzz::targets::slow()
            .into_iter()
            .map(|t| (t, slow)),
    )
    .filter(|(t, _)| only.as_deref().is_none_or(|o| o == t.name))
    .collect();
    if targets.is_empty() {
        fail("--only names no target");
    }
    let mut lines = Vec::new();
    for (t, n) in &targets {
        let o = edgeflow_fuzz::fuzz(t, *n, seed, edgeflow_fuzz::TIME_LIMIT);
        for f in &o.findings {
            eprintln!("{}", edgeflow_fuzz::describe(t.name, f));
        }
        println!(
            "{:<14} {:>9} executions {:>7.1} s {:>4} panics {:>2} hangs",
            o.name, o.execs, o.secs, o.panics, o.hangs
        );
        lines.push(o.json());
    }
    if let Some(path) = json {
        let text = lines.join("\n") + "\n";
        std::fs::write(&path, text).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
    }
    edgeflow_fuzz::targets::clean_scratch();
    // A hung worker thread cannot be joined.
    std::process::exit(0);
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(2);
}
