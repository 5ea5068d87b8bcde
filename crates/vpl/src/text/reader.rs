//! Parsing and binding of canonical text (spec section 10.2).
//!
//! A recursive-descent parser over the fixed form shapes of the grammar.
//! Nesting is bounded before any recursion: the lexer's parentheses are
//! counted and a form deeper than the version-1 limit is a syntactic error,
//! and the only self-nesting production (`member_ref`/`index_ref`) is parsed
//! with an explicit stack. Binding happens while parsing: type IDs are
//! resolved after the whole `types` form, function IDs after the stage's
//! `functions` form and block IDs after each function, which gives the
//! forward references the grammar allows.

use super::error::{Error as TextError, ErrorKind, MAX_NESTING, MAX_TYPE_DEPTH};
use super::float::parse_f32;
use super::lexer::Error;
use super::lexer::{self, Lexer, Tok, Token};
use crate::ir::{
    Block, Builtin, Callee, Direction, Field, Function, Handle, Instruction, InstructionKind,
    InterfaceVar, Literal, Module, Operand, Parameter, Reference, Register, SamplerKind,
    ScalarKind, Selector, SelectorKind, Semantic, Span, StageKind, StorageKind, SwizzleComponent,
    Terminator, TerminatorKind, Type, TypeInner, Uniform, UniformKind, Value,
};
// Std's keyed SipHash: binding IDs are input-derived, so the hasher must
// resist collision flooding. No iteration order ever reaches the output.
use std::collections::HashMap;

mod ids;
pub(super) mod split;

use ids::IdMap;

/// A stage's `functions` form is read on two threads when the text from
/// its start to the end of the stage (estimated) has at least this many
/// bytes (about [`crate::parallel::PARALLEL_INSTRUCTIONS`] instructions).
const PARALLEL_READ_BYTES: usize = 1 << 19;

/// Parses and binds `text`; the caller verifies. Large inputs are read on
/// two threads where the machine has two cores, with the same result.
pub(crate) fn parse(text: &str, label: &str) -> Result<Module, Error> {
    #[cfg(test)]
    crate::steps::count(crate::steps::Step::Parse);
    // Only a text of at least one split's worth can be read on two threads;
    // below that the machine's core count (cgroup files) is not asked.
    let parallel = text.len() >= PARALLEL_READ_BYTES && crate::parallel::two_cores();
    parse_with(text, label, parallel)
}

/// [`parse`], reading large `functions` forms on two threads only when
/// `parallel` is set.
pub(crate) fn parse_with(text: &str, label: &str, parallel: bool) -> Result<Module, Error> {
    let mut reader = Reader {
        lexer: Lexer::new(text, label),
        peeked: None,
        depth: 0,
        label,
        module: Module::new(),
        type_ids: IdMap::default(),
        uniform_ids: HashMap::default(),
        scalar_types: [None; 3],
        current_stage: StageKind::Vertex,
        interface_ids: HashMap::default(),
        field_index: HashMap::default(),
        instructions: Vec::new(),
        function_scope: FunctionScope::default(),
        parallel,
        fork: false,
        missing_scalar: false,
    };
    reader.module()?;
    Ok(reader.module)
}

/// Function-local register table: a vector for small numbers, a map beyond.
#[derive(Default)]
struct Registers {
    small: Vec<Option<Handle<Type>>>,
    large: HashMap<u64, Handle<Type>>,
}

/// Register numbers below this are looked up in a vector. Kept small so
/// that a hostile `(register r65535 ...)` in every function cannot make
/// the per-function table cost more than the input.
const SMALL_REGISTERS: u64 = 256;

impl Registers {
    #[inline]
    fn get(&self, index: u64) -> Option<Handle<Type>> {
        if index < SMALL_REGISTERS {
            self.small.get(index as usize).copied().flatten()
        } else {
            self.large.get(&index).copied()
        }
    }

    /// Inserts; false when already declared.
    fn insert(&mut self, index: u64, ty: Handle<Type>) -> bool {
        if index < SMALL_REGISTERS {
            let i = index as usize;
            if self.small.len() <= i {
                self.small.resize(i + 1, None);
            }
            if self.small[i].is_some() {
                return false;
            }
            self.small[i] = Some(ty);
            true
        } else {
            self.large.insert(index, ty).is_none()
        }
    }
}

/// A parsed but unresolved type declaration.
struct TypeDecl<'a> {
    id: &'a str,
    id_span: Span,
    span: Span,
    shape: DeclShape<'a>,
}

enum DeclShape<'a> {
    Plain(TypeInner),
    Array {
        element: (&'a str, Span),
        length: u64,
    },
    Record {
        name: String,
        fields: Vec<(String, &'a str, Span, Span)>,
    },
}

impl DeclShape<'_> {
    fn dependencies(&self) -> Vec<(&str, Span)> {
        match self {
            DeclShape::Plain(_) => Vec::new(),
            DeclShape::Array { element, .. } => vec![*element],
            DeclShape::Record { fields, .. } => fields.iter().map(|f| (f.1, f.3)).collect(),
        }
    }
}

/// A call whose callee ID is resolved after the stage: function, block,
/// instruction position, callee ID and its span.
type CallFixup<'a> = (Handle<Function>, Handle<Block>, usize, &'a str, Span);

/// Per-stage binding state.
#[derive(Default)]
struct StageScope<'a> {
    function_ids: IdMap<'a, Handle<Function>, b'f'>,
    /// A fork's function IDs in order (a fork only), to check them against
    /// the functions before the fork when its part is adopted.
    ids_in_order: Vec<(&'a str, Span)>,
    /// Calls to resolve: function, block, instruction position, callee ID.
    call_fixups: Vec<CallFixup<'a>>,
}

/// Per-function binding state.
#[derive(Default)]
struct FunctionScope<'a> {
    parameter_ids: IdMap<'a, usize, b'p'>,
    parameter_types: Vec<Handle<Type>>,
    registers: Registers,
    block_ids: IdMap<'a, Handle<Block>, b'b'>,
    /// Branch targets to resolve: block, successor position, block ID.
    branch_fixups: Vec<(Handle<Block>, u8, &'a str, Span)>,
}

/// Tables of at most this capacity are cleared for the next function;
/// larger ones are dropped, so that one huge function cannot make every
/// later clear expensive.
const REUSE_CAPACITY: usize = 256;

impl FunctionScope<'_> {
    /// Empties the scope for the next function, keeping small allocations.
    fn reset(&mut self) {
        fn reset_map<K, V>(map: &mut HashMap<K, V>) {
            if map.capacity() > REUSE_CAPACITY {
                *map = HashMap::default();
            } else {
                map.clear();
            }
        }
        fn reset_vec<T>(v: &mut Vec<T>) {
            if v.capacity() > REUSE_CAPACITY {
                *v = Vec::new();
            } else {
                v.clear();
            }
        }
        self.parameter_ids.reset(REUSE_CAPACITY);
        reset_vec(&mut self.parameter_types);
        reset_vec(&mut self.registers.small);
        reset_map(&mut self.registers.large);
        self.block_ids.reset(REUSE_CAPACITY);
        reset_vec(&mut self.branch_fixups);
    }
}

