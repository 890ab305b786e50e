//! Stepping a rust-hdl block clock by clock without the threaded `Simulation` harness: the
//! serial transport and the stream drivers need to interleave host I/O with clocks.

use rust_hdl::prelude::*;

/// One full clock period: rising edge (registers update), settle, falling edge, settle.
/// Inputs set before the call are seen at the rising edge; outputs read after it are the new
/// register values and the combinational logic that follows from them.
pub fn tick<B: Block>(uut: &mut B, clock: impl Fn(&mut B) -> &mut Signal<In, Clock>) {
    assert!(
        simulate(uut, 1000),
        "circuit did not settle after its inputs changed"
    );
    clock(uut).next = Clock::from(true);
    assert!(
        simulate(uut, 1000),
        "circuit did not settle after the rising edge"
    );
    clock(uut).next = Clock::from(false);
    assert!(
        simulate(uut, 1000),
        "circuit did not settle after the falling edge"
    );
}
