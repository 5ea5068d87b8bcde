//! The reference interpreter (C0-EXEC-001). It executes only modules that
//! passed structural validation (the canonical writer's checks) and the
//! checked semantics of [`crate::check`] (C0-ART-002).
//!
//! Execution follows the recorded facts exactly: cleanup edges run their
//! PLACE_DROP recipes in listed order before the successor or exit handoff,
//! RESULT_TRY error paths take their bound try-error edge, contracts run
//! before and after the body, and a fault unwinds every frame by dropping
//! its owners in reverse custody order. Every destroyed non-Copy value is
//! appended to an observable drop log.

mod fast;
mod fault;
mod loops;
mod numeric;
mod value;

use crate::check::{Checked, Resolved};
use crate::model::*;
use fast::{Code, File, Flow, Ins, Regs, Seg};
pub use fault::{Fault, FaultKind};
pub use numeric::{canon, contract_compare_kind, contract_flow_tag, operand_kind, width};
pub use value::{Loc, Value, type_name};

/// Resource limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Maximum executed operations (flow, recipe and contract).
    pub steps: u64,
    /// Maximum call depth (the entry frame is depth one).
    pub depth: usize,
    /// Maximum live byte-array bytes.
    pub bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            steps: 100_000_000,
            depth: 256,
            bytes: 64 << 20,
        }
    }
}

/// Which pre-decoded forms a run may use. Every tier gives the same
/// results, faults (kind and operation), step counts and drop logs; the
/// lower tiers exist for differential tests and are slower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Tier {
    /// Every operation on the general path.
    General,
    /// Scalar operations in their one-operation fast forms.
    Ops,
    /// Also the fused runs of consecutive fast operations.
    Runs,
    /// Also the fused loops over wholly fused blocks (the default).
    #[default]
    Loops,
}

/// One destroyed owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropEvent {
    /// `Decl.function` whose frame dropped it.
    pub function: String,
    /// The owner: its path (`l0`, `p1`, `recv`, `t%B.O`) and nested field names.
    pub owner: String,
    /// The owner's type spelling.
    pub ty: String,
}

impl std::fmt::Display for DropEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: drop {} : {}", self.function, self.owner, self.ty)
    }
}

/// An interpreter error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    /// The module did not pass validation (never executed).
    #[error("{0}")]
    Invalid(crate::Error),
    /// The entry function or arguments are wrong.
    #[error("{0}")]
    Usage(String),
    /// The program faulted; the drop log up to and including unwinding.
    #[error("{fault}")]
    Fault {
        /// The fault.
        fault: Fault,
        /// Drops performed, in order.
        drops: Vec<DropEvent>,
    },
}

/// A completed run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The returned value.
    pub value: Value,
    /// Its type.
    pub ty: Type,
    /// Drops performed, in order.
    pub drops: Vec<DropEvent>,
    /// Operations executed.
    pub steps: u64,
}

/// A completed call across the typed boundary ([`Interp::call_host`]).
#[derive(Debug, Clone)]
pub struct HostCall {
    /// The result (a returned borrow resolved to the value it observes),
    /// drops and steps.
    pub outcome: Outcome,
    /// Per runtime slot: the value the host lent, as the call left it
    /// (`None` for copied, moved and allocator slots).
    pub returned: Vec<Option<Value>>,
}

/// The bytes of the byte arrays inside a host value.
fn host_bytes(v: &Value) -> u64 {
    match v {
        Value::Bytes(b) => b.capacity() as u64,
        Value::Record(fs) | Value::Variant(_, fs) => fs
            .iter()
            .flatten()
            .map(host_bytes)
            .fold(0, u64::saturating_add),
        Value::Result(_, p) => host_bytes(p),
        _ => 0,
    }
}

/// Places host value `v` in the host frame and returns the argument that
/// lends it as a slot of type `ty` (`Ref<T>`/`Mut<T>`: a loan of the
/// place; `Slice<Byte>`: a slice of the whole array; `Ref<Slice<Byte>>`:
/// a loan of a slice of it), with the place of the host's own value.
fn lend(host: &mut Frame, ty: &Type, v: Value) -> (Value, usize) {
    let at = |slot: usize| Loc {
        frame: 0,
        slot,
        fields: Vec::new(),
    };
    match ty {
        Type::SliceByte => {
            let len = match &v {
                Value::Bytes(b) => b.len() as u64,
                _ => 0,
            };
            host.places.push(Some(v));
            let place = host.places.len() - 1;
            (Value::Slice(at(place), 0, len), place)
        }
        Type::Ref(inner) | Type::Mut(inner) if **inner == Type::SliceByte => {
            let (slice, place) = lend(host, inner, v);
            host.places.push(Some(slice));
            (Value::Loan(at(host.places.len() - 1)), place)
        }
        _ => {
            host.places.push(Some(v));
            let place = host.places.len() - 1;
            (Value::Loan(at(place)), place)
        }
    }
}

/// A validated module ready to run.
pub struct Interp<'m> {
    r: Resolved<'m>,
    progs: Vec<Vec<Prog<'m>>>,
    limits: Limits,
    tier: Tier,
    /// Per function: whether its static call depth (CALL operations and
    /// contract calls, transitively) is at most [`IN_PLACE_DEPTH`].
    shallow: Vec<Vec<bool>>,
}

/// A precompiled function.
struct Prog<'m> {
    f: &'m Function,
    name: String,
    decl: usize,
    /// The numeric profile of the function's own module.
    profile: NumericProfile,
    /// Flat index of each block's first operation.
    starts: Vec<usize>,
    blocks: Vec<&'m Block>,
    /// Operand resolution per flat op.
    ops: Vec<Vec<Opd>>,
    /// Temporary owned path of a flat op's result.
    temp: Vec<Option<usize>>,
    /// Per path: root path index and field ordinals below it.
    path_route: Vec<(usize, Vec<usize>)>,
    /// Per path: whether its root is a borrow binding.
    borrow_root: Vec<bool>,
    /// Per path: whether it is an owner root in custody.
    owner: Vec<bool>,
    /// Cleanup edge by dense ID.
    edges: Vec<&'m CleanupEdge>,
    /// Edge ID per (block, arm) — terminal and try edges.
    edge_of: std::collections::HashMap<(u32, u8, u32), u32>,
    /// Path index of each parameter slot root (receiver first).
    slots: Vec<Option<usize>>,
    /// Scalar kind each flat op computes at (result kind, or the operand
    /// kind for comparisons).
    kinds: Vec<ScalarKind>,
    /// Terminal edge IDs per block: jump, true, false, return.
    term: Vec<[u32; 4]>,
    /// Pre-decoded fast form of each flat op ([`Code::Slow`]: none).
    fast: Vec<Ins>,
    /// A new frame's registers: zero per flat op, then the constant words.
    regs: Vec<u64>,
    /// The fused code of every run (see [`fast`]).
    code: Vec<Ins>,
    /// The runs' segments of `code`.
    segs: Vec<Seg>,
    /// Per flat op: the segment of the run starting there (`u32::MAX`: none).
    entry: Vec<u32>,
    /// Per block: the segment of the run at its first operation.
    block_seg: Vec<u32>,
    /// The places fused code keeps in place registers (at most 64; see
    /// [`fast::Regs::valid`]), by place register.
    fplaces: Vec<u32>,
    /// The register of place register zero.
    pbase: u32,
    /// The fused loops, by [`Seg::lp`].
    loops: Vec<loops::Loop>,
}

#[derive(Clone)]
enum Opd {
    Val(usize),
    Place(usize),
    Const(Value),
    Block(u32),
}

struct Frame {
    places: Vec<Option<Value>>,
    ssa: Vec<Option<Value>>,
    /// The fast path's registers (see [`fast`]).
    regs: Vec<u64>,
    custody: Vec<usize>,
}

struct Run<'a, 'm> {
    it: &'a Interp<'m>,
    /// Host stack address below which a call faults with the depth limit
    /// instead of overflowing the host stack (see [`on_sized_stack`]).
    stack_floor: usize,
    frames: Vec<Frame>,
    /// Frames below the entry frame (the host's lent values, see
    /// [`Interp::call_host`]); they do not count towards the depth limit.
    base: usize,
    drops: Vec<DropEvent>,
    steps: u64,
    bytes: u64,
}

type Step<T> = Result<T, Fault>;

/// Host stack reserved per interpreted call depth: every host frame one
/// interpreted call nests (call, body, the general operation path, the call
/// operation), with room for an unoptimized build.
const STACK_PER_DEPTH: usize = 48 << 10;
/// Host stack kept free below the guard for the deepest work one call does
/// without passing the guard again (unwinding and dropping nested values).
const STACK_RESERVE: usize = 512 << 10;
/// The largest interpreter stack requested; deeper limits rely on the guard.
const STACK_MAX: usize = 256 << 20;
/// The stack tried when the sized one cannot be had.
const STACK_FALLBACK: usize = 64 << 20;
/// A run whose entry's static call depth is at most this many frames runs
/// on the caller's thread, so no sized thread is started for it.
const IN_PLACE_DEPTH: usize = 2;
/// The host stack such a run may use above its guard: far more than
/// `IN_PLACE_DEPTH` frames of any build need, so the guard never fires for
/// it; with [`STACK_RESERVE`] below, the caller's thread needs about 1 MiB
/// (a Rust thread has 2 MiB by default).
const IN_PLACE_STACK: usize = 512 << 10;

