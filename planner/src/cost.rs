//! The cost model: what one junction needs on a board as a function of its lanes `z` and its
//! staleness `s`, and what a link costs per sample (docs/design.md, "Multi-board pipelines").
//!
//! Times are whole picoseconds, rounded up, so the planner, the exhaustive checker and the
//! baselines compare exactly the same integers.
//!
//! # Model (junction `i`, 1-based, left layer `N_{i-1}`, right layer `N_i`, width `w`)
//!
//! * **Clocks**: `C_i = |W_i| / z_i`; a board's block cycle is `max C_i` plus the overhead
//!   clocks at its `clock_mhz` ([`edgeflow_core::spec::BLOCK_CYCLE_OVERHEAD`], one more with
//!   registered reads, two more with the deep pipeline), plus
//!   [`edgeflow_core::spec::LINKED_STAGE_CLOCKS`] on a board with its own link in a plan of
//!   several boards (its sequencer between block cycles); such a board holding junction 1
//!   takes at least `N_0` clocks a sample (its inputs come one word a clock).
//! * **Multipliers**: FF `z`, UP `z`, and BP `2z` when the left layer is hidden (`i ≥ 2`), as
//!   `edgeflow spec check` counts them; none for junction 1's FF and UP when one-bit inputs
//!   make their lanes selects (`Spec::input_selects`). Across a board's own link the boundary
//!   layer's σ′ multiplies move to the board before it, one per neuron group
//!   ([`link_multipliers`]).
//!   DSPs are used first; the rest are built from logic at `⌈lut_per_multiplier · w² / 256⌉`
//!   cells each.
//! * **Logic**: the board's `fit.logic_per_junction` (address generators, sweep counters,
//!   activation ROM) plus `fit.logic_per_lane_bit · w` per lane (the FF, BP and UP adders and
//!   saturation), plus once per board `fit.logic_per_board` (control, host link),
//!   `fit.logic_serial_link` (the board top's UART bridge) and [`LOGIC_PER_LINK`] per link
//!   endpoint ([`crate::catalog::Fit`]). Logic is counted as the family's part counts it:
//!   packed logic cells on the iCE40, LUTs elsewhere. Within the model's error `e` on its
//!   calibration runs (`fit.logic_error`) of the part a design is near the limit
//!   ([`LogicVerdict`]): `edgeflow cost` says so and `edgeflow synth --board` decides.
//! * **Memory bits**: weights `|W|·w`; biases `N_i·w`; left activations `(s_i + 2)·N_{i-1}`
//!   words (one copy being written, `s_i + 1` samples in flight from FF_i to UP_i, one more
//!   for the input layer) in a replica per read port, FF and UP of every lane: a bank of
//!   `N_{i-1}/z_i` neurons at `w` bits each, or under dither the whole layer at 16 bits
//!   ([`activation_bits`]; one replica on a board without the Verilog); σ′ of the right
//!   layer when hidden `(s_i + 1)·N_i·w` (kept where it is produced, until BP_i's deltas are
//!   final); right deltas double-buffered `2·N_i·w`; BP partial sums of the left layer when
//!   hidden, double-buffered at accumulator width `2·N_{i-1}·(w + ⌈log2 fo⌉ + 1)`; the sigmoid
//!   table `2^min(w,10) · 2w` when the right layer is sigmoid; the connection pattern's row
//!   table `|W|·⌈log2 N_{i-1}⌉` for type 1 patterns (types 2 and 3 hold only start vectors).
//! * **Memory blocks** (independently addressed RAMs): on a board with `ram_bank_min_rows`
//!   (the ECP5's, from its routed designs) every lane's bank of that many rows or more is a
//!   block of its own ([`bank_blocks`]). Elsewhere: weights `⌈z·w / block width⌉` (one wide
//!   memory), biases, right deltas and the table one each; the `z` banks of activations, σ′
//!   and partial sums are counted as distributed RAM, their bits still against `ram_bits`.
//!   A board needs bits ≤ `ram_bits` and blocks ≤ `ram_blocks`.
//! * **Staleness** on a chain: `s_i = 2(L - i) + 1 + 2·D_i` with `D_i` the sum of the link
//!   delays after junction `i` (sim::Schedule::with_links).
//! * **Link** between junction `i` and `i+1` on boards `a → b`: per sample the `N_i`
//!   activations forward and `N_i` partial sums backward, `T = ⌈2·N_i·w / bandwidth⌉` with
//!   bandwidth the smaller of the two boards' and latency the larger. At a period `P`
//!   (the pipeline's block cycle, set by the slowest board or link) the link delays the
//!   schedule by `d = ⌈(latency + T) / P⌉` whole block cycles each way: a value produced in block
//!   cycle `t` is usable in block cycle `t + 1 + d`.
//!
//! Every resource grows with `z` and with `s`, so the smallest `z` that meets a block-cycle
//! target is best in every resource at once: the property the planner's exactness rests on.
//!
//! Calibration: the logic and flip-flop constants (each board file's `[fit]`) and
//! `lut_per_multiplier` are least-squares fits to `edgeflow synth` reports
//! ([`crate::calibrate`]; `docs/calibration/reproduce.sh` synthesizes the cases, `edgeflow
//! cost --fit docs/calibration/runs --board B` refits, docs/results.md, "Calibration of the
//! cost model", gives the closeness). Memory blocks are not fitted: yosys puts small banks in
//! logic and large ones in block RAM, which a linear term does not follow; the model's block
//! count is the one to distrust.

