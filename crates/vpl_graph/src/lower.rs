//! Lowering checked, typed graphs to a [`Program`]: one register per
//! computed value in topological order, compositions (lerp, clamp, min,
//! ...) spelt out, every select as a conditional branch to two blocks that
//! copy into one register and join. All inputs of a select are computed
//! before its branch, so texture samples stay in uniform control flow.

use crate::check::{Checked, Graph};
use crate::nodes::{Arith, Binary, CompareOp, Kind, Literal, Unary, Varying};
use crate::program::{
    Block, Function, Inst, Io, Op, Operand, Operands, Place, Program, Stage, Terminator, Uniform,
};
use crate::resources::{BASE_COLOR, FRAGMENT_MAIN, Resources};
use crate::types::{Scalar, Ty};
use crate::typing::{self, GraphTypes, Splat, Types};
use std::borrow::Cow;
use vpl::ir::{BinaryOp, Semantic, StageKind};

/// A value: an operand and its type.
#[derive(Debug, Clone)]
struct Val {
    op: Operand,
    ty: Ty,
}

/// Builds one function's registers and blocks.
struct Builder {
    registers: Vec<Ty>,
    blocks: Vec<Block>,
    current: usize,
}

impl Builder {
    fn new() -> Self {
        Builder {
            registers: Vec::new(),
            blocks: vec![Block::default()],
            current: 0,
        }
    }

    fn reg(&mut self, ty: Ty) -> u32 {
        self.registers.push(ty);
        (self.registers.len() - 1) as u32
    }

    fn push(&mut self, inst: Inst) {
        self.blocks[self.current].instructions.push(inst);
    }

    /// `(OP rN OPERANDS...)` into a fresh register of type `ty`.
    fn op(&mut self, op: Op, ty: Ty, operands: &[Operand]) -> Val {
        let result = self.reg(ty.clone());
        self.push(Inst::Op {
            op,
            result,
            operands: Operands::new(operands),
        });
        Val {
            op: Operand::Reg(result),
            ty,
        }
    }

    /// `(load rN PLACE)` into a fresh register of type `ty`.
    fn load(&mut self, place: Place, ty: Ty) -> Val {
        let result = self.reg(ty.clone());
        self.push(Inst::Load { result, place });
        Val {
            op: Operand::Reg(result),
            ty,
        }
    }

    fn swizzle(&mut self, x: &Val, pattern: impl Into<Cow<'static, str>>) -> Val {
        let pattern = pattern.into();
        let Some((k, _)) = x.ty.components() else {
            return x.clone();
        };
        let ty = Ty::vector(k, pattern.len() as u8);
        let result = self.reg(ty.clone());
        self.push(Inst::Swizzle {
            result,
            source: x.op,
            pattern,
        });
        Val {
            op: Operand::Reg(result),
            ty,
        }
    }

    fn terminate(&mut self, t: Terminator) {
        self.blocks[self.current].terminator = t;
    }

