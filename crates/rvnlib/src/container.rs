//! The `.rvnlib` container: magic `RVNLIB` + 0x1A, int32 LE version, int32 LE
//! payload length, then the compact UTF-8 JSON of the whole library.

use crate::json::{self, JsonError};
use crate::library::CompiledLibrary;
use crate::verify::{self, VerifyError};

/// `RVNLIB` followed by the DOS end-of-file byte.
pub const MAGIC: &[u8; 7] = b"RVNLIB\x1A";
/// The sibling compiled-effect container's magic, refused with its own error.
pub const EFFECT_MAGIC: &[u8; 6] = b"RVNFX\x1A";
/// Bytes before the payload.
pub const HEADER_LEN: usize = 15;
pub use crate::version::{RAVEN_VERSION, READ_VERSIONS, STRUCT_KEY_VERSION, version_for};

/// Why bytes are not a readable library.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The magic number does not match.
    #[error("not a Raven compiled library: the magic number does not match `RVNLIB\\x1A`")]
    NotALibrary,
    /// The file is a compiled effect (`.rvnfx`), not a library.
    #[error("this is a compiled effect (.rvnfx), not a library (.rvnlib)")]
    Effect,
    /// The file is the indented inspection JSON, which is deliberately not accepted.
    #[error(
        "this is the indented inspection JSON (`irkit rvn inspect` / WriteJson), which the reader deliberately refuses; read the .rvnlib container instead"
    )]
    InspectionJson,
    /// A container version this reader does not know.
    #[error("compiled library is version {found}; this reader understands versions 3 and 4")]
    UnsupportedVersion {
        /// The version found.
        found: i32,
    },
    /// The header or the payload runs past the end of the bytes.
    #[error(
        "compiled library is truncated: {what} needs {needed} bytes but only {available} are present"
    )]
    Truncated {
        /// `header` or `payload`.
        what: &'static str,
        /// Bytes needed from the start of the file.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// The payload length is negative.
    #[error("compiled library declares a negative payload length ({length})")]
    NegativeLength {
        /// The declared length.
        length: i32,
    },
    /// Bytes follow the payload.
    #[error("{count} trailing byte(s) after the payload, starting at byte {offset}")]
    TrailingBytes {
        /// Offset of the first extra byte.
        offset: u64,
        /// How many.
        count: u64,
    },
    /// The payload is not the library's JSON.
    #[error("compiled library has an unreadable payload: {0}")]
    Json(#[from] JsonError),
    /// The library decoded but failed verification.
    #[error("library failed verification ({} error(s))", .0.len())]
    Invalid(Vec<VerifyError>),
}

impl ReadError {
    /// The diagnostic kind, from the closed set of `docs/diagnostics.md`:
    /// `encoding` for the container and its JSON, `semantic` for the verifier.
    pub fn kind(&self) -> &'static str {
        match self {
            ReadError::Invalid(_) => "semantic",
            _ => "encoding",
        }
    }

    /// The stable code (`docs/diagnostics.md`); a verification failure
    /// carries one code per finding ([`VerifyError::code`]) instead.
    pub fn code(&self) -> Option<&'static str> {
        Some(match self {
            ReadError::NotALibrary => "RVN-NOT-A-LIBRARY",
            ReadError::Effect => "RVN-EFFECT",
            ReadError::InspectionJson => "RVN-INSPECTION-JSON",
            ReadError::UnsupportedVersion { .. } => "RVN-VERSION",
            ReadError::Truncated { .. } | ReadError::NegativeLength { .. } => "RVN-TRUNCATED",
            ReadError::TrailingBytes { .. } => "RVN-TRAILING-BYTES",
            ReadError::Json(e) => e.code(),
            ReadError::Invalid(_) => return None,
        })
    }

    /// Byte offset into the file, where known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReadError::NotALibrary | ReadError::Effect | ReadError::InspectionJson => Some(0),
            ReadError::UnsupportedVersion { .. } => Some(7),
            ReadError::NegativeLength { .. } => Some(11),
            ReadError::Truncated { available, .. } => Some(*available),
            ReadError::TrailingBytes { offset, .. } => Some(*offset),
            ReadError::Json(e) => e.offset().map(|o| (o + HEADER_LEN) as u64),
            ReadError::Invalid(_) => None,
        }
    }
}

