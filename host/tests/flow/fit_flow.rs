//! The fit check against the real flow: a design the cost model puts above its logic margin
//! and nextpnr-ice40 cannot place (tiny at z = [2, 2] on the iCEBreaker) fails in the
//! project's words: which cells ran out, needed against available, and what to change.

use crate::common::{have, ok_json, path_str, root, tmpdir, write_mode};

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
    let cost = crate::common::ok_json(&["cost", "--spec", s, "--board", "icebreaker", "--json"]);
    // not called fitting: over the part, or within the model's error of it
    assert_ne!(cost["fits"], true, "{cost}");
    let out = d.join("out");
    let o = crate::common::edgeflow(&[
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
        "the design does not fit icebreaker (iCE40UP5K-SG48): place and route needs ",
        " logic cells (ICESTORM_LC) of the part's 5280 (",
        "To fit: fewer lanes: z = 1 for junction 2",
        "a board with more logic.",
        "nextpnr's log is kept: ",
    ] {
        assert!(err.contains(needle), "lacks {needle:?}: {err}");
    }
    // in the project's words: not nextpnr's last lines
    assert!(!err.contains("no BELs remaining"), "{err}");
    assert!(!out.join("tiny-icebreaker.bin").exists());
    // the count and percentage are nextpnr's own table's, in the kept log
    let used: u64 = err
        .split("place and route needs ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a cell count");
    let pct = format!("of the part's 5280 ({:.0}%)", 100.0 * used as f64 / 5280.0);
    assert!(used > 5280 && err.contains(&pct), "{pct}: {err}");
    let log = err
        .split("nextpnr's log is kept: ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .expect("the log's path");
    let text = std::fs::read_to_string(log).expect("the kept log");
    assert!(
        text.contains(&format!("ICESTORM_LC: {used:>5}/ 5280")),
        "{log} lacks {used}"
    );
    std::fs::remove_dir_all(std::path::Path::new(log).parent().unwrap()).ok();
    std::fs::remove_dir_all(&d).ok();
}

/// The verdicts of `plan` and `cost` are never the opposite of the real flow's: tiny at
/// z = [2, 2] on the iCEBreaker, which nextpnr-ice40 cannot place, is not called fitting and
/// not planned; tiny at z = [1, 1] and digits, which it places, are not called misfits; what
/// the model cannot tell it calls near the limit and names the command that decides.
#[test]
fn the_fit_check_is_never_the_opposite_of_the_real_flow() {
    let v = ok_json(&[
        "plan",
        "--spec",
        "specs/tiny.toml",
        "--boards",
        "icebreaker",
        "--json",
    ]);
    for st in v["stages"].as_array().unwrap() {
        let u = &st["utilisation"];
        let (used, avail) = (
            u["logic"].as_f64().unwrap(),
            u["logic_available"].as_f64().unwrap(),
        );
        assert!(used <= avail, "planned {used} of {avail} logic cells: {st}");
        // a z the real flow placed: nextpnr-ice40 fits tiny at z = [1, 1] on the UP5K
        assert_eq!(st["z"], serde_json::json!([1, 1]), "{st}");
    }
    let d = tmpdir("fit");
    let spec = d.join("tiny22.toml");
    let text = std::fs::read_to_string(root().join("specs/tiny.toml")).unwrap();
    let text = text.replace("z = [4, 2]", "z = [2, 2]");
    assert!(text.contains("z = [2, 2]"));
    write_mode(&spec, text.as_bytes(), 0o644);
    let cost =
        |spec: &str, board: &str| ok_json(&["cost", "--spec", spec, "--board", board, "--json"]);
    let v = cost(path_str(&spec), "icebreaker");
    assert_ne!(v["fits"], true, "{v}");
    let verdict = v["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("DOES NOT FIT") || verdict.starts_with("NEAR THE LIMIT"),
        "{verdict}"
    );
    // and no false alarm on what the real flow placed: tiny at z = [1, 1] and digits on the
    // iCEBreaker (digits at 98% of its logic cells)
    write_mode(
        &spec,
        text.replace("z = [2, 2]", "z = [1, 1]").as_bytes(),
        0o644,
    );
    for (s, board) in [
        (path_str(&spec), "icebreaker"),
        ("specs/digits.toml", "icebreaker"),
    ] {
        let v = cost(s, board);
        assert_ne!(v["fits"], false, "{v}");
        assert_eq!(v["overflows"], serde_json::json!([]), "{v}");
        if v["fits"].is_null() {
            let verdict = v["verdict"].as_str().unwrap();
            assert!(
                verdict.starts_with(&format!("NEAR THE LIMIT of {board}: "))
                    && verdict.contains(&format!("`edgeflow synth --spec {s} --board {board}`")),
                "{verdict}"
            );
            assert_eq!(v["near_limit"], true, "{v}");
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// dey-mnist on the iCEBreaker: far over its logic cells and block RAMs. `cost` names both,
/// predicted against the board file's 5280 cells and 30 block RAMs (the EBR), says DOES NOT FIT, and
/// exits 0 (a report).
#[test]
fn cost_names_every_resource_over_the_board() {
    let args = [
        "cost",
        "--spec",
        "specs/dey-mnist.toml",
        "--board",
        "icebreaker",
    ];
    let v = ok_json(&[&args[..], &["--json"]].concat());
    assert_eq!(v["fits"], false, "{v}");
    let over = v["overflows"].as_array().unwrap();
    let find = |r: &str| over.iter().find(|o| o["resource"] == r).cloned();
    let logic = find("logic cells").expect("logic cells over");
    let ram = find("block RAMs").expect("block RAMs over");
    assert_eq!(logic["available"], 5280, "{logic}");
    // beyond the model's error: 5280 and the board file's logic_error
    let e = v["usage"]["logic_error"].as_f64().unwrap();
    assert!(e > 0.0 && e < 0.5, "{v}");
    assert_eq!(logic["allowed"], (5280.0 * (1.0 + e)).floor(), "{logic}");
    assert_eq!(ram["available"], 30, "{ram}");
    for o in over {
        let (p, a) = (
            o["predicted"].as_f64().unwrap(),
            o["available"].as_f64().unwrap(),
        );
        assert!(p > o["allowed"].as_f64().unwrap(), "{o}");
        assert!(
            (o["percent"].as_f64().unwrap() - 100.0 * p / a).abs() < 1e-9,
            "{o}"
        );
    }
    // the text says it, each resource with its numbers, and the run is still a success
    let o = crate::common::edgeflow(&args);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    let verdict = text.lines().last().unwrap();
    assert!(
        verdict.starts_with("DOES NOT FIT icebreaker: "),
        "{verdict}"
    );
    for o in over {
        let part = format!(
            "{}: {} predicted, the part has {} ({:.0}%",
            o["resource"].as_str().unwrap(),
            o["predicted"],
            o["available"],
            o["percent"].as_f64().unwrap()
        );
        assert!(verdict.contains(&part), "lacks {part:?}: {verdict}");
    }
}