    fn new_block(&mut self) -> usize {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    /// `condition ? t : f` as two blocks that copy into one register.
    fn select(&mut self, condition: Operand, t: Operand, f: Operand, ty: Ty) -> Val {
        let result = self.reg(ty.clone());
        let (bt, bf, join) = (self.new_block(), self.new_block(), self.new_block());
        self.terminate(Terminator::BranchIf(condition, bt, bf));
        for (block, source) in [(bt, t), (bf, f)] {
            self.current = block;
            self.push(Inst::Copy { result, source });
            self.terminate(Terminator::Branch(join));
        }
        self.current = join;
        Val {
            op: Operand::Reg(result),
            ty,
        }
    }

    /// Component `i` of a scalar or vector (a scalar is its own component).
    fn component(&mut self, x: &Val, i: usize) -> Operand {
        match x.ty {
            Ty::Vector(..) => self.swizzle(x, &"xyzw"[i..=i]).op,
            _ => x.op,
        }
    }

    /// Applies `f` to each component and constructs the result of `ty`.
    fn per_component(
        &mut self,
        ty: &Ty,
        inputs: &[&Val],
        mut f: impl FnMut(&mut Builder, Scalar, &[Operand]) -> Operand,
    ) -> Val {
        let Some((k, n)) = ty.components() else {
            return Val {
                op: Operand::Int(0),
                ty: ty.clone(),
            };
        };
        let mut parts = Vec::with_capacity(usize::from(n));
        for i in 0..usize::from(n) {
            let ops: Vec<Operand> = inputs.iter().map(|v| self.component(v, i)).collect();
            parts.push(f(self, k, &ops));
        }
        if n == 1 {
            return Val {
                op: parts[0],
                ty: ty.clone(),
            };
        }
        self.op(Op::Construct, ty.clone(), &parts)
    }

    fn finish(self, name: &str, ret: Ty, params: Vec<Ty>) -> Function {
        Function {
            name: name.to_string(),
            ret,
            params,
            registers: self.registers,
            blocks: self.blocks,
        }
    }
}

fn zero(k: Scalar) -> Operand {
    match k {
        Scalar::Float => Operand::Float(0.0),
        Scalar::Int => Operand::Int(0),
        Scalar::Bool => Operand::Bool(false),
    }
}

fn one(k: Scalar) -> Operand {
    match k {
        Scalar::Float => Operand::Float(1.0),
        Scalar::Int => Operand::Int(1),
        Scalar::Bool => Operand::Bool(true),
    }
}

/// Slots the lowering refers to.
struct Slots<'a> {
    res: &'a Resources,
    /// Fragment interface slot of each used varying.
    varyings: Vec<(Varying, usize)>,
    /// Uniform slot by name.
    uniforms: Vec<&'a str>,
    /// Function index (in the fragment stage) of each called sub-graph.
    functions: Vec<(usize, usize)>,
    /// Constants read from a record uniform (previews), if any.
    constants: Option<ConstantSlots>,
}

/// Where a preview reads its constants: the record uniform's slot and
/// type, and the constant node of each field (graph, node index).
struct ConstantSlots {
    slot: usize,
    ty: Ty,
    fields: ConstantNodes,
}

/// The constants of a preview build ([`lower`] with `constants_as_uniforms`):
/// one record uniform whose fields `k0`, `k1`, ... hold the live float and
/// int constants, in lowering order.
#[derive(Debug, Clone)]
pub struct ConstantUniform {
    /// The uniform's name (`graph_constants`, suffixed if a graph uniform
    /// has that name).
    pub uniform: String,
    /// The record type's name (`GraphConstants`, suffixed likewise).
    pub record: String,
    /// Each field: name, type and the constant's components.
    pub fields: Vec<(String, Ty, Vec<Literal>)>,
    /// The constant node of each field, in field order: the sub-graph's
    /// name (`None`: the material graph) and the node's id. An editor
    /// that changes only these nodes' values sets the fields instead of
    /// compiling again.
    pub nodes: Vec<(Option<String>, String)>,
}

/// At most this many constants become uniform fields (a WebGL 2 uniform
/// block holds at least 16 KiB: 1024 vec4 slots); a preview with more
/// keeps them as literals.
pub const MAX_UNIFORM_CONSTANTS: usize = 256;

/// The constant node (graph, node index) of each field.
type ConstantNodes = Vec<(Option<usize>, usize)>;

