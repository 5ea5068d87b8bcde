//! The lowered form's vocabulary: the instructions ([`Inst`]) with the
//! values they read, the operands they take, their result homes, fault
//! sites and edges, and the bytes facade's operations; and how a flow
//! operand becomes a [`Value`] or a [`Take`].

use super::word::{Arith, Compare};
use crate::interp::canon;
use crate::materialize::c::Refusal;
use crate::materialize::c::plan::FunctionPlan;
use crate::materialize::c::types::is_word;
use crate::materialize::c::walk::At;
use crate::model::*;

/// A value an instruction reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// The result of flow operation (block, ordinal), in its own variable.
    Flow(u32, u32),
    /// A non-word flow result held by its owner temporary (owned path).
    Temp(usize),
    /// A canonical word.
    Word(u64),
    /// The binding of an owned path (a loan root's: its address).
    Place(usize),
}

/// An operand as an argument: its value, whether it is one word, and the
/// owner temporary that leaves custody when it is taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Take {
    pub value: Value,
    pub word: bool,
    /// Taken out of custody first (an owner temporary).
    pub release: Option<usize>,
}

/// Where a result goes: flow operation (block, ordinal)'s own variable, or
/// its owner temporary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    Flow(u32, u32),
    Owner(usize),
}

/// A fault site: (block, operation ordinal) of the operation that faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub block: u32,
    pub op: u32,
}

/// One cleanup drop on an edge: the recipe index it ticks at (block,
/// recipe) and the owned path it drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeDrop {
    pub recipe: u32,
    pub path: usize,
}

/// An edge out of a block: its target and its cleanup recipe drops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub target: u32,
    pub drops: Vec<EdgeDrop>,
}

