//! Canonical text printing (section 11).

use crate::ir::Module;

pub(crate) fn print(_module: &Module) -> Result<String, String> {
    Err("unsupported: the text writer is not implemented yet".into())
}
