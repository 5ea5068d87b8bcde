//! The statement rules: values, operators, constructs, control flow.

use super::function::FunctionCheck;
use super::rules::binary_rule;
use crate::ir::*;

impl<'s, 'a> FunctionCheck<'s, 'a> {
    pub(crate) fn statement(&mut self, statement: &'a LibraryIrStatement) {
        match statement {
            LibraryIrStatement::Block(block) => {
                // A nested block's values go out of scope when it ends.
                let mark = self.open_region();
                self.block(block);
                self.close_region(mark);
            }
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
                    if o.same_type(t) {
                        self.error(format!(
                            "convert {conversion_kind}: converts {} to itself",
                            o.display()
                        ));
                    }
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
                    && c.kind != IrTypeKind::Bool
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

    pub(crate) fn loop_body(&mut self, body: &'a LibraryIrBlock) {
        let outer = self.loop_depth;
        self.loop_depth = outer + 1;
        self.sub_block("Body", body);
        self.loop_depth = outer;
    }

    /// `break`/`continue` are not allowed in a continue block (it is not the loop body).
    pub(crate) fn loop_continue(&mut self, continuing: Option<&'a LibraryIrBlock>) {
        if let Some(continuing) = continuing {
            let outer = self.loop_depth;
            self.loop_depth = 0;
            self.sub_block("Continue", continuing);
            self.loop_depth = outer;
        }
    }

    pub(crate) fn loop_condition(&mut self, condition: &'a LibraryIrBlock, condition_value: i32) {
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
}
