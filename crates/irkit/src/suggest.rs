//! "Did you mean": the one edit-distance rule of the workspace
//! (`rvnlib::suggest`, where a library first needed it), for the names the
//! CLI looks up itself (ZLM entries, VPL uniforms).

pub use rvnlib::suggest::hint;
