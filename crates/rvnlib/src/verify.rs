//! The IR verifier, run by the reader and by the linker.
//!
//! Checks, per function: the value table (sorted, unique ids inside
//! `0..ValueCount`, gaps allowed), every value defined once with the type the
//! table gives it, operands defined before use along the statement tree,
//! arguments carrying exactly one of value/reference, place roots in range and
//! access chains valid for the root's type, `break`/`continue` only inside a
//! loop body, returns matching the return type, and callee keys and struct
//! keys resolvable. A library on its own may name structs and callees of the
//! libraries it was built against; those checks are deferred to the linker,
//! which verifies with [`Resolution::Complete`].

use crate::ir::*;
use crate::library::CompiledLibrary;
use std::collections::HashMap;
use std::fmt;

/// IR verifier failure.
pub const RVN3010: &str = "RVN3010";
/// A library names a type no supplied library declares.
pub const RVN5004: &str = "RVN5004";

/// Most errors reported for one library, so hostile input cannot flood memory.
pub const MAX_ERRORS: usize = 200;

/// One verifier finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// `RVN3010` (IR) or `RVN5004` (unknown struct).
    pub code: &'static str,
    /// Key of the function (or struct) at fault, if any.
    pub item: Option<String>,
    /// Statement path inside the function (`Body.Statements[2].Then.Statements[0]`), or
    /// the part of the declaration (`Values[3]`, `Fields[1]`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        if let Some(item) = &self.item {
            write!(f, " in `{item}`")?;
        }
        if !self.path.is_empty() {
            write!(f, " at {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for VerifyError {}

/// Whether references outside the set being verified are errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// A library on its own: unknown callees and structs may come from a
    /// library it references; their checks wait for the linker.
    Deferred,
    /// A linked module: every callee and struct must be present.
    Complete,
}

/// The structs and functions a verification can see, by key.
pub struct Scope<'a> {
    structs: HashMap<&'a str, &'a LibraryIrStruct>,
    functions: HashMap<&'a str, &'a LibraryIrFunction>,
    resolution: Resolution,
}

impl<'a> Scope<'a> {
    /// A scope over the given structs and functions (the first of a duplicated key wins).
    pub fn new(
        structs: impl IntoIterator<Item = &'a LibraryIrStruct>,
        functions: impl IntoIterator<Item = &'a LibraryIrFunction>,
        resolution: Resolution,
    ) -> Self {
        let mut s = HashMap::new();
        for st in structs {
            s.entry(st.key.as_str()).or_insert(st);
        }
        let mut f = HashMap::new();
        for func in functions {
            f.entry(func.key.as_str()).or_insert(func);
        }
        Scope {
            structs: s,
            functions: f,
            resolution,
        }
    }

    /// Looks a struct up by key.
    pub fn find_struct(&self, key: &str) -> Option<&'a LibraryIrStruct> {
        self.structs.get(key).copied()
    }

    /// Looks a function up by key.
    pub fn find_function(&self, key: &str) -> Option<&'a LibraryIrFunction> {
        self.functions.get(key).copied()
    }
}

/// Verifies one library on its own (cross-library references deferred).
pub fn verify_library(library: &CompiledLibrary) -> Vec<VerifyError> {
    let mut errors = Vec::new();
    let ir = &library.ir;
    check_unique_keys(ir, &mut errors);
    let scope = Scope::new(&ir.structs, &ir.functions, Resolution::Deferred);
    verify_items(&scope, &ir.structs, &ir.functions, &mut errors);
    errors.truncate(MAX_ERRORS);
    errors
}

/// Reports struct or function keys defined twice in one library.
pub fn check_unique_keys(ir: &LibraryIr, errors: &mut Vec<VerifyError>) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, s) in ir.structs.iter().enumerate() {
        if let Some(first) = seen.insert(s.key.as_str(), i) {
            push(
                errors,
                VerifyError {
                    code: RVN3010,
                    item: Some(s.key.clone()),
                    path: format!("Ir.Structs[{i}]"),
                    message: format!("struct key is defined twice (first at Ir.Structs[{first}])"),
                },
            );
        }
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, f) in ir.functions.iter().enumerate() {
        if let Some(first) = seen.insert(f.key.as_str(), i) {
            push(
                errors,
                VerifyError {
                    code: RVN3010,
                    item: Some(f.key.clone()),
                    path: format!("Ir.Functions[{i}]"),
                    message: format!(
                        "function key is defined twice (first at Ir.Functions[{first}])"
                    ),
                },
            );
        }
    }
}

fn push(errors: &mut Vec<VerifyError>, error: VerifyError) {
    if errors.len() < MAX_ERRORS {
        errors.push(error);
    }
}

/// Verifies structs and functions against a scope.
pub fn verify_items<'a>(
    scope: &Scope<'a>,
    structs: impl IntoIterator<Item = &'a LibraryIrStruct>,
    functions: impl IntoIterator<Item = &'a LibraryIrFunction>,
    errors: &mut Vec<VerifyError>,
) {
    for s in structs {
        verify_struct(scope, s, errors);
    }
    for f in functions {
        if errors.len() >= MAX_ERRORS {
            return;
        }
        verify_function(scope, f, errors);
    }
}

/// Verifies one struct's fields.
pub fn verify_struct(scope: &Scope<'_>, s: &LibraryIrStruct, errors: &mut Vec<VerifyError>) {
    if s.key.is_empty() {
        push(
            errors,
            VerifyError {
                code: RVN3010,
                item: Some(s.name.clone()),
                path: String::new(),
                message: "struct has an empty key".into(),
            },
        );
    }
    for (i, field) in s.fields.iter().enumerate() {
        let mut sink = |code, message| {
            push(
                errors,
                VerifyError {
                    code,
                    item: Some(s.key.clone()),
                    path: format!("Fields[{i}]"),
                    message,
                },
            );
        };
        check_type(scope, &field.ty, false, &mut sink);
    }
}

