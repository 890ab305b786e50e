//! Block RAMs on a part whose only on-chip RAM is block RAM (the iCE40: no LUT RAM, so yosys
//! puts each memory in block RAMs or in flip-flops). The model lists the RAMs and ROMs a
//! board's Verilog declares (hdl/src/memory, hdl/src/datapath/addr_gen.rs, hdl/src/link) and
//! counts each as yosys `memory_libmap` maps it: in the fewest blocks of one of the block's
//! shapes, or in logic when that is cheaper by yosys' costs.
//!
//! Where the Verilog depends on what the planner does not fix (the pattern's banks under
//! dither, the previous junction's lanes), the model takes the layout with the most blocks,
//! so a stage it says fits has at most the blocks it counts.

use crate::catalog::Board;
use crate::cost::{ceil_log2, groups, lut_multiplier_cost, most_up_to, Net};

/// How a memory is read, which sets what yosys adds around a block RAM for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Read into a register of its own, no reset (copy memories, delta sums, FIFOs).
    Plain,
    /// Read with a reset to zero out of range (weight and bias banks): yosys emulates it.
    ReadReset,
    /// Never written: yosys costs its logic at a sixteenth of a RAM's.
    Rom,
}

/// One RAM or ROM as the Verilog declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Memory {
    pub rows: u64,
    pub width: u64,
    pub kind: Kind,
}

impl Memory {
    fn ram(rows: u64, width: u64) -> Memory {
        Memory {
            rows,
            width,
            kind: Kind::Plain,
        }
    }

    fn bank(rows: u64, width: u64) -> Memory {
        Memory {
            rows,
            width,
            kind: Kind::ReadReset,
        }
    }
}

/// yosys' cost of one iCE40 block RAM (`cost 64` in its ice40 brams.txt); a RAM bit in logic
/// costs 1, a ROM bit 1/16 (memory_libmap's defaults).
const BLOCK_COST: u64 = 64;
/// What a block mapping costs beyond its blocks (the emulated read reset, the ROM's address
/// register), in the same units: fitted to yosys' mappings of the calibration designs, where
/// a 128-bit copy memory takes a block, a 160-bit bias bank and a 1,120-bit ROM stay in
/// logic, and a 1,920-bit ROM takes a block.
fn extra(kind: Kind) -> u64 {
    match kind {
        Kind::Plain => 0,
        Kind::ReadReset => 128,
        Kind::Rom => 32,
    }
}

/// Blocks `m` takes on a part with block shapes `shapes` (rows, width), 0 in logic.
pub fn blocks(shapes: &[[u64; 2]], m: &Memory) -> u64 {
    if m.rows == 0 || m.width == 0 {
        return 0;
    }
    let Some(b) = shapes
        .iter()
        .map(|&[rows, width]| m.width.div_ceil(width) * m.rows.div_ceil(rows))
        .min()
    else {
        return 0;
    };
    let bits = m.rows * m.width;
    let logic = if m.kind == Kind::Rom { bits / 16 } else { bits };
    if logic > BLOCK_COST * b + extra(m.kind) {
        b
    } else {
        0
    }
}

fn bit_length(x: u64) -> u64 {
    64 - x.leading_zeros() as u64
}

