//! A verified module compiled for the CPU executor, with the interface
//! facts a draw needs (attribute locations, varying links, the position
//! and primary colour slots), all derived from the verified module and
//! its `ModuleInfo`.

use super::compile::compile_stage;
use super::error::ExecError;
use super::layout::Layout;
use super::program::CompiledStage;
use crate::VerifiedModule;
use crate::ir::{Direction, Handle, Module, ScalarKind, Semantic, Stage, Type, TypeInner};

/// The largest uniform image, in words.
pub const MAX_UNIFORM_WORDS: u64 = 1 << 22;

/// One vertex attribute: where it lands and how many locations it spans.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttributeSlot {
    /// Word offset in the vertex IO words.
    pub io_offset: u32,
    /// First location.
    pub location: u32,
    /// Words per location (components of a scalar, vector or matrix column).
    pub components: u32,
    /// Locations spanned (matrix columns; 1 otherwise).
    pub locations: u32,
    /// Whether the attribute is floating (the harness supplies floats).
    pub float: bool,
}

/// One fragment input word range linked to a vertex output.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Varying {
    /// Word offset in the fragment IO words.
    pub fragment_offset: u32,
    /// Word offset in the vertex IO words.
    pub vertex_offset: u32,
    /// Words.
    pub len: u32,
    /// Flat (integer- or Boolean-containing): the provoking vertex's value.
    pub flat: bool,
}

/// A module compiled for [`crate::exec::draw`].
#[derive(Debug, Clone)]
pub struct Executable {
    pub(crate) module: VerifiedModule,
    pub(crate) layout: Layout,
    pub(crate) uniform_offsets: Vec<u32>,
    pub(crate) uniform_words: u32,
    /// Sampler uniforms: (slot, name).
    pub(crate) samplers: Vec<(usize, String)>,
    pub(crate) vertex: CompiledStage,
    pub(crate) fragment: CompiledStage,
    pub(crate) attributes: Vec<AttributeSlot>,
    pub(crate) clip_offset: u32,
    pub(crate) varyings: Vec<Varying>,
    pub(crate) frag_coord_offset: Option<u32>,
    pub(crate) color_offset: u32,
}

fn contains(module: &Module, ty: Handle<Type>, wanted: &dyn Fn(&TypeInner) -> bool) -> bool {
    let mut stack = vec![ty];
    while let Some(t) = stack.pop() {
        let inner = &module.types[t].inner;
        if wanted(inner) {
            return true;
        }
        match inner {
            TypeInner::Array { element, .. } => stack.push(*element),
            TypeInner::Record(r) => stack.extend(r.fields.iter().map(|f| f.ty)),
            _ => {}
        }
    }
    false
}

/// Location span (section 12.2): matrices one per column, arrays and
/// records their recursive spans.
fn location_span(module: &Module, ty: Handle<Type>) -> u64 {
    match &module.types[ty].inner {
        TypeInner::Matrix { columns, .. } => u64::from(*columns),
        TypeInner::Array { element, length } => {
            location_span(module, *element).saturating_mul(*length)
        }
        TypeInner::Record(r) => r
            .fields
            .iter()
            .map(|f| location_span(module, f.ty))
            .fold(0u64, u64::saturating_add),
        _ => 1,
    }
}

/// Resolves the locations of one direction of `stage` (section 12.2):
/// explicit ones kept, unspecified ones allocated in list order at the
/// lowest free range. Position variables get none.
fn locations(module: &Module, stage: &Stage, direction: Direction) -> Vec<Option<u64>> {
    let mut resolved = vec![None; stage.interface.len()];
    let mut taken: Vec<(u64, u64)> = Vec::new();
    let vars = || {
        stage
            .interface
            .iter()
            .enumerate()
            .filter(move |(_, v)| v.direction == direction && v.semantic != Semantic::Position)
    };
    for (slot, var) in vars().filter(|(_, v)| v.location >= 0) {
        let start = var.location as u64;
        taken.push((start, start.saturating_add(location_span(module, var.ty))));
        resolved[slot] = Some(start);
    }
    taken.sort_unstable();
    for (slot, var) in vars().filter(|(_, v)| v.location < 0) {
        let span = location_span(module, var.ty);
        let mut candidate = 0u64;
        for &(s, e) in &taken {
            if candidate.saturating_add(span) <= s {
                break;
            }
            candidate = candidate.max(e);
        }
        let at = taken.partition_point(|r| r.0 < candidate);
        taken.insert(at, (candidate, candidate.saturating_add(span)));
        resolved[slot] = Some(candidate);
    }
    resolved
}

