//! The canonical object model (spec sections 3–8).
//!
//! Objects live in arenas and refer to each other through typed
//! [`Handle`]s, never through shared pointers:
//!
//! * [`Module`] owns the [`TypeArena`] (module-wide), the ordered uniform
//!   list and the two [`Stage`]s.
//! * A [`Stage`] owns its ordered interface list and its function arena;
//!   function handles are stage-local, so a function cannot be shared with
//!   the other stage.
//! * A [`Function`] owns its ordered parameters and its block arena; the
//!   first block is the entry block, and register declarations are the
//!   `DeclareLocal` prefix of that block.
//!
//! Objects do not establish the canonical invariants on construction: the
//! builders below are plain data manipulation, and every module (built or
//! read) must pass [`crate::verify`] before it is written, published or
//! compiled. Objects the verifier may report carry an optional [`Span`]
//! filled in by the text reader.
//!
//! Building a module directly:
//!
//! ```
//! use vpl::ir::*;
//!
//! let mut m = Module::new();
//! let void = m.types.void();
//! let vec4 = m.types.vector(ScalarKind::Float, 4);
//! for kind in [StageKind::Vertex, StageKind::Fragment] {
//!     let slot = match kind {
//!         StageKind::Vertex => m.vertex.add_interface(Direction::Out, "clip", vec4, -1, Semantic::Position),
//!         StageKind::Fragment => m.fragment.add_interface(Direction::Out, "color", vec4, 0, Semantic::FragmentColor),
//!     };
//!     let one = m.float_const(1.0);
//!     let mut f = Function::new("main", void);
//!     let r0 = f.declare_register(0, vec4); // creates the entry block
//!     let entry = f.entry_block().unwrap();
//!     f.blocks[entry]
//!         .push(InstructionKind::Construct { result: r0, ty: vec4, arguments: vec![one] })
//!         .push(InstructionKind::Store {
//!             target: Reference::root(StorageKind::StageIo, slot, vec4),
//!             value: r0.into(),
//!         })
//!         .terminate(TerminatorKind::Return { value: None });
//!     let stage = m.stage_mut(kind);
//!     let main = stage.add_function(f);
//!     stage.entry = Some(main);
//! }
//! vpl::verify::verify(&m).unwrap();
//! let text = vpl::text::write(&m).unwrap();
//! assert!(text.starts_with("(module 1\n  (types\n    (type t0 vector float 4)"));
//! ```

mod arena;
mod instructions;
mod span;
mod types;
mod values;

pub use arena::{Arena, ArenaFull, Handle};
pub use instructions::{
    BinaryOp, Block, Builtin, Callee, Function, Instruction, InstructionKind, Parameter,
    SwizzleComponent, Terminator, TerminatorKind,
};
pub use span::Span;
pub use types::{Field, RecordType, SamplerKind, ScalarKind, Type, TypeArena, TypeInner};
pub use values::{
    Constant, Literal, Operand, Reference, Register, Selector, SelectorKind, StorageKind, Value,
};

/// Which stage a [`Stage`] object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageKind {
    /// The vertex stage.
    Vertex,
    /// The fragment stage.
    Fragment,
}

impl StageKind {
    /// The text keyword (`vertex`, `fragment`).
    pub fn keyword(self) -> &'static str {
        match self {
            StageKind::Vertex => "vertex",
            StageKind::Fragment => "fragment",
        }
    }
}

/// The form a uniform is declared with (section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UniformKind {
    /// `scalar`: a non-aggregate value type.
    Scalar,
    /// `record`: a nominal record type.
    Record,
    /// `array`: element type and positive count; the uniform's stored type
    /// is the array type.
    Array,
}

/// A module-wide uniform (read-only storage).
#[derive(Debug, Clone, PartialEq)]
pub struct Uniform {
    /// Declaration form.
    pub kind: UniformKind,
    /// Nonempty name, unique module-wide.
    pub name: String,
    /// Stored value type (for [`UniformKind::Array`], the array type).
    pub ty: Handle<Type>,
    /// Where the declaration was read.
    pub span: Option<Span>,
}

