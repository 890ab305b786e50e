//! The spec's rules, one test per rule, and the values derived from a valid spec.

use super::*;

const GOOD: &str = r#"
name = "t"
layers = [32, 16, 8]
fan_out = [4, 4]
z = [8, 4]
activation = "sigmoid"
learning_rate_shift = 3
seed = 1
[fixed]
width = 10
int_bits = 2
frac_bits = 7
[pattern]
kind = "type2"
dither = true
seed = 5
"#;

fn err(text: &str) -> String {
    Spec::from_toml_str(text, "x.toml").unwrap_err().to_string()
}

#[test]
fn good_spec_and_derived() {
    let s = Spec::from_toml_str(GOOD, "x.toml").unwrap();
    let d = s.derived();
    assert_eq!(d.junctions[0].fan_in, 8);
    assert_eq!(d.junctions[1].fan_in, 8);
    assert_eq!(d.junctions[0].clocks, 16);
    assert_eq!(d.junctions[1].clocks, 16);
    assert_eq!(d.junctions[0].staleness, 3);
    assert_eq!(d.junctions[1].staleness, 1);
    assert_eq!(d.block_cycle_clocks, 16 + BLOCK_CYCLE_OVERHEAD);
    // 32·4 = 128 edges with FF and UP, 16·4 = 64 with FF, BP and UP
    assert_eq!((s.edges(0), s.edges(1)), (128, 64));
    assert_eq!(s.edge_ops_per_sample(), 2 * 128 + 3 * 64);
}

#[test]
fn z_must_divide_left_layer() {
    let e = err(&GOOD.replace("z = [8, 4]", "z = [8, 6]"));
    assert!(e.contains("x.toml"), "{e}");
    assert!(e.contains("junction 2: z[1]"), "{e}");
    assert!(e.contains("= 6 must divide the left layer size 16"), "{e}");
    assert!(e.contains("try 4 or 8"), "{e}");
}

/// 1024 × 128 = 131,072 edges: z = 2 makes passes of 65,536 clocks, one more than a 16-bit
/// counter holds even before the block cycle's overhead; z = 4 makes 32,768.
#[test]
fn a_pass_must_fit_the_hardware_counters() {
    let big = GOOD
        .replace("layers = [32, 16, 8]", "layers = [1024, 512, 8]")
        .replace("fan_out = [4, 4]", "fan_out = [128, 4]");
    let e = err(&big.replace("z = [8, 4]", "z = [2, 4]"));
    assert!(e.contains("junction 1: z[0]"), "{e}");
    assert!(
        e.contains("= 2 gives passes of 65536 clocks, more than 65527"),
        "{e}"
    );
    assert!(e.contains("16 bits"), "{e}");
    assert!(e.contains("raise z[0]: try 4 or 8"), "{e}");
    let ok = Spec::from_toml_str(&big.replace("z = [8, 4]", "z = [4, 4]"), "x.toml").unwrap();
    assert_eq!(ok.max_pass_clocks(), 32768);
}

#[test]
fn z_and_fan_in_must_nest() {
    // 48 left, 16 right, fan-out 4 → fan-in 12; z = 16 divides 48
    let e = err(&GOOD
        .replace("layers = [32, 16, 8]", "layers = [48, 16, 8]")
        .replace("z = [8, 4]", "z = [16, 4]"));
    // fan-in 12, z 16: neither divides the other
    assert!(e.contains("junction 1: z[0]"), "{e}");
    assert!(
        e.contains("= 16 and fan-in 12: one must divide the other"),
        "{e}"
    );
}

#[test]
fn fan_in_must_be_whole() {
    let e = err(&GOOD
        .replace("layers = [32, 16, 8]", "layers = [32, 12, 8]")
        .replace("z = [8, 4]", "z = [8, 3]"));
    assert!(e.contains("junction 1: fan_out[0]"), "{e}");
    assert!(e.contains("fan-in is not whole"), "{e}");
    assert!(e.contains("try 3"), "{e}");
}

#[test]
fn fan_in_must_divide_left_layer() {
    // 24 left, 16 right, fo 4 → 96 edges, fi 6, 6 | 24 ok; use fo 8 → fi 12, 12 | 24 ok;
    // 40 left, 16 right, fo 6 → 240 edges, fi 15, 15 ∤ 40
    let e = err(&GOOD
        .replace("layers = [32, 16, 8]", "layers = [40, 16, 8]")
        .replace("fan_out = [4, 4]", "fan_out = [6, 4]"));
    assert!(
        e.contains("fan-in 15, which must divide the left layer size 40"),
        "{e}"
    );
}

