//! A builder for library functions: numbers values, records their types in
//! the value table and nests blocks, so tests and examples write bodies the
//! way a lowerer would emit them.

use crate::ir::*;

/// Builds one [`LibraryIrFunction`].
pub struct FunctionBuilder {
    key: String,
    name: String,
    return_type: LibraryIrTypeReference,
    parameters: Vec<LibraryIrVariable>,
    locals: Vec<LibraryIrVariable>,
    values: Vec<LibraryIrValue>,
    next_value: i32,
    blocks: Vec<Vec<LibraryIrStatement>>,
}

impl FunctionBuilder {
    /// Starts a function.
    pub fn new(
        key: impl Into<String>,
        name: impl Into<String>,
        return_type: LibraryIrTypeReference,
    ) -> Self {
        FunctionBuilder {
            key: key.into(),
            name: name.into(),
            return_type,
            parameters: Vec::new(),
            locals: Vec::new(),
            values: Vec::new(),
            next_value: 0,
            blocks: vec![Vec::new()],
        }
    }

    /// Adds a by-value parameter; returns its root index. Add parameters before locals.
    pub fn param(&mut self, name: &str, ty: LibraryIrTypeReference) -> i32 {
        self.parameters.push(LibraryIrVariable {
            name: name.into(),
            ty,
            by_reference: false,
        });
        (self.parameters.len() - 1) as i32
    }

    /// Adds an `inout` parameter; returns its root index.
    pub fn param_inout(&mut self, name: &str, ty: LibraryIrTypeReference) -> i32 {
        self.parameters.push(LibraryIrVariable {
            name: name.into(),
            ty,
            by_reference: true,
        });
        (self.parameters.len() - 1) as i32
    }

    /// Adds a local; returns its root index (after all parameters).
    pub fn local(&mut self, name: &str, ty: LibraryIrTypeReference) -> i32 {
        self.locals.push(LibraryIrVariable {
            name: name.into(),
            ty,
            by_reference: false,
        });
        (self.parameters.len() + self.locals.len() - 1) as i32
    }

    /// Numbers a new value of `ty`.
    pub fn new_value(&mut self, ty: LibraryIrTypeReference) -> i32 {
        let id = self.next_value;
        self.next_value += 1;
        self.values.push(LibraryIrValue { id, ty });
        id
    }

    /// Skips a value id, leaving a gap in the table (as dead-branch elimination does).
    pub fn skip_value(&mut self) {
        self.next_value += 1;
    }

