//! VPL → naga IR.

use super::error::{LowerError, LowerErrorKind};
use super::layout::{self, Detail, Layout};
use crate::VerifiedModule;
use crate::ir::{
    BinaryOp, Builtin, Callee, Direction, Function, Handle, InstructionKind, Literal, Module,
    Operand, Reference, ScalarKind, SelectorKind, Semantic, Span, Stage, StageKind, StorageKind,
    TerminatorKind, Type, TypeInner, UniformKind, Value,
};
use crate::verify::{AliasRoot, ModuleInfo};
use naga::FastHashMap as HashMap;
use naga::{
    AddressSpace, Binding, Block, BuiltIn, EntryPoint, Expression, FunctionArgument,
    FunctionResult, GlobalVariable, Interpolation, LocalVariable, Range, ResourceBinding, Sampling,
    ShaderStage, Statement, StructMember, SwitchCase, SwitchValue, VectorSize,
};
use std::collections::BTreeSet;
use std::num::NonZeroU32;

/// A lowered module that naga's validator accepted.
#[derive(Debug)]
pub struct Lowered {
    /// The naga module.
    pub module: naga::Module,
    /// naga's validation result (the writers need it).
    pub info: naga::valid::ModuleInfo,
    /// Entry-point names, vertex then fragment.
    pub entry_points: [String; 2],
    /// Resolved interface locations per stage and slot (`None` for
    /// built-ins); a slot of a matrix, array or record starts there and
    /// takes `location_counts` consecutive locations.
    pub locations: [Vec<Option<u32>>; 2],
    /// Locations each interface slot takes, per stage and slot.
    pub location_counts: [Vec<u32>; 2],
    /// Resource bindings (group 0), in binding order.
    pub resources: Vec<Resource>,
}

/// One bound resource of the lowered module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The VPL uniform's slot.
    pub uniform: usize,
    /// The uniform's name.
    pub name: String,
    /// Bind group (always 0).
    pub group: u32,
    /// Binding number within the group.
    pub binding: u32,
    /// What is bound.
    pub kind: ResourceKind,
    /// The naga global.
    pub global: naga::Handle<GlobalVariable>,
}

/// The kinds of [`Resource`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceKind {
    /// A uniform buffer holding the uniform's value at offset 0 in std140
    /// layout; `size` is the buffer size (a multiple of 16).
    UniformBuffer {
        /// The value's layout.
        layout: Layout,
        /// Buffer bytes.
        size: u64,
    },
    /// The 2D float texture of a sampler uniform.
    Texture {
        /// The binding of its sampler.
        sampler_binding: u32,
    },
    /// The sampler state of a sampler uniform.
    Sampler {
        /// The binding of its texture.
        texture_binding: u32,
    },
}

fn unsupported(kind: LowerErrorKind, span: Option<Span>, message: impl Into<String>) -> LowerError {
    LowerError::new(kind, span, message)
}

/// The most elements a whole-array load from a uniform rebuilds one by
/// one (arrays whose std140 form differs from their value form).
const MAX_REBUILT_ELEMENTS: u64 = 1024;

/// The most locations one interface variable may take.
const MAX_INTERFACE_LOCATIONS: u32 = 64;

/// A lowered VPL function: the function and the uniform slot bound to
/// each of its sampler parameters (in parameter order).
type FnKey = (Handle<Function>, Vec<usize>);

/// Lowers the snapshot of `published` and validates the result.
pub fn lower(published: &VerifiedModule) -> Result<Lowered, LowerError> {
    lower_stages(published, None)
}

/// [`lower`], with the functions and entry point of stage `only` alone
/// when it is set (the interface and resources of both stages are kept,
/// so locations and bindings are those of [`lower`]).
pub(crate) fn lower_stages(
    published: &VerifiedModule,
    only: Option<StageKind>,
) -> Result<Lowered, LowerError> {
    let module = published.module();
    let info = published.info();
    // What GLSL 4.20 cannot express (section 12.4) the naga targets
    // cannot either; the same checks with the same codes come first.
    let resolved = crate::backends::glsl::target_locations(module, info).map_err(|e| {
        unsupported(
            LowerErrorKind::Restriction(e.kind),
            e.span,
            e.message.clone(),
        )
    })?;
    let mut cx = Lowering {
        module,
        info,
        out: naga::Module::default(),
        layouter: naga::proc::Layouter::default(),
        types: HashMap::default(),
        hosts: HashMap::default(),
        io: [Vec::new(), Vec::new()],
        functions: HashMap::default(),
        uniforms: Vec::new(),
        resources: Vec::new(),
        scratch: Scratch::default(),
    };
    cx.uniforms()?;
    let mut locations: [Vec<Option<u32>>; 2] = [Vec::new(), Vec::new()];
    let mut counts: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for (si, stage) in module.stages().into_iter().enumerate() {
        let per_slot = match stage.kind {
            StageKind::Vertex => &resolved.vertex,
            StageKind::Fragment => &resolved.fragment,
        };
        (locations[si], counts[si]) = cx.interface(stage, per_slot)?;
    }
    let selected = |stage: &Stage| only.is_none_or(|k| k == stage.kind);
    for (si, stage) in module.stages().into_iter().enumerate() {
        if !selected(stage) {
            continue;
        }
        let keys = cx.needed_functions(stage)?;
        for &h in info.stage(stage.kind).call_order() {
            // The keys are ordered by function first.
            for key in keys.range((h, Vec::new())..).take_while(|k| k.0 == h) {
                let lowered = cx.function(si, stage, key)?;
                let handle = cx.out.functions.append(lowered, naga::Span::UNDEFINED);
                cx.functions.insert((si, key.clone()), handle);
            }
        }
    }
    let mut entry_points = [String::new(), String::new()];
    for (si, stage) in module.stages().into_iter().enumerate() {
        let name = match stage.kind {
            StageKind::Vertex => "vpl_vertex_main",
            StageKind::Fragment => "vpl_fragment_main",
        };
        entry_points[si] = name.to_string();
        if !selected(stage) {
            continue;
        }
        let ep = cx.entry_point(si, stage, name, &locations[si])?;
        cx.out.entry_points.push(ep);
    }
    let naga_info = validate(&cx.out)?;
    Ok(Lowered {
        module: cx.out,
        info: naga_info,
        entry_points,
        locations,
        location_counts: counts,
        resources: cx.resources,
    })
}

/// naga's validator with every check and no optional capability.
pub(crate) fn validate(module: &naga::Module) -> Result<naga::valid::ModuleInfo, LowerError> {
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(module)
    .map_err(|e| {
        let mut message = format!("naga rejected the lowered module: {}", e.as_inner());
        let mut source = std::error::Error::source(e.as_inner());
        while let Some(s) = source {
            message.push_str(&format!(": {s}"));
            source = s.source();
        }
        unsupported(LowerErrorKind::Validation, None, message)
    })
}

/// How a uniform is reached in naga.
#[derive(Debug, Clone, Copy)]
enum UniformGlobal {
    /// A uniform buffer; `wrapped` when the value is member 0 of a
    /// wrapper structure (every non-record uniform).
    Buffer {
        global: naga::Handle<GlobalVariable>,
        wrapped: bool,
    },
    /// A texture + sampler pair.
    Sampler {
        image: naga::Handle<GlobalVariable>,
        sampler: naga::Handle<GlobalVariable>,
    },
}

/// The naga form of a VPL type inside a uniform buffer.
#[derive(Debug, Clone)]
struct Host {
    ty: naga::Handle<naga::Type>,
    /// For records: the naga member index of each field (padding members
    /// sit between them).
    members: Vec<u32>,
}

struct Lowering<'a> {
    module: &'a Module,
    info: &'a ModuleInfo,
    out: naga::Module,
    layouter: naga::proc::Layouter,
    types: HashMap<Handle<Type>, naga::Handle<naga::Type>>,
    /// Host forms by (type, is an array element).
    hosts: HashMap<(Handle<Type>, bool), Host>,
    /// Private global of each interface slot, per stage.
    io: [Vec<naga::Handle<GlobalVariable>>; 2],
    /// Lowered functions by stage index and key.
    functions: HashMap<(usize, FnKey), naga::Handle<naga::Function>>,
    /// How each uniform slot is reached.
    uniforms: Vec<UniformGlobal>,
    resources: Vec<Resource>,
    /// Buffers reused from function to function.
    scratch: Scratch,
}

/// Per-function working storage, kept between functions so that lowering
/// many functions does not allocate it anew each time.
#[derive(Default)]
struct Scratch {
    regs: Vec<Reg>,
    needs_local: Vec<bool>,
    assigned: Vec<u32>,
    literals: HashMap<(u8, u32), naga::Handle<Expression>>,
    pointers: HashMap<Pointee, naga::Handle<Expression>>,
}

/// A register of the function being lowered, by its dense number.
#[derive(Debug, Clone, Copy, Default)]
struct Reg {
    /// Its function-local variable, when it needs one
    /// ([`Lowering::registers_needing_locals`]).
    local: Option<naga::Handle<LocalVariable>>,
    /// Its value in the block being lowered, and how deeply that
    /// expression may nest when a writer inlines it.
    value: Option<(naga::Handle<Expression>, u32)>,
    /// The value is newer than the local.
    dirty: bool,
}

/// How deeply register values may nest before one is named (a named
/// expression becomes a `let` in the text writers): long chains of
/// single-use values would otherwise become one deeply nested expression,
/// which the writers print recursively.
const MAX_INLINE_DEPTH: u32 = 16;

/// Whether `kind` computes its result from constants alone. naga and WGSL
/// treat such an expression as a constant expression (evaluated, and
/// bounds-checked, when the shader is created), while VPL computes it at
/// run time (an out-of-range index is undefined behaviour, not an error):
/// such results go through the register's local.
fn constant_result(kind: &InstructionKind) -> bool {
    matches!(
        kind,
        InstructionKind::Copy { .. }
            | InstructionKind::Binary { .. }
            | InstructionKind::Construct { .. }
            | InstructionKind::Swizzle { .. }
            | InstructionKind::Member { .. }
            | InstructionKind::Index { .. }
    ) && !kind
        .operands_iter()
        .any(|op| matches!(op.value, Value::Register(_)))
}

/// Per parameter slot: whether the function only reads the parameter
/// whole (never stores to it, never selects into it), so that its value is
/// the function argument itself and it needs no local copy.
fn direct_parameters(f: &Function) -> Vec<bool> {
    let mut direct = vec![true; f.parameters.len()];
    for block in f.blocks.as_slice() {
        for instruction in &block.instructions {
            let (r, whole_read) = match &instruction.kind {
                InstructionKind::Load { source, .. } => (source, source.path.is_empty()),
                InstructionKind::Store { target, .. } => (target, false),
                _ => continue,
            };
            if r.storage == StorageKind::Parameter
                && !whole_read
                && let Some(d) = usize::try_from(r.slot).ok().and_then(|i| direct.get_mut(i))
            {
                *d = false;
            }
        }
    }
    direct
}