use crate::catalog::Board;
use edgeflow_core::spec::{PatternKind, BLOCK_CYCLE_OVERHEAD, LINKED_STAGE_CLOCKS};
use edgeflow_core::{Activation, Spec};
use serde::{Deserialize, Serialize};

// The logic and flip-flop constants are per logic family, in the board files' `[fit]` tables
// ([`crate::catalog::Fit`]), fitted by `edgeflow cost --fit` to the synthesis runs of
// docs/calibration (docs/results.md, "Calibration of the cost model").

/// Not calibrated (no synthesized multi-board design yet).
pub const LOGIC_PER_LINK: u64 = 120;

/// Picoseconds.
pub type Ps = u64;

pub(crate) fn ceil_log2(x: u64) -> u64 {
    if x <= 1 {
        0
    } else {
        64 - (x - 1).leading_zeros() as u64
    }
}

/// The network as the planner sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Net {
    pub name: String,
    pub layers: Vec<u64>,
    pub fan_out: Vec<u64>,
    pub width: u64,
    pub activation: Activation,
    pub type1: bool,
    /// The pattern's dither: a lane may read any bank of the left layer.
    pub dither: bool,
    /// Valid `z` of every junction, ascending (the rules of docs/spec.md, as `Spec::validate`).
    pub z_options: Vec<Vec<u64>>,
    /// Clocks a block cycle spends beyond the longest pass (`Spec::block_cycle_overhead`),
    /// on a board that adds nothing (see [`Net::overhead_on`]).
    pub overhead: u64,
    /// The spec's own `registered_reads` and `deep_pipeline`.
    pub registered_reads: bool,
    pub deep_pipeline: bool,
    /// The spec's `dsp_multipliers`: at most this many multipliers in DSP cells.
    pub dsp_multipliers: Option<u64>,
    /// Junction 1's FF and UP lanes are selects, not multipliers (`Spec::input_selects`).
    pub input_selects: bool,
    /// Planned over several boards: a board with its own link then runs a sequencer between
    /// block cycles ([`LINKED_STAGE_CLOCKS`]).
    pub chained: bool,
}

impl Net {
    pub fn from_spec(spec: &Spec) -> Net {
        let mut n = Net::new(
            &spec.name,
            spec.layers.iter().map(|&x| x as u64).collect(),
            spec.fan_out.iter().map(|&x| x as u64).collect(),
            spec.fixed.width as u64,
            spec.activation,
            spec.pattern.kind == PatternKind::Type1,
        );
        n.dither = spec.pattern.dither;
        n.overhead = spec.block_cycle_overhead() as u64;
        n.registered_reads = spec.registered_reads;
        n.deep_pipeline = spec.deep_pipeline;
        n.dsp_multipliers = spec.dsp_multipliers.map(|d| d as u64);
        n.input_selects = spec.input_selects();
        n
    }

