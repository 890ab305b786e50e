//! The controller's parts (controller.rs wires them): the block-cycle state machine with the
//! history the junctions' enables are read from, and the label ring's slots. Both are
//! `#[hdl_gen]`: rust-hdl writes their Verilog from the `update` the simulation runs.
//!
//! Counters are held in 16- or 32-bit signals masked with a constant of their exact width,
//! so yosys removes the constant-zero bits above it. Comparisons a start depends on are kept
//! as registered flags, set when the counter changes, so no carry chain of a counter sits in
//! front of a start or of `adv`.

use rust_hdl::core::prelude::*;
use rust_hdl::widgets::dff_setup;
use rust_hdl::widgets::prelude::DFF;

/// The block-cycle state machine: a stream's `go`, the start of each block cycle, the clock
/// `k` within it, the output stall in infer mode, and the label ring's pointer.
#[derive(LogicBlock)]
pub struct BlockCycles {
    pub clock: Signal<In, Clock>,
    pub go: Signal<In, Bit>,
    pub go_train: Signal<In, Bit>,
    pub go_samples: Signal<In, Bits<16>>,
    pub sample_ready: Signal<In, Bit>,
    pub out_busy: Signal<In, Bit>,
    /// The last junction's FF is on in this block cycle (its window's `ff_en`).
    pub ff_last: Signal<In, Bit>,
    pub lab_we: Signal<In, Bit>,
    pub lab_copy: Signal<In, Bits<16>>,
    pub lab_data: Signal<In, Bits<16>>,
    pub started: Signal<Out, Bits<32>>,
    pub starting: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    pub pred_valid: Signal<Out, Bit>,
    pub adv: Signal<Out, Bit>,
    pub k: Signal<Out, Bits<16>>,
    pub last: Signal<Out, Bit>,
    pub step: Signal<Out, Bit>,
    pub parity: Signal<Out, Bit>,
    pub train: Signal<Out, Bit>,
    /// The label ring's read position: the copy of the sample the last junction's FF is on.
    pub lab_ptr: Signal<Out, Bits<16>>,
    /// The label write, a clock after the link's (its take is late in the clock; the copy is
    /// read block cycles later).
    pub lab_write: Signal<Out, Bit>,
    pub lab_write_copy: Signal<Out, Bits<16>>,
    pub lab_write_data: Signal<Out, Bits<16>>,
    /// Bit `i`: the block cycle `i` starts back (bit 0 the one running) took a sample of the
    /// stream. A junction whose pass runs on the sample of `F` block cycles back is enabled
    /// by bit `F`, so every junction's window is one flip-flop of a shared shift register.
    pub history: Signal<Out, Bits<64>>,
    active: DFF<Bit>,
    train_r: DFF<Bit>,
    started_r: DFF<Bits<32>>,
    running: DFF<Bit>,
    /// The clock within the block cycle.
    clock_in_cycle: DFF<Bits<16>>,
    parity_r: DFF<Bit>,
    /// The label pointer XOR its start copy (flip-flops start at zero).
    lab_from_start: DFF<Bits<16>>,
    /// Block cycles of the stream less one, and samples less one, registered at `go`: a
    /// start's flags then compare the count before it with a register (one carry chain).
    total_less_one: DFF<Bits<32>>,
    samples_less_one: DFF<Bits<32>>,
    /// `started < total` and `started >= samples`, kept with `started`.
    below_total: DFF<Bit>,
    past_samples: DFF<Bit>,
    /// `k == T - 1`, kept with `k`.
    at_end: DFF<Bit>,
    /// `at_end && need_out`, kept with `at_end` (train and the enables hold still within a
    /// block cycle): the output stall in front of `adv` is one flag and `out_busy`.
    end_out: DFF<Bit>,
    lab_we_r: DFF<Bit>,
    lab_copy_r: DFF<Bits<16>>,
    lab_data_r: DFF<Bits<16>>,
    history_r: DFF<Bits<64>>,
    /// Block cycles a stream adds to its samples: train `B_0`, infer `F_{L-1}`.
    train_extra: Constant<Bits<32>>,
    infer_extra: Constant<Bits<32>>,
    /// Every block cycle waits for `sample_ready`, not only those that take a sample.
    free_after_samples: Constant<Bit>,
    copies: Constant<Bits<16>>,
    last_copy: Constant<Bits<16>>,
    lab_start: Constant<Bits<16>>,
    /// `T - 2`: at this `k` the next clock is the block cycle's last.
    before_end: Constant<Bits<16>>,
    count_bits: Constant<Bits<32>>,
    k_bits: Constant<Bits<16>>,
    copy_bits: Constant<Bits<16>>,
    /// The bits of the largest block-cycle offset of any junction.
    history_bits: Constant<Bits<64>>,
    /// Neurons of the output layer: a label at or past it names none and is held as it.
    outputs: Constant<Bits<16>>,
    /// The bits of `outputs`.
    label_bits: Constant<Bits<16>>,
    can_start: Signal<Local, Bit>,
    need_out: Signal<Local, Bit>,
    adv_now: Signal<Local, Bit>,
    last_now: Signal<Local, Bit>,
    done_now: Signal<Local, Bit>,
    start_now: Signal<Local, Bit>,
    next_started: Signal<Local, Bits<32>>,
    lab_now: Signal<Local, Bits<16>>,
    lab_next: Signal<Local, Bits<16>>,
}