/// Direction of an interface variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `in`: read-only.
    In,
    /// `out`: writable.
    Out,
}

/// Interface semantic tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Semantic {
    /// `none`
    None,
    /// `position`
    Position,
    /// `color`
    Color,
    /// `texcoord`
    TexCoord,
    /// `fragment_color`
    FragmentColor,
}

impl Semantic {
    /// The text keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Semantic::None => "none",
            Semantic::Position => "position",
            Semantic::Color => "color",
            Semantic::TexCoord => "texcoord",
            Semantic::FragmentColor => "fragment_color",
        }
    }

    /// The tag spelled `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        [
            Semantic::None,
            Semantic::Position,
            Semantic::Color,
            Semantic::TexCoord,
            Semantic::FragmentColor,
        ]
        .into_iter()
        .find(|s| s.keyword() == keyword)
    }
}

/// A stage interface variable.
#[derive(Debug, Clone, PartialEq)]
pub struct InterfaceVar {
    /// Direction.
    pub direction: Direction,
    /// Nonempty name, unique across both directions of the stage.
    pub name: String,
    /// Value type.
    pub ty: Handle<Type>,
    /// Explicit location, or -1 for unspecified.
    pub location: i32,
    /// Semantic tag.
    pub semantic: Semantic,
    /// Where the declaration was read.
    pub span: Option<Span>,
}

/// A stage: kind, ordered interface, functions and the selected entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Vertex or fragment.
    pub kind: StageKind,
    /// Ordered interface variables (inputs and outputs); slot = position.
    pub interface: Vec<InterfaceVar>,
    /// The stage's functions in list order.
    pub functions: Arena<Function>,
    /// The entry function (`None` while unfinished; required when verified).
    pub entry: Option<Handle<Function>>,
    /// Where the stage form was read.
    pub span: Option<Span>,
}

impl Stage {
    /// An unfinished stage without entry (`Stage_create`).
    pub fn new(kind: StageKind) -> Self {
        Stage {
            kind,
            interface: Vec::new(),
            functions: Arena::new(),
            entry: None,
            span: None,
        }
    }

    /// Appends an interface variable and returns its slot.
    pub fn add_interface(
        &mut self,
        direction: Direction,
        name: impl Into<String>,
        ty: Handle<Type>,
        location: i32,
        semantic: Semantic,
    ) -> u64 {
        self.interface.push(InterfaceVar {
            direction,
            name: name.into(),
            ty,
            location,
            semantic,
            span: None,
        });
        (self.interface.len() - 1) as u64
    }

    /// Appends a function.
    pub fn add_function(&mut self, function: Function) -> Handle<Function> {
        self.functions.append(function)
    }

    /// The function called `name`, if any.
    pub fn function_by_name(&self, name: &str) -> Option<Handle<Function>> {
        self.functions
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(h, _)| h)
    }
}

/// A module: types, uniforms, the vertex stage and the fragment stage.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// The module-wide type table.
    pub types: TypeArena,
    /// Ordered uniforms; slot = position.
    pub uniforms: Vec<Uniform>,
    /// The vertex stage (kind must be [`StageKind::Vertex`]).
    pub vertex: Stage,
    /// The fragment stage (kind must be [`StageKind::Fragment`]).
    pub fragment: Stage,
    /// Where the module form was read; the fallback location of diagnostics.
    pub span: Option<Span>,
}

impl Default for Module {
    fn default() -> Self {
        Self::new()
    }
}

impl Module {
    /// An empty module with two unfinished stages.
    pub fn new() -> Self {
        Module {
            types: TypeArena::new(),
            uniforms: Vec::new(),
            vertex: Stage::new(StageKind::Vertex),
            fragment: Stage::new(StageKind::Fragment),
            span: None,
        }
    }

