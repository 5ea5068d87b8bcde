//! The canonical verifier (spec sections 3–9).
//!
//! [`Verifier::verify`] checks a module graph as it is at that moment and
//! reports the first invalid object as a [`VerifyError`]. Built modules and
//! read text go through the same verifier; the text reader, the writer, the
//! publication boundary and the backends call [`verify`].
//!
//! The checks currently implemented are the structural ones every consumer
//! relies on: handles in range, stage kinds and entries, type shapes and
//! acyclicity, register declarations and descriptor/declaration agreement,
//! constant kinds, reference root/selector typing, construct/result
//! agreement, terminators present. The full semantic checks of sections
//! 3–9 (operand tables, data flow, permissions, linkage, output
//! definedness) extend this module.

use crate::ir::{
    Block, Callee, Function, Handle, InstructionKind, Literal, Module, Operand, Reference,
    ScalarKind, SelectorKind, Span, Stage, StageKind, StorageKind, TerminatorKind, Type, TypeInner,
    UniformKind, Value,
};
use std::collections::HashMap;
use std::fmt;

/// The object a verification diagnostic is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The module as a whole (no more precise subject).
    Module,
    /// A type table entry.
    Type(Handle<Type>),
    /// A uniform by slot.
    Uniform(usize),
    /// A stage.
    Stage(StageKind),
    /// An interface variable by slot.
    Interface {
        /// Stage.
        stage: StageKind,
        /// Interface slot.
        slot: usize,
    },
    /// A function.
    Function {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
    },
    /// A parameter slot.
    Parameter {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
        /// Parameter slot.
        slot: usize,
    },
    /// A block.
    Block {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
        /// Block.
        block: Handle<Block>,
    },
    /// An instruction by position in its block.
    Instruction {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
        /// Block.
        block: Handle<Block>,
        /// Position in the block's instruction list.
        index: usize,
    },
    /// A block's terminator.
    Terminator {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
        /// Block.
        block: Handle<Block>,
    },
    /// An operand of an instruction (`instruction: Some(i)`) or of the
    /// terminator (`None`), by position in text order.
    Operand {
        /// Stage.
        stage: StageKind,
        /// Function.
        function: Handle<Function>,
        /// Block.
        block: Handle<Block>,
        /// Instruction position, `None` for the terminator.
        instruction: Option<usize>,
        /// Operand position.
        operand: usize,
    },
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fun = |f: &mut fmt::Formatter<'_>, stage: &StageKind, function: &Handle<Function>| {
            write!(
                f,
                "function f{} of the {} stage",
                function.index(),
                stage.keyword()
            )
        };
        match self {
            Subject::Module => write!(f, "module"),
            Subject::Type(t) => write!(f, "type entry {}", t.index()),
            Subject::Uniform(u) => write!(f, "uniform u{u}"),
            Subject::Stage(s) => write!(f, "{} stage", s.keyword()),
            Subject::Interface { stage, slot } => {
                write!(f, "interface s{slot} of the {} stage", stage.keyword())
            }
            Subject::Function { stage, function } => fun(f, stage, function),
            Subject::Parameter {
                stage,
                function,
                slot,
            } => {
                write!(f, "parameter p{slot} of ")?;
                fun(f, stage, function)
            }
            Subject::Block {
                stage,
                function,
                block,
            } => {
                write!(f, "block b{} of ", block.index())?;
                fun(f, stage, function)
            }
            Subject::Instruction {
                stage,
                function,
                block,
                index,
            } => {
                write!(f, "instruction {index} of block b{} of ", block.index())?;
                fun(f, stage, function)
            }
            Subject::Terminator {
                stage,
                function,
                block,
            } => {
                write!(f, "terminator of block b{} of ", block.index())?;
                fun(f, stage, function)
            }
            Subject::Operand {
                stage,
                function,
                block,
                instruction,
                operand,
            } => {
                write!(f, "operand {operand} of ")?;
                match instruction {
                    Some(i) => write!(f, "instruction {i}")?,
                    None => write!(f, "the terminator")?,
                }
                write!(f, " of block b{} of ", block.index())?;
                fun(f, stage, function)
            }
        }
    }
}

