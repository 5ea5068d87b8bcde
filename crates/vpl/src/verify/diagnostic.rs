//! Verification diagnostics: the invalid object ([`Subject`]), the rule
//! category ([`Rule`]) and the error ([`VerifyError`]).

use crate::code;
use crate::ir::{Block, Function, Handle, Span, StageKind, Type};
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

/// The specification rule family a [`VerifyError`] belongs to, following
/// the sections of `vpl-v1.md`. Stable names are given by [`Rule::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Section 3: module, stage, function and block containers, entries,
    /// names and their uniqueness scopes, handles.
    Container,
    /// Sections 3.1, 6 and 6.3: interface declarations, semantics,
    /// locations, required Position/FragmentColor outputs and linkage.
    Interface,
    /// Section 4: type shapes, void placement, recursion.
    Type,
    /// Section 5.1: register declarations and descriptor agreement.
    Register,
    /// Sections 5.2 and 6.2: definite assignment of registers.
    DefiniteAssignment,
    /// Sections 6 and 6.1: storage references, types and permissions.
    Storage,
    /// Section 6.3: output definedness, helper summaries, recursion.
    Output,
    /// Section 7: instruction operands, constructors, calls, extraction.
    Instruction,
    /// Section 8: terminators, returns and discard.
    ControlFlow,
    /// An implementation resource bound (documented in `docs/vpl/verifier.md`).
    Limit,
}

impl Rule {
    /// The stable lower-case name of the rule family.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Container => "container",
            Rule::Interface => "interface",
            Rule::Type => "type",
            Rule::Register => "register",
            Rule::DefiniteAssignment => "definite-assignment",
            Rule::Storage => "storage",
            Rule::Output => "output",
            Rule::Instruction => "instruction",
            Rule::ControlFlow => "control-flow",
            Rule::Limit => "limit",
        }
    }

    /// The stable diagnostic code of the rule family (`VPL-V-…`, listed in
    /// [`crate::code`]).
    pub fn code(self) -> &'static str {
        match self {
            Rule::Container => code::VERIFY_CONTAINER,
            Rule::Interface => code::VERIFY_INTERFACE,
            Rule::Type => code::VERIFY_TYPE,
            Rule::Register => code::VERIFY_REGISTER,
            Rule::DefiniteAssignment => code::VERIFY_DEFINITE_ASSIGNMENT,
            Rule::Storage => code::VERIFY_STORAGE,
            Rule::Output => code::VERIFY_OUTPUT,
            Rule::Instruction => code::VERIFY_INSTRUCTION,
            Rule::ControlFlow => code::VERIFY_CONTROL_FLOW,
            Rule::Limit => code::VERIFY_LIMIT,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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
    /// The rule family that was violated.
    pub rule: Rule,
}

/// Builds an error.
pub(crate) fn fail(
    rule: Rule,
    subject: Subject,
    span: Option<Span>,
    message: impl Into<String>,
) -> VerifyError {
    VerifyError {
        message: message.into(),
        subject,
        span,
        rule,
    }
}

/// The result of one check.
pub(crate) type Check<T = ()> = Result<T, VerifyError>;

/// Where inside a function an object is: block, instruction (or the
/// terminator) and operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub stage: StageKind,
    pub function: Handle<Function>,
    pub block: Handle<Block>,
    /// `None` for the terminator.
    pub instruction: Option<usize>,
}

impl Place {
    /// The instruction (or terminator) itself.
    pub fn subject(self) -> Subject {
        match self.instruction {
            Some(index) => Subject::Instruction {
                stage: self.stage,
                function: self.function,
                block: self.block,
                index,
            },
            None => Subject::Terminator {
                stage: self.stage,
                function: self.function,
                block: self.block,
            },
        }
    }

    /// One operand of the instruction or terminator.
    pub fn operand(self, operand: usize) -> Subject {
        Subject::Operand {
            stage: self.stage,
            function: self.function,
            block: self.block,
            instruction: self.instruction,
            operand,
        }
    }
}