/// The record and uniform that carry a preview's constants, or `None`
/// when there are none (or too many).
fn constant_uniform(
    doc: &Checked,
    types: &Types,
    res: &Resources,
) -> Option<(ConstantUniform, ConstantNodes)> {
    let graphs = std::iter::once((None, &doc.main, &res.main_live, &types.main)).chain(
        res.functions
            .iter()
            .map(|(f, live)| (Some(*f), &doc.functions[*f], live, &types.functions[*f])),
    );
    let mut fields = Vec::new();
    let mut nodes = Vec::new();
    for (function, g, live, _) in graphs {
        for &i in &g.order {
            if !live.get(i).copied().unwrap_or(false) {
                continue;
            }
            if let Kind::Constant { ty, values } = &g.nodes[i].kind
                && ty.is_numeric()
            {
                fields.push((format!("k{}", fields.len()), ty.clone(), values.clone()));
                nodes.push((function, i));
            }
        }
    }
    if fields.is_empty() || fields.len() > MAX_UNIFORM_CONSTANTS {
        return None;
    }
    let unique = |base: &str, taken: &dyn Fn(&str) -> bool| {
        let mut name = base.to_string();
        let mut n = 1;
        while taken(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    };
    let uniform = unique("graph_constants", &|n| res.uniforms.contains_key(n));
    let record = unique("GraphConstants", &|n| doc.records.find(n).is_some());
    let ids = nodes
        .iter()
        .map(|&(function, i)| {
            let graph = function.map_or(&doc.main, |f| &doc.functions[f]);
            let name = function.map(|f| doc.signatures[f].name.clone());
            (name, graph.nodes[i].id.clone())
        })
        .collect();
    Some((
        ConstantUniform {
            uniform,
            record,
            fields,
            nodes: ids,
        },
        nodes,
    ))
}

impl Slots<'_> {
    /// The field of constant node `node` of graph `function`, if it is
    /// read from the constants uniform.
    fn constant(&self, function: Option<usize>, node: usize) -> Option<(usize, &Ty, usize)> {
        let c = self.constants.as_ref()?;
        let field = c.fields.iter().position(|x| *x == (function, node))?;
        Some((c.slot, &c.ty, field))
    }

    fn uniform(&self, name: &str) -> usize {
        self.uniforms.iter().position(|u| *u == name).unwrap_or(0)
    }
    fn varying(&self, v: Varying) -> usize {
        self.varyings
            .iter()
            .find(|(x, _)| *x == v)
            .map(|(_, s)| *s)
            .unwrap_or(0)
    }
    fn function(&self, f: usize) -> usize {
        self.functions
            .iter()
            .find(|(x, _)| *x == f)
            .map(|(_, i)| *i)
            .unwrap_or(0)
    }
}

