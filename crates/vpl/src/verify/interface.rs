//! Sections 3, 3.1, 6 and 6.3: interface declarations, semantics and
//! locations, the required Position and FragmentColor outputs, and the
//! linkage of fragment inputs to vertex outputs.

use super::diagnostic::{Check, Rule, Subject, fail};
use super::types::describe;
use crate::ir::{
    Direction, InterfaceVar, Module, ScalarKind, Semantic, Stage, StageKind, TypeInner,
};
use std::collections::HashMap;

fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::In => "input",
        Direction::Out => "output",
    }
}

fn is_float_vec4(module: &Module, var: &InterfaceVar) -> bool {
    matches!(
        module.types.inner(var.ty),
        Some(TypeInner::Vector {
            kind: ScalarKind::Float,
            size: 4
        })
    )
}

/// Checks one stage's interface list.
pub(crate) fn check_declarations(module: &Module, stage: &Stage) -> Check {
    let kind = stage.kind;
    let mut names: HashMap<&str, usize> = HashMap::new();
    // Per direction: location -> slot, semantic -> slot.
    let mut locations: [HashMap<i32, usize>; 2] = Default::default();
    let mut semantics: [HashMap<Semantic, usize>; 2] = Default::default();
    for (slot, var) in stage.interface.iter().enumerate() {
        let subject = Subject::Interface { stage: kind, slot };
        let err = |m: String| fail(Rule::Interface, subject, var.span, m);
        if var.name.is_empty() {
            return Err(fail(
                Rule::Container,
                subject,
                var.span,
                "interface name is empty",
            ));
        }
        if let Some(first) = names.insert(var.name.as_str(), slot) {
            return Err(fail(
                Rule::Container,
                subject,
                var.span,
                format!(
                    "interface name {:?} is already used by interface s{first} of this stage (names are unique across both directions)",
                    var.name
                ),
            ));
        }
        match module.types.inner(var.ty) {
            None => {
                return Err(fail(
                    Rule::Type,
                    subject,
                    var.span,
                    "interface type handle is out of range",
                ));
            }
            Some(TypeInner::Void) => {
                return Err(fail(
                    Rule::Type,
                    subject,
                    var.span,
                    "interface type is void (void is only a function return type)",
                ));
            }
            Some(_) => {}
        }
        if var.location < -1 {
            return Err(err(format!(
                "location {} is invalid (a location is -1 for unspecified, or nonnegative)",
                var.location
            )));
        }
        let d = var.direction as usize;
        let dir = direction_word(var.direction);
        if var.location != -1
            && let Some(first) = locations[d].insert(var.location, slot)
        {
            return Err(err(format!(
                "location {} is already used by {dir} s{first} of this stage",
                var.location
            )));
        }
        if var.semantic != Semantic::None
            && let Some(first) = semantics[d].insert(var.semantic, slot)
        {
            return Err(err(format!(
                "semantic `{}` is already used by {dir} s{first} of this stage",
                var.semantic.keyword()
            )));
        }
        match var.semantic {
            Semantic::Position => {
                let placed = matches!(
                    (kind, var.direction),
                    (StageKind::Vertex, Direction::Out) | (StageKind::Fragment, Direction::In)
                );
                if !placed {
                    return Err(err(format!(
                        "`position` is a vertex output or fragment input, not a {} {dir}",
                        kind.keyword()
                    )));
                }
                if !is_float_vec4(module, var) {
                    return Err(err(format!(
                        "`position` must have type vector float 4, not {}",
                        describe(&module.types, var.ty)
                    )));
                }
                if var.location != -1 {
                    return Err(err(format!(
                        "`position` must have location -1, not {}",
                        var.location
                    )));
                }
            }
            Semantic::FragmentColor => {
                if (kind, var.direction) != (StageKind::Fragment, Direction::Out) {
                    return Err(err(format!(
                        "`fragment_color` is a fragment output, not a {} {dir}",
                        kind.keyword()
                    )));
                }
                if !is_float_vec4(module, var) {
                    return Err(err(format!(
                        "`fragment_color` must have type vector float 4, not {}",
                        describe(&module.types, var.ty)
                    )));
                }
            }
            Semantic::None | Semantic::Color | Semantic::TexCoord => {}
        }
    }
    let (required, what) = match kind {
        StageKind::Vertex => (Semantic::Position, "its `position` output"),
        StageKind::Fragment => (
            Semantic::FragmentColor,
            "its primary `fragment_color` output",
        ),
    };
    let declared = stage
        .interface
        .iter()
        .any(|v| v.direction == Direction::Out && v.semantic == required);
    if !declared {
        return Err(fail(
            Rule::Interface,
            Subject::Stage(kind),
            stage.span.or(module.span),
            format!("the {} stage must declare {what}", kind.keyword()),
        ));
    }
    Ok(())
}

/// Every ordinary fragment input requires exactly one ordinary vertex
/// output (section 3.1).
pub(crate) fn check_linkage(module: &Module) -> Check {
    let outputs: Vec<(usize, &InterfaceVar)> = module
        .vertex
        .interface
        .iter()
        .enumerate()
        .filter(|(_, v)| v.direction == Direction::Out && v.semantic != Semantic::Position)
        .collect();
    for (slot, input) in module.fragment.interface.iter().enumerate() {
        if input.direction != Direction::In || input.semantic == Semantic::Position {
            continue;
        }
        let subject = Subject::Interface {
            stage: StageKind::Fragment,
            slot,
        };
        let err = |m: String| fail(Rule::Interface, subject, input.span, m);
        let matched: Vec<&(usize, &InterfaceVar)> = if input.location != -1 {
            outputs
                .iter()
                .filter(|(_, o)| o.location == input.location)
                .collect()
        } else {
            outputs
                .iter()
                .filter(|(_, o)| o.location == -1 && o.name == input.name)
                .collect()
        };
        let (out_slot, output) = match matched.as_slice() {
            [one] => **one,
            [] => {
                let hint = if input.location != -1 {
                    format!(
                        "no ordinary vertex output has location {} (explicit locations match only explicit locations, regardless of names)",
                        input.location
                    )
                } else if outputs.iter().any(|(_, o)| o.name == input.name) {
                    format!(
                        "the vertex output named {:?} has an explicit location; names match only when both locations are -1 (no mixed-mode inference)",
                        input.name
                    )
                } else {
                    format!(
                        "no ordinary vertex output with location -1 is named {:?}",
                        input.name
                    )
                };
                return Err(err(format!(
                    "fragment input {:?} has no matching vertex output: {hint}",
                    input.name
                )));
            }
            _ => {
                return Err(err(format!(
                    "fragment input {:?} matches {} vertex outputs; it requires exactly one",
                    input.name,
                    matched.len()
                )));
            }
        };
        if output.ty != input.ty {
            return Err(err(format!(
                "fragment input {:?} has type {} but its vertex output s{out_slot} {:?} has type {} (types must be equal, including array lengths and record declarations)",
                input.name,
                describe(&module.types, input.ty),
                output.name,
                describe(&module.types, output.ty)
            )));
        }
        let tagged = |s: Semantic| matches!(s, Semantic::Color | Semantic::TexCoord);
        if tagged(input.semantic) && tagged(output.semantic) && input.semantic != output.semantic {
            return Err(err(format!(
                "fragment input {:?} is tagged `{}` but its vertex output s{out_slot} {:?} is tagged `{}`",
                input.name,
                input.semantic.keyword(),
                output.name,
                output.semantic.keyword()
            )));
        }
    }
    Ok(())
}
