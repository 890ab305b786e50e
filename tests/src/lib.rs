//! Integration tests live in tests/tests/. Shared helpers for them live here.

pub mod chain;
pub mod random_spec;