/// The identifier a declaration form was written with: the first word after
/// the form's keyword at `span` (`(block check ...` gives `check`), or `None`
/// where `source` has no such form there.
fn form_id(source: &str, span: Option<Span>) -> Option<&str> {
    let rest = source.get(usize::try_from(span?.offset).ok()?..)?;
    let rest = rest.strip_prefix('(')?;
    let keyword_end = rest.find(|c: char| !is_word_char(c))?;
    let mut rest = &rest[keyword_end..];
    // Trivia between the keyword and the id: blanks, comments, continuations.
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n', '\\']);
        if let Some(after) = trimmed.strip_prefix("//") {
            rest = after.find('\n').map_or("", |n| &after[n..]);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |n| &after[n + 2..]);
        } else {
            rest = trimmed;
            break;
        }
    }
    let end = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The word at `span` (an operand as written), if one starts there.
fn word_at(source: &str, span: Option<Span>) -> Option<&str> {
    let rest = source.get(usize::try_from(span?.offset).ok()?..)?;
    let end = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn is_word_char(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '(' | ')' | '"' | '\''))
}

impl VerifyError {
    /// The message in the user's own terms: objects by the identifiers the
    /// source text gave them (`block `check` of function `fs``) and
    /// instructions and operands counted from 1 as a reader counts them,
    /// for a module read from `source`. Objects without a readable
    /// declaration there keep their canonical names (`b0`, `f0`).
    pub fn user_message(&self, module: &crate::ir::Module, source: &str) -> String {
        let name = |span: Option<Span>, canonical: String| {
            form_id(source, span).map_or(canonical, |id| format!("`{id}`"))
        };
        let function_of = |stage: StageKind, function: Handle<Function>| {
            let f = module.stage(stage).functions.get(function);
            let id = name(f.and_then(|f| f.span), format!("f{}", function.index()));
            format!("function {id} ({} stage)", stage.keyword())
        };
        let block_of = |stage: StageKind, function: Handle<Function>, block: Handle<Block>| {
            let b = module
                .stage(stage)
                .functions
                .get(function)
                .and_then(|f| f.blocks.get(block));
            let id = name(b.and_then(|b| b.span), format!("b{}", block.index()));
            format!("block {id} of {}", function_of(stage, function))
        };
        let subject = match self.subject {
            Subject::Module => "module".to_string(),
            Subject::Type(t) => {
                let declared = module.types.get(t).and_then(|t| form_id(source, t.span));
                match declared {
                    Some(id) => format!("type `{id}`"),
                    None => format!("type entry {}", t.index()),
                }
            }
            Subject::Uniform(u) => {
                let span = module.uniforms.get(u).and_then(|u| u.span);
                format!("uniform {}", name(span, format!("u{u}")))
            }
            Subject::Stage(s) => format!("{} stage", s.keyword()),
            Subject::Interface { stage, slot } => {
                let span = module.stage(stage).interface.get(slot).and_then(|v| v.span);
                format!(
                    "interface variable {} of the {} stage",
                    name(span, format!("s{slot}")),
                    stage.keyword()
                )
            }
            Subject::Function { stage, function } => function_of(stage, function),
            Subject::Parameter {
                stage,
                function,
                slot,
            } => {
                let span = module
                    .stage(stage)
                    .functions
                    .get(function)
                    .and_then(|f| f.parameters.get(slot))
                    .and_then(|p| p.span);
                format!(
                    "parameter {} of {}",
                    name(span, format!("p{slot}")),
                    function_of(stage, function)
                )
            }
            Subject::Block {
                stage,
                function,
                block,
            } => block_of(stage, function, block),
            Subject::Instruction {
                stage,
                function,
                block,
                index,
            } => format!(
                "instruction {} of {}",
                index + 1,
                block_of(stage, function, block)
            ),
            Subject::Terminator {
                stage,
                function,
                block,
            } => format!("terminator of {}", block_of(stage, function, block)),
            Subject::Operand {
                stage,
                function,
                block,
                instruction,
                operand,
            } => {
                let written = word_at(source, self.span)
                    .map(|w| format!(" (`{w}`)"))
                    .unwrap_or_default();
                let of = match instruction {
                    Some(i) => format!("instruction {}", i + 1),
                    None => "the terminator".to_string(),
                };
                format!(
                    "operand {}{written} of {of} of {}",
                    operand + 1,
                    block_of(stage, function, block)
                )
            }
        };
        format!("{subject}: {}", self.mentions_in_user_terms(module, source))
    }