const UNRESOLVED_BLOCK: Handle<Block> = Handle::from_index(u32::MAX);
const UNRESOLVED_FUNCTION: Handle<Function> = Handle::from_index(u32::MAX);

struct Reader<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Token<'a>>,
    depth: u32,
    label: &'a str,
    module: Module,
    type_ids: IdMap<'a, Handle<Type>, b't'>,
    uniform_ids: HashMap<&'a str, usize>,
    scalar_types: [Option<Handle<Type>>; 3],
    current_stage: StageKind,
    interface_ids: HashMap<&'a str, usize>,
    /// Field name → type, built on demand for records with many fields.
    field_index: HashMap<Handle<Type>, HashMap<String, Handle<Type>>>,
    /// Scratch list of the block being read; each finished block gets an
    /// exactly sized copy, so blocks carry no growth slack.
    instructions: Vec<Instruction>,
    /// The previous function's binding tables, emptied and reused.
    function_scope: FunctionScope<'a>,
    /// Whether large `functions` forms may be read on two threads.
    parallel: bool,
    /// Whether this reader reads the second part of a `functions` form on
    /// a helper thread (see [`Reader::functions`]).
    fork: bool,
    /// Set by a fork that needed a scalar type its snapshot lacks: its
    /// result is discarded, as the sequential reader would have created
    /// that type (and numbered it) at a point the fork cannot know.
    missing_scalar: bool,
}

/// Records with at most this many fields are searched linearly.
const FIELD_SCAN_LIMIT: usize = 16;

fn describe(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Open => "`(`".into(),
        Tok::Close => "`)`".into(),
        Tok::Name(w) | Tok::Number(w) => format!("`{}`", short(w)),
        Tok::Str(_) | Tok::EscapedStr(_) => "a string".into(),
        Tok::End => "end of input".into(),
    }
}

fn short(w: &str) -> &str {
    match w.char_indices().nth(40) {
        Some((i, _)) => &w[..i],
        None => w,
    }
}

impl<'a> Reader<'a> {
    // ---- token plumbing -------------------------------------------------

    #[inline(always)]
    fn next(&mut self) -> Result<Token<'a>, Error> {
        let token = match self.peeked.take() {
            Some(t) => t,
            None => self.lexer.next_token()?,
        };
        match token.tok {
            Tok::Open => {
                self.depth += 1;
                // The module form is level 1 and a form's atoms are one
                // level deeper, so a form at level 128 would nest its atoms
                // beyond the limit.
                if self.depth >= MAX_NESTING {
                    return Err(self.error_at(
                        ErrorKind::Syntactic,
                        token.span,
                        format!("form/atom nesting exceeds the limit of {MAX_NESTING} levels"),
                    ));
                }
            }
            Tok::Close => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        Ok(token)
    }

    /// Consumes a `(` that comes next (the fast path of [`Reader::next`]
    /// for the commonest token), with the same nesting check.
    #[inline(always)]
    fn eat_open(&mut self) -> Result<Option<Span>, Error> {
        if self.peeked.is_some() {
            return Ok(None);
        }
        let Some(span) = self.lexer.eat(b'(')? else {
            return Ok(None);
        };
        self.depth += 1;
        if self.depth >= MAX_NESTING {
            return Err(self.error_at(
                ErrorKind::Syntactic,
                span,
                format!("form/atom nesting exceeds the limit of {MAX_NESTING} levels"),
            ));
        }
        Ok(Some(span))
    }

    /// Consumes a `)` that comes next.
    #[inline(always)]
    fn eat_close(&mut self) -> Result<bool, Error> {
        if self.peeked.is_some() || self.lexer.eat(b')')?.is_none() {
            return Ok(false);
        }
        self.depth = self.depth.saturating_sub(1);
        Ok(true)
    }

