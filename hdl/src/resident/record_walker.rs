//! The walk over a resident training set in the reference's sample order (docs/design.md,
//! "Sample order"; `edgeflow_core::order`): per epoch, four round keys from an xorshift32
//! stream, then a counter through a four-round Feistel permutation of `4^h` values, keeping
//! those below the sample count `n`. Each kept index becomes the word address of its record
//! (`index × record words`) by shift-and-add, so the walk needs no multiplier. One address
//! waits in `base` until the sample streamer takes it; the next is computed meanwhile.

use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
enum WalkState {
    Idle,
    Keys,
    Search,
    Multiply,
    Ready,
}

#[derive(LogicBlock)]
pub struct RecordWalker {
    pub clock: Signal<In, Clock>,
    /// Load the xorshift32 state (`seed`, never 0) at this clock.
    pub seed_load: Signal<In, Bit>,
    pub seed: Signal<In, Bits<32>>,
    /// Begin an epoch over `n` samples with half-width `h` (both held through the epoch;
    /// `n < 2^16`, so `h ≤ 8` and the counter fits 16 bits).
    pub start: Signal<In, Bit>,
    pub n: Signal<In, Bits<16>>,
    pub h: Signal<In, Bits<4>>,
    /// The next record's word address, valid while `valid`; `take` consumes it.
    pub base: Signal<Out, Bits<20>>,
    pub valid: Signal<Out, Bit>,
    pub take: Signal<In, Bit>,
    record_words: Constant<Bits<20>>,
    one: Constant<Bits<8>>,
    state: DFF<WalkState>,
    /// The xorshift32 stream of round keys, continued across epochs.
    rng: DFF<Bits<32>>,
    key_step: DFF<Bits<2>>,
    key0: DFF<Bits<8>>,
    key1: DFF<Bits<8>>,
    key2: DFF<Bits<8>>,
    key3: DFF<Bits<8>>,
    /// The Feistel network's input: 0, 1, … up to `4^h − 1`.
    counter: DFF<Bits<16>>,
    // the search is pipelined: the first two Feistel rounds, then the last two and the index,
    // then the compare with `n`; an accepted index restarts the counter just after it
    half_left: DFF<Bits<8>>,
    half_right: DFF<Bits<8>>,
    count_a: DFF<Bits<16>>,
    valid_a: DFF<Bit>,
    index_q: DFF<Bits<16>>,
    count_b: DFF<Bits<16>>,
    valid_b: DFF<Bit>,
    /// Shift-and-add product: `product += multiplicand` for each set bit of `multiplier`.
    product: DFF<Bits<20>>,
    multiplicand: DFF<Bits<20>>,
    multiplier: DFF<Bits<16>>,
    mask: Signal<Local, Bits<8>>,
    rng1: Signal<Local, Bits<32>>,
    rng2: Signal<Local, Bits<32>>,
    rng3: Signal<Local, Bits<32>>,
    // the Feistel rounds: (L, R) → (R, L ^ F(R, key)); `right_r` is R after round r
    left0: Signal<Local, Bits<8>>,
    right0: Signal<Local, Bits<8>>,
    mix0: Signal<Local, Bits<8>>,
    right1: Signal<Local, Bits<8>>,
    mix1: Signal<Local, Bits<8>>,
    right2: Signal<Local, Bits<8>>,
    mix2: Signal<Local, Bits<8>>,
    right3: Signal<Local, Bits<8>>,
    mix3: Signal<Local, Bits<8>>,
    right4: Signal<Local, Bits<8>>,
    index: Signal<Local, Bits<16>>,
}

impl RecordWalker {
    pub fn new(record_words: usize) -> RecordWalker {
        assert!(record_words >= 1 && record_words < 1 << 20);
        RecordWalker {
            clock: Default::default(),
            seed_load: Default::default(),
            seed: Default::default(),
            start: Default::default(),
            n: Default::default(),
            h: Default::default(),
            base: Default::default(),
            valid: Default::default(),
            take: Default::default(),
            record_words: Constant::new((record_words as u64).into()),
            one: Constant::new(1u64.into()),
            state: Default::default(),
            rng: Default::default(),
            key_step: Default::default(),
            key0: Default::default(),
            key1: Default::default(),
            key2: Default::default(),
            key3: Default::default(),
            counter: Default::default(),
            half_left: Default::default(),
            half_right: Default::default(),
            count_a: Default::default(),
            valid_a: Default::default(),
            index_q: Default::default(),
            count_b: Default::default(),
            valid_b: Default::default(),
            product: Default::default(),
            multiplicand: Default::default(),
            multiplier: Default::default(),
            mask: Default::default(),
            rng1: Default::default(),
            rng2: Default::default(),
            rng3: Default::default(),
            left0: Default::default(),
            right0: Default::default(),
            mix0: Default::default(),
            right1: Default::default(),
            mix1: Default::default(),
            right2: Default::default(),
            mix2: Default::default(),
            right3: Default::default(),
            mix3: Default::default(),
            right4: Default::default(),
            index: Default::default(),
        }
    }
}

