//! One generated function: blocks of canonical text, registers declared
//! on demand, and the pool of values that are definitely assigned at the
//! current point together with what is known about them.

use super::info::{FloatInfo, IntInfo};
use super::rng::Rng;

/// The generator's value types (each declared once in the module's `types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Bool,
    Int,
    Float,
    BVec(u8),
    IVec(u8),
    FVec(u8),
    Mat(u8, u8),
    Sampler,
    /// `array int 4`
    IArr,
    /// `record "Cell" (v: vec2, n: int)`
    Cell,
    /// `array Cell 3`
    Cells,
    /// `record "Params"`
    Params,
}

impl Ty {
    /// The type's ID in the generated module.
    pub(crate) fn id(self) -> String {
        match self {
            Ty::Bool => "B".into(),
            Ty::Int => "I".into(),
            Ty::Float => "F".into(),
            Ty::BVec(n) => format!("B{n}"),
            Ty::IVec(n) => format!("I{n}"),
            Ty::FVec(n) => format!("F{n}"),
            Ty::Mat(r, c) => format!("M{r}{c}"),
            Ty::Sampler => "S".into(),
            Ty::IArr => "IA".into(),
            Ty::Cell => "Cell".into(),
            Ty::Cells => "Cells".into(),
            Ty::Params => "Params".into(),
        }
    }
}

/// What is known about a value: the integer facts of its integer
/// components, the floating facts of its floating components, and whether
/// its Boolean components are exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Info {
    pub i: IntInfo,
    pub f: FloatInfo,
    pub b_exact: bool,
}

impl Info {
    pub(crate) fn int(i: IntInfo) -> Self {
        Info {
            i,
            f: FloatInfo::constant(0.0),
            b_exact: true,
        }
    }

    pub(crate) fn float(f: FloatInfo) -> Self {
        Info {
            i: IntInfo::exact(0),
            f,
            b_exact: true,
        }
    }

    pub(crate) fn boolean(exact: bool) -> Self {
        Info {
            i: IntInfo::exact(0),
            f: FloatInfo::constant(0.0),
            b_exact: exact,
        }
    }

    pub(crate) fn join(self, o: Self) -> Self {
        Info {
            i: self.i.join(o.i),
            f: self.f.join(o.f),
            b_exact: self.b_exact && o.b_exact,
        }
    }
}

/// A definitely assigned register and its facts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Value {
    pub reg: u32,
    pub ty: Ty,
    pub info: Info,
}

impl Value {
    pub(crate) fn name(&self) -> String {
        format!("r{}", self.reg)
    }
}

#[derive(Debug, Clone)]
struct Block {
    label: String,
    lines: Vec<String>,
    terminator: Option<String>,
}

/// A function under construction.
#[derive(Debug)]
pub(crate) struct FunctionText {
    registers: Vec<Ty>,
    blocks: Vec<Block>,
    current: usize,
    /// Values definitely assigned at the current point.
    pub pool: Vec<Value>,
}

impl FunctionText {
    pub(crate) fn new() -> Self {
        FunctionText {
            registers: Vec::new(),
            blocks: vec![Block {
                label: "entry".into(),
                lines: Vec::new(),
                terminator: None,
            }],
            current: 0,
            pool: Vec::new(),
        }
    }

    /// Declares a fresh register.
    pub(crate) fn register(&mut self, ty: Ty) -> u32 {
        self.registers.push(ty);
        (self.registers.len() - 1) as u32
    }

    /// Appends an instruction to the current block.
    pub(crate) fn emit(&mut self, line: String) {
        self.blocks[self.current].lines.push(line);
    }

    /// Declares a register, emits `line` (with `{r}` replaced by its name)
    /// and adds the value to the pool.
    pub(crate) fn define(&mut self, ty: Ty, info: Info, line: &str) -> Value {
        let reg = self.register(ty);
        self.emit(line.replace("{r}", &format!("r{reg}")));
        let v = Value { reg, ty, info };
        self.pool.push(v);
        v
    }

    /// A new, empty block (not current).
    pub(crate) fn block(&mut self, hint: &str) -> usize {
        let label = format!("{hint}{}", self.blocks.len());
        self.blocks.push(Block {
            label,
            lines: Vec::new(),
            terminator: None,
        });
        self.blocks.len() - 1
    }

    pub(crate) fn label(&self, block: usize) -> String {
        self.blocks[block].label.clone()
    }

    /// Ends the current block.
    pub(crate) fn terminate(&mut self, terminator: String) {
        self.blocks[self.current].terminator = Some(terminator);
    }

    /// Continues in `block`.
    pub(crate) fn switch_to(&mut self, block: usize) {
        self.current = block;
    }

    /// Values of type `ty` in the pool satisfying `accept`.
    pub(crate) fn candidates(&self, ty: Ty, accept: impl Fn(&Info) -> bool) -> Vec<Value> {
        self.pool
            .iter()
            .filter(|v| v.ty == ty && accept(&v.info))
            .copied()
            .collect()
    }

    /// A random pool value of type `ty` satisfying `accept`.
    pub(crate) fn pick(
        &self,
        rng: &mut Rng,
        ty: Ty,
        accept: impl Fn(&Info) -> bool,
    ) -> Option<Value> {
        let c = self.candidates(ty, accept);
        if c.is_empty() {
            None
        } else {
            Some(c[rng.below(c.len() as u64) as usize])
        }
    }

    /// The function's text.
    pub(crate) fn finish(&self, id: &str, ret: &str, parameters: &[(String, Ty)]) -> String {
        let mut s = format!("      (function {id} \"{id}\" {ret}\n        (parameters");
        for (name, ty) in parameters {
            s.push_str(&format!(" (parameter {name} {})", ty.id()));
        }
        s.push_str(")\n        (registers");
        for (i, ty) in self.registers.iter().enumerate() {
            s.push_str(&format!(" (register r{i} {})", ty.id()));
        }
        s.push(')');
        for b in &self.blocks {
            s.push_str(&format!("\n        (block {}", b.label));
            for l in &b.lines {
                s.push_str("\n          ");
                s.push_str(l);
            }
            s.push_str("\n          ");
            s.push_str(b.terminator.as_deref().unwrap_or("(return)"));
            s.push(')');
        }
        s.push(')');
        s
    }
}

/// Formats a float constant operand.
pub(crate) fn float(v: f64) -> String {
    format!("(float {v:?})")
}

/// Formats an int constant operand.
pub(crate) fn int(v: i64) -> String {
    format!("(int {v})")
}
