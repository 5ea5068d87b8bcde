//! The canonical verifier (spec sections 3–9).
//!
//! [`Verifier::verify`] checks a module graph as it is at that moment and
//! reports the first invalid object as a [`VerifyError`]: a message, the
//! [`Subject`] (module, type, uniform, stage, interface slot, function,
//! parameter, block, instruction, terminator or operand), the subject's
//! source [`Span`](crate::ir::Span) when the module was read from text, and
//! the [`Rule`] family. Built modules and read text go through the same
//! verifier; the text reader, the writer, the publication boundary and the
//! backends call [`verify`]. A successful check returns a [`ModuleInfo`]
//! with the facts it proved (register tables, call order, helper
//! summaries, output leaves, sampler alias chains, the type dependency
//! order); [`Verified`] keeps a module and its facts together, immutably.
//! A successful check applies to the graph at that moment: a mutated module
//! must be verified again.
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
mod context;
mod control;
mod diagnostic;
mod flow;
mod info;
mod instructions;
mod interface;
mod outputs;
mod registers;
mod samplers;
mod storage;
mod types;

pub use diagnostic::{Rule, Subject, VerifyError};
pub use flow::REGISTER_GROUP;
pub use info::{FunctionInfo, ModuleInfo, StageInfo, Verified};
pub use outputs::MAX_DYNAMIC_READ_RANGES;
pub use samplers::{AliasProblem, AliasProblemKind, AliasRoot, SamplerChains};

use crate::ir::{Function, Handle, Module, Stage};
use context::FnCx;
use diagnostic::{Check, Place};
use outputs::{Layout, Summary};
use registers::RegisterTable;
use std::sync::atomic::{AtomicBool, Ordering};

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

    /// Checks `module` and reports the first invalid object, or returns
    /// what the check proved about it.
    ///
    /// Large modules are checked on two threads where the machine has two
    /// cores (the per-function phases are split between them); the answer
    /// is always the one of the sequential order described above.
    pub fn verify(&self, module: &Module) -> Result<ModuleInfo, VerifyError> {
        verify_with(module, Threads::Auto)
    }
}

/// How many threads a verification may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threads {
    /// The calling thread only.
    One,
    /// Two for large modules on a machine with two cores, else one.
    Auto,
    /// Two whenever a thread can be started (tests of the parallel path).
    #[cfg_attr(not(test), allow(dead_code))]
    Two,
}

/// Per-stage results of the per-function phase, in function order.
type Tables = [Vec<Checked>; 2];

/// What the per-function phase leaves for the data-flow phase: the
/// register table, the calls of functions in program order and the
/// sampler alias chains.
#[derive(Default)]
struct Checked {
    regs: RegisterTable,
    calls: Vec<outputs::CallEdge>,
    samplers: SamplerChains,
}

/// [`Verifier::verify`] with an explicit thread policy.
pub(crate) fn verify_with(module: &Module, threads: Threads) -> Result<ModuleInfo, VerifyError> {
    #[cfg(test)]
    crate::steps::count(crate::steps::Step::Verify);
    let two = match threads {
        Threads::One => false,
        Threads::Two => true,
        Threads::Auto => {
            crate::parallel::instruction_count(module) >= crate::parallel::PARALLEL_INSTRUCTIONS
                && crate::parallel::two_cores()
        }
    };
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
    let samplers = samplers::module_has_samplers(module);
    let mut tables = match two {
        true => check_types_on_two_threads(module, samplers)?,
        false => {
            let mut tables: Tables = [Vec::new(), Vec::new()];
            for (si, stage) in module.stages().into_iter().enumerate() {
                for (h, _) in stage.functions.iter() {
                    tables[si].push(check_types_of(module, si, h, samplers)?);
                }
            }
            tables
        }
    };
    // Call graph and data flow, callees first.
    let mut stages = Vec::with_capacity(2);
    for (si, stage) in module.stages().into_iter().enumerate() {
        let mut regs = Vec::with_capacity(stage.functions.len());
        let mut edges = Vec::with_capacity(stage.functions.len());
        let mut chains = Vec::with_capacity(stage.functions.len());
        for c in std::mem::take(&mut tables[si]) {
            regs.push(c.regs);
            edges.push(c.calls);
            chains.push(c.samplers);
        }
        let calls = outputs::call_order(stage, &edges)?;
        drop(edges);
        let layout = Layout::new(module, stage, &order)?;
        let mut flow = StageFlow {
            module,
            stage,
            layout: &layout,
            summaries: vec![Summary::default(); stage.functions.len()],
            returns: vec![true; stage.functions.len()],
            tables: Vec::new(),
        };
        flow.tables
            .resize_with(stage.functions.len(), RegisterTable::default);
        if two {
            flow.check_by_depth(&calls, regs)?;
        } else {
            flow.check_in_order(&calls.order, regs)?;
        }
        let functions = flow
            .tables
            .into_iter()
            .zip(flow.summaries)
            .zip(chains)
            .map(|((registers, summary), samplers)| FunctionInfo {
                registers,
                summary,
                samplers,
            })
            .collect();
        stages.push(StageInfo {
            functions,
            call_order: calls.order,
            call_depth: calls.depth,
            layout,
        });
    }
    let fragment = stages.pop();
    let vertex = stages.pop();
    match (vertex, fragment) {
        (Some(vertex), Some(fragment)) => Ok(ModuleInfo {
            type_order: order,
            vertex,
            fragment,
        }),
        _ => unreachable!("a module has exactly two stages"),
    }
}