/// The address of a local of the calling frame (the host stack grows down).
#[inline(never)]
fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Runs `execute` on a thread whose stack holds `depth` interpreted calls,
/// passing it the stack floor for the guard in [`Run::call`]: call depth
/// exhaustion is the documented `DepthLimit` fault, never a host stack
/// overflow, whatever the limit and the build.
fn on_sized_stack<F, T>(depth: usize, execute: F) -> Result<T, RunError>
where
    F: Fn(usize) -> Result<T, RunError> + Sync,
    T: Send,
{
    let wanted = depth
        .saturating_mul(STACK_PER_DEPTH)
        .saturating_add(2 * STACK_RESERVE)
        .min(STACK_MAX);
    for size in [wanted, STACK_FALLBACK.min(wanted)] {
        let execute = &execute;
        let outcome = std::thread::scope(|scope| {
            let worker = std::thread::Builder::new()
                .name("zlm-interp".into())
                .stack_size(size)
                .spawn_scoped(scope, move || {
                    let floor = stack_address().saturating_sub(size - STACK_RESERVE);
                    execute(floor)
                });
            match worker {
                Ok(handle) => Some(match handle.join() {
                    Ok(outcome) => outcome,
                    Err(panic) => std::panic::resume_unwind(panic),
                }),
                Err(_) => None,
            }
        });
        if let Some(outcome) = outcome {
            return outcome;
        }
    }
    Err(RunError::Usage(
        "the host refused a thread for the interpreter's stack".into(),
    ))
}

const ARM_JUMP: u8 = 0;
const ARM_TRUE: u8 = 1;
const ARM_FALSE: u8 = 2;
const ARM_RETURN: u8 = 3;
const ARM_TRY: u8 = 4;

impl<'m> Interp<'m> {
    /// Prepares a checked module to run. A module whose imports were not
    /// resolved against their providers ([`crate::decode::decode_linked`])
    /// is refused with the error `zlm validate` reports for it.
    pub fn new(checked: &'m Checked) -> Result<Self, RunError> {
        let m = checked.module();
        if !checked.imports_resolved() {
            let unresolved = crate::decode::check_imports(m, &[])
                .err()
                .unwrap_or_else(|| {
                    crate::Error::new(
                        crate::error::code::IMPORT,
                        "the module's imports were not resolved",
                    )
                });
            return Err(RunError::Invalid(unresolved));
        }
        if checked.names_other_modules() {
            return Err(RunError::Invalid(crate::Error::new(
                crate::error::code::PACKAGE,
                format!(
                    "module {} calls into or names members of other modules: run it as a package with its providers",
                    m.name
                ),
            )));
        }
        Ok(Self::of_resolved(Resolved::of_checked(checked)))
    }

    /// Prepares a package to run: its root's functions are the entries,
    /// and calls, constructions and field symbols reach the providers'
    /// declarations, whose functions run under their own module's numeric
    /// profile and are named `module::Decl.function` in faults and drop
    /// logs.
    pub fn of_package(package: &'m crate::package::Package) -> Self {
        Self::of_resolved(package.resolved())
    }

    fn of_resolved(r: Resolved<'m>) -> Self {
        let m = r.module;
        let mut progs = Vec::new();
        for (decl_index, d) in m.declarations.iter().enumerate() {
            let mut ps = Vec::new();
            for (fn_index, f) in d.functions.iter().enumerate() {
                ps.push(Prog::new(&r, decl_index, fn_index, f));
            }
            progs.push(ps);
        }
        let shallow = shallow_functions(&r);
        Interp {
            r,
            progs,
            limits: Limits::default(),
            tier: Tier::default(),
            shallow,
        }
    }

    /// Replaces the resource limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The resource limits runs use.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Restricts the pre-decoded forms runs use (see [`Tier`]).
    pub fn with_tier(mut self, tier: Tier) -> Self {
        self.tier = tier;
        self
    }

    /// Finds `Decl.name` (or a unique bare `name`) among the root module's
    /// functions.
    pub fn find(&self, entry: &str) -> Result<(usize, usize), RunError> {
        let mut hits = Vec::new();
        let own = self
            .r
            .module
            .declarations
            .iter()
            .enumerate()
            .take(self.r.local);
        for (decl_index, d) in own {
            for (fn_index, f) in d.functions.iter().enumerate() {
                if format!("{}.{}", d.name, f.name) == entry || f.name == entry {
                    hits.push((decl_index, fn_index));
                }
            }
        }
        match hits.as_slice() {
            [one] => Ok(*one),
            [] => Err(RunError::Usage(format!("no function named {entry}"))),
            _ => Err(RunError::Usage(format!(
                "{entry} is ambiguous; name it as Decl.function"
            ))),
        }
    }

    /// The entry function's parameter types (receiver excluded).
    pub fn params(&self, at: (usize, usize)) -> Vec<Type> {
        let f = &self.r.module.declarations[at.0].functions[at.1];
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        ps.iter().map(|p| p.ty.clone()).collect()
    }

    /// Runs entry function `entry` with scalar/Unit arguments. The entry must
    /// have a type or no receiver (a host cannot lend a receiver here).
    pub fn run(&self, entry: &str, args: &[Value]) -> Result<Outcome, RunError> {
        let at = self.find(entry)?;
        let f = &self.r.module.declarations[at.0].functions[at.1];
        if matches!(
            f.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        ) {
            return Err(RunError::Usage(
                "the entry function must have a type receiver (a host lends no receiver)".into(),
            ));
        }
        let tys = self.params(at);
        if tys.len() != args.len() {
            return Err(RunError::Usage(format!(
                "{entry} takes {} arguments, {} given",
                tys.len(),
                args.len()
            )));
        }
        let mut slots = Vec::new();
        for (t, a) in tys.iter().zip(args) {
            match (t, a) {
                (Type::Scalar(_), Value::Scalar(_)) | (Type::Unit, Value::Unit) => {
                    slots.push(a.clone())
                }
                (Type::Ref(inner), _) if **inner == Type::AllocatorBytesError => {
                    // The outermost host allocator loan: a budget of the byte limit.
                    slots.push(Value::Allocator)
                }
                _ => {
                    return Err(RunError::Usage(format!(
                        "argument of type {t} cannot be supplied by the host"
                    )));
                }
            }
        }
        let execute = |stack_floor: usize| {
            let mut run = Run {
                it: self,
                frames: Vec::new(),
                base: 0,
                drops: Vec::new(),
                steps: 0,
                bytes: 0,
                stack_floor,
            };
            match run.call(at, None, slots.clone()) {
                Ok(v) => Ok(Outcome {
                    value: v,
                    ty: f.result.clone(),
                    drops: run.drops,
                    steps: run.steps,
                }),
                Err(fault) => Err(RunError::Fault {
                    fault,
                    drops: run.drops,
                }),
            }
        };
        if self.shallow[at.0][at.1] {
            // The guard still bounds the host stack this run may use.
            let floor = stack_address().saturating_sub(IN_PLACE_STACK);
            return execute(floor);
        }
        on_sized_stack(self.limits.depth, execute)
    }

    /// Calls function `at` across the typed boundary (docs/zlm/boundary.md):
    /// `values` has one loan-free value per runtime slot (a shared,
    /// exclusive or owned receiver first, then the parameters by ordinal):
    /// for a `Ref<T>`/`Mut<T>` slot the `T`, for a `Slice<Byte>` the
    /// bytes, for the allocator [`Value::Allocator`] (`zlm::boundary`
    /// parses them from JSON). Copied and moved
    /// values are handed over (a moved one is the callee's to drop); the
    /// values of borrowed slots are held by a host frame below the entry
    /// frame, lent for the call, and handed back afterwards. Every byte
    /// array the host supplies counts towards the byte limit.
    pub fn call_host(&self, at: (usize, usize), values: Vec<Value>) -> Result<HostCall, RunError> {
        let f = &self.r.module.declarations[at.0].functions[at.1];
        // The runtime slots' binding types: the receiver's, then the parameters'.
        let mut slots: Vec<Type> = Vec::new();
        if matches!(
            f.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        ) && let Some(t) = f.receiver.binding(&self.r.self_type(at.0))
        {
            slots.push(t);
        }
        slots.extend(self.params(at));
        if slots.len() != values.len() {
            return Err(RunError::Usage(format!(
                "{} takes {} slot values, {} given",
                self.r.fn_name(at.0, at.1),
                slots.len(),
                values.len()
            )));
        }
        let mut host = Frame {
            places: Vec::new(),
            ssa: Vec::new(),
            regs: Vec::new(),
            custody: Vec::new(),
        };
        let mut bytes = 0u64;
        let mut args = Vec::with_capacity(values.len());
        // Per slot: the host place holding the lent value.
        let mut lent = Vec::with_capacity(values.len());
        for (slot, value) in slots.iter().zip(values) {
            bytes = bytes.saturating_add(host_bytes(&value));
            let lent_slot = match slot {
                Type::Ref(inner) => **inner != Type::AllocatorBytesError,
                Type::Mut(_) | Type::SliceByte => true,
                _ => false,
            };
            if lent_slot {
                let (arg, place) = lend(&mut host, slot, value);
                args.push(arg);
                lent.push(Some(place));
            } else {
                args.push(value);
                lent.push(None);
            }
        }
        if bytes > self.limits.bytes {
            return Err(RunError::Usage(format!(
                "the arguments hold {bytes} array bytes, over the byte limit {}",
                self.limits.bytes
            )));
        }
        let execute = |stack_floor: usize| {
            let mut run = Run {
                it: self,
                frames: vec![Frame {
                    places: host.places.clone(),
                    ssa: Vec::new(),
                    regs: Vec::new(),
                    custody: Vec::new(),
                }],
                base: 1,
                drops: Vec::new(),
                steps: 0,
                bytes,
                stack_floor,
            };
            match run.call(at, None, args.clone()) {
                Ok(v) => {
                    let value = run.resolve_loans(v);
                    let host = run.frames.pop().map(|h| h.places).unwrap_or_default();
                    let returned = lent
                        .iter()
                        .map(|place| place.and_then(|i| host.get(i).cloned().flatten()))
                        .collect();
                    Ok(HostCall {
                        outcome: Outcome {
                            value,
                            ty: f.result.clone(),
                            drops: run.drops,
                            steps: run.steps,
                        },
                        returned,
                    })
                }
                Err(fault) => Err(RunError::Fault {
                    fault,
                    drops: run.drops,
                }),
            }
        };
        if self.shallow[at.0][at.1] {
            let floor = stack_address().saturating_sub(IN_PLACE_STACK);
            return execute(floor);
        }
        on_sized_stack(self.limits.depth, execute)
    }

