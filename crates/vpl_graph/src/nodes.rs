//! The node catalogue: each kind's parameters and sockets.

use crate::error::{ErrorKind, GraphError};
use crate::format::RawNode;
use crate::types::{Records, Scalar, Ty};
use std::borrow::Cow;

/// A stage input the vertex stage forwards to the fragment stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Varying {
    /// Texture coordinates (attribute location 1).
    Uv,
    /// Per-vertex colour (attribute location 2).
    VertexColor,
    /// Object-space position (attribute location 0).
    Position,
    /// Normal (attribute location 3).
    Normal,
}

impl Varying {
    /// Every varying, in interface order.
    pub const ALL: [Varying; 4] = [
        Varying::Uv,
        Varying::VertexColor,
        Varying::Position,
        Varying::Normal,
    ];

    /// The varying's type.
    pub fn ty(self) -> Ty {
        match self {
            Varying::Uv => Ty::Vector(Scalar::Float, 2),
            Varying::VertexColor => Ty::Vector(Scalar::Float, 4),
            Varying::Position | Varying::Normal => Ty::Vector(Scalar::Float, 3),
        }
    }

    /// The interface name in both stages.
    pub fn name(self) -> &'static str {
        match self {
            Varying::Uv => "uv",
            Varying::VertexColor => "vertex_color",
            Varying::Position => "position",
            Varying::Normal => "normal",
        }
    }
}

/// Texture addressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wrap {
    /// Repeat.
    Repeat,
    /// Clamp to edge.
    ClampToEdge,
}

/// Texture minification filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MinFilter {
    /// Nearest texel of the base level.
    Nearest,
    /// Linear on the base level.
    Linear,
    /// Nearest texel of the nearest mip level.
    NearestMipmapNearest,
}

/// The sampler state of a texture (spec 7.3.1: host-supplied, recorded by
/// the graph and applied by the renderers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SamplerState {
    /// Addressing in s and t.
    pub wrap: Wrap,
    /// Minification.
    pub min_filter: MinFilter,
    /// Magnification: linear when true.
    pub mag_linear: bool,
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `==`.
    Equal,
    /// `!=`.
    NotEqual,
    /// `<`.
    Less,
    /// `<=`.
    LessEqual,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterEqual,
}

impl CompareOp {
    /// The VPL instruction word.
    pub fn keyword(self) -> &'static str {
        match self {
            CompareOp::Equal => "equal",
            CompareOp::NotEqual => "not_equal",
            CompareOp::Less => "less",
            CompareOp::LessEqual => "less_equal",
            CompareOp::Greater => "greater",
            CompareOp::GreaterEqual => "greater_equal",
        }
    }

    /// The VPL comparison.
    pub fn binary_op(self) -> vpl::ir::BinaryOp {
        use vpl::ir::BinaryOp as B;
        match self {
            CompareOp::Equal => B::Equal,
            CompareOp::NotEqual => B::NotEqual,
            CompareOp::Less => B::Less,
            CompareOp::LessEqual => B::LessEqual,
            CompareOp::Greater => B::Greater,
            CompareOp::GreaterEqual => B::GreaterEqual,
        }
    }

    fn parse(s: &str) -> Option<CompareOp> {
        Some(match s {
            "equal" => CompareOp::Equal,
            "not_equal" => CompareOp::NotEqual,
            "less" => CompareOp::Less,
            "less_equal" => CompareOp::LessEqual,
            "greater" => CompareOp::Greater,
            "greater_equal" => CompareOp::GreaterEqual,
            _ => return None,
        })
    }
}

/// The four arithmetic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// `+`.
    Add,
    /// `-`.
    Subtract,
    /// `*`.
    Multiply,
    /// `/`.
    Divide,
}

impl Arith {
    /// The VPL instruction word.
    pub fn keyword(self) -> &'static str {
        match self {
            Arith::Add => "add",
            Arith::Subtract => "subtract",
            Arith::Multiply => "multiply",
            Arith::Divide => "divide",
        }
    }

    /// The VPL operation.
    pub fn binary_op(self) -> vpl::ir::BinaryOp {
        use vpl::ir::BinaryOp as B;
        match self {
            Arith::Add => B::Add,
            Arith::Subtract => B::Subtract,
            Arith::Multiply => B::Multiply,
            Arith::Divide => B::Divide,
        }
    }
}

