//! Small helpers every command shares: atomic file writes and JSON output.
pub use edgeflow_hdl::flow::write_atomic;

pub fn print_json(v: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("JSON values serialize")
    );
}
