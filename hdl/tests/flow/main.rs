//! The FPGA tool flow on small designs: the stand-in board top through every target, and
//! nextpnr-ecp5's timing of a combinational multiply. One test binary, so that the
//! place-and-route runs (each tool on one thread) share the machine's cores.

mod ecp5_timing;
mod flow_standin;