fn scalar(kind: ScalarKind) -> naga::Scalar {
    match kind {
        ScalarKind::Bool => naga::Scalar::BOOL,
        ScalarKind::Int => naga::Scalar::I32,
        ScalarKind::Float => naga::Scalar::F32,
    }
}

/// The scalar that stores `kind` in a uniform buffer (Booleans as `u32`).
fn host_scalar(kind: ScalarKind) -> naga::Scalar {
    match kind {
        ScalarKind::Bool => naga::Scalar::U32,
        k => scalar(k),
    }
}

fn vector_size(n: u8) -> Option<VectorSize> {
    match n {
        2 => Some(VectorSize::Bi),
        3 => Some(VectorSize::Tri),
        4 => Some(VectorSize::Quad),
        _ => None,
    }
}

impl Lowering<'_> {
    fn span_of(&self, ty: Handle<Type>) -> Option<Span> {
        self.module.types.get(ty).and_then(|t| t.span)
    }

    fn insert(&mut self, name: Option<String>, inner: naga::TypeInner) -> naga::Handle<naga::Type> {
        self.out
            .types
            .insert(naga::Type { name, inner }, naga::Span::UNDEFINED)
    }

    /// Natural (WGSL) size and alignment of a naga type.
    fn natural(&mut self, ty: naga::Handle<naga::Type>) -> Result<(u32, u32), LowerError> {
        self.layouter.update(self.out.to_ctx()).map_err(|e| {
            unsupported(
                LowerErrorKind::UnsupportedType,
                None,
                format!("a type is too large for the naga targets: {e}"),
            )
        })?;
        let l = self.layouter[ty];
        Ok((l.size, l.alignment.round_up(1)))
    }

    fn bad_type(&self, ty: Handle<Type>, what: &str) -> LowerError {
        unsupported(
            LowerErrorKind::UnsupportedType,
            self.span_of(ty),
            format!("{what} cannot be lowered to the naga targets"),
        )
    }

    fn array_size(&self, ty: Handle<Type>, length: u64) -> Result<NonZeroU32, LowerError> {
        u32::try_from(length)
            .ok()
            .and_then(NonZeroU32::new)
            .ok_or_else(|| self.bad_type(ty, "an array longer than u32::MAX elements"))
    }

    /// The naga type of a VPL value type (registers, parameters,
    /// interface variables).
    fn ty(&mut self, ty: Handle<Type>) -> Result<naga::Handle<naga::Type>, LowerError> {
        if let Some(&h) = self.types.get(&ty) {
            return Ok(h);
        }
        let inner = match self.module.types.inner(ty).cloned() {
            Some(TypeInner::Scalar(k)) => naga::TypeInner::Scalar(scalar(k)),
            Some(TypeInner::Vector { kind, size }) => naga::TypeInner::Vector {
                size: vector_size(size).ok_or_else(|| self.bad_type(ty, "an odd-sized vector"))?,
                scalar: scalar(kind),
            },
            Some(TypeInner::Matrix { rows, columns }) => naga::TypeInner::Matrix {
                columns: vector_size(columns)
                    .ok_or_else(|| self.bad_type(ty, "an odd-sized matrix"))?,
                rows: vector_size(rows).ok_or_else(|| self.bad_type(ty, "an odd-sized matrix"))?,
                scalar: naga::Scalar::F32,
            },
            Some(TypeInner::Array { element, length }) => {
                let base = self.ty(element)?;
                let size = self.array_size(ty, length)?;
                let (bytes, align) = self.natural(base)?;
                let stride = bytes.div_ceil(align) * align;
                naga::TypeInner::Array {
                    base,
                    size: naga::ArraySize::Constant(size),
                    stride,
                }
            }
            Some(TypeInner::Record(record)) => {
                if record.fields.is_empty() {
                    return Err(self.bad_type(ty, "an empty record"));
                }
                let mut members = Vec::with_capacity(record.fields.len());
                let (mut offset, mut max_align) = (0u32, 1u32);
                for (i, field) in record.fields.iter().enumerate() {
                    let fty = self.ty(field.ty)?;
                    let (bytes, align) = self.natural(fty)?;
                    offset = offset.div_ceil(align) * align;
                    members.push(StructMember {
                        name: Some(format!("m{i}")),
                        ty: fty,
                        binding: None,
                        offset,
                    });
                    offset = offset
                        .checked_add(bytes)
                        .ok_or_else(|| self.bad_type(ty, "a record over 4 GiB"))?;
                    max_align = max_align.max(align);
                }
                let span = offset.div_ceil(max_align) * max_align;
                let name = format!("VplRecord{}", ty.index());
                let h = self.insert(Some(name), naga::TypeInner::Struct { members, span });
                self.types.insert(ty, h);
                return Ok(h);
            }
            Some(TypeInner::Sampler(_)) => return Err(self.bad_type(ty, "a sampler value")),
            Some(TypeInner::Void) | None => return Err(self.bad_type(ty, "void")),
        };
        let h = self.insert(None, inner);
        self.types.insert(ty, h);
        Ok(h)
    }

    /// The form of `ty` inside a uniform buffer, shaped so that its natural
    /// layout is the std140 layout (`element`: as an array element).
    fn host(&mut self, ty: Handle<Type>, element: bool) -> Result<Host, LowerError> {
        if let Some(h) = self.hosts.get(&(ty, element)) {
            return Ok(h.clone());
        }
        let plain = |ty| Host {
            ty,
            members: Vec::new(),
        };
        let host = match self.module.types.inner(ty).cloned() {
            Some(TypeInner::Scalar(k)) if element => plain(self.insert(
                None,
                naga::TypeInner::Vector {
                    size: VectorSize::Quad,
                    scalar: host_scalar(k),
                },
            )),
            Some(TypeInner::Scalar(k)) => {
                plain(self.insert(None, naga::TypeInner::Scalar(host_scalar(k))))
            }
            Some(TypeInner::Vector { kind, size }) => {
                let size = if element && size == 2 {
                    VectorSize::Quad
                } else {
                    vector_size(size).ok_or_else(|| self.bad_type(ty, "an odd-sized vector"))?
                };
                plain(self.insert(
                    None,
                    naga::TypeInner::Vector {
                        size,
                        scalar: host_scalar(kind),
                    },
                ))
            }
            Some(TypeInner::Matrix { rows: 2, columns }) => {
                // std140 puts matrix columns 16 bytes apart.
                let column = self.insert(
                    None,
                    naga::TypeInner::Vector {
                        size: VectorSize::Quad,
                        scalar: naga::Scalar::F32,
                    },
                );
                let size = self.array_size(ty, u64::from(columns))?;
                plain(self.insert(
                    None,
                    naga::TypeInner::Array {
                        base: column,
                        size: naga::ArraySize::Constant(size),
                        stride: 16,
                    },
                ))
            }
            Some(TypeInner::Matrix { .. }) => plain(self.ty(ty)?),
            Some(TypeInner::Array { element: e, length }) => {
                let base = self.host(e, true)?.ty;
                let size = self.array_size(ty, length)?;
                let stride = layout::std140(self.module, ty)
                    .and_then(|l| match l.detail {
                        Detail::Array { stride, .. } => u32::try_from(stride).ok(),
                        _ => None,
                    })
                    .ok_or_else(|| self.bad_type(ty, "a uniform array over 4 GiB"))?;
                plain(self.insert(
                    None,
                    naga::TypeInner::Array {
                        base,
                        size: naga::ArraySize::Constant(size),
                        stride,
                    },
                ))
            }
            Some(TypeInner::Record(record)) => {
                let layout = layout::std140(self.module, ty)
                    .ok_or_else(|| self.bad_type(ty, "a uniform record over 4 GiB"))?;
                let Detail::Record { fields } = &layout.detail else {
                    return Err(self.bad_type(ty, "a record without a record layout"));
                };
                let pad = self.insert(None, naga::TypeInner::Scalar(naga::Scalar::U32));
                let mut members = Vec::new();
                let mut indices = Vec::with_capacity(fields.len());
                let mut end = 0u64;
                let mut pads = 0usize;
                let mut fill = |members: &mut Vec<StructMember>, from: u64, to: u64| {
                    let mut at = from;
                    while at < to {
                        members.push(StructMember {
                            name: Some(format!("pad{pads}")),
                            ty: pad,
                            binding: None,
                            offset: at as u32,
                        });
                        pads += 1;
                        at += 4;
                    }
                };
                for (i, (field, (offset, fl))) in record.fields.iter().zip(fields).enumerate() {
                    let fty = self.host(field.ty, false)?.ty;
                    fill(&mut members, end, *offset);
                    indices.push(members.len() as u32);
                    members.push(StructMember {
                        name: Some(format!("m{i}")),
                        ty: fty,
                        binding: None,
                        offset: *offset as u32,
                    });
                    end = offset + fl.size;
                }
                fill(&mut members, end, layout.size);
                let name = format!("VplHostRecord{}", ty.index());
                Host {
                    ty: self.insert(
                        Some(name),
                        naga::TypeInner::Struct {
                            members,
                            span: layout.size as u32,
                        },
                    ),
                    members: indices,
                }
            }
            Some(TypeInner::Sampler(_)) => return Err(self.bad_type(ty, "a sampler in a buffer")),
            Some(TypeInner::Void) | None => return Err(self.bad_type(ty, "void")),
        };
        self.hosts.insert((ty, element), host.clone());
        Ok(host)
    }

    /// Globals and bindings for the uniforms, in slot order: a uniform
    /// buffer per value uniform, a texture and a sampler per sampler
    /// uniform.
    fn uniforms(&mut self) -> Result<(), LowerError> {
        let mut binding = 0u32;
        for (slot, u) in self.module.uniforms.iter().enumerate() {
            if matches!(self.module.types.inner(u.ty), Some(TypeInner::Sampler(_))) {
                let image_ty = self.insert(
                    None,
                    naga::TypeInner::Image {
                        dim: naga::ImageDimension::D2,
                        arrayed: false,
                        class: naga::ImageClass::Sampled {
                            kind: naga::ScalarKind::Float,
                            multi: false,
                        },
                    },
                );
                let sampler_ty = self.insert(None, naga::TypeInner::Sampler { comparison: false });
                let mut global = |name: String, ty, binding| {
                    self.out.global_variables.append(
                        GlobalVariable {
                            name: Some(name),
                            space: AddressSpace::Handle,
                            binding: Some(ResourceBinding { group: 0, binding }),
                            ty,
                            init: None,
                            memory_decorations: Default::default(),
                        },
                        naga::Span::UNDEFINED,
                    )
                };
                let image = global(format!("vpl_texture{slot}"), image_ty, binding);
                let sampler = global(format!("vpl_sampler{slot}"), sampler_ty, binding + 1);
                self.uniforms
                    .push(UniformGlobal::Sampler { image, sampler });
                self.resources.push(Resource {
                    uniform: slot,
                    name: u.name.clone(),
                    group: 0,
                    binding,
                    kind: ResourceKind::Texture {
                        sampler_binding: binding + 1,
                    },
                    global: image,
                });
                self.resources.push(Resource {
                    uniform: slot,
                    name: u.name.clone(),
                    group: 0,
                    binding: binding + 1,
                    kind: ResourceKind::Sampler {
                        texture_binding: binding,
                    },
                    global: sampler,
                });
                binding += 2;
                continue;
            }
            let layout = layout::std140(self.module, u.ty).ok_or_else(|| {
                unsupported(
                    LowerErrorKind::UnsupportedUniform,
                    u.span,
                    format!("uniform {:?} has no std140 layout within 4 GiB", u.name),
                )
            })?;
            let size = layout.size.div_ceil(16).max(1) * 16;
            let record = u.kind == UniformKind::Record
                && matches!(self.module.types.inner(u.ty), Some(TypeInner::Record(_)));
            let (ty, wrapped) = if record {
                (self.host(u.ty, false)?.ty, false)
            } else {
                let value = self.host(u.ty, false)?.ty;
                let pad = self.insert(None, naga::TypeInner::Scalar(naga::Scalar::U32));
                let mut members = vec![StructMember {
                    name: Some("value".into()),
                    ty: value,
                    binding: None,
                    offset: 0,
                }];
                let mut at = layout.size;
                while at < size {
                    members.push(StructMember {
                        name: Some(format!("pad{}", members.len() - 1)),
                        ty: pad,
                        binding: None,
                        offset: at as u32,
                    });
                    at += 4;
                }
                let wrapper = self.insert(
                    Some(format!("VplUniform{slot}")),
                    naga::TypeInner::Struct {
                        members,
                        span: size as u32,
                    },
                );
                (wrapper, true)
            };
            let global = self.out.global_variables.append(
                GlobalVariable {
                    name: Some(format!("vpl_uniform{slot}")),
                    space: AddressSpace::Uniform,
                    binding: Some(ResourceBinding { group: 0, binding }),
                    ty,
                    init: None,
                    memory_decorations: Default::default(),
                },
                naga::Span::UNDEFINED,
            );
            self.uniforms
                .push(UniformGlobal::Buffer { global, wrapped });
            self.resources.push(Resource {
                uniform: slot,
                name: u.name.clone(),
                group: 0,
                binding,
                kind: ResourceKind::UniformBuffer { layout, size },
                global,
            });
            binding += 1;
        }
        Ok(())
    }

    fn is_void(&self, ty: Handle<Type>) -> bool {
        matches!(self.module.types.inner(ty), Some(TypeInner::Void))
    }

    fn is_sampler(&self, ty: Handle<Type>) -> bool {
        matches!(self.module.types.inner(ty), Some(TypeInner::Sampler(_)))
    }

    /// The functions to lower, each with the uniforms its sampler
    /// parameters alias (a helper called with two different samplers is
    /// lowered twice: naga's GLSL writer binds textures to globals only).
    /// A helper with sampler parameters that nothing calls is not lowered.
    fn needed_functions(&self, stage: &Stage) -> Result<BTreeSet<FnKey>, LowerError> {
        let facts = self.info.stage(stage.kind);
        let entry = stage.entry.ok_or_else(|| {
            unsupported(LowerErrorKind::Validation, None, "a stage without an entry")
        })?;
        let mut seen = BTreeSet::new();
        // Every function without sampler parameters (as the GLSL backend
        // emits every function), and what they call.
        let mut stack: Vec<FnKey> = vec![(entry, Vec::new())];
        for (h, f) in stage.functions.iter() {
            if !f.parameters.iter().any(|p| self.is_sampler(p.ty)) {
                stack.push((h, Vec::new()));
            }
        }
        while let Some(key) = stack.pop() {
            if !seen.insert(key.clone()) {
                continue;
            }
            let (h, bound) = &key;
            let f = &stage.functions[*h];
            let chains = facts.function(*h).map(|i| i.samplers());
            for block in f.blocks.as_slice() {
                for instruction in &block.instructions {
                    let InstructionKind::Call {
                        callee: Callee::Function(c),
                        arguments,
                        ..
                    } = &instruction.kind
                    else {
                        continue;
                    };
                    let c = *c;
                    let callee = &stage.functions[c];
                    let mut slots = Vec::new();
                    for (p, a) in callee.parameters.iter().zip(arguments) {
                        if !self.is_sampler(p.ty) {
                            continue;
                        }
                        let slot = sampler_slot_of(
                            self.module,
                            f,
                            bound,
                            chains.and_then(|c| root_of(c, a)),
                        )
                        .ok_or_else(|| {
                            unsupported(
                                LowerErrorKind::Validation,
                                instruction.span,
                                "a sampler argument without a resolved uniform",
                            )
                        })?;
                        slots.push(slot);
                    }
                    stack.push((c, slots));
                }
            }
        }
        Ok(seen)
    }

    /// Private globals for the stage's interface; returns the locations
    /// (`None` for the position built-in) from the section 12.2 rules and
    /// how many each slot takes.
    fn interface(
        &mut self,
        stage: &Stage,
        resolved: &[i32],
    ) -> Result<(Vec<Option<u32>>, Vec<u32>), LowerError> {
        let si = stage_index(stage.kind);
        let mut locations = Vec::with_capacity(stage.interface.len());
        let mut counts = Vec::with_capacity(stage.interface.len());
        for (slot, var) in stage.interface.iter().enumerate() {
            let ty = self.ty(var.ty).map_err(|mut e| {
                e.span = var.span.or(e.span);
                e
            })?;
            let bad = |m: String| unsupported(LowerErrorKind::UnsupportedInterface, var.span, m);
            let leaves = self
                .leaves(var.ty)
                .ok_or_else(|| {
                    bad(format!(
                        "interface variable {:?} holds a Boolean or opaque value; stage interfaces carry numbers only",
                        var.name
                    ))
                })?;
            let count = u32::try_from(leaves.len()).unwrap_or(u32::MAX);
            if count > MAX_INTERFACE_LOCATIONS {
                return Err(bad(format!(
                    "interface variable {:?} takes more than {MAX_INTERFACE_LOCATIONS} locations, the most the naga targets allow",
                    var.name
                )));
            }
            let location = match var.semantic {
                Semantic::Position => None,
                _ => match resolved.get(slot).and_then(|&l| u32::try_from(l).ok()) {
                    Some(l) => Some(l),
                    None => {
                        return Err(bad(format!(
                            "interface variable {:?} has no location",
                            var.name
                        )));
                    }
                },
            };
            let name = format!("vpl_{}_s{slot}", stage.kind.keyword());
            let g = self.out.global_variables.append(
                GlobalVariable {
                    name: Some(name),
                    space: AddressSpace::Private,
                    binding: None,
                    ty,
                    init: None,
                    memory_decorations: Default::default(),
                },
                naga::Span::UNDEFINED,
            );
            self.io[si].push(g);
            locations.push(location);
            counts.push(count);
        }
        Ok((locations, counts))
    }

    /// The scalar/vector leaves of an interface type, one per location in
    /// location order: the access path and the leaf's scalar kind and
    /// size. `None` when a leaf is Boolean or opaque.
    fn leaves(&self, ty: Handle<Type>) -> Option<Vec<(Vec<u32>, ScalarKind, u8)>> {
        let mut out = Vec::new();
        let mut stack = vec![(ty, Vec::new())];
        // Depth-first in field/element order: push children reversed.
        while let Some((ty, path)) = stack.pop() {
            match self.module.types.inner(ty)? {
                TypeInner::Scalar(ScalarKind::Bool)
                | TypeInner::Vector {
                    kind: ScalarKind::Bool,
                    ..
                } => {
                    return None;
                }
                TypeInner::Scalar(k) => out.push((path, *k, 1)),
                TypeInner::Vector { kind, size } => out.push((path, *kind, *size)),
                TypeInner::Matrix { rows, columns } => {
                    for c in 0..u32::from(*columns) {
                        let mut p = path.clone();
                        p.push(c);
                        out.push((p, ScalarKind::Float, *rows));
                    }
                }
                TypeInner::Array { element, length } => {
                    if *length > u64::from(MAX_INTERFACE_LOCATIONS) {
                        // Reported by the caller as too many locations.
                        return Some(vec![
                            (Vec::new(), ScalarKind::Float, 1);
                            1 + MAX_INTERFACE_LOCATIONS as usize
                        ]);
                    }
                    for i in (0..*length as u32).rev() {
                        let mut p = path.clone();
                        p.push(i);
                        stack.push((*element, p));
                    }
                }
                TypeInner::Record(r) => {
                    for i in (0..r.fields.len() as u32).rev() {
                        let mut p = path.clone();
                        p.push(i);
                        stack.push((r.fields[i as usize].ty, p));
                    }
                }
                TypeInner::Sampler(_) | TypeInner::Void => return None,
            }
            if out.len() > MAX_INTERFACE_LOCATIONS as usize {
                break;
            }
        }
        Some(out)
    }

    fn function(
        &mut self,
        si: usize,
        stage: &Stage,
        key: &FnKey,
    ) -> Result<naga::Function, LowerError> {
        let (h, bound) = key;
        let f = &stage.functions[*h];
        let suffix: String = bound.iter().map(|s| format!("_u{s}")).collect();
        let mut out = naga::Function {
            name: Some(format!(
                "vpl_{}_f{}{suffix}",
                stage.kind.keyword(),
                h.index()
            )),
            ..Default::default()
        };
        if !self.is_void(f.return_type) {
            out.result = Some(FunctionResult {
                ty: self.ty(f.return_type)?,
                binding: None,
            });
        }
        let mut body = Block::new();
        let fi = self.info.stage(stage.kind).function(*h).ok_or_else(|| {
            unsupported(
                LowerErrorKind::Validation,
                f.span,
                "a function without verification facts",
            )
        })?;
        let direct = direct_parameters(f);
        let mut params = Vec::with_capacity(f.parameters.len());
        let mut args = Vec::with_capacity(f.parameters.len());
        let mut copies = Vec::new();
        for (slot, p) in f.parameters.iter().enumerate() {
            if self.is_sampler(p.ty) {
                params.push(None);
                args.push(None);
                continue;
            }
            let ty = self.ty(p.ty)?;
            let arg = out.arguments.len() as u32;
            out.arguments.push(FunctionArgument {
                name: Some(format!("vpl_p{slot}")),
                ty,
                binding: None,
            });
            if direct.get(slot).copied().unwrap_or(false) {
                // Only read whole: the argument itself is the value.
                params.push(None);
                args.push(Some(
                    out.expressions
                        .append(Expression::FunctionArgument(arg), naga::Span::UNDEFINED),
                ));
                continue;
            }
            let local = out.local_variables.append(
                LocalVariable {
                    name: Some(format!("vpl_p{slot}_local")),
                    ty,
                    init: None,
                },
                naga::Span::UNDEFINED,
            );
            copies.push((arg, local));
            params.push(Some(local));
            args.push(None);
        }
        let mut regs = std::mem::take(&mut self.scratch.regs);
        regs.clear();
        regs.resize(fi.register_count(), Reg::default());
        let needs_local = self.registers_needing_locals(f, fi)?;
        for d in f.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = &d.kind {
                if self.is_sampler(register.ty) {
                    continue;
                }
                let Some(n) = fi.register_number(register.index) else {
                    return Err(unsupported(
                        LowerErrorKind::Validation,
                        d.span,
                        "a register without a number",
                    ));
                };
                if !needs_local.get(n as usize).copied().unwrap_or(true) {
                    continue;
                }
                let ty = self.ty(register.ty).map_err(|mut e| {
                    e.span = e.span.or(d.span);
                    e
                })?;
                let local = out.local_variables.append(
                    LocalVariable {
                        name: Some(format!("vpl_r{}", { register.index })),
                        ty,
                        init: None,
                    },
                    naga::Span::UNDEFINED,
                );
                if let Some(r) = regs.get_mut(n as usize) {
                    r.local = Some(local);
                }
            }
        }
        self.scratch.needs_local = needs_local;
        let int = self.insert(None, naga::TypeInner::Scalar(naga::Scalar::I32));
        let mut literals = std::mem::take(&mut self.scratch.literals);
        literals.clear();
        let mut pointers = std::mem::take(&mut self.scratch.pointers);
        pointers.clear();
        let mut fb = FnBuilder {
            cx: self,
            si,
            stage,
            function: f,
            info: fi,
            bound: bound.clone(),
            samplers: Some(fi.samplers()),
            f: out,
            regs,
            touched: Vec::new(),
            depth: 0,
            first_new: 0,
            constant: false,
            literals,
            pointers,
            params,
            args,
            selector: None,
            discard_exit: None,
        };
        for (arg, local) in copies {
            let arg = fb.expr(&mut body, Expression::FunctionArgument(arg));
            let ptr = fb.local_ptr(local);
            body.push(
                Statement::Store {
                    pointer: ptr,
                    value: arg,
                },
                naga::Span::UNDEFINED,
            );
        }
        let blocks = f.blocks.as_slice();
        let straight = blocks.len() == 1
            && matches!(
                blocks[0].terminator.as_ref().map(|t| &t.kind),
                Some(TerminatorKind::Return { .. } | TerminatorKind::Discard)
            );
        if straight {
            fb.block(&mut body, &blocks[0])?;
        } else {
            let selector = fb.f.local_variables.append(
                LocalVariable {
                    name: Some("vpl_block".into()),
                    ty: int,
                    init: None,
                },
                naga::Span::UNDEFINED,
            );
            fb.selector = Some(selector);
            let helper = stage.entry != Some(*h);
            let discards = blocks.iter().any(|b| {
                matches!(
                    b.terminator.as_ref().map(|t| &t.kind),
                    Some(TerminatorKind::Discard)
                )
            });
            if helper && discards {
                fb.discard_exit = Some(DISCARD_EXIT);
            }
            let zero = fb.literal(naga::Literal::I32(0));
            let ptr = fb.local_ptr(selector);
            body.push(
                Statement::Store {
                    pointer: ptr,
                    value: zero,
                },
                naga::Span::UNDEFINED,
            );
            let mut loop_body = Block::new();
            let ptr = fb.local_ptr(selector);
            let value = fb.expr(&mut loop_body, Expression::Load { pointer: ptr });
            let mut cases = Vec::with_capacity(blocks.len() + 1);
            for (index, block) in blocks.iter().enumerate() {
                let mut case = Block::new();
                fb.block(&mut case, block)?;
                cases.push(SwitchCase {
                    value: SwitchValue::I32(index as i32),
                    body: case,
                    fall_through: false,
                });
            }
            let mut default = Block::new();
            let fallback =
                fb.f.result
                    .as_ref()
                    .map(|r| r.ty)
                    .map(|ty| fb.expr(&mut default, Expression::ZeroValue(ty)));
            default.push(Statement::Return { value: fallback }, naga::Span::UNDEFINED);
            cases.push(SwitchCase {
                value: SwitchValue::Default,
                body: default,
                fall_through: false,
            });
            loop_body.push(
                Statement::Switch {
                    selector: value,
                    cases,
                },
                naga::Span::UNDEFINED,
            );
            let mut continuing = Block::new();
            let mut break_if = None;
            let mut after_loop = Block::new();
            if let Some(exit) = fb.discard_exit {
                // The loop ends when a block discarded; the kill follows.
                let exit = fb.literal(naga::Literal::I32(exit));
                let ptr = fb.local_ptr(selector);
                let value = fb.expr(&mut continuing, Expression::Load { pointer: ptr });
                break_if = Some(fb.expr(
                    &mut continuing,
                    Expression::Binary {
                        op: naga::BinaryOperator::Equal,
                        left: value,
                        right: exit,
                    },
                ));
                let value = fb.expr(&mut after_loop, Expression::Load { pointer: ptr });
                let discarded = fb.expr(
                    &mut after_loop,
                    Expression::Binary {
                        op: naga::BinaryOperator::Equal,
                        left: value,
                        right: exit,
                    },
                );
                let mut kill = Block::new();
                kill.push(Statement::Kill, naga::Span::UNDEFINED);
                after_loop.push(
                    Statement::If {
                        condition: discarded,
                        accept: kill,
                        reject: Block::new(),
                    },
                    naga::Span::UNDEFINED,
                );
            }
            body.push(
                Statement::Loop {
                    body: loop_body,
                    continuing,
                    break_if,
                },
                naga::Span::UNDEFINED,
            );
            body.append(&mut after_loop);
            // Unreachable, but WGSL readers require a non-void function
            // to end in a return.
            if let Some(ty) = fb.f.result.as_ref().map(|r| r.ty) {
                let zero = fb.expr(&mut body, Expression::ZeroValue(ty));
                body.push(
                    Statement::Return { value: Some(zero) },
                    naga::Span::UNDEFINED,
                );
            }
        }
        let FnBuilder {
            f: mut lowered,
            regs,
            literals,
            pointers,
            ..
        } = fb;
        self.scratch.regs = regs;
        self.scratch.literals = literals;
        self.scratch.pointers = pointers;
        lowered.body = body;
        Ok(lowered)
    }

    /// Which registers (by number) need a function-local variable: those
    /// read in a block before that block assigns them (their value comes
    /// from another block or an earlier loop iteration) and those used as
    /// storage through a reference. Every other register lives only as
    /// naga expressions within the block that assigns it.
    fn registers_needing_locals(
        &mut self,
        f: &Function,
        fi: &crate::verify::FunctionInfo,
    ) -> Result<Vec<bool>, LowerError> {
        let count = fi.register_count();
        let mut needs = std::mem::take(&mut self.scratch.needs_local);
        needs.clear();
        needs.resize(count, false);
        // `assigned[n] == stamp`: assigned earlier in the current block.
        let mut assigned = std::mem::take(&mut self.scratch.assigned);
        assigned.clear();
        assigned.resize(count, 0);
        let number = |index: u64, span: Option<Span>| {
            fi.register_number(index)
                .map(|n| n as usize)
                .filter(|&n| n < count)
                .ok_or_else(|| {
                    unsupported(
                        LowerErrorKind::Validation,
                        span,
                        format!("register r{index} is not declared"),
                    )
                })
        };
        let read = |needs: &mut Vec<bool>, assigned: &[u32], stamp, op: &Operand| {
            if let Value::Register(r) = op.value {
                let n = number(r.index, op.span)?;
                if assigned[n] != stamp {
                    needs[n] = true;
                }
            }
            Ok::<(), LowerError>(())
        };
        for (stamp, block) in (1u32..).zip(f.blocks.as_slice()) {
            for instruction in &block.instructions {
                let kind = &instruction.kind;
                for op in kind.operands_iter() {
                    read(&mut needs, &assigned, stamp, op)?;
                }
                if let Some(r) = kind.references() {
                    for s in &r.path {
                        if let SelectorKind::Index(op) = &s.kind {
                            read(&mut needs, &assigned, stamp, op)?;
                        }
                    }
                    if r.storage == StorageKind::Local {
                        needs[number(r.slot, r.span)?] = true;
                    }
                }
                if let Some(r) = kind.result() {
                    let n = number(r.index, instruction.span)?;
                    assigned[n] = stamp;
                    if constant_result(kind) {
                        needs[n] = true;
                    }
                }
            }
            if let Some(t) = &block.terminator {
                match &t.kind {
                    TerminatorKind::BranchIf { condition, .. } => {
                        read(&mut needs, &assigned, stamp, condition)?
                    }
                    TerminatorKind::Return { value: Some(v) } => {
                        read(&mut needs, &assigned, stamp, v)?
                    }
                    _ => {}
                }
            }
        }
        self.scratch.assigned = assigned;
        Ok(needs)
    }

    fn entry_point(
        &mut self,
        si: usize,
        stage: &Stage,
        name: &str,
        locations: &[Option<u32>],
    ) -> Result<EntryPoint, LowerError> {
        let mut f = naga::Function {
            name: Some(name.to_string()),
            ..Default::default()
        };
        let mut body = Block::new();
        let mut members = Vec::new();
        let mut outputs: Vec<(naga::Handle<GlobalVariable>, Vec<u32>)> = Vec::new();
        let vertex = stage.kind == StageKind::Vertex;
        for (slot, var) in stage.interface.iter().enumerate() {
            let global = self.io[si][slot];
            let varying = (vertex && var.direction == Direction::Out)
                || (!vertex && var.direction == Direction::In);
            let leaves = self.leaves(var.ty).unwrap_or_default();
            let base = locations.get(slot).copied().flatten();
            for (i, (path, kind, size)) in leaves.into_iter().enumerate() {
                let ty = self.insert(
                    None,
                    match vector_size(size) {
                        Some(size) => naga::TypeInner::Vector {
                            size,
                            scalar: scalar(kind),
                        },
                        None => naga::TypeInner::Scalar(scalar(kind)),
                    },
                );
                let binding = match (var.semantic, base) {
                    (Semantic::Position, _) | (_, None) => {
                        Binding::BuiltIn(BuiltIn::Position { invariant: false })
                    }
                    (_, Some(base)) => {
                        let (interpolation, sampling) = match (varying, kind) {
                            (false, _) => (None, None),
                            (true, ScalarKind::Int) => (Some(Interpolation::Flat), None),
                            (true, _) => (Some(Interpolation::Perspective), Some(Sampling::Center)),
                        };
                        Binding::Location {
                            location: base + i as u32,
                            interpolation,
                            sampling,
                            blend_src: None,
                            per_primitive: false,
                        }
                    }
                };
                match var.direction {
                    Direction::In => {
                        let index = f.arguments.len() as u32;
                        f.arguments.push(FunctionArgument {
                            name: Some(format!("vpl_in{slot}_{i}")),
                            ty,
                            binding: Some(binding),
                        });
                        let arg = push(&mut f, &mut body, Expression::FunctionArgument(index));
                        let mut ptr = push(&mut f, &mut body, Expression::GlobalVariable(global));
                        for &index in &path {
                            ptr = push(
                                &mut f,
                                &mut body,
                                Expression::AccessIndex { base: ptr, index },
                            );
                        }
                        body.push(
                            Statement::Store {
                                pointer: ptr,
                                value: arg,
                            },
                            naga::Span::UNDEFINED,
                        );
                    }
                    Direction::Out => {
                        members.push(StructMember {
                            name: Some(format!("vpl_out{slot}_{i}")),
                            ty,
                            binding: Some(binding),
                            offset: 0,
                        });
                        outputs.push((global, path));
                    }
                }
            }
        }
        let entry = stage
            .entry
            .and_then(|e| self.functions.get(&(si, (e, Vec::new()))).copied())
            .ok_or_else(|| {
                unsupported(
                    LowerErrorKind::Validation,
                    None,
                    "the stage's entry was not lowered",
                )
            })?;
        body.push(
            Statement::Call {
                function: entry,
                arguments: Vec::new(),
                result: None,
            },
            naga::Span::UNDEFINED,
        );
        // Interface structures are not host-shareable; only distinct
        // offsets matter, 16 bytes apart fit every leaf.
        for (i, m) in members.iter_mut().enumerate() {
            m.offset = 16 * i as u32;
        }
        let span = 16 * members.len() as u32;
        let result_ty = self.insert(
            Some(format!("VplOutput{}", stage.kind.keyword())),
            naga::TypeInner::Struct { members, span },
        );
        let mut components = Vec::with_capacity(outputs.len());
        for (g, path) in outputs {
            let mut ptr = push(&mut f, &mut body, Expression::GlobalVariable(g));
            for index in path {
                ptr = push(
                    &mut f,
                    &mut body,
                    Expression::AccessIndex { base: ptr, index },
                );
            }
            components.push(push(&mut f, &mut body, Expression::Load { pointer: ptr }));
        }
        let result = push(
            &mut f,
            &mut body,
            Expression::Compose {
                ty: result_ty,
                components,
            },
        );
        body.push(
            Statement::Return {
                value: Some(result),
            },
            naga::Span::UNDEFINED,
        );
        f.result = Some(FunctionResult {
            ty: result_ty,
            binding: None,
        });
        f.body = body;
        Ok(EntryPoint {
            name: name.to_string(),
            stage: match stage.kind {
                StageKind::Vertex => ShaderStage::Vertex,
                StageKind::Fragment => ShaderStage::Fragment,
            },
            early_depth_test: None,
            workgroup_size: [0, 0, 0],
            workgroup_size_overrides: None,
            function: f,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        })
    }
}