/// A verification failure: the first invalid object found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{subject}: {message}")]
pub struct VerifyError {
    /// What is wrong.
    pub message: String,
    /// The invalid object.
    pub subject: Subject,
    /// The object's source position, when it was read from text.
    pub span: Option<Span>,
}

/// A reusable verifier. It keeps no state between runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Verifier {}

impl Verifier {
    /// A verifier.
    pub fn new() -> Self {
        Verifier {}
    }

    /// Checks `module` and reports the first invalid object.
    pub fn verify(&self, module: &Module) -> Result<(), VerifyError> {
        check_types(module)?;
        check_uniforms(module)?;
        for stage in module.stages() {
            StageChecker { module, stage }.check()?;
        }
        if module.vertex.kind != StageKind::Vertex {
            return Err(fail(
                Subject::Stage(StageKind::Vertex),
                module.vertex.span,
                "the vertex stage object has the fragment stage kind",
            ));
        }
        if module.fragment.kind != StageKind::Fragment {
            return Err(fail(
                Subject::Stage(StageKind::Fragment),
                module.fragment.span,
                "the fragment stage object has the vertex stage kind",
            ));
        }
        Ok(())
    }
}

/// Verifies `module` with a fresh [`Verifier`].
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    Verifier::new().verify(module)
}

fn fail(subject: Subject, span: Option<Span>, message: impl Into<String>) -> VerifyError {
    VerifyError {
        message: message.into(),
        subject,
        span,
    }
}

/// The shape behind a handle the caller has already range-checked.
fn inner(module: &Module, ty: Handle<Type>) -> &TypeInner {
    &module.types[ty].inner
}

fn check_types(module: &Module) -> Result<(), VerifyError> {
    let types = &module.types;
    for (h, t) in types.iter() {
        let subject = Subject::Type(h);
        let component = |c: Handle<Type>, what: &str| -> Result<(), VerifyError> {
            match types.inner(c) {
                None => Err(fail(
                    subject,
                    t.span,
                    format!("{what} type handle is out of range"),
                )),
                Some(TypeInner::Void) => Err(fail(subject, t.span, format!("{what} type is void"))),
                Some(_) => Ok(()),
            }
        };
        match &t.inner {
            TypeInner::Void | TypeInner::Scalar(_) | TypeInner::Sampler(_) => {}
            TypeInner::Vector { size, .. } => {
                if !(2..=4).contains(size) {
                    return Err(fail(
                        subject,
                        t.span,
                        format!("vector size {size} is not 2, 3 or 4"),
                    ));
                }
            }
            TypeInner::Matrix { rows, columns } => {
                if !(2..=4).contains(rows) || !(2..=4).contains(columns) {
                    return Err(fail(
                        subject,
                        t.span,
                        format!("matrix dimensions {rows}x{columns} are outside 2..4"),
                    ));
                }
            }
            TypeInner::Array { element, length } => {
                component(*element, "array element")?;
                if *length == 0 {
                    return Err(fail(subject, t.span, "array length is zero"));
                }
            }
            TypeInner::Record(r) => {
                for field in &r.fields {
                    component(field.ty, "record field")?;
                }
            }
        }
    }
    // Acyclicity: iterative three-colour depth-first search.
    let mut colour = vec![0u8; types.len()];
    for (start, _) in types.iter() {
        if colour[start.index()] != 0 {
            continue;
        }
        let mut stack: Vec<(Handle<Type>, usize)> = vec![(start, 0)];
        colour[start.index()] = 1;
        while let Some(&mut (h, ref mut next)) = stack.last_mut() {
            let children: Vec<Handle<Type>> = match inner(module, h) {
                TypeInner::Array { element, .. } => vec![*element],
                TypeInner::Record(r) => r.fields.iter().map(|f| f.ty).collect(),
                _ => Vec::new(),
            };
            if let Some(&child) = children.get(*next) {
                *next += 1;
                match colour[child.index()] {
                    0 => {
                        colour[child.index()] = 1;
                        stack.push((child, 0));
                    }
                    1 => {
                        return Err(fail(
                            Subject::Type(child),
                            types[child].span,
                            "recursive value type",
                        ));
                    }
                    _ => {}
                }
            } else {
                colour[h.index()] = 2;
                stack.pop();
            }
        }
    }
    Ok(())
}

