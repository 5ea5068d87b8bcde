//! Source lines in the dashboard (issue 35): the source text an artifact
//! was compiled from, kept beside it, and where an execution stands in it.
//!
//! - `irkit tcc register FILE.py` (any frontend source) sends the text
//!   with the artifact; the store keeps it in `artifact_sources`, keyed by
//!   the artifact hash and outside it (the same artifact from a source
//!   that differs only in what compiles to nothing keeps the newest text).
//! - The spans of the artifact (`program.functions[].spans`, one per
//!   instruction, `null` allowed) say which lines an instruction came
//!   from; they are what an execution's location is read from, with or
//!   without the text ([`locate::location`]).
//! - A suspended execution's slots are read from its stored continuation
//!   ([`view`]). The format carries no local names, so slots are shown by
//!   index, the parameters marked.
//!
//! [`rows`]: the stored text and the [`SourceStore`] trait both stores
//! implement (`store::sqlite::source`, `store::pg::source`); [`api`]:
//! `GET /v1/artifacts/{hash}/source`; [`view`]: the execution page's
//! source members; [`cache`]: the parsed artifacts the page reads, kept
//! per host by hash (bounded).

pub mod api;
pub mod cache;
pub mod locate;
pub mod rows;
pub mod view;

pub use locate::{line_of, location};
pub use rows::{ArtifactSource, SourceStore, store_of};

/// Longest source file name kept (bytes).
pub const MAX_FILE_NAME: usize = 256;

/// Checks a source before it is stored: a file name of 1 to
/// [`MAX_FILE_NAME`] bytes, and no NUL in either (`crate::storable`).
pub fn check(source: &ArtifactSource) -> Result<(), String> {
    if source.file.is_empty() || source.file.len() > MAX_FILE_NAME {
        return Err(format!(
            "source file name must be 1 to {MAX_FILE_NAME} bytes"
        ));
    }
    crate::storable::check("source file name", &source.file)?;
    if source.text.contains('\0') {
        return Err("source text contains a NUL character, which the store cannot hold".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_needs_a_file_name_and_no_nul() {
        let ok = ArtifactSource {
            file: "a.py".into(),
            text: "x = 1\n".into(),
        };
        assert!(check(&ok).is_ok());
        assert!(
            check(&ArtifactSource {
                file: String::new(),
                ..ok.clone()
            })
            .is_err()
        );
        assert!(
            check(&ArtifactSource {
                file: "a".repeat(257),
                ..ok.clone()
            })
            .is_err()
        );
        assert!(
            check(&ArtifactSource {
                text: "\0".into(),
                ..ok
            })
            .is_err()
        );
    }
}