/// Component-wise functions built from comparisons and selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unary {
    /// `-x`.
    Negate,
    /// `1 - x`.
    OneMinus,
    /// `|x|`.
    Abs,
    /// `clamp(x, 0, 1)`.
    Saturate,
    /// Boolean not.
    Not,
}

/// Two-input component-wise functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    /// Smaller of `a`, `b`.
    Min,
    /// Larger of `a`, `b`.
    Max,
    /// `0` where `x < edge`, else `1` (inputs `edge`, `x`).
    Step,
    /// Dot product of float vectors.
    Dot,
    /// Boolean and (a select).
    And,
    /// Boolean or (a select).
    Or,
}

/// A node kind with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A vertex attribute forwarded to the fragment stage.
    Input(Varying),
    /// The `time` float uniform.
    Time,
    /// A named uniform.
    Uniform { name: String, ty: Ty },
    /// A sub-graph input.
    Parameter { name: String },
    /// A texture sample through the sampler uniform `texture`.
    TextureSample {
        texture: String,
        state: SamplerState,
    },
    /// A constant scalar or vector.
    Constant { ty: Ty, values: Vec<Literal> },
    /// `a OP b`.
    Arith(Arith),
    /// `f(x)`.
    Unary(Unary),
    /// `f(a, b)`.
    Binary(Binary),
    /// `a + (b - a) * t`.
    Lerp,
    /// `min(max(x, min), max)`.
    Clamp,
    /// A swizzle with a pattern of `xyzw` (or `rgba`) selectors.
    Swizzle { pattern: String },
    /// A vector's components as scalars.
    Split,
    /// A vector built from scalars and vectors.
    Combine { ty: Ty },
    /// A conversion (int or bool to float, bool to int, scalar to vector).
    Convert { ty: Ty },
    /// A record field.
    Member { field: String },
    /// An array element (constant `index` or the `index` socket).
    Index { constant: Option<i64> },
    /// A scalar comparison.
    Compare(CompareOp),
    /// `condition ? true : false`, lowered to branches.
    Select,
    /// A call of a sub-graph.
    Call { function: String },
    /// The material's base colour (and opacity).
    MaterialOutput,
    /// Another fragment output.
    FragmentOutput {
        name: String,
        ty: Option<Ty>,
        location: i32,
    },
    /// A sub-graph's result.
    Return,
}

/// A constant component.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    /// `true` / `false`.
    Bool(bool),
    /// An `int`.
    Int(i32),
    /// A finite `float`.
    Float(f32),
}

/// A static list of socket names (as `Cow`s, so a checked node's input
/// list borrows it instead of allocating).
macro_rules! sockets {
    ($($name:literal),*) => {
        &[$(Cow::Borrowed($name)),*]
    };
}

/// Input sockets of the arithmetic nodes.
const AB: &[Cow<'static, str>] = sockets!["a", "b"];

impl Kind {
    /// The input sockets, in order (a `call` node's are its sub-graph's
    /// inputs, supplied by the checker).
    pub fn inputs(&self) -> &'static [Cow<'static, str>] {
        match self {
            Kind::Input(_)
            | Kind::Time
            | Kind::Uniform { .. }
            | Kind::Parameter { .. }
            | Kind::Constant { .. }
            | Kind::Call { .. } => &[],
            Kind::TextureSample { .. } => sockets!["uv"],
            Kind::Arith(_) => AB,
            Kind::Unary(_) => sockets!["x"],
            Kind::Binary(Binary::Step) => sockets!["edge", "x"],
            Kind::Binary(_) => AB,
            Kind::Lerp => sockets!["a", "b", "t"],
            Kind::Clamp => sockets!["x", "min", "max"],
            Kind::Swizzle { .. } | Kind::Split | Kind::Convert { .. } | Kind::Member { .. } => {
                sockets!["x"]
            }
            Kind::Combine { .. } => sockets!["x", "y", "z", "w"],
            Kind::Index { .. } => sockets!["x", "index"],
            Kind::Compare(_) => AB,
            Kind::Select => sockets!["condition", "true", "false"],
            Kind::MaterialOutput => sockets!["base_color", "opacity"],
            Kind::FragmentOutput { .. } | Kind::Return => sockets!["value"],
        }
    }

    /// Whether input `socket` may stay unconnected.
    pub fn optional(&self, socket: &str) -> bool {
        match self {
            Kind::Combine { .. } => true,
            Kind::MaterialOutput => socket == "opacity",
            Kind::Index { constant } => socket == "index" && constant.is_some(),
            _ => false,
        }
    }

    /// The output sockets, in order.
    pub fn outputs(&self) -> &'static [&'static str] {
        match self {
            Kind::TextureSample { .. } => &["rgba", "rgb", "r", "g", "b", "a"],
            Kind::Split => &["x", "y", "z", "w"],
            Kind::MaterialOutput | Kind::FragmentOutput { .. } | Kind::Return => &[],
            _ => &["out"],
        }
    }

    /// Whether this kind is an output of the main graph.
    pub fn is_output(&self) -> bool {
        matches!(self, Kind::MaterialOutput | Kind::FragmentOutput { .. })
    }
}