fn check_uniforms(module: &Module) -> Result<(), VerifyError> {
    for (slot, u) in module.uniforms.iter().enumerate() {
        let subject = Subject::Uniform(slot);
        let Some(t) = module.types.inner(u.ty) else {
            return Err(fail(subject, u.span, "uniform type handle is out of range"));
        };
        let ok = match u.kind {
            UniformKind::Scalar => !matches!(
                t,
                TypeInner::Void | TypeInner::Record(_) | TypeInner::Array { .. }
            ),
            UniformKind::Record => matches!(t, TypeInner::Record(_)),
            UniformKind::Array => matches!(t, TypeInner::Array { .. }),
        };
        if !ok {
            return Err(fail(
                subject,
                u.span,
                format!("uniform kind {:?} does not match its type", u.kind),
            ));
        }
    }
    Ok(())
}

struct StageChecker<'a> {
    module: &'a Module,
    stage: &'a Stage,
}

impl StageChecker<'_> {
    fn check(&self) -> Result<(), VerifyError> {
        let kind = self.stage.kind;
        for (slot, var) in self.stage.interface.iter().enumerate() {
            match self.module.types.inner(var.ty) {
                None => {
                    return Err(fail(
                        Subject::Interface { stage: kind, slot },
                        var.span,
                        "interface type handle is out of range",
                    ));
                }
                Some(TypeInner::Void) => {
                    return Err(fail(
                        Subject::Interface { stage: kind, slot },
                        var.span,
                        "interface type is void",
                    ));
                }
                Some(_) => {}
            }
        }
        match self.stage.entry {
            None => {
                return Err(fail(
                    Subject::Stage(kind),
                    self.stage.span,
                    "the stage has no entry function",
                ));
            }
            Some(e) if !self.stage.functions.contains(e) => {
                return Err(fail(
                    Subject::Stage(kind),
                    self.stage.span,
                    "the entry function handle is out of range",
                ));
            }
            Some(_) => {}
        }
        for (h, function) in self.stage.functions.iter() {
            FunctionChecker::new(self, h, function)?.check()?;
        }
        Ok(())
    }
}

struct FunctionChecker<'a> {
    module: &'a Module,
    stage: &'a Stage,
    handle: Handle<Function>,
    function: &'a Function,
    registers: HashMap<u64, Handle<Type>>,
}

impl<'a> FunctionChecker<'a> {
    fn new(
        stage: &StageChecker<'a>,
        handle: Handle<Function>,
        function: &'a Function,
    ) -> Result<Self, VerifyError> {
        Ok(FunctionChecker {
            module: stage.module,
            stage: stage.stage,
            handle,
            function,
            registers: HashMap::new(),
        })
    }

    fn subject(&self) -> Subject {
        Subject::Function {
            stage: self.stage.kind,
            function: self.handle,
        }
    }

    fn check(mut self) -> Result<(), VerifyError> {
        let f = self.function;
        if self.module.types.inner(f.return_type).is_none() {
            return Err(fail(
                self.subject(),
                f.span,
                "return type handle is out of range",
            ));
        }
        for (slot, p) in f.parameters.iter().enumerate() {
            let subject = Subject::Parameter {
                stage: self.stage.kind,
                function: self.handle,
                slot,
            };
            match self.module.types.inner(p.ty) {
                None => {
                    return Err(fail(
                        subject,
                        p.span,
                        "parameter type handle is out of range",
                    ));
                }
                Some(TypeInner::Void) => {
                    return Err(fail(subject, p.span, "parameter type is void"));
                }
                Some(_) => {}
            }
        }
        if f.blocks.is_empty() {
            return Err(fail(self.subject(), f.span, "the function has no blocks"));
        }
        // Register declarations: the DeclareLocal prefix of the entry block.
        for (bh, block) in f.blocks.iter() {
            let mut in_prefix = bh.index() == 0;
            for (index, instruction) in block.instructions.iter().enumerate() {
                let subject = Subject::Instruction {
                    stage: self.stage.kind,
                    function: self.handle,
                    block: bh,
                    index,
                };
                match &instruction.kind {
                    InstructionKind::DeclareLocal { register } => {
                        if !in_prefix {
                            return Err(fail(
                                subject,
                                instruction.span,
                                "register declarations must form a prefix of the entry block",
                            ));
                        }
                        match self.module.types.inner(register.ty) {
                            None => {
                                return Err(fail(
                                    subject,
                                    instruction.span,
                                    "register type handle is out of range",
                                ));
                            }
                            Some(TypeInner::Void) => {
                                return Err(fail(
                                    subject,
                                    instruction.span,
                                    "register type is void",
                                ));
                            }
                            Some(_) => {}
                        }
                        if self.registers.insert(register.index, register.ty).is_some() {
                            return Err(fail(
                                subject,
                                instruction.span,
                                format!("register r{} is declared twice", register.index),
                            ));
                        }
                    }
                    _ => in_prefix = false,
                }
            }
        }
        for (bh, block) in f.blocks.iter() {
            self.check_block(bh, block)?;
        }
        Ok(())
    }