#[test]
fn fan_out_range() {
    let e = err(&GOOD.replace("fan_out = [4, 4]", "fan_out = [4, 9]"));
    assert!(e.contains("junction 2: fan_out[1]"), "{e}");
    assert!(e.contains("between 1 and the right layer size 8"), "{e}");
}

#[test]
fn edge_count_is_bounded() {
    let e = err(&GOOD
        .replace("layers = [32, 16, 8]", "layers = [32768, 32768, 8]")
        .replace("fan_out = [4, 4]", "fan_out = [1024, 4]")
        .replace("z = [8, 4]", "z = [1024, 4]"));
    assert!(e.contains("junction 1: fan_out[0]"), "{e}");
    assert!(e.contains("33554432 edges, more than 16777216"), "{e}");
    assert!(e.contains("at most 512"), "{e}");
}

#[test]
fn edge_count_is_bounded_over_the_network() {
    let n = 40;
    let e = err(&GOOD
        .replace(
            "layers = [32, 16, 8]",
            &format!("layers = {:?}", vec![32768; n]),
        )
        .replace(
            "fan_out = [4, 4]",
            &format!("fan_out = {:?}", vec![512; n - 1]),
        )
        .replace("z = [8, 4]", &format!("z = {:?}", vec![512; n - 1])));
    assert!(e.contains("fan_out: 39 junctions"), "{e}");
    assert!(
        e.contains("654311424 edges in all, more than 16777216"),
        "{e}"
    );
    assert!(!e.contains("junction 1:"), "{e}");
    // At the bound exactly: one junction of 2^24 edges is as valid as before.
    let one = GOOD
        .replace("layers = [32, 16, 8]", "layers = [32768, 32768]")
        .replace("fan_out = [4, 4]", "fan_out = [512]")
        .replace("z = [8, 4]", "z = [512]");
    assert!(Spec::from_toml_str(&one, "x.toml").is_ok());
}

#[test]
fn entry_counts() {
    let e = err(&GOOD.replace("z = [8, 4]", "z = [8]"));
    assert!(
        e.contains("z: has 1 entries but the network has 2 junctions"),
        "{e}"
    );
}

#[test]
fn too_few_layers() {
    let e = err(&GOOD.replace("layers = [32, 16, 8]", "layers = [32]"));
    assert!(e.contains("layers: needs at least 2 sizes"), "{e}");
}

#[test]
fn zero_layer() {
    let e = err(&GOOD.replace("layers = [32, 16, 8]", "layers = [32, 0, 8]"));
    assert!(e.contains("layers[1]: = 0 must be between 1 and 32768 (the 32-bit accumulators must not overflow)"), "{e}");
}

#[test]
fn width_rules() {
    let e = err(&GOOD.replace("width = 10", "width = 11"));
    assert!(
        e.contains("fixed.width: = 11 must equal 1 (sign) + int_bits (2) + frac_bits (7)"),
        "{e}"
    );
    let e = err(&GOOD
        .replace("width = 10", "width = 18")
        .replace("frac_bits = 7", "frac_bits = 15"));
    assert!(e.contains("must be between 2 and 16"), "{e}");
    let e = err(&GOOD
        .replace("width = 10", "width = 13")
        .replace("int_bits = 2", "int_bits = 5"));
    assert!(e.contains("fixed.int_bits: = 5 exceeds 3"), "{e}");
}

#[test]
fn input_bits_rule_and_default() {
    let s = Spec::from_toml_str(GOOD, "x.toml").unwrap();
    assert_eq!((s.input_bits, s.input_bits()), (None, 8));
    let with = |b: &str| GOOD.replace("seed = 1\n", &format!("seed = 1\ninput_bits = {b}\n"));
    for b in [1, 8, 16] {
        let s = Spec::from_toml_str(&with(&b.to_string()), "x.toml").unwrap();
        assert_eq!(s.input_bits(), b);
        assert_eq!(Spec::from_toml_str(&s.to_toml(), "y").unwrap(), s);
    }
    for b in [0, 17] {
        let e = err(&with(&b.to_string()));
        assert!(
            e.contains(&format!("input_bits: = {b} must be between 1 and 16")),
            "{e}"
        );
        assert!(
            e.contains("leave it out for the format's own precision (8)"),
            "{e}"
        );
    }
}