impl BlockCycles {
    /// A block cycle of `t` clocks (at least 3), `copies` label copies starting at
    /// `lab_start`, the stream's extra block cycles in train and infer mode, the largest
    /// block-cycle offset of any junction (for the counter's and the history's width), and
    /// the output layer's neurons.
    pub fn new(
        t: usize,
        copies: usize,
        lab_start: usize,
        extra: (usize, usize),
        last_offset: usize,
        wait_all: bool,
        outputs: usize,
    ) -> BlockCycles {
        assert!(t >= 3, "the block cycle includes the FF pipeline");
        assert!(
            last_offset < 64,
            "a junction's block-cycle offset must be below 64 (the history's width)"
        );
        let c16 = |v: u64| Constant::<Bits<16>>::new(v.into());
        let c32 = |v: u64| Constant::<Bits<32>>::new(v.into());
        BlockCycles {
            clock: Default::default(),
            go: Default::default(),
            go_train: Default::default(),
            go_samples: Default::default(),
            sample_ready: Default::default(),
            out_busy: Default::default(),
            ff_last: Default::default(),
            lab_we: Default::default(),
            lab_copy: Default::default(),
            lab_data: Default::default(),
            started: Default::default(),
            starting: Default::default(),
            done: Default::default(),
            pred_valid: Default::default(),
            adv: Default::default(),
            k: Default::default(),
            last: Default::default(),
            step: Default::default(),
            parity: Default::default(),
            train: Default::default(),
            lab_ptr: Default::default(),
            lab_write: Default::default(),
            lab_write_copy: Default::default(),
            lab_write_data: Default::default(),
            history: Default::default(),
            active: Default::default(),
            train_r: Default::default(),
            started_r: Default::default(),
            running: Default::default(),
            clock_in_cycle: Default::default(),
            parity_r: Default::default(),
            lab_from_start: Default::default(),
            total_less_one: Default::default(),
            samples_less_one: Default::default(),
            below_total: Default::default(),
            past_samples: Default::default(),
            at_end: Default::default(),
            end_out: Default::default(),
            lab_we_r: Default::default(),
            lab_copy_r: Default::default(),
            lab_data_r: Default::default(),
            history_r: Default::default(),
            train_extra: c32(extra.0 as u64),
            infer_extra: c32(extra.1 as u64),
            free_after_samples: Constant::new(!wait_all),
            copies: c16(copies as u64),
            last_copy: c16(copies as u64 - 1),
            lab_start: c16(lab_start as u64),
            before_end: c16(t as u64 - 2),
            // a stream has at most 65535 samples (`go_samples` is 16 bits)
            count_bits: c32(crate::mask_for(65535 + last_offset + 1)),
            k_bits: c16(crate::mask_for(t - 1)),
            copy_bits: c16(crate::mask_for(copies - 1)),
            history_bits: Constant::new((u64::MAX >> (63 - last_offset)).into()),
            outputs: c16(outputs as u64),
            label_bits: c16(crate::mask_for(outputs)),
            can_start: Default::default(),
            need_out: Default::default(),
            adv_now: Default::default(),
            last_now: Default::default(),
            done_now: Default::default(),
            start_now: Default::default(),
            next_started: Default::default(),
            lab_now: Default::default(),
            lab_next: Default::default(),
        }
    }
}