    fn check_block(&self, bh: Handle<Block>, block: &Block) -> Result<(), VerifyError> {
        let stage = self.stage.kind;
        for (index, instruction) in block.instructions.iter().enumerate() {
            let subject = Subject::Instruction {
                stage,
                function: self.handle,
                block: bh,
                index,
            };
            let span = instruction.span;
            let mut operand_no = 0usize;
            let mut operand = |op: &Operand| -> Result<(), VerifyError> {
                let s = Subject::Operand {
                    stage,
                    function: self.handle,
                    block: bh,
                    instruction: Some(index),
                    operand: operand_no,
                };
                operand_no += 1;
                self.check_operand(op, s, span)
            };
            match &instruction.kind {
                InstructionKind::DeclareLocal { .. } => {}
                InstructionKind::Copy { result, source } => {
                    self.check_register(*result, subject, span)?;
                    operand(source)?;
                }
                InstructionKind::Load { result, source } => {
                    self.check_register(*result, subject, span)?;
                    self.check_reference(source, subject, span)?;
                }
                InstructionKind::Store { target, value } => {
                    self.check_reference(target, subject, span)?;
                    operand(value)?;
                }
                InstructionKind::Binary {
                    result, lhs, rhs, ..
                } => {
                    self.check_register(*result, subject, span)?;
                    operand(lhs)?;
                    operand(rhs)?;
                }
                InstructionKind::Call {
                    result,
                    callee,
                    arguments,
                } => {
                    if let Some(r) = result {
                        self.check_register(*r, subject, span)?;
                    }
                    match callee {
                        Callee::Function(h) => {
                            if !self.stage.functions.contains(*h) {
                                return Err(fail(
                                    subject,
                                    span,
                                    "callee function handle is out of range (calls must name a function of the calling stage)",
                                ));
                            }
                        }
                        Callee::Builtin(_) => {
                            if result.is_none() {
                                return Err(fail(
                                    subject,
                                    span,
                                    "the texture built-in requires a destination register",
                                ));
                            }
                        }
                    }
                    for a in arguments {
                        operand(a)?;
                    }
                }
                InstructionKind::Construct {
                    result,
                    ty,
                    arguments,
                } => {
                    self.check_register(*result, subject, span)?;
                    if *ty != result.ty {
                        return Err(fail(
                            subject,
                            span,
                            "the constructed type differs from the destination register's type",
                        ));
                    }
                    for a in arguments {
                        operand(a)?;
                    }
                }
                InstructionKind::Swizzle { result, source, .. }
                | InstructionKind::Member { result, source, .. } => {
                    self.check_register(*result, subject, span)?;
                    operand(source)?;
                }
                InstructionKind::Index {
                    result,
                    source,
                    index,
                } => {
                    self.check_register(*result, subject, span)?;
                    operand(source)?;
                    operand(index)?;
                }
            }
        }
        let Some(terminator) = &block.terminator else {
            return Err(fail(
                Subject::Block {
                    stage,
                    function: self.handle,
                    block: bh,
                },
                block.span,
                "the block has no terminator",
            ));
        };
        let subject = Subject::Terminator {
            stage,
            function: self.handle,
            block: bh,
        };
        let target = |b: Handle<Block>| {
            if self.function.blocks.contains(b) {
                Ok(())
            } else {
                Err(fail(
                    subject,
                    terminator.span,
                    "branch target is not a block of this function",
                ))
            }
        };
        let op_subject = Subject::Operand {
            stage,
            function: self.handle,
            block: bh,
            instruction: None,
            operand: 0,
        };
        match &terminator.kind {
            TerminatorKind::Branch { target: t } => target(*t)?,
            TerminatorKind::BranchIf {
                condition,
                if_true,
                if_false,
            } => {
                self.check_operand(condition, op_subject, terminator.span)?;
                target(*if_true)?;
                target(*if_false)?;
            }
            TerminatorKind::Return { value: Some(v) } => {
                self.check_operand(v, op_subject, terminator.span)?
            }
            TerminatorKind::Return { value: None } | TerminatorKind::Discard => {}
        }
        Ok(())
    }

