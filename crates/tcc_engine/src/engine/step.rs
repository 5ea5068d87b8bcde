//! The instruction stepper: the hot loop over straight-line number code
//! (`run_fast`) and the full `step` of every instruction, with the operand
//! stack, locals, calls and durable operations it needs.

use super::{Action, Awaiting, Execution, Program, bind_params, fatal, type_error};
use crate::continuation::{
    Branch, BranchOp, CancelPhase, Frame, Join, JoinKind, JoinState, Pending, Phase, Status,
    TryHandler, WaitKind,
};
use crate::error::{EngineError, FatalKind, Site};
use crate::fast::{self, Fast, Res, Tail};
use crate::json::{export, obj};
use crate::lang::{self, ArithOp, EvalError, Language};
use crate::object_map::ObjectMap;
use crate::position::FuncPos;
use crate::protocol::HostRequest;
use crate::value::{Cell, Value};
use serde_json::Value as J;
use tcc_ir::Instruction;

impl Execution {
    /// Runs up to `budget` steps; returns how many ran. Stops early when a
    /// step queues host work or changes the status.
    pub(super) fn run_steps(&mut self, budget: u64) -> Result<u64, EngineError> {
        let program = self.program.clone();
        let mut ran = 0;
        while ran < budget {
            let fast = self.run_fast(&program, budget - ran);
            ran += fast;
            self.steps += fast;
            if ran >= budget {
                break;
            }
            ran += 1;
            self.steps += 1;
            let (pos, pc) = match self.state.frames.last() {
                Some(f) => (f.pos, f.pc),
                None => {
                    return Err(EngineError::fatal(
                        FatalKind::Unsupported,
                        "runnable execution without frames",
                    ));
                }
            };
            let func = program.function(pos);
            let site = Site { func: func.id, pc };
            let Some(ins) = func.instructions.get(pc as usize) else {
                return Err(EngineError::fatal(
                    FatalKind::Unsupported,
                    "pc ran off the end of the function",
                )
                .at(site));
            };
            match self.step(&program, pos, pc, ins) {
                Ok(true) => {
                    if self.state.heap.cells().len() >= self.sweep_at {
                        self.sweep_garbage();
                    }
                }
                Ok(false) => return Ok(ran),
                Err(EvalError::Fatal(e)) => return Err(e.at(site)),
                Err(EvalError::Throw(v)) => {
                    self.throw_value(v);
                    if !self.state.status.is_runnable() {
                        return Ok(ran);
                    }
                }
            }
            // `step` returns false whenever it queues host work or changes
            // the status, so the common path checks nothing else.
            debug_assert!(self.queue.is_empty() && self.outstanding.is_none());
        }
        Ok(ran)
    }

