//! The 16-bit word stream under valid/ready that the host link, its UART transport and the
//! board-to-board link pass between blocks: a word passes on a clock where `valid` and
//! `ready` are both high. [`WordSink`] is the receiver's side, [`WordSource`] the sender's;
//! both carry the same field names, so a pair is wired from one list
//! ([`wire_words!`](crate::wire_words)).
//!
//! The tops (`Network`, `ResidentNetwork` and their stand-in) keep the flat port names of
//! hdl/PROTOCOL.md (`in_data`, `in_valid`, …): they are the contract that harnesses, the
//! Vivado export and users' designs instantiate, and a bundle at a top would rename them.

use rust_hdl::core::prelude::*;

/// A word stream seen from its receiver.
#[derive(LogicInterface, Default)]
#[join = "WordSource"]
pub struct WordSink {
    pub data: Signal<In, Bits<16>>,
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
}

/// A word stream seen from its sender.
#[derive(LogicInterface, Default)]
#[join = "WordSink"]
pub struct WordSource {
    pub data: Signal<Out, Bits<16>>,
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
}

/// Wires a word stream from `from` to `to` in the wiring `w` of a composite: `data` and
/// `valid` go from → to, `ready` comes back. The same field list serves a source joined to a
/// sibling's sink (`wire_words!(w, [uart.host_in], [link.host_in])`), the composite's own
/// sink handed to a child (`[host_in]`, `[core.host_in]`) and a child's source handed out
/// (`[core.host_out]`, `[host_out]`).
#[macro_export]
macro_rules! wire_words {
    ($w:expr, [$($f:tt)+], [$($t:tt)+]) => {{
        $w.set($crate::to!($($t)+ . data), $crate::at!($w, $($f)+ . data));
        $w.set($crate::to!($($t)+ . valid), $crate::at!($w, $($f)+ . valid));
        $w.set($crate::to!($($f)+ . ready), $crate::at!($w, $($t)+ . ready));
    }};
}