impl Logic for BlockCycles {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            active,
            train_r,
            started_r,
            running,
            clock_in_cycle,
            parity_r,
            lab_from_start,
            total_less_one,
            samples_less_one,
            below_total,
            past_samples,
            at_end,
            end_out,
            lab_we_r,
            lab_copy_r,
            lab_data_r,
            history_r
        );
        self.can_start.next = self.active.q.val()
            & self.below_total.q.val()
            & ((self.free_after_samples.val() & self.past_samples.q.val())
                | self.sample_ready.val());
        self.need_out.next = !self.train_r.q.val() & self.ff_last.val();
        // `running` implies `active` (a start needs `active`, which clears only when not
        // running), so adv waits on `running` alone
        self.adv_now.next = self.running.q.val() & !(self.end_out.q.val() & self.out_busy.val());
        self.last_now.next = self.adv_now.val() & self.at_end.q.val();
        self.done_now.next =
            self.active.q.val() & !self.running.q.val() & !self.below_total.q.val();
        self.start_now.next = !self.go.val() & self.can_start.val() & !self.running.q.val();
        if self.adv_now.val() {
            self.start_now.next = !self.go.val() & self.can_start.val() & self.last_now.val();
        }
        self.next_started.next = (self.started_r.q.val() + 1) & self.count_bits.val();
        self.lab_now.next =
            (self.lab_from_start.q.val() ^ self.lab_start.val()) & self.copy_bits.val();
        self.lab_next.next = (self.lab_now.val() + 1) & self.copy_bits.val();
        if self.lab_now.val() == self.last_copy.val() {
            self.lab_next.next = 0.into();
        }
        self.started.next = self.started_r.q.val();
        self.starting.next = self.start_now.val();
        self.done.next = self.done_now.val();
        self.pred_valid.next = self.last_now.val() & self.need_out.val();
        self.adv.next = self.adv_now.val();
        self.k.next = self.clock_in_cycle.q.val();
        self.last.next = self.last_now.val();
        self.step.next = self.running.q.val() & !self.at_end.q.val();
        self.parity.next = self.parity_r.q.val();
        self.train.next = self.train_r.q.val();
        self.lab_ptr.next = self.lab_now.val();
        self.lab_write.next = self.lab_we_r.q.val();
        self.lab_write_copy.next = self.lab_copy_r.q.val();
        self.lab_write_data.next = self.lab_data_r.q.val();
        self.history.next = self.history_r.q.val();
        // a copy past the ring writes nothing, so the copy needs only the ring's bits
        self.lab_we_r.d.next = self.lab_we.val() & (self.lab_copy.val() < self.copies.val());
        self.lab_copy_r.d.next = self.lab_copy.val() & self.copy_bits.val();
        self.lab_data_r.d.next = self.outputs.val();
        if self.lab_data.val() < self.outputs.val() {
            self.lab_data_r.d.next = self.lab_data.val() & self.label_bits.val();
        }
        if self.go.val() {
            self.active.d.next = true;
            self.train_r.d.next = self.go_train.val();
            // (a stream of no samples starts no block cycle: its values are never compared)
            self.samples_less_one.d.next =
                (bit_cast::<32, 16>(self.go_samples.val()) - 1) & self.count_bits.val();
            self.total_less_one.d.next =
                (bit_cast::<32, 16>(self.go_samples.val()) + self.infer_extra.val() - 1)
                    & self.count_bits.val();
            if self.go_train.val() {
                self.total_less_one.d.next =
                    (bit_cast::<32, 16>(self.go_samples.val()) + self.train_extra.val() - 1)
                        & self.count_bits.val();
            }
            self.below_total.d.next = self.go_samples.val() != 0;
            self.past_samples.d.next = self.go_samples.val() == 0;
            self.started_r.d.next = 0.into();
            self.running.d.next = false;
            self.parity_r.d.next = false;
            self.lab_from_start.d.next = 0.into();
            self.history_r.d.next = 0.into();
        } else if self.adv_now.val() {
            if self.last_now.val() {
                self.parity_r.d.next = !self.parity_r.q.val();
                self.lab_from_start.d.next = self.lab_next.val() ^ self.lab_start.val();
                self.running.d.next = false;
            } else {
                self.clock_in_cycle.d.next = (self.clock_in_cycle.q.val() + 1) & self.k_bits.val();
                self.at_end.d.next = self.clock_in_cycle.q.val() == self.before_end.val();
                self.end_out.d.next =
                    (self.clock_in_cycle.q.val() == self.before_end.val()) & self.need_out.val();
            }
        } else if !self.running.q.val() & self.can_start.val() {
        } else if self.done_now.val() & !self.out_busy.val() {
            self.active.d.next = false;
        }
        if self.start_now.val() {
            self.running.d.next = true;
            self.clock_in_cycle.d.next = 0.into();
            self.at_end.d.next = false;
            self.end_out.d.next = false;
            self.started_r.d.next = self.next_started.val();
            // started + 1 < total, started + 1 >= samples
            // started + 1 < total, started + 1 >= samples
            self.below_total.d.next = self.started_r.q.val() < self.total_less_one.q.val();
            self.past_samples.d.next = self.started_r.q.val() >= self.samples_less_one.q.val();
            // `past_samples` still says whether the block cycle starting now is past them
            self.history_r.d.next = (self.history_r.q.val() << 1) & self.history_bits.val();
            if !self.past_samples.q.val() {
                self.history_r.d.next =
                    ((self.history_r.q.val() << 1) | 1) & self.history_bits.val();
            }
        }
    }
}

/// One copy of the label ring: a register written when the delayed label write names it.
/// The label comes clamped and masked to the bits of the output layer's size (BlockCycles),
/// so the output layer's comparison with it is that narrow.
#[derive(LogicBlock)]
pub struct LabelSlot {
    pub clock: Signal<In, Clock>,
    pub write: Signal<In, Bit>,
    pub copy: Signal<In, Bits<16>>,
    pub data: Signal<In, Bits<16>>,
    pub label: Signal<Out, Bits<16>>,
    held: DFF<Bits<16>>,
    index: Constant<Bits<16>>,
}

impl LabelSlot {
    pub fn new(index: usize) -> LabelSlot {
        LabelSlot {
            clock: Default::default(),
            write: Default::default(),
            copy: Default::default(),
            data: Default::default(),
            label: Default::default(),
            held: Default::default(),
            index: Constant::new((index as u64).into()),
        }
    }
}

impl Logic for LabelSlot {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held);
        self.label.next = self.held.q.val();
        if self.write.val() & (self.copy.val() == self.index.val()) {
            self.held.d.next = self.data.val();
        }
    }
}
