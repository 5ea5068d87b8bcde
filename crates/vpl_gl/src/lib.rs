//! Headless OpenGL harness for the VPL GLSL backend.

pub mod context;
pub use context::{ContextError, GlContext};

#[cfg(test)]
mod smoke {
    #[test]
    fn context() {
        let c = super::GlContext::new().unwrap();
        eprintln!("{:?} {}", c.gl_version(), c.renderer());
    }
}