/// Phase 2 for one function: its register table and type rules.
fn check_types_of(
    module: &Module,
    stage_index: usize,
    handle: Handle<Function>,
    samplers: bool,
) -> Result<Checked, VerifyError> {
    let stage = module.stages()[stage_index];
    let function = &stage.functions[handle];
    let regs = RegisterTable::build(module, stage.kind, handle, function)?;
    let cx = FnCx {
        module,
        stage,
        handle,
        function,
        regs,
    };
    let calls = cx.check_types()?;
    let samplers = match samplers {
        true => samplers::trace(module, function),
        false => SamplerChains::default(),
    };
    Ok(Checked {
        regs: cx.regs,
        calls,
        samplers,
    })
}

/// Phase 2 of a run of functions (stage index, handle) in order; stops at
/// the first failure, or early and incomplete when `stop` is raised.
fn check_types_of_run(
    module: &Module,
    run: &[(usize, Handle<Function>)],
    samplers: bool,
    stop: &AtomicBool,
) -> Result<Vec<Checked>, VerifyError> {
    let mut tables = Vec::with_capacity(run.len());
    for &(si, h) in run {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        tables.push(check_types_of(module, si, h, samplers)?);
    }
    Ok(tables)
}

/// Phase 2 with the functions (both stages, in order) split into two runs
/// of about equal instruction counts, the second on a helper thread. The
/// first run's failure wins, as it comes first in sequential order; the
/// helper stops early when it does.
fn check_types_on_two_threads(module: &Module, samplers: bool) -> Result<Tables, VerifyError> {
    let mut run: Vec<(usize, Handle<Function>)> = Vec::new();
    let mut weights: Vec<usize> = Vec::new();
    for (si, stage) in module.stages().into_iter().enumerate() {
        for (h, f) in stage.functions.iter() {
            run.push((si, h));
            weights.push(function_weight(f));
        }
    }
    let mid = split_point(&weights);
    let (first, second) = run.split_at(mid);
    let stop = AtomicBool::new(false);
    let never = AtomicBool::new(false);
    let (a, b) = crate::parallel::join(
        || {
            let a = check_types_of_run(module, first, samplers, &never);
            if a.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            a
        },
        || check_types_of_run(module, second, samplers, &stop),
    );
    // Sized up front: growing these (a large module has thousands of
    // functions) would copy the tables into fresh pages.
    let mut tables: Tables = module
        .stages()
        .map(|s| Vec::with_capacity(s.functions.len()));
    for (&(si, _), table) in run.iter().zip(a?.into_iter().chain(b?)) {
        tables[si].push(table);
    }
    Ok(tables)
}

/// The cost estimate of a function's per-function checks.
fn function_weight(f: &Function) -> usize {
    f.blocks
        .iter()
        .map(|(_, b)| b.instructions.len() + 1)
        .sum::<usize>()
        + 1
}

/// The index that splits `weights` into two runs of about equal sums.
fn split_point(weights: &[usize]) -> usize {
    let total: usize = weights.iter().sum();
    let mut sum = 0;
    for (i, w) in weights.iter().enumerate() {
        if 2 * sum >= total {
            return i;
        }
        sum += w;
    }
    weights.len()
}

/// A level of the call graph is split between two threads when it holds
/// at least this many instructions.
const PARALLEL_LEVEL_WEIGHT: usize = 4096;

/// Phase 3 state of one stage: helper summaries and register tables of
/// checked functions.
struct StageFlow<'a> {
    module: &'a Module,
    stage: &'a Stage,
    layout: &'a Layout,
    summaries: Vec<Summary>,
    returns: Vec<bool>,
    tables: Vec<RegisterTable>,
}

/// The data-flow job of one function: its position in call order, handle
/// and register table.
type FlowJob = (usize, Handle<Function>, RegisterTable);

/// The outcome of a run of flow jobs: the checked functions' summaries and
/// register tables, and the first failure with its position in call order.
type FlowRun = (
    Vec<(Handle<Function>, Summary, RegisterTable)>,
    Option<(usize, VerifyError)>,
);