/// Every kind name `parse` accepts, for messages and the editor's palette.
pub const KIND_NAMES: &[&str] = &[
    "uv",
    "vertex_color",
    "position",
    "normal",
    "time",
    "uniform",
    "parameter",
    "texture_sample",
    "constant",
    "add",
    "subtract",
    "multiply",
    "divide",
    "negate",
    "one_minus",
    "abs",
    "saturate",
    "not",
    "min",
    "max",
    "step",
    "dot",
    "and",
    "or",
    "lerp",
    "clamp",
    "swizzle",
    "split",
    "combine",
    "convert",
    "member",
    "index",
    "compare",
    "select",
    "call",
    "material_output",
    "fragment_output",
    "return",
];

/// Whether `id` is a valid node id.
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && id.len() <= 64
}

/// The parameters a kind takes (others must be absent).
fn allowed(kind: &str) -> &'static [&'static str] {
    match kind {
        "uniform" => &["type", "name"],
        "parameter" => &["name"],
        "texture_sample" => &["name", "wrap", "min_filter", "mag_filter"],
        "constant" => &["type", "value", "range"],
        "swizzle" => &["pattern"],
        "combine" | "convert" => &["type"],
        "member" => &["field"],
        "index" => &["index"],
        "compare" => &["op"],
        "call" => &["function"],
        "fragment_output" => &["name", "type", "location"],
        _ => &[],
    }
}

