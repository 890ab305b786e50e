//! Placeholder, filled next.
