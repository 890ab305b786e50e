//! One board of a linked chain as the host sees it: the linked stage (linked_stage.rs) behind
//! the host link's word ports (hdl/PROTOCOL.md, "Linked boards"). The host loads and reads
//! the stage's weights, starts each board's share of a stream and feeds the first board its
//! input samples and the last its labels; the boundary vectors cross on the link pins.
//!
//! The weight walk is a host link built for the stage's junctions alone (host_link/mod.rs):
//! LOAD_STATE and READ_STATE visit the stage's weights and biases in the order a single
//! board visits a network of those junctions. Its streaming side stays unused.

use super::linked_stage::{LinkIn, LinkOut, LinkedStage};
use super::stage_host::StageHost;
use crate::host_link::HostLink;
use crate::stage::ctrl_params;
use crate::wiring::{Connect, Sim, Text, Wires};
use crate::{at, to};
use edgeflow_core::Spec;
use rust_hdl::prelude::*;
use std::ops::RangeInclusive;

#[derive(LogicBlock)]
pub struct LinkedBoard<const W: usize, const F: usize, const FP1: usize> {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// A link reported an error (for a board LED).
    pub link_error: Signal<Out, Bit>,
    pub from_prev: Vec<LinkIn<W>>,
    pub to_prev: Vec<LinkOut<W>>,
    pub to_next: Vec<LinkOut<W>>,
    pub from_next: Vec<LinkIn<W>>,
    pub stage: LinkedStage<W, F, FP1>,
    pub host: StageHost,
    pub walk: HostLink,
    _junctions: usize,
}

/// Weight and bias cells the host walk visits for junctions `range` (what READ_STATE sends).
pub fn walk_cells(spec: &Spec, range: RangeInclusive<usize>, ff: &[usize], bp: &[usize]) -> usize {
    let p = ctrl_params(spec, range, ff, bp);
    (0..p.junctions)
        .map(|j| p.w_banks[j] * p.w_rows[j] + p.b_banks[j] * p.b_rows[j])
        .sum()
}

impl<const W: usize, const F: usize, const FP1: usize> LinkedBoard<W, F, FP1> {
    /// Junctions `range` of `spec` on the chain's schedule `ff`, `bp`; `timeout` as the
    /// linked stage's.
    pub fn new(
        spec: &Spec,
        range: RangeInclusive<usize>,
        ff: &[usize],
        bp: &[usize],
        timeout: u32,
    ) -> Self {
        let stage = LinkedStage::<W, F, FP1>::new(spec, range.clone(), ff, bp, timeout);
        let (first, last) = (*range.start(), *range.end());
        let inputs = if first == 0 { spec.layers[0] } else { 0 };
        let cells = walk_cells(spec, range.clone(), ff, bp);
        let host = StageHost::new(cells, inputs, last + 1 == spec.junctions());
        let walk = HostLink::new(ctrl_params(spec, range, ff, bp));
        let n = stage.h_rdata.len();
        LinkedBoard {
            clock: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_data: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            link_error: Default::default(),
            from_prev: (0..stage.from_prev.len())
                .map(|_| Default::default())
                .collect(),
            to_prev: (0..stage.to_prev.len())
                .map(|_| Default::default())
                .collect(),
            to_next: (0..stage.to_next.len())
                .map(|_| Default::default())
                .collect(),
            from_next: (0..stage.from_next.len())
                .map(|_| Default::default())
                .collect(),
            stage,
            host,
            walk,
            _junctions: n,
        }
    }