/// Lowers a checked, typed document with its resources. With
/// `constants_as_uniforms` (previews), the live float and int constants
/// are read from one record uniform, declared last, whose record type
/// (index `records.names.len()`, to be appended by the caller) is
/// returned: so that an edit of constant values gives the same module.
pub fn lower(
    doc: &Checked,
    types: &Types,
    res: &Resources,
    annotate: bool,
    constants_as_uniforms: bool,
) -> (Program, Option<ConstantUniform>) {
    let mut uniforms: Vec<Uniform> = res
        .uniforms
        .iter()
        .map(|(name, (ty, _))| Uniform {
            name: name.clone(),
            ty: ty.clone(),
        })
        .collect();
    let mut constant_uniform = if constants_as_uniforms {
        constant_uniform(doc, types, res)
    } else {
        None
    };
    let constant_slots = constant_uniform.as_mut().map(|(c, nodes)| {
        let ty = Ty::Record(doc.records.names.len());
        uniforms.push(Uniform {
            name: c.uniform.clone(),
            ty: ty.clone(),
        });
        ConstantSlots {
            slot: uniforms.len() - 1,
            ty,
            fields: std::mem::take(nodes),
        }
    });
    let mut vertex_interface = vec![Io {
        input: true,
        name: "in_position".into(),
        ty: Ty::Vector(Scalar::Float, 3),
        location: 0,
        semantic: Semantic::None,
    }];
    let attribute = |v: Varying| -> (i32, Semantic) {
        match v {
            Varying::Uv => (1, Semantic::TexCoord),
            Varying::VertexColor => (2, Semantic::Color),
            Varying::Position => (0, Semantic::None),
            Varying::Normal => (3, Semantic::None),
        }
    };
    for v in &res.varyings {
        let (location, semantic) = attribute(*v);
        if *v != Varying::Position {
            vertex_interface.push(Io {
                input: true,
                name: format!("in_{}", v.name()),
                ty: v.ty(),
                location,
                semantic,
            });
        }
    }
    vertex_interface.push(Io {
        input: false,
        name: "clip_position".into(),
        ty: Ty::Vector(Scalar::Float, 4),
        location: -1,
        semantic: Semantic::Position,
    });
    let mut fragment_interface = Vec::new();
    let mut varyings = Vec::new();
    for v in &res.varyings {
        let (_, semantic) = attribute(*v);
        vertex_interface.push(Io {
            input: false,
            name: v.name().into(),
            ty: v.ty(),
            location: -1,
            semantic,
        });
        varyings.push((*v, fragment_interface.len()));
        fragment_interface.push(Io {
            input: true,
            name: v.name().into(),
            ty: v.ty(),
            location: -1,
            semantic,
        });
    }
    let base_slot = fragment_interface.len();
    fragment_interface.push(Io {
        input: false,
        name: BASE_COLOR.into(),
        ty: Ty::Vector(Scalar::Float, 4),
        location: 0,
        semantic: Semantic::FragmentColor,
    });
    let mut output_slots = Vec::new();
    for &o in &res.outputs {
        if let Kind::FragmentOutput { name, location, .. } = &doc.main.nodes[o].kind {
            let ty = doc.main.nodes[o]
                .sources
                .first()
                .copied()
                .flatten()
                .and_then(|s| types.main[s.node].get(s.output).cloned().flatten())
                .unwrap_or(Ty::FLOAT);
            output_slots.push((o, fragment_interface.len()));
            fragment_interface.push(Io {
                input: false,
                name: name.clone(),
                ty,
                location: *location,
                semantic: Semantic::None,
            });
        }
    }
    let slots = Slots {
        res,
        varyings,
        uniforms: res.uniforms.keys().map(String::as_str).collect(),
        functions: res
            .functions
            .iter()
            .enumerate()
            .map(|(i, (f, _))| (*f, i + 1))
            .collect(),
        constants: constant_slots,
    };

    // The vertex stage: clip position from the attribute, varyings forwarded.
    let mut vb = Builder::new();
    let position = vb.load(Place::Stage(0), Ty::Vector(Scalar::Float, 3));
    let clip = vb.op(
        Op::Construct,
        Ty::Vector(Scalar::Float, 4),
        &[position.op, Operand::Float(1.0)],
    );
    let clip_slot = vertex_interface
        .iter()
        .position(|v| v.name == "clip_position")
        .unwrap_or(0);
    vb.push(Inst::Store {
        place: Place::Stage(clip_slot),
        value: clip.op,
    });
    for v in &res.varyings {
        let out = vertex_interface
            .iter()
            .position(|io| !io.input && io.name == v.name())
            .unwrap_or(0);
        let value = if *v == Varying::Position {
            position.op
        } else {
            let input = vertex_interface
                .iter()
                .position(|io| io.input && io.name == format!("in_{}", v.name()))
                .unwrap_or(0);
            vb.load(Place::Stage(input), v.ty()).op
        };
        vb.push(Inst::Store {
            place: Place::Stage(out),
            value,
        });
    }
    vb.terminate(Terminator::Return);
    let vertex_main = vb.finish("vertex_main", Ty::Void, Vec::new());

    // The fragment entry and the sub-graph helpers.
    let mut fragment_functions = Vec::new();
    let mut main = Builder::new();
    let values = body(
        &mut main,
        doc,
        &doc.main,
        &types.main,
        &res.main_live,
        &slots,
        annotate,
    );
    let material = &doc.main.nodes[res.material];
    let input = |socket: &str| -> Option<Val> {
        let s = material.source(socket)?;
        let v = values.get(s.node)?.get(s.output)?.clone()?;
        Some(v)
    };
    if annotate {
        main.push(Inst::Comment(format!(
            "// {} (material_output)",
            material.id
        )));
    }
    let color = match (input("base_color"), input("opacity")) {
        (Some(c), opacity) if c.ty == Ty::Vector(Scalar::Float, 3) => {
            let a = opacity.map(|o| o.op).unwrap_or(Operand::Float(1.0));
            main.op(Op::Construct, Ty::Vector(Scalar::Float, 4), &[c.op, a])
        }
        (Some(c), Some(o)) => {
            let rgb = main.swizzle(&c, "xyz");
            main.op(Op::Construct, Ty::Vector(Scalar::Float, 4), &[rgb.op, o.op])
        }
        (Some(c), None) => c,
        (None, _) => Val {
            op: Operand::Float(0.0),
            ty: Ty::FLOAT,
        },
    };
    main.push(Inst::Store {
        place: Place::Stage(base_slot),
        value: color.op,
    });
    for (o, slot) in output_slots {
        let node = &doc.main.nodes[o];
        if annotate {
            main.push(Inst::Comment(format!("// {} (fragment_output)", node.id)));
        }
        if let Some(v) = node
            .source("value")
            .and_then(|s| values.get(s.node)?.get(s.output)?.clone())
        {
            main.push(Inst::Store {
                place: Place::Stage(slot),
                value: v.op,
            });
        }
    }
    main.terminate(Terminator::Return);
    fragment_functions.push(main.finish(FRAGMENT_MAIN, Ty::Void, Vec::new()));
    for (f, live) in &res.functions {
        let sig = &doc.signatures[*f];
        let g = &doc.functions[*f];
        let mut b = Builder::new();
        let values = body(&mut b, doc, g, &types.functions[*f], live, &slots, annotate);
        let ret = g
            .nodes
            .iter()
            .find(|n| n.kind == Kind::Return)
            .and_then(|n| n.source("value"))
            .and_then(|s| values.get(s.node)?.get(s.output)?.clone());
        b.terminate(Terminator::ReturnValue(
            ret.map(|v| v.op).unwrap_or(Operand::Float(0.0)),
        ));
        let params = sig.inputs.iter().map(|(_, t)| t.clone()).collect();
        fragment_functions.push(b.finish(&sig.name, sig.output.clone(), params));
    }
    let program = Program {
        uniforms,
        vertex: Stage {
            kind: StageKind::Vertex,
            interface: vertex_interface,
            functions: vec![vertex_main],
        },
        fragment: Stage {
            kind: StageKind::Fragment,
            interface: fragment_interface,
            functions: fragment_functions,
        },
    };
    (program, constant_uniform.map(|(c, _)| c))
}