    /// Renders a value of type `t`.
    pub fn render(&self, v: &Value, t: &Type) -> String {
        value::render(&self.r, v, t)
    }

    /// The resolution tables.
    pub fn resolved(&self) -> &Resolved<'m> {
        &self.r
    }
}

/// The functions (by declaration, then function index) whose static call
/// depth is at most [`IN_PLACE_DEPTH`]: depth one calls nothing, depth `k`
/// calls only functions of depth `k - 1` (a cycle never qualifies).
fn shallow_functions(r: &Resolved<'_>) -> Vec<Vec<bool>> {
    let callees = |f: &Function| -> Option<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        for b in &f.body.blocks {
            for op in &b.ops {
                match (&op.tag, &op.aux0) {
                    (&tag::CALL, Aux::Func(sig)) => out.push(*r.funcs.get(sig)?),
                    (&tag::CALL, _) => return None,
                    _ => {}
                }
            }
        }
        for e in f.requires.iter().chain(&f.ensures) {
            for op in &e.ops {
                if op.tag == 3 && op.aux0 == 0 {
                    out.push(*r.funcs.get(&op.reference?)?);
                }
            }
        }
        Some(out)
    };
    // Per function: its callees, or `None` when one cannot be resolved.
    type Callees = Option<Vec<(usize, usize)>>;
    let calls: Vec<Vec<Callees>> = r
        .module
        .declarations
        .iter()
        .map(|d| d.functions.iter().map(callees).collect())
        .collect();
    let mut shallow: Vec<Vec<bool>> = calls
        .iter()
        .map(|fs| {
            fs.iter()
                .map(|c| c.as_ref().is_some_and(|c| c.is_empty()))
                .collect()
        })
        .collect();
    for _ in 1..IN_PLACE_DEPTH {
        let previous = shallow.clone();
        for (d, fs) in calls.iter().enumerate() {
            for (i, c) in fs.iter().enumerate() {
                shallow[d][i] = c.as_ref().is_some_and(|c| {
                    c.iter()
                        .all(|&(cd, ci)| previous.get(cd).and_then(|x| x.get(ci)) == Some(&true))
                });
            }
        }
    }
    shallow
}

/// The drop-log name of an owned-path root (`recv`, `p0`, `l1`, `t%B.O`).
pub fn root_name(r: &Root) -> String {
    match r {
        Root::Receiver => "recv".into(),
        Root::Param(p) => format!("p{p}"),
        Root::Local(l) => format!("l{l}"),
        Root::Temp(OpRef::Flow { block, ordinal }) => format!("t%{block}.{ordinal}"),
        Root::Temp(OpRef::Recipe { edge, ordinal }) => format!("t%r{edge}.{ordinal}"),
    }
}

