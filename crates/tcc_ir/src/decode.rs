//! Strict decoder of the artifact JSON.

use crate::artifact::Artifact;
use crate::error::{EncodingErrorKind, IrError};

/// Decodes an artifact from JSON bytes.
pub fn decode_artifact(bytes: &[u8]) -> Result<Artifact, IrError> {
    let _ = bytes;
    Err(IrError::InvalidEncoding {
        kind: EncodingErrorKind::Syntax,
        path: "$".into(),
        offset: 0,
        message: "decoder not implemented yet".into(),
    })
}
