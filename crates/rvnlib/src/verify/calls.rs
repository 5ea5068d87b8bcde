//! Calls: arguments against the callee's parameters, and the result.

use super::function::FunctionCheck;
use super::scope::Resolution;
use crate::ir::*;

impl<'s, 'a> FunctionCheck<'s, 'a> {
    pub(crate) fn call(
        &mut self,
        result: Option<i32>,
        key: &str,
        arguments: &'a [LibraryIrArgument],
    ) {
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
                    // Copy-in/copy-out goes through a function-scoped temporary.
                    if root_ty.is_some()
                        && usize::try_from(root).is_ok_and(|r| r < self.function.parameters.len())
                    {
                        self.error(format!(
                            "call `{key}`: argument {i} passes parameter `{}` by reference; only a local can be",
                            self.function.parameters[root as usize].name
                        ));
                    }
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
        if result.is_none()
            && let Some(callee) = callee
            && !callee.return_type.is_void()
        {
            self.error(format!(
                "call `{key}`: discards the callee's {} result",
                callee.return_type.display()
            ));
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
}