impl StageFlow<'_> {
    /// The sequential order: functions in call order, first failure wins.
    fn check_in_order(
        &mut self,
        order: &[Handle<Function>],
        mut regs: Vec<RegisterTable>,
    ) -> Result<(), VerifyError> {
        for &h in order {
            let regs = std::mem::take(&mut regs[h.index()]);
            let (summary, regs) = self.check_one(h, regs)?;
            self.returns[h.index()] = summary.returns;
            self.summaries[h.index()] = summary;
            self.tables[h.index()] = regs;
        }
        Ok(())
    }

    /// Checks one function; gives its register table back.
    fn check_one(
        &self,
        h: Handle<Function>,
        regs: RegisterTable,
    ) -> Result<(Summary, RegisterTable), VerifyError> {
        let cx = FnCx {
            module: self.module,
            stage: self.stage,
            handle: h,
            function: &self.stage.functions[h],
            regs,
        };
        let flow = cx.check_flow(
            &self.summaries,
            &self.returns,
            self.layout,
            self.stage.entry == Some(h),
        )?;
        Ok((flow.summary, cx.regs))
    }

    /// Checks a run of jobs in order, stopping at the first failure (or
    /// early, when `stop` is raised by a run of earlier positions).
    fn check_run(&self, jobs: Vec<FlowJob>, stop: &AtomicBool) -> FlowRun {
        let mut done = Vec::with_capacity(jobs.len());
        for (position, h, regs) in jobs {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match self.check_one(h, regs) {
                Ok((summary, regs)) => done.push((h, summary, regs)),
                Err(e) => return (done, Some((position, e))),
            }
        }
        (done, None)
    }

    /// The same answer as [`StageFlow::check_in_order`], computed level by
    /// level of call depth: the functions of one depth call only functions
    /// of smaller depths, so each level is split between two threads. The
    /// failure reported is the one at the smallest call-order position;
    /// once one is known, only functions before it are still checked (a
    /// caller of a failed function comes after it in call order).
    fn check_by_depth(
        &mut self,
        calls: &outputs::CallOrder,
        mut regs: Vec<RegisterTable>,
    ) -> Result<(), VerifyError> {
        let depth_at = |p: usize| calls.depth[calls.order[p].index()];
        let mut positions: Vec<usize> = (0..calls.order.len()).collect();
        positions.sort_by_key(|&p| depth_at(p));
        let mut first_error: Option<(usize, VerifyError)> = None;
        let mut i = 0;
        while i < positions.len() {
            let depth = depth_at(positions[i]);
            let mut j = i;
            while j < positions.len() && depth_at(positions[j]) == depth {
                j += 1;
            }
            let limit = first_error.as_ref().map_or(usize::MAX, |e| e.0);
            let mut jobs: Vec<FlowJob> = Vec::with_capacity(j - i);
            let mut weights: Vec<usize> = Vec::with_capacity(j - i);
            for &p in &positions[i..j] {
                if p < limit {
                    let h = calls.order[p];
                    weights.push(function_weight(&self.stage.functions[h]));
                    jobs.push((p, h, std::mem::take(&mut regs[h.index()])));
                }
            }
            i = j;
            let never = AtomicBool::new(false);
            let runs: Vec<FlowRun> = if weights.iter().sum::<usize>() >= PARALLEL_LEVEL_WEIGHT {
                let second = jobs.split_off(split_point(&weights));
                let stop = AtomicBool::new(false);
                let this = &*self;
                let (a, b) = crate::parallel::join(
                    || {
                        let a = this.check_run(jobs, &never);
                        if a.1.is_some() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        a
                    },
                    || this.check_run(second, &stop),
                );
                vec![a, b]
            } else {
                vec![self.check_run(jobs, &never)]
            };
            for (done, error) in runs {
                for (h, summary, regs) in done {
                    self.returns[h.index()] = summary.returns;
                    self.summaries[h.index()] = summary;
                    self.tables[h.index()] = regs;
                }
                if let Some((p, e)) = error
                    && first_error.as_ref().is_none_or(|f| p < f.0)
                {
                    first_error = Some((p, e));
                }
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

impl Verified {
    /// Verifies `module`.
    pub fn new(module: Module) -> Result<Self, VerifyError> {
        let info = verify(&module)?;
        Ok(Verified::from_parts(module, info))
    }
}

/// Verifies `module` with a fresh [`Verifier`] and returns what the check
/// proved about it.
pub fn verify(module: &Module) -> Result<ModuleInfo, VerifyError> {
    Verifier::new().verify(module)
}

impl FnCx<'_> {
    /// Type rules of every instruction and terminator, reachable or not;
    /// returns the calls of functions in program order.
    fn check_types(&self) -> Check<Vec<outputs::CallEdge>> {
        let mut calls = Vec::new();
        for (bh, block) in self.function.blocks.iter() {
            for (index, instruction) in block.instructions.iter().enumerate() {
                let place = Place {
                    stage: self.stage.kind,
                    function: self.handle,
                    block: bh,
                    instruction: Some(index),
                };
                self.check_instruction(&instruction.kind, place, instruction.span)?;
                if let crate::ir::InstructionKind::Call {
                    callee: crate::ir::Callee::Function(c),
                    ..
                } = instruction.kind
                {
                    calls.push((c, place, instruction.span));
                }
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
        Ok(calls)
    }
}
