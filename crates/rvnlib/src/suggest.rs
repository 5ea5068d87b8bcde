//! "Did you mean": the workspace's one edit-distance rule, from the `suggest`
//! crate (where VPL's reader and irkit's CLI take it too).

pub use suggest::{closest, distance, hint, hint_of};