    /// Appends a statement to the current block.
    pub fn push(&mut self, statement: LibraryIrStatement) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(statement);
        }
    }

    /// `const`.
    pub fn constant(&mut self, ty: LibraryIrTypeReference, value: Option<LibraryValue>) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Constant { result, value });
        result
    }

    /// `load`.
    pub fn load(
        &mut self,
        ty: LibraryIrTypeReference,
        root: i32,
        chain: Vec<LibraryIrAccess>,
    ) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Load {
            result,
            place: LibraryIrPlace { root, chain },
        });
        result
    }

    /// `store`.
    pub fn store(&mut self, root: i32, chain: Vec<LibraryIrAccess>, value: i32) {
        self.push(LibraryIrStatement::Store {
            place: LibraryIrPlace { root, chain },
            value,
        });
    }

    /// `unary`.
    pub fn unary(&mut self, op: IrUnaryOp, ty: LibraryIrTypeReference, operand: i32) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Unary {
            result,
            op,
            operand,
        });
        result
    }

    /// `binary`.
    pub fn binary(
        &mut self,
        op: IrBinaryOp,
        ty: LibraryIrTypeReference,
        left: i32,
        right: i32,
    ) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Binary {
            result,
            op,
            left,
            right,
        });
        result
    }

    /// `convert`.
    pub fn convert(
        &mut self,
        kind: IrConversionKind,
        ty: LibraryIrTypeReference,
        operand: i32,
    ) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Convert {
            result,
            conversion_kind: kind,
            operand,
        });
        result
    }

    /// `intrinsic`; `ty` `None` for a void one.
    pub fn intrinsic(
        &mut self,
        intrinsic: IrIntrinsic,
        ty: Option<LibraryIrTypeReference>,
        arguments: Vec<i32>,
    ) -> Option<i32> {
        let result = ty.map(|t| self.new_value(t));
        self.push(LibraryIrStatement::Intrinsic {
            result,
            intrinsic,
            arguments,
        });
        result
    }

    /// `call`; `ty` `None` when the result is not used or the callee is void.
    pub fn call(
        &mut self,
        function: &str,
        ty: Option<LibraryIrTypeReference>,
        arguments: Vec<LibraryIrArgument>,
    ) -> Option<i32> {
        let result = ty.map(|t| self.new_value(t));
        self.push(LibraryIrStatement::Call {
            result,
            function: function.into(),
            arguments,
        });
        result
    }

    /// `construct`.
    pub fn construct(&mut self, ty: LibraryIrTypeReference, arguments: Vec<i32>) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Construct { result, arguments });
        result
    }

    /// `extract`.
    pub fn extract(
        &mut self,
        ty: LibraryIrTypeReference,
        source: i32,
        chain: Vec<LibraryIrAccess>,
    ) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Extract {
            result,
            source,
            chain,
        });
        result
    }

    /// `select`.
    pub fn select(
        &mut self,
        ty: LibraryIrTypeReference,
        condition: i32,
        when_true: i32,
        when_false: i32,
    ) -> i32 {
        let result = self.new_value(ty);
        self.push(LibraryIrStatement::Select {
            result,
            condition,
            when_true,
            when_false,
        });
        result
    }

    fn nested(&mut self, build: impl FnOnce(&mut Self)) -> LibraryIrBlock {
        self.blocks.push(Vec::new());
        build(self);
        LibraryIrBlock {
            statements: self.blocks.pop().unwrap_or_default(),
        }
    }

    /// A nested `block`.
    pub fn block(&mut self, build: impl FnOnce(&mut Self)) {
        let block = self.nested(build);
        self.push(LibraryIrStatement::Block(block));
    }

    /// `if` without `else`.
    pub fn if_then(&mut self, condition: i32, then: impl FnOnce(&mut Self)) {
        let then = self.nested(then);
        self.push(LibraryIrStatement::If {
            condition,
            then,
            otherwise: None,
        });
    }

    /// `if` with `else`.
    pub fn if_else(
        &mut self,
        condition: i32,
        then: impl FnOnce(&mut Self),
        otherwise: impl FnOnce(&mut Self),
    ) {
        let then = self.nested(then);
        let otherwise = self.nested(otherwise);
        self.push(LibraryIrStatement::If {
            condition,
            then,
            otherwise: Some(otherwise),
        });
    }

    /// `loop`: `condition` builds the test block and returns the test value.
    pub fn loop_(
        &mut self,
        test_before_body: bool,
        condition: impl FnOnce(&mut Self) -> i32,
        body: impl FnOnce(&mut Self),
        continuing: Option<&dyn Fn(&mut Self)>,
    ) {
        let mut condition_value = 0;
        let condition = self.nested(|b| condition_value = condition(b));
        let body = self.nested(body);
        let continuing = continuing.map(|c| self.nested(c));
        self.push(LibraryIrStatement::Loop {
            condition,
            condition_value,
            body,
            continuing,
            test_before_body,
        });
    }

    /// `return`.
    pub fn ret(&mut self, value: Option<i32>) {
        self.push(LibraryIrStatement::Return { value });
    }

    /// `break`.
    pub fn brk(&mut self) {
        self.push(LibraryIrStatement::Break);
    }

    /// `continue`.
    pub fn cont(&mut self) {
        self.push(LibraryIrStatement::Continue);
    }

    /// `discard`.
    pub fn discard(&mut self) {
        self.push(LibraryIrStatement::Discard);
    }

    /// Finishes the function (the value table sorted by id; `ValueCount` counts gaps).
    pub fn finish(mut self) -> LibraryIrFunction {
        self.values.sort_by_key(|v| v.id);
        let statements = self.blocks.drain(..).next().unwrap_or_default();
        LibraryIrFunction {
            key: self.key,
            name: self.name,
            return_type: self.return_type,
            parameters: self.parameters,
            locals: self.locals,
            values: self.values,
            value_count: self.next_value,
            body: LibraryIrBlock { statements },
        }
    }
}

/// Shorthands for common types.
pub mod types {
    use crate::ir::{IrTypeKind, LibraryIrTypeReference};

    /// `f32`.
    pub fn f32() -> LibraryIrTypeReference {
        LibraryIrTypeReference::scalar(IrTypeKind::Float)
    }
    /// `i32`.
    pub fn i32() -> LibraryIrTypeReference {
        LibraryIrTypeReference::scalar(IrTypeKind::Int)
    }
    /// `u32`.
    pub fn u32() -> LibraryIrTypeReference {
        LibraryIrTypeReference::scalar(IrTypeKind::UInt)
    }
    /// `bool`.
    pub fn bool() -> LibraryIrTypeReference {
        LibraryIrTypeReference::scalar(IrTypeKind::Bool)
    }
    /// `vec<f32,n>`.
    pub fn vec(n: i32) -> LibraryIrTypeReference {
        LibraryIrTypeReference::vector(IrTypeKind::Float, n)
    }
    /// `mat<f32,r,c>`.
    pub fn mat(r: i32, c: i32) -> LibraryIrTypeReference {
        LibraryIrTypeReference::matrix(IrTypeKind::Float, r, c)
    }
    /// `void`.
    pub fn void() -> LibraryIrTypeReference {
        LibraryIrTypeReference::void()
    }
}
