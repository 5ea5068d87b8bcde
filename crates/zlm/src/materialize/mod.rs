//! Materializers (C0-EXEC-002): deterministic translations of a checked
//! module into another executable form that preserves the reference
//! interpreter's observable behaviour.

pub mod c;
pub mod lowered;