    /// The overhead on `board`: a board that builds with registered reads or the deep
    /// pipeline the spec does not ask for adds their clocks (as `Spec::block_cycle_overhead`),
    /// and a board with its own link in a chain its sequencer's.
    pub fn overhead_on(&self, board: &Board) -> u64 {
        self.overhead
            + (board.registered_reads && !self.registered_reads) as u64
            + 2 * (board.deep_pipeline && !self.deep_pipeline) as u64
            + (self.chained && board.link.is_some()) as u64 * LINKED_STAGE_CLOCKS as u64
    }

    /// A network from its sizes; `fan_out` must give whole fan-ins that divide the left layer.
    pub fn new(
        name: &str,
        layers: Vec<u64>,
        fan_out: Vec<u64>,
        width: u64,
        activation: Activation,
        type1: bool,
    ) -> Net {
        let z_options = (0..fan_out.len())
            .map(|j| {
                let left = layers[j];
                let fi = left * fan_out[j] / layers[j + 1];
                (1..=left)
                    .filter(|&d| left % d == 0 && (fi % d == 0 || d % fi == 0))
                    .filter(|&d| {
                        edgeflow_core::spec::pass_fits_counters(
                            (left * fan_out[j]) as usize,
                            d as usize,
                        )
                    })
                    .collect()
            })
            .collect();
        Net {
            name: name.to_string(),
            layers,
            fan_out,
            width,
            activation,
            type1,
            dither: false,
            z_options,
            overhead: BLOCK_CYCLE_OVERHEAD as u64,
            registered_reads: false,
            deep_pipeline: false,
            dsp_multipliers: None,
            input_selects: false,
            chained: false,
        }
    }

    pub fn junctions(&self) -> usize {
        self.layers.len() - 1
    }

    /// `|W_j|`, 0-based junction.
    pub fn edges(&self, j: usize) -> u64 {
        self.layers[j] * self.fan_out[j]
    }

    pub fn total_edges(&self) -> u64 {
        (0..self.junctions()).map(|j| self.edges(j)).sum()
    }

    /// Multiplies per sample: FF and UP on every edge, BP twice on hidden-left junctions.
    pub fn multiplies_per_sample(&self) -> u64 {
        (0..self.junctions())
            .map(|j| self.edges(j) * mult_factor(j))
            .sum()
    }

    /// Single-board staleness of junction `j` plus twice the downstream link delay.
    pub fn staleness(&self, j: usize, downstream_delay: u64) -> u64 {
        2 * (self.junctions() - 1 - j) as u64 + 1 + 2 * downstream_delay
    }
}

fn mult_factor(j: usize) -> u64 {
    if j > 0 {
        4
    } else {
        2
    }
}

/// What a set of junctions needs on one board (beyond the board's fixed logic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Need {
    pub multipliers: u64,
    pub logic: u64,
    pub ram_bits: u64,
    pub ram_blocks: u64,
}

impl std::ops::AddAssign for Need {
    fn add_assign(&mut self, o: Need) {
        self.multipliers += o.multipliers;
        self.logic += o.logic;
        self.ram_bits += o.ram_bits;
        self.ram_blocks += o.ram_blocks;
    }
}

/// Memory bits of junction `j` beyond its left activations ([`activation_bits`]) that do not
/// depend on staleness, and those per unit of staleness (so that bits = fixed + s · per_s).
pub fn junction_bits(net: &Net, j: usize) -> (u64, u64) {
    let w = net.width;
    let l = net.junctions();
    let (left, right) = (net.layers[j], net.layers[j + 1]);
    let edges = net.edges(j);
    let hidden_right = j + 1 < l;
    let hidden_left = j > 0;
    let mut fixed = edges * w + right * w + 2 * right * w;
    let mut per_s = 0;
    if hidden_right {
        per_s += right * w;
        fixed += right * w;
    }
    if hidden_left {
        let acc = w + ceil_log2(net.fan_out[j]) + 1;
        fixed += 2 * left * acc;
    }
    if !hidden_right || net.activation.is_table() {
        fixed += (1u64 << w.min(10)) * 2 * w;
    }
    if net.type1 {
        fixed += edges * ceil_log2(left);
    }
    (fixed, per_s)
}