/// Checks that a type reference is well formed; `void_ok` for return types.
fn check_type(
    scope: &Scope<'_>,
    ty: &LibraryIrTypeReference,
    void_ok: bool,
    sink: &mut impl FnMut(&'static str, String),
) {
    match ty.kind {
        IrTypeKind::Void if !void_ok => {
            sink(RVN3010, "`void` is not a storage or value type".into())
        }
        IrTypeKind::Vector if (!ty.component.is_scalar() || !(2..=4).contains(&ty.size)) => {
            sink(
                RVN3010,
                format!(
                    "vector needs a scalar component and 2 to 4 lanes, found {} x {}",
                    ty.component, ty.size
                ),
            );
        }
        IrTypeKind::Matrix
            if (!ty.component.is_float()
                || !(2..=4).contains(&ty.rows)
                || !(2..=4).contains(&ty.columns)) =>
        {
            sink(
                RVN3010,
                format!(
                    "matrix needs a float component and 2 to 4 rows and columns, found {} {}x{}",
                    ty.component, ty.rows, ty.columns
                ),
            );
        }
        IrTypeKind::Array => {
            match &ty.element {
                Some(element) => check_type(scope, element, false, sink),
                None => sink(RVN3010, "array type has no element type".into()),
            }
            if ty.length.is_some_and(|n| n <= 0) {
                sink(
                    RVN3010,
                    format!(
                        "array length must be positive, found {}",
                        ty.length.unwrap_or(0)
                    ),
                );
            }
        }
        IrTypeKind::Struct => match ty.struct_key.as_deref() {
            None | Some("") => sink(RVN3010, "struct type names no struct key".into()),
            Some(key) => {
                if scope.find_struct(key).is_none() && scope.resolution == Resolution::Complete {
                    sink(
                        RVN5004,
                        format!("names struct `{key}`, which no supplied library declares"),
                    );
                }
            }
        },
        IrTypeKind::Texture => {
            if let Some(sampled) = &ty.sampled {
                check_type(scope, sampled, false, sink);
            }
        }
        _ => {}
    }
}

/// One step of a statement path.
#[derive(Clone, Copy)]
enum Step {
    Field(&'static str),
    Index(usize),
}

struct FunctionCheck<'s, 'a> {
    scope: &'s Scope<'a>,
    function: &'a LibraryIrFunction,
    defined: Vec<bool>,
    visible: Vec<bool>,
    /// Table indices made visible, in order, so a region can hide them again.
    region_log: Vec<usize>,
    path: Vec<Step>,
    loop_depth: usize,
    errors: &'s mut Vec<VerifyError>,
    table_ok: bool,
}

/// Verifies one function against a scope.
pub fn verify_function(
    scope: &Scope<'_>,
    function: &LibraryIrFunction,
    errors: &mut Vec<VerifyError>,
) {
    let n = function.values.len();
    let mut check = FunctionCheck {
        scope,
        function,
        defined: vec![false; n],
        visible: vec![false; n],
        region_log: Vec::new(),
        path: Vec::new(),
        loop_depth: 0,
        errors,
        table_ok: true,
    };
    check.signature();
    if !check.table_ok {
        return;
    }
    check.path.push(Step::Field("Body"));
    check.block(&function.body);
}

impl<'s, 'a> FunctionCheck<'s, 'a> {
    fn path_text(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    fn error_code(&mut self, code: &'static str, message: String) {
        let path = self.path_text();
        push(
            self.errors,
            VerifyError {
                code,
                item: Some(self.function.key.clone()),
                path,
                message,
            },
        );
    }

    fn error(&mut self, message: String) {
        self.error_code(RVN3010, message);
    }

    /// `what` names the checked item and is only rendered on error.
    fn check_type_here(
        &mut self,
        ty: &LibraryIrTypeReference,
        void_ok: bool,
        what: impl Fn() -> String,
    ) {
        let mut found = Vec::new();
        check_type(self.scope, ty, void_ok, &mut |code, message| {
            found.push((code, message))
        });
        for (code, message) in found {
            self.error_code(code, format!("{}: {message}", what()));
        }
    }

    fn at(&mut self, field: &'static str, index: Option<usize>) {
        self.path.clear();
        self.path.push(Step::Field(field));
        if let Some(i) = index {
            self.path.push(Step::Index(i));
        }
    }

    fn signature(&mut self) {
        let f = self.function;
        if f.key.is_empty() {
            self.error("function has an empty key".into());
        }
        self.at("ReturnType", None);
        self.check_type_here(&f.return_type, true, || "return type".into());
        for (i, v) in f.parameters.iter().enumerate() {
            self.at("Parameters", Some(i));
            self.check_type_here(&v.ty, false, || format!("parameter `{}`", v.name));
        }
        for (i, v) in f.locals.iter().enumerate() {
            self.at("Locals", Some(i));
            self.check_type_here(&v.ty, false, || format!("local `{}`", v.name));
            if v.by_reference {
                self.error(format!(
                    "local `{}` is marked ByReference; only parameters can be",
                    v.name
                ));
            }
        }
        self.at("ValueCount", None);
        if f.value_count < 0 {
            self.error(format!("ValueCount is negative ({})", f.value_count));
            self.table_ok = false;
        }
        let mut previous: Option<i32> = None;
        for (i, v) in f.values.iter().enumerate() {
            self.at("Values", Some(i));
            if v.id < 0 || v.id >= f.value_count {
                self.error(format!(
                    "value %{} lies outside 0..ValueCount ({})",
                    v.id, f.value_count
                ));
                self.table_ok = false;
            }
            if let Some(p) = previous.filter(|&p| p >= v.id) {
                self.error(format!(
                    "value table is not sorted by unique id (%{} after %{p})",
                    v.id
                ));
                self.table_ok = false;
            }
            previous = Some(v.id);
            self.check_type_here(&v.ty, false, || format!("value %{}", v.id));
        }
        self.path.clear();
    }

    fn slot(&self, id: i32) -> Option<usize> {
        self.function
            .values
            .binary_search_by_key(&id, |v| v.id)
            .ok()
    }

    /// An operand: must be in the table and visible here.
    fn use_value(&mut self, id: i32, what: &str) -> Option<&'a LibraryIrTypeReference> {
        let Some(slot) = self.slot(id) else {
            self.error(format!("{what} %{id} is not in the values table"));
            return None;
        };
        if !self.visible[slot] {
            if self.defined[slot] {
                self.error(format!(
                    "{what} %{id} is used outside the region that defines it"
                ));
            } else {
                self.error(format!("{what} %{id} is used before it is defined"));
            }
        }
        Some(&self.function.values[slot].ty)
    }

    /// A result: must be in the table and not yet defined.
    fn define(&mut self, id: i32) -> Option<&'a LibraryIrTypeReference> {
        let Some(slot) = self.slot(id) else {
            self.error(format!("result %{id} is not in the values table"));
            return None;
        };
        if self.defined[slot] {
            self.error(format!("value %{id} is defined more than once"));
        } else {
            self.defined[slot] = true;
            self.visible[slot] = true;
            self.region_log.push(slot);
        }
        Some(&self.function.values[slot].ty)
    }

    fn open_region(&self) -> usize {
        self.region_log.len()
    }

    fn close_region(&mut self, mark: usize) {
        for slot in self.region_log.drain(mark..) {
            self.visible[slot] = false;
        }
    }

    fn expect_same(
        &mut self,
        what: &str,
        expected: Option<&LibraryIrTypeReference>,
        found: Option<&LibraryIrTypeReference>,
    ) {
        self.expect_same_with(|| what.to_string(), expected, found);
    }

    /// `what` is only rendered on error.
    fn expect_same_with(
        &mut self,
        what: impl Fn() -> String,
        expected: Option<&LibraryIrTypeReference>,
        found: Option<&LibraryIrTypeReference>,
    ) {
        if let (Some(e), Some(f)) = (expected, found)
            && !e.same_type(f)
        {
            self.error(format!(
                "{}: {} does not match {}",
                what(),
                f.display(),
                e.display()
            ));
        }
    }

    fn block(&mut self, block: &'a LibraryIrBlock) {
        self.path.push(Step::Field("Statements"));
        for (i, statement) in block.statements.iter().enumerate() {
            if self.errors.len() >= MAX_ERRORS {
                break;
            }
            self.path.push(Step::Index(i));
            self.statement(statement);
            self.path.pop();
        }
        self.path.pop();
    }

    fn sub_block(&mut self, name: &'static str, block: &'a LibraryIrBlock) {
        self.path.push(Step::Field(name));
        self.block(block);
        self.path.pop();
    }

    fn is_bool_scalar(ty: Option<&LibraryIrTypeReference>) -> bool {
        ty.is_none_or(|t| t.kind == IrTypeKind::Bool)
    }

    fn statement(&mut self, statement: &'a LibraryIrStatement) {
        match statement {
            LibraryIrStatement::Block(block) => self.block(block),
            LibraryIrStatement::Constant { result, value } => {
                let ty = self.define(*result);
                if let Some(value) = value {
                    match value.scalar_kind() {
                        None => {
                            self.error(format!("const: unknown constant kind `{}`", value.kind))
                        }
                        Some(kind) => {
                            if let Some(ty) = ty
                                && ty.kind != kind
                            {
                                self.error(format!(
                                    "const: a constant of kind `{}` cannot define a {} value",
                                    value.kind,
                                    ty.display()
                                ));
                            }
                            if !value.text_parses() {
                                self.error(format!(
                                    "const: `{}` is not a valid {} constant",
                                    value.text, value.kind
                                ));
                            }
                        }
                    }
                }
            }
            LibraryIrStatement::Load { result, place } => {
                let place_ty = self.place(place, false);
                let ty = self.define(*result);
                self.expect_same("load", place_ty.as_ref(), ty);
            }
            LibraryIrStatement::Store { place, value } => {
                let value_ty = self.use_value(*value, "stored value");
                let place_ty = self.place(place, true);
                self.expect_same("store", place_ty.as_ref(), value_ty);
            }
            LibraryIrStatement::Unary {
                result,
                op,
                operand,
            } => {
                let operand_ty = self.use_value(*operand, "operand");
                let ty = self.define(*result);
                self.expect_same("unary", operand_ty, ty);
                if let Some(scalar) =
                    operand_ty.and_then(|t| t.scalar_kind().or(Some(IrTypeKind::Void)))
                {
                    let ok = match op {
                        IrUnaryOp::Negate => scalar.is_integer() || scalar.is_float(),
                        IrUnaryOp::Not => scalar == IrTypeKind::Bool,
                        IrUnaryOp::BitwiseNot => scalar.is_integer(),
                    };
                    if !ok {
                        self.error(format!(
                            "unary {op}: operand type {} is not allowed",
                            operand_ty.map(|t| t.display()).unwrap_or_default()
                        ));
                    }
                }
            }
            LibraryIrStatement::Binary {
                result,
                op,
                left,
                right,
            } => {
                let l = self.use_value(*left, "left operand");
                let r = self.use_value(*right, "right operand");
                let ty = self.define(*result);
                if let (Some(l), Some(r), Some(ty)) = (l, r, ty)
                    && let Err(message) = binary_rule(*op, l, r, ty)
                {
                    self.error(format!("binary {op}: {message}"));
                }
            }
            LibraryIrStatement::Convert {
                result,
                conversion_kind,
                operand,
            } => {
                let operand_ty = self.use_value(*operand, "operand");
                let ty = self.define(*result);
                if let (Some(o), Some(t)) = (operand_ty, ty) {
                    let ok = match conversion_kind {
                        IrConversionKind::Numeric => {
                            o.kind.is_scalar() && t.kind.is_scalar()
                                || o.kind == t.kind
                                    && matches!(o.kind, IrTypeKind::Vector | IrTypeKind::Matrix)
                                    && o.size == t.size
                                    && o.rows == t.rows
                                    && o.columns == t.columns
                        }
                        IrConversionKind::Splat => {
                            o.kind.is_scalar()
                                && matches!(t.kind, IrTypeKind::Vector | IrTypeKind::Matrix)
                        }
                    };
                    if !ok {
                        self.error(format!(
                            "convert {conversion_kind}: cannot convert {} to {}",
                            o.display(),
                            t.display()
                        ));
                    }
                }
            }
            LibraryIrStatement::Intrinsic {
                result,
                intrinsic,
                arguments,
            } => {
                for &argument in arguments {
                    self.use_value(argument, "argument");
                }
                let (min, max) = intrinsic.arity();
                if arguments.len() < min || arguments.len() > max {
                    self.error(format!(
                        "intrinsic {intrinsic}: takes {} argument(s), found {}",
                        if min == max {
                            min.to_string()
                        } else {
                            format!("{min} to {max}")
                        },
                        arguments.len()
                    ));
                }
                match result {
                    Some(r) => {
                        if intrinsic.is_void() && *intrinsic != IrIntrinsic::TraceRayQuery {
                            self.error(format!(
                                "intrinsic {intrinsic}: produces no value but has a Result"
                            ));
                        }
                        self.define(*r);
                    }
                    None => {
                        if !intrinsic.is_void() {
                            self.error(format!(
                                "intrinsic {intrinsic}: produces a value but has no Result"
                            ));
                        }
                    }
                }
            }
            LibraryIrStatement::Call {
                result,
                function,
                arguments,
            } => self.call(*result, function, arguments),
            LibraryIrStatement::Construct { result, arguments } => {
                let argument_types: Vec<Option<&LibraryIrTypeReference>> = arguments
                    .iter()
                    .map(|&a| self.use_value(a, "argument"))
                    .collect();
                let ty = self.define(*result);
                if let Some(ty) = ty
                    && argument_types.iter().all(Option::is_some)
                {
                    let argument_types: Vec<&LibraryIrTypeReference> =
                        argument_types.into_iter().flatten().collect();
                    if let Err(message) = self.construct_rule(ty, &argument_types) {
                        self.error(format!("construct {}: {message}", ty.display()));
                    }
                }
            }
            LibraryIrStatement::Extract {
                result,
                source,
                chain,
            } => {
                let source_ty = self.use_value(*source, "source").cloned();
                let extracted = match source_ty {
                    Some(t) => self.chain(t, chain, false),
                    None => None,
                };
                let ty = self.define(*result);
                self.expect_same("extract", extracted.as_ref(), ty);
            }
            LibraryIrStatement::Select {
                result,
                condition,
                when_true,
                when_false,
            } => {
                let c = self.use_value(*condition, "condition");
                let t = self.use_value(*when_true, "true value");
                let f = self.use_value(*when_false, "false value");
                let ty = self.define(*result);
                if let Some(c) = c
                    && (c.scalar_kind() != Some(IrTypeKind::Bool) || c.kind == IrTypeKind::Matrix)
                {
                    self.error(format!("select: condition is {}, not bool", c.display()));
                }
                self.expect_same("select", ty, t);
                self.expect_same("select", ty, f);
            }
            LibraryIrStatement::If {
                condition,
                then,
                otherwise,
            } => {
                let c = self.use_value(*condition, "condition");
                if !Self::is_bool_scalar(c) {
                    self.error(format!(
                        "if: condition is {}, not bool",
                        c.map(|t| t.display()).unwrap_or_default()
                    ));
                }
                let mark = self.open_region();
                self.sub_block("Then", then);
                self.close_region(mark);
                if let Some(otherwise) = otherwise {
                    self.sub_block("Else", otherwise);
                    self.close_region(mark);
                }
            }
            LibraryIrStatement::Loop {
                condition,
                condition_value,
                body,
                continuing,
                test_before_body,
            } => {
                let mark = self.open_region();
                if *test_before_body {
                    // condition, then body and continue, which see the condition's values
                    self.loop_condition(condition, *condition_value);
                    let after_condition = self.open_region();
                    self.loop_body(body);
                    self.close_region(after_condition);
                    self.loop_continue(continuing.as_ref());
                    self.close_region(after_condition);
                } else {
                    // repeat … while: body and continue run before the first test
                    self.loop_body(body);
                    self.close_region(mark);
                    self.loop_continue(continuing.as_ref());
                    self.close_region(mark);
                    self.loop_condition(condition, *condition_value);
                }
                self.close_region(mark);
            }
            LibraryIrStatement::Return { value } => {
                let expected = &self.function.return_type;
                match value {
                    Some(v) => {
                        let ty = self.use_value(*v, "returned value");
                        if expected.is_void() {
                            self.error("return: a void function returns a value".into());
                        } else {
                            self.expect_same("return", Some(expected), ty);
                        }
                    }
                    None => {
                        if !expected.is_void() {
                            self.error(format!("return: missing a {} value", expected.display()));
                        }
                    }
                }
            }
            LibraryIrStatement::Break => {
                if self.loop_depth == 0 {
                    self.error("break outside a loop body".into());
                }
            }
            LibraryIrStatement::Continue => {
                if self.loop_depth == 0 {
                    self.error("continue outside a loop body".into());
                }
            }
            LibraryIrStatement::Discard => {}
        }
    }

    fn loop_body(&mut self, body: &'a LibraryIrBlock) {
        let outer = self.loop_depth;
        self.loop_depth = outer + 1;
        self.sub_block("Body", body);
        self.loop_depth = outer;
    }

    /// `break`/`continue` are not allowed in a continue block (it is not the loop body).
    fn loop_continue(&mut self, continuing: Option<&'a LibraryIrBlock>) {
        if let Some(continuing) = continuing {
            let outer = self.loop_depth;
            self.loop_depth = 0;
            self.sub_block("Continue", continuing);
            self.loop_depth = outer;
        }
    }

    fn loop_condition(&mut self, condition: &'a LibraryIrBlock, condition_value: i32) {
        let depth = self.loop_depth;
        self.loop_depth = 0;
        self.sub_block("Condition", condition);
        self.loop_depth = depth;
        let c = self.use_value(condition_value, "loop condition");
        if !Self::is_bool_scalar(c) {
            self.error(format!(
                "loop: condition is {}, not bool",
                c.map(|t| t.display()).unwrap_or_default()
            ));
        }
    }

    fn call(&mut self, result: Option<i32>, key: &str, arguments: &'a [LibraryIrArgument]) {
        let callee = self.scope.find_function(key);
        if callee.is_none() && self.scope.resolution == Resolution::Complete {
            self.error(format!("call: no function has the key `{key}`"));
        }
        if let Some(callee) = callee
            && callee.parameters.len() != arguments.len()
        {
            self.error(format!(
                "call `{key}`: takes {} argument(s), found {}",
                callee.parameters.len(),
                arguments.len()
            ));
        }
        for (i, argument) in arguments.iter().enumerate() {
            let parameter = callee.and_then(|c| c.parameters.get(i));
            match (argument.value, argument.reference) {
                (Some(_), Some(_)) => self.error(format!(
                    "call `{key}`: argument {i} carries both a value and a reference"
                )),
                (None, None) => self.error(format!(
                    "call `{key}`: argument {i} carries neither a value nor a reference"
                )),
                (Some(v), None) => {
                    let ty = self.use_value(v, "argument");
                    if let Some(p) = parameter {
                        if p.by_reference {
                            self.error(format!("call `{key}`: argument {i} is passed by value to inout parameter `{}`", p.name));
                        }
                        self.expect_same_with(
                            || format!("call `{key}` argument {i}"),
                            Some(&p.ty),
                            ty,
                        );
                    }
                }
                (None, Some(root)) => {
                    let root_ty = match self.function.root(root) {
                        Some(v) => Some(&v.ty),
                        None => {
                            self.error(format!(
                                "call `{key}`: argument {i} references root {root}, outside the {} parameters and locals",
                                self.function.root_count()
                            ));
                            None
                        }
                    };
                    if let Some(p) = parameter {
                        if !p.by_reference {
                            self.error(format!("call `{key}`: argument {i} is passed by reference to by-value parameter `{}`", p.name));
                        }
                        self.expect_same_with(
                            || format!("call `{key}` argument {i}"),
                            Some(&p.ty),
                            root_ty,
                        );
                    }
                }
            }
        }
        if let Some(r) = result {
            let ty = self.define(r);
            if let Some(callee) = callee {
                if callee.return_type.is_void() {
                    self.error(format!(
                        "call `{key}`: the callee returns void but the call has a Result"
                    ));
                } else {
                    self.expect_same_with(
                        || format!("call `{key}` result"),
                        Some(&callee.return_type),
                        ty,
                    );
                }
            }
        }
    }

    /// The type of a place, or `None` when it cannot be known (an error was
    /// reported, or a struct's layout is deferred to the linker).
    fn place(
        &mut self,
        place: &'a LibraryIrPlace,
        for_store: bool,
    ) -> Option<LibraryIrTypeReference> {
        let Some(root) = self.function.root(place.root) else {
            self.error(format!(
                "place root {} is outside the {} parameters and locals",
                place.root,
                self.function.root_count()
            ));
            return None;
        };
        self.chain(root.ty.clone(), &place.chain, for_store)
    }

    fn chain(
        &mut self,
        mut current: LibraryIrTypeReference,
        chain: &'a [LibraryIrAccess],
        for_store: bool,
    ) -> Option<LibraryIrTypeReference> {
        for (step, access) in chain.iter().enumerate() {
            current = match access {
                LibraryIrAccess::Field { index } => {
                    if current.kind != IrTypeKind::Struct {
                        self.error(format!(
                            "access {step}: field access into {}, not a struct",
                            current.display()
                        ));
                        return None;
                    }
                    let key = current.struct_key.as_deref().unwrap_or("");
                    let s = self.scope.find_struct(key)?;
                    match usize::try_from(*index).ok().and_then(|i| s.fields.get(i)) {
                        Some(field) => field.ty.clone(),
                        None => {
                            self.error(format!(
                                "access {step}: field {index} of `{key}`, which has {} field(s)",
                                s.fields.len()
                            ));
                            return None;
                        }
                    }
                }
                LibraryIrAccess::Index { index } => {
                    if let Some(t) = self.use_value(*index, "index")
                        && !t.kind.is_integer()
                    {
                        self.error(format!(
                            "access {step}: index %{index} is {}, not an integer",
                            t.display()
                        ));
                    }
                    match current.kind {
                        IrTypeKind::Array => match &current.element {
                            Some(element) => (**element).clone(),
                            None => return None,
                        },
                        IrTypeKind::Vector => LibraryIrTypeReference::scalar(current.component),
                        IrTypeKind::Matrix => {
                            LibraryIrTypeReference::vector(current.component, current.rows)
                        }
                        _ => {
                            self.error(format!(
                                "access {step}: cannot index {}",
                                current.display()
                            ));
                            return None;
                        }
                    }
                }
                LibraryIrAccess::Swizzle { components } => {
                    if current.kind != IrTypeKind::Vector {
                        self.error(format!(
                            "access {step}: swizzle of {}, not a vector",
                            current.display()
                        ));
                        return None;
                    }
                    if components.is_empty() || components.len() > 4 {
                        self.error(format!(
                            "access {step}: swizzle selects {} lanes; 1 to 4 allowed",
                            components.len()
                        ));
                        return None;
                    }
                    if let Some(bad) = components.iter().find(|&&c| c < 0 || c >= current.size) {
                        self.error(format!(
                            "access {step}: lane {bad} of a {}-lane vector",
                            current.size
                        ));
                        return None;
                    }
                    if for_store {
                        let mut seen = [false; 4];
                        for &c in components {
                            let c = c as usize;
                            if seen[c] {
                                self.error(format!(
                                    "access {step}: a stored swizzle names lane {c} twice"
                                ));
                                return None;
                            }
                            seen[c] = true;
                        }
                    }
                    if components.len() == 1 {
                        LibraryIrTypeReference::scalar(current.component)
                    } else {
                        LibraryIrTypeReference::vector(current.component, components.len() as i32)
                    }
                }
            };
        }
        Some(current)
    }

    fn construct_rule(
        &self,
        ty: &LibraryIrTypeReference,
        arguments: &[&LibraryIrTypeReference],
    ) -> Result<(), String> {
        match ty.kind {
            IrTypeKind::Vector => {
                let mut lanes = 0;
                for a in arguments {
                    match a.kind {
                        k if k.is_scalar() && k == ty.component => lanes += 1,
                        IrTypeKind::Vector if a.component == ty.component => lanes += a.size,
                        _ => return Err(format!("component {} does not fit", a.display())),
                    }
                }
                if lanes != ty.size {
                    return Err(format!(
                        "arguments supply {lanes} lane(s), the vector has {}",
                        ty.size
                    ));
                }
                Ok(())
            }
            IrTypeKind::Matrix => {
                let column = LibraryIrTypeReference::vector(ty.component, ty.rows);
                let scalar = LibraryIrTypeReference::scalar(ty.component);
                let by_columns = arguments.len() == ty.columns as usize
                    && arguments.iter().all(|a| a.same_type(&column));
                let by_scalars = arguments.len() == (ty.rows * ty.columns) as usize
                    && arguments.iter().all(|a| a.same_type(&scalar));
                if by_columns || by_scalars {
                    Ok(())
                } else {
                    Err(format!(
                        "expects {} column(s) of {} or {} scalars",
                        ty.columns,
                        column.display(),
                        ty.rows * ty.columns
                    ))
                }
            }
            IrTypeKind::Array => {
                let element = ty.element.as_deref().ok_or("array has no element type")?;
                if let Some(length) = ty.length
                    && arguments.len() != length as usize
                {
                    return Err(format!(
                        "{} element(s) for length {length}",
                        arguments.len()
                    ));
                }
                match arguments.iter().find(|a| !a.same_type(element)) {
                    Some(bad) => Err(format!(
                        "element {} is not {}",
                        bad.display(),
                        element.display()
                    )),
                    None => Ok(()),
                }
            }
            IrTypeKind::Struct => {
                let key = ty.struct_key.as_deref().unwrap_or("");
                let Some(s) = self.scope.find_struct(key) else {
                    return Ok(()); // layout deferred to the linker (or reported as RVN5004)
                };
                if s.fields.len() != arguments.len() {
                    return Err(format!(
                        "{} argument(s) for {} field(s)",
                        arguments.len(),
                        s.fields.len()
                    ));
                }
                for (field, argument) in s.fields.iter().zip(arguments) {
                    if !field.ty.same_type(argument) {
                        return Err(format!(
                            "field `{}`: {} does not match {}",
                            field.name,
                            argument.display(),
                            field.ty.display()
                        ));
                    }
                }
                Ok(())
            }
            _ => Err("only vectors, matrices, arrays and structs can be constructed".into()),
        }
    }
}

/// Type rule of a binary operator. Arithmetic accepts equal operand types or
/// one scalar operand matching the other's lanes (documented in
/// `docs/rvnlib/decisions.md`).
fn binary_rule(
    op: IrBinaryOp,
    l: &LibraryIrTypeReference,
    r: &LibraryIrTypeReference,
    ty: &LibraryIrTypeReference,
) -> Result<(), String> {
    use IrBinaryOp::*;
    let mismatch = || format!("{} and {} give {}", l.display(), r.display(), ty.display());
    let ls = l.scalar_kind().ok_or_else(mismatch)?;
    let rs = r.scalar_kind().ok_or_else(mismatch)?;
    match op {
        Add | Subtract | Multiply | Divide | Modulo => {
            if ls != rs || !(ls.is_integer() || ls.is_float()) {
                return Err(mismatch());
            }
            let shape_ok = if l.same_type(r) {
                ty.same_type(l)
            } else if l.kind.is_scalar() {
                ty.same_type(r)
            } else if r.kind.is_scalar() {
                ty.same_type(l)
            } else {
                false
            };
            if shape_ok { Ok(()) } else { Err(mismatch()) }
        }
        MatrixMultiply => {
            let ok = ls == rs
                && ls.is_float()
                && match (l.kind, r.kind) {
                    (IrTypeKind::Matrix, IrTypeKind::Matrix) => {
                        l.columns == r.rows
                            && ty.same_type(&LibraryIrTypeReference::matrix(ls, l.rows, r.columns))
                    }
                    (IrTypeKind::Matrix, IrTypeKind::Vector) => {
                        l.columns == r.size
                            && ty.same_type(&LibraryIrTypeReference::vector(ls, l.rows))
                    }
                    (IrTypeKind::Vector, IrTypeKind::Matrix) => {
                        l.size == r.rows
                            && ty.same_type(&LibraryIrTypeReference::vector(ls, r.columns))
                    }
                    _ => false,
                };
            if ok { Ok(()) } else { Err(mismatch()) }
        }
        ShiftLeft | ShiftRight | UnsignedShiftRight | BitwiseAnd | BitwiseOr | BitwiseXor => {
            let bitwise_bool = matches!(op, BitwiseAnd | BitwiseOr | BitwiseXor)
                && ls == IrTypeKind::Bool
                && rs == IrTypeKind::Bool;
            if !(ls.is_integer() && rs.is_integer() || bitwise_bool) {
                return Err(mismatch());
            }
            let shape_ok = (l.same_type(r) || r.kind.is_scalar() || l.kind.is_scalar())
                && (ty.same_type(l) || ty.same_type(r) && l.kind.is_scalar());
            if shape_ok { Ok(()) } else { Err(mismatch()) }
        }
        LogicalAnd | LogicalOr => {
            if ls == IrTypeKind::Bool && l.same_type(r) && ty.same_type(l) {
                Ok(())
            } else {
                Err(mismatch())
            }
        }
        Equal | NotEqual | LessThan | LessThanOrEqual | GreaterThan | GreaterThanOrEqual => {
            if !l.same_type(r) {
                return Err(mismatch());
            }
            let ok = ty.kind == IrTypeKind::Bool
                || l.kind == IrTypeKind::Vector
                    && ty.same_type(&LibraryIrTypeReference::vector(IrTypeKind::Bool, l.size));
            if ok { Ok(()) } else { Err(mismatch()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types::*};

    fn check(f: LibraryIrFunction) -> Vec<String> {
        check_with(f, Vec::new())
    }

    fn check_with(f: LibraryIrFunction, structs: Vec<LibraryIrStruct>) -> Vec<String> {
        let mut lib = CompiledLibrary::new("T");
        lib.ir.functions.push(f);
        lib.ir.structs = structs;
        verify_library(&lib)
            .iter()
            .map(|e| format!("{}: {}", e.path, e.message))
            .collect()
    }

    fn one(errors: Vec<String>, expected: &str) {
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].contains(expected), "{errors:#?}");
    }

    #[test]
    fn values_defined_in_a_branch_are_not_visible_after_it() {
        let mut f = FunctionBuilder::new("k", "k", f32());
        let c = f.constant(bool(), None);
        let mut inner = 0;
        f.if_then(c, |b| inner = b.constant(f32(), None));
        f.ret(Some(inner));
        one(check(f.finish()), "used outside the region that defines it");
    }

    #[test]
    fn values_of_a_nested_block_stay_visible() {
        let mut f = FunctionBuilder::new("k", "k", f32());
        let mut inner = 0;
        f.block(|b| inner = b.constant(f32(), None));
        f.ret(Some(inner));
        assert_eq!(check(f.finish()), Vec::<String>::new());
    }

    #[test]
    fn loop_condition_value_must_be_bool_and_break_stays_in_the_body() {
        let mut f = FunctionBuilder::new("k", "k", void());
        f.loop_(
            true,
            |b| b.constant(f32(), None),
            |b| b.brk(),
            Some(&|b: &mut FunctionBuilder| b.brk()),
        );
        let errors = check(f.finish());
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].contains("loop: condition is f32"));
        assert!(
            errors[1].starts_with(
                "Body.Statements[0].Continue.Statements[0]: break outside a loop body"
            )
        );
    }

    #[test]
    fn loop_regions_follow_execution_order() {
        // test-first: body sees the condition's values; continue does not see the body's.
        let mut f = FunctionBuilder::new("k", "k", void());
        f.loop_(
            true,
            |b| {
                b.constant(f32(), None); // %0
                b.constant(bool(), None)
            },
            |b| {
                b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![0]);
            },
            None,
        );
        f.ret(None);
        assert_eq!(check(f.finish()), Vec::<String>::new());
        let mut f = FunctionBuilder::new("k", "k", void());
        f.loop_(
            true,
            |b| b.constant(bool(), None), // %0
            |b| {
                b.constant(f32(), None); // %1
            },
            Some(&|b: &mut FunctionBuilder| {
                b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![1]);
            }),
        );
        one(
            check(f.finish()),
            "Continue.Statements[0]: argument %1 is used outside the region",
        );
        // repeat … while: the body cannot see the condition's values.
        let mut f = FunctionBuilder::new("k", "k", void());
        f.loop_(
            false,
            |b| b.constant(bool(), None),
            |b| {
                b.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![0]);
            },
            None,
        );
        one(
            check(f.finish()),
            "argument %0 is used before it is defined",
        );
    }

    #[test]
    fn unsorted_or_duplicate_value_table_is_refused() {
        let mut f = FunctionBuilder::new("k", "k", void()).finish();
        f.values = vec![
            LibraryIrValue { id: 1, ty: f32() },
            LibraryIrValue { id: 1, ty: f32() },
        ];
        f.value_count = 2;
        one(check(f), "not sorted by unique id");
    }

    #[test]
    fn results_must_be_in_the_table_and_match_its_type() {
        let mut f = FunctionBuilder::new("k", "k", void());
        let x = f.local("x", f32());
        let v = f.constant(i32(), Some(LibraryValue::int(2)));
        f.store(x, vec![], v);
        f.push(LibraryIrStatement::Constant {
            result: 40,
            value: None,
        });
        let errors = check(f.finish());
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].contains("store: i32 does not match f32"));
        assert!(errors[1].contains("result %40 is not in the values table"));
    }

    #[test]
    fn constants_must_parse_for_their_kind() {
        let mut f = FunctionBuilder::new("k", "k", void());
        f.constant(
            f32(),
            Some(LibraryValue {
                kind: "float".into(),
                text: "1,5".into(),
            }),
        );
        f.constant(
            f32(),
            Some(LibraryValue {
                kind: "int".into(),
                text: "1".into(),
            }),
        );
        f.constant(
            f32(),
            Some(LibraryValue {
                kind: "decimal".into(),
                text: "1".into(),
            }),
        );
        let errors = check(f.finish());
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(errors[0].contains("`1,5` is not a valid float constant"));
        assert!(errors[1].contains("a constant of kind `int` cannot define a f32 value"));
        assert!(errors[2].contains("unknown constant kind `decimal`"));
    }

    #[test]
    fn access_chains_follow_the_root_type() {
        let s = LibraryIrStruct {
            key: "T::S".into(),
            name: "S".into(),
            fields: vec![LibraryIrField {
                name: "v".into(),
                ty: vec(3),
            }],
        };
        let mut f = FunctionBuilder::new("k", "k", void());
        let p = f.param("p", LibraryIrTypeReference::structure("T::S"));
        let i = f.constant(f32(), None);
        f.load(
            f32(),
            p,
            vec![
                LibraryIrAccess::Field { index: 0 },
                LibraryIrAccess::Swizzle {
                    components: vec![1],
                },
            ],
        );
        f.load(f32(), p, vec![LibraryIrAccess::Field { index: 1 }]);
        f.load(
            f32(),
            p,
            vec![LibraryIrAccess::Swizzle {
                components: vec![0],
            }],
        );
        f.load(
            f32(),
            p,
            vec![
                LibraryIrAccess::Field { index: 0 },
                LibraryIrAccess::Index { index: i },
            ],
        );
        let two = f.construct(vec(2), vec![i, i]);
        f.store(
            p,
            vec![
                LibraryIrAccess::Field { index: 0 },
                LibraryIrAccess::Swizzle {
                    components: vec![1, 1],
                },
            ],
            two,
        );
        let errors = check_with(f.finish(), vec![s]);
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert!(errors[0].contains("field 1 of `T::S`, which has 1 field(s)"));
        assert!(errors[1].contains("swizzle of T::S, not a vector"));
        assert!(errors[2].contains("index %0 is f32, not an integer"));
        assert!(errors[3].contains("names lane 1 twice"));
    }

    #[test]
    fn calls_check_arguments_against_the_callee() {
        let mut callee = FunctionBuilder::new("callee", "callee", f32());
        callee.param_inout("acc", f32());
        let zero = callee.constant(f32(), None);
        callee.ret(Some(zero));
        let mut f = FunctionBuilder::new("k", "k", void());
        let local = f.local("l", i32());
        let v = f.constant(f32(), None);
        f.call("callee", Some(f32()), vec![LibraryIrArgument::by_value(v)]);
        f.call(
            "callee",
            Some(i32()),
            vec![LibraryIrArgument::by_reference(local)],
        );
        f.call(
            "callee",
            None,
            vec![LibraryIrArgument {
                value: None,
                reference: None,
            }],
        );
        f.call("elsewhere", None, vec![LibraryIrArgument::by_reference(9)]);
        let mut lib = CompiledLibrary::new("T");
        lib.ir.functions = vec![callee.finish(), f.finish()];
        let errors: Vec<String> = verify_library(&lib)
            .iter()
            .map(|e| e.message.clone())
            .collect();
        assert_eq!(
            errors,
            vec![
                "call `callee`: argument 0 is passed by value to inout parameter `acc`",
                "call `callee` argument 0: i32 does not match f32",
                "call `callee` result: i32 does not match f32",
                "call `callee`: argument 0 carries neither a value nor a reference",
                "call `elsewhere`: argument 0 references root 9, outside the 1 parameters and locals",
            ]
        );
        // An unknown callee is deferred for a library, an error when complete.
        let scope = Scope::new(&lib.ir.structs, &lib.ir.functions, Resolution::Complete);
        let mut found = Vec::new();
        verify_function(&scope, &lib.ir.functions[1], &mut found);
        assert!(
            found
                .iter()
                .any(|e| e.message == "call: no function has the key `elsewhere`")
        );
    }

    #[test]
    fn returns_match_the_return_type() {
        let mut f = FunctionBuilder::new("k", "k", f32());
        f.ret(None);
        one(check(f.finish()), "return: missing a f32 value");
        let mut f = FunctionBuilder::new("k", "k", void());
        let v = f.constant(f32(), None);
        f.ret(Some(v));
        one(check(f.finish()), "a void function returns a value");
    }

    #[test]
    fn operator_and_construct_rules() {
        let mut f = FunctionBuilder::new("k", "k", void());
        let a = f.constant(f32(), None);
        let b = f.constant(i32(), None);
        let m = f.constant(mat(4, 3), None);
        let v3 = f.constant(vec(3), None);
        f.binary(IrBinaryOp::Add, f32(), a, b);
        f.binary(IrBinaryOp::MatrixMultiply, vec(4), m, v3);
        f.binary(IrBinaryOp::MatrixMultiply, vec(3), m, v3);
        f.unary(IrUnaryOp::Not, f32(), a);
        f.construct(vec(4), vec![v3, a]);
        f.construct(vec(4), vec![v3]);
        f.intrinsic(IrIntrinsic::Dot, Some(f32()), vec![v3]);
        f.intrinsic(IrIntrinsic::ControlBarrier, Some(f32()), vec![]);
        let errors = check(f.finish());
        assert_eq!(errors.len(), 6, "{errors:#?}");
        assert!(errors[0].contains("binary Add: f32 and i32 give f32"));
        assert!(
            errors[1]
                .contains("binary MatrixMultiply: mat<f32,4,3> and vec<f32,3> give vec<f32,3>")
        );
        assert!(errors[2].contains("unary Not: operand type f32 is not allowed"));
        assert!(errors[3].contains("arguments supply 3 lane(s), the vector has 4"));
        assert!(errors[4].contains("intrinsic Dot: takes 2 argument(s), found 1"));
        assert!(errors[5].contains("ControlBarrier: produces no value but has a Result"));
    }

    #[test]
    fn duplicate_keys_in_one_library_are_refused() {
        let f = FunctionBuilder::new("k", "k", void()).finish();
        let mut lib = CompiledLibrary::new("T");
        lib.ir.functions = vec![f.clone(), f];
        let errors = verify_library(&lib);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.contains("function key is defined twice"));
    }
}