/// One lowered instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inst {
    /// `dst = src` (CONST, LOAD_LOCAL): a word, or a value of type `ty`
    /// copied from its storage.
    Copy { dst: Dest, src: Take, ty: Type },
    /// `dst = 0` (UNIT_VALUE).
    Unit { dst: Dest },
    /// A word operation at `kind`'s width under `profile`; a checked one
    /// faults at `site` with the numeric model's fault kind (none under
    /// the modular profile's wrapping results). `b` is zero for `Neg`.
    Arith(ArithInst),
    /// `dst = a <op> b`, signed or unsigned (the first operand's kind).
    Compare(CompareInst),
    /// `dst = (a == 0)`.
    Not { dst: Dest, a: Value },
    /// An assertion fault at `site` when `a` is zero.
    AssertTrue { a: Value, site: Site },
    /// An assertion fault at `site` when `a != b`.
    AssertEq { a: Value, b: Value, site: Site },
    /// The edge to another block.
    Jump { edge: Edge },
    /// To `on_true` when `cond` is nonzero, else `on_false`.
    Branch(BranchInst),
    /// The result (of the function's result type) from `value`, the
    /// return edge's drops, then the exit (ensures, result).
    Return { value: Take, drops: Vec<EdgeDrop> },
    /// A depth fault at `site` when the depth limit is reached; then the
    /// arguments are taken in order and `callee` runs, its result going to
    /// `dst`; a callee's fault leaves this frame.
    Call(CallInst),
    /// Root path `path` (of type `ty`) takes `value`; then its presence
    /// flag is set (`flag`: a non-word root in this frame's storage) and
    /// it enters custody (`custody`: an owner; a full custody list faults
    /// at `site`).
    Store {
        path: usize,
        value: Take,
        ty: Type,
        flag: bool,
        custody: bool,
        site: Site,
    },
    /// `dst` takes the value at `path` (of type `ty`): first out of custody
    /// when `release` (an owner, or a non-word root), then the path's
    /// presence flag (if it has one) is cleared.
    Move {
        dst: Dest,
        path: usize,
        ty: Type,
        release: bool,
    },
    /// The interpreter's `drop_place` of `path`: out of custody, destroyed
    /// under its drop-log name when present.
    Drop { path: usize },
    /// `dst` (an enum `ty`) becomes variant `variant` (index in its
    /// declaration) with tag `tag`: zeroed, tagged, and for a constructor
    /// (`built`) marked built with each payload field (ordinal order,
    /// taken first) present.
    Variant {
        dst: Dest,
        ty: Type,
        variant: usize,
        tag: u32,
        built: bool,
        fields: Vec<(Take, Type)>,
    },
    /// `dst` (a record `ty`) gets each field (ordinal order, taken first)
    /// and its presence flag.
    Record {
        dst: Dest,
        ty: Type,
        fields: Vec<(Take, Type)>,
    },
    /// `dst` (a Result `ty` with Ok type `ok`) becomes Ok (tag 0) or Err
    /// (tag 1, `err`) of `value` (of type `payload`, taken first).
    Carrier {
        dst: Dest,
        ty: Type,
        ok: Type,
        err: bool,
        value: Take,
        payload: Type,
    },
    /// `dst = (subject's tag == tag)`; a place subject must be present
    /// (a tag fault at `site` otherwise).
    IsVariant(IsVariantInst),
    /// `dst` gets field `ordinal` (of type `ty`) of the value at `path`:
    /// a tag fault at `site` unless the path is present and, for a
    /// variant's field (`variant`: its index and tag), the value is that
    /// variant and built; a move (`take`) then clears the field's flag.
    Field {
        dst: Dest,
        path: usize,
        variant: Option<(usize, u32)>,
        ordinal: u32,
        ty: Type,
        take: bool,
        site: Site,
    },
    /// `dst` (of type `ty`) becomes a loan of `source`.
    Borrow { dst: Dest, ty: Type, source: Loan },
    /// A try of `value` (a Result with Ok type `ok` and error type `err`,
    /// taken first): Ok puts the payload in `dst`; Err runs the try
    /// edge's drops and returns Err of the same error (the function's Ok
    /// type `result_ok`) through the exit; any other tag is a tag fault
    /// at `site`.
    Try {
        dst: Dest,
        value: Take,
        ok: Type,
        err: Type,
        result_ok: Type,
        drops: Vec<EdgeDrop>,
        site: Site,
    },
    /// `dst` becomes the window `start..end` of `array`: a tag fault at
    /// `site` unless a place source is present, then a bounds fault there
    /// unless `start <= end <= length`.
    Slice(SliceInst),
    /// A catalog byte intrinsic over `args` (each value taken first, in
    /// order), its faults at `site`.
    Bytes {
        dst: Dest,
        op: ByteOp,
        args: Vec<ByteArg>,
        site: Site,
    },
    /// The builder root `builder` (of type `ty`, record fields `fields`)
    /// becomes the result temporary `result` in place: an internal fault
    /// at `site` unless the builder is in custody and present; its custody
    /// position then holds `result`, each field (value and flag) moves,
    /// `result` is present and `builder` absent.
    Finish {
        builder: usize,
        result: usize,
        ty: Type,
        fields: Vec<u32>,
        site: Site,
    },
    /// `path` (of type `ty`) takes `value`, the old value dropped under
    /// `dropped_as`. A root in this frame's storage (`root`) keeps the
    /// interpreter's custody rule: the position of `candidate` (the owner
    /// temporary taken, read before it leaves custody) is replaced by
    /// `path`, the path becomes present, and an old value is dropped only
    /// when it was present. Any other path must be present (a tag fault at
    /// `site`).
    Replace(ReplaceInst),
}

/// The operands of [`Inst::Arith`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArithInst {
    pub dst: Dest,
    pub op: Arith,
    pub kind: ScalarKind,
    pub profile: NumericProfile,
    pub a: Value,
    pub b: Value,
    pub site: Site,
}

/// The operands of [`Inst::Compare`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareInst {
    pub dst: Dest,
    pub op: Compare,
    pub signed: bool,
    pub a: Value,
    pub b: Value,
}

/// The operands of [`Inst::Branch`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BranchInst {
    pub cond: Value,
    pub on_true: Edge,
    pub on_false: Edge,
}