/// Lowers the live nodes of `g` (outputs and returns excepted) in
/// topological order; returns each node's output values.
fn body(
    b: &mut Builder,
    doc: &Checked,
    g: &Graph,
    types: &GraphTypes,
    live: &[bool],
    slots: &Slots,
    annotate: bool,
) -> Vec<Vec<Option<Val>>> {
    // A node's values stay empty until it is lowered.
    let mut values: Vec<Vec<Option<Val>>> = vec![Vec::new(); g.nodes.len()];
    // Output sockets live nodes use, one bit per socket.
    let mut used = vec![0u8; g.nodes.len()];
    for (n, l) in g.nodes.iter().zip(live) {
        if *l {
            for s in n.sources.iter().flatten() {
                if let Some(u) = used.get_mut(s.node)
                    && s.output < 8
                {
                    *u |= 1 << s.output;
                }
            }
        }
    }
    let used = |node: usize, output: usize| used[node] & (1 << output) != 0;
    // The constants record of a preview, once loaded in this function.
    let mut constants: Option<Operand> = None;
    for &i in &g.order {
        let node = &g.nodes[i];
        if !live[i] || node.kind.is_output() || node.kind == Kind::Return {
            continue;
        }
        if annotate {
            let kind = format!("{:?}", node.kind);
            let short = kind.split([' ', '(', '{']).next().unwrap_or("").to_string();
            b.push(Inst::Comment(format!(
                "// {} ({})",
                node.id,
                short.to_lowercase()
            )));
        }
        let get = |socket: &str| -> Option<Val> {
            let s = node.source(socket)?;
            values.get(s.node)?.get(s.output)?.clone()
        };
        let out_ty = types
            .get(i)
            .and_then(|t| t.first())
            .cloned()
            .flatten()
            .unwrap_or(Ty::FLOAT);
        let outs: Vec<Option<Val>> = match &node.kind {
            Kind::Input(v) => {
                vec![Some(b.load(Place::Stage(slots.varying(*v)), v.ty()))]
            }
            Kind::Time | Kind::Uniform { .. } => {
                let name = match &node.kind {
                    Kind::Uniform { name, .. } => name.as_str(),
                    _ => crate::resources::TIME,
                };
                vec![Some(b.load(Place::Uniform(slots.uniform(name)), out_ty))]
            }
            Kind::Parameter { name } => {
                let slot = g
                    .function
                    .and_then(|f| doc.signatures.get(f))
                    .and_then(|s| s.inputs.iter().position(|(n, _)| n == name))
                    .unwrap_or(0);
                vec![Some(b.load(Place::Parameter(slot), out_ty))]
            }
            Kind::TextureSample { texture, .. } => {
                let sampler = b.load(Place::Uniform(slots.uniform(texture)), Ty::Sampler);
                let uv = get("uv").map(|v| v.op).unwrap_or(Operand::Float(0.0));
                let rgba = b.op(Op::Texture, Ty::Vector(Scalar::Float, 4), &[sampler.op, uv]);
                let mut outs = vec![Some(rgba.clone())];
                for (k, pattern) in ["xyz", "x", "y", "z", "w"].iter().enumerate() {
                    outs.push(used(i, k + 1).then(|| b.swizzle(&rgba, *pattern)));
                }
                outs
            }
            Kind::Constant { .. } if slots.constant(g.function, i).is_some() => {
                let Some((slot, record, field)) = slots.constant(g.function, i) else {
                    continue;
                };
                // The record is loaded once per function, at its first
                // constant: every later instruction is in that block or a
                // join after it, which it dominates.
                let source = match constants {
                    Some(r) => r,
                    None => {
                        let r = b.load(Place::Uniform(slot), record.clone()).op;
                        constants = Some(r);
                        r
                    }
                };
                let result = b.reg(out_ty.clone());
                b.push(Inst::Member {
                    result,
                    source,
                    field: format!("k{field}"),
                });
                vec![Some(Val {
                    op: Operand::Reg(result),
                    ty: out_ty,
                })]
            }
            Kind::Constant { ty, values: lits } => {
                let ops: Vec<Operand> = lits
                    .iter()
                    .map(|l| match l {
                        Literal::Bool(x) => Operand::Bool(*x),
                        Literal::Int(x) => Operand::Int(*x),
                        Literal::Float(x) => Operand::Float(*x),
                    })
                    .collect();
                match ty {
                    Ty::Vector(..) => vec![Some(b.op(Op::Construct, ty.clone(), &ops))],
                    _ => vec![ops.first().map(|op| Val {
                        op: *op,
                        ty: ty.clone(),
                    })],
                }
            }
            Kind::Arith(op) => {
                let (Some(x), Some(y)) = (get("a"), get("b")) else {
                    continue;
                };
                vec![Some(arith(b, *op, &x, &y))]
            }
            Kind::Unary(u) => {
                let Some(x) = get("x") else { continue };
                vec![Some(unary(b, *u, &x))]
            }
            Kind::Binary(op) => {
                let (sa, sb) = if *op == Binary::Step {
                    ("edge", "x")
                } else {
                    ("a", "b")
                };
                let (Some(x), Some(y)) = (get(sa), get(sb)) else {
                    continue;
                };
                vec![Some(binary(b, *op, &x, &y, &out_ty))]
            }
            Kind::Lerp => {
                let (Some(x), Some(y), Some(t)) = (get("a"), get("b"), get("t")) else {
                    continue;
                };
                let d = arith(b, Arith::Subtract, &y, &x);
                let m = arith(b, Arith::Multiply, &d, &t);
                vec![Some(arith(b, Arith::Add, &x, &m))]
            }
            Kind::Clamp => {
                let (Some(x), Some(lo), Some(hi)) = (get("x"), get("min"), get("max")) else {
                    continue;
                };
                let ty = x.ty.clone();
                vec![Some(b.per_component(&ty, &[&x, &lo, &hi], |b, k, c| {
                    clamp(b, k, c[0], c[1], c[2])
                }))]
            }
            Kind::Swizzle { pattern } => {
                let Some(x) = get("x") else { continue };
                vec![Some(b.swizzle(&x, pattern.clone()))]
            }
            Kind::Split => {
                let Some(x) = get("x") else { continue };
                let n = x.ty.components().map(|(_, n)| usize::from(n)).unwrap_or(0);
                (0..4)
                    .map(|c| (c < n && used(i, c)).then(|| b.swizzle(&x, &"xyzw"[c..=c])))
                    .collect()
            }
            Kind::Combine { ty } => {
                let parts: Vec<Operand> = ["x", "y", "z", "w"]
                    .iter()
                    .filter_map(|s| get(s))
                    .map(|v| v.op)
                    .collect();
                vec![Some(b.op(Op::Construct, ty.clone(), &parts))]
            }
            Kind::Convert { ty } => {
                let Some(x) = get("x") else { continue };
                vec![Some(convert(b, &x, ty))]
            }
            Kind::Member { field } => {
                let Some(x) = get("x") else { continue };
                let result = b.reg(out_ty.clone());
                b.push(Inst::Member {
                    result,
                    source: x.op,
                    field: field.clone(),
                });
                vec![Some(Val {
                    op: Operand::Reg(result),
                    ty: out_ty,
                })]
            }
            Kind::Index { constant } => {
                let Some(x) = get("x") else { continue };
                let index = match (constant, get("index")) {
                    (Some(c), _) => Operand::Int(i32::try_from(*c).unwrap_or(0)),
                    (None, Some(v)) => v.op,
                    (None, None) => Operand::Int(0),
                };
                vec![Some(b.op(Op::Index, out_ty, &[x.op, index]))]
            }
            Kind::Compare(op) => {
                let (Some(x), Some(y)) = (get("a"), get("b")) else {
                    continue;
                };
                vec![Some(b.op(
                    Op::Binary(op.binary_op()),
                    Ty::BOOL,
                    &[x.op, y.op],
                ))]
            }
            Kind::Select => {
                let (Some(c), Some(t), Some(f)) = (get("condition"), get("true"), get("false"))
                else {
                    continue;
                };
                vec![Some(b.select(c.op, t.op, f.op, t.ty))]
            }
            Kind::Call { function } => {
                let f = doc
                    .signatures
                    .iter()
                    .position(|s| s.name == *function)
                    .unwrap_or(0);
                let args: Vec<Operand> = node
                    .inputs
                    .iter()
                    .filter_map(|s| get(s))
                    .map(|v| v.op)
                    .collect();
                let result = b.reg(out_ty.clone());
                b.push(Inst::Call {
                    result,
                    function: slots.function(f),
                    arguments: args,
                });
                vec![Some(Val {
                    op: Operand::Reg(result),
                    ty: out_ty,
                })]
            }
            Kind::MaterialOutput | Kind::FragmentOutput { .. } | Kind::Return => continue,
        };
        values[i] = outs;
        let _ = slots.res;
    }
    values
}