/// The root a sampler operand aliases, from verification's chains.
fn root_of(chains: &crate::verify::SamplerChains, operand: &Operand) -> Option<AliasRoot> {
    match operand.value {
        Value::Register(r) => chains.root(r.index),
        Value::Constant(_) => None,
    }
}

fn stage_index(kind: StageKind) -> usize {
    match kind {
        StageKind::Vertex => 0,
        StageKind::Fragment => 1,
    }
}

/// Appends `e` to `f`'s expressions, with the `Emit` naga requires for
/// expressions that are evaluated where they stand.
fn push(f: &mut naga::Function, block: &mut Block, e: Expression) -> naga::Handle<Expression> {
    let needs_emit = !matches!(
        e,
        Expression::Literal(_)
            | Expression::Constant(_)
            | Expression::ZeroValue(_)
            | Expression::FunctionArgument(_)
            | Expression::GlobalVariable(_)
            | Expression::LocalVariable(_)
            | Expression::CallResult(_)
    );
    let h = f.expressions.append(e, naga::Span::UNDEFINED);
    if needs_emit {
        // Extend the block's last statement when it emits the expression
        // just before this one: one `Emit` per run of expressions.
        if let Some(Statement::Emit(range)) = block.last_mut()
            && let Some((first, last)) = range.first_and_last()
            && last.index() + 1 == h.index()
        {
            *range = Range::new_from_bounds(first, h);
        } else {
            block.push(
                Statement::Emit(Range::new_from_bounds(h, h)),
                naga::Span::UNDEFINED,
            );
        }
    }
    h
}