    fn wire<X: Wires<Self>>(w: &mut X, junctions: usize, prev: bool, next: bool) {
        let bit0 = w.lit(0, "1'b0");
        w.set(to!(host.clock), at!(w, clock));
        w.set(to!(walk.clock), at!(w, clock));
        w.set(to!(stage.clock), at!(w, clock));
        // the host's words
        w.set(to!(host.host_in.data), at!(w, in_data));
        w.set(to!(host.host_in.valid), at!(w, in_valid));
        w.set(to!(in_ready), at!(w, host.host_in.ready));
        w.set(to!(out_data), at!(w, host.host_out.data));
        w.set(to!(out_valid), at!(w, host.host_out.valid));
        w.set(to!(host.host_out.ready), at!(w, out_ready));
        crate::wire_words!(w, [host.walk_in], [walk.host_in]);
        crate::wire_words!(w, [walk.host_out], [host.walk_out]);
        // the stream
        w.set(to!(stage.go), at!(w, host.go));
        w.set(to!(stage.go_train), at!(w, host.go_train));
        w.set(to!(stage.go_samples), at!(w, host.go_samples));
        w.set(to!(stage.hold), at!(w, host.hold));
        crate::wire_words!(w, [host.feed], [stage.feed]);
        w.set(to!(host.done), at!(w, stage.done));
        w.set(to!(host.failed), at!(w, stage.failed));
        w.set(to!(host.pred), at!(w, stage.pred));
        w.set(to!(host.pred_valid), at!(w, stage.pred_valid));
        w.set(to!(host.prev_error), at!(w, stage.prev_error));
        w.set(to!(host.next_error), at!(w, stage.next_error));
        w.set(to!(host.started), at!(w, stage.started));
        let errors = w.or(
            &w.not(&w.eq16(&at!(w, stage.prev_error), 0)),
            &w.not(&w.eq16(&at!(w, stage.next_error), 0)),
        );
        w.set(to!(link_error), errors);
        // the walk reaches the stage's weights; its stream side is idle
        w.set(to!(walk.starting), bit0.clone());
        w.set(to!(walk.done), w.lit(1, "1'b1"));
        w.set(to!(walk.pred_valid), bit0.clone());
        w.set(to!(walk.pred), w.lit(0, "16'd0"));
        w.set(to!(walk.started), w.lit(0, "32'd0"));
        w.set(to!(stage.h_bias), at!(w, walk.h_bias));
        w.set(to!(stage.h_we), at!(w, walk.h_we));
        w.set(to!(stage.h_addr), at!(w, walk.h_addr));
        w.set(to!(stage.h_bank), at!(w, walk.h_bank));
        w.set(to!(stage.h_wdata), at!(w, walk.h_wdata));
        for j in 0..junctions {
            w.set(to!(stage.h_sel[j]), at!(w, walk.h_sel[j]));
            w.set(to!(walk.h_rdata[j]), at!(w, stage.h_rdata[j]));
        }
        crate::pass_link_pins!(w, prev, next, stage);
    }

    fn shape(&self) -> (usize, bool, bool) {
        (
            self._junctions,
            !self.from_prev.is_empty(),
            !self.to_next.is_empty(),
        )
    }
}

impl<const W: usize, const F: usize, const FP1: usize> Logic for LinkedBoard<W, F, FP1> {
    fn update(&mut self) {
        let (j, p, n) = self.shape();
        Self::wire(&mut Sim(self), j, p, n);
    }

    fn connect(&mut self) {
        let (j, p, n) = self.shape();
        Self::wire(&mut Connect(self), j, p, n);
    }

    fn hdl(&self) -> Verilog {
        let (j, p, n) = self.shape();
        let mut t = Text::default();
        Self::wire(&mut t, j, p, n);
        t.verilog("")
    }
}

crate::link_pins_impl!(LinkedBoard);

/// Wires a composite's link pins (`from_prev`, `to_prev`, `to_next`, `from_next`, when it has
/// a previous / next neighbour) to the same pins of its child `$inner`.
#[macro_export]
macro_rules! pass_link_pins {
    ($w:expr, $prev:expr, $next:expr, $($inner:ident).+) => {{
        if $prev {
            $crate::pass_link_pins!(@in $w, $($inner).+, from_prev);
            $crate::pass_link_pins!(@out $w, $($inner).+, to_prev);
        }
        if $next {
            $crate::pass_link_pins!(@out $w, $($inner).+, to_next);
            $crate::pass_link_pins!(@in $w, $($inner).+, from_next);
        }
    }};
    (@in $w:expr, $($inner:ident).+, $side:ident) => {{
        $w.set($crate::to!($($inner).+.$side[0].clock), $crate::at!($w, $side[0].clock));
        $w.set($crate::to!($($inner).+.$side[0].data), $crate::at!($w, $side[0].data));
        $w.set($crate::to!($($inner).+.$side[0].valid), $crate::at!($w, $side[0].valid));
        $w.set($crate::to!($($inner).+.$side[0].start), $crate::at!($w, $side[0].start));
        $w.set($crate::to!($side[0].credit), $crate::at!($w, $($inner).+.$side[0].credit));
    }};
    (@out $w:expr, $($inner:ident).+, $side:ident) => {{
        $w.set($crate::to!($side[0].clock), $crate::at!($w, $($inner).+.$side[0].clock));
        $w.set($crate::to!($side[0].data), $crate::at!($w, $($inner).+.$side[0].data));
        $w.set($crate::to!($side[0].valid), $crate::at!($w, $($inner).+.$side[0].valid));
        $w.set($crate::to!($side[0].start), $crate::at!($w, $($inner).+.$side[0].start));
        $w.set($crate::to!($($inner).+.$side[0].credit), $crate::at!($w, $side[0].credit));
    }};
}

impl<const W: usize, const F: usize, const FP1: usize> crate::host_stream::HostLinkPorts
    for LinkedBoard<W, F, FP1>
{
    crate::host_link_ports_impl!();
}
