//! Canonical text format, version 1 (spec sections 10 and 11).
//!
//! [`read`] decodes, parses, binds and verifies a `.vpl` text
//! ([`read_verified`] keeps the verification's facts beside the module);
//! [`write()`] verifies a module and prints its canonical text, reading it
//! back through the verifier before returning it ([`write_verified`] skips
//! the first verification for a module that is already [`Verified`]).

use crate::ir::{Module, Span};
use crate::parallel::{self, PARALLEL_INSTRUCTIONS};
use crate::verify::{ModuleInfo, Threads, Verified};

mod error;
mod float;
mod lexer;
mod reader;
mod writer;

pub use error::{Error, ErrorKind, MAX_NESTING, MAX_REFERENCE_DEPTH, MAX_TYPE_DEPTH};

/// Reads a module from canonical text and verifies it.
///
/// `label` names the source in errors. Every failure is an [`Error`] of
/// kind lexical, syntactic or semantic with a byte offset and a 1-based
/// line/column counted in code points.
///
/// Large inputs are parsed and verified on two threads where the machine
/// has two cores; the module or the error is exactly the one of reading on
/// one thread.
pub fn read(bytes: &[u8], label: &str) -> Result<Module, Error> {
    read_verified(bytes, label).map(Verified::into_module)
}

/// [`read`], keeping what the verification proved beside the module: the
/// form the publication boundary and the backends take, so that a module
/// just read is not verified again before it is written or compiled.
pub fn read_verified(bytes: &[u8], label: &str) -> Result<Verified, Error> {
    let text = lexer::decode(bytes, label).map_err(|e| *e)?;
    read_decoded(text, label)
}

/// [`read_verified`] after UTF-8 validation.
fn read_decoded(text: &str, label: &str) -> Result<Verified, Error> {
    let module = reader::parse(text, label).map_err(|e| *e)?;
    let info = verify_on(&module, label, Threads::Auto).map_err(|mut e| {
        // Name the objects as the text did (the writer's read-back text is
        // canonical, so its names are the canonical ones anyway).
        if let Some(verify) = &e.verify {
            e.message = verify.user_message(&module, text);
        }
        e
    })?;
    Ok(Verified::from_parts(module, info))
}

/// Verifies `module` with the given thread policy and maps a failure to a
/// semantic [`Error`]; objects without a span fall back to the module
/// opening.
fn verify_on(module: &Module, label: &str, threads: Threads) -> Result<ModuleInfo, Error> {
    crate::verify::verify_with(module, threads).map_err(|e| Error {
        kind: ErrorKind::Semantic,
        message: e.to_string(),
        label: label.to_string(),
        position: e.span.or(module.span).unwrap_or(START),
        verify: Some(Box::new(e)),
    })
}

const START: Span = Span {
    offset: 0,
    line: 1,
    column: 1,
};

/// Verifies `module` and returns its canonical text (section 11). The text
/// is read back through the reader and verifier before returning it.
///
/// For large modules the verification of `module` runs on a second thread
/// while this one prints and reads the text back (the reading back itself
/// uses two threads as [`read`] does). The outcome is the one of
/// the sequential order (verify, print, read back): a verification failure
/// wins over whatever printing or reading back found, so diagnostics and
/// output are identical and deterministic.
pub fn write(module: &Module) -> Result<String, Error> {
    let (text, _read_back) = publish(module)?;
    Ok(text)
}

/// [`write()`] for a module that verification has just accepted and that
/// was not changed since: the same text and read-back, without verifying
/// the module a second time.
pub fn write_verified(module: &Verified) -> Result<String, Error> {
    let (text, _read_back) = publish_verified(module)?;
    Ok(text)
}

/// [`write()`], also returning the verified module that reading the text
/// back produced (the publication's snapshot, section 11).
pub(crate) fn publish(module: &Module) -> Result<(String, Verified), Error> {
    publish_with(
        module,
        parallel::instruction_count(module) >= PARALLEL_INSTRUCTIONS && parallel::two_cores(),
    )
}

/// [`write_verified`], also returning the read-back snapshot.
pub(crate) fn publish_verified(module: &Verified) -> Result<(String, Verified), Error> {
    print_and_read_back(module.module(), true)
}

/// [`publish_verified`] for a module the caller gives up: it is dropped
/// once printed, before the text is read back, so that the given module and
/// the read-back are never held at once (a large module's memory is then
/// reused by the read-back instead of touched anew). The text and the
/// read-back are exactly those of [`publish_verified`].
pub(crate) fn publish_owned(module: Verified) -> Result<(String, Verified), Error> {
    let text = print(module.module(), true)?;
    drop(module);
    let read_back = read_back(&text)?;
    Ok((text, read_back))
}

/// [`publish`], verifying the given module beside printing only when
/// `two_threads` is set (the reading back decides on its own).
fn publish_with(module: &Module, two_threads: bool) -> Result<(String, Verified), Error> {
    if two_threads {
        // The given module is verified on the helper thread (on that thread
        // alone: the calling thread is busy printing); printing never
        // panics on an unverified module, and its result is discarded when
        // verification fails.
        let (printed, verified) = parallel::join(
            || print_and_read_back(module, false),
            || verify_on(module, WRITER_LABEL, Threads::One),
        );
        return verified.and(printed);
    }
    publish_sequentially(module)
}