fn arith(b: &mut Builder, op: Arith, x: &Val, y: &Val) -> Val {
    let Some((ty, splat)) = typing::arith(op, &x.ty, &y.ty) else {
        return x.clone();
    };
    let widen = |b: &mut Builder, v: &Val| b.op(Op::Construct, ty.clone(), &[v.op]);
    let (x, y) = match splat {
        Splat::None => (x.clone(), y.clone()),
        Splat::A => (widen(b, x), y.clone()),
        Splat::B => (x.clone(), widen(b, y)),
    };
    b.op(Op::Binary(op.binary_op()), ty, &[x.op, y.op])
}

fn negate_scalar(b: &mut Builder, k: Scalar, x: Operand) -> Operand {
    match k {
        Scalar::Float => {
            b.op(
                Op::Binary(BinaryOp::Multiply),
                Ty::FLOAT,
                &[x, Operand::Float(-1.0)],
            )
            .op
        }
        _ => {
            b.op(
                Op::Binary(BinaryOp::Subtract),
                Ty::INT,
                &[Operand::Int(0), x],
            )
            .op
        }
    }
}

/// `x < lo ? lo : x`, then `v > hi ? hi : v`.
fn clamp(b: &mut Builder, k: Scalar, x: Operand, lo: Operand, hi: Operand) -> Operand {
    let below = b.op(Op::Binary(CompareOp::Less.binary_op()), Ty::BOOL, &[x, lo]);
    let v = b.select(below.op, lo, x, Ty::Scalar(k));
    let above = b.op(
        Op::Binary(CompareOp::Greater.binary_op()),
        Ty::BOOL,
        &[v.op, hi],
    );
    b.select(above.op, hi, v.op, Ty::Scalar(k)).op
}