impl<'m> Prog<'m> {
    fn new(r: &Resolved<'m>, decl_index: usize, fn_index: usize, f: &'m Function) -> Self {
        let mut blocks: Vec<&Block> = f.body.blocks.iter().collect();
        blocks.sort_by_key(|b| b.id);
        let mut starts = Vec::new();
        let mut n = 0;
        for b in &blocks {
            starts.push(n);
            n += b.ops.len();
        }
        let path_ix: std::collections::HashMap<&PathKey, usize> = f
            .body
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (&p.key, i))
            .collect();
        let flat = |o: &OpRef| match o {
            OpRef::Flow { block, ordinal } => starts[*block as usize] + *ordinal as usize,
            OpRef::Recipe { .. } => usize::MAX,
        };
        let mut ops = Vec::with_capacity(n);
        let mut temp = Vec::with_capacity(n);
        let mut kinds = Vec::with_capacity(n);
        for (block_index, b) in blocks.iter().enumerate() {
            for (j, op) in b.ops.iter().enumerate() {
                ops.push(
                    op.operands
                        .iter()
                        .map(|o| match o {
                            Operand::Value(v) => Opd::Val(flat(v)),
                            Operand::Place(k) => Opd::Place(path_ix.get(k).copied().unwrap_or(0)),
                            Operand::Const(c) => {
                                Opd::Const(Value::Scalar(numeric::canon(c.kind, c.bits)))
                            }
                            Operand::Block(b) => Opd::Block(*b),
                        })
                        .collect(),
                );
                let operand_kind = numeric::operand_kind(f, &blocks, op);
                let compare = matches!(
                    op.tag,
                    tag::EQ | tag::NE | tag::LT | tag::LE | tag::GT | tag::GE
                );
                let kind = match (&op.result, compare) {
                    (Some(Type::Scalar(k)), false) => Some(*k),
                    _ => operand_kind,
                };
                kinds.push(kind.unwrap_or(ScalarKind::UInt64));
                temp.push(
                    path_ix
                        .get(&PathKey {
                            root: Root::Temp(OpRef::Flow {
                                block: block_index as u32,
                                ordinal: j as u32,
                            }),
                            fields: vec![],
                        })
                        .copied(),
                );
            }
        }
        let is_borrow_root = |root: &Root| match root {
            Root::Receiver => matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive),
            Root::Param(p) => f
                .params
                .iter()
                .find(|x| x.ordinal == *p)
                .is_some_and(|x| x.ty.is_borrow()),
            _ => false,
        };
        let mut path_route = Vec::new();
        let mut borrow_root = Vec::new();
        let mut owner = Vec::new();
        for p in &f.body.paths {
            let root = PathKey {
                root: p.key.root.clone(),
                fields: vec![],
            };
            let ri = path_ix.get(&root).copied().unwrap_or(0);
            let ords = p
                .key
                .fields
                .iter()
                .map(|fid| r.field(fid).map(|x| x.2.ordinal as usize).unwrap_or(0))
                .collect();
            path_route.push((ri, ords));
            let br = is_borrow_root(&p.key.root);
            borrow_root.push(br);
            owner.push(p.key.fields.is_empty() && !br && !r.is_copy(&p.ty) && !p.ty.is_borrow());
        }
        let mut edges: Vec<&CleanupEdge> = f.body.edges.iter().collect();
        edges.sort_by_key(|e| e.id);
        let mut edge_of = std::collections::HashMap::new();
        let mut term = vec![[u32::MAX; 4]; blocks.len()];
        // The checked edge list in dense-ID order (the checker matched it
        // against the recorded edges); only the terminators are needed.
        if let Ok(derived) = crate::check::cfg::expected_edges_of(f) {
            for (id, e) in derived.iter().enumerate() {
                let arm = match e.arm {
                    crate::check::cfg::Arm::Jump => ARM_JUMP,
                    crate::check::cfg::Arm::True => ARM_TRUE,
                    crate::check::cfg::Arm::False => ARM_FALSE,
                    crate::check::cfg::Arm::Return => ARM_RETURN,
                    crate::check::cfg::Arm::Try => ARM_TRY,
                };
                edge_of.insert((e.source, arm, e.try_op.unwrap_or(0)), id as u32);
                if arm != ARM_TRY
                    && let Some(t) = term.get_mut(e.source as usize)
                {
                    t[arm as usize] = id as u32;
                }
            }
        }
        let mut slots = Vec::new();
        if matches!(
            f.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        ) {
            slots.push(
                path_ix
                    .get(&PathKey {
                        root: Root::Receiver,
                        fields: vec![],
                    })
                    .copied(),
            );
        }
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        for p in ps {
            slots.push(
                path_ix
                    .get(&PathKey {
                        root: Root::Param(p.ordinal),
                        fields: vec![],
                    })
                    .copied(),
            );
        }
        let mut prog = Prog {
            f,
            name: r.fn_name(decl_index, fn_index),
            decl: decl_index,
            profile: r.profile_of(decl_index),
            starts,
            blocks,
            ops,
            temp,
            path_route,
            borrow_root,
            owner,
            edges,
            edge_of,
            slots,
            kinds,
            term,
            fast: Vec::new(),
            regs: Vec::new(),
            code: Vec::new(),
            segs: Vec::new(),
            entry: Vec::new(),
            block_seg: Vec::new(),
            fplaces: Vec::new(),
            pbase: 0,
            loops: Vec::new(),
        };
        prog.decode_fast();
        prog
    }

    /// Pre-decodes the scalar operations that have an exact fast form into
    /// [`Prog::fast`], with their run lengths, constant registers and
    /// mirror flags.
    fn decode_fast(&mut self) {
        let profile = self.profile;
        let n = self.ops.len();
        let mut out = Vec::with_capacity(n);
        let mut consts: Vec<u64> = Vec::new();
        // The word of each CONST with a fast form: its readers read the
        // constant register (the CONST dominates every read).
        let mut const_word: Vec<Option<u64>> = vec![None; n];
        for (block_index, b) in self.blocks.iter().enumerate() {
            for (j, op) in b.ops.iter().enumerate() {
                let flat = self.starts[block_index] + j;
                if op.tag == tag::CONST
                    && self.temp[flat].is_none()
                    && matches!(op.result, Some(Type::Scalar(_)))
                    && let Some(Opd::Const(Value::Scalar(w))) = self.ops[flat].first()
                {
                    const_word[flat] = Some(*w);
                }
            }
        }
        let scalar_root = |pi: usize| {
            self.path_route[pi].1.is_empty()
                && !self.borrow_root[pi]
                && matches!(self.f.body.paths[pi].ty, Type::Scalar(_))
        };
        for (block_index, b) in self.blocks.iter().enumerate() {
            for (j, op) in b.ops.iter().enumerate() {
                let flat = self.starts[block_index] + j;
                let opds = &self.ops[flat];
                // A register for a constant word, after the SSA words.
                let mut konst = |w: u64| -> Option<u32> {
                    let at = match consts.iter().position(|&c| c == w) {
                        Some(at) => at,
                        None => {
                            consts.push(w);
                            consts.len() - 1
                        }
                    };
                    u32::try_from(n + at).ok()
                };
                let mut src = |k: usize| -> Option<u32> {
                    match opds.get(k)? {
                        Opd::Val(i) if *i < n && self.temp[*i].is_none() => match const_word[*i] {
                            Some(w) => konst(w),
                            None => u32::try_from(*i).ok(),
                        },
                        Opd::Const(Value::Scalar(w)) => konst(*w),
                        _ => None,
                    }
                };
                let (Ok(dst), Ok(next)) = (u32::try_from(flat), u32::try_from(block_index + 1))
                else {
                    out.push(Ins::SLOW);
                    continue;
                };
                let place = |pi: usize| u32::try_from(pi).ok();
                let no_temp = self.temp[flat].is_none();
                let scalar_result = matches!(op.result, Some(Type::Scalar(_)));
                let edge_clean = |arm: usize| {
                    let id = self.term[block_index][arm];
                    self.edges
                        .get(id as usize)
                        .is_some_and(|e| e.drops.is_empty())
                };
                let kind = self.kinds[flat];
                let ins = match op.tag {
                    tag::CONST if no_temp && scalar_result => match opds.first() {
                        Some(Opd::Const(Value::Scalar(_))) => {
                            src(0).map(|a| Ins::new(Code::Const, dst, a, 0))
                        }
                        _ => None,
                    },
                    tag::LOAD_LOCAL if no_temp && scalar_result => match opds.first() {
                        Some(Opd::Place(pi)) if scalar_root(*pi) => {
                            place(*pi).map(|a| Ins::new(Code::Load, dst, a, 0))
                        }
                        _ => None,
                    },
                    tag::STORE_LOCAL => match (opds.first(), src(1)) {
                        (Some(Opd::Place(pi)), Some(a)) if scalar_root(*pi) && !self.owner[*pi] => {
                            place(*pi).map(|d| Ins::new(Code::Store, d, a, 0))
                        }
                        _ => None,
                    },
                    tag::NEG
                    | tag::ADD
                    | tag::SUB
                    | tag::MUL
                    | tag::DIV
                    | tag::REM
                    | tag::BIT_AND
                    | tag::BIT_OR
                    | tag::BIT_XOR
                    | tag::SHIFT_LEFT
                    | tag::SHIFT_RIGHT
                        if no_temp && scalar_result =>
                    {
                        let a = src(0);
                        let b = if opds.len() > 1 { src(1) } else { konst(0) };
                        match (a, b) {
                            (Some(a), Some(b)) => {
                                Some(fast::arith(op.tag, kind, profile, dst, a, b))
                            }
                            _ => None,
                        }
                    }
                    tag::EQ | tag::NE | tag::LT | tag::LE | tag::GT | tag::GE if no_temp => {
                        match (src(0), src(1)) {
                            (Some(a), Some(b)) => Some(fast::compare(op.tag, kind, dst, a, b)),
                            _ => None,
                        }
                    }
                    tag::JUMP if edge_clean(ARM_JUMP as usize) => match opds.first() {
                        Some(Opd::Block(t)) => Some(Ins::new(Code::Jump, *t, 0, 0)),
                        _ => None,
                    },
                    tag::JUMP_IF_FALSE
                        if edge_clean(ARM_TRUE as usize) && edge_clean(ARM_FALSE as usize) =>
                    {
                        match (src(0), opds.get(1)) {
                            (Some(cond), Some(Opd::Block(t))) => {
                                Some(Ins::new(Code::Branch, *t, cond, next))
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                };
                out.push(ins.unwrap_or(Ins::SLOW));
            }
        }
        // A result some general-path operation reads is mirrored into its
        // SSA value slot.
        for (flat, opds) in self.ops.iter().enumerate() {
            if out[flat].code != Code::Slow {
                continue;
            }
            for o in opds {
                if let Opd::Val(i) = o
                    && let Some(ins) = out.get_mut(*i)
                {
                    ins.mirror = true;
                }
            }
        }
        // The places fast loads and stores reach get place registers, in
        // order of first use; an operation on a place beyond the 64th is
        // not fused (it runs alone, on the slot).
        let mut preg = vec![u32::MAX; self.f.body.paths.len()];
        let mut fplaces: Vec<u32> = Vec::new();
        let place_of = |ins: &Ins| match ins.code {
            Code::Load => Some(ins.a),
            Code::Store => Some(ins.d),
            _ => None,
        };
        for ins in &out {
            if let Some(pi) = place_of(ins)
                && let Some(k) = preg.get_mut(pi as usize)
                && *k == u32::MAX
                && fplaces.len() < 64
            {
                *k = fplaces.len() as u32;
                fplaces.push(pi);
            }
        }
        let fusable: Vec<bool> = out
            .iter()
            .map(|ins| {
                ins.code != Code::Slow
                    && place_of(ins)
                        .is_none_or(|pi| preg.get(pi as usize).is_some_and(|&k| k != u32::MAX))
            })
            .collect();
        // Per flat op: how many fusable ops start there in an unbroken run
        // within its block (zero for another op); a run ends at a terminator.
        let mut run = vec![0u32; n];
        for (block_index, b) in self.blocks.iter().enumerate() {
            let start = self.starts[block_index];
            for j in (0..b.ops.len()).rev() {
                let flat = start + j;
                run[flat] = if !fusable[flat] {
                    0
                } else if out[flat].is_terminator() || j + 1 == b.ops.len() {
                    1
                } else {
                    1 + run[flat + 1]
                };
            }
        }
        let mut regs = vec![0u64; n];
        regs.extend(consts);
        let pbase = u32::try_from(regs.len()).unwrap_or(u32::MAX);
        regs.resize(regs.len() + fplaces.len(), 0);
        if regs.len() <= fast::SMALL {
            // The fixed register file (see [`fast::File`]).
            regs.resize(fast::SMALL, 0);
        }
        let mut readers = vec![0u32; n];
        for opds in &self.ops {
            for o in opds {
                if let Opd::Val(i) = o
                    && let Some(c) = readers.get_mut(*i)
                {
                    *c += 1;
                }
            }
        }
        let mut code = Vec::new();
        let mut segs = Vec::new();
        let mut entry = vec![u32::MAX; n];
        for (block_index, b) in self.blocks.iter().enumerate() {
            let start = self.starts[block_index];
            for j in 0..b.ops.len() {
                let flat = start + j;
                let len = run[flat] as usize;
                if len == 0 || (j > 0 && fusable[flat - 1]) {
                    continue;
                }
                let (Ok(j0), Ok(ix)) = (u32::try_from(j), u32::try_from(segs.len())) else {
                    continue;
                };
                if let Some(seg) = fast::fuse(
                    &out[flat..flat + len],
                    j0,
                    &preg,
                    pbase,
                    &readers,
                    &mut code,
                ) {
                    segs.push(seg);
                    entry[flat] = ix;
                }
            }
        }
        // A fused loop at each block that one run covers whole and that a
        // cycle of such blocks runs through.
        let whole: Vec<bool> = (0..self.blocks.len())
            .map(|b| {
                let s = self.starts.get(b).copied().unwrap_or(n);
                let r = s..self.starts.get(b + 1).copied().unwrap_or(n);
                entry
                    .get(r.start)
                    .and_then(|&ix| segs.get(ix as usize))
                    .is_some_and(|seg: &Seg| seg.j0 == 0 && seg.steps as usize == r.len())
            })
            .collect();
        let facts = loops::Facts {
            starts: &self.starts,
            fast: &out,
            whole: &whole,
            readers: &readers,
            preg: &preg,
            pbase,
            regs: &regs,
        };
        let reads = |flat: usize| -> Vec<u32> {
            self.ops[flat]
                .iter()
                .filter_map(|o| match o {
                    Opd::Val(i) => u32::try_from(*i).ok(),
                    _ => None,
                })
                .collect()
        };
        let mut compiled = Vec::new();
        for (b, _) in whole.iter().enumerate().filter(|(_, w)| **w) {
            let Some(&ix) = self.starts.get(b).and_then(|&s| entry.get(s)) else {
                continue;
            };
            if let (Some(lp), Ok(at)) = (
                loops::build(&facts, b, reads),
                u32::try_from(compiled.len()),
            ) && let Some(seg) = segs.get_mut(ix as usize)
            {
                seg.lp = at;
                compiled.push(lp);
            }
        }
        self.loops = compiled;
        self.fast = out;
        self.regs = regs;
        self.fplaces = fplaces;
        self.pbase = pbase;
        self.code = code;
        self.segs = segs;
        self.block_seg = self
            .starts
            .iter()
            .map(|&s| entry.get(s).copied().unwrap_or(u32::MAX))
            .collect();
        self.entry = entry;
    }
}

/// Where a chain of fast runs stopped.
struct Chained {
    b: usize,
    j: usize,
    steps: u64,
    /// The faulting operation's ordinal in block `b`, and the fault.
    fault: Option<(u32, FaultKind)>,
}

/// Executes the fast runs from operation `j` of block `b`, following fast
/// terminators into their successors, as long as each whole run fits in
/// the step budget (no operation of it can reach the limit, so the run is
/// charged at once); returns where the general path resumes. A run that
/// enters a fused loop of `loops` runs the loop first.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn chain<R: File + ?Sized>(
    p: &Prog<'_>,
    regs: Regs<'_, R>,
    mut b: usize,
    mut j: usize,
    mut steps: u64,
    limit: u64,
    profile: NumericProfile,
    loops: &[loops::Loop],
) -> Chained {
    // A local copy of the frame view, which the optimizer keeps in machine
    // registers (the argument lives in the caller's memory).
    let Regs {
        r,
        ssa,
        places,
        pbase,
        valid,
    } = regs;
    let mut regs = Regs {
        r,
        ssa,
        places,
        pbase,
        valid,
    };
    let (segs, code, block_seg) = (&p.segs[..], &p.code[..], &p.block_seg[..]);
    let mut at = p
        .starts
        .get(b)
        .and_then(|s| p.entry.get(s + j))
        .copied()
        .unwrap_or(u32::MAX);
    // Set when the loop at this run fell back: the run executes once.
    let mut fell_back = false;
    let fault = 'chain: loop {
        let Some(seg) = segs.get(at as usize) else {
            break None;
        };
        if !fell_back && let Some(lp) = loops.get(seg.lp as usize) {
            match loops::run(lp, &mut regs, &p.fplaces, &mut steps, limit, profile) {
                loops::Exit::Fallback => fell_back = true,
                loops::Exit::Block(n) => {
                    (b, j) = (n, 0);
                    at = block_seg.get(n).copied().unwrap_or(u32::MAX);
                    continue 'chain;
                }
                loops::Exit::Fault(n, o, kind) => {
                    (b, j) = (n, 0);
                    break 'chain Some((o, kind));
                }
            }
            continue 'chain;
        }
        fell_back = false;
        if limit.saturating_sub(steps) < u64::from(seg.steps) {
            break None;
        }
        let Some(run) = code.get(seg.start as usize..seg.end as usize) else {
            break None;
        };
        steps += u64::from(seg.steps);
        for ins in run {
            match fast::step(ins, &mut regs, profile) {
                Ok(Flow::Next) => {}
                Ok(Flow::Block(n)) => {
                    (b, j) = (n, 0);
                    at = block_seg.get(n).copied().unwrap_or(u32::MAX);
                    continue 'chain;
                }
                Err((o, kind)) => {
                    // The operations after the faulting one never ran.
                    steps -= u64::from((seg.j0 + seg.steps).saturating_sub(o + 1));
                    break 'chain Some((o, kind));
                }
            }
        }
        j = (seg.j0 + seg.steps) as usize;
        break None;
    };
    fast::store_places(&mut regs, &p.fplaces);
    Chained { b, j, steps, fault }
}

