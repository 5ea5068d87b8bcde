//! Immutable publication of verified modules (spec section 11).

use crate::ir::Module;
use crate::text;
use std::sync::Arc;

/// An opaque, immutable canonical-text snapshot of a verified module.
///
/// Publishing verifies the module and saves its canonical text; nothing
/// mutable is kept. [`VerifiedModule::materialize`] reads the snapshot into
/// a fresh, separately verified module, so mutating the source module or
/// a materialization never changes the snapshot. Cloning is cheap (shared
/// immutable text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedModule {
    text: Arc<str>,
}

impl VerifiedModule {
    /// Verifies `module` and publishes its canonical text.
    pub fn new(module: &Module) -> Result<Self, text::Error> {
        let text = text::write(module)?;
        Ok(VerifiedModule { text: text.into() })
    }

    /// The canonical text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Reads the snapshot into a fresh module and verifies it.
    pub fn materialize(&self) -> Result<Module, text::Error> {
        text::read(self.text.as_bytes(), "<published module>")
    }
}
