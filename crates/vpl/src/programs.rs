//! Built-in programs (spec section 12.5).
//!
//! The four engine programs are checked-in canonical VPL files under
//! `crates/vpl/programs/`; their exact bytes are embedded at build time
//! (`include_bytes!`, so editing a file rebuilds the crate). [`create`]
//! reads the embedded bytes with the file name as diagnostic label,
//! verifies and publishes them. No file is looked up at run time.

use crate::VerifiedModule;
use crate::text;

/// One of the built-in programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Program {
    /// A constant ambient colour from a std140 material block.
    MeshAmbientColor,
    /// The interpolated per-vertex colour.
    VertexAmbientColor,
    /// A texture sampled at interpolated texture coordinates.
    TextureAmbientColor,
    /// A texture modulated by the interpolated per-vertex colour.
    TextureVertexAmbientColor,
}

impl Program {
    /// Every built-in program.
    pub const ALL: [Program; 4] = [
        Program::MeshAmbientColor,
        Program::VertexAmbientColor,
        Program::TextureAmbientColor,
        Program::TextureVertexAmbientColor,
    ];

    /// The program's name (its file name without `.vpl`).
    pub fn name(self) -> &'static str {
        match self {
            Program::MeshAmbientColor => "mesh-ambient-color",
            Program::VertexAmbientColor => "vertex-ambient-color",
            Program::TextureAmbientColor => "texture-ambient-color",
            Program::TextureVertexAmbientColor => "texture-vertex-ambient-color",
        }
    }

    /// The checked-in file name, used as the diagnostic label.
    pub fn file_name(self) -> &'static str {
        match self {
            Program::MeshAmbientColor => "mesh-ambient-color.vpl",
            Program::VertexAmbientColor => "vertex-ambient-color.vpl",
            Program::TextureAmbientColor => "texture-ambient-color.vpl",
            Program::TextureVertexAmbientColor => "texture-vertex-ambient-color.vpl",
        }
    }

    /// The exact embedded source bytes.
    pub fn source(self) -> &'static [u8] {
        match self {
            Program::MeshAmbientColor => include_bytes!("../programs/mesh-ambient-color.vpl"),
            Program::VertexAmbientColor => include_bytes!("../programs/vertex-ambient-color.vpl"),
            Program::TextureAmbientColor => {
                include_bytes!("../programs/texture-ambient-color.vpl")
            }
            Program::TextureVertexAmbientColor => {
                include_bytes!("../programs/texture-vertex-ambient-color.vpl")
            }
        }
    }

    /// The program called `name` (with or without `.vpl`).
    pub fn from_name(name: &str) -> Option<Program> {
        let name = name.strip_suffix(".vpl").unwrap_or(name);
        Program::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Reads, verifies and publishes a built-in program (`Programs_create`).
pub fn create(program: Program) -> Result<VerifiedModule, text::Error> {
    let module = text::read(program.source(), program.file_name())?;
    VerifiedModule::new(&module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_reads_verifies_and_publishes() {
        for program in Program::ALL {
            let published = create(program).unwrap_or_else(|e| panic!("{e}"));
            let again = published.materialize().unwrap();
            assert_eq!(VerifiedModule::new(&again).unwrap(), published);
            assert_eq!(Program::from_name(program.file_name()), Some(program));
        }
        assert_eq!(Program::from_name("missing"), None);
    }

    #[test]
    fn embedded_bytes_equal_the_checked_in_files() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
        for program in Program::ALL {
            let on_disk = std::fs::read(dir.join(program.file_name())).unwrap();
            assert_eq!(on_disk, program.source(), "{}", program.name());
        }
    }
}