impl Logic for RecordWalker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            rng,
            key_step,
            key0,
            key1,
            key2,
            key3,
            counter,
            half_left,
            half_right,
            count_a,
            valid_a,
            index_q,
            count_b,
            valid_b,
            product,
            multiplicand,
            multiplier
        );
        self.mask.next = (self.one.val() << self.h.val()) - 1;
        self.rng1.next = self.rng.q.val() ^ (self.rng.q.val() << 13);
        self.rng2.next = self.rng1.val() ^ (self.rng1.val() >> 17);
        self.rng3.next = self.rng2.val() ^ (self.rng2.val() << 5);
        // round r: t = (R + key_r) & M; F = t ^ ((t << 1) & M) ^ ((t >> 1) & (t >> 2))
        self.left0.next = bit_cast::<8, 16>(self.counter.q.val() >> self.h.val());
        self.right0.next = bit_cast::<8, 16>(self.counter.q.val()) & self.mask.val();
        self.mix0.next = (self.right0.val() + self.key0.q.val()) & self.mask.val();
        self.right1.next = self.left0.val()
            ^ self.mix0.val()
            ^ ((self.mix0.val() << 1) & self.mask.val())
            ^ ((self.mix0.val() >> 1) & (self.mix0.val() >> 2));
        self.mix1.next = (self.right1.val() + self.key1.q.val()) & self.mask.val();
        self.right2.next = self.right0.val()
            ^ self.mix1.val()
            ^ ((self.mix1.val() << 1) & self.mask.val())
            ^ ((self.mix1.val() >> 1) & (self.mix1.val() >> 2));
        self.mix2.next = (self.half_right.q.val() + self.key2.q.val()) & self.mask.val();
        self.right3.next = self.half_left.q.val()
            ^ self.mix2.val()
            ^ ((self.mix2.val() << 1) & self.mask.val())
            ^ ((self.mix2.val() >> 1) & (self.mix2.val() >> 2));
        self.mix3.next = (self.right3.val() + self.key3.q.val()) & self.mask.val();
        self.right4.next = self.half_right.q.val()
            ^ self.mix3.val()
            ^ ((self.mix3.val() << 1) & self.mask.val())
            ^ ((self.mix3.val() >> 1) & (self.mix3.val() >> 2));
        self.index.next = (bit_cast::<16, 8>(self.right3.val()) << self.h.val())
            | bit_cast::<16, 8>(self.right4.val());
        self.base.next = self.product.q.val();
        self.valid.next = self.state.q.val() == WalkState::Ready;
        self.half_left.d.next = self.right1.val();
        self.half_right.d.next = self.right2.val();
        self.count_a.d.next = self.counter.q.val();
        self.valid_a.d.next = false;
        self.index_q.d.next = self.index.val();
        self.count_b.d.next = self.count_a.q.val();
        self.valid_b.d.next = false;
        if self.seed_load.val() {
            self.rng.d.next = self.seed.val();
        }
        match self.state.q.val() {
            WalkState::Idle => {}
            WalkState::Keys => {
                self.rng.d.next = self.rng3.val();
                self.key_step.d.next = self.key_step.q.val() + 1;
                if self.key_step.q.val() == 0 {
                    self.key0.d.next = bit_cast::<8, 32>(self.rng3.val()) & self.mask.val();
                }
                if self.key_step.q.val() == 1 {
                    self.key1.d.next = bit_cast::<8, 32>(self.rng3.val()) & self.mask.val();
                }
                if self.key_step.q.val() == 2 {
                    self.key2.d.next = bit_cast::<8, 32>(self.rng3.val()) & self.mask.val();
                }
                if self.key_step.q.val() == 3 {
                    self.key3.d.next = bit_cast::<8, 32>(self.rng3.val()) & self.mask.val();
                    self.state.d.next = WalkState::Search;
                }
            }
            WalkState::Search => {
                self.counter.d.next = self.counter.q.val() + 1;
                self.valid_a.d.next = true;
                self.valid_b.d.next = self.valid_a.q.val();
                if self.valid_b.q.val() & (self.index_q.q.val() < self.n.val()) {
                    self.product.d.next = 0.into();
                    self.multiplicand.d.next = self.record_words.val();
                    self.multiplier.d.next = self.index_q.q.val();
                    self.counter.d.next = self.count_b.q.val() + 1;
                    self.valid_a.d.next = false;
                    self.valid_b.d.next = false;
                    self.state.d.next = WalkState::Multiply;
                }
            }
            WalkState::Multiply => {
                if self.multiplier.q.val() == 0 {
                    self.state.d.next = WalkState::Ready;
                } else {
                    if self.multiplier.q.val().get_bit(0) {
                        self.product.d.next = self.product.q.val() + self.multiplicand.q.val();
                    }
                    self.multiplicand.d.next = self.multiplicand.q.val() << 1;
                    self.multiplier.d.next = self.multiplier.q.val() >> 1;
                }
            }
            WalkState::Ready => {
                if self.take.val() {
                    self.state.d.next = WalkState::Search;
                }
            }
        }
        // a new epoch restarts the walk wherever it was (the streamer asks only for `n`)
        if self.start.val() {
            self.key_step.d.next = 0.into();
            self.counter.d.next = 0.into();
            self.state.d.next = WalkState::Keys;
        }
    }
}