/// Bits of junction `j`'s left activations with `z` lanes and staleness `s`: on a board that
/// builds the Verilog as it keeps them, a replica per read port
/// ([`crate::memories::activation_memories`]; one lane keeps 16-bit words where more lanes
/// keep banks at the format's width, so the count is the most of any `z' ≤ z`,
/// [`most_up_to`]); elsewhere one copy of the layer per sample held.
pub fn activation_bits(net: &Net, board: &Board, j: usize, z: u64, s: u64) -> u64 {
    if !board.builds_verilog() {
        return (s + 2 + (j == 0) as u64) * net.layers[j] * net.width;
    }
    most_up_to(net, j, z, |z| {
        crate::memories::activation_memories(net, (j, z, s), 1)
            .iter()
            .map(|m| m.rows * m.width)
            .sum()
    })
}

/// Everything junction `j` needs with `z` lanes and staleness `s` on `board`, except that
/// multipliers are counted as multipliers (the board decides DSP or logic).
pub fn junction_need(net: &Net, board: &Board, j: usize, z: u64, s: u64) -> Need {
    let w = net.width;
    let (fixed, per_s) = junction_bits(net, j);
    let blocks = match (&board.ram_block_shapes, board.ram_bank_min_rows) {
        // counted per stage, with the board top's memories (crate::memories::stage_blocks)
        (Some(_), _) => 0,
        (None, Some(min_rows)) => bank_blocks(net, board, j, z, s, min_rows),
        (None, None) => z.saturating_mul(w).div_ceil(board.ram_block_width) + 3,
    };
    Need {
        // junction 1's FF and UP lanes both multiply by the inputs
        multipliers: z * (mult_factor(j) - 2 * (j == 0 && net.input_selects) as u64),
        logic: board.fit.logic_per_junction + board.fit.logic_per_lane_bit * w * z,
        ram_bits: fixed + s * per_s + activation_bits(net, board, j, z, s),
        ram_blocks: blocks,
    }
}

/// Neurons of junction `j`'s right layer finished per clock with `z` lanes: `z / fan-in`
/// when `z` covers whole fan-ins, else one (hdl `JunctionParams::groups`).
pub fn groups(net: &Net, j: usize, z: u64) -> u64 {
    let fan_in = net.edges(j) / net.layers[j + 1];
    if z >= fan_in {
        z / fan_in
    } else {
        1
    }
}

/// The multipliers a stage on a board with its own link (hdl/src/link) has beyond or short of
/// its junctions' [`junction_need`]: across a link the boundary layer's deltas are made on the
/// board that holds the layer's σ′, from the sums the next board sends back (σ′ × sum, one
/// multiplier per neuron group of the stage's last junction, `right = (j, z)`), so the next
/// stage's first junction (`left = (j, z)`, `j > 0`) has no σ′ multiplier in its lanes.
/// Nothing on a board without a link or in a plan of one board.
pub fn link_multipliers(
    net: &Net,
    board: &Board,
    left: Option<(usize, u64)>,
    right: Option<(usize, u64)>,
) -> (u64, u64) {
    if !(net.chained && board.link.is_some()) {
        return (0, 0);
    }
    let added = right.map_or(0, |(j, z)| groups(net, j, z));
    let saved = left.map_or(0, |(j, z)| if j > 0 { z } else { 0 });
    (added, saved)
}

impl Need {
    /// With [`link_multipliers`]' change.
    pub fn with_link_multipliers(mut self, (added, saved): (u64, u64)) -> Need {
        self.multipliers = self.multipliers + added - saved;
        self
    }
}

/// Block RAMs of junction `j` on a board whose synthesis gives every lane's bank of at least
/// `min_rows` rows a block RAM of its own (`Board::ram_bank_min_rows`) and keeps smaller
/// banks in LUT RAM: per lane its weights (`C_j` rows), the activations' replicas
/// ([`crate::memories::activation_memories`]: `s + 2` copies, one more for the input layer,
/// a replica for FF and one for UP per lane, each of one bank or, with dither, of the whole
/// layer), and where the left layer is hidden its σ′ (`s + 3` copies) and the two buffers of
/// delta sums (at accumulator width, half the depth). More lanes make smaller banks, which
/// can drop into LUT RAM, so the count is the most any `z' ≤ z` of the junction's options
/// gives: resources grow with `z`, as the planner needs.
fn bank_blocks(net: &Net, board: &Board, j: usize, z: u64, s: u64, min_rows: u64) -> u64 {
    let depth = (board.ram_bits / board.ram_blocks.max(1) / board.ram_block_width.max(1)).max(1);
    let (left, edges) = (net.layers[j], net.edges(j));
    let banks = |rows: u64, depth: u64| {
        if rows >= min_rows {
            rows.div_ceil(depth)
        } else {
            0
        }
    };
    let at = |z: u64| {
        let per_copy = left / z;
        let mut b = z * banks(edges / z, depth)
            + crate::memories::activation_memories(net, (j, z, s), 1)
                .iter()
                .map(|m| banks(m.rows, depth))
                .sum::<u64>();
        if j > 0 {
            b += z * banks((s + 3) * per_copy, depth) + 2 * z * banks(per_copy, depth / 2);
        }
        b
    };
    most_up_to(net, j, z, at)
}