    fn check_register(
        &self,
        r: crate::ir::Register,
        subject: Subject,
        span: Option<Span>,
    ) -> Result<(), VerifyError> {
        match self.registers.get(&r.index) {
            None => Err(fail(
                subject,
                span,
                format!("register r{} is not declared", r.index),
            )),
            Some(&ty) if ty != r.ty => Err(fail(
                subject,
                span,
                format!(
                    "register r{} is used with a type other than its declared type",
                    r.index
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    fn check_operand(
        &self,
        op: &Operand,
        subject: Subject,
        span: Option<Span>,
    ) -> Result<(), VerifyError> {
        let span = op.span.or(span);
        match op.value {
            Value::Register(r) => self.check_register(r, subject, span),
            Value::Constant(c) => {
                let expected = match c.value {
                    Literal::Bool(_) => ScalarKind::Bool,
                    Literal::Int(_) => ScalarKind::Int,
                    Literal::Float(v) => {
                        if !v.is_finite() {
                            return Err(fail(subject, span, "floating literal is not finite"));
                        }
                        ScalarKind::Float
                    }
                };
                match self.module.types.inner(c.ty) {
                    Some(TypeInner::Scalar(k)) if *k == expected => Ok(()),
                    _ => Err(fail(
                        subject,
                        span,
                        format!(
                            "constant type is not the {} scalar type of its literal",
                            expected.keyword()
                        ),
                    )),
                }
            }
        }
    }

    fn check_reference(
        &self,
        r: &Reference,
        subject: Subject,
        span: Option<Span>,
    ) -> Result<(), VerifyError> {
        let root_span = r.span.or(span);
        let slot = usize::try_from(r.slot).ok();
        let slot_ty = match r.storage {
            StorageKind::Local => self.registers.get(&r.slot).copied(),
            StorageKind::Parameter => slot
                .and_then(|s| self.function.parameters.get(s))
                .map(|p| p.ty),
            StorageKind::Uniform => slot.and_then(|s| self.module.uniforms.get(s)).map(|u| u.ty),
            StorageKind::StageIo => slot.and_then(|s| self.stage.interface.get(s)).map(|v| v.ty),
        };
        let Some(slot_ty) = slot_ty else {
            return Err(fail(
                subject,
                root_span,
                format!(
                    "reference slot {} of namespace {:?} does not exist",
                    r.slot, r.storage
                ),
            ));
        };
        if slot_ty != r.root_ty {
            return Err(fail(
                subject,
                root_span,
                "reference type differs from its slot's stored type",
            ));
        }
        let mut current = r.root_ty;
        for selector in &r.path {
            let sel_span = selector.span.or(span);
            let expected = match (&selector.kind, inner(self.module, current)) {
                (SelectorKind::Member(name), TypeInner::Record(rec)) => match rec.field(name) {
                    Some((_, field)) => field.ty,
                    None => {
                        return Err(fail(
                            subject,
                            sel_span,
                            format!("record has no field {name:?}"),
                        ));
                    }
                },
                (SelectorKind::Member(_), _) => {
                    return Err(fail(
                        subject,
                        sel_span,
                        "member reference base is not record storage",
                    ));
                }
                (SelectorKind::Index(index), TypeInner::Array { element, .. }) => {
                    self.check_operand(index, subject, sel_span)?;
                    *element
                }
                (SelectorKind::Index(_), _) => {
                    return Err(fail(
                        subject,
                        sel_span,
                        "index reference base is not array storage",
                    ));
                }
            };
            if selector.ty != expected {
                return Err(fail(
                    subject,
                    sel_span,
                    "derived reference type differs from the selected stored type",
                ));
            }
            current = expected;
        }
        Ok(())
    }
}
