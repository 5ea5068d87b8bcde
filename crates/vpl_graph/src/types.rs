//! Graph value types and their spelling (`float3`, `int2`, `float4x4`,
//! `sampler2D`, a record name, `T[N]`).

use std::fmt;

/// Bound on type nesting the compiler follows.
pub const MAX_TYPE_DEPTH: usize = 128;

/// A scalar element kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// `bool`.
    Bool,
    /// `int` (signed 32-bit).
    Int,
    /// `float` (binary32).
    Float,
}

impl Scalar {
    /// The VPL keyword (`bool`, `int`, `float`).
    pub fn keyword(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int => "int",
            Scalar::Float => "float",
        }
    }
}

/// A graph value type: a VPL type (section 4) as the graph spells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    /// No value (only as a function return type in the generated module).
    Void,
    /// A scalar.
    Scalar(Scalar),
    /// A vector of 2 to 4 components.
    Vector(Scalar, u8),
    /// A floating matrix, rows then columns.
    Matrix(u8, u8),
    /// `sampler2D`.
    Sampler,
    /// A record declared in the graph's `records`, by index.
    Record(usize),
    /// A fixed-length array.
    Array(Box<Ty>, u32),
}

/// The records a graph declares: names and fields, used to spell and
/// resolve [`Ty::Record`].
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// Record names, by index.
    pub names: Vec<String>,
    /// Record fields (name, type), by index.
    pub fields: Vec<Vec<(String, Ty)>>,
}

impl Records {
    /// The index of the record called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The fields of record `index` (empty for an unknown index).
    pub fn fields_of(&self, index: usize) -> &[(String, Ty)] {
        self.fields.get(index).map(Vec::as_slice).unwrap_or(&[])
    }
}

impl Ty {
    /// `float`.
    pub const FLOAT: Ty = Ty::Scalar(Scalar::Float);
    /// `int`.
    pub const INT: Ty = Ty::Scalar(Scalar::Int);
    /// `bool`.
    pub const BOOL: Ty = Ty::Scalar(Scalar::Bool);

    /// A scalar (`n == 1`) or vector type of `kind`.
    pub fn vector(kind: Scalar, n: u8) -> Ty {
        if n == 1 {
            Ty::Scalar(kind)
        } else {
            Ty::Vector(kind, n)
        }
    }

    /// The element kind and component count of a scalar or vector.
    pub fn components(&self) -> Option<(Scalar, u8)> {
        match self {
            Ty::Scalar(k) => Some((*k, 1)),
            Ty::Vector(k, n) => Some((*k, *n)),
            _ => None,
        }
    }

    /// Whether this is an `int` or `float` scalar or vector.
    pub fn is_numeric(&self) -> bool {
        matches!(self.components(), Some((Scalar::Int | Scalar::Float, _)))
    }

    /// Whether this is a `float` scalar or vector.
    pub fn is_float(&self) -> bool {
        matches!(self.components(), Some((Scalar::Float, _)))
    }

    /// Whether the type contains a sampler (directly or in an aggregate).
    pub fn has_sampler(&self, records: &Records) -> bool {
        self.has_sampler_within(records, 0)
    }

    fn has_sampler_within(&self, records: &Records, depth: usize) -> bool {
        if depth > MAX_TYPE_DEPTH {
            return false;
        }
        match self {
            Ty::Sampler => true,
            Ty::Array(e, _) => e.has_sampler_within(records, depth + 1),
            Ty::Record(r) => records
                .fields_of(*r)
                .iter()
                .any(|(_, t)| t.has_sampler_within(records, depth + 1)),
            _ => false,
        }
    }

    /// Parses a type spelling; records resolve through `records`.
    pub fn parse(s: &str, records: &Records) -> Result<Ty, String> {
        let s = s.trim();
        if let Some(open) = s.rfind('[') {
            let Some(count) = s[open + 1..].strip_suffix(']') else {
                return Err(format!("type {s:?}: `[` without a closing `]`"));
            };
            let n: u32 = count
                .parse()
                .ok()
                .filter(|n| *n > 0 && *n <= i32::MAX as u32)
                .ok_or_else(|| format!("type {s:?}: array length must be 1 to 2^31-1"))?;
            return Ok(Ty::Array(Box::new(Ty::parse(&s[..open], records)?), n));
        }
        let simple = match s {
            "bool" => Some(Ty::BOOL),
            "int" => Some(Ty::INT),
            "float" => Some(Ty::FLOAT),
            "sampler2D" => Some(Ty::Sampler),
            _ => None,
        };
        if let Some(t) = simple {
            return Ok(t);
        }
        for kind in [Scalar::Bool, Scalar::Int, Scalar::Float] {
            let Some(rest) = s.strip_prefix(kind.keyword()) else {
                continue;
            };
            let bytes = rest.as_bytes();
            let digit = |b: u8| (b'2'..=b'4').contains(&b).then(|| b - b'0');
            match bytes {
                [n] => {
                    if let Some(n) = digit(*n) {
                        return Ok(Ty::Vector(kind, n));
                    }
                }
                [r, b'x', c] if kind == Scalar::Float => {
                    if let (Some(r), Some(c)) = (digit(*r), digit(*c)) {
                        return Ok(Ty::Matrix(r, c));
                    }
                }
                _ => {}
            }
        }
        records.find(s).map(Ty::Record).ok_or_else(|| {
            format!(
                "unknown type {s:?} (types: bool, int, float, their vectors such as float3, \
                 floatRxC matrices, sampler2D, a declared record, T[N])"
            )
        })
    }

    /// The spelling [`Ty::parse`] reads back.
    pub fn display<'a>(&'a self, records: &'a Records) -> TyDisplay<'a> {
        TyDisplay { ty: self, records }
    }
}

/// A type with the records that name it, for `Display`.
pub struct TyDisplay<'a> {
    ty: &'a Ty,
    records: &'a Records,
}

impl fmt::Display for TyDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ty {
            Ty::Void => f.write_str("void"),
            Ty::Scalar(k) => f.write_str(k.keyword()),
            Ty::Vector(k, n) => write!(f, "{}{n}", k.keyword()),
            Ty::Matrix(r, c) => write!(f, "float{r}x{c}"),
            Ty::Sampler => f.write_str("sampler2D"),
            Ty::Record(i) => match self.records.names.get(*i) {
                Some(n) => f.write_str(n),
                None => f.write_str("<record>"),
            },
            Ty::Array(e, n) => write!(f, "{}[{n}]", e.display(self.records)),
        }
    }
}