/// The most `f` gives over junction `j`'s valid `z' ≤ z` (and `z` itself): a count that
/// smaller banks can make drop (into LUT RAM or logic) made to grow with `z`, as the
/// planner's exactness needs.
pub fn most_up_to(net: &Net, j: usize, z: u64, f: impl Fn(u64) -> u64) -> u64 {
    net.z_options[j]
        .iter()
        .copied()
        .filter(|&o| o <= z)
        .chain(std::iter::once(z))
        .map(f)
        .max()
        .unwrap_or(0)
}

/// The usage of one board holding the whole network with lanes `z` (no links): what
/// `edgeflow cost` compares with `edgeflow synth`.
pub fn single_board_usage(net: &Net, board: &Board, z: &[u64]) -> Usage {
    let mut need = Need::default();
    let mut stage = Vec::new();
    for (j, &zj) in z.iter().enumerate() {
        let s = net.staleness(j, 0);
        need += junction_need(net, board, j, zj, s);
        stage.push((j, zj, s));
    }
    if let Some(b) = crate::memories::stage_blocks(net, board, &stage, false, false) {
        need.ram_blocks = b;
    }
    Usage::new(net, board, &need, 0)
}

/// Flip-flops of the whole network on one board with lanes `z`: reported next to synthesis,
/// not a planning constraint (every supported part has at least as many flip-flops as logic
/// cells).
pub fn flip_flops(net: &Net, board: &Board, z: &[u64]) -> u64 {
    let f = &board.fit;
    let lut_mults = single_board_usage(net, board, z).lut_multipliers;
    f.ff_per_board
        + z.iter()
            .map(|&zj| f.ff_per_lane_bit * net.width * zj)
            .sum::<u64>()
        + f.ff_per_lut_multiplier * lut_mults
}

/// Logic cells of one multiplier built from logic, for `width`-bit values: the RTL multiplies
/// operands of the spec's width, and an array multiplier grows with the product of the two.
pub fn lut_multiplier_cost(board: &Board, width: u64) -> u64 {
    (board.lut_per_multiplier * width * width).div_ceil(256)
}

/// Clocks of junction `j` with `z` lanes.
pub fn clocks(net: &Net, j: usize, z: u64) -> u64 {
    net.edges(j) / z
}

/// Time of `clocks` clock cycles on `board`.
pub fn clock_time(board: &Board, clocks: u64) -> Ps {
    (clocks as f64 * 1e6 / board.clock_mhz).ceil() as Ps
}

/// Block-cycle time of junction `j` alone with `z` lanes on `board`. The first board of a
/// linked chain takes a sample's inputs from the host feed one word a clock (it has no input
/// lanes), so there junction 1 takes at least `N_0` clocks a sample.
pub fn junction_time(net: &Net, board: &Board, j: usize, z: u64) -> Ps {
    let mut c = clocks(net, j, z) + net.overhead_on(board);
    if j == 0 && net.chained && board.link.is_some() {
        c = c.max(net.layers[0]);
    }
    clock_time(board, c)
}

/// A link between junction `j` and `j + 1`, from board `a` to board `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkCost {
    /// Transfer time per sample (activations forward plus partial sums backward).
    pub transfer: Ps,
    pub latency: Ps,
}