/// [`publish`] on one thread: verify, print, read back.
fn publish_sequentially(module: &Module) -> Result<(String, Verified), Error> {
    verify_on(module, WRITER_LABEL, Threads::One)?;
    print_and_read_back(module, true)
}

/// Prints `module` and reads the text back (every check of [`read`] except
/// re-validating UTF-8, which a `String` already guarantees). Printing may
/// use two threads when `parallel` is set (nothing else runs beside it).
fn print_and_read_back(module: &Module, parallel: bool) -> Result<(String, Verified), Error> {
    let text = print(module, parallel)?;
    let read_back = read_back(&text)?;
    Ok((text, read_back))
}

/// Prints the canonical text of `module` (on two threads when `parallel`
/// is set and the module is large).
fn print(module: &Module, parallel: bool) -> Result<String, Error> {
    writer::print(module, parallel).map_err(|message| Error {
        kind: ErrorKind::Semantic,
        message,
        label: WRITER_LABEL.to_string(),
        position: module.span.unwrap_or(START),
        verify: None,
    })
}

/// Reads printed canonical text back through the reader and verifier
/// (every check of [`read`] except re-validating UTF-8, which a `&str`
/// already guarantees).
fn read_back(text: &str) -> Result<Verified, Error> {
    let text_checked = lexer::decode_str(text, WRITER_LABEL).map_err(|e| *e)?;
    read_decoded(text_checked, WRITER_LABEL)
}

/// The types the canonical text of `module` declares, in declaration
/// order (the read-back module's type table starts with them).
pub(crate) fn type_declaration_order(module: &Module) -> Vec<crate::ir::Handle<crate::ir::Type>> {
    writer::type_order(module)
}

/// The label of errors about a module given to [`write()`].
pub const WRITER_LABEL: &str = "<written module>";

/// The benchmark's module generator, for the tests below.
#[cfg(test)]
#[path = "../../benches/generate.rs"]
#[allow(dead_code)]
pub(crate) mod generate;

#[cfg(test)]
mod parallel_tests;

/// [`write()`] with an explicit choice of verifying beside printing.
#[cfg(test)]
fn write_with(module: &Module, two_threads: bool) -> Result<String, Error> {
    publish_with(module, two_threads).map(|(text, _)| text)
}

/// [`write()`] on one thread.
#[cfg(test)]
fn write_sequentially(module: &Module) -> Result<String, Error> {
    publish_sequentially(module).map(|(text, _)| text)
}

#[cfg(test)]
mod tests {
    use super::generate;
    use super::*;
    use crate::ir::{Handle, InstructionKind, Literal, Value};

    /// A module above the parallel threshold, and its mutations into
    /// invalid ones: the parallel writer answers exactly as the sequential
    /// order does (the verifier's failure wins, printing never panics).
    #[test]
    fn parallel_write_answers_like_sequential_write() {
        let text = generate::module_text(1 << 20);
        let valid = read(text.as_bytes(), "gen").unwrap();
        assert!(parallel::instruction_count(&valid) >= PARALLEL_INSTRUCTIONS);
        let written = write_with(&valid, true).unwrap();
        assert_eq!(written, write_sequentially(&valid).unwrap());
        assert_eq!(
            write(&read(written.as_bytes(), "w").unwrap()).unwrap(),
            written
        );

        fn last(m: &mut Module) -> &mut crate::ir::Function {
            let h = Handle::from_index(m.fragment.functions.len() as u32 - 1);
            &mut m.fragment.functions[h]
        }
        let mut mutants: Vec<Module> = Vec::new();
        // A register type outside the type table (the printer must not panic).
        let mut m = valid.clone();
        for (_, b) in last(&mut m).blocks.iter_mut() {
            for i in &mut b.instructions {
                if let InstructionKind::DeclareLocal { register } = &mut i.kind {
                    register.ty = Handle::from_index(4_000_000);
                }
            }
        }
        mutants.push(m);
        // No entry function (the printer fails, verification wins).
        let mut m = valid.clone();
        m.fragment.entry = None;
        mutants.push(m);
        // A constant of the wrong type (prints and reads back; verification
        // of the given module fails first).
        let mut m = valid.clone();
        for (_, b) in last(&mut m).blocks.iter_mut() {
            for i in &mut b.instructions {
                if let InstructionKind::Binary { rhs, .. } = &mut i.kind
                    && let Value::Constant(c) = &mut rhs.value
                {
                    c.value = Literal::Int(7);
                }
            }
        }
        mutants.push(m);
        for m in &mutants {
            let parallel = write_with(m, true).unwrap_err();
            assert!(parallel.verify.is_some(), "{parallel}");
            assert_eq!(parallel, write_sequentially(m).unwrap_err());
        }
    }
}
