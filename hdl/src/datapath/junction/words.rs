//! The layouts of the junction's pipeline registers (`PipeRegs` words and bits): which word
//! holds what, shared by its construction and its wiring.

/// Words of the write-back registers: the weight row `k`, then per lane the weight and the
/// left neuron. Bit: BP/UP runs.
#[derive(Clone, Copy)]
pub(super) struct UpWord {
    pub z: usize,
}

impl UpWord {
    pub const K: usize = 0;
    pub fn w(&self, l: usize) -> usize {
        1 + l
    }
    pub fn left(&self, l: usize) -> usize {
        1 + self.z + l
    }
    pub fn count(&self) -> usize {
        1 + 2 * self.z
    }
}

/// Words of the BP/UP pipeline registers: the weight row `k`, the bias row, then per group
/// the delta and the bias, per lane the weight, UP's activation and the left neuron.
#[derive(Clone, Copy)]
pub(super) struct BpWord {
    pub z: usize,
    pub g: usize,
}

impl BpWord {
    pub const K: usize = 0;
    pub const ROW: usize = 1;
    pub fn d(&self, q: usize) -> usize {
        2 + q
    }
    pub fn bias(&self, q: usize) -> usize {
        2 + self.g + q
    }
    pub fn w(&self, l: usize) -> usize {
        2 + 2 * self.g + l
    }
    pub fn a(&self, l: usize) -> usize {
        2 + 2 * self.g + self.z + l
    }
    pub fn left(&self, l: usize) -> usize {
        2 + 2 * self.g + 2 * self.z + l
    }
    pub fn count(&self) -> usize {
        2 + 2 * self.g + 3 * self.z
    }
}

/// Words of the read registers: per lane the weight, FF's and UP's activations and the left
/// neuron, then the edge clock `k`, the row, and per group the bias, the low and high half of
/// the delta sum BP reads, and σ′. Bits: FF runs, first and last clock of a neuron, BP runs,
/// BP finishes a row.
#[derive(Clone, Copy)]
pub(super) struct RdWord {
    pub z: usize,
    pub g: usize,
}

impl RdWord {
    pub const RUN_FF: usize = 0;
    pub const FIRST: usize = 1;
    pub const LAST_SUB: usize = 2;
    pub const RUN_BP: usize = 3;
    pub const ROW_DONE: usize = 4;
    pub const BITS: usize = 5;
    pub fn w(&self, l: usize) -> usize {
        l
    }
    pub fn a(&self, l: usize) -> usize {
        self.z + l
    }
    pub fn u(&self, l: usize) -> usize {
        2 * self.z + l
    }
    pub fn left(&self, l: usize) -> usize {
        3 * self.z + l
    }
    pub fn k(&self) -> usize {
        4 * self.z
    }
    pub fn row(&self) -> usize {
        4 * self.z + 1
    }
    pub fn bias(&self, q: usize) -> usize {
        4 * self.z + 2 + q
    }
    pub fn acc_lo(&self, q: usize) -> usize {
        4 * self.z + 2 + self.g + q
    }
    pub fn acc_hi(&self, q: usize) -> usize {
        4 * self.z + 2 + 2 * self.g + q
    }
    pub fn sp(&self, q: usize) -> usize {
        4 * self.z + 2 + 3 * self.g + q
    }
    pub fn count(&self) -> usize {
        4 * self.z + 2 + 4 * self.g
    }
}