/// A fault of function `p` at block `b`, operation `o`.
fn fault_at(p: &Prog<'_>, b: Option<u32>, o: Option<u32>, kind: FaultKind) -> Fault {
    Fault {
        function: p.name.clone(),
        block: b,
        op: o,
        kind,
    }
}

impl<'a, 'm> Run<'a, 'm> {
    fn prog(&self, at: (usize, usize)) -> &'a Prog<'m> {
        &self.it.progs[at.0][at.1]
    }

    fn fault(&self, p: &Prog<'_>, b: Option<u32>, o: Option<u32>, kind: FaultKind) -> Fault {
        fault_at(p, b, o, kind)
    }

    /// Calls function `at`. `args` are in runtime slot order (receiver
    /// first). Precommit checks happen before anything is moved.
    fn call(
        &mut self,
        at: (usize, usize),
        _caller: Option<usize>,
        args: Vec<Value>,
    ) -> Step<Value> {
        let p = self.prog(at);
        if self.frames.len() - self.base >= self.it.limits.depth
            || stack_address() < self.stack_floor
        {
            // Precommit failure: the arguments are returned to nobody; the
            // caller's frame still owns the temporaries (see exec_call).
            return Err(self.fault(p, None, None, FaultKind::DepthLimit));
        }
        let mut fr = Frame {
            places: vec![None; p.f.body.paths.len()],
            ssa: vec![None; p.ops.len()],
            regs: p.regs.clone(),
            custody: Vec::new(),
        };
        for (slot, v) in p.slots.iter().zip(args) {
            if let Some(pi) = slot {
                if p.owner[*pi] {
                    fr.custody.push(*pi);
                }
                fr.places[*pi] = Some(v);
            }
        }
        self.frames.push(fr);
        let result = self.body(p);
        let out = match result {
            Ok(v) => Ok(v),
            Err(fault) => {
                self.unwind(p);
                Err(fault)
            }
        };
        self.frames.pop();
        out
    }

    /// Abrupt unwind: owners in reverse current custody order.
    fn unwind(&mut self, p: &Prog<'m>) {
        let fr = self.frames.last_mut().expect("frame");
        let custody = std::mem::take(&mut fr.custody);
        for &pi in custody.iter().rev() {
            let v = self.frames.last_mut().expect("frame").places[pi].take();
            if let Some(v) = v {
                self.drop_value(
                    p,
                    &root_name(&p.f.body.paths[pi].key.root),
                    &p.f.body.paths[pi].ty,
                    v,
                );
            }
        }
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("frame")
    }

    /// Recursively destroys `v` of type `t`, logging non-Copy owners.
    fn drop_value(&mut self, p: &Prog<'m>, name: &str, t: &Type, v: Value) {
        let r = &self.it.r;
        if r.is_copy(t) || t.is_borrow() {
            return;
        }
        self.drops.push(DropEvent {
            function: p.name.clone(),
            owner: name.to_string(),
            ty: value::type_name(r, t),
        });
        match (v, t) {
            (Value::Record(fields), Type::Nominal(_)) => {
                if let Some(d) = r.decl_of(t) {
                    let decl = &r.module.declarations[d];
                    for (ord, fv) in fields.into_iter().enumerate().rev() {
                        if let (Some(fv), Some(fd)) =
                            (fv, decl.fields.iter().find(|f| f.ordinal as usize == ord))
                        {
                            self.drop_value(p, &format!("{name}.{}", fd.name), &fd.ty, fv);
                        }
                    }
                }
            }
            (Value::Variant(tag, fields), Type::Nominal(_)) => {
                if let Some(d) = r.decl_of(t) {
                    let decl = &r.module.declarations[d];
                    if let Some(var) = decl.variants.iter().find(|v| v.tag == tag) {
                        for (ord, fv) in fields.into_iter().enumerate().rev() {
                            if let (Some(fv), Some(fd)) =
                                (fv, var.fields.iter().find(|f| f.ordinal as usize == ord))
                            {
                                self.drop_value(p, &format!("{name}.{}", fd.name), &fd.ty, fv);
                            }
                        }
                    }
                }
            }
            (Value::Result(tag, payload), Type::Result(ok, err)) => {
                let pt = if tag == 0 { ok } else { err };
                self.drop_value(
                    p,
                    // The carrier's declared payload fields: Ok(value: T), Err(error: E).
                    &format!("{name}.{}", if tag == 0 { "value" } else { "error" }),
                    pt,
                    *payload,
                );
            }
            (Value::Bytes(b), _) => {
                self.bytes = self.bytes.saturating_sub(b.capacity() as u64);
            }
            _ => {}
        }
    }

    fn tick(&mut self, p: &Prog<'m>, b: u32, j: u32) -> Step<()> {
        self.steps += 1;
        if self.steps > self.it.limits.steps {
            return Err(self.fault(p, Some(b), Some(j), FaultKind::StepLimit));
        }
        Ok(())
    }

    fn body(&mut self, p: &'a Prog<'m>) -> Step<Value> {
        // Requires before the body.
        for (i, e) in p.f.requires.iter().enumerate() {
            if !self.contract(p, e, None)? {
                return Err(self.fault(
                    p,
                    None,
                    None,
                    FaultKind::Contract(format!("requires {i}")),
                ));
            }
        }
        let profile = p.profile;
        let (mut b, mut j) = (0usize, 0usize);
        loop {
            let Some(&start) = p.starts.get(b) else {
                return Err(self.fault(p, None, None, FaultKind::Internal));
            };
            if self.it.tier >= Tier::Runs && p.entry.get(start + j).is_some_and(|&s| s != u32::MAX)
            {
                (b, j) = self.fast_runs(p, b, j)?;
            }
            let (Some(&block), Some(&start)) = (p.blocks.get(b), p.starts.get(b)) else {
                return Err(self.fault(p, None, None, FaultKind::Internal));
            };
            let Some(op) = block.ops.get(j) else {
                // The block ended without a terminator.
                return Err(self.fault(p, None, None, FaultKind::Internal));
            };
            let flat = start + j;
            let (bb, jj) = (b as u32, j as u32);
            self.tick(p, bb, jj)?;
            if self.it.tier >= Tier::Ops && p.fast[flat].code != Code::Slow {
                // A fast operation whose run the step budget cannot cover.
                let Some(fr) = self.frames.last_mut() else {
                    return Err(self.fault(p, Some(bb), Some(jj), FaultKind::Internal));
                };
                let mut regs = Regs {
                    r: &mut fr.regs[..],
                    ssa: &mut fr.ssa,
                    places: &mut fr.places,
                    pbase: p.pbase,
                    valid: 0,
                };
                match fast::step(&p.fast[flat], &mut regs, profile) {
                    Ok(Flow::Next) => j += 1,
                    Ok(Flow::Block(n)) => (b, j) = (n, 0),
                    Err((_, kind)) => return Err(self.fault(p, Some(bb), Some(jj), kind)),
                }
                continue;
            }
            let opds = &p.ops[flat];
            match op.tag {
                tag::JUMP => {
                    let Opd::Block(t) = opds[0] else {
                        return Err(self.fault(p, Some(bb), Some(jj), FaultKind::Internal));
                    };
                    self.edge(p, bb, ARM_JUMP, 0)?;
                    (b, j) = (t as usize, 0);
                }
                tag::JUMP_IF_FALSE => {
                    let c = self.read(p, &opds[0]).as_bool();
                    let Opd::Block(t) = opds[1] else {
                        return Err(self.fault(p, Some(bb), Some(jj), FaultKind::Internal));
                    };
                    if c {
                        self.edge(p, bb, ARM_TRUE, 0)?;
                        (b, j) = (b + 1, 0);
                    } else {
                        self.edge(p, bb, ARM_FALSE, 0)?;
                        (b, j) = (t as usize, 0);
                    }
                }
                tag::RETURN => {
                    let v = self.take(p, &opds[0]);
                    self.edge(p, bb, ARM_RETURN, 0)?;
                    return self.finish(p, v);
                }
                tag::RESULT_TRY | tag::RESULT_TRY_RICH => {
                    let v = self.take(p, &opds[0]);
                    let Value::Result(t, payload) = v else {
                        return Err(self.fault(p, Some(bb), Some(jj), FaultKind::Tag));
                    };
                    match t {
                        0 => {
                            self.produce(p, flat, *payload);
                            j += 1;
                        }
                        1 => {
                            // Protected E; recipes; fresh outer Err.
                            self.edge(p, bb, ARM_TRY, jj)?;
                            return self.finish(p, Value::Result(1, payload));
                        }
                        _ => return Err(self.fault(p, Some(bb), Some(jj), FaultKind::Tag)),
                    }
                }
                _ => {
                    let v = self.exec(p, bb, jj, flat, op, opds)?;
                    if let Some(v) = v {
                        self.produce(p, flat, v);
                    }
                    j += 1;
                }
            }
        }
    }