    /// The stage the subject lies in, if it lies in one.
    fn stage(&self) -> Option<StageKind> {
        match self.subject {
            Subject::Module | Subject::Type(_) | Subject::Uniform(_) => None,
            Subject::Stage(stage)
            | Subject::Interface { stage, .. }
            | Subject::Function { stage, .. }
            | Subject::Parameter { stage, .. }
            | Subject::Block { stage, .. }
            | Subject::Instruction { stage, .. }
            | Subject::Terminator { stage, .. }
            | Subject::Operand { stage, .. } => Some(stage),
        }
    }

    /// The message with the objects it mentions by canonical name (another
    /// uniform `u1`, function `f1` or interface variable `s1` of the same
    /// name, location or semantic; a record as `record "Light" (type entry
    /// 3)`) named by the identifiers `source` gave them. A mention whose
    /// declaration has no readable identifier keeps its canonical name.
    fn mentions_in_user_terms(&self, module: &crate::ir::Module, source: &str) -> String {
        let id = |span: Option<Span>| form_id(source, span).map(|id| format!("`{id}`"));
        let uniform = |slot: usize| id(module.uniforms.get(slot)?.span);
        let function = |stage: StageKind, index: usize| {
            let handle = Handle::from_index(u32::try_from(index).ok()?);
            id(module.stage(stage).functions.get(handle)?.span)
        };
        let interface =
            |stage: StageKind, slot: usize| id(module.stage(stage).interface.get(slot)?.span);
        let mut message = replace_numbered(&self.message, "uniform u", "", |n| {
            uniform(n).map(|u| format!("uniform {u}"))
        });
        if let Some(stage) = self.stage() {
            message = replace_numbered(&message, "function f", " of this stage", |n| {
                function(stage, n).map(|f| format!("function {f} of this stage"))
            });
            for what in ["interface", "input", "output"] {
                message = replace_numbered(&message, &format!("{what} s"), " of this stage", |n| {
                    interface(stage, n).map(|v| format!("{what} {v} of this stage"))
                });
            }
        }
        message = replace_numbered(&message, "vertex output s", "", |n| {
            interface(StageKind::Vertex, n).map(|v| format!("vertex output {v}"))
        });
        for (handle, ty) in module.types.iter() {
            let crate::ir::TypeInner::Record(record) = &ty.inner else {
                continue;
            };
            let canonical = record_description(&record.name, handle);
            if !message.contains(&canonical) {
                continue;
            }
            if let Some(declared) = form_id(source, ty.span) {
                let named = if declared == record.name {
                    format!("record `{declared}`")
                } else {
                    format!("record `{declared}` ({:?})", record.name)
                };
                message = message.replace(&canonical, &named);
            }
        }
        message
    }
}

/// How a record type is described in a message: `record "Light" (type
/// entry 3)` (record names need not be unique). Read from text, the message
/// names it by the text's identifier instead ([`VerifyError::user_message`]).
pub(crate) fn record_description(name: &str, h: Handle<Type>) -> String {
    format!("record {name:?} (type entry {})", h.index())
}

/// `message` with every `prefix` + decimal number + `suffix` that stands
/// as whole words replaced by `spell(number)` (left alone where that is
/// `None`).
fn replace_numbered(
    message: &str,
    prefix: &str,
    suffix: &str,
    spell: impl Fn(usize) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(prefix) {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after_prefix = &rest[at + prefix.len()..];
        let digits = after_prefix
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after_prefix.len());
        let after_digits = &after_prefix[digits..];
        let whole = digits > 0
            && before_ok
            && after_digits.starts_with(suffix)
            && after_digits[suffix.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        let spelled = whole
            .then(|| after_prefix[..digits].parse::<usize>().ok())
            .flatten()
            .and_then(&spell);
        match spelled {
            Some(replacement) => {
                out.push_str(&rest[..at]);
                out.push_str(&replacement);
                rest = &after_digits[suffix.len()..];
            }
            None => {
                let skip = at + prefix.len();
                out.push_str(&rest[..skip]);
                rest = &rest[skip..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
#[path = "diagnostic_tests.rs"]
mod tests;
