//! The lowering's output and the run state shared by both engines.

use zlm::interp::{Fault, FaultKind};

/// Fault kinds, numbered as the C runtime numbers them.
pub(crate) mod fk {
    pub const OVERFLOW: u32 = 1;
    pub const DIV_ZERO: u32 = 2;
    pub const SHIFT: u32 = 3;
    pub const CONTRACT: u32 = 4;
    pub const ASSERT: u32 = 5;
    pub const BOUNDS: u32 = 6;
    pub const TAG: u32 = 7;
    pub const STEPS: u32 = 8;
    pub const DEPTH: u32 = 9;
    pub const BYTES: u32 = 10;
    pub const INTERNAL: u32 = 11;
}

/// Render kind of an entry whose result the program renders itself (to
/// the result channel of the output hooks).
pub const RENDERED: u64 = 4;

/// A lowered module: LLVM IR text plus the tables that map the program's
/// fault records and entries back to names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lowered {
    /// Textual LLVM IR (one module), byte-identical for identical inputs.
    pub ir: String,
    /// Host-callable entries (`Decl.function`); entry `i` is the symbol
    /// `zlm_entry_i`.
    pub entries: Vec<String>,
    /// Parameter count of each entry.
    pub params: Vec<u64>,
    /// Render kind of each entry's result (0 unsigned, 1 signed, 2 Bool,
    /// 3 Unit; 4: the entry renders it to the result channel).
    pub renders: Vec<u64>,
    /// Entries callable across the typed boundary (`Decl.function`,
    /// docs/zlm/boundary.md); typed entry `k` is the symbol `zlm_typed_k`
    /// (`i32 (ptr %z, ptr %words, i64 %n)`).
    pub typed: Vec<String>,
    /// Every lowered function (`Decl.function`), by fault-record index.
    pub functions: Vec<String>,
    /// Contract fault details (`requires 0`, …), by fault-record index.
    pub details: Vec<String>,
}

/// The run state a lowered program reads and writes (`ptr %z`): thirteen
/// 64-bit fields, laid out as the IR indexes them.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Zrt {
    /// Steps still allowed.
    pub left: u64,
    /// The step limit.
    pub limit: u64,
    /// Frames live.
    pub depth: u64,
    /// The depth limit.
    pub max_depth: u64,
    /// Host stack address below which a call faults with the depth limit.
    pub floor: u64,
    /// Fault kind (the C runtime's numbering), 0 when none.
    pub fault_kind: u64,
    /// Fault function index into [`Lowered::functions`].
    pub fault_function: u64,
    /// Fault block, or `-1`.
    pub fault_block: u64,
    /// Fault operation, or `-1`.
    pub fault_op: u64,
    /// Fault detail index into [`Lowered::details`], or `-1`.
    pub fault_detail: u64,
    /// The host's output context (passed back to the output hooks).
    pub out: u64,
    /// Live byte-array capacity.
    pub bytes: u64,
    /// The byte limit (the host allocator's budget).
    pub byte_limit: u64,
}

impl Lowered {
    /// The fault a run state records, as the interpreter reports it.
    pub fn fault(&self, z: &Zrt) -> Fault {
        let opt = |w: u64| u32::try_from(w as i64).ok();
        let detail = usize::try_from(z.fault_detail as i64)
            .ok()
            .and_then(|i| self.details.get(i).cloned())
            .unwrap_or_default();
        let kind = match z.fault_kind as u32 {
            fk::OVERFLOW => FaultKind::Overflow,
            fk::DIV_ZERO => FaultKind::DivideByZero,
            fk::SHIFT => FaultKind::ShiftRange,
            fk::CONTRACT => FaultKind::Contract(detail),
            fk::ASSERT => FaultKind::Assert,
            fk::BOUNDS => FaultKind::Bounds,
            fk::TAG => FaultKind::Tag,
            fk::STEPS => FaultKind::StepLimit,
            fk::DEPTH => FaultKind::DepthLimit,
            fk::BYTES => FaultKind::ByteLimit,
            _ => FaultKind::Internal,
        };
        Fault {
            function: usize::try_from(z.fault_function)
                .ok()
                .and_then(|i| self.functions.get(i).cloned())
                .unwrap_or_default(),
            block: opt(z.fault_block),
            op: opt(z.fault_op),
            kind,
        }
    }
}

/// Renders a result word as the interpreter renders a value of render kind
/// `kind`; kind 5 is one word of the typed boundary's stream (` hex`).
pub fn render_word(kind: u64, w: u64) -> String {
    match kind {
        1 => (w as i64).to_string(),
        2 => if w != 0 { "true" } else { "false" }.to_string(),
        3 => "()".to_string(),
        crate::typed::HEX => format!(" {w:x}"),
        _ => w.to_string(),
    }
}