    /// Executes the fast runs from operation `j` of block `b`, following
    /// fast terminators into their successors, as long as each whole run
    /// fits in the step budget (no operation of it can reach the limit, so
    /// the run is charged at once); returns where the general path resumes.
    fn fast_runs(&mut self, p: &'a Prog<'m>, b: usize, j: usize) -> Step<(usize, usize)> {
        let profile = p.profile;
        let limit = self.it.limits.steps;
        let loops = match self.it.tier {
            Tier::Loops => &p.loops[..],
            _ => &[],
        };
        let Some(fr) = self.frames.last_mut() else {
            return Err(fault_at(p, None, None, FaultKind::Internal));
        };
        let (ssa, places) = (&mut fr.ssa[..], &mut fr.places[..]);
        let chained = match <&mut [u64; fast::SMALL]>::try_from(&mut fr.regs[..]) {
            Ok(r) => {
                let regs = Regs {
                    r,
                    ssa,
                    places,
                    pbase: p.pbase,
                    valid: 0,
                };
                chain(p, regs, b, j, self.steps, limit, profile, loops)
            }
            Err(_) => {
                let r = &mut fr.regs[..];
                let regs = Regs {
                    r,
                    ssa,
                    places,
                    pbase: p.pbase,
                    valid: 0,
                };
                chain(p, regs, b, j, self.steps, limit, profile, loops)
            }
        };
        self.steps = chained.steps;
        match chained.fault {
            None => Ok((chained.b, chained.j)),
            Some((o, kind)) => Err(fault_at(p, Some(chained.b as u32), Some(o), kind)),
        }
    }

    /// Ensures after the body, with the protected result.
    fn finish(&mut self, p: &'a Prog<'m>, v: Value) -> Step<Value> {
        for (i, e) in p.f.ensures.iter().enumerate() {
            match self.contract(p, e, Some(&v)) {
                Ok(true) => {}
                Ok(false) => {
                    let f = self.fault(p, None, None, FaultKind::Contract(format!("ensures {i}")));
                    self.drop_value(p, "result", &p.f.result, v);
                    return Err(f);
                }
                Err(f) => {
                    self.drop_value(p, "result", &p.f.result, v);
                    return Err(f);
                }
            }
        }
        Ok(v)
    }

    fn edge(&mut self, p: &'a Prog<'m>, b: u32, arm: u8, try_op: u32) -> Step<()> {
        let id = if arm == ARM_TRY {
            match p.edge_of.get(&(b, arm, try_op)) {
                Some(&id) => id,
                None => return Err(self.fault(p, None, None, FaultKind::Internal)),
            }
        } else {
            p.term[b as usize][arm as usize]
        };
        let e = p.edges[id as usize];
        for (ri, d) in e.drops.iter().enumerate() {
            self.tick(p, b, ri as u32)?;
            if let Some(Operand::Place(k)) = d.operands.first()
                && let Some(pi) = p.f.body.paths.iter().position(|x| &x.key == k)
            {
                self.drop_place(p, pi);
            }
        }
        Ok(())
    }

    fn drop_place(&mut self, p: &Prog<'m>, pi: usize) {
        let v = self.take_place(p, pi);
        if let Some(v) = v {
            let name = self.path_name(p, pi);
            self.drop_value(p, &name, &p.f.body.paths[pi].ty, v);
        }
    }

    /// The drop-log name of owned path `pi`: its root, then each field's
    /// declared name (`l1.right`).
    fn path_name(&self, p: &Prog<'m>, pi: usize) -> String {
        let key = &p.f.body.paths[pi].key;
        let mut name = root_name(&key.root);
        for field_id in &key.fields {
            if let Some((_, _, field)) = self.it.r.field(field_id) {
                name.push('.');
                name.push_str(&field.name);
            }
        }
        name
    }

    /// Removes the value at path `pi` (root or field), updating custody.
    fn take_place(&mut self, p: &Prog<'m>, pi: usize) -> Option<Value> {
        let (root, ords) = &p.path_route[pi];
        let fr = self.frame();
        if ords.is_empty() {
            fr.custody.retain(|&c| c != pi);
            return fr.places[pi].take();
        }
        let mut cur = fr.places[*root].as_mut()?;
        for (k, o) in ords.iter().enumerate() {
            let fields = cur.fields_mut()?;
            if k + 1 == ords.len() {
                return fields.get_mut(*o)?.take();
            }
            cur = fields.get_mut(*o)?.as_mut()?;
        }
        None
    }

    fn produce(&mut self, p: &Prog<'m>, flat: usize, v: Value) {
        let fr = self.frame();
        match p.temp[flat] {
            Some(pi) => {
                fr.places[pi] = Some(v);
                fr.custody.push(pi);
            }
            None => {
                if let Some(r) = fr.regs.get_mut(flat) {
                    *r = v.bits();
                }
                fr.ssa[flat] = Some(v)
            }
        }
    }

    /// Reads an operand without consuming (Copy values, loans).
    fn read(&mut self, p: &Prog<'m>, o: &Opd) -> Value {
        match o {
            Opd::Val(i) => match p.temp[*i] {
                Some(pi) => self.frame().places[pi].clone().unwrap_or(Value::Unit),
                None => self.frame().ssa[*i].clone().unwrap_or(Value::Unit),
            },
            Opd::Place(pi) => self.place_value(p, *pi),
            Opd::Const(v) => v.clone(),
            Opd::Block(_) => Value::Unit,
        }
    }

    /// Takes an operand: an owner SSA value is moved out of custody.
    fn take(&mut self, p: &Prog<'m>, o: &Opd) -> Value {
        match o {
            Opd::Val(i) => match p.temp[*i] {
                Some(pi) => {
                    let fr = self.frame();
                    fr.custody.retain(|&c| c != pi);
                    fr.places[pi].take().unwrap_or(Value::Unit)
                }
                None => self.frame().ssa[*i].clone().unwrap_or(Value::Unit),
            },
            _ => self.read(p, o),
        }
    }

    /// The binding value of place `pi` (loans for borrow roots).
    fn place_value(&mut self, p: &Prog<'m>, pi: usize) -> Value {
        let (root, ords) = &p.path_route[pi];
        if ords.is_empty() {
            return self.frame().places[pi].clone().unwrap_or(Value::Unit);
        }
        match self.loc_of(p, pi) {
            Some(l) => self.deref(&l).cloned().unwrap_or(Value::Unit),
            None => {
                let _ = root;
                Value::Unit
            }
        }
    }

    /// The location a place denotes (through a borrow root's loan).
    fn loc_of(&mut self, p: &Prog<'m>, pi: usize) -> Option<Loc> {
        let (root, ords) = &p.path_route[pi];
        let depth = self.frames.len() - 1;
        if p.borrow_root[*root] {
            let Some(Value::Loan(l)) = self.frames[depth].places[*root].clone() else {
                return None;
            };
            let mut l = l;
            l.fields.extend(ords.iter().copied());
            Some(l)
        } else {
            Some(Loc {
                frame: depth,
                slot: *root,
                fields: ords.clone(),
            })
        }
    }

    /// `v` with every loan replaced by (a copy of) the value it observes and
    /// every byte slice by its bytes: what a host sees of a returned borrow.
    fn resolve_loans(&self, v: Value) -> Value {
        match v {
            Value::Loan(l) => match self.deref(&l).cloned() {
                Some(inner) => self.resolve_loans(inner),
                None => Value::Unit,
            },
            Value::Slice(l, s, e) => match self.deref(&l) {
                Some(Value::Bytes(b)) => {
                    Value::Bytes(b.get(s as usize..e as usize).unwrap_or_default().to_vec())
                }
                _ => Value::Bytes(Vec::new()),
            },
            Value::Record(fs) => Value::Record(
                fs.into_iter()
                    .map(|f| f.map(|x| self.resolve_loans(x)))
                    .collect(),
            ),
            Value::Variant(tag, fs) => Value::Variant(
                tag,
                fs.into_iter()
                    .map(|f| f.map(|x| self.resolve_loans(x)))
                    .collect(),
            ),
            Value::Result(tag, p) => Value::Result(tag, Box::new(self.resolve_loans(*p))),
            v => v,
        }
    }

    fn deref(&self, l: &Loc) -> Option<&Value> {
        let mut cur = self.frames.get(l.frame)?.places.get(l.slot)?.as_ref()?;
        for o in &l.fields {
            cur = cur.fields()?.get(*o)?.as_ref()?;
        }
        Some(cur)
    }

