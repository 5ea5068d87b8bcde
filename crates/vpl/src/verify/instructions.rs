//! Section 7: instruction operands and results — the normative operand
//! table of 7.1, constructors (7.2), calls and the texture built-in (7.3),
//! swizzle/member/index extraction (7.4) — and the simple-operand rules of
//! section 5.

use super::context::FnCx;
use super::diagnostic::{Check, Place, Rule, Subject, fail};
use super::types::describe;
use crate::ir::{
    BinaryOp, Builtin, Callee, Constant, Handle, InstructionKind, Literal, Operand, Register,
    ScalarKind, Span, Type, TypeInner, Value,
};

/// What a binary operation produces according to the table of 7.1.
enum Produces {
    /// Exactly this type.
    Type(Handle<Type>),
    /// A type of this shape.
    Shape(TypeInner),
}

fn numeric(k: ScalarKind) -> bool {
    k.is_numeric()
}

/// The normative v1 operand table (section 7.1). `None`: not listed, so
/// rejected (no implicit promotion).
fn binary_table(
    op: BinaryOp,
    lh: Handle<Type>,
    l: &TypeInner,
    rh: Handle<Type>,
    r: &TypeInner,
) -> Option<Produces> {
    use BinaryOp::*;
    use TypeInner::{Matrix, Scalar, Vector};
    let same = lh == rh;
    let float_scalar = |t: &TypeInner| matches!(t, Scalar(ScalarKind::Float));
    let float_aggregate = |t: &TypeInner| {
        matches!(
            t,
            Vector {
                kind: ScalarKind::Float,
                ..
            } | Matrix { .. }
        )
    };
    match op {
        Add | Subtract | Multiply | Divide => match (l, r) {
            (Scalar(k), Scalar(_)) if same && numeric(*k) => Some(Produces::Type(lh)),
            (Vector { kind, .. }, Vector { .. }) if same && numeric(*kind) => {
                Some(Produces::Type(lh))
            }
            (
                Matrix {
                    rows: ar,
                    columns: ac,
                },
                Matrix {
                    rows: br,
                    columns: bc,
                },
            ) => match op {
                Multiply if ac == br => Some(Produces::Shape(Matrix {
                    rows: *ar,
                    columns: *bc,
                })),
                Add | Subtract | Divide if same => Some(Produces::Type(lh)),
                _ => None,
            },
            (
                Matrix { rows, columns },
                Vector {
                    kind: ScalarKind::Float,
                    size,
                },
            ) if op == Multiply && columns == size => Some(Produces::Shape(Vector {
                kind: ScalarKind::Float,
                size: *rows,
            })),
            _ if matches!(op, Multiply | Divide) && float_aggregate(l) && float_scalar(r) => {
                Some(Produces::Type(lh))
            }
            _ if op == Multiply && float_scalar(l) && float_aggregate(r) => {
                Some(Produces::Type(rh))
            }
            _ => None,
        },
        Equal | NotEqual => match (l, r) {
            (Scalar(_), Scalar(_)) if same => Some(Produces::Shape(Scalar(ScalarKind::Bool))),
            _ => None,
        },
        Less | LessEqual | Greater | GreaterEqual => match (l, r) {
            (Scalar(k), Scalar(_)) if same && numeric(*k) => {
                Some(Produces::Shape(Scalar(ScalarKind::Bool)))
            }
            _ => None,
        },
    }
}

fn constant_int(op: &Operand) -> Option<i32> {
    match op.value {
        Value::Constant(c) => match c.value {
            Literal::Int(v) => Some(v),
            _ => None,
        },
        Value::Register(_) => None,
    }
}