/// The operands of [`Inst::Call`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallInst {
    pub dst: Dest,
    pub callee: At,
    pub args: Vec<Take>,
    pub site: Site,
}

/// The operands of [`Inst::IsVariant`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsVariantInst {
    pub dst: Dest,
    pub subject: Subject,
    pub tag: u32,
    pub site: Site,
}

/// The operands of [`Inst::Slice`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceInst {
    pub dst: Dest,
    pub array: ByteArray,
    pub start: Value,
    pub end: Value,
    pub site: Site,
}

/// The operands of [`Inst::Replace`] (documented there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplaceInst {
    pub path: usize,
    pub value: Take,
    pub candidate: Option<usize>,
    pub ty: Type,
    pub root: bool,
    pub dropped_as: String,
    pub site: Site,
}

/// What a variant test reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The value at an owned path (checked present).
    Place(usize),
    /// A flow value.
    Value(Value),
}

/// What a loan refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loan {
    /// A `Slice<Byte>` path: its child loan is the same view.
    SliceView(usize),
    /// The storage of an owned path: its address.
    Place(usize),
    /// A loan value reborrowed (read, not taken).
    Value(Take),
}

/// The kinds of [`Inst`], for coverage checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Copy,
    Unit,
    Arith,
    Compare,
    Not,
    AssertTrue,
    AssertEq,
    Jump,
    Branch,
    Return,
    Call,
    Store,
    Move,
    Drop,
    Variant,
    Record,
    Carrier,
    IsVariant,
    Field,
    Borrow,
    Try,
    Slice,
    Bytes,
    Finish,
    Replace,
}

impl Kind {
    /// Every instruction kind.
    pub const ALL: [Kind; 25] = [
        Kind::Copy,
        Kind::Unit,
        Kind::Arith,
        Kind::Compare,
        Kind::Not,
        Kind::AssertTrue,
        Kind::AssertEq,
        Kind::Jump,
        Kind::Branch,
        Kind::Return,
        Kind::Call,
        Kind::Store,
        Kind::Move,
        Kind::Drop,
        Kind::Variant,
        Kind::Record,
        Kind::Carrier,
        Kind::IsVariant,
        Kind::Field,
        Kind::Borrow,
        Kind::Try,
        Kind::Slice,
        Kind::Bytes,
        Kind::Finish,
        Kind::Replace,
    ];
}

impl Inst {
    /// The instruction's kind.
    pub fn kind(&self) -> Kind {
        match self {
            Inst::Copy { .. } => Kind::Copy,
            Inst::Unit { .. } => Kind::Unit,
            Inst::Arith(_) => Kind::Arith,
            Inst::Compare(_) => Kind::Compare,
            Inst::Not { .. } => Kind::Not,
            Inst::AssertTrue { .. } => Kind::AssertTrue,
            Inst::AssertEq { .. } => Kind::AssertEq,
            Inst::Jump { .. } => Kind::Jump,
            Inst::Branch(_) => Kind::Branch,
            Inst::Return { .. } => Kind::Return,
            Inst::Call(_) => Kind::Call,
            Inst::Store { .. } => Kind::Store,
            Inst::Move { .. } => Kind::Move,
            Inst::Drop { .. } => Kind::Drop,
            Inst::Variant { .. } => Kind::Variant,
            Inst::Record { .. } => Kind::Record,
            Inst::Carrier { .. } => Kind::Carrier,
            Inst::IsVariant(_) => Kind::IsVariant,
            Inst::Field { .. } => Kind::Field,
            Inst::Borrow { .. } => Kind::Borrow,
            Inst::Try { .. } => Kind::Try,
            Inst::Slice(_) => Kind::Slice,
            Inst::Bytes { .. } => Kind::Bytes,
            Inst::Finish { .. } => Kind::Finish,
            Inst::Replace(_) => Kind::Replace,
        }
    }
}

/// Where a slice window finds the byte array it views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteSource {
    /// The storage of an owned path, which must be present (a tag fault
    /// at the operation otherwise).
    Place(usize),
    /// The address a loan value holds.
    Loan(Value),
}