/// The memories of junction `j` with `z` lanes and staleness `s`, the previous junction
/// finishing `prev` neurons a clock (0 for the first junction). `left_link`: the first
/// junction of a stage whose left layer arrives over a link, whose σ′ stay on the board
/// before (its σ′ memory is unused, and yosys removes it).
pub fn junction_memories(
    net: &Net,
    (j, z, s): (usize, u64, u64),
    prev: u64,
    left_link: bool,
) -> Vec<Memory> {
    let w = net.width;
    let (left, right) = (net.layers[j], net.layers[j + 1]);
    let c = net.edges(j) / z;
    let g = groups(net, j, z);
    let mut m = Vec::new();
    // weights: a bank per lane; biases: a bank per neuron group
    m.extend((0..z).map(|_| Memory::bank(c, 16)));
    m.extend((0..g).map(|_| Memory::bank(right / g, 16)));
    if net.type1 {
        // the address generator's row table, a ROM per lane
        m.extend((0..z).map(|_| Memory {
            rows: c,
            width: ceil_log2(left),
            kind: Kind::Rom,
        }));
    }
    m.extend(activation_memories(net, (j, z, s), prev));
    if j > 0 {
        let prev = prev.max(1);
        // σ′ of the left layer: a bank per write port, replicated per read port
        let rows = (s + 3) * left.div_ceil(prev);
        if !left_link {
            m.extend((0..prev * prev).map(|_| Memory::ram(rows, 16)));
        }
        // delta sums, double-buffered at a sum's exact width (a left neuron's fan-out of
        // contributions): block RAM for one lane read by one group, registers otherwise
        if z == 1 && prev == 1 {
            let width = w + 1 + bit_length(net.fan_out[j]);
            m.extend([Memory::ram(left, width), Memory::ram(left, width)]);
        }
    }
    if j + 1 == net.junctions() {
        // output deltas, double-buffered, a bank per group replicated per group
        m.extend((0..g * g).map(|_| Memory::ram(2 * right.div_ceil(g), 16)));
    }
    m
}

/// The RAMs of junction `j`'s left activations (hdl/src/memory/copy_memory.rs): copies of the
/// left layer, a replica per read port (FF and UP per lane), a bank per write port (`prev`
/// as in [`junction_memories`]); without dither each lane's replicas keep only its own
/// bank, with dither every replica holds every copy of the whole layer.
pub fn activation_memories(net: &Net, (j, z, s): (usize, u64, u64), prev: u64) -> Vec<Memory> {
    let left = net.layers[j];
    let copies = s + 2 + (j == 0) as u64;
    let writes = if j == 0 { 1 } else { prev.max(1) };
    if !net.dither && z > 1 && z % writes == 0 {
        vec![Memory::ram(copies * (left / z), net.width); 2 * z as usize]
    } else {
        let rows = copies * left.div_ceil(writes);
        vec![Memory::ram(rows, 16); (writes * 2 * z) as usize]
    }
}

/// Words of the smallest link FIFO (hdl `LINK_FIFO_BITS`): the model counts every link's
/// FIFOs at that depth, enough for a link of a few block cycles on the small layers an iCE40
/// carries.
const LINK_FIFO_WORDS: u64 = 512;

/// The board top's memories around a stage: the UART bridge's frame buffer, and on a board of
/// a linked chain (with its own link) its predictions FIFO and each link's FIFOs, and where a link leaves on the
/// right the σ′ and delta sums of the boundary layer (`last = (j, z, s)`).
pub fn top_memories(
    net: &Net,
    board: &Board,
    left_link: bool,
    right_link: Option<(usize, u64, u64)>,
) -> Vec<Memory> {
    let mut m = vec![Memory::ram(64, 16)];
    if !(net.chained && board.link.is_some()) {
        return m;
    }
    m.push(Memory::ram(16, 16));
    if left_link {
        m.extend([
            Memory::ram(LINK_FIFO_WORDS, 17),
            Memory::ram(LINK_FIFO_WORDS, 16),
        ]);
    }
    if let Some((j, z, s)) = right_link {
        let g = groups(net, j, z);
        let right = net.layers[j + 1];
        m.push(Memory::ram(LINK_FIFO_WORDS, 17));
        m.extend((0..g).map(|_| Memory::ram(LINK_FIFO_WORDS, 16)));
        m.extend((0..g * g).map(|_| Memory::ram((s + 1) * right.div_ceil(g), 16)));
        m.extend((0..g).map(|_| Memory::ram(2 * right, 16)));
    }
    m
}

