//! Type inference: each node's output types from its inputs' types, in
//! topological order; mismatches name the node and socket.

use crate::check::{Checked, Graph, Node};
use crate::error::{ErrorKind, GraphError};
use crate::nodes::{Arith, Binary, CompareOp, Kind, Literal, Unary};
use crate::types::{Records, Scalar, Ty};

/// The inferred output types of every node of one graph (`None`: not
/// known because of an error upstream, or a socket the node lacks).
pub type GraphTypes = Vec<Vec<Option<Ty>>>;

/// Inferred types of a whole document.
#[derive(Debug, Clone)]
pub struct Types {
    /// The material graph's.
    pub main: GraphTypes,
    /// Each sub-graph's.
    pub functions: Vec<GraphTypes>,
}

/// Which operand of an arithmetic node is splatted into the other's
/// vector type (VPL has no implicit promotion, so the lowering constructs
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Splat {
    /// Neither: VPL's operand table takes the pair.
    None,
    /// `a` is a scalar widened to `b`'s vector type.
    A,
    /// `b` is a scalar widened to `a`'s vector type.
    B,
}

/// The result of `a OP b` and the splat it needs, or `None` if no rule
/// applies.
pub fn arith(op: Arith, a: &Ty, b: &Ty) -> Option<(Ty, Splat)> {
    use Ty::{Matrix, Scalar as S, Vector};
    let fl = Scalar::Float;
    match (a, b) {
        (S(x), S(y)) if x == y && *x != Scalar::Bool => Some((a.clone(), Splat::None)),
        (Vector(x, n), Vector(y, m)) if x == y && n == m && *x != Scalar::Bool => {
            Some((a.clone(), Splat::None))
        }
        (Matrix(r, c), Matrix(r2, c2)) => match op {
            Arith::Multiply if c == r2 => Some((Matrix(*r, *c2), Splat::None)),
            Arith::Add | Arith::Subtract | Arith::Divide if r == r2 && c == c2 => {
                Some((a.clone(), Splat::None))
            }
            _ => None,
        },
        (Matrix(r, c), Vector(k, n)) if op == Arith::Multiply && *k == fl && c == n => {
            Some((Ty::vector(fl, *r), Splat::None))
        }
        (Vector(Scalar::Float, _) | Matrix(..), S(Scalar::Float))
            if matches!(op, Arith::Multiply | Arith::Divide) =>
        {
            Some((a.clone(), Splat::None))
        }
        (S(Scalar::Float), Vector(Scalar::Float, _) | Matrix(..)) if op == Arith::Multiply => {
            Some((b.clone(), Splat::None))
        }
        (S(s), Vector(k, _)) if s == k && *s != Scalar::Bool => Some((b.clone(), Splat::A)),
        (Vector(k, _), S(s)) if s == k && *s != Scalar::Bool => Some((a.clone(), Splat::B)),
        _ => None,
    }
}

/// What reaches one input socket.
#[derive(Debug, Clone)]
enum In {
    /// Nothing is connected.
    Missing,
    /// The producer's type is unknown (an error was reported there).
    Unknown,
    /// A value of this type.
    Ty(Ty),
}

/// Infers the types of every graph; every error found is returned.
pub fn infer(doc: &Checked) -> Result<Types, Vec<GraphError>> {
    let mut errors = Vec::new();
    let mut functions = Vec::new();
    for g in &doc.functions {
        functions.push(infer_graph(doc, g, &mut errors));
    }
    let main = infer_graph(doc, &doc.main, &mut errors);
    if errors.is_empty() {
        Ok(Types { main, functions })
    } else {
        Err(errors)
    }
}