impl Executable {
    /// Compiles `module` (its verified snapshot and `ModuleInfo` only).
    pub fn new(module: &VerifiedModule) -> Result<Self, ExecError> {
        let m = module.module();
        let info = module.info();
        let layout = Layout::new(m, info)?;
        let mut uniform_offsets = Vec::with_capacity(m.uniforms.len());
        let mut words = 0u64;
        let mut samplers = Vec::new();
        for (slot, u) in m.uniforms.iter().enumerate() {
            uniform_offsets.push(words as u32);
            words += u64::from(layout.words(u.ty));
            if words > MAX_UNIFORM_WORDS {
                return Err(ExecError::Limit(format!(
                    "uniforms need more than the executor's {MAX_UNIFORM_WORDS} words"
                )));
            }
            let sampler = |t: &TypeInner| matches!(t, TypeInner::Sampler(_));
            if sampler(&m.types[u.ty].inner) {
                samplers.push((slot, u.name.clone()));
            } else if contains(m, u.ty, &sampler) {
                return Err(ExecError::Unsupported(format!(
                    "uniform {:?} contains a sampler inside an aggregate (section 12.4 restricts it)",
                    u.name
                )));
            }
        }
        let vertex = compile_stage(m, info, &layout, &uniform_offsets, &m.vertex)?;
        let fragment = compile_stage(m, info, &layout, &uniform_offsets, &m.fragment)?;

        let vertex_in = locations(m, &m.vertex, Direction::In);
        let mut attributes = Vec::new();
        let mut clip_offset = None;
        for (slot, var) in m.vertex.interface.iter().enumerate() {
            if var.direction == Direction::Out && var.semantic == Semantic::Position {
                clip_offset = Some(vertex.io_offsets[slot]);
            }
            let (Direction::In, Some(location)) = (var.direction, vertex_in[slot]) else {
                continue;
            };
            let (components, locations, float) = match &m.types[var.ty].inner {
                TypeInner::Scalar(k) => (1, 1, *k == ScalarKind::Float),
                TypeInner::Vector { kind, size } => {
                    (u32::from(*size), 1, *kind == ScalarKind::Float)
                }
                TypeInner::Matrix { rows, columns } => {
                    (u32::from(*rows), u32::from(*columns), true)
                }
                _ => {
                    return Err(ExecError::Unsupported(format!(
                        "vertex input {:?} is not a scalar, vector or matrix (section 12.4)",
                        var.name
                    )));
                }
            };
            attributes.push(AttributeSlot {
                io_offset: vertex.io_offsets[slot],
                location: location.min(u64::from(u32::MAX)) as u32,
                components,
                locations,
                float,
            });
        }
        let clip_offset = clip_offset
            .ok_or_else(|| ExecError::Unsupported("vertex stage without position".into()))?;

        let mut varyings = Vec::new();
        let mut frag_coord_offset = None;
        let mut color_offset = None;
        for (slot, input) in m.fragment.interface.iter().enumerate() {
            let offset = fragment.io_offsets[slot];
            if input.direction == Direction::Out {
                if input.semantic == Semantic::FragmentColor {
                    color_offset = Some(offset);
                }
                continue;
            }
            if input.semantic == Semantic::Position {
                frag_coord_offset = Some(offset);
                continue;
            }
            let linked = m.vertex.interface.iter().enumerate().find(|(_, out)| {
                out.direction == Direction::Out
                    && out.semantic != Semantic::Position
                    && if input.location == -1 {
                        out.location == -1 && out.name == input.name
                    } else {
                        out.location == input.location
                    }
            });
            let Some((vertex_slot, _)) = linked else {
                return Err(ExecError::Unsupported(format!(
                    "fragment input {:?} has no linked vertex output",
                    input.name
                )));
            };
            let flat = contains(m, input.ty, &|t| {
                matches!(t.scalar_kind(), Some(ScalarKind::Int | ScalarKind::Bool))
            });
            varyings.push(Varying {
                fragment_offset: offset,
                vertex_offset: vertex.io_offsets[vertex_slot],
                len: layout.words(input.ty),
                flat,
            });
        }
        let color_offset = color_offset.ok_or_else(|| {
            ExecError::Unsupported("fragment stage without a fragment_color output".into())
        })?;
        Ok(Executable {
            module: module.clone(),
            layout,
            uniform_offsets,
            uniform_words: words as u32,
            samplers,
            vertex,
            fragment,
            attributes,
            clip_offset,
            varyings,
            frag_coord_offset,
            color_offset,
        })
    }

    /// The sampler uniforms' names, in declaration order.
    pub fn sampler_names(&self) -> impl Iterator<Item = &str> {
        self.samplers.iter().map(|(_, n)| n.as_str())
    }

    /// The module this was compiled from.
    pub fn module(&self) -> &VerifiedModule {
        &self.module
    }
}