/// Block RAMs of a stage (junctions `(j, z, s)` in order) on `board`, `None` on a board
/// without block shapes. The previous junction's groups, where it is on another board or
/// the lanes are not known, are the most any of its `z` options gives that the board could
/// hold.
pub fn stage_blocks(
    net: &Net,
    board: &Board,
    stage: &[(usize, u64, u64)],
    left_link: bool,
    right_link: bool,
) -> Option<u64> {
    let shapes = board.ram_block_shapes.as_deref()?;
    let count = |ms: &[Memory]| ms.iter().map(|m| blocks(shapes, m)).sum::<u64>();
    let mut total = 0;
    for (i, &(j, z, s)) in stage.iter().enumerate() {
        // the previous junction's groups: known on this board, else each its z options give
        let prevs: Vec<u64> = if j == 0 {
            vec![0]
        } else if i > 0 {
            vec![groups(net, j - 1, stage[i - 1].1)]
        } else {
            // lanes a board of this kind could hold: about four multipliers each
            let most = board.dsp + board.logic / lut_multiplier_cost(board, net.width).max(1);
            let mut v: Vec<u64> = net.z_options[j - 1]
                .iter()
                .filter(|&&o| o == 1 || 4 * o <= most)
                .map(|&o| groups(net, j - 1, o))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let at = |z: u64| -> u64 {
            prevs
                .iter()
                .map(|&prev| {
                    count(&junction_memories(
                        net,
                        (j, z, s),
                        prev,
                        i == 0 && left_link,
                    ))
                })
                .max()
                .unwrap_or(0)
        };
        // more lanes make smaller banks, which can drop into logic
        total += most_up_to(net, j, z, at);
    }
    let right = stage.last().filter(|_| right_link).copied();
    total += count(&top_memories(net, board, left_link, right));
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgeflow_core::Spec;

    const UP5K: [[u64; 2]; 4] = [[256, 16], [512, 8], [1024, 4], [2048, 2]];

    fn digits() -> Net {
        let path = format!("{}/../specs/digits.toml", env!("CARGO_MANIFEST_DIR"));
        Net::from_spec(
            &Spec::from_toml_str(&std::fs::read_to_string(&path).unwrap(), &path).unwrap(),
        )
    }

    /// Mappings yosys 0.23 `synth_ice40` chose in the digits designs (its memory_libmap log).
    #[test]
    fn blocks_follow_yosys_mappings() {
        let m = |rows, width, kind| Memory { rows, width, kind };
        for (mem, want) in [
            (m(640, 16, Kind::ReadReset), 3), // weights, 640 rows
            (m(384, 16, Kind::Plain), 2),     // activations, 6 copies of 64
            (m(80, 19, Kind::Plain), 2),      // delta sums at 19 bits
            (m(512, 17, Kind::Plain), 3),     // a link's receive FIFO: 512 x 8, three wide
            (m(20, 16, Kind::Plain), 1),      // output deltas, 320 bits
            (m(16, 16, Kind::Plain), 1),      // predictions FIFO, 256 bits
            (m(10, 16, Kind::ReadReset), 0),  // 10 biases: flip-flops
            (m(160, 7, Kind::Rom), 0),        // a row table of 1,120 bits: logic
            (m(320, 6, Kind::Rom), 1),
            (m(640, 6, Kind::Rom), 2),
        ] {
            assert_eq!(blocks(&UP5K, &mem), want, "{mem:?}");
        }
    }

    /// The iCEBreaker's digits designs as yosys maps them: one board (30 EBR in
    /// docs/calibration/boards/digits-icebreaker.synth.json) and the second of two linked
    /// stages, junction 2 at z = 1 after a link delay of one block cycle (15 EBR).
    #[test]
    fn digits_on_the_icebreaker_takes_what_yosys_maps() {
        let board = Board::built_in("icebreaker").unwrap();
        let mut net = digits();
        let one = [(0, 2, net.staleness(0, 0)), (1, 1, net.staleness(1, 0))];
        assert_eq!(stage_blocks(&net, &board, &one, false, false), Some(30));
        net.chained = true;
        let second = [(1, 1, net.staleness(1, 0))];
        assert_eq!(stage_blocks(&net, &board, &second, true, false), Some(15));
        // a board without block shapes counts its blocks per junction instead
        let xc7 = Board::built_in("nexys4-ddr").unwrap();
        assert_eq!(stage_blocks(&net, &xc7, &second, true, false), None);
    }

    #[test]
    fn more_delay_never_takes_fewer_blocks() {
        let board = Board::built_in("icebreaker").unwrap();
        let mut net = digits();
        net.chained = true;
        let mut last = 0;
        for d in 0..6 {
            let b =
                stage_blocks(&net, &board, &[(0, 2, net.staleness(0, d))], false, true).unwrap();
            assert!(b >= last, "delay {d}: {b} < {last}");
            last = b;
        }
    }
}
