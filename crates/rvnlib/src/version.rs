//! Container versions: which this crate reads and which it writes. Both the
//! container and the JSON layer depend on these; neither depends on the other
//! for them.

use crate::library::CompiledLibrary;

/// Versions this reader understands: 3 (function keys) and 4 (struct keys too).
pub const READ_VERSIONS: &[i32] = &[3, 4];
/// The version Raven's own reader accepts (`CompiledLibraryFormat.cs`): the
/// writer's first choice.
pub const RAVEN_VERSION: i32 = 3;
/// The version that carries struct keys: written only when a struct's key
/// differs from its name.
pub const STRUCT_KEY_VERSION: i32 = 4;

/// The version a library is written as: [`RAVEN_VERSION`] whenever it is
/// representable there (every struct's key is its name), else
/// [`STRUCT_KEY_VERSION`].
pub fn version_for(library: &CompiledLibrary) -> i32 {
    if library.ir.structs.iter().all(|s| s.key == s.name) {
        RAVEN_VERSION
    } else {
        STRUCT_KEY_VERSION
    }
}
