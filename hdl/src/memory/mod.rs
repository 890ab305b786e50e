//! The memories: banked weight RAM, the copy memories of activations and σ′, the delta
//! memory, and the resident data memory of a board top (on chip, or the board's SDRAM).

pub mod banked_ram;
pub mod copy_memory;
pub mod data_memory;
pub mod delta_memory;
pub mod sdram_memory;

/// Words one `initial` zeroing loop covers: yosys 0.23 unrolls a loop into one statement a
/// word and takes time quadratic in the statements of one initial block, so a deeper memory
/// is zeroed by several loops (Icarus and Verilator run them one after another at time 0).
const ZERO_LOOP_WORDS: usize = 1024;

/// The Verilog that zeroes words `0..depth` of the memories `mems` at time 0, with the
/// module's `integer i` as the loop variable; `zero` is the literal written.
pub fn zero_init(mems: &[&str], depth: usize, zero: &str) -> String {
    let body = match mems {
        [m] => format!("{m}[i] = {zero};"),
        _ => {
            let each: Vec<String> = mems.iter().map(|m| format!("{m}[i] = {zero};")).collect();
            format!("begin {} end", each.join(" "))
        }
    };
    (0..depth.max(1))
        .step_by(ZERO_LOOP_WORDS)
        .map(|k| {
            let end = (k + ZERO_LOOP_WORDS).min(depth);
            format!("initial for (i = {k}; i < {end}; i = i + 1) {body}\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::zero_init;

    /// A memory of at most ZERO_LOOP_WORDS words keeps its single loop; a deeper one gets a
    /// loop per 1,024 words, and in Icarus (X until the loops run) every word of both
    /// memories, the last included, reads 0.
    #[test]
    fn zeroing_loops_cover_every_word() {
        assert_eq!(
            zero_init(&["m"], 640, "16'sd0"),
            "initial for (i = 0; i < 640; i = i + 1) m[i] = 16'sd0;\n"
        );
        let deep = zero_init(&["a", "b"], 2500, "0");
        assert_eq!(
            deep,
            "initial for (i = 0; i < 1024; i = i + 1) begin a[i] = 0; b[i] = 0; end\n\
             initial for (i = 1024; i < 2048; i = i + 1) begin a[i] = 0; b[i] = 0; end\n\
             initial for (i = 2048; i < 2500; i = i + 1) begin a[i] = 0; b[i] = 0; end\n"
        );
        let tb = format!(
            "module tb;\nreg [15:0] a [0:2499];\nreg [15:0] b [0:2499];\ninteger i;\ninteger j;\n\
             integer bad;\n{deep}initial begin\n    #1;\n    bad = 0;\n\
             for (j = 0; j < 2500; j = j + 1) if (a[j] !== 16'd0 || b[j] !== 16'd0) bad = bad + 1;\n\
             $display(\"bad %0d\", bad);\nend\nendmodule\n"
        );
        if let Some(out) = crate::testing::icarus_run(&tb, "zero-init") {
            assert!(out.contains("bad 0"), "{out}");
        }
    }
}