struct FnBuilder<'a, 'b> {
    cx: &'a mut Lowering<'b>,
    si: usize,
    stage: &'a Stage,
    function: &'a Function,
    /// Uniform slots bound to the sampler parameters.
    bound: Vec<usize>,
    samplers: Option<&'a crate::verify::SamplerChains>,
    /// The function's verification facts (register numbers).
    info: &'a crate::verify::FunctionInfo,
    f: naga::Function,
    regs: Vec<Reg>,
    /// Numbers of the registers given a value in the current block.
    touched: Vec<usize>,
    /// The deepest operand register value of the current instruction.
    depth: u32,
    /// The number of expressions before the current instruction.
    first_new: usize,
    /// The current instruction computes from constants alone
    /// ([`constant_result`]).
    constant: bool,
    /// Literal expressions by kind and bits (valid anywhere in the function).
    literals: HashMap<(u8, u32), naga::Handle<Expression>>,
    /// Pointer expressions of locals and globals (valid anywhere).
    pointers: HashMap<Pointee, naga::Handle<Expression>>,
    /// Local copies of parameters that are stored to or selected into.
    params: Vec<Option<naga::Handle<LocalVariable>>>,
    /// Argument expressions of the parameters that are only read whole.
    args: Vec<Option<naga::Handle<Expression>>>,
    selector: Option<naga::Handle<LocalVariable>>,
    /// In a helper lowered as a dispatch loop: the selector value a
    /// discarding block stores, so the loop exits and the helper kills
    /// after it ([`DISCARD_EXIT`]).
    discard_exit: Option<i32>,
}

