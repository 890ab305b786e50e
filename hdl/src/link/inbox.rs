//! A stage's receiving end of one link direction, running beside the block cycles: it takes
//! the vector for block cycle `t + 1` from the link receiver while block cycle `t` runs, so a
//! stage waits on the link only when the link is late, never for the words' copying.
//!
//! The vectors of a stream are for block cycles `first, first + 1, …` (one per sample). The
//! vector for `u` is taken only once `u ≤ t + 1`, `t` being the block cycle the stage runs
//! next or is running: the memory it goes to (a rotating copy, or the copy of `u`'s parity)
//! is then no longer read by any block cycle before `u`. The inbox names that copy itself
//! (`copy`, one more per vector, round the copies), since it may write a vector a block cycle
//! before the memory's own pointer would. The stage starts block cycle `t` only once `has_t`
//! says its vector arrived good.

use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum InboxState {
    /// Waiting until the next vector may be taken.
    Idle,
    Words,
    /// Every word is in; waiting for the receiver's CRC verdict.
    Verdict,
    /// One clock for `allow` to see the next vector's block cycle.
    Gap,
}

#[derive(LogicBlock)]
pub struct Inbox {
    pub clock: Signal<In, Clock>,
    /// A stream starts: `go_vectors` vectors, the first for block cycle `first`.
    pub go: Signal<In, Bit>,
    pub go_vectors: Signal<In, Bits<16>>,
    /// The block cycle the stage runs next moves on by one (`t` becomes `t + 1`).
    pub step: Signal<In, Bit>,
    /// The stage failed: take nothing more until the next stream.
    pub stop: Signal<In, Bit>,
    /// The link receiver's words, provisional until `good`.
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub good: Signal<In, Bit>,
    /// A vector is due (the receiver's timeout runs).
    pub awaiting: Signal<Out, Bit>,
    /// Write word `addr` (of group `group`: word mod groups) into copy `copy`.
    pub we: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<16>>,
    pub group: Signal<Out, Bits<16>>,
    pub copy: Signal<Out, Bits<16>>,
    /// The vector for block cycle `t` arrived good (registered: a clock late, never early).
    pub has_t: Signal<Out, Bit>,
    /// A vector's verdict came good this clock.
    done: Signal<Local, Bit>,
    state: DFF<InboxState>,
    /// `u - t`, `u` the block cycle of the vector taken next (two's complement; a count
    /// rather than a comparison of wide block-cycle numbers).
    lead: DFF<Bits<8>>,
    /// Vectors of the stream not taken yet.
    remaining: DFF<Bits<16>>,
    /// Word and group of the vector (a vector fits the link's FIFO: at most 4096 words).
    count: DFF<Bits<12>>,
    grp: DFF<Bits<12>>,
    copy_q: DFF<Bits<8>>,
    /// The vector for `u` may be taken (registered from `lead`).
    allow: DFF<Bit>,
    has: DFF<Bit>,
    first: Constant<Bits<8>>,
    last_word: Constant<Bits<12>>,
    group_last: Constant<Bits<12>>,
    copy_first: Constant<Bits<8>>,
    copy_last: Constant<Bits<8>>,
}

impl Inbox {
    /// Vectors of `len` words over `groups` groups, the first for block cycle `first` into
    /// copy `copy_first` of `copies`.
    pub fn new(first: usize, len: usize, groups: usize, copies: usize, copy_first: usize) -> Self {
        assert!(len >= 1 && len <= 1 << 12 && groups >= 1 && groups <= len);
        assert!(copy_first < copies && copies <= 1 << 8 && first < 1 << 7);
        Inbox {
            clock: Default::default(),
            go: Default::default(),
            go_vectors: Default::default(),
            step: Default::default(),
            stop: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            good: Default::default(),
            awaiting: Default::default(),
            we: Default::default(),
            addr: Default::default(),
            group: Default::default(),
            copy: Default::default(),
            has_t: Default::default(),
            done: Default::default(),
            state: Default::default(),
            lead: Default::default(),
            remaining: Default::default(),
            count: Default::default(),
            grp: Default::default(),
            copy_q: Default::default(),
            allow: Default::default(),
            has: Default::default(),
            first: Constant::new((first as u64).into()),
            last_word: Constant::new(((len - 1) as u64).into()),
            group_last: Constant::new(((groups - 1) as u64).into()),
            copy_first: Constant::new((copy_first as u64).into()),
            copy_last: Constant::new(((copies - 1) as u64).into()),
        }
    }
}

impl Logic for Inbox {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, lead, remaining, count, grp, copy_q, allow, has);
        // u ≤ t + 1 and u > t, with `lead` in [-128, 128): a stream's first vector is at
        // most 127 block cycles in, and the stage runs at most 2 ahead of its inbox
        self.allow.d.next = (self.remaining.q.val() != 0)
            & (self.lead.q.val().get_bit(7) | (self.lead.q.val() < 2));
        self.has.d.next = !self.lead.q.val().get_bit(7) & (self.lead.q.val() != 0);
        self.has_t.next = self.has.q.val();
        self.done.next = false;
        self.ready.next = false;
        self.awaiting.next = false;
        self.we.next = false;
        self.addr.next = bit_cast::<16, 12>(self.count.q.val());
        self.group.next = bit_cast::<16, 12>(self.grp.q.val());
        self.copy.next = bit_cast::<16, 8>(self.copy_q.q.val());
        match self.state.q.val() {
            InboxState::Idle => {
                if self.allow.q.val() {
                    self.state.d.next = InboxState::Words;
                }
            }
            InboxState::Words => {
                self.ready.next = true;
                self.awaiting.next = true;
                if self.valid.val() {
                    self.we.next = true;
                    self.count.d.next = self.count.q.val() + 1;
                    self.grp.d.next = self.grp.q.val() + 1;
                    if self.grp.q.val() == self.group_last.val() {
                        self.grp.d.next = 0.into();
                    }
                    if self.count.q.val() == self.last_word.val() {
                        self.count.d.next = 0.into();
                        self.grp.d.next = 0.into();
                        self.state.d.next = InboxState::Verdict;
                    }
                }
            }
            InboxState::Verdict => {
                self.awaiting.next = true;
                if self.good.val() {
                    self.done.next = true;
                    self.remaining.d.next = self.remaining.q.val() - 1;
                    self.copy_q.d.next = self.copy_q.q.val() + 1;
                    if self.copy_q.q.val() == self.copy_last.val() {
                        self.copy_q.d.next = 0.into();
                    }
                    self.state.d.next = InboxState::Gap;
                }
            }
            _ => {
                self.state.d.next = InboxState::Idle;
            }
        }
        // a vector taken moves u on, a block cycle t
        if self.done.val() & !self.step.val() {
            self.lead.d.next = self.lead.q.val() + 1;
        }
        if self.step.val() & !self.done.val() {
            self.lead.d.next = self.lead.q.val() - 1;
        }
        if self.stop.val() {
            self.state.d.next = InboxState::Idle;
            self.remaining.d.next = 0.into();
        }
        if self.go.val() {
            self.state.d.next = InboxState::Idle;
            self.lead.d.next = self.first.val();
            self.remaining.d.next = self.go_vectors.val();
            self.count.d.next = 0.into();
            self.grp.d.next = 0.into();
            self.copy_q.d.next = self.copy_first.val();
        }
    }
}