/// Builds a node's kind from its JSON form.
pub fn parse(raw: &RawNode, records: &Records) -> Result<Kind, GraphError> {
    let err = |m: String| GraphError::new(ErrorKind::Node, m).at_node(&raw.id);
    let present: [(&str, bool); 12] = [
        ("type", raw.ty.is_some()),
        ("value", raw.value.is_some()),
        ("name", raw.name.is_some()),
        ("op", raw.op.is_some()),
        ("pattern", raw.pattern.is_some()),
        ("function", raw.function.is_some()),
        ("field", raw.field.is_some()),
        ("index", raw.index.is_some()),
        ("location", raw.location.is_some()),
        ("wrap", raw.wrap.is_some()),
        ("min_filter", raw.min_filter.is_some()),
        ("mag_filter", raw.mag_filter.is_some()),
    ];
    let allowed_here = allowed(&raw.kind);
    for (name, is_present) in present {
        if is_present && !allowed_here.contains(&name) {
            return Err(err(format!(
                "a `{}` node takes no `{name}` parameter",
                raw.kind
            )));
        }
    }
    if raw.range.is_some() && raw.kind != "constant" {
        return Err(err(format!("a `{}` node takes no `range`", raw.kind)));
    }
    let need = |v: &Option<String>, what: &str| {
        v.clone()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| err(format!("a `{}` node needs a nonempty `{what}`", raw.kind)))
    };
    let ty = |what: &Option<String>| -> Result<Ty, GraphError> {
        let s = need(what, "type")?;
        Ty::parse(&s, records).map_err(err)
    };
    Ok(match &*raw.kind {
        "uv" => Kind::Input(Varying::Uv),
        "vertex_color" => Kind::Input(Varying::VertexColor),
        "position" => Kind::Input(Varying::Position),
        "normal" => Kind::Input(Varying::Normal),
        "time" => Kind::Time,
        "uniform" => {
            let t = ty(&raw.ty)?;
            if t.has_sampler(records) {
                return Err(err(
                    "a uniform node cannot hold a sampler (sample it with `texture_sample`)".into(),
                ));
            }
            Kind::Uniform {
                name: need(&raw.name, "name")?,
                ty: t,
            }
        }
        "parameter" => Kind::Parameter {
            name: need(&raw.name, "name")?,
        },
        "texture_sample" => Kind::TextureSample {
            texture: need(&raw.name, "name")?,
            state: sampler_state(raw).map_err(err)?,
        },
        "constant" => {
            let t = ty(&raw.ty)?;
            let values = constant_values(&t, raw.value.as_ref()).map_err(err)?;
            Kind::Constant { ty: t, values }
        }
        "add" => Kind::Arith(Arith::Add),
        "subtract" => Kind::Arith(Arith::Subtract),
        "multiply" => Kind::Arith(Arith::Multiply),
        "divide" => Kind::Arith(Arith::Divide),
        "negate" => Kind::Unary(Unary::Negate),
        "one_minus" => Kind::Unary(Unary::OneMinus),
        "abs" => Kind::Unary(Unary::Abs),
        "saturate" => Kind::Unary(Unary::Saturate),
        "not" => Kind::Unary(Unary::Not),
        "min" => Kind::Binary(Binary::Min),
        "max" => Kind::Binary(Binary::Max),
        "step" => Kind::Binary(Binary::Step),
        "dot" => Kind::Binary(Binary::Dot),
        "and" => Kind::Binary(Binary::And),
        "or" => Kind::Binary(Binary::Or),
        "lerp" => Kind::Lerp,
        "clamp" => Kind::Clamp,
        "swizzle" => {
            let p = need(&raw.pattern, "pattern")?;
            let normal: Option<String> = p
                .chars()
                .map(|c| match c {
                    'x' | 'r' => Some('x'),
                    'y' | 'g' => Some('y'),
                    'z' | 'b' => Some('z'),
                    'w' | 'a' => Some('w'),
                    _ => None,
                })
                .collect();
            match normal {
                Some(n) if (1..=4).contains(&n.len()) => Kind::Swizzle { pattern: n },
                _ => {
                    return Err(err(format!(
                        "swizzle pattern {p:?} must be 1 to 4 of x, y, z, w (or r, g, b, a)"
                    )));
                }
            }
        }
        "split" => Kind::Split,
        "combine" => {
            let t = ty(&raw.ty)?;
            if !matches!(t, Ty::Vector(..)) {
                return Err(err("`combine` builds a vector type (e.g. float3)".into()));
            }
            Kind::Combine { ty: t }
        }
        "convert" => {
            let t = ty(&raw.ty)?;
            if t.components().is_none() {
                return Err(err("`convert` produces a scalar or vector type".into()));
            }
            Kind::Convert { ty: t }
        }
        "member" => Kind::Member {
            field: need(&raw.field, "field")?,
        },
        "index" => Kind::Index {
            constant: raw.index,
        },
        "compare" => {
            let op = need(&raw.op, "op")?;
            Kind::Compare(CompareOp::parse(&op).ok_or_else(|| {
                err(format!(
                    "unknown comparison {op:?} (equal, not_equal, less, less_equal, greater, greater_equal)"
                ))
            })?)
        }
        "select" => Kind::Select,
        "call" => Kind::Call {
            function: need(&raw.function, "function")?,
        },
        "material_output" => Kind::MaterialOutput,
        "fragment_output" => {
            let t = match &raw.ty {
                Some(_) => Some(ty(&raw.ty)?),
                None => None,
            };
            let location = raw.location.unwrap_or(-1);
            if !(-1..=15).contains(&location) || location == 0 {
                return Err(err(format!(
                    "fragment output location {location} must be 1 to 15 (0 is the base colour) or absent"
                )));
            }
            Kind::FragmentOutput {
                name: need(&raw.name, "name")?,
                ty: t,
                location,
            }
        }
        "return" => Kind::Return,
        other => {
            return Err(err(format!(
                "unknown node kind {other:?} (kinds: {})",
                KIND_NAMES.join(", ")
            )));
        }
    })
}