/// The selector value of a helper's discarding block: the dispatch loop
/// ends on it and the invocation is killed after the loop, never inside
/// it. Mesa 22.3's lavapipe (SPIR-V) drops every fragment of a draw
/// whose helper function kills inside a loop, even fragments that never
/// call it (`docs/vpl/oracle.md`, seed 5396); a kill after the loop
/// draws correctly. Block indices are non-negative, so −1 is free.
const DISCARD_EXIT: i32 = -1;

/// What a cached pointer expression points to.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Pointee {
    Local(naga::Handle<LocalVariable>),
    Global(naga::Handle<GlobalVariable>),
}

/// Where a pointer being built points.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    /// Function or private storage holding value types.
    Value,
    /// A uniform buffer holding host forms; `element` when the pointee is
    /// an array element.
    Host { element: bool },
}

impl FnBuilder<'_, '_> {
    fn expr(&mut self, block: &mut Block, e: Expression) -> naga::Handle<Expression> {
        push(&mut self.f, block, e)
    }

    fn refuse(&self, span: Option<Span>, message: impl Into<String>) -> LowerError {
        unsupported(LowerErrorKind::UnsupportedInstruction, span, message)
    }

    fn defect(&self, span: Option<Span>, message: impl Into<String>) -> LowerError {
        unsupported(LowerErrorKind::Validation, span, message)
    }

    /// The dense number of register `index`.
    fn number(&self, index: u64, span: Option<Span>) -> Result<usize, LowerError> {
        self.info
            .register_number(index)
            .map(|n| n as usize)
            .filter(|&n| n < self.regs.len())
            .ok_or_else(|| self.defect(span, format!("register r{index} is not declared")))
    }

    /// The local variable of register `index` (one used as storage, or
    /// live into a block), with the register's current value stored in it.
    fn register_storage(
        &mut self,
        block: &mut Block,
        index: u64,
        span: Option<Span>,
    ) -> Result<naga::Handle<LocalVariable>, LowerError> {
        let n = self.number(index, span)?;
        self.flush(block, n);
        self.regs[n]
            .local
            .ok_or_else(|| self.defect(span, format!("register r{index} has no storage")))
    }

    /// Stores register `n`'s value into its local if the local is older.
    fn flush(&mut self, block: &mut Block, n: usize) {
        let reg = &mut self.regs[n];
        if let (true, Some(local), Some((value, _))) = (reg.dirty, reg.local, reg.value) {
            reg.dirty = false;
            let pointer = self.local_ptr(local);
            block.push(Statement::Store { pointer, value }, naga::Span::UNDEFINED);
        }
    }

    /// Stores every register assigned in this block that has a local, as
    /// control leaves the block for another.
    fn flush_all(&mut self, block: &mut Block) {
        for i in 0..self.touched.len() {
            let n = self.touched[i];
            self.flush(block, n);
        }
    }

    /// Forgets the register values of the previous block (its expressions
    /// are not in scope in the next one).
    fn begin_block(&mut self) {
        for n in self.touched.drain(..) {
            self.regs[n].value = None;
            self.regs[n].dirty = false;
        }
    }

    /// A pointer expression to `local`.
    fn local_ptr(&mut self, local: naga::Handle<LocalVariable>) -> naga::Handle<Expression> {
        self.pointer_to(Pointee::Local(local))
    }

    /// A pointer expression to `global`.
    fn global_ptr(&mut self, global: naga::Handle<GlobalVariable>) -> naga::Handle<Expression> {
        self.pointer_to(Pointee::Global(global))
    }

