//! The configuration the host hands the kernels (one `int` buffer: the stage's fields, then
//! one record per junction), its layout written once. The Rust side indexes the buffer with
//! these constants; the kernel source gets the same names as `#define`s, generated from this
//! table and put in front of kernels/edgeflow.cl ([`kernel_source`]).

macro_rules! layout {
    ($($name:ident = $v:expr; $doc:literal)*) => {
        $(#[doc = $doc] pub const $name: usize = $v;)*
        /// Every field: its name, index and what it holds.
        pub const FIELDS: &[(&str, usize, &str)] = &[$((stringify!($name), $v, $doc)),*];
    };
}

layout! {
    C_NJ = 0; "junctions in the stage"
    C_FRAC = 1; "fraction bits"
    C_VMIN = 2; "smallest raw value"
    C_VMAX = 3; "largest raw value"
    C_SHIFT = 4; "learning-rate shift"
    C_DROP = 5; "low bits an activation table's index ignores"
    C_IBITS = 6; "activation table index bits"
    C_DEPTH = 7; "ring slots (samples in flight in the stage)"
    C_STRIDE = 8; "shorts per ring slot"
    C_SAMPLES = 9; "samples in the current stream"
    C_LAST = 10; "1 when the stage ends with the output layer"
    C_HIDDEN = 11; "hidden activation: 0 from a table (σ′ multiplies), 1 ReLU (σ′ gates)"
    C_ONE = 12; "raw 1.0, saturated"
    C_FIRST = 13; "1 when the stage starts with the network's inputs (j0 = 0)"
    C_OUT_FIRST = 14; "output delta stops at this σ when its class is not the label's"
    C_OUT_LAST = 15; "... and at this σ when it is (INT_MIN: never)"
    C_ROUNDING = 16; "rounding of the updates: 0 nearest, 1 stochastic"
    C_FF_SAT = 17; "FF products: 0 rounded (only the sum saturates), 1 saturated too"
    C_JUNC = 18; "first junction record"
    C_JSIZE = 17; "ints per junction record"
    J_NL = 0; "left layer size"
    J_NR = 1; "right layer size"
    J_FI = 2; "fan-in"
    J_Z = 3; "lanes: the clock structure, and edge e's rounding stream is lane e mod z"
    J_WOFF = 4; "first weight / edge"
    J_BOFF = 5; "first bias"
    J_FF = 6; "FF block-cycle offset in the global schedule"
    J_BP = 7; "BP/UP block-cycle offset in the global schedule"
    J_ACT = 8; "right layer's activation: 0 from its table, 1 ReLU, 2 ReLU whose gate shuts when clipped"
    J_AL = 9; "ring offset of the left activations"
    J_AR = 10; "ring offset of the right activations"
    J_SPL = 11; "ring offset of the left σ′"
    J_SPR = 12; "ring offset of the right σ′"
    J_DL = 13; "ring offset of the left deltas"
    J_DR = 14; "ring offset of the right deltas"
    J_LOFF = 15; "first lane stream of the junction"
    J_TAB = 16; "first entry of the right layer's table in the table buffers"
}

/// The kernels' source as the device compiles it: the layout's `#define`s, then
/// kernels/edgeflow.cl.
pub fn kernel_source() -> String {
    let mut s = String::from("// ---- cfg layout, generated from opencl/src/layout.rs ----\n");
    for (name, v, doc) in FIELDS {
        s += &format!("#define {name} {v} // {doc}\n");
    }
    s + "\n" + KERNELS
}

const KERNELS: &str = include_str!("../../kernels/edgeflow.cl");

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels use the layout only through the generated names: no field is defined twice,
    /// stage fields and junction-record fields each have distinct indices, and the source
    /// itself defines none of them.
    #[test]
    fn the_layout_is_defined_once() {
        for (name, _, _) in FIELDS {
            assert!(
                !KERNELS.contains(&format!("#define {name} ")),
                "{name} in the .cl"
            );
            assert!(KERNELS.contains(name), "{name} unused by the kernels");
        }
        for prefix in ["C_", "J_"] {
            let mut seen: Vec<usize> = FIELDS
                .iter()
                .filter(|(n, _, _)| n.starts_with(prefix) && *n != "C_JSIZE")
                .map(|(_, v, _)| *v)
                .collect();
            let n = seen.len();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), n, "{prefix} indices repeat");
        }
        let j = FIELDS
            .iter()
            .filter(|(n, _, _)| n.starts_with("J_"))
            .count();
        assert_eq!(j, C_JSIZE, "a junction record holds every J_ field");
        assert_eq!(
            C_JUNC,
            FIELDS
                .iter()
                .filter(|(n, _, _)| n.starts_with("C_"))
                .count()
                - 2
        );
        assert!(kernel_source().starts_with("// ---- cfg layout"));
    }
}
