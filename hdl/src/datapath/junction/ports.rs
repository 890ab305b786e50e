//! The ports between neighbouring junctions, one bundle per group of the layer between them
//! (group `q`: the neurons `≡ q` modulo the groups, which one FF lane of the left junction
//! finishes). The left junction's FF writes each finished neuron's activation and σ′ into the
//! right junction's left layer; its BP reads (and clears) the right junction's delta sums and
//! reads σ′ back. [`RightGroup`] is the left junction's side, [`LeftGroup`] the right
//! junction's; both carry the same field names, so a pair is wired from one list
//! ([`wire_group_pair!`](crate::wire_group_pair)).

use rust_hdl::core::prelude::*;

/// A junction's right port, one group: what its FF writes and its BP reads of the next layer.
#[derive(LogicInterface, Default)]
#[join = "LeftGroup"]
pub struct RightGroup {
    /// FF finished neuron `w_addr`: activation `w_a`, σ′ `w_sp`.
    pub w_en: Signal<Out, Bit>,
    pub w_addr: Signal<Out, Bits<16>>,
    pub w_a: Signal<Out, Bits<16>>,
    pub w_sp: Signal<Out, Bits<16>>,
    /// BP reads neuron `q_addr`'s delta sum `q_acc` (clearing it on `q_clear`) and σ′ `q_sp`.
    pub q_addr: Signal<Out, Bits<16>>,
    pub q_clear: Signal<Out, Bit>,
    pub q_acc: Signal<In, Bits<32>>,
    pub q_sp: Signal<In, Bits<16>>,
}

/// A junction's left port, one group: the previous junction's [`RightGroup`] seen from here.
#[derive(LogicInterface, Default)]
#[join = "RightGroup"]
pub struct LeftGroup {
    pub w_en: Signal<In, Bit>,
    pub w_addr: Signal<In, Bits<16>>,
    pub w_a: Signal<In, Bits<16>>,
    pub w_sp: Signal<In, Bits<16>>,
    pub q_addr: Signal<In, Bits<16>>,
    pub q_clear: Signal<In, Bit>,
    pub q_acc: Signal<Out, Bits<32>>,
    pub q_sp: Signal<Out, Bits<16>>,
}

/// `n` bundles (one per group).
pub fn groups<T: Default>(n: usize) -> Vec<T> {
    (0..n).map(|_| T::default()).collect()
}

/// Wires a [`RightGroup`] at path `right` to a [`LeftGroup`] at path `left` in the wiring `w`
/// of the composite holding both: `wire_group_pair!(w, [junctions[i].right[q]],
/// [junctions[j].left[q]])`. The field list is the bundles' own.
#[macro_export]
macro_rules! wire_group_pair {
    ($w:expr, [$($r:tt)+], [$($l:tt)+]) => {{
        $crate::wire_group_pair!(@set $w, [$($l)+ . w_en], [$($r)+ . w_en]);
        $crate::wire_group_pair!(@set $w, [$($l)+ . w_addr], [$($r)+ . w_addr]);
        $crate::wire_group_pair!(@set $w, [$($l)+ . w_a], [$($r)+ . w_a]);
        $crate::wire_group_pair!(@set $w, [$($l)+ . w_sp], [$($r)+ . w_sp]);
        $crate::wire_group_pair!(@set $w, [$($l)+ . q_addr], [$($r)+ . q_addr]);
        $crate::wire_group_pair!(@set $w, [$($l)+ . q_clear], [$($r)+ . q_clear]);
        $crate::wire_group_pair!(@set $w, [$($r)+ . q_acc], [$($l)+ . q_acc]);
        $crate::wire_group_pair!(@set $w, [$($r)+ . q_sp], [$($l)+ . q_sp]);
    }};
    (@set $w:expr, [$($d:tt)+], [$($s:tt)+]) => {
        $w.set($crate::to!($($d)+), $crate::at!($w, $($s)+))
    };
}
