//! Driving any block with the host-link ports (hdl/PROTOCOL.md) from Rust, clock by clock:
//! the stream driver the RTL tests and the co-simulation share. The Verilator harness
//! (`flow::verilator`) applies exactly the same per-clock rule, so clock counts compare.

use crate::sim_util::tick;
use rust_hdl::prelude::*;

/// Access to the host-link ports of a block. `host_link_ports_impl!()` implements it for a
/// block whose fields carry the PROTOCOL.md names.
pub trait HostLinkPorts: Block {
    fn clock_port(&mut self) -> &mut Signal<In, Clock>;
    fn in_data_port(&mut self) -> &mut Signal<In, Bits<16>>;
    fn in_valid_port(&mut self) -> &mut Signal<In, Bit>;
    fn in_ready_port(&mut self) -> &mut Signal<Out, Bit>;
    fn out_data_port(&mut self) -> &mut Signal<Out, Bits<16>>;
    fn out_valid_port(&mut self) -> &mut Signal<Out, Bit>;
    fn out_ready_port(&mut self) -> &mut Signal<In, Bit>;
}

#[macro_export]
macro_rules! host_link_ports_impl {
    () => {
        fn clock_port(&mut self) -> &mut Signal<In, Clock> {
            &mut self.clock
        }
        fn in_data_port(&mut self) -> &mut Signal<In, Bits<16>> {
            &mut self.in_data
        }
        fn in_valid_port(&mut self) -> &mut Signal<In, Bit> {
            &mut self.in_valid
        }
        fn in_ready_port(&mut self) -> &mut Signal<Out, Bit> {
            &mut self.in_ready
        }
        fn out_data_port(&mut self) -> &mut Signal<Out, Bits<16>> {
            &mut self.out_data
        }
        fn out_valid_port(&mut self) -> &mut Signal<Out, Bit> {
            &mut self.out_valid
        }
        fn out_ready_port(&mut self) -> &mut Signal<In, Bit> {
            &mut self.out_ready
        }
    };
}

/// Whether the host accepts an output word on clock `clk`: always when `stall` is 0, else
/// every clock but each `stall`-th. The Verilator harness uses the same rule.
pub fn out_ready_at(clk: u64, stall: u64) -> bool {
    stall == 0 || clk % stall != stall - 1
}

/// Why a stream exchange with a simulated block did not complete.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("no answer after {max_clocks} clocks: {sent} of {words} words sent, {received} of {expect} received")]
    NoAnswer {
        max_clocks: u64,
        sent: usize,
        words: usize,
        received: usize,
        expect: usize,
    },
    #[error("the design's combinational logic does not settle")]
    Unsettled,
}

/// Feed `words` into the `in` stream as fast as the block takes them and collect `expect`
/// words from the `out` stream. Returns the words and the number of clocks up to and
/// including the one on which the last expected word moved.
pub fn run_words<B: HostLinkPorts>(
    uut: &mut B,
    words: &[u16],
    expect: usize,
    stall: u64,
    max_clocks: u64,
) -> Result<(Vec<u16>, u64), StreamError> {
    let mut next = 0;
    let mut out = Vec::with_capacity(expect);
    let mut clk = 0u64;
    while out.len() < expect {
        if clk >= max_clocks {
            return Err(StreamError::NoAnswer {
                max_clocks,
                sent: next,
                words: words.len(),
                received: out.len(),
                expect,
            });
        }
        let w = words.get(next).copied();
        uut.in_valid_port().next = w.is_some();
        uut.in_data_port().next = (w.unwrap_or(0) as u64).into();
        uut.out_ready_port().next = out_ready_at(clk, stall);
        if !simulate(uut, 1000) {
            return Err(StreamError::Unsettled);
        }
        let took = uut.in_valid_port().val() && uut.in_ready_port().val();
        let got = uut.out_valid_port().val() && uut.out_ready_port().val();
        let word = uut.out_data_port().val().index() as u16;
        tick(uut, |u| u.clock_port());
        clk += 1;
        if took {
            next += 1;
        }
        if got {
            out.push(word);
        }
    }
    Ok((out, clk))
}