fn unary(b: &mut Builder, u: Unary, x: &Val) -> Val {
    let ty = x.ty.clone();
    match u {
        Unary::Negate => match &ty {
            Ty::Scalar(Scalar::Int) => Val {
                op: negate_scalar(b, Scalar::Int, x.op),
                ty,
            },
            Ty::Vector(Scalar::Int, _) => {
                let z = b.op(Op::Construct, ty.clone(), &[Operand::Int(0)]);
                b.op(Op::Binary(BinaryOp::Subtract), ty, &[z.op, x.op])
            }
            _ => b.op(
                Op::Binary(BinaryOp::Multiply),
                ty,
                &[x.op, Operand::Float(-1.0)],
            ),
        },
        Unary::OneMinus => match &ty {
            Ty::Vector(..) => {
                let ones = b.op(Op::Construct, ty.clone(), &[Operand::Float(1.0)]);
                b.op(Op::Binary(BinaryOp::Subtract), ty, &[ones.op, x.op])
            }
            _ => b.op(
                Op::Binary(BinaryOp::Subtract),
                ty,
                &[Operand::Float(1.0), x.op],
            ),
        },
        Unary::Abs => b.per_component(&ty, &[x], |b, k, c| {
            let negative = b.op(
                Op::Binary(CompareOp::Less.binary_op()),
                Ty::BOOL,
                &[c[0], zero(k)],
            );
            let flipped = negate_scalar(b, k, c[0]);
            b.select(negative.op, flipped, c[0], Ty::Scalar(k)).op
        }),
        Unary::Saturate => b.per_component(&ty, &[x], |b, k, c| clamp(b, k, c[0], zero(k), one(k))),
        Unary::Not => b.op(
            Op::Binary(CompareOp::Equal.binary_op()),
            Ty::BOOL,
            &[x.op, Operand::Bool(false)],
        ),
    }
}

