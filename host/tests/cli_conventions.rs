//! One flag convention across every subcommand, checked on what a user reads: `edgeflow
//! help` is walked and every subcommand's `--help` parsed. Shell completions, manual pages,
//! quiet/verbose and progress lines on a pipe are checked by running the binary.

mod common;

use common::{edgeflow, edgeflow_env, tmpdir};

/// One option or argument of a `--help` page.
#[derive(Debug)]
struct Entry {
    short: Option<String>,
    long: Option<String>,
    /// `<VALUE>` it takes, or the placeholder of a positional argument.
    value: Option<String>,
    help: String,
}

struct Page {
    path: Vec<String>,
    usage: String,
    entries: Vec<Entry>,
    commands: Vec<String>,
}

impl Page {
    fn name(&self) -> String {
        self.path.join(" ")
    }
    fn long(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.long.as_deref() == Some(name))
    }
}

fn stdout_of(args: &[&str]) -> String {
    let o = edgeflow(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The entry line's flags and value, e.g. `-o, --out <OUT>` or `[SPEC]`.
fn entry(spec: &str) -> Entry {
    let mut e = Entry {
        short: None,
        long: None,
        value: None,
        help: String::new(),
    };
    for w in spec.split([',', ' ']).filter(|w| !w.is_empty()) {
        if w.starts_with("--") {
            e.long = Some(w.to_string());
        } else if w.starts_with('-') {
            e.short = Some(w.to_string());
        } else {
            e.value = Some(w.to_string());
        }
    }
    e
}

fn parse(path: &[&str], text: &str) -> Page {
    let mut page = Page {
        path: path.iter().map(|s| s.to_string()).collect(),
        usage: String::new(),
        entries: vec![],
        commands: vec![],
    };
    let mut section = "";
    for line in text.lines() {
        if let Some(u) = line.strip_prefix("Usage: ") {
            page.usage = u.to_string();
            continue;
        }
        if !line.starts_with(' ') && line.ends_with(':') {
            section = match line {
                "Options:" | "Arguments:" => "entries",
                "Commands:" => "commands",
                _ => "",
            };
            continue;
        }
        let body = line.trim_start();
        let indent = line.len() - body.len();
        match section {
            "commands" if indent == 2 => {
                let name = body.split_whitespace().next().unwrap();
                if name != "help" {
                    page.commands.push(name.to_string());
                }
            }
            "entries" if indent > 0 && indent <= 6 => {
                // `  -o, --out <OUT>  help` or the entry alone, its help on the next lines
                let (spec, help) = body.split_once("  ").unwrap_or((body, ""));
                let mut e = entry(spec);
                e.help = help.trim().to_string();
                page.entries.push(e);
            }
            "entries" if indent > 6 && !body.starts_with('[') => {
                if let Some(e) = page.entries.last_mut() {
                    e.help = format!("{} {body}", e.help).trim().to_string();
                }
            }
            _ => {}
        }
    }
    page
}

/// Every page from `edgeflow help` down: the top, each subcommand, and nested ones.
fn pages() -> Vec<Page> {
    let top = parse(&[], &stdout_of(&["help"]));
    assert!(top.commands.len() >= 15, "{:?}", top.commands);
    let mut out = vec![];
    let mut todo: Vec<Vec<String>> = top.commands.iter().map(|c| vec![c.clone()]).collect();
    out.push(top);
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(|s| s.as_str()).collect();
        args.push("--help");
        let page = parse(&args[..args.len() - 1], &stdout_of(&args));
        for c in &page.commands {
            let mut p = path.clone();
            p.push(c.clone());
            todo.push(p);
        }
        out.push(page);
    }
    out
}

/// Commands that write a file or fill a directory.
const WRITERS: &[&str] = &[
    "train",
    "export",
    "import",
    "infer",
    "plan",
    "fit",
    "bench",
    "quality",
    "kernels build",
    "verilog",
    "bitstream",
    "vivado",
    "completions",
    "man",
];

/// Commands that run with no arguments at all.
const RUN_WITHOUT_ARGUMENTS: &[&str] = &["devices", "quality", "man"];

/// Flag names the convention replaced.
const RETIRED: &[&str] = &[
    "--fmax", "--synth", "--output", "--clock", "--mhz", "--report",
];

fn violations(pages: &[Page]) -> Vec<String> {
    let mut bad = vec![];
    for p in pages {
        let name = p.name();
        let mut v = |m: String| bad.push(format!("`edgeflow {name}`: {m}"));
        let leaf = p.commands.is_empty() && !p.path.is_empty();
        for e in &p.entries {
            let flag = e.long.clone().or(e.value.clone()).unwrap_or_default();
            if e.help.is_empty() {
                v(format!("{flag} has no help text"));
            }
            let Some(long) = e.long.as_deref() else {
                continue;
            };
            if RETIRED.contains(&long) {
                v(format!("{long} is retired"));
            }
            if long == "--json" && e.value.is_some() {
                v("--json takes a value; write files with -o/--out".into());
            }
            if long == "--out" && e.short.as_deref() != Some("-o") {
                v("--out has no -o".into());
            }
            let writes = e.help.starts_with("Write") || e.help.starts_with("Save");
            if writes && e.value.is_some() && !["--out", "--plot", "--vcd"].contains(&long) {
                v(format!(
                    "{long} writes a file: name it -o/--out (or --plot, --vcd)"
                ));
            }
            if long == "--board" && e.help.contains("comma") {
                v("--board takes a list: name it --boards".into());
            }
            if long == "--boards" && !e.help.contains("comma") {
                v("--boards does not say it takes a comma-separated list".into());
            }
            if e.help.contains("MHz") && e.value.is_some() && long != "--freq" {
                v(format!("{long} takes a clock: name it --freq"));
            }
            if e.help.contains("`edgeflow synth --json`")
                && !e.help.contains("directory")
                && long != "--synth-report"
            {
                v(format!(
                    "{long} reads a synthesis report: name it --synth-report"
                ));
            }
        }
        for (s, l) in [("-q", "--quiet"), ("-v", "--verbose")] {
            if !p
                .entries
                .iter()
                .any(|e| e.short.as_deref() == Some(s) && e.long.as_deref() == Some(l))
            {
                v(format!("no {s}/{l}"));
            }
        }
        if !leaf {
            continue;
        }
        let mentions_spec = p.usage.contains("SPEC")
            || p.entries
                .iter()
                .any(|e| e.value.as_deref() == Some("[SPEC]"));
        if mentions_spec && p.long("--spec").is_none() {
            v("takes a spec but has no --spec".into());
        }
        let writer = WRITERS.contains(&name.as_str());
        match p.long("--out") {
            None if writer => v("writes files but has no -o/--out".into()),
            Some(_) if !writer => v("has -o/--out but is not listed as a writer".into()),
            _ => {}
        }
        let opencl = p.entries.iter().any(|e| {
            matches!(e.long.as_deref(), Some("--backend" | "--backends"))
                && e.help.contains("opencl")
        });
        if opencl != p.long("--kernel-binary").is_some() {
            v(format!(
                "--kernel-binary {} but the command {} an OpenCL backend",
                if opencl { "is missing" } else { "is offered" },
                if opencl { "runs" } else { "never runs" }
            ));
        }
    }
    bad
}

#[test]
fn every_subcommand_follows_the_flag_convention() {
    let pages = pages();
    let names: Vec<String> = pages.iter().map(|p| p.name()).collect();
    for n in ["spec check", "kernels build", "bench", "completions", "man"] {
        assert!(names.iter().any(|x| x == n), "{n} not walked: {names:?}");
    }
    let bad = violations(&pages);
    assert!(
        bad.is_empty(),
        "{} violations:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The checks catch what they look for: a page with each kind of break.
#[test]
fn the_convention_check_finds_each_kind_of_break() {
    let broken = "Usage: edgeflow x [OPTIONS] --spec <SPEC>\n\nOptions:\n      --spec <SPEC>\n          Spec file\n\n      --fmax <FMAX>\n          Also project at this clock (MHz)\n\n      --json [<FILE>]\n          JSON report\n\n      --out <OUT>\n          Where\n\n      --board <BOARD>\n          Boards, comma-separated\n\n      --backend <BACKEND>\n          reference or opencl\n\n      --empty\n\n      --synth <R>\n          An `edgeflow synth --json` report\n";
    let page = parse(&["bench"], broken);
    let bad = violations(&[page]).join("\n");
    for needle in [
        "--fmax is retired",
        "--fmax takes a clock",
        "--json takes a value",
        "--out has no -o",
        "--board takes a list",
        "--kernel-binary is missing",
        "--empty has no help text",
        "--synth reads a synthesis report",
        "no -q/--quiet",
    ] {
        assert!(bad.contains(needle), "{needle:?} not found in:\n{bad}");
    }
}

/// Missing required flags are clap's usage error (exit 2, listed), and each listed flag is
/// in the usage line the help shows: required flags are shown as required.
#[test]
fn required_flags_are_shown_as_required() {
    for p in pages() {
        let name = p.name();
        if !p.commands.is_empty()
            || p.path.is_empty()
            || RUN_WITHOUT_ARGUMENTS.contains(&name.as_str())
        {
            continue;
        }
        let o = edgeflow(&p.path.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            o.status.code(),
            Some(2),
            "`edgeflow {name}` with no arguments: {err}"
        );
        let (_, listed) = err
            .split_once("required arguments were not provided:")
            .unwrap_or_else(|| panic!("`edgeflow {name}`: {err}"));
        for arg in listed.lines().take_while(|l| l.starts_with("  ")) {
            assert!(
                p.usage.contains(arg.trim()),
                "`edgeflow {name}`: required {} not in the usage `{}`",
                arg.trim(),
                p.usage
            );
        }
    }
}

/// The clock help names each board's default from the board descriptions.
#[test]
fn bitstream_clock_help_gives_each_boards_own_default() {
    let page = parse(&["bitstream"], &stdout_of(&["bitstream", "--help"]));
    let help = &page.long("--freq").expect("bitstream --freq").help;
    let mut n = 0;
    for b in edgeflow_hdl::boards::boards() {
        if b.target.starts_with("ice40") || b.target.starts_with("ecp5") {
            assert!(
                help.contains(&format!("{} {}", b.name, b.default_mhz)),
                "{}: {help}",
                b.name
            );
            n += 1;
        }
    }
    assert!(n >= 3, "{help}");
    assert!(help.contains("icebreaker 30"), "{help}");
}

#[test]
fn completions_are_generated_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef edgeflow"),
        ("fish", "complete -c edgeflow"),
    ] {
        let s = stdout_of(&["completions", shell]);
        assert!(s.contains(marker), "{shell}: no {marker:?}");
        // fish names a flag without its dashes (`-l synth-report`)
        for word in ["bitstream", "synth-report", "kernel-binary", "quiet"] {
            assert!(s.contains(word), "{shell} completion lacks {word}");
        }
        assert!(!s.contains("fmax"), "{shell}: a retired flag is offered");
    }
    let d = tmpdir("completions");
    let f = d.join("edgeflow.bash");
    stdout_of(&["completions", "bash", "-o", f.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        stdout_of(&["completions", "bash"])
    );
    let o = edgeflow(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn manual_pages_are_generated_for_every_subcommand() {
    let top = stdout_of(&["man"]);
    assert!(
        top.starts_with(".ie") || top.contains(".TH edgeflow 1"),
        "{top}"
    );
    assert!(top.contains("bitstream"));
    let d = tmpdir("man");
    stdout_of(&["man", "-o", d.to_str().unwrap()]);
    for (page, flag) in [
        ("edgeflow.1", "quiet"),
        ("edgeflow-train.1", "kernel\\-binary"),
        ("edgeflow-bench.1", "synth\\-report"),
        ("edgeflow-spec-check.1", "json"),
        ("edgeflow-kernels-build.1", "out"),
        ("edgeflow-completions.1", "bash"),
    ] {
        let text = std::fs::read_to_string(d.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
        assert!(text.contains(flag), "{page} lacks {flag}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Piped, a long run prints progress lines; `-q` silences them and the notes; `-v` adds the
/// files checked and the time taken.
#[test]
fn quiet_verbose_and_progress_on_a_pipe() {
    let train = |extra: &[&str]| {
        let mut a = vec!["train", "--spec", "specs/digits.toml", "--epochs", "3"];
        a.extend_from_slice(extra);
        let o = edgeflow_env(&a, &[("EDGEFLOW_PROGRESS_SECONDS", "0.01")]);
        assert!(o.status.success(), "{a:?}");
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (out, err) = train(&[]);
    assert!(err.contains("epoch   1:"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("edgeflow: reference") && l.ends_with(" s]")),
        "no progress line on a pipe: {err}"
    );
    let (qout, qerr) = train(&["-q"]);
    assert_eq!(qerr, "", "-q leaves only errors on stderr");
    let state = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("state sha256"))
            .map(String::from)
    };
    assert!(state(&out).is_some(), "{out}");
    assert_eq!(state(&qout), state(&out), "-q changes no result");
    let (_, verr) = train(&["--verbose"]);
    assert!(
        verr.contains("reads: --spec specs/digits.toml") && verr.contains("done in"),
        "{verr}"
    );
    let o = edgeflow(&["-q", "-v", "spec", "check", "specs/tiny.toml"]);
    assert_eq!(o.status.code(), Some(2), "-q and -v together are refused");
}

/// Every source file of the CLI crate stays readable: at most 600 lines.
#[test]
fn no_cli_source_file_is_over_600_lines() {
    fn walk(d: &std::path::Path, out: &mut Vec<(std::path::PathBuf, usize)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let n = std::fs::read_to_string(&p).unwrap().lines().count();
                out.push((p, n));
            }
        }
    }
    let mut files = vec![];
    walk(&common::root().join("host/src"), &mut files);
    assert!(files.len() > 40, "{files:?}");
    let long: Vec<_> = files.iter().filter(|(_, n)| *n > 600).collect();
    assert!(long.is_empty(), "over 600 lines: {long:?}");
}