    #[inline(always)]
    fn peek(&mut self) -> Result<Token<'a>, Error> {
        match self.peeked {
            Some(t) => Ok(t),
            None => {
                let t = self.lexer.next_token()?;
                self.peeked = Some(t);
                Ok(t)
            }
        }
    }

    #[cold]
    fn error_at(&self, kind: ErrorKind, span: Span, message: impl Into<String>) -> Error {
        Box::new(TextError {
            kind,
            message: message.into(),
            label: self.label.to_string(),
            position: span,
            verify: None,
        })
    }

    #[cold]
    fn syntax(&self, token: &Token<'_>, expected: &str) -> Error {
        self.error_at(
            ErrorKind::Syntactic,
            token.span,
            format!("expected {expected}, found {}", describe(&token.tok)),
        )
    }

    #[cold]
    fn semantic(&self, span: Span, message: impl Into<String>) -> Error {
        self.error_at(ErrorKind::Semantic, span, message)
    }

    #[inline]
    fn open(&mut self, what: &str) -> Result<Span, Error> {
        if let Some(span) = self.eat_open()? {
            return Ok(span);
        }
        let t = self.next()?;
        match t.tok {
            Tok::Open => Ok(t.span),
            _ => Err(self.syntax(&t, &format!("`(` starting {what}"))),
        }
    }

    /// Expects `)`; the common case (a `)` comes next) is inlined.
    #[inline(always)]
    fn close(&mut self, what: &str) -> Result<(), Error> {
        if self.eat_close()? {
            return Ok(());
        }
        self.close_token(what)
    }

    /// [`Reader::close`] when the next token is not read in place.
    #[inline(never)]
    fn close_token(&mut self, what: &str) -> Result<(), Error> {
        let t = self.next()?;
        match t.tok {
            Tok::Close => Ok(()),
            _ => Err(self.syntax(&t, &format!("`)` closing {what}"))),
        }
    }

    /// Expects the keyword `kw`.
    #[inline]
    fn keyword(&mut self, kw: &str) -> Result<Span, Error> {
        // Read in place when it comes next as a whole word (the token
        // `next` would give); anything else takes the full token path.
        if self.peeked.is_none()
            && let Some(span) = self.lexer.eat_name(kw.as_bytes())?
        {
            return Ok(span);
        }
        let t = self.next()?;
        match t.tok {
            Tok::Name(w) if w == kw => Ok(t.span),
            _ => Err(self.syntax(&t, &format!("`{kw}`"))),
        }
    }

    /// `( kw` as the opening of a form.
    fn open_form(&mut self, kw: &str) -> Result<Span, Error> {
        // The expectation is only formatted on failure: this runs once per form.
        if let Some(span) = self.eat_open()? {
            self.keyword(kw)?;
            return Ok(span);
        }
        let t = self.next()?;
        let Tok::Open = t.tok else {
            return Err(self.syntax(&t, &format!("`(` starting a `{kw}` form")));
        };
        self.keyword(kw)?;
        Ok(t.span)
    }

    /// Whether the next token is `)`.
    #[inline]
    fn at_close(&mut self) -> Result<bool, Error> {
        if self.peeked.is_none() {
            return self.lexer.at(b')');
        }
        Ok(matches!(self.peek()?.tok, Tok::Close))
    }

    /// Any name (an ID or keyword).
    #[inline]
    fn name(&mut self, what: &str) -> Result<(&'a str, Span), Error> {
        if self.peeked.is_none()
            && let Some((w, span)) = self.lexer.eat_plain_name()?
        {
            if !matches!(w, "true" | "false" | "void") {
                return Ok((w, span));
            }
            return Err(self.error_at(
                ErrorKind::Syntactic,
                span,
                format!("`{w}` is reserved and cannot be used as {what}"),
            ));
        }
        let t = self.next()?;
        match t.tok {
            Tok::Name(w) => {
                if matches!(w, "true" | "false" | "void") {
                    Err(self.error_at(
                        ErrorKind::Syntactic,
                        t.span,
                        format!("`{w}` is reserved and cannot be used as {what}"),
                    ))
                } else {
                    Ok((w, t.span))
                }
            }
            _ => Err(self.syntax(&t, what)),
        }
    }

    fn string(&mut self, what: &str) -> Result<(String, Span), Error> {
        let t = self.next()?;
        match t.tok {
            Tok::Str(raw) => Ok((raw.to_string(), t.span)),
            Tok::EscapedStr(raw) => Ok((lexer::unescape(raw, true), t.span)),
            _ => Err(self.syntax(&t, what)),
        }
    }

    /// An unsigned size (`Size` = u64).
    fn size(&mut self, what: &str) -> Result<(u64, Span), Error> {
        let t = self.next()?;
        match t.tok {
            Tok::Number(w) if w.bytes().all(|b| b.is_ascii_digit()) => match w.parse::<u64>() {
                Ok(v) => Ok((v, t.span)),
                Err(_) => Err(self.error_at(
                    ErrorKind::Lexical,
                    t.span,
                    format!(
                        "{what} `{}` is out of range (at most {})",
                        short(w),
                        u64::MAX
                    ),
                )),
            },
            _ => Err(self.syntax(&t, &format!("{what} (unsigned decimal digits)"))),
        }
    }

    fn signed_integer(&mut self, what: &str) -> Result<(i32, Span), Error> {
        let t = self.next()?;
        self.signed_integer_from(&t, what)
    }

    /// [`Reader::signed_integer`] of the token `t` already read.
    fn signed_integer_from(&self, t: &Token<'a>, what: &str) -> Result<(i32, Span), Error> {
        match t.tok {
            Tok::Number(w) if lexer::is_integer(w) => match w.parse::<i32>() {
                Ok(v) => Ok((v, t.span)),
                Err(_) => Err(self.error_at(
                    ErrorKind::Lexical,
                    t.span,
                    format!("{what} `{}` is outside the signed 32-bit range", short(w)),
                )),
            },
            _ => Err(self.syntax(t, &format!("{what} (a signed decimal integer)"))),
        }
    }

    /// A register spelling `r` + digits, returning its number.
    #[inline(always)]
    fn register_number(&mut self) -> Result<(u64, Span), Error> {
        // The common spelling (`r` and a few digits) is read in place; any
        // other word is read as a token and judged by `register_from`.
        if self.peeked.is_none()
            && let Some(register) = self.lexer.eat_register()?
        {
            return Ok(register);
        }
        self.register_token()
    }

    /// [`Reader::register_number`] of a word not read in place.
    #[inline(never)]
    fn register_token(&mut self) -> Result<(u64, Span), Error> {
        let t = self.next()?;
        self.register_from(&t)
    }

    #[inline(never)]
    fn register_from(&self, t: &Token<'a>) -> Result<(u64, Span), Error> {
        if let Tok::Name(w) = t.tok
            && let Some(digits) = w.strip_prefix('r')
            && !digits.is_empty()
        {
            let mut value = 0u64;
            let mut overflow = false;
            let mut all_digits = true;
            for b in digits.bytes() {
                if !b.is_ascii_digit() {
                    all_digits = false;
                    break;
                }
                match value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(b - b'0')))
                {
                    Some(v) => value = v,
                    None => overflow = true,
                }
            }
            if !all_digits {
                return Err(self.syntax(t, "a register (`r` followed by digits)"));
            }
            return match overflow {
                false => Ok((value, t.span)),
                true => Err(self.error_at(
                    ErrorKind::Lexical,
                    t.span,
                    format!(
                        "register number `{}` is out of range (at most {})",
                        short(w),
                        u64::MAX
                    ),
                )),
            };
        }
        Err(self.syntax(t, "a register (`r` followed by digits)"))
    }

    // ---- module ---------------------------------------------------------

    fn module(&mut self) -> Result<(), Error> {
        let span = self.open_form("module")?;
        self.module.span = Some(span);
        let (version, vspan) = self.size("version")?;
        if version != 1 {
            return Err(self.semantic(
                vspan,
                format!("unsupported version {version} (only version 1 is defined)"),
            ));
        }
        self.types()?;
        self.uniforms()?;
        self.stage(StageKind::Vertex)?;
        self.stage(StageKind::Fragment)?;
        self.close("the module")?;
        let t = self.next()?;
        if !matches!(t.tok, Tok::End) {
            return Err(self.error_at(
                ErrorKind::Syntactic,
                t.span,
                format!("trailing input after the module: {}", describe(&t.tok)),
            ));
        }
        Ok(())
    }

    fn type_ref(&self, id: &str, span: Span) -> Result<Handle<Type>, Error> {
        self.type_ids.get(id).ok_or_else(|| {
            self.semantic(
                span,
                format!(
                    "unknown type `{id}`{}",
                    did_you_mean(id, self.type_ids.ids().iter())
                ),
            )
        })
    }

    // ---- types ----------------------------------------------------------

    fn types(&mut self) -> Result<(), Error> {
        self.open_form("types")?;
        let mut decls: Vec<TypeDecl<'a>> = Vec::new();
        let mut index_of: HashMap<&'a str, usize> = HashMap::default();
        while !self.at_close()? {
            let decl = self.type_decl()?;
            if index_of.insert(decl.id, decls.len()).is_some() {
                return Err(self.semantic(decl.id_span, format!("duplicate type `{}`", decl.id)));
            }
            decls.push(decl);
        }
        self.close("the types")?;
        self.bind_types(&decls, &index_of)
    }

    fn type_decl(&mut self) -> Result<TypeDecl<'a>, Error> {
        let span = self.open_form("type")?;
        let (id, id_span) = self.name("a type ID")?;
        let t = self.next()?;
        let shape_word = match t.tok {
            Tok::Name(w) => w,
            _ => return Err(self.syntax(&t, "a type shape")),
        };
        let shape = match shape_word {
            "void" => DeclShape::Plain(TypeInner::Void),
            "bool" => DeclShape::Plain(TypeInner::Scalar(ScalarKind::Bool)),
            "int" => DeclShape::Plain(TypeInner::Scalar(ScalarKind::Int)),
            "float" => DeclShape::Plain(TypeInner::Scalar(ScalarKind::Float)),
            "sampler2D" => DeclShape::Plain(TypeInner::Sampler(SamplerKind::Sampler2D)),
            "vector" => {
                let k = self.next()?;
                let kind = match k.tok {
                    Tok::Name("bool") => ScalarKind::Bool,
                    Tok::Name("int") => ScalarKind::Int,
                    Tok::Name("float") => ScalarKind::Float,
                    _ => return Err(self.syntax(&k, "an element kind (`bool`, `int` or `float`)")),
                };
                let (size, sspan) = self.size("a vector size")?;
                let size = self.dimension(size, sspan, "vector size")?;
                DeclShape::Plain(TypeInner::Vector { kind, size })
            }
            "matrix" => {
                let (rows, rspan) = self.size("a row count")?;
                let rows = self.dimension(rows, rspan, "matrix row count")?;
                let (columns, cspan) = self.size("a column count")?;
                let columns = self.dimension(columns, cspan, "matrix column count")?;
                DeclShape::Plain(TypeInner::Matrix { rows, columns })
            }
            "array" => {
                let element = self.name("an element type ID")?;
                let (length, lspan) = self.size("an array length")?;
                if length == 0 {
                    return Err(self.semantic(lspan, "array length 0: unsized arrays are not supported"));
                }
                DeclShape::Array { element, length }
            }
            "record" => {
                let (name, _) = self.string("a record display name")?;
                let mut fields = Vec::new();
                while !self.at_close()? {
                    let fspan = self.open_form("field")?;
                    let (fname, _) = self.string("a field name")?;
                    let (tid, tspan) = self.name("a field type ID")?;
                    self.close("the field")?;
                    fields.push((fname, tid, fspan, tspan));
                }
                DeclShape::Record { name, fields }
            }
            _ => return Err(self.syntax(&t, "a type shape (`void`, `bool`, `int`, `float`, `sampler2D`, `vector`, `matrix`, `array` or `record`)")),
        };
        self.close("the type")?;
        Ok(TypeDecl {
            id,
            id_span,
            span,
            shape,
        })
    }

    fn dimension(&self, value: u64, span: Span, what: &str) -> Result<u8, Error> {
        match value {
            2..=4 => Ok(value as u8),
            _ => Err(self.semantic(span, format!("invalid {what} {value} (must be 2, 3 or 4)"))),
        }
    }

    /// Resolves type IDs: unknown references, cycles and the dependency
    /// depth limit (over all declarations, used or not), then creates the
    /// type table entries in dependency order.
    fn bind_types(
        &mut self,
        decls: &[TypeDecl<'a>],
        index_of: &HashMap<&'a str, usize>,
    ) -> Result<(), Error> {
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(decls.len());
        for decl in decls {
            let mut d = Vec::new();
            for (id, span) in decl.shape.dependencies() {
                match index_of.get(id) {
                    Some(&i) => d.push(i),
                    None => {
                        return Err(self.semantic(
                            span,
                            format!("unknown type `{id}`{}", did_you_mean(id, index_of.keys())),
                        ));
                    }
                }
            }
            deps.push(d);
        }
        // Iterative DFS: post-order, cycle detection, longest dependency path.
        let mut state = vec![0u8; decls.len()];
        let mut depth = vec![0u32; decls.len()];
        let mut order = Vec::with_capacity(decls.len());
        for root in 0..decls.len() {
            if state[root] != 0 {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            state[root] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&child) = deps[node].get(*next) {
                    *next += 1;
                    match state[child] {
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        1 => {
                            return Err(self.semantic(
                                decls[child].span,
                                format!("recursive type `{}`", decls[child].id),
                            ));
                        }
                        _ => {}
                    }
                } else {
                    let d = deps[node].iter().map(|&c| depth[c] + 1).max().unwrap_or(0);
                    depth[node] = d;
                    state[node] = 2;
                    order.push(node);
                    stack.pop();
                }
            }
        }
        if let Some(i) = (0..decls.len()).find(|&i| depth[i] > MAX_TYPE_DEPTH) {
            return Err(self.semantic(
                decls[i].span,
                format!(
                    "type `{}` has a dependency depth of {} (the limit is {MAX_TYPE_DEPTH})",
                    decls[i].id, depth[i]
                ),
            ));
        }
        // Records first (nominal: one entry per declaration), then the rest
        // in dependency order so that element handles exist.
        let mut handles: Vec<Option<Handle<Type>>> = vec![None; decls.len()];
        for (i, decl) in decls.iter().enumerate() {
            if let DeclShape::Record { name, .. } = &decl.shape {
                handles[i] = Some(self.module.types.declare_record(
                    name.clone(),
                    Vec::new(),
                    Some(decl.span),
                ));
            }
        }
        for &i in &order {
            let decl = &decls[i];
            match &decl.shape {
                DeclShape::Plain(inner) => {
                    handles[i] = Some(self.module.types.insert(inner.clone(), Some(decl.span)));
                }
                DeclShape::Array { length, .. } => {
                    let element = handles[deps[i][0]].ok_or_else(|| {
                        self.semantic(decl.span, "internal: unresolved element type")
                    })?;
                    handles[i] = Some(self.module.types.insert(
                        TypeInner::Array {
                            element,
                            length: *length,
                        },
                        Some(decl.span),
                    ));
                }
                DeclShape::Record { fields, .. } => {
                    let mut resolved = Vec::with_capacity(fields.len());
                    for (k, (name, _, fspan, _)) in fields.iter().enumerate() {
                        let ty = handles[deps[i][k]].ok_or_else(|| {
                            self.semantic(*fspan, "internal: unresolved field type")
                        })?;
                        resolved.push(Field {
                            name: name.clone(),
                            ty,
                            span: Some(*fspan),
                        });
                    }
                    if let Some(h) = handles[i]
                        && let Some(record) = self.module.types.record_mut(h)
                    {
                        record.fields = resolved;
                    }
                }
            }
        }
        for (i, decl) in decls.iter().enumerate() {
            if let Some(h) = handles[i] {
                // Type IDs are unique here (`types` rejected duplicates).
                self.type_ids.insert(decl.id, h);
            }
        }
        for (i, kind) in [ScalarKind::Bool, ScalarKind::Int, ScalarKind::Float]
            .into_iter()
            .enumerate()
        {
            self.scalar_types[i] = self.module.types.find(&TypeInner::Scalar(kind));
        }
        Ok(())
    }

    #[inline]
    fn scalar_type(&mut self, kind: ScalarKind) -> Handle<Type> {
        let slot = kind as usize;
        match self.scalar_types[slot] {
            Some(h) => h,
            None if self.fork => {
                self.missing_scalar = true;
                Handle::from_index(u32::MAX)
            }
            None => {
                let h = self.module.types.scalar(kind);
                self.scalar_types[slot] = Some(h);
                h
            }
        }
    }

    // ---- uniforms -------------------------------------------------------

    fn uniforms(&mut self) -> Result<(), Error> {
        self.open_form("uniforms")?;
        while !self.at_close()? {
            let span = self.open("a uniform")?;
            let t = self.next()?;
            let kind = match t.tok {
                Tok::Name("scalar") => UniformKind::Scalar,
                Tok::Name("record") => UniformKind::Record,
                Tok::Name("array") => UniformKind::Array,
                _ => return Err(self.syntax(&t, "a uniform kind (`scalar`, `record` or `array`)")),
            };
            let (id, id_span) = self.name("a uniform ID")?;
            let (name, _) = self.string("a uniform name")?;
            let (tid, tspan) = self.name("a type ID")?;
            let ty = self.type_ref(tid, tspan)?;
            let inner = &self.module.types[ty].inner;
            let ty = match kind {
                UniformKind::Scalar => {
                    if matches!(
                        inner,
                        TypeInner::Void | TypeInner::Record(_) | TypeInner::Array { .. }
                    ) {
                        return Err(self.semantic(
                            tspan,
                            format!("type `{tid}` is not a valid scalar uniform type"),
                        ));
                    }
                    ty
                }
                UniformKind::Record => {
                    if !matches!(inner, TypeInner::Record(_)) {
                        return Err(self.semantic(
                            tspan,
                            format!("record uniform type `{tid}` is not a record"),
                        ));
                    }
                    ty
                }
                UniformKind::Array => {
                    if matches!(inner, TypeInner::Void) {
                        return Err(self.semantic(tspan, "array uniform elements cannot be void"));
                    }
                    let (length, lspan) = self.size("an array count")?;
                    if length == 0 {
                        return Err(self.semantic(
                            lspan,
                            "array uniform count 0: unsized arrays are not supported",
                        ));
                    }
                    self.module.types.insert(
                        TypeInner::Array {
                            element: ty,
                            length,
                        },
                        Some(span),
                    )
                }
            };
            self.close("the uniform")?;
            let slot = self.module.uniforms.len();
            if self.uniform_ids.insert(id, slot).is_some() {
                return Err(self.semantic(id_span, format!("duplicate uniform `{id}`")));
            }
            self.module.uniforms.push(Uniform {
                kind,
                name,
                ty,
                span: Some(span),
            });
        }
        self.close("the uniforms")
    }

    // ---- stages ---------------------------------------------------------

    fn stage(&mut self, kind: StageKind) -> Result<(), Error> {
        let span = self.open_form(kind.keyword())?;
        self.module.stage_mut(kind).span = Some(span);
        let (entry_id, entry_span) = self.name("the entry function ID")?;
        let mut scope = StageScope::default();
        self.current_stage = kind;
        self.interface_ids.clear();
        // Interface.
        self.open_form("interface")?;
        while !self.at_close()? {
            let vspan = self.open("an interface variable")?;
            let t = self.next()?;
            let direction = match t.tok {
                Tok::Name("in") => Direction::In,
                Tok::Name("out") => Direction::Out,
                _ => return Err(self.syntax(&t, "a direction (`in` or `out`)")),
            };
            let (id, id_span) = self.name("an interface ID")?;
            let (name, _) = self.string("an interface name")?;
            let (tid, tspan) = self.name("a type ID")?;
            let ty = self.type_ref(tid, tspan)?;
            let (location, _) = self.signed_integer("a location")?;
            let t = self.next()?;
            let semantic = match t.tok {
                Tok::Name(w) => Semantic::from_keyword(w),
                _ => None,
            }
            .ok_or_else(|| {
                self.syntax(
                    &t,
                    "a semantic (`none`, `position`, `color`, `texcoord` or `fragment_color`)",
                )
            })?;
            self.close("the interface variable")?;
            let slot = self.module.stage(kind).interface.len();
            if self.interface_ids.insert(id, slot).is_some() {
                return Err(self.semantic(id_span, format!("duplicate interface `{id}`")));
            }
            let stage = self.module.stage_mut(kind);
            stage.interface.push(InterfaceVar {
                direction,
                name,
                ty,
                location,
                semantic,
                span: Some(vspan),
            });
        }
        self.close("the interface")?;
        // Functions.
        self.open_form("functions")?;
        self.functions(kind, &mut scope)?;
        self.close("the functions")?;
        // Resolve forward function references.
        let entry = scope.function_ids.get(entry_id).ok_or_else(|| {
            self.semantic(
                entry_span,
                format!(
                    "unknown entry function `{entry_id}`{}",
                    did_you_mean(entry_id, scope.function_ids.ids().iter())
                ),
            )
        })?;
        for &(f, b, i, id, span) in &scope.call_fixups {
            let callee = scope.function_ids.get(id).ok_or_else(|| {
                self.semantic(
                    span,
                    format!(
                        "unknown function `{id}` (calls must name a function of the same stage){}",
                        did_you_mean(id, scope.function_ids.ids().iter())
                    ),
                )
            })?;
            let stage = self.module.stage_mut(kind);
            if let InstructionKind::Call { callee: c, .. } =
                &mut stage.functions[f].blocks[b].instructions[i].kind
            {
                *c = Callee::Function(callee);
            }
        }
        let stage = self.module.stage_mut(kind);
        stage.entry = Some(entry);
        self.close(&format!("the {} stage", kind.keyword()))
    }

    fn function(&mut self, kind: StageKind, stage_scope: &mut StageScope<'a>) -> Result<(), Error> {
        let span = self.open_form("function")?;
        let (id, id_span) = self.name("a function ID")?;
        let (name, _) = self.string("a function name")?;
        let (tid, tspan) = self.name("a return type ID")?;
        let return_type = self.type_ref(tid, tspan)?;
        let mut function = Function::new(name, return_type);
        function.span = Some(span);
        let mut scope = std::mem::take(&mut self.function_scope);
        scope.reset();
        // Parameters.
        self.open_form("parameters")?;
        while !self.at_close()? {
            let pspan = self.open_form("parameter")?;
            let (pid, pid_span) = self.name("a parameter ID")?;
            let (tid, tspan) = self.name("a type ID")?;
            let ty = self.type_ref(tid, tspan)?;
            self.close("the parameter")?;
            if !scope.parameter_ids.insert(pid, function.parameters.len()) {
                return Err(self.semantic(pid_span, format!("duplicate parameter `{pid}`")));
            }
            function.parameters.push(Parameter {
                ty,
                span: Some(pspan),
            });
            scope.parameter_types.push(ty);
        }
        self.close("the parameters")?;
        // Registers: the declaration prefix of the entry block.
        self.instructions.clear();
        self.open_form("registers")?;
        while !self.at_close()? {
            let rspan = self.open_form("register")?;
            let (index, ispan) = self.register_number()?;
            let (tid, tspan) = self.name("a type ID")?;
            let ty = self.type_ref(tid, tspan)?;
            self.close("the register")?;
            if !scope.registers.insert(index, ty) {
                return Err(self.semantic(ispan, format!("duplicate register r{index}")));
            }
            self.instructions.push(Instruction {
                kind: InstructionKind::DeclareLocal {
                    register: Register::new(index, ty),
                },
                span: Some(rspan),
            });
        }
        self.close("the registers")?;
        // Blocks.
        let func_handle =
            Handle::<Function>::from_index(self.module.stage(kind).functions.len() as u32);
        let mut first = true;
        loop {
            if !first && self.at_close()? {
                break;
            }
            if !first {
                self.instructions.clear();
            }
            first = false;
            self.block(&mut function, &mut scope, stage_scope, func_handle)?;
        }
        self.close("the function")?;
        for &(b, which, bid, bspan) in &scope.branch_fixups {
            let target = scope.block_ids.get(bid).ok_or_else(|| {
                self.semantic(
                    bspan,
                    format!(
                        "unknown block `{bid}`{}",
                        did_you_mean(bid, scope.block_ids.ids().iter())
                    ),
                )
            })?;
            if let Some(t) = &mut function.blocks[b].terminator {
                match (&mut t.kind, which) {
                    (TerminatorKind::Branch { target: x }, _) => *x = target,
                    (TerminatorKind::BranchIf { if_true, .. }, 0) => *if_true = target,
                    (TerminatorKind::BranchIf { if_false, .. }, _) => *if_false = target,
                    _ => {}
                }
            }
        }
        let stage = self.module.stage_mut(kind);
        if !stage_scope.function_ids.insert(id, func_handle) {
            return Err(self.semantic(id_span, format!("duplicate function `{id}`")));
        }
        if self.fork {
            stage_scope.ids_in_order.push((id, id_span));
        }
        stage.functions.append(function);
        self.function_scope = scope;
        Ok(())
    }

    fn block(
        &mut self,
        function: &mut Function,
        scope: &mut FunctionScope<'a>,
        stage_scope: &mut StageScope<'a>,
        func_handle: Handle<Function>,
    ) -> Result<(), Error> {
        let span = self.open_form("block")?;
        let (id, id_span) = self.name("a block ID")?;
        let handle = Handle::<Block>::from_index(function.blocks.len() as u32);
        if !scope.block_ids.insert(id, handle) {
            return Err(self.semantic(id_span, format!("duplicate block `{id}`")));
        }
        let terminator = loop {
            let open_span = match self.eat_open()? {
                Some(span) => span,
                None => {
                    let open = self.next()?;
                    if !matches!(open.tok, Tok::Open) {
                        return Err(self.syntax(&open, "an instruction or terminator form"));
                    }
                    open.span
                }
            };
            // The head word read in place when it is a plain name (the token
            // the lexer would give); anything else takes the full token path.
            let plain = if self.peeked.is_none() {
                self.lexer.eat_plain_name()?
            } else {
                None
            };
            let head = match plain {
                Some((word, span)) => Token {
                    tok: Tok::Name(word),
                    span,
                },
                None => self.next()?,
            };
            let Tok::Name(word) = head.tok else {
                return Err(self.syntax(&head, "an instruction or terminator name"));
            };
            if let Some(terminator) = self.terminator(word, open_span, scope, handle)? {
                break terminator;
            }
            let kind = self.instruction(
                word,
                &head,
                scope,
                stage_scope,
                func_handle,
                handle,
                self.instructions.len(),
            )?;
            self.close("the instruction")?;
            self.instructions.push(Instruction {
                kind,
                span: Some(open_span),
            });
        };
        let after = self.next()?;
        match after.tok {
            Tok::Close => {}
            Tok::Open => {
                return Err(self.error_at(
                    ErrorKind::Syntactic,
                    after.span,
                    "a block has exactly one final terminator; found a form after it",
                ));
            }
            _ => return Err(self.syntax(&after, "`)` closing the block")),
        }
        let mut instructions = Vec::with_capacity(self.instructions.len());
        instructions.append(&mut self.instructions);
        function.blocks.append(Block {
            instructions,
            terminator: Some(terminator),
            span: Some(span),
        });
        Ok(())
    }

    /// Parses a terminator whose head is `word`, or returns `None` when the
    /// head is not a terminator keyword.
    fn terminator(
        &mut self,
        word: &str,
        span: Span,
        scope: &mut FunctionScope<'a>,
        block: Handle<Block>,
    ) -> Result<Option<Terminator>, Error> {
        let kind = match word {
            "branch" => {
                let (target, tspan) = self.name("a block ID")?;
                scope.branch_fixups.push((block, 0, target, tspan));
                TerminatorKind::Branch {
                    target: UNRESOLVED_BLOCK,
                }
            }
            "branch_if" => {
                let condition = self.operand(scope)?;
                let (t, tspan) = self.name("a block ID")?;
                let (f, fspan) = self.name("a block ID")?;
                scope.branch_fixups.push((block, 0, t, tspan));
                scope.branch_fixups.push((block, 1, f, fspan));
                TerminatorKind::BranchIf {
                    condition,
                    if_true: UNRESOLVED_BLOCK,
                    if_false: UNRESOLVED_BLOCK,
                }
            }
            "return" => {
                let value = if self.at_close()? {
                    None
                } else {
                    Some(self.operand(scope)?)
                };
                TerminatorKind::Return { value }
            }
            "discard" => TerminatorKind::Discard,
            _ => return Ok(None),
        };
        self.close("the terminator")?;
        Ok(Some(Terminator {
            kind,
            span: Some(span),
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn instruction(
        &mut self,
        word: &str,
        head: &Token<'a>,
        scope: &mut FunctionScope<'a>,
        stage_scope: &mut StageScope<'a>,
        func_handle: Handle<Function>,
        block: Handle<Block>,
        position: usize,
    ) -> Result<InstructionKind, Error> {
        Ok(match word {
            "copy" => {
                let result = self.result_register(scope)?;
                let source = self.operand(scope)?;
                InstructionKind::Copy { result, source }
            }
            "load" => {
                let result = self.result_register(scope)?;
                let source = self.reference(scope)?;
                InstructionKind::Load { result, source }
            }
            "store" => {
                let target = self.reference(scope)?;
                let value = self.operand(scope)?;
                InstructionKind::Store { target, value }
            }
            "construct" => {
                let result = self.result_register(scope)?;
                let mut arguments = Vec::new();
                while !self.at_close()? {
                    arguments.push(self.operand(scope)?);
                }
                InstructionKind::Construct {
                    result,
                    ty: result.ty,
                    arguments,
                }
            }
            "call" => {
                let t = self.next()?;
                let result = match t.tok {
                    Tok::Name("void") => None,
                    _ => {
                        let (index, span) = self.register_from(&t)?;
                        Some(self.bind_register(scope, index, span)?)
                    }
                };
                let (callee, cspan) = self.name("a function ID")?;
                stage_scope
                    .call_fixups
                    .push((func_handle, block, position, callee, cspan));
                let mut arguments = Vec::new();
                while !self.at_close()? {
                    arguments.push(self.operand(scope)?);
                }
                InstructionKind::Call {
                    result,
                    callee: Callee::Function(UNRESOLVED_FUNCTION),
                    arguments,
                }
            }
            "texture" => {
                let result = self.result_register(scope)?;
                let sampler = self.operand(scope)?;
                let coordinates = self.operand(scope)?;
                InstructionKind::Call {
                    result: Some(result),
                    callee: Callee::Builtin(Builtin::Texture),
                    arguments: vec![sampler, coordinates],
                }
            }
            "swizzle" => {
                let result = self.result_register(scope)?;
                let source = self.operand(scope)?;
                let (pattern, pspan) = self.string("a swizzle pattern")?;
                let pattern = pattern
                    .chars()
                    .map(SwizzleComponent::from_letter)
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        self.semantic(
                            pspan,
                            format!("invalid swizzle pattern {pattern:?} (only x, y, z and w)"),
                        )
                    })?;
                InstructionKind::Swizzle {
                    result,
                    source,
                    pattern,
                }
            }
            "member" => {
                let result = self.result_register(scope)?;
                let source = self.operand(scope)?;
                let (field, _) = self.string("a field name")?;
                InstructionKind::Member {
                    result,
                    source,
                    field,
                }
            }
            "index" => {
                let result = self.result_register(scope)?;
                let source = self.operand(scope)?;
                let index = self.operand(scope)?;
                InstructionKind::Index {
                    result,
                    source,
                    index,
                }
            }
            _ => match crate::ir::BinaryOp::from_keyword(word) {
                Some(op) => {
                    let result = self.result_register(scope)?;
                    let lhs = self.operand(scope)?;
                    let rhs = self.operand(scope)?;
                    InstructionKind::Binary {
                        result,
                        op,
                        lhs,
                        rhs,
                    }
                }
                None => {
                    return Err(self.error_at(
                        ErrorKind::Syntactic,
                        head.span,
                        format!(
                            "unknown instruction `{}`{}",
                            short(word),
                            did_you_mean(word, KEYWORDS_OF_BLOCKS.iter())
                        ),
                    ));
                }
            },
        })
    }

    #[inline(always)]
    fn bind_register(
        &self,
        scope: &FunctionScope<'a>,
        index: u64,
        span: Span,
    ) -> Result<Register, Error> {
        match scope.registers.get(index) {
            Some(ty) => Ok(Register::new(index, ty)),
            None => Err(self.undeclared_register(index, span)),
        }
    }

    /// The error of [`Reader::bind_register`].
    #[cold]
    #[inline(never)]
    fn undeclared_register(&self, index: u64, span: Span) -> Error {
        self.semantic(span, format!("undeclared register r{index}"))
    }

    #[inline(always)]
    fn result_register(&mut self, scope: &FunctionScope<'a>) -> Result<Register, Error> {
        let (index, span) = self.register_number()?;
        self.bind_register(scope, index, span)
    }

    #[inline(always)]
    fn operand(&mut self, scope: &FunctionScope<'a>) -> Result<Operand, Error> {
        if let Some(span) = self.eat_open()? {
            // The writer's short float constant in one step (see
            // `constant_after_open`, which reads every other form).
            if let Some(value) = self.lexer.eat_short_float_form() {
                // The form's `)`, as `close` would have read it.
                self.depth = self.depth.saturating_sub(1);
                let ty = self.scalar_type(ScalarKind::Float);
                return Ok(Operand {
                    value: Value::Constant(crate::ir::Constant {
                        ty,
                        value: Literal::Float(value),
                    }),
                    span: Some(span),
                });
            }
            let value = self.constant_after_open()?;
            return Ok(Operand {
                value,
                span: Some(span),
            });
        }
        if self.peeked.is_none()
            && let Some((index, span)) = self.lexer.eat_register()?
        {
            return Ok(Operand {
                value: Value::Register(self.bind_register(scope, index, span)?),
                span: Some(span),
            });
        }
        self.operand_token(scope)
    }

    /// [`Reader::operand`] of a token not read in place.
    #[inline(never)]
    fn operand_token(&mut self, scope: &FunctionScope<'a>) -> Result<Operand, Error> {
        let t = self.next()?;
        let value = match t.tok {
            Tok::Name(_) => {
                let (index, span) = self.register_from(&t)?;
                Value::Register(self.bind_register(scope, index, span)?)
            }
            Tok::Open => self.constant_after_open()?,
            _ => return Err(self.syntax(&t, "an operand (a register or a constant form)")),
        };
        Ok(Operand {
            value,
            span: Some(t.span),
        })
    }

    /// The rest of a constant form after its `(`.
    fn constant_after_open(&mut self) -> Result<Value, Error> {
        // `float` and `int` heads with a plain number are read in place
        // (the same tokens, checks and errors as below).
        if self.peeked.is_none() {
            if self.lexer.eat_name(b"float")?.is_some() {
                let value = match self.lexer.eat_plain_number()? {
                    Some(t) => self.float_from(&t)?,
                    None => self.float()?,
                };
                return self.constant_end(Literal::Float(value));
            }
            if self.lexer.eat_name(b"int")?.is_some() {
                let what = "an integer literal";
                let value = match self.lexer.eat_plain_number()? {
                    Some(t) => self.signed_integer_from(&t, what)?.0,
                    None => self.signed_integer(what)?.0,
                };
                return self.constant_end(Literal::Int(value));
            }
        }
        let head = self.next()?;
        let literal = match head.tok {
            Tok::Name("bool") => {
                let v = self.next()?;
                match v.tok {
                    Tok::Name("true") => Literal::Bool(true),
                    Tok::Name("false") => Literal::Bool(false),
                    _ => return Err(self.syntax(&v, "`true` or `false`")),
                }
            }
            Tok::Name("int") => Literal::Int(self.signed_integer("an integer literal")?.0),
            Tok::Name("float") => Literal::Float(self.float()?),
            _ => {
                return Err(self.syntax(&head, "a constant form (`bool`, `int` or `float`)"));
            }
        };
        self.constant_end(literal)
    }

    /// The `)` of a constant form and its value.
    #[inline]
    fn constant_end(&mut self, literal: Literal) -> Result<Value, Error> {
        self.close("the constant")?;
        let ty = self.scalar_type(literal.kind());
        Ok(Value::Constant(crate::ir::Constant { ty, value: literal }))
    }

    fn float(&mut self) -> Result<f32, Error> {
        let t = self.next()?;
        self.float_from(&t)
    }

    /// [`Reader::float`] of the token `t` already read.
    #[inline]
    fn float_from(&self, t: &Token<'a>) -> Result<f32, Error> {
        match t.tok {
            Tok::Number(w) => {
                // Rust's decimal-to-f32 conversion rounds once, nearest-even,
                // directly to binary32, independent of any locale; the fast
                // path gives the same bits for short plain decimals.
                let v: f32 = parse_f32(w).ok_or_else(|| {
                    self.error_at(
                        ErrorKind::Lexical,
                        t.span,
                        format!("malformed number `{}`", short(w)),
                    )
                })?;
                if v.is_infinite() {
                    return Err(self.error_at(
                        ErrorKind::Lexical,
                        t.span,
                        format!("floating literal `{}` overflows binary32", short(w)),
                    ));
                }
                Ok(v)
            }
            _ => Err(self.syntax(t, "a decimal number")),
        }
    }

    /// A storage reference. Derived forms nest; they are parsed with an
    /// explicit stack of pending selectors, innermost last.
    fn reference(&mut self, scope: &FunctionScope<'a>) -> Result<Reference, Error> {
        let mut pending: Vec<(bool, Span)> = Vec::new();
        let (storage, slot, root_ty, root_span) = loop {
            let open = self.next()?;
            if !matches!(open.tok, Tok::Open) {
                return Err(self.syntax(&open, "a reference form"));
            }
            let head = self.next()?;
            let word = match head.tok {
                Tok::Name(w) => w,
                _ => return Err(self.syntax(&head, "a reference kind")),
            };
            match word {
                "member_ref" => pending.push((true, open.span)),
                "index_ref" => pending.push((false, open.span)),
                "local" => {
                    let (index, span) = self.register_number()?;
                    let r = self.bind_register(scope, index, span)?;
                    break (StorageKind::Local, index, r.ty, open.span);
                }
                "parameter" => {
                    let (id, span) = self.name("a parameter ID")?;
                    let slot = scope.parameter_ids.get(id).ok_or_else(|| {
                        self.semantic(
                            span,
                            format!(
                                "unknown parameter `{id}`{}",
                                did_you_mean(id, scope.parameter_ids.ids().iter())
                            ),
                        )
                    })?;
                    break (
                        StorageKind::Parameter,
                        slot as u64,
                        scope.parameter_types[slot],
                        open.span,
                    );
                }
                "uniform" => {
                    let (id, span) = self.name("a uniform ID")?;
                    let slot = *self.uniform_ids.get(id).ok_or_else(|| {
                        self.semantic(
                            span,
                            format!(
                                "unknown uniform `{id}`{}",
                                did_you_mean(id, self.uniform_ids.keys())
                            ),
                        )
                    })?;
                    break (
                        StorageKind::Uniform,
                        slot as u64,
                        self.module.uniforms[slot].ty,
                        open.span,
                    );
                }
                "stage" => {
                    let (id, span) = self.name("an interface ID")?;
                    let slot = *self.interface_ids.get(id).ok_or_else(|| {
                        self.semantic(
                            span,
                            format!(
                                "unknown interface variable `{id}`{}",
                                did_you_mean(id, self.interface_ids.keys())
                            ),
                        )
                    })?;
                    let ty = self.module.stage(self.current_stage).interface[slot].ty;
                    break (StorageKind::StageIo, slot as u64, ty, open.span);
                }
                _ => {
                    return Err(self.syntax(
                        &head,
                        "a reference kind (`local`, `parameter`, `uniform`, `stage`, `member_ref` or `index_ref`)",
                    ));
                }
            }
        };
        self.close("the reference")?;
        let mut reference = Reference {
            storage,
            slot,
            root_ty,
            path: Vec::with_capacity(pending.len()),
            span: Some(root_span),
        };
        let mut current = root_ty;
        while let Some((is_member, span)) = pending.pop() {
            let inner = &self.module.types[current].inner;
            let (kind, ty) = if is_member {
                let (field, fspan) = self.string("a field name")?;
                let TypeInner::Record(record) = &self.module.types[current].inner else {
                    return Err(self.semantic(span, "`member_ref` base is not record storage"));
                };
                let found = if record.fields.len() <= FIELD_SCAN_LIMIT {
                    record.field(&field).map(|(_, f)| f.ty)
                } else {
                    // Large records get a name index, so that hostile input
                    // cannot make member lookups quadratic.
                    let index = self.field_index.entry(current).or_insert_with(|| {
                        let mut index = HashMap::new();
                        for f in &record.fields {
                            index.entry(f.name.clone()).or_insert(f.ty);
                        }
                        index
                    });
                    index.get(field.as_str()).copied()
                };
                let ty = match found {
                    Some(ty) => ty,
                    None => {
                        return Err(self.semantic(
                            fspan,
                            format!("record {:?} has no field {field:?}", record.name),
                        ));
                    }
                };
                (SelectorKind::Member(field), ty)
            } else {
                let TypeInner::Array { element, .. } = *inner else {
                    return Err(self.semantic(span, "`index_ref` base is not array storage"));
                };
                let index = self.operand(scope)?;
                (SelectorKind::Index(index), element)
            };
            self.close("the derived reference")?;
            reference.path.push(Selector {
                kind,
                ty,
                span: Some(span),
            });
            current = ty;
        }
        Ok(reference)
    }
}

/// The words that open an instruction or a terminator form.
const KEYWORDS_OF_BLOCKS: [&str; 23] = [
    "copy",
    "load",
    "store",
    "construct",
    "call",
    "texture",
    "swizzle",
    "member",
    "index",
    "add",
    "subtract",
    "multiply",
    "divide",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "branch",
    "branch_if",
    "return",
    "discard",
];

/// `"; did you mean `X`?"` for the closest of `known` (the workspace's one
/// edit-distance rule; candidates sorted so the answer does not depend on a
/// map's order), or an empty string.
fn did_you_mean<'k, K: AsRef<str> + ?Sized + 'k>(
    word: &str,
    known: impl Iterator<Item = &'k K>,
) -> String {
    let mut candidates: Vec<&str> = known.map(AsRef::as_ref).collect();
    candidates.sort_unstable();
    suggest::hint(word, candidates)
}