    /// The hot loop: straight-line locals, constants, jumps and number
    /// arithmetic/compares within the top frame, without per-step
    /// bookkeeping. It stops, leaving the state untouched, before any
    /// instruction it does not handle or whose operands are not the simple
    /// case; the full stepper then executes (or rejects) that instruction.
    ///
    /// Kept out of line so the loop gets its own register allocation.
    #[inline(never)]
    pub(super) fn run_fast(&mut self, program: &Program, budget: u64) -> u64 {
        let max_stack = self.limits.max_stack;
        let py = program.lang == Language::Py;
        let state = &mut self.state;
        let Some(frame) = state.frames.last_mut() else {
            return 0;
        };
        let prepared = &program.fast[frame.pos.index()];
        // Every local index in `ops` is below the function's local count
        // (`fast::prepare`); a frame of another length is left to the stepper.
        if frame.locals.len() != prepared.local_count {
            return 0;
        }
        let ops = &prepared.ops[..];
        let consts = &program.consts[frame.pos.index()][..];
        let stack = &mut state.stack;
        let locals = &mut frame.locals[..];
        // `fast::num` without the bounds check, which is the hot loop's
        // most frequent operation.
        #[inline(always)]
        #[allow(unsafe_code)] // the workspace's one engine fast path (see SAFETY below)
        fn num(locals: &[Value], o: fast::Operand) -> Option<f64> {
            match o {
                fast::Operand::Num(n) => Some(n),
                // SAFETY: `Program::fast` is built only by `fast::prepare`,
                // which keeps every local index below the function's local
                // count, and this loop runs only on a frame whose locals
                // have exactly that length (checked above; the slice is
                // never resized here).
                fast::Operand::Local(l) => match unsafe { locals.get_unchecked(l as usize) } {
                    Value::Number(n) => Some(*n),
                    _ => None,
                },
            }
        }
        // The local an op stores to, without the bounds check.
        #[inline(always)]
        #[allow(unsafe_code)] // as `num` above
        fn slot(locals: &mut [Value], l: u32) -> &mut Value {
            // SAFETY: as in `num`: `fast::prepare` keeps every stored local
            // below the local count, which is the slice's length.
            unsafe { locals.get_unchecked_mut(l as usize) }
        }
        // Stores a number. A local that already holds a number (a loop's
        // counter or accumulator) has only its payload rewritten: nothing
        // to drop.
        #[inline(always)]
        fn store_num(locals: &mut [Value], l: u32, n: f64) {
            match slot(locals, l) {
                Value::Number(x) => *x = n,
                other => *other = Value::Number(n),
            }
        }
        // A local's number, without the bounds check.
        #[inline(always)]
        fn local_num(locals: &[Value], l: u32) -> Option<f64> {
            num(locals, fast::Operand::Local(l))
        }
        // Adds `k` to a local in place; false when it holds no number.
        #[inline(always)]
        fn add_in_place(locals: &mut [Value], l: u32, k: f64) -> bool {
            match slot(locals, l) {
                Value::Number(x) => {
                    *x += k;
                    true
                }
                _ => false,
            }
        }
        // The first step of a three-operand chain, `o1 b1 o2`, with the
        // third operand read: `(result, third)`, or `None` when an operand
        // is not a number or the operation leaves the fast path.
        #[inline(always)]
        fn chain_head(
            py: bool,
            locals: &[Value],
            o1: fast::Operand,
            o2: fast::Operand,
            b1: fast::Bin,
            o3: fast::Operand,
        ) -> Option<(f64, f64)> {
            let x = num(locals, o1)?;
            let y = num(locals, o2)?;
            let z = num(locals, o3)?;
            Some((fast::arith(py, b1, x, y)?, z))
        }
        // A compare-and-branch form's operands, compare, sense and target,
        // or `None` when it is not one or an operand is not a number.
        #[inline(always)]
        fn cmp_jump_parts(
            locals: &[Value],
            form: Fast,
        ) -> Option<(f64, f64, fast::Bin, bool, u32)> {
            match form {
                Fast::CmpJumpConst(a, k, b, when, t) => {
                    Some((local_num(locals, a)?, k, b, when, t))
                }
                Fast::CmpJumpLocals(a, c, b, when, t) => {
                    Some((local_num(locals, a)?, local_num(locals, c)?, b, when, t))
                }
                Fast::CmpJump(o1, o2, b, when, t) => {
                    Some((num(locals, o1)?, num(locals, o2)?, b, when, t))
                }
                _ => None,
            }
        }
        // The compare-and-branch at `at` when it can run now (it is one, it
        // fits the budget and the operand-stack room, its operands are
        // numbers): the pc it leaves for and its instruction count. A back
        // edge runs its loop's condition through this without a second
        // dispatch.
        #[inline(always)]
        fn threaded_cmp_jump(
            ops: &[fast::FastOp],
            at: usize,
            left: u64,
            room: bool,
            locals: &[Value],
        ) -> Option<(usize, u64)> {
            let op = ops.get(at)?;
            if u64::from(op.len) > left || !room {
                return None;
            }
            let (x, y, b, when, target) = cmp_jump_parts(locals, op.form)?;
            let c = fast::compare(b, x, y)?;
            let after = if c == when {
                target as usize
            } else {
                at + op.len as usize
            };
            Some((after, u64::from(op.len)))
        }
        let mut pc = frame.pc as usize;
        let mut left = budget;
        while let Some(op) = ops.get(pc) {
            let n = u64::from(op.len);
            if n > left {
                break;
            }
            let next = pc + op.len as usize;
            // Applies a fused op's tail to a number result: it is pushed,
            // stored or branched on, and `pc` moves on. A store-and-jump
            // (a loop's back edge) charges its instructions and runs the
            // loop's compare-and-branch at once when it can, so the next
            // dispatch is the loop body's.
            macro_rules! finish_num {
                ($result:expr, $tail:expr) => {{
                    let r: f64 = $result;
                    pc = match $tail {
                        Tail::Push => {
                            stack.push(Value::Number(r));
                            next
                        }
                        Tail::Store(l) => {
                            store_num(locals, l, r);
                            next
                        }
                        Tail::StoreJump(l, target) => {
                            store_num(locals, l, r);
                            left -= n;
                            let room = stack.len() + 2 <= max_stack;
                            let target = target as usize;
                            pc = match threaded_cmp_jump(ops, target, left, room, locals) {
                                Some((after, len)) => {
                                    left -= len;
                                    after
                                }
                                None => target,
                            };
                            continue;
                        }
                        Tail::JumpIfFalse(target) => {
                            if Res::Num(r).truthy() {
                                next
                            } else {
                                target as usize
                            }
                        }
                        Tail::JumpIfTrue(target) => {
                            if Res::Num(r).truthy() {
                                target as usize
                            } else {
                                next
                            }
                        }
                    };
                }};
            }
            // The same for a boolean (compare) result.
            macro_rules! finish_bool {
                ($result:expr, $tail:expr) => {{
                    let r: bool = $result;
                    pc = match $tail {
                        Tail::Push => {
                            stack.push(Value::Bool(r));
                            next
                        }
                        Tail::Store(l) => {
                            *slot(locals, l) = Value::Bool(r);
                            next
                        }
                        Tail::StoreJump(l, target) => {
                            *slot(locals, l) = Value::Bool(r);
                            target as usize
                        }
                        Tail::JumpIfFalse(target) => {
                            if r {
                                next
                            } else {
                                target as usize
                            }
                        }
                        Tail::JumpIfTrue(target) => {
                            if r {
                                target as usize
                            } else {
                                next
                            }
                        }
                    };
                }};
            }
            // Either kind of result.
            macro_rules! finish {
                ($result:expr, $tail:expr) => {{
                    match $result {
                        Res::Num(r) => finish_num!(r, $tail),
                        Res::Bool(r) => finish_bool!(r, $tail),
                    }
                }};
            }
            // The last operator of a chain: arithmetic (a number) or a
            // compare (a boolean), then the tail.
            macro_rules! last_op {
                ($b:expr, $x:expr, $y:expr, $tail:expr) => {{
                    let (b, x, y) = ($b, $x, $y);
                    if b.is_compare() {
                        let Some(c) = fast::compare(b, x, y) else {
                            break;
                        };
                        finish_bool!(c, $tail);
                    } else {
                        let Some(r) = fast::arith(py, b, x, y) else {
                            break;
                        };
                        finish_num!(r, $tail);
                    }
                }};
            }
            match op.form {
                Fast::Slow => break,
                Fast::Nop => pc = next,
                Fast::Pop => {
                    if stack.pop().is_none() {
                        break;
                    }
                    pc = next;
                }
                Fast::LoadLocal(l) => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    stack.push(slot(locals, l).clone());
                    pc = next;
                }
                Fast::StoreLocal(l) => {
                    let Some(v) = stack.pop() else { break };
                    *slot(locals, l) = v;
                    pc = next;
                }
                Fast::LoadConst => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    let Some(v) = consts.get(pc) else { break };
                    stack.push(v.clone());
                    pc = next;
                }
                Fast::Jump(t) => pc = t as usize,
                Fast::JumpIf(when, t) => {
                    let Some(v) = stack.pop() else { break };
                    pc = if lang::truthy(&v) == when {
                        t as usize
                    } else {
                        next
                    };
                }
                Fast::Bin(b, t) => {
                    let len = stack.len();
                    let (x, y) = match stack.get(len.wrapping_sub(2)..) {
                        Some([Value::Number(x), Value::Number(y)]) => (*x, *y),
                        _ => break,
                    };
                    let Some(r) = fast::apply(py, b, x, y) else {
                        break;
                    };
                    stack.truncate(len - 2);
                    finish!(r, t);
                }
                // The stepper would push each operand before the operator
                // consumes it: a form whose loads would pass the stack
                // limit is left to the stepper, which reports it there.
                Fast::StackOp(o, b, t) => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    let (Some(Value::Number(x)), Some(y)) = (stack.last(), num(locals, o)) else {
                        break;
                    };
                    let Some(r) = fast::apply(py, b, *x, y) else {
                        break;
                    };
                    stack.pop();
                    finish!(r, t);
                }
                Fast::OpOp(o1, o2, b, t) => {
                    if stack.len() + 2 > max_stack {
                        break;
                    }
                    let Some(x) = num(locals, o1) else { break };
                    let Some(y) = num(locals, o2) else { break };
                    last_op!(b, x, y, t);
                }
                Fast::CmpJump(..) | Fast::CmpJumpLocals(..) | Fast::CmpJumpConst(..) => {
                    if stack.len() + 2 > max_stack {
                        break;
                    }
                    let Some((x, y, b, when, target)) = cmp_jump_parts(locals, op.form) else {
                        break;
                    };
                    let Some(c) = fast::compare(b, x, y) else {
                        break;
                    };
                    pc = if c == when { target as usize } else { next };
                }
                Fast::AccumLocal(l, o1, o2, b1, o3, b2, b3) => {
                    if stack.len() + 4 > max_stack {
                        break;
                    }
                    let Some(a) = local_num(locals, l) else { break };
                    let Some((r1, z)) = chain_head(py, locals, o1, o2, b1, o3) else {
                        break;
                    };
                    let Some(r2) = fast::arith(py, b2, r1, z) else {
                        break;
                    };
                    let Some(r) = fast::arith(py, b3, a, r2) else {
                        break;
                    };
                    store_num(locals, l, r);
                    pc = next;
                }
                // The stepper would push the local and the constant.
                Fast::Inc(l, k) => {
                    if stack.len() + 2 > max_stack || !add_in_place(locals, l, k) {
                        break;
                    }
                    pc = next;
                }
                Fast::IncJump(l, k, target) => {
                    if stack.len() + 2 > max_stack || !add_in_place(locals, l, k) {
                        break;
                    }
                    left -= n;
                    // The stack is as it was, so the compare-and-branch
                    // has the room just checked.
                    pc = match threaded_cmp_jump(ops, target as usize, left, true, locals) {
                        Some((after, len)) => {
                            left -= len;
                            after
                        }
                        None => target as usize,
                    };
                    continue;
                }
                Fast::Chain(o1, o2, b1, o3, b2, t) => {
                    // The stepper would hold up to three more values at once;
                    // anything near the limit is left to it.
                    if stack.len() + 4 > max_stack {
                        break;
                    }
                    let Some((r1, z)) = chain_head(py, locals, o1, o2, b1, o3) else {
                        break;
                    };
                    last_op!(b2, r1, z, t);
                }
                Fast::Accum(a, o1, o2, b1, o3, b2, b3, t) => {
                    if stack.len() + 4 > max_stack {
                        break;
                    }
                    let Some(a) = num(locals, a) else { break };
                    let Some(x) = num(locals, o1) else { break };
                    let Some(y) = num(locals, o2) else { break };
                    let Some(z) = num(locals, o3) else { break };
                    let Some(r1) = fast::arith(py, b1, x, y) else {
                        break;
                    };
                    let Some(r2) = fast::arith(py, b2, r1, z) else {
                        break;
                    };
                    last_op!(b3, a, r2, t);
                }
            }
            left -= n;
        }
        frame.pc = pc as u32;
        budget - left
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Result<Value, EvalError> {
        self.state
            .stack
            .pop()
            .ok_or_else(|| fatal(FatalKind::StackUnderflow, "pop from an empty operand stack"))
    }

    #[inline(always)]
    pub(super) fn push(&mut self, v: Value) -> Result<(), EvalError> {
        if self.state.stack.len() >= self.limits.max_stack {
            return Err(EvalError::Fatal(EngineError::limit(
                "operand stack",
                self.limits.max_stack as u64,
            )));
        }
        self.state.stack.push(v);
        Ok(())
    }

    pub(super) fn pop_ref(&mut self, what: &str) -> Result<u32, EvalError> {
        match self.pop()? {
            Value::Ref(id) => Ok(id),
            other => Err(type_error(format!(
                "{what} expects an object or array, got {}",
                other.tag()
            ))),
        }
    }

    pub(super) fn pop_string(&mut self, what: &str) -> Result<String, EvalError> {
        match self.pop()? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(type_error(format!(
                "{what} expects a string, got {}",
                other.tag()
            ))),
        }
    }

    pub(super) fn pop_args(&mut self, n: u32) -> Result<Vec<Value>, EvalError> {
        let n = n as usize;
        if n > self.state.stack.len() {
            return Err(fatal(
                FatalKind::StackUnderflow,
                format!("{n} arguments expected on the stack"),
            ));
        }
        let at = self.state.stack.len() - n;
        Ok(self.state.stack.split_off(at))
    }

    pub(super) fn set_pc(&mut self, pc: u32) {
        if let Some(f) = self.state.frames.last_mut() {
            f.pc = pc;
        }
    }

    pub(super) fn local(&mut self, local: u32) -> Result<&mut Value, EvalError> {
        self.state
            .frames
            .last_mut()
            .and_then(|f| f.locals.get_mut(local as usize))
            .ok_or_else(|| {
                fatal(
                    FatalKind::Unsupported,
                    format!("local {local} out of range"),
                )
            })
    }

    pub(super) fn alloc(&mut self, cell: Cell) -> Result<u32, EvalError> {
        if self.state.heap.cells().len() >= self.limits.max_heap_cells {
            // Collect before giving up; ids stay stable, trailing holes
            // trimmed. The new cell's references are roots too: they were
            // popped off the stack (`NewCell`, `NewEnv`, `NewClosure`) or
            // allocated just before (`LoadFunc`'s environment).
            let mut roots = self.state.roots();
            cell.children(&mut roots);
            let live = self.state.heap.collect(roots);
            self.sweep_at = self.state.heap.next_sweep(live);
        }
        Ok(self.state.heap.alloc(cell, &self.limits)?)
    }

    /// Frees the cells that became unreachable since the last sweep or
    /// checkpoint, between two instructions, where every live reference is
    /// in the state's roots. Cells become holes without trimming
    /// ([`crate::value::Heap::sweep`]), so ids, and with them every
    /// checkpoint's bytes, are those of a run without sweeps.
    ///
    /// The next sweep comes after twice as many allocations as there are
    /// live cells (marking visits every live cell: a growing heap is marked
    /// about once more in all), a thirty-second of the heap's length (each
    /// sweep scans every id, holes included) or [`crate::value::MIN_SWEEP_INTERVAL`],
    /// whichever is most, so sweeping costs a bounded amount per
    /// allocation, and the garbage held at once is bounded by the same.
    #[cold]
    pub(super) fn sweep_garbage(&mut self) {
        let roots = self.state.roots();
        let live = self.state.heap.sweep(roots);
        self.sweep_at = self.state.heap.next_sweep(live);
    }

    pub(super) fn check_len(&self, len: usize) -> Result<(), EvalError> {
        if len >= self.limits.max_collection_len {
            return Err(EvalError::Fatal(EngineError::limit(
                "collection length",
                self.limits.max_collection_len as u64,
            )));
        }
        Ok(())
    }

    pub(super) fn call(
        &mut self,
        program: &Program,
        func: u32,
        args: Vec<Value>,
        env: Option<u32>,
    ) -> Result<(), EvalError> {
        if self.state.frames.len() >= self.limits.max_call_depth {
            return Err(EvalError::Fatal(EngineError::limit(
                "call depth",
                self.limits.max_call_depth as u64,
            )));
        }
        let pos = program
            .position(func)
            .ok_or_else(|| fatal(FatalKind::Unsupported, format!("unknown function {func}")))?;
        let f = program.function(pos);
        let locals = match env {
            None => bind_params(program.lang, f, 0, args)?,
            Some(env) => {
                let mut l = bind_params(program.lang, f, 1, args)?;
                l[0] = Value::Ref(env);
                l
            }
        };
        self.advance_pc();
        self.state.frames.push(Frame {
            func_id: f.id,
            pc: 0,
            locals,
            pos,
        });
        Ok(())
    }

    /// A catchable cancellation requested between steps is thrown at the
    /// next durable operation, before it runs (`irkit.catchable_cancel`).
    #[inline]
    pub(super) fn throw_requested_cancel(&mut self) -> Result<(), EvalError> {
        if self.state.cancel == Some(CancelPhase::Requested) {
            return Err(EvalError::Throw(self.deliver_cancel()?));
        }
        Ok(())
    }

    pub(super) fn durable_allowed(&self, program: &Program, op: &str) -> Result<(), EvalError> {
        if self.state.frames.len() != 1 || self.state.frames[0].pos != program.entry_pos {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                format!("{op} is only allowed in the entry function's only frame"),
            ));
        }
        Ok(())
    }

    /// The next planned branch of the open join, if a join is open.
    pub(super) fn bind_branch(&mut self, op: BranchOp) -> Result<Option<(u32, String)>, EvalError> {
        let Some(join) = self.state.join.as_mut() else {
            return Ok(None);
        };
        if join.state != JoinState::Active {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                "durable operation after the join settled",
            ));
        }
        let Some(b) = join.branches.iter_mut().find(|b| b.phase == Phase::Planned) else {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                "more durable operations than the Fork's branch count",
            ));
        };
        b.op = Some(op);
        Ok(Some((b.index, b.branch_id.clone())))
    }

    pub(super) fn idempotency_key(&self, key: &str) -> String {
        format!("{}:{key}", self.state.execution_id)
    }

    /// Executes one instruction. Returns `Ok(false)` when the step hands
    /// control to the host.
    #[inline]
    pub(super) fn step(
        &mut self,
        program: &Program,
        pos: FuncPos,
        pc: u32,
        ins: &Instruction,
    ) -> Result<bool, EvalError> {
        use Instruction as I;
        let lang = program.lang;
        let mut next = pc + 1;
        match ins {
            I::Nop => {}
            I::Jump { target } => next = *target,
            I::JumpIfTrue { target } => {
                if lang::truthy(&self.pop()?) {
                    next = *target;
                }
            }
            I::JumpIfFalse { target } => {
                if !lang::truthy(&self.pop()?) {
                    next = *target;
                }
            }
            I::Call { func, argc } => {
                let args = self.pop_args(*argc)?;
                self.call(program, *func, args, None)?;
                return Ok(true);
            }
            I::Return => {
                let result = self.state.stack.pop().unwrap_or(Value::Undefined);
                let depth = self.state.frames.len() as u32 - 1;
                while self
                    .state
                    .try_stack
                    .last()
                    .is_some_and(|h| h.frame >= depth)
                {
                    self.state.try_stack.pop();
                }
                self.state.frames.pop();
                if self.state.frames.is_empty() {
                    self.state.status = Status::Completed;
                    self.state.result = Some(result);
                    self.queue.push_back(Action::Checkpoint);
                    return Ok(false);
                }
                self.push(result)?;
                return Ok(true);
            }
            I::LoadLocal { local } => {
                let v = self.local(*local)?.clone();
                self.push(v)?;
            }
            I::StoreLocal { local } => {
                let v = self.pop()?;
                *self.local(*local)? = v;
            }
            I::LoadConst { .. } => {
                let v = program.consts[pos.index()][pc as usize].clone();
                self.push(v)?;
            }
            I::Pop => {
                self.pop()?;
            }
            I::NewObject => {
                let id = self.alloc(Cell::Object(ObjectMap::new()))?;
                self.push(Value::Ref(id))?;
            }
            I::SetProp { key } => {
                let v = self.pop()?;
                let id = self.pop_ref("SetProp")?;
                let max = self.limits.max_collection_len;
                match self.state.heap.get_mut(id)? {
                    Cell::Object(m) => {
                        if m.len() >= max && !m.contains_key(key.as_str()) {
                            return Err(EvalError::Fatal(EngineError::limit(
                                "collection length",
                                max as u64,
                            )));
                        }
                        m.insert(key.clone(), v);
                    }
                    other => return Err(type_error(format!("SetProp on a {}", other.tag()))),
                }
                self.push(Value::Ref(id))?;
            }
            I::GetProp { key } => {
                let id = self.pop_ref("GetProp")?;
                let v = match self.state.heap.get(id)? {
                    Cell::Object(m) => m.get(key.as_str()).cloned().unwrap_or(Value::Undefined),
                    other => return Err(type_error(format!("GetProp on a {}", other.tag()))),
                };
                self.push(v)?;
            }
            I::NewArray => {
                let id = self.alloc(Cell::Array(Vec::new()))?;
                self.push(Value::Ref(id))?;
            }
            I::ArrayPush => {
                let v = self.pop()?;
                let id = self.pop_ref("ArrayPush")?;
                if self.state.iterating.contains(&id) {
                    return Err(fatal(
                        FatalKind::IteratorInvalidated,
                        "ArrayPush on an array being iterated",
                    ));
                }
                let len = match self.state.heap.get(id)? {
                    Cell::Array(a) => a.len(),
                    other => return Err(type_error(format!("ArrayPush on a {}", other.tag()))),
                };
                self.check_len(len)?;
                if let Cell::Array(a) = self.state.heap.get_mut(id)? {
                    a.push(v);
                }
                self.push(Value::Ref(id))?;
            }
            I::ArrayIndex { index } => {
                let Some(Value::Ref(id)) = self.state.stack.last() else {
                    return Err(type_error(
                        "ArrayIndex expects an array on top of the stack",
                    ));
                };
                let v = match self.state.heap.get(*id)? {
                    Cell::Array(a) => a.get(*index as usize).cloned().unwrap_or(Value::Undefined),
                    other => return Err(type_error(format!("ArrayIndex on a {}", other.tag()))),
                };
                self.push(v)?;
            }
            I::StrictEq | I::StrictNeq => {
                let r = self.pop()?;
                let l = self.pop()?;
                let eq = lang::strict_eq(lang, &self.state.heap, &l, &r)?;
                self.push(Value::Bool(eq == matches!(ins, I::StrictEq)))?;
            }
            I::Lt | I::Le | I::Gt | I::Ge => {
                let r = self.pop()?;
                let l = self.pop()?;
                let (a, b) = lang::numbers(ins.name(), &l, &r)?;
                let v = match ins {
                    I::Lt => a < b,
                    I::Le => a <= b,
                    I::Gt => a > b,
                    _ => a >= b,
                };
                self.push(Value::Bool(v))?;
            }
            I::Not => {
                let v = self.pop()?;
                self.push(Value::Bool(!lang::truthy(&v)))?;
            }

            // ---- durable operations
            I::Effect { has_input } => {
                self.durable_allowed(program, "Effect")?;
                self.throw_requested_cancel()?;
                let key = self.pop_string("Effect key")?;
                let input = if *has_input {
                    let v = self.pop()?;
                    export(&self.state.heap, &v)?
                } else {
                    obj([("t", "object".into()), ("v", J::Object(Default::default()))])
                };
                let idempotency_key = self.idempotency_key(&key);
                let in_branch = self
                    .bind_branch(BranchOp::Effect { key: key.clone() })?
                    .map(|(i, _)| i);
                self.state.pending = Some(Pending::Effect {
                    key: key.clone(),
                    idempotency_key: idempotency_key.clone(),
                });
                // pc is not advanced: the result response advances it.
                self.outstanding = Some((
                    HostRequest::RunEffect {
                        key,
                        idempotency_key,
                        input,
                    },
                    Awaiting::EffectResult { in_branch },
                ));
                return Ok(false);
            }
            I::Sleep => {
                self.durable_allowed(program, "Sleep")?;
                self.throw_requested_cancel()?;
                let n = match self.pop()? {
                    Value::Number(n) => n,
                    other => {
                        return Err(type_error(format!(
                            "Sleep expects a number, got {}",
                            other.tag()
                        )));
                    }
                };
                let resume_at_ms = if n.is_nan() || n <= 0.0 {
                    0
                } else {
                    n.trunc() as u64
                };
                let bound = self.bind_branch(BranchOp::Timer { resume_at_ms })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Timer { resume_at_ms }));
                }
                self.outstanding = Some((
                    HostRequest::RegisterTimer {
                        resume_at_ms,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::WaitForEvent => {
                self.durable_allowed(program, "WaitForEvent")?;
                self.throw_requested_cancel()?;
                let event_name = self.pop_string("WaitForEvent")?;
                let bound = self.bind_branch(BranchOp::Event {
                    event_name: event_name.clone(),
                })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                // Inside a group the wait id is the branch id (the reference's
                // rule: a pc-only id aliases across loop iterations).
                let wait_id = match &branch {
                    Some(b) => b.clone(),
                    None => format!("{}:{event_name}::{pc}", self.state.execution_id),
                };
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Event {
                        wait_id: wait_id.clone(),
                        event_name: event_name.clone(),
                        correlation_key: None,
                    }));
                }
                self.outstanding = Some((
                    HostRequest::RegisterWait {
                        wait_id,
                        event_name,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::Invoke { arg_count } => {
                self.durable_allowed(program, "Invoke")?;
                self.throw_requested_cancel()?;
                let program_name = self.pop_string("Invoke program name")?;
                let args = self.pop_args(*arg_count)?;
                let mut exported = Vec::with_capacity(args.len());
                for a in &args {
                    exported.push(export(&self.state.heap, a)?);
                }
                let branch_id = self.state.join.as_ref().and_then(|j| {
                    j.branches
                        .iter()
                        .find(|b| b.phase == Phase::Planned)
                        .map(|b| b.branch_id.clone())
                });
                let invoke_id =
                    branch_id.unwrap_or_else(|| format!("{}:invoke:{pc}", self.state.execution_id));
                let child_execution_id = format!("child:{invoke_id}");
                let bound = self.bind_branch(BranchOp::Child {
                    program_name: program_name.clone(),
                    invoke_id: invoke_id.clone(),
                    child_execution_id: child_execution_id.clone(),
                })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Child {
                        invoke_id: invoke_id.clone(),
                        child_execution_id: child_execution_id.clone(),
                    }));
                }
                self.outstanding = Some((
                    HostRequest::CreateChild {
                        invoke_id,
                        child_execution_id,
                        program_name,
                        args: exported,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::Fork { count, join_pc } => {
                self.durable_allowed(program, "Fork")?;
                self.throw_requested_cancel()?;
                if self.state.join.is_some() {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "nested concurrent groups",
                    ));
                }
                if !(1..=32).contains(count) {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "Fork count must be 1 through 32",
                    ));
                }
                let kind = match program.function(pos).instructions.get(*join_pc as usize) {
                    Some(I::JoinAll) => JoinKind::All,
                    Some(I::JoinAny) => JoinKind::Any,
                    _ => {
                        return Err(fatal(
                            FatalKind::IllegalDurableOp,
                            "Fork join_pc does not name a JoinAll or JoinAny",
                        ));
                    }
                };
                let reentry = self.next_reentry(pc);
                let exec = &self.state.execution_id;
                let branches = (0..*count)
                    .map(|index| Branch {
                        index,
                        branch_id: format!("{exec}:{pc}:{reentry}:{index}"),
                        op: None,
                        phase: Phase::Planned,
                        result: None,
                        error: None,
                    })
                    .collect();
                self.state.join = Some(Join {
                    kind,
                    site: pc,
                    reentry,
                    join_pc: *join_pc,
                    state: JoinState::Active,
                    winner_branch: None,
                    failure_branch: None,
                    branches,
                });
            }
            I::JoinAll | I::JoinAny => {
                self.durable_allowed(program, ins.name())?;
                let want = if matches!(ins, I::JoinAll) {
                    JoinKind::All
                } else {
                    JoinKind::Any
                };
                let Some(join) = &self.state.join else {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        format!("{} without an open group", ins.name()),
                    ));
                };
                if join.kind != want || join.join_pc != pc {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        format!("{} does not close the open group", ins.name()),
                    ));
                }
                if join.branches.iter().any(|b| b.phase == Phase::Planned) {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "join reached before every branch was bound to a durable operation",
                    ));
                }
                // A `JoinAll` that settles delivers at once: its results were
                // persisted with the branches. A race's winner, or a suspension,
                // is persisted first (usually folded into the last branch's
                // checkpoint already, see `fold_join_reached`).
                let settled = self.try_settle()?;
                if !settled {
                    self.state.status = Status::Suspended;
                }
                if !settled || want == JoinKind::Any {
                    self.queue.push_back(Action::Checkpoint);
                }
                return Ok(false);
            }

            // ---- exceptions
            I::Throw => {
                let v = self.pop()?;
                return Err(EvalError::Throw(v));
            }
            I::PushTry { catch, finally } => {
                if self.state.try_stack.len() >= self.limits.max_try_depth {
                    return Err(EvalError::Fatal(EngineError::limit(
                        "try depth",
                        self.limits.max_try_depth as u64,
                    )));
                }
                self.state.try_stack.push(TryHandler {
                    catch: *catch,
                    finally: *finally,
                    stack_len: self.state.stack.len() as u32,
                    frame: self.state.frames.len() as u32 - 1,
                });
            }
            I::PopTry => {
                let depth = self.state.frames.len() as u32 - 1;
                match self.state.try_stack.last() {
                    Some(h) if h.frame == depth => {
                        self.state.try_stack.pop();
                    }
                    _ => {
                        return Err(fatal(
                            FatalKind::StackUnderflow,
                            "PopTry without a handler in this frame",
                        ));
                    }
                }
            }

            // ---- lang.compute
            I::Add | I::Sub | I::Mul | I::Div | I::Rem | I::Pow | I::FloorDiv => {
                let r = self.pop()?;
                let l = self.pop()?;
                let op = match ins {
                    I::Add => ArithOp::Add,
                    I::Sub => ArithOp::Sub,
                    I::Mul => ArithOp::Mul,
                    I::Div => ArithOp::Div,
                    I::Rem => ArithOp::Rem,
                    I::Pow => ArithOp::Pow,
                    _ => ArithOp::FloorDiv,
                };
                let v = lang::arith(lang, op, &l, &r, self.limits.max_string_bytes)?;
                self.push(v)?;
            }
            I::Neg => {
                let v = self.pop()?;
                self.push(lang::neg(lang, &v)?)?;
            }
            I::GetIndex => {
                let index = self.pop()?;
                let coll = self.pop()?;
                let v = self.get_index(lang, &coll, &index)?;
                self.push(v)?;
            }
            I::SetIndex => {
                let v = self.pop()?;
                let index = self.pop()?;
                let id = self.pop_ref("SetIndex")?;
                match self.state.heap.get_mut(id)? {
                    Cell::Array(a) => {
                        let i = array_index(lang, &index, a.len()).ok_or_else(|| {
                            fatal(FatalKind::IndexOutOfRange, "SetIndex index out of range")
                        })?;
                        a[i] = v;
                    }
                    Cell::Object(m) => match index {
                        Value::Str(k) => {
                            m.insert(k.to_string(), v);
                        }
                        other => {
                            return Err(type_error(format!(
                                "object key must be a string, got {}",
                                other.tag()
                            )));
                        }
                    },
                    other => return Err(type_error(format!("SetIndex on a {}", other.tag()))),
                }
                self.push(Value::Ref(id))?;
            }
            I::Length => {
                let v = self.pop()?;
                let n = match &v {
                    Value::Str(s) => lang::string_length(lang, s),
                    Value::Ref(id) => match self.state.heap.get(*id)? {
                        Cell::Array(a) => a.len(),
                        Cell::Object(m) if lang == Language::Py => m.len(),
                        other => return Err(type_error(format!("Length of a {}", other.tag()))),
                    },
                    other => return Err(type_error(format!("Length of a {}", other.tag()))),
                };
                self.push(Value::Number(n as f64))?;
            }
            I::WatchIter => {
                let Some(Value::Ref(id)) = self.state.stack.last() else {
                    return Err(type_error("WatchIter expects an array on top of the stack"));
                };
                let id = *id;
                if !matches!(self.state.heap.get(id)?, Cell::Array(_)) {
                    return Err(type_error("WatchIter expects an array"));
                }
                self.check_len(self.state.iterating.len())?;
                self.state.iterating.push(id);
            }
            I::UnwatchIter => {
                if self.state.iterating.pop().is_none() {
                    return Err(fatal(
                        FatalKind::StackUnderflow,
                        "UnwatchIter without WatchIter",
                    ));
                }
            }
            I::Same => {
                let r = self.pop()?;
                let l = self.pop()?;
                self.push(Value::Bool(lang::ts_eq(&l, &r)))?;
            }
            I::NewCell => {
                let v = self.pop()?;
                let id = self.alloc(Cell::Var(v))?;
                self.push(Value::Ref(id))?;
            }
            I::NewEnv { count } => {
                let cells = self.pop_args(*count)?;
                let mut ids = Vec::with_capacity(cells.len());
                for c in cells {
                    match c {
                        Value::Ref(id) if matches!(self.state.heap.get(id)?, Cell::Var(_)) => {
                            ids.push(id)
                        }
                        other => {
                            return Err(type_error(format!(
                                "NewEnv expects cell refs, got {}",
                                other.tag()
                            )));
                        }
                    }
                }
                let id = self.alloc(Cell::Env(ids))?;
                self.push(Value::Ref(id))?;
            }
            I::NewClosure { func } => {
                let env = self.pop_ref("NewClosure")?;
                if !matches!(self.state.heap.get(env)?, Cell::Env(_)) {
                    return Err(type_error("NewClosure expects an environment"));
                }
                let id = self.alloc(Cell::Closure { func: *func, env })?;
                self.push(Value::Ref(id))?;
            }
            I::EnvGet { index } => {
                let env = self.pop_ref("EnvGet")?;
                let cell = self.env_slot(env, *index)?;
                let v = match self.state.heap.get(cell)? {
                    Cell::Var(v) => v.clone(),
                    _ => return Err(type_error("environment slot is not a cell")),
                };
                self.push(v)?;
            }
            I::EnvSet { index } => {
                let v = self.pop()?;
                let env = self.pop_ref("EnvSet")?;
                let cell = self.env_slot(env, *index)?;
                match self.state.heap.get_mut(cell)? {
                    Cell::Var(slot) => *slot = v,
                    _ => return Err(type_error("environment slot is not a cell")),
                }
            }
            I::EnvSlot { index } => {
                let env = self.pop_ref("EnvSlot")?;
                let cell = self.env_slot(env, *index)?;
                self.push(Value::Ref(cell))?;
            }
            I::CallClosure { argc } => {
                let args = self.pop_args(*argc)?;
                let id = self.pop_ref("CallClosure")?;
                let (func, env) = match self.state.heap.get(id)? {
                    Cell::Closure { func, env } => (*func, *env),
                    other => return Err(type_error(format!("CallClosure on a {}", other.tag()))),
                };
                self.call(program, func, args, Some(env))?;
                return Ok(true);
            }
            I::LoadFunc { func } => {
                let fpos = program
                    .position(*func)
                    .ok_or_else(|| {
                        fatal(FatalKind::Unsupported, format!("unknown function {func}"))
                    })?
                    .index();
                let cached = self.state.func_refs.get(fpos).copied().flatten();
                let id = match cached {
                    Some(id) => id,
                    None => {
                        let env = self.alloc(Cell::Env(Vec::new()))?;
                        let id = self.alloc(Cell::Closure { func: *func, env })?;
                        if self.state.func_refs.len() <= fpos {
                            self.state.func_refs.resize(fpos + 1, None);
                        }
                        self.state.func_refs[fpos] = Some(id);
                        id
                    }
                };
                self.push(Value::Ref(id))?;
            }
        }
        self.set_pc(next);
        Ok(true)
    }

    pub(super) fn env_slot(&self, env: u32, index: u32) -> Result<u32, EvalError> {
        match self.state.heap.get(env)? {
            Cell::Env(ids) => ids
                .get(index as usize)
                .copied()
                .ok_or_else(|| fatal(FatalKind::IndexOutOfRange, "environment index out of range")),
            other => Err(type_error(format!(
                "expected an environment, got a {}",
                other.tag()
            ))),
        }
    }

    pub(super) fn get_index(
        &self,
        lang: Language,
        coll: &Value,
        index: &Value,
    ) -> Result<Value, EvalError> {
        match coll {
            Value::Ref(id) => match self.state.heap.get(*id)? {
                Cell::Array(a) => {
                    if !matches!(index, Value::Number(_)) {
                        return Err(type_error(format!(
                            "array index must be a number, got {}",
                            index.tag()
                        )));
                    }
                    match array_index(lang, index, a.len()) {
                        Some(i) => Ok(a[i].clone()),
                        None if lang == Language::Py => {
                            Err(EvalError::Throw(Value::string("IndexError")))
                        }
                        None => Ok(Value::Undefined),
                    }
                }
                Cell::Object(m) => match index {
                    Value::Str(k) => match m.get(k) {
                        Some(v) => Ok(v.clone()),
                        None if lang == Language::Py => {
                            Err(EvalError::Throw(Value::string("KeyError")))
                        }
                        None => Ok(Value::Undefined),
                    },
                    other => Err(type_error(format!(
                        "object key must be a string, got {}",
                        other.tag()
                    ))),
                },
                other => Err(type_error(format!("GetIndex on a {}", other.tag()))),
            },
            Value::Str(s) => {
                let len = lang::string_length(lang, s);
                match array_index(lang, index, len).and_then(|i| lang::string_index(lang, s, i)) {
                    Some(c) => Ok(Value::string(&c)),
                    None if lang == Language::Py => {
                        Err(EvalError::Throw(Value::string("IndexError")))
                    }
                    None => Ok(Value::Undefined),
                }
            }
            other => Err(type_error(format!("GetIndex on a {}", other.tag()))),
        }
    }
}

fn split(bound: Option<(u32, String)>) -> (Option<u32>, Option<String>) {
    match bound {
        Some((i, id)) => (Some(i), Some(id)),
        None => (None, None),
    }
}

/// An in-range element index: integral numbers only; Python wraps negatives.
fn array_index(lang: Language, index: &Value, len: usize) -> Option<usize> {
    let Value::Number(n) = index else { return None };
    if n.fract() != 0.0 || !n.is_finite() {
        return None;
    }
    let i = if *n < 0.0 && lang == Language::Py {
        *n + len as f64
    } else {
        *n
    };
    if i >= 0.0 && (i as usize) < len {
        Some(i as usize)
    } else {
        None
    }
}