fn infer_graph(doc: &Checked, g: &Graph, errors: &mut Vec<GraphError>) -> GraphTypes {
    let function = g.function.and_then(|f| doc.signatures.get(f));
    let fname = function.map(|s| s.name.as_str());
    // A node's types stay empty (unknown) until its rule gives them.
    let mut types: GraphTypes = vec![Vec::new(); g.nodes.len()];
    // Which output sockets edges use, one bit per socket (split and
    // texture outputs are checked against them; no kind has more than 8).
    let mut used = vec![0u8; g.nodes.len()];
    for n in &g.nodes {
        for s in n.sources.iter().flatten() {
            if let Some(u) = used.get_mut(s.node)
                && s.output < 8
            {
                *u |= 1 << s.output;
            }
        }
    }
    let mut inputs: Vec<In> = Vec::new();
    for &i in &g.order {
        let node = &g.nodes[i];
        inputs.clear();
        inputs.extend(node.sources.iter().map(|s| match s {
            None => In::Missing,
            Some(s) => match types[s.node].get(s.output).cloned().flatten() {
                Some(t) => In::Ty(t),
                None => In::Unknown,
            },
        }));
        let mut missing = false;
        for (socket, input) in node.inputs.iter().zip(&inputs) {
            if matches!(input, In::Missing) && !node.kind.optional(socket) {
                errors.push(
                    GraphError::new(ErrorKind::MissingInput, "this input is not connected")
                        .at_node(&node.id)
                        .at_socket(socket)
                        .in_function(fname),
                );
                missing = true;
            }
        }
        if missing || inputs.iter().any(|x| matches!(x, In::Unknown)) {
            continue;
        }
        let ctx = Ctx {
            doc,
            node,
            graph: g,
            function,
        };
        match ctx.rule(&inputs, used[i]) {
            Ok(out) => types[i] = out,
            Err(e) => errors.push(e.at_node(&node.id).in_function(fname)),
        }
    }
    types
}

struct Ctx<'a> {
    doc: &'a Checked,
    node: &'a Node,
    graph: &'a Graph,
    function: Option<&'a crate::check::Signature>,
}

/// A type error at `socket`.
fn mismatch(socket: &str, message: String) -> GraphError {
    GraphError::new(ErrorKind::Type, message).at_socket(socket)
}