fn sampler_state(raw: &RawNode) -> Result<SamplerState, String> {
    let wrap = match raw.wrap.as_deref() {
        None | Some("repeat") => Wrap::Repeat,
        Some("clamp_to_edge") => Wrap::ClampToEdge,
        Some(w) => return Err(format!("unknown wrap {w:?} (repeat, clamp_to_edge)")),
    };
    let min_filter = match raw.min_filter.as_deref() {
        None | Some("linear") => MinFilter::Linear,
        Some("nearest") => MinFilter::Nearest,
        Some("nearest_mipmap_nearest") => MinFilter::NearestMipmapNearest,
        Some(f) => {
            return Err(format!(
                "unknown min_filter {f:?} (linear, nearest, nearest_mipmap_nearest)"
            ));
        }
    };
    let mag_linear = match raw.mag_filter.as_deref() {
        None | Some("linear") => true,
        Some("nearest") => false,
        Some(f) => return Err(format!("unknown mag_filter {f:?} (linear, nearest)")),
    };
    Ok(SamplerState {
        wrap,
        min_filter,
        mag_linear,
    })
}

/// The components of a constant of type `ty`: one value per component (a
/// single value fills every component).
fn constant_values(ty: &Ty, value: Option<&serde_json::Value>) -> Result<Vec<Literal>, String> {
    let Some((kind, n)) = ty.components() else {
        return Err("a constant is a scalar or vector (bool, int, float, float3, ...)".into());
    };
    let value = value.ok_or("a `constant` node needs a `value`")?;
    let items: Vec<&serde_json::Value> = match value {
        serde_json::Value::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    if items.len() != 1 && items.len() != usize::from(n) {
        return Err(format!(
            "a {}-component constant takes 1 or {n} values, not {}",
            n,
            items.len()
        ));
    }
    let mut out = Vec::with_capacity(usize::from(n));
    for item in &items {
        let lit = match (kind, item) {
            (Scalar::Bool, serde_json::Value::Bool(b)) => Literal::Bool(*b),
            (Scalar::Int, serde_json::Value::Number(x)) => Literal::Int(
                x.as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| format!("{x} is not a 32-bit integer"))?,
            ),
            (Scalar::Float, serde_json::Value::Number(x)) => {
                let f = x.as_f64().map(|v| v as f32).filter(|f| f.is_finite());
                Literal::Float(f.ok_or_else(|| format!("{x} is not a finite float"))?)
            }
            _ => {
                return Err(format!(
                    "value {item} does not fit a {} constant",
                    kind.keyword()
                ));
            }
        };
        out.push(lit);
    }
    if out.len() == 1 && n > 1 {
        let v = out[0];
        out = vec![v; usize::from(n)];
    }
    Ok(out)
}

/// The parameters a new node of `kind` gets in an editor (valid for
/// [`parse`]); an empty object for kinds without parameters.
pub fn defaults(kind: &str) -> serde_json::Value {
    use serde_json::json;
    match kind {
        "uniform" => json!({"name": "value", "type": "float"}),
        "parameter" => json!({"name": "input"}),
        "texture_sample" => {
            json!({"name": "texture", "wrap": "repeat", "min_filter": "linear", "mag_filter": "linear"})
        }
        "constant" => json!({"type": "float3", "value": [1.0, 1.0, 1.0], "range": [0.0, 1.0]}),
        "swizzle" => json!({"pattern": "xyz"}),
        "combine" => json!({"type": "float3"}),
        "convert" => json!({"type": "float"}),
        "member" => json!({"field": "value"}),
        "index" => json!({"index": 0}),
        "compare" => json!({"op": "less"}),
        "call" => json!({"function": "function"}),
        "fragment_output" => json!({"name": "extra", "location": 1}),
        _ => json!({}),
    }
}

/// Every node kind with its input and output sockets and editor defaults
/// (`[{kind, inputs, outputs, defaults}]`; a `call` node's inputs are its
/// sub-graph's, so they are listed empty).
pub fn catalogue() -> serde_json::Value {
    let mut out = Vec::new();
    for kind in KIND_NAMES {
        let defaults = defaults(kind);
        let mut raw = serde_json::json!({"id": "x", "kind": kind});
        if let (Some(o), Some(d)) = (raw.as_object_mut(), defaults.as_object()) {
            o.extend(d.clone());
        }
        let text = raw.to_string();
        let parsed = serde_json::from_str::<RawNode>(&text)
            .ok()
            .and_then(|r| parse(&r, &Records::default()).ok());
        let (inputs, outputs): (Vec<&str>, Vec<&str>) = match &parsed {
            Some(k) => (
                k.inputs().iter().map(|s| &**s).collect(),
                k.outputs().to_vec(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        out.push(serde_json::json!({"kind": kind, "inputs": inputs, "outputs": outputs, "defaults": defaults}));
    }
    serde_json::Value::Array(out)
}