/// Why a library cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The version is not one this writer produces.
    #[error("cannot write container version {0}; this writer produces versions 3 and 4")]
    UnsupportedVersion(i32),
    /// Version 3 has no struct keys, so a struct whose key differs from its name would be lost.
    #[error("version 3 has no struct keys: struct `{name}` has key `{key}`")]
    StructKeyNeedsVersion4 {
        /// Struct name.
        name: String,
        /// Struct key.
        key: String,
    },
    /// The payload does not fit the int32 length field.
    #[error("payload of {0} bytes does not fit the container's int32 length")]
    TooLarge(usize),
}

/// The container header and payload of a library, unverified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container<'a> {
    /// Container version.
    pub version: i32,
    /// The JSON payload.
    pub payload: &'a [u8],
}

/// Splits bytes into version and payload, refusing anything that is not exactly one container.
pub fn open(bytes: &[u8]) -> Result<Container<'_>, ReadError> {
    if bytes.starts_with(EFFECT_MAGIC) {
        return Err(ReadError::Effect);
    }
    let prefix = bytes.len().min(MAGIC.len());
    if bytes[..prefix] != MAGIC[..prefix] || bytes.is_empty() {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        return Err(if first == Some(&b'{') {
            ReadError::InspectionJson
        } else {
            ReadError::NotALibrary
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(ReadError::Truncated {
            what: "header",
            needed: HEADER_LEN as u64,
            available: bytes.len() as u64,
        });
    }
    let version = read_i32(&bytes[7..11]);
    if !READ_VERSIONS.contains(&version) {
        return Err(ReadError::UnsupportedVersion { found: version });
    }
    let length = read_i32(&bytes[11..15]);
    let Ok(length) = usize::try_from(length) else {
        return Err(ReadError::NegativeLength { length });
    };
    let end = HEADER_LEN + length;
    if end > bytes.len() {
        return Err(ReadError::Truncated {
            what: "payload",
            needed: end as u64,
            available: bytes.len() as u64,
        });
    }
    if end < bytes.len() {
        return Err(ReadError::TrailingBytes {
            offset: end as u64,
            count: (bytes.len() - end) as u64,
        });
    }
    Ok(Container {
        version,
        payload: &bytes[HEADER_LEN..end],
    })
}

fn read_i32(bytes: &[u8]) -> i32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[..4]);
    i32::from_le_bytes(word)
}

/// Decodes a container without running the verifier.
pub fn read_unverified(bytes: &[u8]) -> Result<(i32, CompiledLibrary), ReadError> {
    let container = open(bytes)?;
    let library = json::from_json(container.payload, container.version)?;
    Ok((container.version, library))
}

/// Reads and verifies a library (cross-library references are left to the linker).
pub fn read(bytes: &[u8]) -> Result<CompiledLibrary, ReadError> {
    let (_, library) = read_unverified(bytes)?;
    let errors = verify::verify_library(&library);
    if errors.is_empty() {
        Ok(library)
    } else {
        Err(ReadError::Invalid(errors))
    }
}

/// Writes a library as a container of [`version_for`] it: version 3, which
/// Raven's reader accepts, whenever every struct's key is its name; version 4
/// only when it is not.
pub fn write(library: &CompiledLibrary) -> Result<Vec<u8>, WriteError> {
    write_version(library, version_for(library))
}

/// Writes a library as a container of `version` (3 or 4).
pub fn write_version(library: &CompiledLibrary, version: i32) -> Result<Vec<u8>, WriteError> {
    if !READ_VERSIONS.contains(&version) {
        return Err(WriteError::UnsupportedVersion(version));
    }
    if version == 3
        && let Some(s) = library.ir.structs.iter().find(|s| s.key != s.name)
    {
        return Err(WriteError::StructKeyNeedsVersion4 {
            name: s.name.clone(),
            key: s.key.clone(),
        });
    }
    let payload = json::to_compact_json(library, version);
    frame(version, payload.as_bytes())
}