impl Ctx<'_> {
    fn records(&self) -> &Records {
        &self.doc.records
    }

    fn show(&self, t: &Ty) -> String {
        t.display(self.records()).to_string()
    }

    /// The type at input `socket` (connected; missing ones were reported).
    fn at(&self, inputs: &[In], socket: &str) -> Option<Ty> {
        let i = self.node.inputs.iter().position(|s| s == socket)?;
        match inputs.get(i)? {
            In::Ty(t) => Some(t.clone()),
            _ => None,
        }
    }

    fn get(&self, inputs: &[In], socket: &str) -> Result<Ty, GraphError> {
        self.at(inputs, socket).ok_or_else(|| {
            GraphError::new(ErrorKind::MissingInput, "this input is not connected")
                .at_socket(socket)
        })
    }

    /// Requires `t` at `socket` to satisfy `ok`, described as `what`.
    fn want(&self, t: &Ty, socket: &str, ok: bool, what: &str) -> Result<(), GraphError> {
        if ok {
            Ok(())
        } else {
            Err(mismatch(
                socket,
                format!("expected {what}, found {}", self.show(t)),
            ))
        }
    }

    /// A component-wise operand: the same type as `like`, or a scalar of
    /// its element kind.
    fn like(&self, t: &Ty, socket: &str, like: &Ty) -> Result<(), GraphError> {
        let scalar = like.components().map(|(k, _)| Ty::Scalar(k));
        let ok = t == like || Some(t) == scalar.as_ref();
        self.want(
            t,
            socket,
            ok,
            &format!(
                "{} (matching the first input) or its scalar",
                self.show(like)
            ),
        )
    }

    fn rule(&self, inputs: &[In], used: u8) -> Result<Vec<Option<Ty>>, GraphError> {
        let one = |t: Ty| Ok(vec![Some(t)]);
        let kind = &self.node.kind;
        match kind {
            Kind::Input(v) => one(v.ty()),
            Kind::Time => one(Ty::FLOAT),
            Kind::Uniform { ty, .. } | Kind::Constant { ty, .. } => one(ty.clone()),
            Kind::Parameter { name } => {
                let sig = self.function.ok_or_else(|| {
                    GraphError::new(ErrorKind::Output, "a parameter outside a sub-graph")
                })?;
                match sig.inputs.iter().find(|(n, _)| n == name) {
                    Some((_, t)) => one(t.clone()),
                    None => Err(GraphError::new(
                        ErrorKind::Name,
                        format!("sub-graph {:?} has no input {name:?}", sig.name),
                    )),
                }
            }
            Kind::TextureSample { .. } => {
                let uv = self.get(inputs, "uv")?;
                self.want(&uv, "uv", uv == Ty::Vector(Scalar::Float, 2), "float2")?;
                let f = Ty::FLOAT;
                Ok(vec![
                    Some(Ty::Vector(Scalar::Float, 4)),
                    Some(Ty::Vector(Scalar::Float, 3)),
                    Some(f.clone()),
                    Some(f.clone()),
                    Some(f.clone()),
                    Some(f),
                ])
            }
            Kind::Arith(op) => {
                let (a, b) = (self.get(inputs, "a")?, self.get(inputs, "b")?);
                match arith(*op, &a, &b) {
                    Some((t, _)) => {
                        self.constant_division(*op, &b)?;
                        one(t)
                    }
                    None => Err(mismatch(
                        "b",
                        format!(
                            "no `{}` of {} and {} (matching int/float scalars or vectors, a scalar with a vector, matrix products; no bool)",
                            op.keyword(),
                            self.show(&a),
                            self.show(&b)
                        ),
                    )),
                }
            }
            Kind::Unary(u) => {
                let x = self.get(inputs, "x")?;
                let (ok, what) = match u {
                    Unary::Negate => (
                        x.is_numeric() || matches!(x, Ty::Matrix(..)),
                        "an int or float scalar, vector or matrix",
                    ),
                    Unary::OneMinus | Unary::Saturate => (x.is_float(), "a float scalar or vector"),
                    Unary::Abs => (x.is_numeric(), "an int or float scalar or vector"),
                    Unary::Not => (x == Ty::BOOL, "bool"),
                };
                self.want(&x, "x", ok, what)?;
                one(x)
            }
            Kind::Binary(b) => {
                let (sa, sb) = match b {
                    Binary::Step => ("edge", "x"),
                    _ => ("a", "b"),
                };
                let (a, bt) = (self.get(inputs, sa)?, self.get(inputs, sb)?);
                match b {
                    Binary::And | Binary::Or => {
                        self.want(&a, sa, a == Ty::BOOL, "bool")?;
                        self.want(&bt, sb, bt == Ty::BOOL, "bool")?;
                        one(Ty::BOOL)
                    }
                    Binary::Dot => {
                        self.want(
                            &a,
                            sa,
                            matches!(a, Ty::Vector(Scalar::Float, _)),
                            "a float vector",
                        )?;
                        self.want(&bt, sb, bt == a, &self.show(&a))?;
                        one(Ty::FLOAT)
                    }
                    Binary::Min | Binary::Max | Binary::Step => {
                        let numeric = if *b == Binary::Step {
                            a.is_float()
                        } else {
                            a.is_numeric()
                        };
                        let what = if *b == Binary::Step {
                            "a float scalar or vector"
                        } else {
                            "an int or float scalar or vector"
                        };
                        // The wider operand decides the result.
                        let (wide, narrow, ws, ns) =
                            if matches!(a, Ty::Scalar(_)) && !matches!(bt, Ty::Scalar(_)) {
                                (&bt, &a, sb, sa)
                            } else {
                                (&a, &bt, sa, sb)
                            };
                        self.want(wide, ws, numeric && wide.is_numeric(), what)?;
                        self.like(narrow, ns, wide)?;
                        one(wide.clone())
                    }
                }
            }
            Kind::Lerp => {
                let (a, b, t) = (
                    self.get(inputs, "a")?,
                    self.get(inputs, "b")?,
                    self.get(inputs, "t")?,
                );
                self.want(&a, "a", a.is_float(), "a float scalar or vector")?;
                self.want(&b, "b", b == a, &self.show(&a))?;
                self.like(&t, "t", &a)?;
                one(a)
            }
            Kind::Clamp => {
                let x = self.get(inputs, "x")?;
                self.want(&x, "x", x.is_numeric(), "an int or float scalar or vector")?;
                for s in ["min", "max"] {
                    let t = self.get(inputs, s)?;
                    self.like(&t, s, &x)?;
                }
                one(x)
            }
            Kind::Swizzle { pattern } => {
                let x = self.get(inputs, "x")?;
                let Some((k, n)) = x.components().filter(|(_, n)| *n > 1) else {
                    return Err(mismatch(
                        "x",
                        format!("expected a vector, found {}", self.show(&x)),
                    ));
                };
                let bad = pattern
                    .chars()
                    .find(|c| "xyzw".find(*c).is_none_or(|i| i >= usize::from(n)));
                if let Some(c) = bad {
                    return Err(mismatch(
                        "x",
                        format!("swizzle component {c:?} is outside a {}", self.show(&x)),
                    ));
                }
                one(Ty::vector(k, pattern.len() as u8))
            }
            Kind::Split => {
                let x = self.get(inputs, "x")?;
                let Some((k, n)) = x.components().filter(|(_, n)| *n > 1) else {
                    return Err(mismatch(
                        "x",
                        format!("expected a vector, found {}", self.show(&x)),
                    ));
                };
                let mut out = Vec::new();
                for (i, name) in ["x", "y", "z", "w"].iter().enumerate() {
                    if i < usize::from(n) {
                        out.push(Some(Ty::Scalar(k)));
                    } else if used & (1 << i) != 0 {
                        return Err(GraphError::new(
                            ErrorKind::Edge,
                            format!("a {} has no component {name}", self.show(&x)),
                        )
                        .at_socket(name));
                    } else {
                        out.push(None);
                    }
                }
                Ok(out)
            }
            Kind::Combine { ty } => {
                let Some((k, n)) = ty.components() else {
                    return Err(GraphError::new(ErrorKind::Node, "combine builds a vector"));
                };
                let mut total = 0u32;
                let mut count = 0;
                for s in ["x", "y", "z", "w"] {
                    let Some(t) = self.at(inputs, s) else {
                        continue;
                    };
                    count += 1;
                    let ok = match t.components() {
                        Some((tk, 1)) => tk == k || (k == Scalar::Float && tk == Scalar::Int),
                        Some((tk, _)) => tk == k,
                        None => false,
                    };
                    self.want(&t, s, ok, &format!("{} scalars or vectors", k.keyword()))?;
                    total += u32::from(t.components().map(|(_, m)| m).unwrap_or(0));
                }
                if count == 0 {
                    return Err(GraphError::new(
                        ErrorKind::MissingInput,
                        "combine needs at least one connected input",
                    )
                    .at_socket("x"));
                }
                let fill = count == 1 && total == 1;
                if fill
                    && !matches!(self.at(inputs, "x").or(self.at(inputs, "y")).or(self.at(inputs, "z")).or(self.at(inputs, "w")), Some(Ty::Scalar(tk)) if tk == k)
                {
                    return Err(mismatch(
                        "x",
                        format!(
                            "one scalar fills a {} only if it is a {}",
                            self.show(ty),
                            k.keyword()
                        ),
                    ));
                }
                if total != u32::from(n) && !fill {
                    return Err(mismatch(
                        "x",
                        format!(
                            "the inputs have {total} components; a {} needs {n} (or one scalar)",
                            self.show(ty)
                        ),
                    ));
                }
                one(ty.clone())
            }
            Kind::Convert { ty } => {
                let x = self.get(inputs, "x")?;
                let (Some((from, n)), Some((to, m))) = (x.components(), ty.components()) else {
                    return Err(mismatch(
                        "x",
                        format!("expected a scalar or vector, found {}", self.show(&x)),
                    ));
                };
                if n != m && n != 1 {
                    return Err(mismatch(
                        "x",
                        format!(
                            "cannot convert {} to {} (same size, or a scalar)",
                            self.show(&x),
                            self.show(ty)
                        ),
                    ));
                }
                let ok = from == to
                    || matches!(
                        (from, to),
                        (Scalar::Int, Scalar::Float)
                            | (Scalar::Bool, Scalar::Float)
                            | (Scalar::Bool, Scalar::Int)
                    );
                if !ok {
                    return Err(mismatch(
                        "x",
                        format!(
                            "VPL v1 has no {} to {} conversion (spec 7.2: only int to float; bool converts by selection)",
                            from.keyword(),
                            to.keyword()
                        ),
                    ));
                }
                one(ty.clone())
            }
            Kind::Member { field } => {
                let x = self.get(inputs, "x")?;
                let Ty::Record(r) = x else {
                    return Err(mismatch(
                        "x",
                        format!("expected a record, found {}", self.show(&x)),
                    ));
                };
                match self.records().fields_of(r).iter().find(|(n, _)| n == field) {
                    Some((_, t)) => one(t.clone()),
                    None => Err(mismatch(
                        "x",
                        format!("record {} has no field {field:?}", self.show(&x)),
                    )),
                }
            }
            Kind::Index { constant } => {
                let x = self.get(inputs, "x")?;
                let Ty::Array(element, count) = x else {
                    return Err(mismatch(
                        "x",
                        format!("expected an array, found {}", self.show(&x)),
                    ));
                };
                match (self.at(inputs, "index"), constant) {
                    (Some(_), Some(_)) => {
                        return Err(GraphError::new(
                            ErrorKind::Node,
                            "give the index either as the `index` parameter or by the `index` socket, not both",
                        ));
                    }
                    (Some(t), None) => self.want(&t, "index", t == Ty::INT, "int")?,
                    (None, Some(c)) => {
                        if *c < 0 || *c >= i64::from(count) {
                            return Err(GraphError::new(
                                ErrorKind::Node,
                                format!("index {c} is outside 0..{count}"),
                            ));
                        }
                    }
                    (None, None) => {
                        return Err(GraphError::new(
                            ErrorKind::MissingInput,
                            "this input is not connected",
                        )
                        .at_socket("index"));
                    }
                }
                one(*element)
            }
            Kind::Compare(op) => {
                let (a, b) = (self.get(inputs, "a")?, self.get(inputs, "b")?);
                let ok = match op {
                    CompareOp::Equal | CompareOp::NotEqual => matches!(a, Ty::Scalar(_)),
                    _ => matches!(a, Ty::Scalar(Scalar::Int | Scalar::Float)),
                };
                let what = if matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
                    "a scalar"
                } else {
                    "an int or float scalar"
                };
                self.want(&a, "a", ok, what)?;
                self.want(&b, "b", b == a, &self.show(&a))?;
                one(Ty::BOOL)
            }
            Kind::Select => {
                let c = self.get(inputs, "condition")?;
                self.want(&c, "condition", c == Ty::BOOL, "bool")?;
                let t = self.get(inputs, "true")?;
                let f = self.get(inputs, "false")?;
                self.want(
                    &t,
                    "true",
                    !t.has_sampler(self.records()),
                    "a value without samplers",
                )?;
                self.want(&f, "false", f == t, &self.show(&t))?;
                one(t)
            }
            Kind::Call { function } => {
                let sig = self
                    .doc
                    .signatures
                    .iter()
                    .find(|s| s.name == *function)
                    .ok_or_else(|| {
                        GraphError::new(ErrorKind::Name, format!("no sub-graph named {function:?}"))
                    })?;
                for (name, ty) in &sig.inputs {
                    let t = self.get(inputs, name)?;
                    self.want(&t, name, t == *ty, &self.show(ty))?;
                }
                one(sig.output.clone())
            }
            Kind::MaterialOutput => {
                let c = self.get(inputs, "base_color")?;
                let ok = matches!(c, Ty::Vector(Scalar::Float, 3 | 4));
                self.want(&c, "base_color", ok, "float3 or float4")?;
                if let Some(o) = self.at(inputs, "opacity") {
                    self.want(&o, "opacity", o == Ty::FLOAT, "float")?;
                }
                Ok(vec![])
            }
            Kind::FragmentOutput { ty, .. } => {
                let v = self.get(inputs, "value")?;
                self.want(
                    &v,
                    "value",
                    v.is_numeric(),
                    "an int or float scalar or vector",
                )?;
                if let Some(t) = ty {
                    self.want(&v, "value", v == *t, &self.show(t))?;
                }
                Ok(vec![])
            }
            Kind::Return => {
                let v = self.get(inputs, "value")?;
                if let Some(sig) = self.function {
                    self.want(&v, "value", v == sig.output, &self.show(&sig.output))?;
                }
                Ok(vec![])
            }
        }
    }

    /// Integer division by a constant zero (or of the constant minimum by
    /// -1) is rejected by the verifier (spec 4.1), so it is a graph error.
    fn constant_division(&self, op: Arith, b: &Ty) -> Result<(), GraphError> {
        if op != Arith::Divide || *b != Ty::INT {
            return Ok(());
        }
        let constant = |socket: &str| {
            let s = self.node.source(socket)?;
            match &self.graph.nodes.get(s.node)?.kind {
                Kind::Constant { values, .. } => match values.first() {
                    Some(Literal::Int(v)) => Some(*v),
                    _ => None,
                },
                _ => None,
            }
        };
        match (constant("a"), constant("b")) {
            (_, Some(0)) => Err(mismatch(
                "b",
                "integer division by the constant 0 (spec 4.1 rejects it)".into(),
            )),
            (Some(i32::MIN), Some(-1)) => Err(mismatch(
                "b",
                "integer division of the minimum by -1 (spec 4.1 rejects it)".into(),
            )),
            _ => Ok(()),
        }
    }
}
