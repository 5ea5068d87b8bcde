//! Struct declarations and key uniqueness.

use super::report::{RVN3010, VerifyError, push};
use super::scope::Scope;
use super::types::check_type;
use crate::ir::*;
use std::collections::HashMap;

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
        if let Some(first) = s.fields[..i].iter().position(|f| f.name == field.name) {
            sink(
                RVN3010,
                format!(
                    "field `{}` is declared more than once (first at Fields[{first}])",
                    field.name
                ),
            );
        }
    }
}