    fn pointer_to(&mut self, to: Pointee) -> naga::Handle<Expression> {
        let expressions = &mut self.f.expressions;
        *self.pointers.entry(to).or_insert_with(|| {
            let e = match to {
                Pointee::Local(l) => Expression::LocalVariable(l),
                Pointee::Global(g) => Expression::GlobalVariable(g),
            };
            expressions.append(e, naga::Span::UNDEFINED)
        })
    }

    /// A literal expression (one per value and function).
    fn literal(&mut self, literal: naga::Literal) -> naga::Handle<Expression> {
        let key = match literal {
            naga::Literal::Bool(b) => (0, u32::from(b)),
            naga::Literal::I32(i) => (1, i as u32),
            naga::Literal::F32(x) => (2, x.to_bits()),
            naga::Literal::U32(u) => (3, u),
            other => {
                return self
                    .f
                    .expressions
                    .append(Expression::Literal(other), naga::Span::UNDEFINED);
            }
        };
        let expressions = &mut self.f.expressions;
        *self.literals.entry(key).or_insert_with(|| {
            expressions.append(Expression::Literal(literal), naga::Span::UNDEFINED)
        })
    }

    fn is_sampler(&self, ty: Handle<Type>) -> bool {
        self.cx.is_sampler(ty)
    }

    /// The texture and sampler globals a sampler operand aliases.
    fn sampler_globals(
        &self,
        op: &Operand,
    ) -> Result<(naga::Handle<GlobalVariable>, naga::Handle<GlobalVariable>), LowerError> {
        let root = self.samplers.as_ref().and_then(|c| root_of(c, op));
        let slot = sampler_slot_of(self.cx.module, self.function, &self.bound, root)
            .ok_or_else(|| self.defect(op.span, "a sampler operand without a resolved uniform"))?;
        match self.cx.uniforms.get(slot) {
            Some(UniformGlobal::Sampler { image, sampler }) => Ok((*image, *sampler)),
            _ => Err(self.defect(op.span, "a sampler alias of a non-sampler uniform")),
        }
    }

    fn value(
        &mut self,
        block: &mut Block,
        op: &Operand,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        Ok(match op.value {
            Value::Register(r) => {
                let n = self.number(r.index, op.span)?;
                if let Some((value, depth)) = self.regs[n].value {
                    self.depth = self.depth.max(depth);
                    return Ok(value);
                }
                let local = self.regs[n].local.ok_or_else(|| {
                    self.defect(
                        op.span,
                        format!("register r{} is read before it is assigned", { r.index }),
                    )
                })?;
                let pointer = self.local_ptr(local);
                let value = self.expr(block, Expression::Load { pointer });
                self.regs[n].value = Some((value, 0));
                self.touched.push(n);
                value
            }
            Value::Constant(c) => self.literal(match c.value {
                Literal::Bool(b) => naga::Literal::Bool(b),
                Literal::Int(i) => naga::Literal::I32(i),
                Literal::Float(x) => naga::Literal::F32(x),
            }),
        })
    }

    fn index_expr(
        &mut self,
        block: &mut Block,
        base: naga::Handle<Expression>,
        op: &Operand,
        span: Option<Span>,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        Ok(match op.value {
            Value::Constant(c) => match c.value {
                Literal::Int(i) if i >= 0 => self.expr(
                    block,
                    Expression::AccessIndex {
                        base,
                        index: i as u32,
                    },
                ),
                _ => return Err(self.defect(span, "a negative constant index")),
            },
            Value::Register(_) => {
                let index = self.value(block, op)?;
                self.expr(block, Expression::Access { base, index })
            }
        })
    }

    /// A pointer to the storage `r` selects, and the space it lies in.
    fn pointer(
        &mut self,
        block: &mut Block,
        r: &Reference,
    ) -> Result<(naga::Handle<Expression>, Space), LowerError> {
        let slot = usize::try_from(r.slot).unwrap_or(usize::MAX);
        let (mut base, mut space) = match r.storage {
            StorageKind::Local => {
                let local = self.register_storage(block, r.slot, r.span)?;
                (self.local_ptr(local), Space::Value)
            }
            StorageKind::Parameter => {
                let local = self
                    .params
                    .get(slot)
                    .copied()
                    .flatten()
                    .ok_or_else(|| self.defect(r.span, "parameter out of range"))?;
                (self.local_ptr(local), Space::Value)
            }
            StorageKind::StageIo => {
                let g = *self.cx.io[self.si]
                    .get(slot)
                    .ok_or_else(|| self.defect(r.span, "interface slot out of range"))?;
                (self.global_ptr(g), Space::Value)
            }
            StorageKind::Uniform => match self.cx.uniforms.get(slot).copied() {
                Some(UniformGlobal::Buffer { global, wrapped }) => {
                    let mut ptr = self.global_ptr(global);
                    if wrapped {
                        ptr = self.expr(
                            block,
                            Expression::AccessIndex {
                                base: ptr,
                                index: 0,
                            },
                        );
                    }
                    (ptr, Space::Host { element: false })
                }
                _ => return Err(self.defect(r.span, "a sampler uniform used as storage")),
            },
        };
        let mut ty = r.root_ty;
        for s in &r.path {
            base = match &s.kind {
                SelectorKind::Member(name) => {
                    let Some(TypeInner::Record(record)) = self.cx.module.types.inner(ty) else {
                        return Err(self.defect(s.span, "a member of a non-record"));
                    };
                    let (field, _) = record
                        .field(name)
                        .ok_or_else(|| self.defect(s.span, "an unknown field"))?;
                    let index = match space {
                        Space::Value => field as u32,
                        Space::Host { .. } => {
                            let host = self
                                .cx
                                .host(ty, matches!(space, Space::Host { element: true }))?;
                            *host
                                .members
                                .get(field)
                                .ok_or_else(|| self.defect(s.span, "a field without a member"))?
                        }
                    };
                    if let Space::Host { .. } = space {
                        space = Space::Host { element: false };
                    }
                    self.expr(block, Expression::AccessIndex { base, index })
                }
                SelectorKind::Index(op) => {
                    if let Space::Host { .. } = space {
                        space = Space::Host { element: true };
                    }
                    self.index_expr(block, base, op, s.span)?
                }
            };
            ty = s.ty;
        }
        Ok((base, space))
    }

    /// Loads the value of VPL type `ty` through `ptr`.
    fn load(
        &mut self,
        block: &mut Block,
        ptr: naga::Handle<Expression>,
        ty: Handle<Type>,
        space: Space,
        span: Option<Span>,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let Space::Host { element } = space else {
            return Ok(self.expr(block, Expression::Load { pointer: ptr }));
        };
        match self.cx.module.types.inner(ty).cloned() {
            Some(TypeInner::Scalar(k)) => {
                let mut v = self.expr(block, Expression::Load { pointer: ptr });
                if element {
                    v = self.expr(block, Expression::AccessIndex { base: v, index: 0 });
                }
                Ok(self.host_to_value(block, v, k, None))
            }
            Some(TypeInner::Vector { kind, size }) => {
                let mut v = self.expr(block, Expression::Load { pointer: ptr });
                if element && size == 2 {
                    v = self.expr(
                        block,
                        Expression::Swizzle {
                            size: VectorSize::Bi,
                            vector: v,
                            pattern: [
                                naga::SwizzleComponent::X,
                                naga::SwizzleComponent::Y,
                                naga::SwizzleComponent::X,
                                naga::SwizzleComponent::X,
                            ],
                        },
                    );
                }
                Ok(self.host_to_value(block, v, kind, vector_size(size)))
            }
            Some(TypeInner::Matrix { rows: 2, columns }) => {
                let target = self.cx.ty(ty)?;
                let mut parts = Vec::with_capacity(usize::from(columns));
                for c in 0..u32::from(columns) {
                    let column = self.expr(
                        block,
                        Expression::AccessIndex {
                            base: ptr,
                            index: c,
                        },
                    );
                    let v = self.expr(block, Expression::Load { pointer: column });
                    parts.push(self.expr(
                        block,
                        Expression::Swizzle {
                            size: VectorSize::Bi,
                            vector: v,
                            pattern: [
                                naga::SwizzleComponent::X,
                                naga::SwizzleComponent::Y,
                                naga::SwizzleComponent::X,
                                naga::SwizzleComponent::X,
                            ],
                        },
                    ));
                }
                Ok(self.expr(
                    block,
                    Expression::Compose {
                        ty: target,
                        components: parts,
                    },
                ))
            }
            Some(TypeInner::Matrix { .. }) => {
                Ok(self.expr(block, Expression::Load { pointer: ptr }))
            }
            Some(TypeInner::Array { element: e, length }) => {
                let value = self.cx.ty(ty)?;
                if self.cx.host(ty, element)?.ty == value {
                    return Ok(self.expr(block, Expression::Load { pointer: ptr }));
                }
                if length > MAX_REBUILT_ELEMENTS {
                    return Err(unsupported(
                        LowerErrorKind::UnsupportedUniform,
                        span,
                        format!(
                            "a whole load of a {length}-element uniform array whose std140 form differs from its value (at most {MAX_REBUILT_ELEMENTS}); load its elements"
                        ),
                    ));
                }
                let mut parts = Vec::with_capacity(length as usize);
                for i in 0..length as u32 {
                    let p = self.expr(
                        block,
                        Expression::AccessIndex {
                            base: ptr,
                            index: i,
                        },
                    );
                    parts.push(self.load(block, p, e, Space::Host { element: true }, span)?);
                }
                Ok(self.expr(
                    block,
                    Expression::Compose {
                        ty: value,
                        components: parts,
                    },
                ))
            }
            Some(TypeInner::Record(record)) => {
                let value = self.cx.ty(ty)?;
                let host = self.cx.host(ty, element)?;
                let mut parts = Vec::with_capacity(record.fields.len());
                for (field, &member) in record.fields.iter().zip(&host.members) {
                    let p = self.expr(
                        block,
                        Expression::AccessIndex {
                            base: ptr,
                            index: member,
                        },
                    );
                    parts.push(self.load(
                        block,
                        p,
                        field.ty,
                        Space::Host { element: false },
                        span,
                    )?);
                }
                Ok(self.expr(
                    block,
                    Expression::Compose {
                        ty: value,
                        components: parts,
                    },
                ))
            }
            _ => Err(self.defect(span, "a load of a type without a value form")),
        }
    }

