//! Counts of the pipeline's steps on the calling thread, for tests that
//! check every step the specification requires runs exactly once: a parse
//! (section 10), a verification (sections 3–9) and a code emission
//! (section 12). Only test builds count.

use std::cell::Cell;

thread_local! {
    static PARSES: Cell<usize> = const { Cell::new(0) };
    static VERIFICATIONS: Cell<usize> = const { Cell::new(0) };
    static EMISSIONS: Cell<usize> = const { Cell::new(0) };
}

/// A pipeline step.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Parse,
    Verify,
    Emit,
}

/// Counts one `step` on this thread.
pub(crate) fn count(step: Step) {
    let cell = match step {
        Step::Parse => &PARSES,
        Step::Verify => &VERIFICATIONS,
        Step::Emit => &EMISSIONS,
    };
    cell.with(|c| c.set(c.get() + 1));
}

/// The (parses, verifications, emissions) `run` performed on this thread.
pub(crate) fn counted(run: impl FnOnce()) -> (usize, usize, usize) {
    let now = || {
        (
            PARSES.with(Cell::get),
            VERIFICATIONS.with(Cell::get),
            EMISSIONS.with(Cell::get),
        )
    };
    let before = now();
    run();
    let after = now();
    (after.0 - before.0, after.1 - before.1, after.2 - before.2)
}

#[cfg(test)]
mod tests {
    use super::counted;
    use crate::backends::glsl::{self, VERSION_420};
    use crate::text;
    use crate::{VerifiedModule, programs};

    fn source() -> &'static [u8] {
        programs::Program::TextureVertexAmbientColor.source()
    }

    #[test]
    fn reading_parses_and_verifies_once() {
        assert_eq!(
            counted(|| drop(text::read_verified(source(), "t").unwrap())),
            (1, 1, 0)
        );
    }

    #[test]
    fn writing_a_module_just_read_does_not_verify_it_again() {
        let module = text::read_verified(source(), "t").unwrap();
        // Print, then the read-back: one parse, one verification.
        assert_eq!(
            counted(|| drop(text::write_verified(&module).unwrap())),
            (1, 1, 0)
        );
        assert_eq!(
            counted(|| drop(VerifiedModule::publish(&module).unwrap())),
            (1, 1, 0)
        );
        // A plain module is verified first.
        let plain = module.module().clone();
        assert_eq!(counted(|| drop(text::write(&plain).unwrap())), (1, 2, 0));
        assert_eq!(
            counted(|| drop(VerifiedModule::new(&plain).unwrap())),
            (1, 2, 0)
        );
    }

    #[test]
    fn compiling_a_publication_neither_parses_nor_verifies() {
        let module = text::read_verified(source(), "t").unwrap();
        let published = VerifiedModule::publish(&module).unwrap();
        assert_eq!(
            counted(|| drop(glsl::compile(&published, VERSION_420).unwrap())),
            (0, 0, 1)
        );
        // Target checks alone emit nothing.
        assert_eq!(
            counted(|| glsl::check_verified(&module).unwrap()),
            (0, 0, 0)
        );
        // materialize() is a fresh, separately verified module.
        assert_eq!(
            counted(|| drop(published.materialize().unwrap())),
            (1, 1, 0)
        );
    }

    /// The whole `irkit vpl glsl` pipeline: read, publish, compile.
    #[test]
    fn the_glsl_pipeline_runs_each_step_once_per_module() {
        let steps = counted(|| {
            let module = text::read_verified(source(), "t").unwrap();
            let published = VerifiedModule::publish(&module).unwrap();
            drop(glsl::compile(&published, VERSION_420).unwrap());
        });
        // Two parses and verifications: the input (section 10) and the
        // publication's read-back (section 11), which is the backend's
        // snapshot (section 12).
        assert_eq!(steps, (2, 2, 1));
    }
}
