//! Print the Verilog of the network built from a spec: `cargo run --example verilog -- SPEC`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: verilog SPEC.toml");
    let spec = edgeflow_hdl::core::Spec::load(std::path::Path::new(&path))
        .unwrap_or_else(|e| panic!("{e}"));
    print!("{}", edgeflow_hdl::verilog(&spec));
}