    fn deref_mut(&mut self, l: &Loc) -> Option<&mut Value> {
        let mut cur = self
            .frames
            .get_mut(l.frame)?
            .places
            .get_mut(l.slot)?
            .as_mut()?;
        for o in &l.fields {
            cur = cur.fields_mut()?.get_mut(*o)?.as_mut()?;
        }
        Some(cur)
    }

    /// The value a place or loan operand observes.
    fn observe(&mut self, p: &Prog<'m>, o: &Opd) -> Option<Value> {
        match o {
            Opd::Place(pi) => {
                let (root, ords) = &p.path_route[*pi];
                if ords.is_empty() && !p.borrow_root[*root] {
                    return self.frame().places[*pi].clone();
                }
                let l = self.loc_of(p, *pi)?;
                self.deref(&l).cloned()
            }
            _ => match self.read(p, o) {
                Value::Loan(l) => self.deref(&l).cloned(),
                v => Some(v),
            },
        }
    }

    fn exec(
        &mut self,
        p: &'a Prog<'m>,
        b: u32,
        j: u32,
        flat: usize,
        op: &'m Op,
        o: &[Opd],
    ) -> Step<Option<Value>> {
        let profile = p.profile;
        let fault = |s: &Self, k| s.fault(p, Some(b), Some(j), k);

        Ok(match op.tag {
            tag::CONST => Some(self.read(p, &o[0])),
            tag::NEG
            | tag::ADD
            | tag::SUB
            | tag::MUL
            | tag::DIV
            | tag::REM
            | tag::BIT_AND
            | tag::BIT_OR
            | tag::BIT_XOR
            | tag::SHIFT_LEFT
            | tag::SHIFT_RIGHT => {
                let k = p.kinds[flat];
                let a = self.read(p, &o[0]).bits();
                let c = if o.len() > 1 {
                    self.read(p, &o[1]).bits()
                } else {
                    0
                };
                match numeric::arith(op.tag, k, profile, a, c) {
                    Ok(v) => Some(Value::Scalar(v)),
                    Err(kf) => return Err(fault(self, kf)),
                }
            }
            tag::EQ | tag::NE | tag::LT | tag::LE | tag::GT | tag::GE => {
                let t = p.kinds[flat];
                let a = self.read(p, &o[0]).bits();
                let c = self.read(p, &o[1]).bits();
                Some(Value::Scalar(u64::from(numeric::compare(op.tag, t, a, c))))
            }
            tag::NOT_BOOL => Some(Value::Scalar(u64::from(!self.read(p, &o[0]).as_bool()))),
            tag::ASSERT_TRUE => {
                if !self.read(p, &o[0]).as_bool() {
                    return Err(fault(self, FaultKind::Assert));
                }
                None
            }
            tag::ASSERT_EQ => {
                if self.read(p, &o[0]) != self.read(p, &o[1]) {
                    return Err(fault(self, FaultKind::Assert));
                }
                None
            }
            tag::LOAD_LOCAL => Some(self.read(p, &o[0])),
            tag::STORE_LOCAL => {
                let v = self.take(p, &o[1]);
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let fr = self.frame();
                fr.places[pi] = Some(v);
                if p.owner[pi] {
                    fr.custody.push(pi);
                }
                None
            }
            tag::UNIT_VALUE => Some(Value::Unit),
            tag::ENUM_CONST => {
                let Aux::Variant(v) = &op.aux0 else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let (d, variant_index) = self.it.r.variants[v];
                Some(Value::Variant(
                    self.it.r.module.declarations[d].variants[variant_index].tag,
                    Vec::new(),
                ))
            }
            tag::ENUM_IS_VARIANT => {
                let Aux::Variant(v) = &op.aux0 else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let (d, variant_index) = self.it.r.variants[v];
                let want = self.it.r.module.declarations[d].variants[variant_index].tag;
                let got = match self.observe(p, &o[0]) {
                    Some(Value::Variant(t, _)) => t,
                    _ => return Err(fault(self, FaultKind::Tag)),
                };
                Some(Value::Scalar(u64::from(got == want)))
            }
            tag::AGGREGATE_CONSTRUCT | tag::VARIANT_CONSTRUCT => {
                let fields = o.iter().map(|x| Some(self.take(p, x))).collect();
                if op.tag == tag::AGGREGATE_CONSTRUCT {
                    Some(Value::Record(fields))
                } else {
                    let Aux::Variant(v) = &op.aux0 else {
                        return Err(fault(self, FaultKind::Internal));
                    };
                    let (d, variant_index) = self.it.r.variants[v];
                    Some(Value::Variant(
                        self.it.r.module.declarations[d].variants[variant_index].tag,
                        fields,
                    ))
                }
            }
            tag::FIELD_COPY | tag::FIELD_MOVE => {
                let Aux::Field(fid) = &op.aux0 else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let Some((d, variant, fld)) = self.it.r.field(fid) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let want_tag = variant.map(|v| self.it.r.module.declarations[d].variants[v].tag);
                let ord = fld.ordinal as usize;
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let Some(l) = self.loc_of(p, pi) else {
                    return Err(fault(self, FaultKind::Tag));
                };
                let Some(owner) = self.deref_mut(&l) else {
                    return Err(fault(self, FaultKind::Tag));
                };
                if let (Some(w), Value::Variant(t, _)) = (want_tag, &*owner)
                    && *t != w
                {
                    return Err(fault(self, FaultKind::Tag));
                }
                let Some(slot) = owner.fields_mut().and_then(|f| f.get_mut(ord)) else {
                    return Err(fault(self, FaultKind::Tag));
                };
                let v = if op.tag == tag::FIELD_COPY {
                    slot.clone()
                } else {
                    slot.take()
                };
                Some(v.unwrap_or(Value::Unit))
            }
            tag::PLACE_MOVE => {
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                Some(self.take_place(p, pi).unwrap_or(Value::Unit))
            }
            tag::PLACE_DROP => {
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                self.drop_place(p, pi);
                None
            }
            tag::REPLACE_COMMIT => {
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                // Candidate position in custody, before it is consumed.
                let cand = match &o[1] {
                    Opd::Val(i) => {
                        p.temp[*i].and_then(|t| self.frame().custody.iter().position(|&c| c == t))
                    }
                    _ => None,
                };
                let v = self.take(p, &o[1]);
                let old = if p.path_route[pi].1.is_empty() && !p.borrow_root[pi] {
                    let fr = self.frame();
                    let had = fr.custody.iter().position(|&c| c == pi);
                    fr.custody.retain(|&c| c != pi);
                    if had.is_some() {
                        let pos = cand
                            .map(|c| c.saturating_sub(usize::from(had.is_some_and(|h| h < c))))
                            .unwrap_or(fr.custody.len())
                            .min(fr.custody.len());
                        fr.custody.insert(pos, pi);
                    }
                    fr.places[pi].replace(v)
                } else {
                    let Some(l) = self.loc_of(p, pi) else {
                        return Err(fault(self, FaultKind::Tag));
                    };
                    let Some(slot) = self.deref_mut(&l) else {
                        return Err(fault(self, FaultKind::Tag));
                    };
                    Some(std::mem::replace(slot, v))
                };
                if let Some(old) = old {
                    let name = format!("{} (replaced)", self.path_name(p, pi));
                    self.drop_value(p, &name, &p.f.body.paths[pi].ty, old);
                }
                None
            }
            tag::BORROW_SHARED | tag::BORROW_MUT => match &o[0] {
                Opd::Place(pi) if p.f.body.paths[*pi].ty == Type::SliceByte => {
                    // The shared Ref<Slice<Byte>> child of a transient
                    // Slice local keeps the same owner and bounds.
                    Some(self.place_value(p, *pi))
                }
                Opd::Place(pi) => {
                    let l = self
                        .loc_of(p, *pi)
                        .ok_or_else(|| fault(self, FaultKind::Tag))?;
                    Some(Value::Loan(l))
                }
                other => Some(self.read(p, other)),
            },
            tag::BORROW_SLICE_BYTE => {
                let l = match &o[0] {
                    Opd::Place(pi) => self.loc_of(p, *pi),
                    other => match self.read(p, other) {
                        Value::Loan(l) => Some(l),
                        _ => None,
                    },
                }
                .ok_or_else(|| fault(self, FaultKind::Tag))?;
                let mut l = l;
                if let Some(Value::Record(_)) = self.deref(&l) {
                    // The Bytes.slice facade form: the certified private
                    // storage field (ordinal zero) of the viewed Bytes.
                    l.fields.push(0);
                }
                let s = self.read(p, &o[1]).bits();
                let e = self.read(p, &o[2]).bits();
                let len = match self.deref(&l) {
                    Some(Value::Bytes(b)) => b.len() as u64,
                    _ => return Err(fault(self, FaultKind::Tag)),
                };
                if s > e || e > len {
                    return Err(fault(self, FaultKind::Bounds));
                }
                Some(Value::Slice(l, s, e))
            }
            tag::BYTE_BUILDER_FINISH => {
                let Opd::Place(pi) = o[0] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let Some(t) = p.temp[flat] else {
                    return Err(fault(self, FaultKind::Internal));
                };
                // One atomic relabel: the Builder's token becomes the Bytes
                // result at the same custody position; nothing is copied.
                let fr = self.frame();
                let Some(pos) = fr.custody.iter().position(|&c| c == pi) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let Some(v) = fr.places[pi].take() else {
                    return Err(fault(self, FaultKind::Internal));
                };
                fr.custody[pos] = t;
                fr.places[t] = Some(v);
                return Ok(None);
            }
            tag::RESULT_OK_RICH => Some(Value::Result(0, Box::new(self.take(p, &o[0])))),
            tag::RESULT_ERR_RICH => Some(Value::Result(1, Box::new(self.take(p, &o[0])))),
            tag::CALL => {
                let Aux::Func(sig) = &op.aux0 else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let at = self.it.r.funcs[sig];
                if self.frames.len() - self.base >= self.it.limits.depth {
                    // Precommit: nothing has moved yet.
                    return Err(fault(self, FaultKind::DepthLimit));
                }
                let args: Vec<Value> = o.iter().map(|x| self.take(p, x)).collect();
                Some(self.call(at, None, args)?)
            }
            tag::INTRINSIC_CALL => {
                let Aux::CatalogFunc(sig) = &op.aux0 else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let Some(e) = crate::catalog::by_signature(sig) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let args: Vec<Value> = o.iter().map(|x| self.take(p, x)).collect();
                Some(self.intrinsic(p, b, j, e.selector, args)?)
            }
            other => {
                let _ = other;
                return Err(fault(self, FaultKind::Internal));
            }
        })
    }