fn frame(version: i32, payload: &[u8]) -> Result<Vec<u8>, WriteError> {
    let length = i32::try_from(payload.len()).map_err(|_| WriteError::TooLarge(payload.len()))?;
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Vec<u8> {
        write(&CompiledLibrary::new("X")).unwrap()
    }

    /// Changed by issue 19: a library representable in version 3 is written as
    /// version 3, the only version Raven's reader accepts
    /// (`CompiledLibraryFormat.cs` 59, 131: `version != Version` refuses).
    #[test]
    fn header_layout() {
        let bytes = good();
        assert_eq!(&bytes[..7], b"RVNLIB\x1A");
        assert_eq!(&bytes[7..11], &3i32.to_le_bytes());
        assert_eq!(
            i32::from_le_bytes([bytes[11], bytes[12], bytes[13], bytes[14]]) as usize,
            bytes.len() - 15
        );
        assert_eq!(read(&bytes).unwrap(), CompiledLibrary::new("X"));
    }

    #[test]
    fn each_refusal_is_distinct() {
        let bytes = good();
        assert_eq!(open(b"").unwrap_err(), ReadError::NotALibrary);
        assert_eq!(open(b"PK\x03\x04 zip").unwrap_err(), ReadError::NotALibrary);
        assert_eq!(
            open(b"RVNFX\x1A\x01\x00\x00\x00").unwrap_err(),
            ReadError::Effect
        );
        assert_eq!(
            open(b"  {\"Name\": 1}").unwrap_err(),
            ReadError::InspectionJson
        );
        assert!(matches!(
            open(b"RVNL").unwrap_err(),
            ReadError::Truncated { what: "header", .. }
        ));
        assert!(matches!(
            open(&bytes[..14]).unwrap_err(),
            ReadError::Truncated { what: "header", .. }
        ));
        assert!(matches!(
            open(&bytes[..bytes.len() - 1]).unwrap_err(),
            ReadError::Truncated {
                what: "payload",
                ..
            }
        ));
        let mut negative = bytes.clone();
        negative[11..15].copy_from_slice(&(-5i32).to_le_bytes());
        assert_eq!(
            open(&negative).unwrap_err(),
            ReadError::NegativeLength { length: -5 }
        );
        for version in [0i32, 1, 2, 5, 99, -1] {
            let mut other = bytes.clone();
            other[7..11].copy_from_slice(&version.to_le_bytes());
            let error = open(&other).unwrap_err();
            assert_eq!(error, ReadError::UnsupportedVersion { found: version });
            assert!(error.to_string().contains("versions 3 and 4"));
        }
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            open(&trailing).unwrap_err(),
            ReadError::TrailingBytes {
                offset: bytes.len() as u64,
                count: 1
            }
        );
        let mut empty_payload = bytes[..15].to_vec();
        empty_payload[11..15].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(
            read(&empty_payload).unwrap_err().code(),
            Some("RVN-JSON-SYNTAX")
        );
    }

    #[test]
    fn version_3_cannot_carry_struct_keys() {
        let mut lib = CompiledLibrary::new("X");
        lib.ir.structs.push(crate::ir::LibraryIrStruct {
            key: "X::S".into(),
            name: "S".into(),
            fields: vec![],
        });
        assert!(matches!(
            write_version(&lib, 3),
            Err(WriteError::StructKeyNeedsVersion4 { .. })
        ));
        assert!(matches!(
            write_version(&lib, 5),
            Err(WriteError::UnsupportedVersion(5))
        ));
        assert!(write_version(&lib, 4).is_ok());
        // `write` picks 4 only because the key differs from the name …
        assert_eq!(version_for(&lib), 4);
        assert_eq!(&write(&lib).unwrap()[7..11], &4i32.to_le_bytes());
        // … and 3 as soon as it does not.
        lib.ir.structs[0].key = "S".into();
        assert_eq!(version_for(&lib), 3);
        let bytes = write(&lib).unwrap();
        assert_eq!(&bytes[7..11], &3i32.to_le_bytes());
        assert_eq!(read(&bytes).unwrap(), lib);
    }
}