/// The byte array a slice window views: its source, and the record
/// holding it as field 0 (`None`: the source is the array itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteArray {
    pub source: ByteSource,
    pub holder: Option<Type>,
}

/// An intrinsic's operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteArg {
    /// An `Array<Byte>` place, passed by address exactly as a loan of it.
    Array(usize),
    /// A value, taken in operand order (an owner temporary leaves
    /// custody).
    Value(Take),
}

/// How an intrinsic's operand 0 holds its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteView {
    /// A loan of an `Array<Byte>` (its address).
    Array,
    /// A `Slice<Byte>` window (array, start, end), or a loan of one.
    Slice,
}

/// A catalog byte intrinsic; the operand positions are the catalog
/// signature's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteOp {
    /// `dst = length` of operand 0 (selectors 1 and 9).
    Len(ByteView),
    /// `dst = byte` at index operand 1 of operand 0, a bounds fault at the
    /// site past the end (selectors 2 and 10).
    At(ByteView),
    /// `dst` (a Result `ty` with Ok type `ok`) gets a fresh array of
    /// capacity operand 1 from the host allocator, whose fault leaves the
    /// frame at the site (selector 3).
    Alloc { ty: Type, ok: Type },
    /// Appends byte operand 2 to the array loan operand 0; `dst` as for
    /// `Alloc` (selector 4).
    Push { ty: Type, ok: Type },
    /// Sets byte operand 2 at index operand 1 of the array loan operand 0,
    /// a bounds fault at the site past the end; `dst = 0` (selector 5).
    Poke,
    /// Empties the array loan operand 0; `dst = 0` (selector 7).
    Clear,
    /// `dst` = the byte budget left (selector 8).
    Left,
}

impl ByteOp {
    /// How many operands the operation reads.
    pub(super) fn arity(&self) -> usize {
        match self {
            ByteOp::Len(_) => 1,
            ByteOp::At(_) | ByteOp::Alloc { .. } => 2,
            ByteOp::Push { .. } | ByteOp::Poke => 3,
            ByteOp::Clear => 1,
            ByteOp::Left => 0,
        }
    }
}

/// A value an operand denotes.
pub(super) fn value(
    plan: &FunctionPlan<'_, '_>,
    o: &Operand,
    b: u32,
    j: u32,
) -> Result<Value, Refusal> {
    match o {
        Operand::Value(OpRef::Flow { block, ordinal }) => {
            Ok(match plan.frame.temps.get(&(*block, *ordinal)) {
                Some(&t) => Value::Temp(t),
                None => Value::Flow(*block, *ordinal),
            })
        }
        Operand::Const(c) => Ok(Value::Word(canon(c.kind, c.bits))),
        Operand::Place(k) => Ok(Value::Place(plan.path_of(k, b, j)?)),
        _ => Err(plan.refuse(Some(b), Some(j), "operand form")),
    }
}

/// Reading operand `k` of `op` at (`b`, `j`): the operand as a [`Value`]
/// or as a [`Take`], a refusal at that site when it is missing.
impl FunctionPlan<'_, '_> {
    /// Operand `k` of `op` as a [`Value`].
    pub(super) fn operand_value(
        &self,
        op: &Op,
        k: usize,
        b: u32,
        j: u32,
    ) -> Result<Value, Refusal> {
        value(self, self.operand_at(op, k, b, j)?, b, j)
    }

    /// Operand `k` of `op` taken as an argument.
    pub(super) fn operand_take(&self, op: &Op, k: usize, b: u32, j: u32) -> Result<Take, Refusal> {
        take(self, self.operand_at(op, k, b, j)?, b, j)
    }
}

/// An operand taken as an argument.
pub(super) fn take(
    plan: &FunctionPlan<'_, '_>,
    o: &Operand,
    b: u32,
    j: u32,
) -> Result<Take, Refusal> {
    let word = plan.operand_type(o).is_none_or(|t| is_word(&t));
    Ok(Take {
        release: plan.temp_of(o),
        value: value(plan, o, b, j)?,
        word,
    })
}
