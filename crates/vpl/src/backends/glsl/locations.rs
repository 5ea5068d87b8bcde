//! Interface location resolution (spec section 12.2).
//!
//! Per stage and direction, explicit locations are kept and unspecified
//! ones are allocated in interface-list order at the lowest location whose
//! whole span avoids every explicit range and every range assigned before
//! it. A type's span is [`GlslType::location_span`]: matrices take one
//! location per column, arrays and records their recursive spans. Linked
//! fragment inputs inherit the resolved location of their vertex output
//! (section 3.1 linkage). `Position` variables map to built-ins and have
//! no location (-1).
//!
//! Ranges are limited to the signed GL integer range; how many locations a
//! driver offers is a driver compile/link check.

use super::error::{TargetError, TargetErrorKind};
use super::types::TypeMap;
use crate::ir::{Direction, InterfaceVar, Module, Semantic, Stage};

/// Resolved locations by interface slot; -1 for `Position` variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locations {
    /// Vertex interface, by slot.
    pub vertex: Vec<i32>,
    /// Fragment interface, by slot.
    pub fragment: Vec<i32>,
}

/// Resolves every interface location of the module.
pub fn resolve(module: &Module, types: &TypeMap) -> Result<Locations, TargetError> {
    let mut vertex = vec![-1; module.vertex.interface.len()];
    allocate(&module.vertex, Direction::In, types, &mut vertex)?;
    allocate(&module.vertex, Direction::Out, types, &mut vertex)?;

    let mut fragment = vec![-1; module.fragment.interface.len()];
    allocate(&module.fragment, Direction::Out, types, &mut fragment)?;
    for (slot, input) in module.fragment.interface.iter().enumerate() {
        if input.direction != Direction::In || input.semantic == Semantic::Position {
            continue;
        }
        let linked = module.vertex.interface.iter().enumerate().find(|(_, out)| {
            out.direction == Direction::Out
                && out.semantic != Semantic::Position
                && if input.location == -1 {
                    out.location == -1 && out.name == input.name
                } else {
                    out.location == input.location
                }
        });
        let Some((vertex_slot, output)) = linked else {
            return Err(TargetError::new(
                TargetErrorKind::Location,
                input.span,
                format!(
                    "fragment input {:?} has no linked vertex output",
                    input.name
                ),
            ));
        };
        if output.ty != input.ty {
            return Err(TargetError::new(
                TargetErrorKind::InvalidModule,
                input.span,
                format!(
                    "fragment input {:?} and its vertex output {:?} have different types",
                    input.name, output.name
                ),
            ));
        }
        fragment[slot] = vertex[vertex_slot];
    }
    Ok(Locations { vertex, fragment })
}

fn location_error(var: &InterfaceVar, message: String) -> TargetError {
    TargetError::new(TargetErrorKind::Location, var.span, message)
}

/// Allocates the locations of one direction of `stage` into `resolved`.
fn allocate(
    stage: &Stage,
    direction: Direction,
    types: &TypeMap,
    resolved: &mut [i32],
) -> Result<(), TargetError> {
    // Half-open ranges [start, end) already taken, kept sorted by start.
    let mut taken: Vec<(u64, u64, usize)> = Vec::new();
    let vars: Vec<(usize, &InterfaceVar)> = stage
        .interface
        .iter()
        .enumerate()
        .filter(|(_, v)| v.direction == direction && v.semantic != Semantic::Position)
        .collect();
    let describe = |var: &InterfaceVar| {
        format!(
            "{} {} {:?}",
            stage.kind.keyword(),
            match direction {
                Direction::In => "input",
                Direction::Out => "output",
            },
            var.name
        )
    };
    let limit = i32::MAX as u64 + 1;
    for &(slot, var) in vars.iter().filter(|(_, v)| v.location != -1) {
        let span = types.get(var.ty)?.location_span();
        if var.location < 0 {
            return Err(location_error(
                var,
                format!("{} has negative location {}", describe(var), var.location),
            ));
        }
        let start = var.location as u64;
        let end = start.saturating_add(span);
        if end > limit {
            return Err(location_error(
                var,
                format!(
                    "{} at location {start} needs {span} locations, beyond the signed GL integer range",
                    describe(var)
                ),
            ));
        }
        if let Some(&(s, e, other)) = taken.iter().find(|(s, e, _)| start < *e && *s < end) {
            return Err(location_error(
                var,
                format!(
                    "{} occupies locations {start}..{end}, overlapping {} at {s}..{e}",
                    describe(var),
                    describe(&stage.interface[other])
                ),
            ));
        }
        insert_sorted(&mut taken, (start, end, slot));
        resolved[slot] = var.location;
    }
    for &(slot, var) in vars.iter().filter(|(_, v)| v.location == -1) {
        let span = types.get(var.ty)?.location_span();
        let mut candidate = 0u64;
        for &(s, e, _) in &taken {
            if candidate.saturating_add(span) <= s {
                break;
            }
            candidate = candidate.max(e);
        }
        let end = candidate.saturating_add(span);
        if end > limit {
            return Err(location_error(
                var,
                format!(
                    "{} needs {span} locations; none are free within the signed GL integer range",
                    describe(var)
                ),
            ));
        }
        insert_sorted(&mut taken, (candidate, end, slot));
        resolved[slot] = candidate as i32;
    }
    Ok(())
}

fn insert_sorted(taken: &mut Vec<(u64, u64, usize)>, range: (u64, u64, usize)) {
    let at = taken.partition_point(|r| r.0 < range.0);
    taken.insert(at, range);
}
