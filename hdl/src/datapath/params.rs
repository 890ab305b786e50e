//! Everything a block needs to know about its junction, derived once from the spec at run time.

use edgeflow_core::fixed::{ActivationTable, FfProducts, Format};
use edgeflow_core::rounding::Rounding;
use edgeflow_core::{JunctionPattern, Spec};

/// Parameters of junction `j` (0-based) of a network.
#[derive(Clone, Debug)]
pub struct JunctionParams {
    pub j: usize,
    pub junctions: usize,
    pub left: usize,
    pub right: usize,
    pub fan_in: usize,
    pub z: usize,
    /// `C_j`: clocks of one pass over the edges.
    pub clocks: usize,
    /// Right neurons finished per clock (`z / fi` when `z ≥ fi`, else 1).
    pub groups: usize,
    /// Lanes per right neuron in one clock (`min(z, fi)`).
    pub lanes_per_group: usize,
    /// Clocks per right neuron (`fi / z` when `z < fi`, else 1).
    pub clocks_per_neuron: usize,
    /// Rows of each left bank (`N_left / z`), the in-sweep clock count.
    pub rows_per_bank: usize,
    /// Rotating copies of the left activations (`2L - 2j + 1`, j 0-based; the input layer
    /// has one more so the host can stream a sample one block cycle ahead).
    pub act_copies: usize,
    /// Copy distance from the sample FF reads to the one UP reads.
    pub up_offset: usize,
    /// Rotating copies of the left σ′ (`2L - 2j + 2`, only for hidden left layers).
    pub sp_copies: usize,
    /// Block cycle of this junction's FF of sample 0 (`j` on one board; a stage of a
    /// multi-board chain uses the chain's schedule, links included).
    pub ff_offset: usize,
    pub format: Format,
    /// FF's products rounded, or saturated too (`Spec::ff_products`).
    pub ff_products: FfProducts,
    pub shift: u32,
    /// Rounding of the updates (`Spec::rounding`).
    pub rounding: Rounding,
    /// The spec's seed, which seeds the lanes' stochastic-rounding streams.
    pub seed: u64,
    /// The right layer's activation and its data (`Spec::activation_table`; the output layer
    /// is sigmoid).
    pub table: ActivationTable,
    /// Where the output delta stops (`fixed::output_delta_ends`; used by the last junction).
    pub output_delta_ends: Option<(i32, i32)>,
    pub pattern: JunctionPattern,
    /// Every memory read registered before the arithmetic (`Spec::registered_reads`): the
    /// datapath runs one clock behind the addresses.
    pub registered_reads: bool,
    /// The deep pipeline (`Spec::deep_pipeline`): every product registered before what
    /// follows it and each finished sum registered before its activation lookup: FF two
    /// clocks longer (`DEEP_FF_CLOCKS`), the weight write-backs one clock later.
    pub deep_pipeline: bool,
    /// FF's and UP's lanes are selects, not multipliers: the first junction of a spec whose
    /// one-bit inputs make them exact (`Spec::input_selects`).
    pub input_selects: bool,
    /// The delta memory of this junction's left layer reads on the clock edge (set by the
    /// network for a one-lane memory read by one group, with registered reads): the reader
    /// takes its sums as they come, in place of its own read register.
    pub registered_sums_left: bool,
    /// The same for the delta memory of the junction to the right, which this one reads.
    pub registered_sums_right: bool,
    /// A last junction whose pass is at least two clocks shorter than the block cycle's
    /// longest (set by the network): its outputs end two clocks or more before the block
    /// cycle does, so the prediction may compare them a clock late and be registered
    /// (ff_output.rs).
    pub pred_slack: bool,
    /// The left layer's activations come over a link (a linked stage's first junction): its
    /// inbox names the copy each goes to on `in_copy`, as the host does for the inputs,
    /// since it may write them a block cycle before the pointer would.
    pub left_copy_in: bool,
}

impl JunctionParams {
    pub fn new(spec: &Spec, j: usize) -> JunctionParams {
        let l = spec.junctions();
        let ff: Vec<usize> = (0..l).collect();
        let bp: Vec<usize> = (0..l).map(|j| 2 * l - 1 - j).collect();
        Self::with_schedule(spec, j, &ff, &bp)
    }

    /// Junction `j` of a network run on the schedule `ff`, `bp` (block cycle offsets of every
    /// junction's FF and BP/UP, as `sim::Schedule`): the copies of the left layer cover the
    /// junction's staleness `bp[j] - ff[j]`, and the copy pointers start at `ff[j]`.
    pub fn with_schedule(spec: &Spec, j: usize, ff: &[usize], bp: &[usize]) -> JunctionParams {
        let pattern = JunctionPattern::generate(spec, j);
        let l = spec.junctions();
        let stale = bp[j] - ff[j];
        let fi = pattern.fan_in;
        let z = pattern.z;
        let format = spec.format();
        JunctionParams {
            j,
            junctions: l,
            left: pattern.left,
            right: pattern.right,
            fan_in: fi,
            z,
            clocks: pattern.clocks(),
            groups: if z >= fi { z / fi } else { 1 },
            lanes_per_group: z.min(fi),
            clocks_per_neuron: if z < fi { fi / z } else { 1 },
            rows_per_bank: pattern.left / z,
            act_copies: stale + 2 + (j == 0) as usize,
            up_offset: 2 + (j == 0) as usize,
            sp_copies: stale + 3,
            ff_offset: ff[j],
            format,
            ff_products: spec.ff_products,
            shift: spec.learning_rate_shift,
            rounding: spec.rounding(),
            seed: spec.seed,
            table: spec.activation_table(j + 1),
            output_delta_ends: spec.output_delta_ends(),
            pattern,
            registered_reads: spec.registered_reads,
            deep_pipeline: spec.deep_pipeline,
            input_selects: j == 0 && spec.input_selects(),
            registered_sums_left: false,
            registered_sums_right: false,
            pred_slack: false,
            left_copy_in: false,
        }
    }

    pub fn stochastic(&self) -> bool {
        self.rounding == Rounding::Stochastic
    }

    pub fn is_first(&self) -> bool {
        self.j == 0
    }

    pub fn is_last(&self) -> bool {
        self.j + 1 == self.junctions
    }

    /// Right-neuron groups of the previous junction, which writes this junction's left layer.
    pub fn bias_rows(&self) -> usize {
        self.right / self.groups
    }

    /// Left neuron reached by lane `l` in sweep `s`, in-sweep clock `r` (the interleaver).
    pub fn left_of(&self, s: usize, l: usize, r: usize) -> usize {
        self.z * self.pattern.row(s, l, r) + self.pattern.bank[s][l]
    }
}

/// Clocks from a junction's last edge of a pass to the last right-layer write it causes
/// (ff_pipe.rs): the block cycle's overhead beyond the longest pass.
pub const FF_LATENCY: usize = edgeflow_core::spec::BLOCK_CYCLE_OVERHEAD;
