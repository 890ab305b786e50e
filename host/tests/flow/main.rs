//! The FPGA flow from the command line: bitstreams for every board family, `fit`, `synth`,
//! `verilog`, `vivado` and `deploy`. One test binary, so that the long place-and-route runs
//! (each tool on one thread) share the machine's cores instead of running one after another.

#[path = "../common/mod.rs"]
mod common;

mod bitstream_alchitry;
mod bitstream_digits;
mod bitstream_linked;
mod bitstream_resident_ulx3s;
mod bitstream_ulx3s;
mod fit_cli;
mod fit_flow;
mod flow_cli;
