//! Debug helper: the host-link words of a check for a spec, and both answers.
fn main() {
    let path = std::env::args().nth(1).expect("usage: cosim_dump SPEC");
    let spec = edgeflow_core::Spec::load(std::path::Path::new(&path)).unwrap();
    let data = edgeflow_hdl::testbench::rtl::random_data(&spec, 4, 1);
    let (words, reply) = edgeflow_hdl::testbench::rtl::check_stream(&spec, &data);
    let mut sim = edgeflow_hdl::testbench::rtl::RtlSim::new(&spec, None).unwrap();
    let want = sim.raw(&words, reply).unwrap();
    let got = edgeflow_hdl::testbench::rtl::iverilog_run(&spec, &words, reply, 100000)
        .unwrap()
        .unwrap_or_default();
    println!("model   {:04x?}", want);
    println!("verilog {:04x?}", got);
}