impl LinkCost {
    pub fn new(net: &Net, j: usize, a: &Board, b: &Board) -> LinkCost {
        if let (Some(la), Some(lb)) = (&a.link, &b.link) {
            // Both boards have the link: a transfer each way at the same time, each clocked
            // by its sender, at the narrower board's width (the slower figures).
            let words = (net.layers[j + 1] + LINK_FRAME_WORDS) as f64;
            let per_word = la.clocks_per_word.max(lb.clocks_per_word);
            let latency = la.latency_clocks.max(lb.latency_clocks) as f64;
            let slowest = a.clock_mhz.min(b.clock_mhz);
            return LinkCost {
                transfer: (words * per_word * 1e6 / slowest).ceil() as Ps,
                latency: (latency * 1e6 / slowest).ceil() as Ps,
            };
        }
        let bits = 2 * net.layers[j + 1] * net.width;
        let mbps = a.link_mbps.min(b.link_mbps);
        let lat = a.link_latency_us.max(b.link_latency_us);
        LinkCost {
            transfer: (bits as f64 * 1e6 / mbps).ceil() as Ps,
            latency: (lat * 1e6).ceil() as Ps,
        }
    }

    /// Latency plus transfer: what the delay covers.
    pub fn span(&self) -> Ps {
        self.latency + self.transfer
    }

    /// Whole block cycles of delay at period `p`.
    pub fn delay(&self, p: Ps) -> u64 {
        self.span().div_ceil(p.max(1))
    }
}

/// Words a board-to-board link transfer carries beyond the vector: its header and CRC
/// (hdl/src/link).
pub const LINK_FRAME_WORDS: u64 = 2;

/// A link that is not the boards' own: how stages talk when each runs in its own process
/// under mpirun (docs/hardware.md, "Across hosts with MPI"). `edgeflow plan --link NAME`
/// gives every board of the chain this bandwidth and latency.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkFigure {
    pub name: &'static str,
    pub description: &'static str,
    /// Mbit/s, as a board file's `link_mbps`.
    pub mbps: f64,
    /// One-way µs, as a board file's `link_latency_us`.
    pub latency_us: f64,
}

/// The named links. `mpi-loopback` is the runtime's MPI message path between two ranks on one
/// machine as docs/bench/mpi-overhead.sh times it (docs/bench/mpi-link-tcp.json), rounded to
/// the slow side of the repeats: the link alone. What the ranks' own scheduling adds on a
/// busy host is the host's cost, as a stage's compute is (docs/hardware.md, "Across hosts
/// with MPI").
pub const LINK_FIGURES: &[LinkFigure] = &[LinkFigure {
    name: "mpi-loopback",
    description: "MPI between ranks on one machine (Open MPI over TCP on lo)",
    mbps: MPI_LOOPBACK_MBPS,
    latency_us: MPI_LOOPBACK_LATENCY_US,
}];

const MPI_LOOPBACK_MBPS: f64 = 10000.0;
const MPI_LOOPBACK_LATENCY_US: f64 = 15.0;

