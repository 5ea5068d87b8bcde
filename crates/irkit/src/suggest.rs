//! "Did you mean": the one edit-distance rule of the workspace (the
//! `suggest` crate, which rvnlib and VPL's reader use too), for the names the
//! CLI looks up itself (ZLM entries, VPL uniforms, built-ins and targets).

pub use suggest::hint;
