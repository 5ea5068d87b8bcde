//! The canonical verifier (spec sections 3–9).
//!
//! [`Verifier::verify`] checks a module graph as it is at that moment and
//! reports the first invalid object as a [`VerifyError`]: a message, the
//! [`Subject`] (module, type, uniform, stage, interface slot, function,
//! parameter, block, instruction, terminator or operand), the subject's
//! source [`Span`](crate::ir::Span) when the module was read from text, and
//! the [`Rule`] family. Built modules and read text go through the same
//! verifier; the text reader, the writer, the publication boundary and the
//! backends call [`verify`]. A successful check applies to the graph at
//! that moment: a mutated module must be verified again.
//!
//! The checks run in phases, each over the whole module, so that later
//! phases can rely on earlier ones:
//!
//! 1. `containers` and `types` (sections 3 and 4): stage kinds, the
//!    type table, uniforms, interface declarations and linkage
//!    (`interface`, sections 3.1/6/6.3), function names, entries, blocks
//!    and terminators;
//! 2. per function, `registers` (5.1) and the type rules of every
//!    instruction and terminator, reachable or not: `instructions` (7),
//!    `storage` (6, 6.1) and `control` (8);
//! 3. per stage, the call graph (recursion is rejected) and, callees
//!    first, the data-flow checks of `flow`: definite assignment of
//!    registers (5.2, 6.2) and of output leaves with helper summaries
//!    (`outputs`, 6.3).
//!
//! Within a phase, objects are visited in list order (stages vertex then
//! fragment, functions, blocks, instructions), and data-flow violations
//! are reported in program order.

mod containers;
mod control;
mod diagnostic;
mod flow;
mod instructions;
mod interface;
mod outputs;
mod registers;
mod storage;
mod types;

pub use diagnostic::{Rule, Subject, VerifyError};
pub use flow::REGISTER_GROUP;
pub use outputs::MAX_DYNAMIC_READ_RANGES;

use crate::ir::{Function, Handle, Module, Stage};
use diagnostic::{Check, Place};
use outputs::{Layout, Summary};
use registers::RegisterTable;

/// A reusable verifier. It keeps no state between runs: every run
/// allocates its scratch data and drops it on return, on success or
/// failure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Verifier {}

impl Verifier {
    /// A verifier.
    pub fn new() -> Self {
        Verifier {}
    }

    /// Checks `module` and reports the first invalid object.
    pub fn verify(&self, module: &Module) -> Result<(), VerifyError> {
        containers::check_stage_kinds(module)?;
        let order = types::check(&module.types)?;
        containers::check_uniforms(module)?;
        for stage in module.stages() {
            interface::check_declarations(module, stage)?;
        }
        interface::check_linkage(module)?;
        for stage in module.stages() {
            containers::check_functions(module, stage)?;
        }
        // Registers and type rules of every function.
        let mut tables: [Vec<RegisterTable>; 2] = [Vec::new(), Vec::new()];
        for (si, stage) in module.stages().into_iter().enumerate() {
            for (h, f) in stage.functions.iter() {
                let regs = RegisterTable::build(module, stage.kind, h, f)?;
                let cx = FnCx {
                    module,
                    stage,
                    handle: h,
                    function: f,
                    regs,
                };
                cx.check_types()?;
                tables[si].push(cx.regs);
            }
        }
        // Call graph and data flow, callees first.
        for (si, stage) in module.stages().into_iter().enumerate() {
            let calls = outputs::call_order(stage)?;
            let layout = Layout::new(module, stage, &order)?;
            let mut summaries = vec![Summary::default(); stage.functions.len()];
            let mut returns = vec![true; stage.functions.len()];
            let mut regs = std::mem::take(&mut tables[si]);
            for h in calls {
                let cx = FnCx {
                    module,
                    stage,
                    handle: h,
                    function: &stage.functions[h],
                    regs: std::mem::take(&mut regs[h.index()]),
                };
                let flow = cx.check_flow(&summaries, &returns, &layout, stage.entry == Some(h))?;
                returns[h.index()] = flow.summary.returns;
                summaries[h.index()] = flow.summary;
            }
        }
        Ok(())
    }
}

/// Verifies `module` with a fresh [`Verifier`].
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    Verifier::new().verify(module)
}

/// Per-function verification context.
pub(crate) struct FnCx<'a> {
    pub module: &'a Module,
    pub stage: &'a Stage,
    pub handle: Handle<Function>,
    pub function: &'a Function,
    pub regs: RegisterTable,
}

impl FnCx<'_> {
    /// Type rules of every instruction and terminator, reachable or not.
    fn check_types(&self) -> Check {
        for (bh, block) in self.function.blocks.iter() {
            for (index, instruction) in block.instructions.iter().enumerate() {
                let place = Place {
                    stage: self.stage.kind,
                    function: self.handle,
                    block: bh,
                    instruction: Some(index),
                };
                self.check_instruction(&instruction.kind, place, instruction.span)?;
            }
            if let Some(t) = &block.terminator {
                let place = Place {
                    stage: self.stage.kind,
                    function: self.handle,
                    block: bh,
                    instruction: None,
                };
                self.check_terminator(t, place)?;
            }
        }
        Ok(())
    }
}