fn binary(b: &mut Builder, op: Binary, x: &Val, y: &Val, out: &Ty) -> Val {
    match op {
        Binary::And => b.select(x.op, y.op, Operand::Bool(false), Ty::BOOL),
        Binary::Or => b.select(x.op, Operand::Bool(true), y.op, Ty::BOOL),
        Binary::Dot => {
            let n = x.ty.components().map(|(_, n)| usize::from(n)).unwrap_or(0);
            let mut sum: Option<Operand> = None;
            for i in 0..n {
                let (p, q) = (b.component(x, i), b.component(y, i));
                let m = b.op(Op::Binary(BinaryOp::Multiply), Ty::FLOAT, &[p, q]).op;
                sum = Some(match sum {
                    None => m,
                    Some(s) => b.op(Op::Binary(BinaryOp::Add), Ty::FLOAT, &[s, m]).op,
                });
            }
            Val {
                op: sum.unwrap_or(Operand::Float(0.0)),
                ty: Ty::FLOAT,
            }
        }
        Binary::Min | Binary::Max => {
            let cmp = if op == Binary::Min {
                CompareOp::Less
            } else {
                CompareOp::Greater
            };
            b.per_component(out, &[x, y], |b, k, c| {
                let pick = b.op(Op::Binary(cmp.binary_op()), Ty::BOOL, &[c[0], c[1]]);
                b.select(pick.op, c[0], c[1], Ty::Scalar(k)).op
            })
        }
        Binary::Step => b.per_component(out, &[x, y], |b, k, c| {
            let below = b.op(
                Op::Binary(CompareOp::Less.binary_op()),
                Ty::BOOL,
                &[c[1], c[0]],
            );
            b.select(below.op, zero(k), one(k), Ty::Scalar(k)).op
        }),
    }
}

fn convert(b: &mut Builder, x: &Val, to: &Ty) -> Val {
    let (Some((from, n)), Some((k, m))) = (x.ty.components(), to.components()) else {
        return x.clone();
    };
    if from == k {
        if n == m {
            return x.clone();
        }
        return b.op(Op::Construct, to.clone(), &[x.op]);
    }
    // Element kinds differ: convert each component, then build the vector.
    let mut parts = Vec::with_capacity(usize::from(m));
    for i in 0..usize::from(m) {
        let c = if n == 1 { x.op } else { b.component(x, i) };
        let part = match from {
            Scalar::Bool => b.select(c, one(k), zero(k), Ty::Scalar(k)).op,
            _ => b.op(Op::Construct, Ty::Scalar(k), &[c]).op,
        };
        parts.push(part);
        if n == 1 {
            break;
        }
    }
    if m == 1 {
        return Val {
            op: parts[0],
            ty: to.clone(),
        };
    }
    if parts.len() == 1 {
        return b.op(Op::Construct, to.clone(), &[parts[0]]);
    }
    b.op(Op::Construct, to.clone(), &parts)
}