impl LinkFigure {
    pub fn resolve(name: &str) -> Result<LinkFigure, crate::error::UnknownLink> {
        LINK_FIGURES
            .iter()
            .find(|l| l.name == name)
            .copied()
            .ok_or_else(|| crate::error::UnknownLink {
                name: name.to_string(),
                known: LINK_FIGURES
                    .iter()
                    .map(|l| l.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// `board` with this link in place of its own.
    pub fn apply(&self, board: &mut Board) {
        board.link_mbps = self.mbps;
        board.link_latency_us = self.latency_us;
        board.link = None;
    }
}

/// How much of each resource a board uses: need against capacity, DSPs first.
/// How the model's logic compares with the part, given the model's error `e` on its family's
/// calibration runs (`[fit] logic_error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogicVerdict {
    /// At most `(1 − e)` of the part: fits even if the model is `e` low.
    Fits,
    /// Within the model's error of the part: only synthesis can tell.
    NearLimit,
    /// Over `(1 + e)` of the part: does not fit even if the model is `e` high.
    DoesNotFit,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub dsp: u64,
    pub dsp_available: u64,
    pub lut_multipliers: u64,
    /// The part's logic as the family counts it: packed logic cells on the iCE40 (a LUT4, a
    /// flip-flop and a carry share one when they can), LUTs elsewhere.
    pub logic: u64,
    pub logic_available: u64,
    /// The model's relative error in logic ([`crate::catalog::Fit::logic_error`]).
    #[serde(default)]
    pub logic_error: f64,
    pub ram_bits: u64,
    pub ram_bits_available: u64,
    pub ram_blocks: u64,
    pub ram_blocks_available: u64,
}

impl Usage {
    /// `links` is the number of link endpoints on the board (0, 1 or 2).
    pub fn new(net: &Net, board: &Board, need: &Need, links: u64) -> Usage {
        let budget = net.dsp_multipliers.unwrap_or(u64::MAX);
        let dsp = need.multipliers.min(board.dsp).min(budget);
        let lut_mults = need.multipliers - dsp;
        Usage {
            dsp,
            dsp_available: board.dsp,
            lut_multipliers: lut_mults,
            logic: need.logic
                + board.fit.logic_per_board
                + board.fit.logic_serial_link
                + LOGIC_PER_LINK * links
                + lut_mults * lut_multiplier_cost(board, net.width),
            logic_available: board.logic,
            logic_error: board.fit.logic_error,
            ram_bits: need.ram_bits,
            ram_bits_available: board.ram_bits,
            ram_blocks: need.ram_blocks,
            ram_blocks_available: board.ram_blocks,
        }
    }

    /// The logic a design may be predicted to need and still be planned on the board: the
    /// whole part. Between `(1 − e)` of it and all of it the plan says the stage is near the
    /// limit ([`LogicVerdict::NearLimit`]); beyond, the planner does not use the board.
    pub fn logic_usable(&self) -> u64 {
        self.logic_available
    }

    /// The most logic that may still fit if the model is `e` high: `(1 + e)` of the part.
    pub fn logic_may_fit(&self) -> u64 {
        (self.logic_available as f64 * (1.0 + self.logic_error)).floor() as u64
    }

    pub fn logic_verdict(&self) -> LogicVerdict {
        if self.logic as f64 <= self.logic_available as f64 * (1.0 - self.logic_error) {
            LogicVerdict::Fits
        } else if self.logic <= self.logic_may_fit() {
            LogicVerdict::NearLimit
        } else {
            LogicVerdict::DoesNotFit
        }
    }

    fn memory_fits(&self) -> bool {
        self.ram_bits <= self.ram_bits_available && self.ram_blocks <= self.ram_blocks_available
    }

    /// Whether the planner may use this board for it: memories within the part and the
    /// model's logic at most the part's.
    pub fn fits(&self) -> bool {
        self.logic <= self.logic_usable() && self.memory_fits()
    }

    /// Fits, and the logic within the model's error of the part: synthesis decides.
    pub fn near_limit(&self) -> bool {
        self.fits() && self.logic_verdict() == LogicVerdict::NearLimit
    }

    /// The verdict `edgeflow cost` gives: `Some(true)` fits whatever the model's error,
    /// `Some(false)` does not fit, `None` near the limit (synthesis decides).
    pub fn verdict(&self) -> Option<bool> {
        if !self.memory_fits() {
            return Some(false);
        }
        match self.logic_verdict() {
            LogicVerdict::Fits => Some(true),
            LogicVerdict::NearLimit => None,
            LogicVerdict::DoesNotFit => Some(false),
        }
    }

    /// Resources over capacity: (name, needed, available), smallest shortfall first.
    pub fn shortfalls(&self) -> Vec<(&'static str, u64, u64)> {
        let mut v: Vec<(&'static str, u64, u64)> = [
            (
                "logic cells (including LUT multipliers)",
                self.logic,
                self.logic_usable(),
            ),
            ("block RAM bits", self.ram_bits, self.ram_bits_available),
            ("block RAMs", self.ram_blocks, self.ram_blocks_available),
        ]
        .into_iter()
        .filter(|(_, n, a)| n > a)
        .collect();
        v.sort_by(|a, b| {
            ((a.1 - a.2) as f64 / a.2.max(1) as f64)
                .total_cmp(&((b.1 - b.2) as f64 / b.2.max(1) as f64))
        });
        v
    }

    /// Largest utilisation fraction over logic, bits and blocks (DSPs fill first and are free
    /// to be full).
    pub fn max_fraction(&self) -> f64 {
        [
            self.logic as f64 / self.logic_available as f64,
            self.ram_bits as f64 / self.ram_bits_available as f64,
            self.ram_blocks as f64 / self.ram_blocks_available as f64,
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