    /// Converts a loaded host scalar/vector to its value form (Booleans
    /// are stored as `u32`, true when nonzero).
    fn host_to_value(
        &mut self,
        block: &mut Block,
        v: naga::Handle<Expression>,
        kind: ScalarKind,
        size: Option<VectorSize>,
    ) -> naga::Handle<Expression> {
        if kind != ScalarKind::Bool {
            return v;
        }
        let mut zero = self.literal(naga::Literal::U32(0));
        if let Some(size) = size {
            zero = self.expr(block, Expression::Splat { size, value: zero });
        }
        self.expr(
            block,
            Expression::Binary {
                op: naga::BinaryOperator::NotEqual,
                left: v,
                right: zero,
            },
        )
    }

    /// Makes `value` the value of register `index` (stored into its local
    /// only when control leaves the block or the register is used as
    /// storage).
    fn store_register(
        &mut self,
        block: &mut Block,
        index: u64,
        value: naga::Handle<Expression>,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        let n = self.number(index, span)?;
        if self.constant {
            // Stored now and loaded when read: a run-time value.
            let local = self.regs[n]
                .local
                .ok_or_else(|| self.defect(span, format!("register r{index} has no storage")))?;
            let pointer = self.local_ptr(local);
            block.push(Statement::Store { pointer, value }, naga::Span::UNDEFINED);
            self.regs[n].value = None;
            self.regs[n].dirty = false;
            return Ok(());
        }
        // Writers print these where they stand (or by name): they do not
        // nest into their users.
        let standalone = matches!(
            self.f.expressions[value],
            Expression::Load { .. } | Expression::CallResult(_) | Expression::ImageSample { .. }
        ) || self.f.expressions[value].needs_pre_emit();
        let depth = if standalone {
            0
        } else if value.index() < self.first_new {
            // A copy: the operand's expression itself.
            self.depth
        } else {
            self.depth + 1
        };
        let depth = if depth > MAX_INLINE_DEPTH {
            self.f
                .named_expressions
                .insert(value, format!("vpl_r{index}"));
            0
        } else {
            depth
        };
        let reg = &mut self.regs[n];
        if reg.value.is_none() {
            self.touched.push(n);
        }
        reg.value = Some((value, depth));
        reg.dirty = reg.local.is_some();
        Ok(())
    }

    /// Forgets register `index`'s value after a store through a reference
    /// changed its local.
    fn invalidate(&mut self, index: u64, span: Option<Span>) -> Result<(), LowerError> {
        let n = self.number(index, span)?;
        self.regs[n].value = None;
        self.regs[n].dirty = false;
        Ok(())
    }

    fn type_inner(&self, ty: Handle<Type>) -> Option<&TypeInner> {
        self.cx.module.types.inner(ty)
    }

    fn block(&mut self, out: &mut Block, block: &crate::ir::Block) -> Result<(), LowerError> {
        self.begin_block();
        for instruction in &block.instructions {
            self.instruction(out, &instruction.kind, instruction.span)?;
        }
        let Some(t) = &block.terminator else {
            return Err(self.defect(None, "a block has no terminator"));
        };
        match &t.kind {
            TerminatorKind::Branch { target } => self.select(out, target.index(), t.span),
            TerminatorKind::BranchIf {
                condition,
                if_true,
                if_false,
            } => {
                let condition = self.value(out, condition)?;
                let accept = self.literal(naga::Literal::I32(if_true.index() as i32));
                let reject = self.literal(naga::Literal::I32(if_false.index() as i32));
                self.flush_all(out);
                let value = self.expr(
                    out,
                    Expression::Select {
                        condition,
                        accept,
                        reject,
                    },
                );
                let ptr = match self.selector {
                    Some(s) => self.local_ptr(s),
                    None => return Err(self.defect(t.span, "a branch in a straight-line body")),
                };
                out.push(
                    Statement::Store {
                        pointer: ptr,
                        value,
                    },
                    naga::Span::UNDEFINED,
                );
                Ok(())
            }
            TerminatorKind::Return { value } => {
                let value = match value {
                    Some(v) => Some(self.value(out, v)?),
                    None => None,
                };
                out.push(Statement::Return { value }, naga::Span::UNDEFINED);
                Ok(())
            }
            TerminatorKind::Discard => {
                match (self.discard_exit, self.selector) {
                    (Some(exit), Some(selector)) => {
                        let value = self.literal(naga::Literal::I32(exit));
                        let pointer = self.local_ptr(selector);
                        out.push(Statement::Store { pointer, value }, naga::Span::UNDEFINED);
                    }
                    _ => out.push(Statement::Kill, naga::Span::UNDEFINED),
                }
                Ok(())
            }
        }
    }

