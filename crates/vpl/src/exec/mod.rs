//! A CPU reference executor of verified modules (issue 38).
//!
//! [`Executable::new`] compiles a [`crate::VerifiedModule`] — its
//! verified snapshot and `ModuleInfo`, never a backend's output — into
//! flat per-function operation lists over word offsets (`compile`,
//! `program`); [`draw`] runs the vertex stage per quad vertex and the
//! fragment stage per fragment of the two rasterized triangles, in 2×2
//! quads, on two threads (`raster`, `machine`, `sample`), and returns an
//! RGBA8 [`Image`]. Semantics, allowances and tolerances:
//! `docs/vpl/executor.md`.

mod compile;
mod error;
mod executable;
mod layout;
mod machine;
mod program;
mod raster;
mod request;
mod sample;
mod uniforms;

pub use error::ExecError;
pub use executable::Executable;
pub use raster::{DrawRequest, MAX_SIZE, draw, unorm8};
pub use request::{Attribute, Image, MinFilter, Texture, Wrap};
pub use uniforms::UniformValues;