    /// The stage of the given kind.
    pub fn stage(&self, kind: StageKind) -> &Stage {
        match kind {
            StageKind::Vertex => &self.vertex,
            StageKind::Fragment => &self.fragment,
        }
    }

    /// Mutable access to the stage of the given kind.
    pub fn stage_mut(&mut self, kind: StageKind) -> &mut Stage {
        match kind {
            StageKind::Vertex => &mut self.vertex,
            StageKind::Fragment => &mut self.fragment,
        }
    }

    /// Both stages, vertex first.
    pub fn stages(&self) -> [&Stage; 2] {
        [&self.vertex, &self.fragment]
    }

    /// Appends a uniform and returns its slot.
    pub fn add_uniform(
        &mut self,
        kind: UniformKind,
        name: impl Into<String>,
        ty: Handle<Type>,
    ) -> u64 {
        self.uniforms.push(Uniform {
            kind,
            name: name.into(),
            ty,
            span: None,
        });
        (self.uniforms.len() - 1) as u64
    }

    /// A `bool` constant operand.
    pub fn bool_const(&mut self, value: bool) -> Operand {
        let ty = self.types.scalar(ScalarKind::Bool);
        Operand::constant(ty, Literal::Bool(value))
    }

    /// An `int` constant operand.
    pub fn int_const(&mut self, value: i32) -> Operand {
        let ty = self.types.scalar(ScalarKind::Int);
        Operand::constant(ty, Literal::Int(value))
    }

    /// A `float` constant operand.
    pub fn float_const(&mut self, value: f32) -> Operand {
        let ty = self.types.scalar(ScalarKind::Float);
        Operand::constant(ty, Literal::Float(value))
    }

    /// Clears every source span (useful to compare modules structurally).
    pub fn clear_spans(&mut self) {
        self.span = None;
        let handles: Vec<_> = self.types.iter().map(|(h, _)| h).collect();
        for h in handles {
            self.types.set_span(h, None);
            if let Some(r) = self.types.record_mut(h) {
                for f in &mut r.fields {
                    f.span = None;
                }
            }
        }
        for u in &mut self.uniforms {
            u.span = None;
        }
        for stage in [&mut self.vertex, &mut self.fragment] {
            stage.span = None;
            for v in &mut stage.interface {
                v.span = None;
            }
            for (_, f) in stage.functions.iter_mut() {
                f.span = None;
                for p in &mut f.parameters {
                    p.span = None;
                }
                for (_, b) in f.blocks.iter_mut() {
                    b.span = None;
                    for i in &mut b.instructions {
                        i.span = None;
                        clear_instruction_spans(&mut i.kind);
                    }
                    if let Some(t) = &mut b.terminator {
                        t.span = None;
                        match &mut t.kind {
                            TerminatorKind::BranchIf { condition, .. } => condition.span = None,
                            TerminatorKind::Return { value: Some(v) } => v.span = None,
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

fn clear_reference_spans(r: &mut Reference) {
    r.span = None;
    for s in &mut r.path {
        s.span = None;
        if let SelectorKind::Index(op) = &mut s.kind {
            op.span = None;
        }
    }
}

fn clear_instruction_spans(kind: &mut InstructionKind) {
    match kind {
        InstructionKind::DeclareLocal { .. } => {}
        InstructionKind::Copy { source, .. }
        | InstructionKind::Swizzle { source, .. }
        | InstructionKind::Member { source, .. } => source.span = None,
        InstructionKind::Load { source, .. } => clear_reference_spans(source),
        InstructionKind::Store { target, value } => {
            clear_reference_spans(target);
            value.span = None;
        }
        InstructionKind::Binary { lhs, rhs, .. } => {
            lhs.span = None;
            rhs.span = None;
        }
        InstructionKind::Call { arguments, .. } | InstructionKind::Construct { arguments, .. } => {
            for a in arguments {
                a.span = None;
            }
        }
        InstructionKind::Index { source, index, .. } => {
            source.span = None;
            index.span = None;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