    fn intrinsic(
        &mut self,
        p: &Prog<'m>,
        b: u32,
        j: u32,
        sel: u32,
        args: Vec<Value>,
    ) -> Step<Value> {
        let fault = |s: &Self, k| s.fault(p, Some(b), Some(j), k);
        let bytes_at = |s: &Self, v: &Value| -> Option<Vec<u8>> {
            match v {
                Value::Loan(l) => match s.deref(l) {
                    Some(Value::Bytes(b)) => Some(b.clone()),
                    _ => None,
                },
                Value::Slice(l, st, en) => match s.deref(l) {
                    Some(Value::Bytes(b)) => b.get(*st as usize..*en as usize).map(|x| x.to_vec()),
                    _ => None,
                },
                _ => None,
            }
        };
        Ok(match sel {
            1 | 9 => {
                let bs = bytes_at(self, &args[0]).ok_or_else(|| fault(self, FaultKind::Tag))?;
                Value::Scalar(bs.len() as u64)
            }
            2 | 10 => {
                let bs = bytes_at(self, &args[0]).ok_or_else(|| fault(self, FaultKind::Tag))?;
                let i = args[1].bits();
                match bs.get(i as usize) {
                    Some(x) if i < bs.len() as u64 => Value::Scalar(u64::from(*x)),
                    _ => return Err(fault(self, FaultKind::Bounds)),
                }
            }
            3 => {
                let cap = args[1].bits();
                if self.bytes.saturating_add(cap) > self.it.limits.bytes {
                    Value::Result(1, Box::new(Value::Scalar(cap)))
                } else {
                    self.bytes += cap;
                    Value::Result(0, Box::new(Value::Bytes(Vec::with_capacity(cap as usize))))
                }
            }
            4 => {
                let Value::Loan(l) = &args[0] else {
                    return Err(fault(self, FaultKind::Tag));
                };
                let byte = args[2].bits() as u8;
                let over = self.bytes >= self.it.limits.bytes;
                let l = l.clone();
                let grow = match self.deref(&l) {
                    Some(Value::Bytes(bs)) => bs.len() == bs.capacity(),
                    _ => return Err(fault(self, FaultKind::Tag)),
                };
                if grow && over {
                    return Ok(Value::Result(1, Box::new(Value::Scalar(1))));
                }
                if let Some(Value::Bytes(bs)) = self.deref_mut(&l) {
                    let before = bs.capacity();
                    bs.push(byte);
                    let after = bs.capacity();
                    self.bytes += (after - before) as u64;
                }
                Value::Result(0, Box::new(Value::Unit))
            }
            5 => {
                let Value::Loan(l) = &args[0] else {
                    return Err(fault(self, FaultKind::Tag));
                };
                let l = l.clone();
                let i = args[1].bits();
                let byte = args[2].bits() as u8;
                match self.deref_mut(&l) {
                    Some(Value::Bytes(bs)) if i < bs.len() as u64 => {
                        bs[i as usize] = byte;
                        Value::Unit
                    }
                    _ => return Err(fault(self, FaultKind::Bounds)),
                }
            }
            7 => {
                let Value::Loan(l) = &args[0] else {
                    return Err(fault(self, FaultKind::Tag));
                };
                let l = l.clone();
                if let Some(Value::Bytes(bs)) = self.deref_mut(&l) {
                    bs.clear();
                }
                Value::Unit
            }
            8 => Value::Scalar(self.it.limits.bytes.saturating_sub(self.bytes)),
            _ => return Err(fault(self, FaultKind::Tag)),
        })
    }

    /// Evaluates one contract expression lazily from its root.
    fn contract(&mut self, p: &'a Prog<'m>, e: &'m Expr, result: Option<&Value>) -> Step<bool> {
        let root = e.ops.len() - 1;
        let v = self.cexpr(p, e, root, result)?;
        Ok(v.as_bool())
    }

    fn coperand(
        &mut self,
        p: &'a Prog<'m>,
        e: &'m Expr,
        o: &ContractOperand,
        result: Option<&Value>,
    ) -> Step<Value> {
        Ok(match o {
            ContractOperand::Const(c) => Value::Scalar(numeric::canon(c.kind, c.bits)),
            ContractOperand::Receiver => p
                .slots
                .first()
                .copied()
                .flatten()
                .and_then(|pi| self.frame().places[pi].clone())
                .unwrap_or(Value::Unit),
            ContractOperand::Param(k) => {
                let slot = *k as usize
                    + usize::from(matches!(
                        p.f.receiver,
                        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                    ));
                match p.slots.get(slot).copied().flatten() {
                    Some(pi) => self.frame().places[pi].clone().unwrap_or(Value::Unit),
                    None => Value::Unit,
                }
            }
            ContractOperand::Result => result.cloned().unwrap_or(Value::Unit),
            ContractOperand::Value(i) => self.cexpr(p, e, *i as usize, result)?,
        })
    }

    fn cexpr(
        &mut self,
        p: &'a Prog<'m>,
        e: &'m Expr,
        i: usize,
        result: Option<&Value>,
    ) -> Step<Value> {
        self.tick(p, u32::MAX, i as u32).map_err(|mut f| {
            f.block = None;
            f
        })?;
        let op = &e.ops[i];
        let profile = p.profile;
        let fault = |s: &Self, k| s.fault(p, None, None, k);
        match op.tag {
            23 | 24 => {
                let a = self.coperand(p, e, &op.operands[0], result)?.as_bool();
                if (op.tag == 23 && !a) || (op.tag == 24 && a) {
                    return Ok(Value::Scalar(u64::from(a)));
                }
                return self.coperand(p, e, &op.operands[1], result);
            }
            _ => {}
        }
        let mut vals = Vec::new();
        for o in &op.operands {
            vals.push(self.coperand(p, e, o, result)?);
        }
        let kind = match &op.result {
            Type::Scalar(k) => *k,
            _ => ScalarKind::Bool,
        };
        Ok(match op.tag {
            0 => vals[0].clone(),
            1 => {
                let Some((_, _, fld)) = op.reference.and_then(|fid| self.it.r.field(&fid)) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let owner = match &vals[0] {
                    Value::Loan(l) => self.deref(l).cloned(),
                    v => Some(v.clone()),
                };
                owner
                    .and_then(|o| {
                        o.fields()
                            .and_then(|f| f.get(fld.ordinal as usize).cloned().flatten())
                    })
                    .ok_or_else(|| fault(self, FaultKind::Tag))?
            }
            3 => {
                let Some(sig) = op.reference else {
                    return Err(fault(self, FaultKind::Internal));
                };
                if op.aux0 == 0 {
                    let Some(&at) = self.it.r.funcs.get(&sig) else {
                        return Err(fault(self, FaultKind::Internal));
                    };
                    let callee = &self.it.r.module.declarations[at.0].functions[at.1];
                    let mut args = vals;
                    if callee.receiver == ReceiverKind::Shared {
                        // A synchronous shared child loan of the binding.
                        if !matches!(args[0], Value::Loan(_)) {
                            let recv = usize::from(matches!(
                                p.f.receiver,
                                ReceiverKind::Shared
                                    | ReceiverKind::Exclusive
                                    | ReceiverKind::Owned
                            ));
                            let slot = match op.operands.first() {
                                Some(ContractOperand::Receiver) => Some(0),
                                Some(ContractOperand::Param(k)) => Some(*k as usize + recv),
                                _ => None,
                            };
                            let Some(pi) = slot.and_then(|s| p.slots.get(s).copied().flatten())
                            else {
                                return Err(fault(self, FaultKind::Tag));
                            };
                            args[0] = Value::Loan(Loc {
                                frame: self.frames.len() - 1,
                                slot: pi,
                                fields: vec![],
                            });
                        }
                    }
                    self.call(at, None, args)?
                } else {
                    let Some(ent) = crate::catalog::by_signature(&sig) else {
                        return Err(fault(self, FaultKind::Internal));
                    };
                    // A catalog fault here (a `get` past the end) is at the
                    // contract operation, with no block, as a step fault is.
                    self.intrinsic(p, u32::MAX, i as u32, ent.selector, vals)
                        .map_err(|mut f| {
                            f.block = None;
                            f
                        })?
                }
            }
            4 => Value::Scalar(u64::from(!vals[0].as_bool())),
            5 | 7..=16 => {
                let Some(t) = numeric::contract_flow_tag(op.tag) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let c = vals.get(1).map(|v| v.bits()).unwrap_or(0);
                Value::Scalar(
                    numeric::arith(t, kind, profile, vals[0].bits(), c)
                        .map_err(|k| fault(self, k))?,
                )
            }
            17..=22 => {
                let Some(t) = numeric::contract_flow_tag(op.tag) else {
                    return Err(fault(self, FaultKind::Internal));
                };
                let k = numeric::contract_compare_kind(
                    &self.it.r.self_type(p.decl),
                    p.f,
                    e,
                    &op.operands[0],
                    &op.operands[1],
                );
                Value::Scalar(u64::from(numeric::compare(
                    t,
                    k,
                    vals[0].bits(),
                    vals[1].bits(),
                )))
            }
            _ => return Err(fault(self, FaultKind::Tag)),
        })
    }
}