#[test]
fn one_bit_inputs_select_exactly_where_the_format_holds_one() {
    for int_bits in 0..=3u32 {
        for frac in 0..=(15 - int_bits) {
            let f = Format::new(int_bits, frac);
            let one = f.quantize_input(1.0, 1);
            assert_eq!(f.quantize_input(0.0, 1), 0);
            let exact = (f.min()..=f.max()).all(|w| f.mul(w, one) == w && f.mul(w, 0) == 0);
            let mut s = Spec::from_toml_str(GOOD, "x.toml").unwrap();
            s.fixed = FixedSpec {
                width: f.width,
                int_bits,
                frac_bits: frac,
            };
            s.input_bits = Some(1);
            assert_eq!(s.input_selects(), exact, "{int_bits}.{frac}");
            assert_eq!(
                s.derived().junctions[0].multipliers_ff,
                if exact { 0 } else { 8 }
            );
            // UP's mul(δ, x): δ is a format value as w is
            assert_eq!(
                s.derived().junctions[0].multipliers_up,
                if exact { 0 } else { 8 }
            );
            assert_eq!(s.derived().junctions[1].multipliers_ff, 4);
            s.input_bits = Some(2);
            assert!(!s.input_selects());
        }
    }
}

#[test]
fn learning_rate_rule() {
    let e = err(&GOOD.replace("learning_rate_shift = 3", "learning_rate_shift = 20"));
    assert!(e.contains("learning_rate_shift: = 20 exceeds 15"), "{e}");
}

#[test]
fn empty_name() {
    let e = err(&GOOD.replace("name = \"t\"", "name = \" \""));
    assert!(e.contains("name: must not be empty"), "{e}");
}

#[test]
fn toml_errors_name_line_and_field() {
    let e = err(&GOOD.replace("kind = \"type2\"", "kind = \"type9\""));
    assert!(e.contains("x.toml"), "{e}");
    assert!(e.contains("line 14 (`kind = \"type9\"`)"), "{e}");
    assert!(e.contains("type9"), "{e}");
    let e = err(&GOOD.replace("seed = 1\n", "seed = 1\nbogus = 2\n"));
    assert!(e.contains("unknown field `bogus`"), "{e}");
    // A missing field names the field, not the file's first line.
    let e = err(&GOOD.replace("learning_rate_shift", "# learning_rate_shift"));
    assert!(e.contains("missing field `learning_rate_shift`"), "{e}");
    assert!(!e.contains("line 1 ("), "{e}");
}

#[test]
fn several_problems_reported_together() {
    let s = GOOD.replace("z = [8, 4]", "z = [7, 6]");
    let e = Spec::from_toml_str(&s, "x.toml").unwrap_err();
    assert_eq!(e.problems.len(), 2);
}

#[test]
fn missing_file() {
    let e = Spec::load(Path::new("/nonexistent/x.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("/nonexistent/x.toml") && e.contains("cannot be read"),
        "{e}"
    );
}

#[test]
fn rounded_ff_products_must_fit_the_accumulator() {
    // 16 bits with 3 integer bits: products of up to 19 bits, so 8191 of them and a bias fit
    // 31 bits (8191·2^18 + 2^15 < 2^31) and 8192 do not.
    let wide = |fan_in: usize, extra: &str| {
        GOOD.replace(
            "layers = [32, 16, 8]",
            &format!("layers = [{fan_in}, 4, 8]"),
        )
        .replace("z = [8, 4]", "z = [1, 4]")
        .replace(
            "width = 10\nint_bits = 2\nfrac_bits = 7",
            "width = 16\nint_bits = 3\nfrac_bits = 12",
        )
        .replace("seed = 1\n", &format!("seed = 1\n{extra}"))
    };
    let e = err(&wide(8192, ""));
    assert!(e.contains("junction 1: fan_out[0]"), "{e}");
    assert!(e.contains("8192 products of up to 19 bits"), "{e}");
    assert!(e.contains("at most 8191"), "{e}");
    let s = Spec::from_toml_str(&wide(8192, "ff_products = \"saturated\"\n"), "x.toml").unwrap();
    assert_eq!(s.ff_products, FfProducts::Saturated);
    let s = Spec::from_toml_str(&wide(4096, ""), "x.toml").unwrap();
    assert_eq!(s.ff_products, FfProducts::Rounded);
}
