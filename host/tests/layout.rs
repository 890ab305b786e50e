//! The code's layout keeps what the architecture promises: readable files, and the reference
//! model and the OpenCL host free of the hardware crates.

mod common;

fn rust_files(d: &std::path::Path, out: &mut Vec<(std::path::PathBuf, usize)>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            out.push((p, n));
        }
    }
}

/// No source file of any crate is over 800 lines.
#[test]
fn no_source_file_is_over_800_lines() {
    let root = common::root();
    let mut files = vec![];
    for c in [
        "core",
        "reference",
        "flow",
        "hdl",
        "host",
        "tests",
        "planner",
        "opencl",
        "fuzz",
    ] {
        rust_files(&root.join(c), &mut files);
    }
    assert!(files.len() > 200, "{}", files.len());
    let long: Vec<_> = files.iter().filter(|(_, n)| *n > 800).collect();
    assert!(long.is_empty(), "over 800 lines: {long:?}");
}

/// `cargo tree` of the reference model, the OpenCL host and the FPGA flow shows no rust-hdl:
/// what needs only the schedule, or only runs the tools on Verilog text, does not compile the
/// hardware.
#[test]
fn reference_and_opencl_do_not_depend_on_the_hardware() {
    let root = common::root();
    for krate in [
        "edgeflow-reference",
        "edgeflow-opencl",
        "edgeflow-core",
        "edgeflow-flow",
    ] {
        let o = std::process::Command::new(env!("CARGO"))
            .args(["tree", "--offline", "-e", "normal", "-p", krate])
            .current_dir(&root)
            .output()
            .unwrap();
        let tree = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "cargo tree -p {krate}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(tree.contains(krate), "{tree}");
        for hw in ["rust-hdl", "edgeflow-hdl"] {
            assert!(!tree.contains(hw), "{krate} depends on {hw}:\n{tree}");
        }
    }
    // the check can see a dependency: the hardware crate has it
    let o = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-e", "normal", "-p", "edgeflow-hdl"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("rust-hdl"));
}

/// The hardware crate is split by what the hardware is: only the crate root and the test
/// helpers sit at the top of hdl/src, every block in a folder of its kind.
#[test]
fn hdl_blocks_live_in_folders_by_function() {
    let src = common::root().join("hdl/src");
    let mut loose: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".rs"))
        .filter(|n| !["lib.rs", "testing.rs", "sim_util.rs"].contains(&n.as_str()))
        .collect();
    loose.sort();
    assert!(loose.is_empty(), "hdl/src/*.rs outside a folder: {loose:?}");
    for folder in [
        "testbench",
        "datapath",
        "memory",
        "host_link",
        "resident",
        "link",
        "board",
    ] {
        assert!(
            src.join(folder).join("mod.rs").is_file(),
            "hdl/src/{folder}"
        );
    }
}

/// Lines of the string literals of Rust source `src` that hold Verilog: every line of a
/// literal that spans lines, and a one-line literal with a Verilog keyword or `<=`.
/// `//` comments and character literals are skipped; `#[cfg(test)] mod tests` is cut off.
fn verilog_text_lines(src: &str) -> usize {
    let src = match src.find("#[cfg(test)]\nmod tests") {
        Some(i) => &src[..i],
        None => src,
    };
    const WORDS: [&str; 13] = [
        "assign",
        "always",
        "reg",
        "wire",
        "module",
        "begin",
        "end",
        "case",
        "function",
        "localparam",
        "input",
        "output",
        "posedge",
    ];
    let verilog = |lit: &str| {
        lit.contains("<=")
            || lit
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| WORDS.contains(&w))
    };
    let b = src.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        let word_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            i = src[i..].find('\n').map_or(b.len(), |k| i + k);
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            i = src[i + 2..].find('\'').map_or(b.len(), |k| i + 2 + k + 1);
        } else if b[i] == b'"'
            || (b[i] == b'r' && !word_before && matches!(b.get(i + 1), Some(b'"' | b'#')))
        {
            let (start, end) = if b[i] == b'r' {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let open = i + 1 + hashes + 1;
                (
                    i,
                    src[open..]
                        .find(&close)
                        .map_or(b.len(), |k| open + k + close.len()),
                )
            } else {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                (i, j + 1)
            };
            let lit = &src[start..end.min(b.len())];
            let lines = lit.matches('\n').count();
            n += if lines > 0 {
                lines + 1
            } else {
                usize::from(verilog(lit))
            };
            i = end;
        } else {
            i += 1;
        }
    }
    n
}

/// Hardware is described once, in rust-hdl: the Verilog written as text in hdl/src stays
/// small (leaves rust-hdl cannot express: format-width arithmetic, memory primitives, vendor
/// cells, the Verilator harness), and only few files return `Verilog::Custom`.
#[test]
fn little_verilog_is_written_by_hand() {
    let mut files = vec![];
    rust_files(&common::root().join("hdl/src"), &mut files);
    let (mut text, mut custom) = (0, vec![]);
    for (p, _) in &files {
        let src = std::fs::read_to_string(p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy();
        if !(name == "tests.rs" || name.ends_with("_tests.rs")) {
            text += verilog_text_lines(&src);
        }
        if src.contains("Verilog::Custom") {
            custom.push(p.display().to_string());
        }
    }
    assert!(
        verilog_text_lines("let v = \"assign x = y;\";\nlet m = \"\nmodule a;\nendmodule\n\";")
            == 5,
        "the counter itself"
    );
    eprintln!(
        "Verilog text in hdl/src: {text} lines; Verilog::Custom in {} files",
        custom.len()
    );
    assert!(
        text <= 800,
        "{text} lines of Verilog text in hdl/src (at most 800)"
    );
    assert!(
        custom.len() <= 10,
        "Verilog::Custom in {} files: {custom:?}",
        custom.len()
    );
}
