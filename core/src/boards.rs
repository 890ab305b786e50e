//! The board files compiled into every binary. `boards/*.toml` is the only place a board is
//! described (part, clock, resources, cost-model fit, link, and in `[fpga]` what the FPGA
//! flow needs); the planner, the flow and the benchmarks all read these texts, or a user's
//! file of the same shape.

/// The built-in boards: every example, plan and benchmark may name them.
pub const BUILT_IN: [(&str, &str); 4] = [
    ("icebreaker", include_str!("../../boards/icebreaker.toml")),
    ("alchitry-cu", include_str!("../../boards/alchitry-cu.toml")),
    ("nexys4-ddr", include_str!("../../boards/nexys4-ddr.toml")),
    (
        "opencl-device",
        include_str!("../../boards/opencl-device.toml"),
    ),
];

/// Board files the binary also carries, found by name from any directory but not part of
/// the built-in set that examples and instance generators walk.
pub const BUNDLED: [(&str, &str); 3] = [
    ("ulx3s-85f", include_str!("../../boards/ulx3s-85f.toml")),
    ("ulx3s-45f", include_str!("../../boards/ulx3s-45f.toml")),
    ("ulx3s-12f", include_str!("../../boards/ulx3s-12f.toml")),
];

/// Every board file the binary carries, by board name.
pub fn carried() -> impl Iterator<Item = (&'static str, &'static str)> {
    BUILT_IN.into_iter().chain(BUNDLED)
}

/// The text of the carried board file `name`.
pub fn carried_file(name: &str) -> Option<&'static str> {
    carried().find(|(n, _)| *n == name).map(|(_, t)| t)
}
