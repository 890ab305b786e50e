//! The fit check against the real flow: a design the cost model puts above its logic margin
//! and nextpnr-ice40 cannot place (tiny at z = [2, 2] on the iCEBreaker) fails in the
//! project's words: which cells ran out, needed against available, and what to change.

mod common;

use common::{have, root, tmpdir};

#[test]
fn a_design_nextpnr_cannot_place_is_explained_and_cost_said_so() {
    if !(have("yosys", "yosys") && have("nextpnr-ice40", "nextpnr-ice40")) {
        return;
    }
    let d = tmpdir("fit-flow");
    let spec = d.join("tiny22.toml");
    let text = std::fs::read_to_string(root().join("specs/tiny.toml"))
        .unwrap()
        .replace("z = [4, 2]", "z = [2, 2]");
    assert!(text.contains("z = [2, 2]"));
    std::fs::write(&spec, text).unwrap();
    let s = spec.to_str().unwrap();
    let cost = common::ok_json(&["cost", "--spec", s, "--board", "icebreaker", "--json"]);
    assert_eq!(cost["fits"], false, "{cost}");
    let out = d.join("out");
    let o = common::edgeflow(&[
        "bitstream",
        "--spec",
        s,
        "--board",
        "icebreaker",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for needle in [
        "the design does not fit icebreaker (iCE40UP5K-SG48)",
        "logic cells (one LUT4 and one flip-flop each)",
        "the part has 5280",
        "Suggestion: junction",
        "is kept with the tools' logs",
    ] {
        assert!(err.contains(needle), "lacks {needle:?}: {err}");
    }
    assert!(!out.join("tiny-icebreaker.bin").exists());
    if let Some(dir) = err
        .split("the work directory ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
    {
        std::fs::remove_dir_all(dir).ok();
    }
    std::fs::remove_dir_all(&d).ok();
}