impl FnCx<'_> {
    /// The shape behind a handle already known to be in range.
    pub(crate) fn inner(&self, ty: Handle<Type>) -> &TypeInner {
        &self.module.types[ty].inner
    }

    pub(crate) fn describe(&self, ty: Handle<Type>) -> String {
        describe(&self.module.types, ty)
    }

    /// Checks a computation operand (a declared register or a scalar
    /// constant of its literal's type) and returns its type.
    #[inline(always)]
    pub(crate) fn operand(
        &self,
        op: &Operand,
        subject: Subject,
        span: Option<Span>,
    ) -> Check<Handle<Type>> {
        let span = op.span.or(span);
        match op.value {
            Value::Register(r) => {
                self.regs.check(r, subject, span)?;
                Ok(r.ty)
            }
            Value::Constant(c) => self.constant(c, subject, span),
        }
    }

    /// [`FnCx::operand`] of a constant: finite, and of the scalar type of
    /// its literal's kind. The passing case is inlined; a failure is
    /// reported by [`FnCx::constant_failed`].
    #[inline(always)]
    fn constant(&self, c: Constant, subject: Subject, span: Option<Span>) -> Check<Handle<Type>> {
        let finite = match c.value {
            Literal::Float(v) => v.is_finite(),
            Literal::Bool(_) | Literal::Int(_) => true,
        };
        match self.module.types.inner(c.ty) {
            Some(TypeInner::Scalar(k)) if finite && *k == c.value.kind() => Ok(c.ty),
            _ => Err(self.constant_failed(c, subject, span)),
        }
    }

    /// The diagnostic of a failed [`FnCx::constant`]: a literal that is
    /// not finite first, then a constant type other than the scalar type
    /// of its literal's kind.
    #[cold]
    #[inline(never)]
    fn constant_failed(
        &self,
        c: Constant,
        subject: Subject,
        span: Option<Span>,
    ) -> super::VerifyError {
        let expected = c.value.kind();
        if let Literal::Float(v) = c.value
            && !v.is_finite()
        {
            return fail(
                Rule::Instruction,
                subject,
                span,
                "floating literal is not finite",
            );
        }
        fail(
            Rule::Instruction,
            subject,
            span,
            format!(
                "constant type is not the {} scalar type of its literal",
                expected.keyword()
            ),
        )
    }

    /// Checks a destination register descriptor.
    #[inline(always)]
    fn result(&self, r: Register, place: Place, span: Option<Span>) -> Check {
        self.regs.check(r, place.subject(), span).map(|_| ())
    }

    fn mismatch(&self, place: Place, span: Option<Span>, message: String) -> super::VerifyError {
        fail(Rule::Instruction, place.subject(), span, message)
    }

    /// Type-checks one instruction (reachable or not).
    pub(crate) fn check_instruction(
        &self,
        kind: &InstructionKind,
        place: Place,
        span: Option<Span>,
    ) -> Check {
        match kind {
            InstructionKind::DeclareLocal { .. } => Ok(()),
            InstructionKind::Copy { result, source } => {
                self.result(*result, place, span)?;
                let ty = self.operand(source, place.operand(0), span)?;
                if ty != result.ty {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "copy needs a source of exactly the result's type {}, not {}",
                            self.describe(result.ty),
                            self.describe(ty)
                        ),
                    ));
                }
                Ok(())
            }
            InstructionKind::Load { result, source } => {
                self.result(*result, place, span)?;
                let ty = self.reference(source, place, span, false)?;
                if ty != result.ty {
                    return Err(fail(
                        Rule::Storage,
                        place.subject(),
                        span,
                        format!(
                            "load reads {} into register r{} of type {} (types must be equal)",
                            self.describe(ty),
                            { result.index },
                            self.describe(result.ty)
                        ),
                    ));
                }
                Ok(())
            }
            InstructionKind::Store { target, value } => {
                let ty = self.reference(target, place, span, true)?;
                let vt = self.operand(value, place.operand(0), span)?;
                if vt != ty {
                    return Err(fail(
                        Rule::Storage,
                        place.operand(0),
                        value.span.or(span),
                        format!(
                            "store writes a value of type {} to storage of type {} (types must be equal)",
                            self.describe(vt),
                            self.describe(ty)
                        ),
                    ));
                }
                Ok(())
            }
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                self.result(*result, place, span)?;
                let lt = self.operand(lhs, place.operand(0), span)?;
                let rt = self.operand(rhs, place.operand(1), span)?;
                let produced = binary_table(*op, lt, self.inner(lt), rt, self.inner(rt))
                    .ok_or_else(|| {
                        self.mismatch(
                            place,
                            span,
                            format!(
                                "`{}` is not defined for operands {} and {} (no implicit promotion)",
                                op.keyword(),
                                self.describe(lt),
                                self.describe(rt)
                            ),
                        )
                    })?;
                let ok = match &produced {
                    Produces::Type(t) => *t == result.ty,
                    Produces::Shape(s) => self.inner(result.ty) == s,
                };
                if !ok {
                    let expected = match produced {
                        Produces::Type(t) => self.describe(t),
                        Produces::Shape(s) => match s {
                            TypeInner::Scalar(k) => k.keyword().to_string(),
                            TypeInner::Vector { kind, size } => {
                                format!("vector {} {size}", kind.keyword())
                            }
                            TypeInner::Matrix { rows, columns } => {
                                format!("matrix {rows} {columns}")
                            }
                            _ => "another type".to_string(),
                        },
                    };
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "`{}` produces {expected}, but the result register r{} has type {}",
                            op.keyword(),
                            { result.index },
                            self.describe(result.ty)
                        ),
                    ));
                }
                if *op == BinaryOp::Divide
                    && matches!(self.inner(lt), TypeInner::Scalar(ScalarKind::Int))
                {
                    if constant_int(rhs) == Some(0) {
                        return Err(fail(
                            Rule::Instruction,
                            place.operand(1),
                            rhs.span.or(span),
                            "integer division by the constant zero",
                        ));
                    }
                    if constant_int(lhs) == Some(i32::MIN) && constant_int(rhs) == Some(-1) {
                        return Err(self.mismatch(
                            place,
                            span,
                            "constant integer division of the minimum integer by -1".into(),
                        ));
                    }
                }
                Ok(())
            }
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => self.check_call(*result, *callee, arguments, place, span),
            InstructionKind::Construct {
                result,
                ty,
                arguments,
            } => {
                self.result(*result, place, span)?;
                if *ty != result.ty {
                    return Err(self.mismatch(
                        place,
                        span,
                        "the constructed type differs from the destination register's type".into(),
                    ));
                }
                let mut args = Vec::with_capacity(arguments.len());
                for (i, a) in arguments.iter().enumerate() {
                    args.push(self.operand(a, place.operand(i), span)?);
                }
                self.check_construct(*ty, &args, arguments, place, span)
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                self.result(*result, place, span)?;
                let st = self.operand(source, place.operand(0), span)?;
                let TypeInner::Vector { kind, size } = *self.inner(st) else {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!("swizzle needs a vector source, not {}", self.describe(st)),
                    ));
                };
                if pattern.is_empty() || pattern.len() > 4 {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "a swizzle pattern has 1 to 4 selectors, not {}",
                            pattern.len()
                        ),
                    ));
                }
                if let Some(c) = pattern.iter().find(|c| c.index() >= usize::from(size)) {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "swizzle selector `{}` is not valid for a {size}-component vector",
                            c.letter()
                        ),
                    ));
                }
                let expected = if pattern.len() == 1 {
                    TypeInner::Scalar(kind)
                } else {
                    TypeInner::Vector {
                        kind,
                        size: pattern.len() as u8,
                    }
                };
                if *self.inner(result.ty) != expected {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "swizzle produces {} {}, but the result register r{} has type {}",
                            if pattern.len() == 1 {
                                "a"
                            } else {
                                "a vector of"
                            },
                            match expected {
                                TypeInner::Vector { size, .. } =>
                                    format!("{size} {} components", kind.keyword()),
                                _ => kind.keyword().to_string(),
                            },
                            { result.index },
                            self.describe(result.ty)
                        ),
                    ));
                }
                Ok(())
            }
            InstructionKind::Member {
                result,
                source,
                field,
            } => {
                self.result(*result, place, span)?;
                let st = self.operand(source, place.operand(0), span)?;
                let TypeInner::Record(record) = self.inner(st) else {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "member extraction needs a record value, not {}",
                            self.describe(st)
                        ),
                    ));
                };
                let Some((_, f)) = record.field(field) else {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!("record {:?} has no field {field:?}", record.name),
                    ));
                };
                if f.ty != result.ty {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "field {field:?} has type {}, but the result register r{} has type {}",
                            self.describe(f.ty),
                            { result.index },
                            self.describe(result.ty)
                        ),
                    ));
                }
                Ok(())
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                self.result(*result, place, span)?;
                let st = self.operand(source, place.operand(0), span)?;
                let it = self.operand(index, place.operand(1), span)?;
                let TypeInner::Array { element, length } = *self.inner(st) else {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "index extraction needs an array value, not {}",
                            self.describe(st)
                        ),
                    ));
                };
                if !matches!(self.inner(it), TypeInner::Scalar(ScalarKind::Int)) {
                    return Err(fail(
                        Rule::Instruction,
                        place.operand(1),
                        index.span.or(span),
                        format!("an index must be an int scalar, not {}", self.describe(it)),
                    ));
                }
                if let Some(i) = constant_int(index)
                    && (i < 0 || i as u64 >= length)
                {
                    return Err(fail(
                        Rule::Instruction,
                        place.operand(1),
                        index.span.or(span),
                        format!(
                            "literal index {i} is out of bounds for an array of {length} elements"
                        ),
                    ));
                }
                if element != result.ty {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "the array element type is {}, but the result register r{} has type {}",
                            self.describe(element),
                            { result.index },
                            self.describe(result.ty)
                        ),
                    ));
                }
                Ok(())
            }
        }
    }

    fn check_call(
        &self,
        result: Option<Register>,
        callee: Callee,
        arguments: &[Operand],
        place: Place,
        span: Option<Span>,
    ) -> Check {
        if let Some(r) = result {
            self.result(r, place, span)?;
        }
        let mut args = Vec::with_capacity(arguments.len());
        for (i, a) in arguments.iter().enumerate() {
            args.push(self.operand(a, place.operand(i), span)?);
        }
        match callee {
            Callee::Function(h) => {
                let Some(f) = self.stage.functions.get(h) else {
                    return Err(fail(
                        Rule::Container,
                        place.subject(),
                        span,
                        "the callee is not a function of the calling stage",
                    ));
                };
                if args.len() != f.parameters.len() {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "call to {:?} passes {} arguments, but it has {} parameters",
                            f.name,
                            args.len(),
                            f.parameters.len()
                        ),
                    ));
                }
                for (i, (a, p)) in args.iter().zip(&f.parameters).enumerate() {
                    if *a != p.ty {
                        return Err(fail(
                            Rule::Instruction,
                            place.operand(i),
                            arguments[i].span.or(span),
                            format!(
                                "argument {i} of the call to {:?} has type {}, but the parameter has type {} (no implicit conversion)",
                                f.name,
                                self.describe(*a),
                                self.describe(p.ty)
                            ),
                        ));
                    }
                }
                let void = matches!(self.inner(f.return_type), TypeInner::Void);
                match (void, result) {
                    (true, None) => Ok(()),
                    (true, Some(r)) => Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "{:?} returns void, so the call cannot assign register r{} (use `void` as the result)",
                            f.name, { r.index }
                        ),
                    )),
                    (false, None) => Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "{:?} returns {}, so the call needs a destination register of that type",
                            f.name,
                            self.describe(f.return_type)
                        ),
                    )),
                    (false, Some(r)) if r.ty != f.return_type => Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "{:?} returns {}, but the destination register r{} has type {}",
                            f.name,
                            self.describe(f.return_type),
                            { r.index },
                            self.describe(r.ty)
                        ),
                    )),
                    (false, Some(_)) => Ok(()),
                }
            }
            Callee::Builtin(Builtin::Texture) => {
                let Some(r) = result else {
                    return Err(self.mismatch(
                        place,
                        span,
                        "the texture built-in requires a destination register".into(),
                    ));
                };
                if !matches!(
                    self.inner(r.ty),
                    TypeInner::Vector {
                        kind: ScalarKind::Float,
                        size: 4
                    }
                ) {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "texture produces vector float 4, but the destination register r{} has type {}",
                            { r.index },
                            self.describe(r.ty)
                        ),
                    ));
                }
                if args.len() != 2 {
                    return Err(self.mismatch(
                        place,
                        span,
                        format!(
                            "texture takes a sampler2D and a vector float 2, not {} operands",
                            args.len()
                        ),
                    ));
                }
                if !matches!(self.inner(args[0]), TypeInner::Sampler(_)) {
                    return Err(fail(
                        Rule::Instruction,
                        place.operand(0),
                        arguments[0].span.or(span),
                        format!(
                            "texture needs a sampler2D operand, not {}",
                            self.describe(args[0])
                        ),
                    ));
                }
                if !matches!(
                    self.inner(args[1]),
                    TypeInner::Vector {
                        kind: ScalarKind::Float,
                        size: 2
                    }
                ) {
                    return Err(fail(
                        Rule::Instruction,
                        place.operand(1),
                        arguments[1].span.or(span),
                        format!(
                            "texture coordinates must be a vector float 2, not {}",
                            self.describe(args[1])
                        ),
                    ));
                }
                Ok(())
            }
        }
    }

    /// Section 7.2.
    fn check_construct(
        &self,
        ty: Handle<Type>,
        args: &[Handle<Type>],
        operands: &[Operand],
        place: Place,
        span: Option<Span>,
    ) -> Check {
        let err = |m: String| self.mismatch(place, span, m);
        let at = |i: usize| operands.get(i).and_then(|o| o.span).or(span);
        let described = || {
            args.iter()
                .map(|a| self.describe(*a))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.inner(ty) {
            TypeInner::Void => Err(err("void cannot be constructed".into())),
            TypeInner::Sampler(_) => Err(err("samplers cannot be constructed".into())),
            TypeInner::Scalar(k) => {
                let ok = match args {
                    [a] => match self.inner(*a) {
                        TypeInner::Scalar(ak) => {
                            ak == k || (*k == ScalarKind::Float && *ak == ScalarKind::Int)
                        }
                        _ => false,
                    },
                    _ => false,
                };
                if ok {
                    Ok(())
                } else {
                    Err(err(format!(
                        "a {} scalar is constructed from one {} operand{}, not ({})",
                        k.keyword(),
                        k.keyword(),
                        if *k == ScalarKind::Float {
                            " or one int operand"
                        } else {
                            ""
                        },
                        described()
                    )))
                }
            }
            TypeInner::Vector { kind, size } => {
                self.components(*kind, u32::from(*size), false, args, &err, described)
            }
            TypeInner::Matrix { rows, columns } => self.components(
                ScalarKind::Float,
                u32::from(*rows) * u32::from(*columns),
                true,
                args,
                &err,
                described,
            ),
            TypeInner::Array { element, length } => {
                if args.len() as u64 != *length {
                    return Err(err(format!(
                        "an array of {length} elements is constructed from exactly {length} operands, not {}",
                        args.len()
                    )));
                }
                if let Some((i, a)) = args.iter().enumerate().find(|(_, a)| **a != *element) {
                    return Err(fail(
                        Rule::Instruction,
                        place.operand(i),
                        at(i),
                        format!(
                            "array element operand {i} has type {}, not the element type {}",
                            self.describe(*a),
                            self.describe(*element)
                        ),
                    ));
                }
                Ok(())
            }
            TypeInner::Record(record) => {
                if args.len() != record.fields.len() {
                    return Err(err(format!(
                        "record {:?} is constructed from one operand per field ({}), not {}",
                        record.name,
                        record.fields.len(),
                        args.len()
                    )));
                }
                for (i, (a, f)) in args.iter().zip(&record.fields).enumerate() {
                    if *a != f.ty {
                        return Err(fail(
                            Rule::Instruction,
                            place.operand(i),
                            at(i),
                            format!(
                                "operand {i} for field {:?} has type {}, not the field type {}",
                                f.name,
                                self.describe(*a),
                                self.describe(f.ty)
                            ),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// Vector and matrix construction: scalar/vector components of the
    /// element kind totaling `total`, or one scalar (fill / diagonal);
    /// floating results also accept int scalars; matrix operands never.
    fn components(
        &self,
        kind: ScalarKind,
        total: u32,
        matrix: bool,
        args: &[Handle<Type>],
        err: &dyn Fn(String) -> super::VerifyError,
        described: impl Fn() -> String,
    ) -> Check {
        let what = if matrix {
            "a matrix".to_string()
        } else {
            format!("a {} vector", kind.keyword())
        };
        let scalar_ok =
            |k: ScalarKind| k == kind || (kind == ScalarKind::Float && k == ScalarKind::Int);
        if let [a] = args
            && let TypeInner::Scalar(k) = self.inner(*a)
        {
            return if scalar_ok(*k) {
                Ok(())
            } else {
                Err(err(format!(
                    "{what} cannot be constructed from a {} scalar",
                    k.keyword()
                )))
            };
        }
        let mut count: u64 = 0;
        for a in args {
            match self.inner(*a) {
                TypeInner::Scalar(k) if scalar_ok(*k) => count += 1,
                TypeInner::Vector { kind: k, size } if *k == kind => count += u64::from(*size),
                _ => {
                    return Err(err(format!(
                        "{what} takes {} scalar/vector components{}, not {} (no matrix operands, no int-vector conversion)",
                        kind.keyword(),
                        if kind == ScalarKind::Float {
                            " or int scalars"
                        } else {
                            ""
                        },
                        self.describe(*a)
                    )));
                }
            }
        }
        if count != u64::from(total) {
            return Err(err(format!(
                "{what} needs components totaling exactly {total} (or one scalar), but ({}) supply {count}",
                described()
            )));
        }
        Ok(())
    }
}