    fn select(
        &mut self,
        out: &mut Block,
        target: usize,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        self.flush_all(out);
        let value = self.literal(naga::Literal::I32(target as i32));
        let ptr = match self.selector {
            Some(s) => self.local_ptr(s),
            None => return Err(self.defect(span, "a branch in a straight-line body")),
        };
        out.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            naga::Span::UNDEFINED,
        );
        Ok(())
    }

    fn instruction(
        &mut self,
        out: &mut Block,
        kind: &InstructionKind,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        self.depth = 0;
        self.first_new = self.f.expressions.len();
        self.constant = constant_result(kind);
        match kind {
            InstructionKind::DeclareLocal { .. } => Ok(()),
            // Sampler registers are static aliases (section 12.4): their
            // definitions produce no code; uses name the aliased globals.
            InstructionKind::Copy { result, .. } | InstructionKind::Load { result, .. }
                if self.is_sampler(result.ty) =>
            {
                Ok(())
            }
            InstructionKind::Store { value, .. } if self.is_sampler(value.ty()) => Ok(()),
            InstructionKind::Copy { result, source } => {
                let v = self.value(out, source)?;
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Load { result, source }
                if source.storage == StorageKind::Parameter && source.path.is_empty() =>
            {
                let direct = usize::try_from(source.slot)
                    .ok()
                    .and_then(|slot| self.args.get(slot).copied().flatten());
                let v = match direct {
                    Some(argument) => argument,
                    None => {
                        let (ptr, space) = self.pointer(out, source)?;
                        self.load(out, ptr, result.ty, space, span)?
                    }
                };
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Load { result, source } => {
                let (ptr, space) = self.pointer(out, source)?;
                let v = self.load(out, ptr, result.ty, space, span)?;
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Store { target, value } => {
                let v = self.value(out, value)?;
                let (ptr, _) = self.pointer(out, target)?;
                out.push(
                    Statement::Store {
                        pointer: ptr,
                        value: v,
                    },
                    naga::Span::UNDEFINED,
                );
                if target.storage == StorageKind::Local {
                    self.invalidate(target.slot, target.span)?;
                }
                Ok(())
            }
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                let comparison = matches!(
                    op,
                    BinaryOp::Equal
                        | BinaryOp::NotEqual
                        | BinaryOp::Less
                        | BinaryOp::LessEqual
                        | BinaryOp::Greater
                        | BinaryOp::GreaterEqual
                );
                let composite = !matches!(self.type_inner(lhs.ty()), Some(TypeInner::Scalar(_)));
                if comparison && composite {
                    // Section 7.1 defines comparisons of scalars only.
                    return Err(self.refuse(span, "a comparison of composite values"));
                }
                let left = self.value(out, lhs)?;
                let right = self.value(out, rhs)?;
                if let (BinaryOp::Divide, Some(TypeInner::Matrix { columns, .. })) =
                    (op, self.type_inner(lhs.ty()).cloned())
                {
                    let v = self.divide_matrix(out, lhs.ty(), left, right, rhs, columns)?;
                    return self.store_register(out, result.index, v, span);
                }
                // naga divides a vector by a vector only.
                let right = match (op, self.type_inner(lhs.ty()), self.type_inner(rhs.ty())) {
                    (
                        BinaryOp::Divide,
                        Some(TypeInner::Vector { size, .. }),
                        Some(TypeInner::Scalar(_)),
                    ) => {
                        let size =
                            vector_size(*size).ok_or_else(|| self.defect(span, "vector size"))?;
                        self.expr(out, Expression::Splat { size, value: right })
                    }
                    _ => right,
                };
                let op = match op {
                    BinaryOp::Add => naga::BinaryOperator::Add,
                    BinaryOp::Subtract => naga::BinaryOperator::Subtract,
                    BinaryOp::Multiply => naga::BinaryOperator::Multiply,
                    BinaryOp::Divide => naga::BinaryOperator::Divide,
                    BinaryOp::Equal => naga::BinaryOperator::Equal,
                    BinaryOp::NotEqual => naga::BinaryOperator::NotEqual,
                    BinaryOp::Less => naga::BinaryOperator::Less,
                    BinaryOp::LessEqual => naga::BinaryOperator::LessEqual,
                    BinaryOp::Greater => naga::BinaryOperator::Greater,
                    BinaryOp::GreaterEqual => naga::BinaryOperator::GreaterEqual,
                };
                let v = self.expr(out, Expression::Binary { op, left, right });
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Call {
                result,
                callee: Callee::Builtin(Builtin::Texture),
                arguments,
            } => {
                let [sampler, coordinate] = arguments.as_slice() else {
                    return Err(self.defect(span, "texture takes a sampler and coordinates"));
                };
                let (image, sampler) = self.sampler_globals(sampler)?;
                let coordinate = self.value(out, coordinate)?;
                let image = self.global_ptr(image);
                let sampler = self.global_ptr(sampler);
                // Vertex sampling takes the base level (section 7.3.1).
                let level = match self.stage.kind {
                    StageKind::Vertex => naga::SampleLevel::Zero,
                    StageKind::Fragment => naga::SampleLevel::Auto,
                };
                let v = self.expr(
                    out,
                    Expression::ImageSample {
                        image,
                        sampler,
                        gather: None,
                        coordinate,
                        array_index: None,
                        offset: None,
                        level,
                        depth_ref: None,
                        clamp_to_edge: false,
                    },
                );
                let r = result.ok_or_else(|| self.defect(span, "texture without a result"))?;
                self.store_register(out, r.index, v, span)
            }
            InstructionKind::Call {
                result,
                callee: Callee::Function(h),
                arguments,
            } => {
                let callee = &self.stage.functions[*h];
                let mut slots = Vec::new();
                let mut args = Vec::with_capacity(arguments.len());
                for (p, a) in callee.parameters.iter().zip(arguments) {
                    if self.is_sampler(p.ty) {
                        let root = self.samplers.as_ref().and_then(|c| root_of(c, a));
                        let slot =
                            sampler_slot_of(self.cx.module, self.function, &self.bound, root)
                                .ok_or_else(|| {
                                    self.defect(span, "an unresolved sampler argument")
                                })?;
                        slots.push(slot);
                    } else {
                        args.push(self.value(out, a)?);
                    }
                }
                let function = self
                    .cx
                    .functions
                    .get(&(self.si, (*h, slots)))
                    .copied()
                    .ok_or_else(|| {
                        self.defect(span, "a callee was not lowered before its caller")
                    })?;
                let result_expr = result.map(|_| {
                    self.f
                        .expressions
                        .append(Expression::CallResult(function), naga::Span::UNDEFINED)
                });
                out.push(
                    Statement::Call {
                        function,
                        arguments: args,
                        result: result_expr,
                    },
                    naga::Span::UNDEFINED,
                );
                if let (Some(r), Some(e)) = (result, result_expr) {
                    self.store_register(out, r.index, e, span)?;
                }
                Ok(())
            }
            InstructionKind::Construct {
                result,
                ty,
                arguments,
            } => {
                let v = self.construct(out, *ty, arguments, span)?;
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                let vector = self.value(out, source)?;
                let v = if pattern.len() == 1 {
                    self.expr(
                        out,
                        Expression::AccessIndex {
                            base: vector,
                            index: pattern[0] as u32,
                        },
                    )
                } else {
                    let size = vector_size(pattern.len() as u8)
                        .ok_or_else(|| self.defect(span, "swizzle size"))?;
                    let mut p = [naga::SwizzleComponent::X; 4];
                    for (slot, c) in p.iter_mut().zip(pattern.iter()) {
                        *slot = match *c as u32 {
                            0 => naga::SwizzleComponent::X,
                            1 => naga::SwizzleComponent::Y,
                            2 => naga::SwizzleComponent::Z,
                            _ => naga::SwizzleComponent::W,
                        };
                    }
                    self.expr(
                        out,
                        Expression::Swizzle {
                            size,
                            vector,
                            pattern: p,
                        },
                    )
                };
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Member {
                result,
                source,
                field,
            } => {
                let Some(TypeInner::Record(record)) = self.type_inner(source.ty()) else {
                    return Err(self.defect(span, "a member of a non-record value"));
                };
                let (index, _) = record
                    .field(field)
                    .ok_or_else(|| self.defect(span, "an unknown field"))?;
                let base = self.value(out, source)?;
                let v = self.expr(
                    out,
                    Expression::AccessIndex {
                        base,
                        index: index as u32,
                    },
                );
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                let base = self.value(out, source)?;
                let v = self.index_expr(out, base, index, span)?;
                self.store_register(out, result.index, v, span)
            }
        }
    }

    /// Matrix division, component-wise by a matrix or a scalar (naga
    /// divides vectors only): column by column.
    fn divide_matrix(
        &mut self,
        out: &mut Block,
        ty: Handle<Type>,
        left: naga::Handle<Expression>,
        right: naga::Handle<Expression>,
        rhs: &Operand,
        columns: u8,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let target = self.cx.ty(ty)?;
        let by_matrix = matches!(self.type_inner(rhs.ty()), Some(TypeInner::Matrix { .. }));
        let rows = match self.type_inner(ty) {
            Some(TypeInner::Matrix { rows, .. }) => vector_size(*rows),
            _ => None,
        }
        .ok_or_else(|| self.defect(rhs.span, "matrix rows"))?;
        let right = if by_matrix {
            right
        } else {
            self.expr(
                out,
                Expression::Splat {
                    size: rows,
                    value: right,
                },
            )
        };
        let mut parts = Vec::with_capacity(usize::from(columns));
        for c in 0..u32::from(columns) {
            let a = self.expr(
                out,
                Expression::AccessIndex {
                    base: left,
                    index: c,
                },
            );
            let b = if by_matrix {
                self.expr(
                    out,
                    Expression::AccessIndex {
                        base: right,
                        index: c,
                    },
                )
            } else {
                right
            };
            parts.push(self.expr(
                out,
                Expression::Binary {
                    op: naga::BinaryOperator::Divide,
                    left: a,
                    right: b,
                },
            ));
        }
        Ok(self.expr(
            out,
            Expression::Compose {
                ty: target,
                components: parts,
            },
        ))
    }

    fn construct(
        &mut self,
        out: &mut Block,
        ty: Handle<Type>,
        arguments: &[Operand],
        span: Option<Span>,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let target = self.cx.ty(ty)?;
        let inner = self.type_inner(ty).cloned();
        let kind_of = |me: &Self, t: Handle<Type>| match me.type_inner(t) {
            Some(TypeInner::Scalar(k)) | Some(TypeInner::Vector { kind: k, .. }) => Some(*k),
            Some(TypeInner::Matrix { .. }) => Some(ScalarKind::Float),
            _ => None,
        };
        let size_of = |me: &Self, t: Handle<Type>| match me.type_inner(t) {
            Some(TypeInner::Scalar(_)) => Some(1u32),
            Some(TypeInner::Vector { size, .. }) => Some(u32::from(*size)),
            _ => None,
        };
        match inner {
            Some(TypeInner::Scalar(k)) => {
                let [a] = arguments else {
                    return Err(self.defect(span, "a scalar construction takes one argument"));
                };
                if size_of(self, a.ty()) != Some(1) {
                    return Err(self.defect(span, "a scalar construction from a vector"));
                }
                let v = self.value(out, a)?;
                Ok(self.convert(out, v, kind_of(self, a.ty()), k))
            }
            Some(TypeInner::Vector { kind, size }) => {
                let mut total = 0u32;
                let mut parts = Vec::with_capacity(arguments.len());
                for a in arguments {
                    let n = size_of(self, a.ty())
                        .ok_or_else(|| self.defect(span, "a vector construction from a matrix"))?;
                    total += n;
                    let v = self.value(out, a)?;
                    parts.push(self.convert(out, v, kind_of(self, a.ty()), kind));
                }
                match (parts.as_slice(), total) {
                    ([single], 1) => {
                        let vsize =
                            vector_size(size).ok_or_else(|| self.defect(span, "vector size"))?;
                        Ok(self.expr(
                            out,
                            Expression::Splat {
                                size: vsize,
                                value: *single,
                            },
                        ))
                    }
                    (_, t) if t == u32::from(size) => Ok(self.expr(
                        out,
                        Expression::Compose {
                            ty: target,
                            components: parts,
                        },
                    )),
                    _ => Err(self.defect(span, "a vector construction of the wrong size")),
                }
            }
            Some(TypeInner::Matrix { rows, columns }) => {
                self.construct_matrix(out, target, rows, columns, arguments, span)
            }
            Some(TypeInner::Array { .. }) | Some(TypeInner::Record(_)) => {
                let mut parts = Vec::with_capacity(arguments.len());
                for a in arguments {
                    parts.push(self.value(out, a)?);
                }
                Ok(self.expr(
                    out,
                    Expression::Compose {
                        ty: target,
                        components: parts,
                    },
                ))
            }
            _ => Err(self.refuse(span, "a construction of this type")),
        }
    }

    /// Matrix construction (section 7.2): column vectors, scalars and
    /// vectors in column-major order, or one scalar for a diagonal.
    fn construct_matrix(
        &mut self,
        out: &mut Block,
        target: naga::Handle<naga::Type>,
        rows: u8,
        columns: u8,
        arguments: &[Operand],
        span: Option<Span>,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let column_size = vector_size(rows).ok_or_else(|| self.defect(span, "matrix rows"))?;
        let column_ty = self.cx.insert(
            None,
            naga::TypeInner::Vector {
                size: column_size,
                scalar: naga::Scalar::F32,
            },
        );
        let is_column = |me: &Self, a: &Operand| matches!(me.type_inner(a.ty()), Some(TypeInner::Vector { kind: ScalarKind::Float, size }) if *size == rows);
        if arguments.len() == usize::from(columns) && arguments.iter().all(|a| is_column(self, a)) {
            let mut parts = Vec::with_capacity(arguments.len());
            for a in arguments {
                parts.push(self.value(out, a)?);
            }
            return Ok(self.expr(
                out,
                Expression::Compose {
                    ty: target,
                    components: parts,
                },
            ));
        }
        // Every component as a float scalar, column-major.
        let mut scalars = Vec::new();
        for a in arguments {
            let v = self.value(out, a)?;
            match self.type_inner(a.ty()).cloned() {
                Some(TypeInner::Scalar(k)) => {
                    scalars.push(self.convert(out, v, Some(k), ScalarKind::Float))
                }
                Some(TypeInner::Vector { kind, size }) => {
                    for i in 0..u32::from(size) {
                        let c = self.expr(out, Expression::AccessIndex { base: v, index: i });
                        scalars.push(self.convert(out, c, Some(kind), ScalarKind::Float));
                    }
                }
                _ => {
                    return Err(
                        self.defect(span, "a matrix component that is not a scalar or vector")
                    );
                }
            }
        }
        let (r, c) = (usize::from(rows), usize::from(columns));
        let grid: Vec<naga::Handle<Expression>> = match scalars.as_slice() {
            [s] => {
                let zero = self.literal(naga::Literal::F32(0.0));
                (0..r * c)
                    .map(|i| if i / r == i % r { *s } else { zero })
                    .collect()
            }
            all if all.len() == r * c => all.to_vec(),
            _ => return Err(self.defect(span, "a matrix construction of the wrong size")),
        };
        let mut parts = Vec::with_capacity(c);
        for column in grid.chunks(r) {
            parts.push(self.expr(
                out,
                Expression::Compose {
                    ty: column_ty,
                    components: column.to_vec(),
                },
            ));
        }
        Ok(self.expr(
            out,
            Expression::Compose {
                ty: target,
                components: parts,
            },
        ))
    }

    /// Converts a scalar or vector value of kind `from` to kind `to`.
    fn convert(
        &mut self,
        out: &mut Block,
        v: naga::Handle<Expression>,
        from: Option<ScalarKind>,
        to: ScalarKind,
    ) -> naga::Handle<Expression> {
        if from == Some(to) {
            return v;
        }
        let kind = scalar(to).kind;
        let convert = match to {
            ScalarKind::Bool => Some(1),
            _ => Some(4),
        };
        self.expr(
            out,
            Expression::As {
                expr: v,
                kind,
                convert,
            },
        )
    }
}

/// The uniform slot behind a sampler root in a function whose sampler
/// parameters are bound to `bound` (in parameter order).
fn sampler_slot_of(
    module: &Module,
    f: &Function,
    bound: &[usize],
    root: Option<AliasRoot>,
) -> Option<usize> {
    match root? {
        AliasRoot::Uniform(slot) => Some(slot),
        AliasRoot::Parameter(p) => {
            let ordinal = f
                .parameters
                .iter()
                .take(p)
                .filter(|q| matches!(module.types.inner(q.ty), Some(TypeInner::Sampler(_))))
                .count();
            bound.get(ordinal).copied()
        }
    }
}
