//! The cost model against the spec rules, the published design and the boards' figures.

use super::*;

/// A bundled spec (specs/NAME.toml).
fn bundled(name: &str) -> Spec {
    let path = format!("{}/../specs/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Spec::from_toml_str(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
}

#[test]
fn z_options_follow_spec_validation() {
    let spec = bundled("dey-mnist");
    let net = Net::from_spec(&spec);
    for j in 0..net.junctions() {
        for z in 1..=net.layers[j] {
            let mut s = spec.clone();
            s.z[j] = z as usize;
            assert_eq!(
                s.validate("x").is_ok(),
                net.z_options[j].contains(&z),
                "junction {j} z {z}"
            );
        }
    }
}

#[test]
fn needs_grow_with_z_and_staleness() {
    let net = Net::from_spec(&bundled("dey-mnist"));
    let b = Board::built_in("nexys4-ddr").unwrap();
    for j in 0..net.junctions() {
        let zs = &net.z_options[j];
        for w in zs.windows(2) {
            let (a, c) = (
                junction_need(&net, &b, j, w[0], 3),
                junction_need(&net, &b, j, w[1], 3),
            );
            assert!(
                a.multipliers <= c.multipliers
                    && a.logic <= c.logic
                    && a.ram_bits <= c.ram_bits
                    && a.ram_blocks <= c.ram_blocks
            );
        }
        let (a, c) = (
            junction_need(&net, &b, j, 4, 3),
            junction_need(&net, &b, j, 4, 5),
        );
        assert!(a.ram_bits < c.ram_bits);
    }
}

#[test]
fn dey_mnist_uses_published_multipliers() {
    // 2·128 (junction 1: FF + UP) + 4·32 (junction 2: FF + 2 BP + UP) = 384 multipliers
    // in this model; the published design shared its UP multipliers and used 224 DSPs.
    let net = Net::from_spec(&bundled("dey-mnist"));
    let b = Board::built_in("nexys4-ddr").unwrap();
    let m = junction_need(&net, &b, 0, 128, 3).multipliers
        + junction_need(&net, &b, 1, 32, 1).multipliers;
    assert_eq!(m, 384);
}

/// On a linked chain a board with its own link adds its sequencer's clocks, and the one
/// holding junction 1 takes a sample's inputs a word a clock; alone it adds neither.
#[test]
fn a_linked_board_pays_its_sequencer_and_its_one_word_feed() {
    let mut net = Net::from_spec(&bundled("dey-mnist"));
    let b = Board::built_in("ulx3s-45f").unwrap();
    let time = |net: &Net, j, z| junction_time(net, &b, j, z);
    let pass = |net: &Net, j, z| clocks(net, j, z) + net.overhead_on(&b);
    assert_eq!(time(&net, 1, 8), clock_time(&b, pass(&net, 1, 8)));
    assert_eq!(time(&net, 0, 32), clock_time(&b, pass(&net, 0, 32)));
    let alone = pass(&net, 1, 8);
    net.chained = true;
    assert_eq!(pass(&net, 1, 8), alone + LINKED_STAGE_CLOCKS as u64);
    assert_eq!(time(&net, 1, 8), clock_time(&b, alone + 3));
    // 1024 inputs, one a clock, against a 139-clock block cycle
    assert!(pass(&net, 0, 32) < 1024);
    assert_eq!(time(&net, 0, 32), clock_time(&b, 1024));
}

#[test]
fn one_bit_inputs_drop_junction_ones_ff_and_up_multipliers() {
    let mut spec = bundled("digits");
    let b = Board::built_in("icebreaker").unwrap();
    let z = [2, 1];
    // FF 2 + UP 2, then FF 1 + BP 2 + UP 1: the UP5K's 8 DSPs
    assert_eq!(single_board_usage(&Net::from_spec(&spec), &b, &z).dsp, 8);
    spec.input_bits = Some(1);
    let net = Net::from_spec(&spec);
    // junction 1's FF and UP both multiply by the inputs: selects
    assert_eq!(junction_need(&net, &b, 0, 2, 3).multipliers, 0);
    assert_eq!(junction_need(&net, &b, 1, 1, 1).multipliers, 4);
    assert_eq!(single_board_usage(&net, &b, &z).dsp, 4);
    // without an integer bit 1.0 saturates and the multipliers stay
    spec.fixed = edgeflow_core::spec::FixedSpec {
        width: 16,
        int_bits: 0,
        frac_bits: 15,
    };
    assert_eq!(single_board_usage(&Net::from_spec(&spec), &b, &z).dsp, 8);
}

/// A DSP budget moves the multipliers over it into logic, at the board's price per
/// multiplier in logic; a budget above the part's DSPs changes nothing.
#[test]
fn a_dsp_budget_builds_the_rest_in_logic() {
    let mut spec = bundled("tiny");
    let b = Board::built_in("ulx3s-85f").unwrap();
    let z: Vec<u64> = spec.z.iter().map(|&z| z as u64).collect();
    let all = single_board_usage(&Net::from_spec(&spec), &b, &z);
    assert!(all.dsp >= 4 && all.lut_multipliers == 0, "{all:?}");
    spec.dsp_multipliers = Some(3);
    let some = single_board_usage(&Net::from_spec(&spec), &b, &z);
    assert_eq!((some.dsp, some.lut_multipliers), (3, all.dsp - 3));
    let per = lut_multiplier_cost(&b, spec.fixed.width as u64);
    assert!(per > 0);
    assert_eq!(some.logic, all.logic + (all.dsp - 3) * per);
    spec.dsp_multipliers = Some(10_000);
    assert_eq!(single_board_usage(&Net::from_spec(&spec), &b, &z), all);
}

/// Boards that both have the link: header, vector and CRC words at the narrower
/// board's clocks per word, clocked by the slower board; with a board without it, the
/// boards' bandwidth and latency figures as before.
#[test]
fn linked_pairs_use_the_link_figures() {
    let net = Net::new(
        "t",
        vec![128, 64, 16],
        vec![16, 8],
        16,
        Activation::Sigmoid,
        false,
    );
    let ice = Board::built_in("icebreaker").unwrap();
    let ulx = Board::from_toml_str(
        include_str!("../../boards/ulx3s-85f.toml"),
        "boards/ulx3s-85f.toml",
    )
    .unwrap();
    let nexys = Board::built_in("nexys4-ddr").unwrap();
    // 66 words x 4 clocks at 30 MHz: 8.8 us; 5 clocks: 0.1667 us.
    let l = LinkCost::new(&net, 0, &ice, &ice);
    assert_eq!((l.transfer, l.latency), (8_800_000, 166_667));
    // 66 x 4 clocks (the iCEBreaker's 4 pins) at 28.125 MHz.
    let l = LinkCost::new(&net, 0, &ice, &ulx);
    assert_eq!((l.transfer, l.latency), (9_386_667, 177_778));
    // 66 x 2 clocks at 28.125 MHz.
    let l = LinkCost::new(&net, 0, &ulx, &ulx);
    assert_eq!(l.transfer, 4_693_334);
    // No link on the Nexys: 2 x 64 x 16 bits at the iCEBreaker's 120 Mbit/s, and the
    // Nexys' 1 us.
    let l = LinkCost::new(&net, 0, &ice, &nexys);
    assert_eq!((l.transfer, l.latency), (17_066_667, 1_000_000));
}

/// A part with room for the network but not for the board top around it (the UART
/// bridge with its checked frames) is not a fit.
#[test]
fn the_board_top_takes_logic_of_its_own() {
    let net = Net::from_spec(&bundled("digits"));
    let mut b = Board::built_in("icebreaker").unwrap();
    assert!(
        b.fit.logic_serial_link > 0,
        "the iCE40 board top is counted"
    );
    let z = [2, 1];
    let top = b.fit.logic_serial_link;
    b.fit.logic_serial_link = 0;
    let bare = single_board_usage(&net, &b, &z).logic;
    // a part whose cells hold the network and its controller exactly
    b.logic = bare;
    assert!(single_board_usage(&net, &b, &z).fits());
    b.fit.logic_serial_link = top;
    let u = single_board_usage(&net, &b, &z);
    assert_eq!(u.logic, bare + top);
    assert!(!u.fits());
}

/// Within the model's error of the part a design is near the limit: planned while the
/// prediction is within the part, called fitting only below `(1 − e)` of it, and not
/// fitting only beyond `(1 + e)`.
#[test]
fn near_the_limit_is_neither_a_fit_nor_a_miss() {
    let net = Net::from_spec(&bundled("digits"));
    let mut b = Board::built_in("icebreaker").unwrap();
    b.fit.logic_error = 0.1;
    let z = [2, 1];
    let logic = single_board_usage(&net, &b, &z).logic;
    let at = |share: f64, b: &mut Board| {
        b.logic = (logic as f64 / share).round() as u64;
        let u = single_board_usage(&net, b, &z);
        (u.verdict(), u.fits(), u.near_limit())
    };
    assert_eq!(at(0.85, &mut b), (Some(true), true, false));
    assert_eq!(at(0.95, &mut b), (None, true, true));
    assert_eq!(at(1.05, &mut b), (None, false, false));
    assert_eq!(at(1.15, &mut b), (Some(false), false, false));
}

#[test]
fn link_delay_rounds_up() {
    let l = LinkCost {
        transfer: 300,
        latency: 700,
    };
    assert_eq!(l.delay(1000), 1);
    assert_eq!(l.delay(999), 2);
    assert_eq!(l.delay(500), 2);
    assert_eq!(l.delay(499), 3);
}

/// A linked stage's multipliers (hdl/src/link): the σ′ × sum of the boundary layer's deltas
/// is made once per neuron group of the stage's last junction on its own board, and the next
/// stage's first junction loses its lanes' σ′ multipliers. digits (fan-in 16 and 16): four
/// lanes make one group, 32 lanes two.
#[test]
fn a_link_moves_the_boundary_layers_sigma_prime_multipliers() {
    let mut net = Net::from_spec(&bundled("digits"));
    let linked = Board::built_in("icebreaker").unwrap();
    assert!(linked.link.is_some());
    // one board alone: no links
    assert_eq!(link_multipliers(&net, &linked, None, Some((0, 4))), (0, 0));
    net.chained = true;
    assert_eq!(link_multipliers(&net, &linked, None, Some((0, 4))), (1, 0));
    assert_eq!(link_multipliers(&net, &linked, None, Some((0, 32))), (2, 0));
    assert_eq!(link_multipliers(&net, &linked, Some((1, 1)), None), (0, 1));
    assert_eq!(
        link_multipliers(&net, &linked, Some((1, 2)), Some((1, 2))),
        (1, 2)
    );
    // an input layer has no σ′: a stage starting at junction 1 keeps its lanes
    assert_eq!(link_multipliers(&net, &linked, Some((0, 4)), None), (0, 0));
    let mut hostlinked = linked.clone();
    hostlinked.link = None;
    assert_eq!(
        link_multipliers(&net, &hostlinked, Some((1, 1)), Some((1, 1))),
        (0, 0)
    );
}

/// Under dither a lane may read any neuron of the left layer, so the Verilog's copy memory
/// gives each of its 2z read ports (FF and UP per lane) every copy of the whole layer:
/// mnist-large's first junction at z = 16 and staleness 15 declares 32 replicas of
/// 18 × 1024 rows, 18 DP16KD (1024 × 18) each. Without dither a replica keeps its own bank,
/// 18 × 64 rows, 2 blocks.
#[test]
fn dither_replicates_the_whole_layer_per_read_port() {
    let spec = bundled("mnist-large");
    let b = Board::built_in("ulx3s-85f").unwrap();
    let mut net = Net::from_spec(&spec);
    assert!(net.dither);
    let weights = 16 * (131072 / 16u64).div_ceil(1024);
    assert_eq!(
        junction_need(&net, &b, 0, 16, 15).ram_blocks,
        weights + 32 * 18
    );
    assert_eq!(activation_bits(&net, &b, 0, 16, 15), 32 * 18 * 1024 * 16);
    // an OpenCL device keeps one copy of the layer per sample held
    let device = Board::built_in("opencl-device").unwrap();
    assert_eq!(activation_bits(&net, &device, 0, 16, 15), 18 * 1024 * 16);
    net.dither = false;
    assert_eq!(
        junction_need(&net, &b, 0, 16, 15).ram_blocks,
        weights + 32 * 2
    );
    assert_eq!(activation_bits(&net, &b, 0, 16, 15), 32 * 18 * 64 * 16);
}
