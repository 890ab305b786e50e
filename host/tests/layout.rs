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
