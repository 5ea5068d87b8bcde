//! Per-function state: the signature and value table, definitions and
//! visibility regions, statement paths and findings.

use super::control::always_leaves;
use super::report::{MAX_ERRORS, RVN3010, VerifyError, push};
use super::scope::Scope;
use super::types::check_type;
use crate::ir::*;

/// One step of a statement path.
#[derive(Clone, Copy)]
pub(crate) enum Step {
    Field(&'static str),
    Index(usize),
}

pub(crate) struct FunctionCheck<'s, 'a> {
    pub(crate) scope: &'s Scope<'a>,
    pub(crate) function: &'a LibraryIrFunction,
    pub(crate) defined: Vec<bool>,
    pub(crate) visible: Vec<bool>,
    /// Table indices made visible, in order, so a region can hide them again.
    pub(crate) region_log: Vec<usize>,
    pub(crate) path: Vec<Step>,
    pub(crate) loop_depth: usize,
    pub(crate) errors: &'s mut Vec<VerifyError>,
    pub(crate) table_ok: bool,
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
    if !function.return_type.is_void() && !always_leaves(&function.body) {
        check.path.clear();
        check.path.push(Step::Field("Body"));
        check.error(format!(
            "the function can finish without returning a {} value",
            function.return_type.display()
        ));
    }
}

impl<'s, 'a> FunctionCheck<'s, 'a> {
    pub(crate) fn path_text(&self) -> String {
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

    pub(crate) fn error_code(&mut self, code: &'static str, message: String) {
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

    pub(crate) fn error(&mut self, message: String) {
        self.error_code(RVN3010, message);
    }

    /// `what` names the checked item and is only rendered on error.
    pub(crate) fn check_type_here(
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

    pub(crate) fn at(&mut self, field: &'static str, index: Option<usize>) {
        self.path.clear();
        self.path.push(Step::Field(field));
        if let Some(i) = index {
            self.path.push(Step::Index(i));
        }
    }

    pub(crate) fn signature(&mut self) {
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

    pub(crate) fn slot(&self, id: i32) -> Option<usize> {
        self.function
            .values
            .binary_search_by_key(&id, |v| v.id)
            .ok()
    }

    /// An operand: must be in the table and visible here.
    pub(crate) fn use_value(&mut self, id: i32, what: &str) -> Option<&'a LibraryIrTypeReference> {
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
    pub(crate) fn define(&mut self, id: i32) -> Option<&'a LibraryIrTypeReference> {
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

    pub(crate) fn open_region(&self) -> usize {
        self.region_log.len()
    }

    pub(crate) fn close_region(&mut self, mark: usize) {
        for slot in self.region_log.drain(mark..) {
            self.visible[slot] = false;
        }
    }

    pub(crate) fn expect_same(
        &mut self,
        what: &str,
        expected: Option<&LibraryIrTypeReference>,
        found: Option<&LibraryIrTypeReference>,
    ) {
        self.expect_same_with(|| what.to_string(), expected, found);
    }

    /// `what` is only rendered on error.
    pub(crate) fn expect_same_with(
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

    pub(crate) fn block(&mut self, block: &'a LibraryIrBlock) {
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

    pub(crate) fn sub_block(&mut self, name: &'static str, block: &'a LibraryIrBlock) {
        self.path.push(Step::Field(name));
        self.block(block);
        self.path.pop();
    }

    pub(crate) fn is_bool_scalar(ty: Option<&LibraryIrTypeReference>) -> bool {
        ty.is_none_or(|t| t.kind == IrTypeKind::Bool)
    }
}
