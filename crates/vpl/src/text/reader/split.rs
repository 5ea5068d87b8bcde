//! Reading a large `functions` form on two threads (see
//! [`Reader::functions`]): the candidate split point, the helper reader's
//! snapshot of the bindings, and the adoption of its functions, which
//! makes the result exactly the sequential reader's.

use super::{FunctionScope, Reader, StageScope};
use crate::ir::{Function, Handle, Module, StageKind};
use crate::text::lexer::{Error, Lexer};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// The second part of a `functions` form, read on a helper thread.
struct Forked<'a> {
    reader: Reader<'a>,
    scope: StageScope<'a>,
    /// `Ok(true)` when the form was read up to its `)`, `Ok(false)` when
    /// the fork stopped early (asked to, or missing a scalar type), or the
    /// first error after the fork's start.
    outcome: Result<bool, Error>,
}

#[cfg(test)]
thread_local! {
    /// How many forks this thread's readers adopted (tests check that the
    /// parallel path really ran).
    pub(crate) static ADOPTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl<'a> Reader<'a> {
    /// The functions of a `functions` form, up to its `)`.
    ///
    /// Large forms are read on two threads: a helper reads from a function
    /// start near the middle (found by a text search, so only a candidate)
    /// with a snapshot of everything the functions can refer to, while
    /// this thread reads up to that offset. The helper's part is adopted
    /// only when this thread arrives exactly at the candidate between two
    /// functions, with no error, so that the helper started in the state
    /// the sequential reader has there; otherwise (or when the helper
    /// needed a scalar type its snapshot lacks) this thread reads on alone
    /// and the helper's work is discarded. Errors are therefore those of
    /// the sequential reader: an error before the split wins, then
    /// duplicates of earlier function IDs, then the helper's first error.
    pub(super) fn functions(
        &mut self,
        kind: StageKind,
        scope: &mut StageScope<'a>,
    ) -> Result<(), Error> {
        if let Some(split) = self.split_candidate(kind) {
            let fork = self.fork_at(kind, split);
            let stop = AtomicBool::new(false);
            let (reached, forked) = crate::parallel::join(
                || {
                    let reached = self.functions_until(kind, scope, split);
                    if !matches!(reached, Ok(true)) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    reached
                },
                || fork.functions_to_end(kind, &stop),
            );
            if reached? && self.adopt(kind, scope, forked)? {
                return Ok(());
            }
        }
        while !self.at_close()? {
            self.function(kind, scope)?;
        }
        Ok(())
    }

    /// A function start near the middle of the rest of the stage, when it
    /// is large enough to read on two threads: `(function` at the start of
    /// a line (after blanks) and followed by a blank.
    fn split_candidate(&self, kind: StageKind) -> Option<usize> {
        if self.fork || !self.parallel || self.peeked.is_some() {
            return None;
        }
        let text = self.lexer.text();
        let here = self.lexer.offset();
        let end = match kind {
            StageKind::Vertex => text[here..]
                .find("(fragment")
                .map_or(text.len(), |i| here + i),
            StageKind::Fragment => text.len(),
        };
        if end - here < super::PARALLEL_READ_BYTES {
            return None;
        }
        let mut from = here + (end - here) / 2;
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let bytes = text.as_bytes();
        while let Some(i) = text[from..end].find("(function") {
            let at = from + i;
            let line_start = bytes[..at]
                .iter()
                .rposition(|&b| b != b' ' && b != b'\t')
                .is_none_or(|j| bytes[j] == b'\n' || bytes[j] == b'\r');
            let blank_after = bytes
                .get(at + "(function".len())
                .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            if line_start && blank_after {
                return Some(at);
            }
            from = at + 1;
        }
        None
    }

    /// A reader for the part of the current `functions` form from byte
    /// `at`, with copies of the bindings its functions can refer to.
    fn fork_at(&self, kind: StageKind, at: usize) -> Reader<'a> {
        let mut module = Module::new();
        module.types = self.module.types.clone();
        module.uniforms = self.module.uniforms.clone();
        module.stage_mut(kind).interface = self.module.stage(kind).interface.clone();
        Reader {
            lexer: Lexer::starting_at(self.lexer.text(), self.label, at),
            peeked: None,
            depth: self.depth,
            label: self.label,
            module,
            type_ids: self.type_ids.clone(),
            uniform_ids: self.uniform_ids.clone(),
            scalar_types: self.scalar_types,
            current_stage: kind,
            interface_ids: self.interface_ids.clone(),
            field_index: HashMap::default(),
            instructions: Vec::new(),
            function_scope: FunctionScope::default(),
            parallel: false,
            fork: true,
            missing_scalar: false,
        }
    }

    /// Reads functions until the next one would start at byte `split`:
    /// `Ok(true)` when it does (between two functions, nothing peeked),
    /// `Ok(false)` when the form ended or the reader passed `split`.
    fn functions_until(
        &mut self,
        kind: StageKind,
        scope: &mut StageScope<'a>,
        split: usize,
    ) -> Result<bool, Error> {
        loop {
            if self.at_close()? {
                return Ok(false);
            }
            if self.peeked.is_some() || self.lexer.offset() > split {
                return Ok(false);
            }
            if self.lexer.offset() == split {
                return Ok(true);
            }
            self.function(kind, scope)?;
        }
    }

    /// The fork's work: functions up to the `)` of the form.
    fn functions_to_end(mut self, kind: StageKind, stop: &AtomicBool) -> Forked<'a> {
        let mut scope = StageScope::default();
        let outcome = (|| {
            while !self.at_close()? {
                if stop.load(Ordering::Relaxed) || self.missing_scalar {
                    return Ok(false);
                }
                self.function(kind, &mut scope)?;
            }
            Ok(!self.missing_scalar)
        })();
        Forked {
            reader: self,
            scope,
            outcome,
        }
    }

    /// Adopts a fork's functions after this reader arrived at its start.
    /// `Ok(false)` when the fork's work must be discarded (this reader then
    /// continues alone from the split).
    fn adopt(
        &mut self,
        kind: StageKind,
        scope: &mut StageScope<'a>,
        mut forked: Forked<'a>,
    ) -> Result<bool, Error> {
        if forked.reader.missing_scalar || matches!(forked.outcome, Ok(false)) {
            return Ok(false);
        }
        let base = self.module.stage(kind).functions.len();
        for (i, &(id, span)) in forked.scope.ids_in_order.iter().enumerate() {
            let handle = Handle::<Function>::from_index((base + i) as u32);
            if !scope.function_ids.insert(id, handle) {
                return Err(self.semantic(span, format!("duplicate function `{id}`")));
            }
        }
        forked.outcome?;
        let functions = forked.reader.module.stage_mut(kind).functions.take_all();
        let stage = self.module.stage_mut(kind);
        for function in functions {
            stage.functions.append(function);
        }
        scope
            .call_fixups
            .extend(forked.scope.call_fixups.iter().map(|&(f, b, i, id, span)| {
                (
                    Handle::from_index(f.index() as u32 + base as u32),
                    b,
                    i,
                    id,
                    span,
                )
            }));
        self.lexer = forked.reader.lexer;
        self.peeked = forked.reader.peeked;
        self.depth = forked.reader.depth;
        #[cfg(test)]
        ADOPTED.with(|n| n.set(n.get() + 1));
        Ok(true)
    }
}
