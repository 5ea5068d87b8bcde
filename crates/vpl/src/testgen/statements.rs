//! Random statements: each appends instructions (and, for branches,
//! loops and discards, blocks) to a [`FunctionText`], reading only values
//! in its pool and adding its results there with their facts. Every
//! statement keeps the invariants the oracle relies on: integer values
//! are exact by construction (no division by zero or by −1, in-range
//! dynamic indices); floating values stay bounded (|x| ≤ 2^12 before any
//! multiplication), divisors are ≥ 1 in magnitude or powers of two;
//! branch and discard conditions are exact; vertex-stage integers never
//! depend on the vertex (flat varyings are the same on every provoking
//! vertex convention).

use super::function::{FunctionText, Info, Ty, Value, float, int};
use super::info::{FloatInfo, IntInfo};
use super::known::UniformValues;
use super::rng::Rng;
use crate::ir::StageKind;

/// A helper function generated for one call site.
#[derive(Debug, Clone)]
pub(crate) struct Helper {
    pub text: String,
}

/// The generation context of one function.
pub(crate) struct Gen<'a> {
    pub rng: &'a mut Rng,
    pub f: FunctionText,
    pub stage: StageKind,
    /// Helpers of the stage so far (shared by every function of it).
    pub helpers: &'a mut Vec<Helper>,
    /// Remaining helper nesting.
    pub helper_depth: u32,
    /// Remaining branch/loop nesting.
    pub nesting: u32,
    /// Known uniform values the statements may load.
    pub uniforms: &'a UniformValues,
    /// Statement counter (for minimization) and the disabled statements.
    pub counter: &'a mut usize,
    pub disabled: &'a std::collections::BTreeSet<usize>,
}

const BOUND: f64 = 4096.0;

impl Gen<'_> {
    fn int_operand(&mut self) -> (String, IntInfo) {
        if self.rng.chance(70)
            && let Some(v) = self.f.pick(self.rng, Ty::Int, |_| true)
        {
            return (v.name(), v.info.i);
        }
        let v = match self.rng.below(4) {
            0 => self.rng.range(-3, 3),
            1 => self.rng.range(-100, 100),
            2 => self
                .rng
                .pick(&[i64::from(i32::MAX), i64::from(i32::MIN), 65536, -65535]),
            _ => self.rng.range(-2_000_000_000, 2_000_000_000),
        };
        (int(v), IntInfo::exact(v))
    }

    fn float_constant(&mut self) -> f64 {
        self.rng.range(-64, 64) as f64 / 16.0
    }

    fn float_operand(&mut self, exact: bool) -> (String, FloatInfo) {
        if self.rng.chance(75)
            && let Some(v) = self.f.pick(self.rng, Ty::Float, |i| {
                (!exact || i.f.exact()) && i.f.bound <= BOUND
            })
        {
            return (v.name(), v.info.f);
        }
        let c = self.float_constant();
        (float(c), FloatInfo::constant(c))
    }

    /// A float scalar of magnitude ≤ `limit`, scaled down by a power of two when needed.
    fn small_float(&mut self, limit: f64) -> (String, FloatInfo) {
        let (name, info) = self.float_operand(false);
        if info.bound <= limit {
            return (name, info);
        }
        let mut k = 0;
        while info.bound * 2f64.powi(-k) > limit {
            k += 1;
        }
        let scaled = info.scale_pow2(-k);
        let v = self.f.define(
            Ty::Float,
            Info::float(scaled),
            &format!("(multiply {{r}} {name} {})", float(2f64.powi(-k))),
        );
        (v.name(), scaled)
    }

    /// A float scalar ≥ 1: `x * x + c`.
    fn divisor(&mut self) -> (String, FloatInfo) {
        let (x, xi) = self.small_float(8.0);
        let sq = xi.mul(xi);
        let t = self.f.define(
            Ty::Float,
            Info::float(sq),
            &format!("(multiply {{r}} {x} {x})"),
        );
        let c = self.rng.pick(&[1.0, 1.5, 2.0]);
        let d = sq.add(FloatInfo::constant(c));
        let v = self.f.define(
            Ty::Float,
            Info::float(d),
            &format!("(add {{r}} {} {})", t.name(), float(c)),
        );
        (v.name(), d)
    }

    /// An exact Boolean condition.
    pub(crate) fn condition(&mut self) -> String {
        let ops = [
            "equal",
            "not_equal",
            "less",
            "less_equal",
            "greater",
            "greater_equal",
        ];
        let op = self.rng.pick(&ops);
        let choice = self.rng.below(4);
        if choice == 0
            && self.stage == StageKind::Fragment
            && let Some(a) = self.f.pick(self.rng, Ty::Float, |i| i.f.exact())
        {
            let (b, _) = self.float_operand(true);
            let v = self.f.define(
                Ty::Bool,
                Info::boolean(true),
                &format!("({op} {{r}} {} {b})", a.name()),
            );
            return v.name();
        }
        if choice == 1
            && let Some(a) = self.f.pick(self.rng, Ty::Bool, |i| i.b_exact)
        {
            let b = match self.f.pick(self.rng, Ty::Bool, |i| i.b_exact) {
                Some(b) => b.name(),
                None => format!("(bool {})", self.rng.chance(50)),
            };
            let eq = self.rng.pick(&["equal", "not_equal"]);
            let v = self.f.define(
                Ty::Bool,
                Info::boolean(true),
                &format!("({eq} {{r}} {} {b})", a.name()),
            );
            return v.name();
        }
        if choice == 2 {
            // Through a Boolean vector.
            let n = self.rng.range(2, 4) as u8;
            let mut parts = Vec::new();
            for _ in 0..n {
                let (a, _) = self.int_operand();
                let (b, _) = self.int_operand();
                let c = self.f.define(
                    Ty::Bool,
                    Info::boolean(true),
                    &format!("({} {{r}} {a} {b})", self.rng.pick(&ops)),
                );
                parts.push(c.name());
            }
            let vec = self.f.define(
                Ty::BVec(n),
                Info::boolean(true),
                &format!("(construct {{r}} {})", parts.join(" ")),
            );
            let letter = ["x", "y", "z", "w"][self.rng.below(u64::from(n)) as usize];
            let v = self.f.define(
                Ty::Bool,
                Info::boolean(true),
                &format!("(swizzle {{r}} {} \"{letter}\")", vec.name()),
            );
            return v.name();
        }
        let (a, _) = self.int_operand();
        let (b, _) = self.int_operand();
        let v = self.f.define(
            Ty::Bool,
            Info::boolean(true),
            &format!("({op} {{r}} {a} {b})"),
        );
        v.name()
    }

    /// One random statement.
    pub(crate) fn statement(&mut self) {
        let index = *self.counter;
        *self.counter += 1;
        let disabled = self.disabled.contains(&index);
        let choice = self.rng.below(13);
        if disabled {
            // A disabled statement (minimization) defines a constant
            // instead, consuming no further random numbers.
            let v = self.rng.range(-5, 5);
            self.f.define(
                Ty::Int,
                Info::int(IntInfo::exact(v)),
                &format!("(copy {{r}} {})", int(v)),
            );
            return;
        }
        match choice {
            0 | 1 => self.int_arith(),
            2 => self.int_vector(),
            3 | 4 => self.float_arith(),
            5 => self.float_vector(),
            6 => self.matrix(),
            7 => self.conversion(),
            8 if self.nesting > 0 => self.diamond(),
            9 if self.nesting > 0 => self.counted_loop(),
            10 => self.aggregates(),
            11 if self.helper_depth > 0 => self.helper_call(),
            12 if self.nesting > 0 && self.stage == StageKind::Fragment => self.discard(),
            _ => self.uniform_load(),
        }
    }

    fn int_arith(&mut self) {
        let (a, ia) = self.int_operand();
        let (op, b, info) = match self.rng.below(4) {
            0 => {
                let (b, ib) = self.int_operand();
                ("add", b, ia.add(ib))
            }
            1 => {
                let (b, ib) = self.int_operand();
                ("subtract", b, ia.sub(ib))
            }
            2 => {
                let (b, ib) = self.int_operand();
                ("multiply", b, ia.mul(ib))
            }
            _ => {
                let k = self.rng.pick(&[2, 3, 5, 7, 9, -2, -3, -8, 256]);
                ("divide", int(k), ia.div_const(k))
            }
        };
        self.f
            .define(Ty::Int, Info::int(info), &format!("({op} {{r}} {a} {b})"));
    }

    fn int_vector(&mut self) {
        let n = self.rng.range(2, 4) as u8;
        let make = |g: &mut Self| -> (String, IntInfo) {
            if g.rng.chance(30) {
                let (a, ia) = g.int_operand();
                let v = g.f.define(
                    Ty::IVec(n),
                    Info::int(ia),
                    &format!("(construct {{r}} {a})"),
                );
                return (v.name(), ia);
            }
            let mut parts = Vec::new();
            let mut info: Option<IntInfo> = None;
            for _ in 0..n {
                let (a, ia) = g.int_operand();
                parts.push(a);
                info = Some(info.map_or(ia, |i| i.join(ia)));
            }
            let info = info.unwrap_or(IntInfo::any());
            let v = g.f.define(
                Ty::IVec(n),
                Info::int(info),
                &format!("(construct {{r}} {})", parts.join(" ")),
            );
            (v.name(), info)
        };
        let (a, ia) = make(self);
        let (op, b, info) = match self.rng.below(4) {
            3 => {
                let k = self.rng.pick(&[2, 3, -4, 7]);
                let d = self.f.define(
                    Ty::IVec(n),
                    Info::int(IntInfo::exact(k)),
                    &format!("(construct {{r}} {})", int(k)),
                );
                ("divide", d.name(), ia.div_const(k))
            }
            o => {
                let (b, ib) = make(self);
                let op = ["add", "subtract", "multiply"][o as usize];
                let info = match o {
                    0 => ia.add(ib),
                    1 => ia.sub(ib),
                    _ => ia.mul(ib),
                };
                (op, b, info)
            }
        };
        let r = self.f.define(
            Ty::IVec(n),
            Info::int(info),
            &format!("({op} {{r}} {a} {b})"),
        );
        let letters = &"xyzw"[..n as usize];
        let pick: String = (0..self.rng.range(1, 2))
            .map(|_| letters.as_bytes()[self.rng.below(u64::from(n)) as usize] as char)
            .collect();
        let ty = if pick.len() == 1 {
            Ty::Int
        } else {
            Ty::IVec(2)
        };
        self.f.define(
            ty,
            Info::int(info),
            &format!("(swizzle {{r}} {} \"{pick}\")", r.name()),
        );
    }

    fn float_arith(&mut self) {
        match self.rng.below(5) {
            0 | 1 => {
                let (a, ia) = self.small_float(BOUND / 2.0);
                let (b, ib) = self.small_float(BOUND / 2.0);
                let op = self.rng.pick(&["add", "subtract"]);
                self.f.define(
                    Ty::Float,
                    Info::float(ia.add(ib)),
                    &format!("({op} {{r}} {a} {b})"),
                );
            }
            2 => {
                let (a, ia) = self.small_float(64.0);
                let (b, ib) = self.small_float(64.0);
                self.f.define(
                    Ty::Float,
                    Info::float(ia.mul(ib)),
                    &format!("(multiply {{r}} {a} {b})"),
                );
            }
            3 => {
                let (a, ia) = self.small_float(BOUND);
                let (d, id) = self.divisor();
                self.f.define(
                    Ty::Float,
                    Info::float(ia.div_at_least_one(id)),
                    &format!("(divide {{r}} {a} {d})"),
                );
            }
            _ => {
                let (a, ia) = self.small_float(BOUND);
                let k = self.rng.range(1, 4) as i32;
                self.f.define(
                    Ty::Float,
                    Info::float(ia.scale_pow2(-k)),
                    &format!("(divide {{r}} {a} {})", float(2f64.powi(k))),
                );
            }
        }
    }

    /// A float vector of `n` components, each ≤ `limit`.
    fn make_vector(&mut self, n: u8, limit: f64) -> (String, FloatInfo) {
        match self.rng.below(3) {
            0 => {
                let (a, ia) = self.small_float(limit);
                let v = self.f.define(
                    Ty::FVec(n),
                    Info::float(ia),
                    &format!("(construct {{r}} {a})"),
                );
                (v.name(), ia)
            }
            1 if n > 2 => {
                // A vec2 piece, then scalars (some integers, converted).
                let (x, ix) = self.small_float(limit);
                let (y, iy) = self.small_float(limit);
                let pair = self.f.define(
                    Ty::FVec(2),
                    Info::float(ix.join(iy)),
                    &format!("(construct {{r}} {x} {y})"),
                );
                let mut parts = vec![pair.name()];
                let mut info = ix.join(iy);
                for _ in 2..n {
                    let (s, is) = self.small_int_or_float(limit);
                    parts.push(s);
                    info = info.join(is);
                }
                let v = self.f.define(
                    Ty::FVec(n),
                    Info::float(info),
                    &format!("(construct {{r}} {})", parts.join(" ")),
                );
                (v.name(), info)
            }
            _ => {
                let mut parts = Vec::new();
                let mut info: Option<FloatInfo> = None;
                for _ in 0..n {
                    let (s, is) = self.small_int_or_float(limit);
                    parts.push(s);
                    info = Some(info.map_or(is, |i| i.join(is)));
                }
                let info = info.unwrap_or(FloatInfo::constant(0.0));
                let v = self.f.define(
                    Ty::FVec(n),
                    Info::float(info),
                    &format!("(construct {{r}} {})", parts.join(" ")),
                );
                (v.name(), info)
            }
        }
    }

    /// A float scalar or a small integer (for constructions that convert).
    fn small_int_or_float(&mut self, limit: f64) -> (String, FloatInfo) {
        if self.rng.chance(25)
            && let Some(v) = self.f.pick(self.rng, Ty::Int, |i| {
                i.i.magnitude().is_some_and(|m| (m as f64) <= limit)
            })
        {
            return (v.name(), FloatInfo::from_int(v.info.i));
        }
        self.small_float(limit)
    }

    fn float_vector(&mut self) {
        let n = self.rng.range(2, 4) as u8;
        let (a, ia) = self.make_vector(n, 64.0);
        let (text, info) = match self.rng.below(6) {
            0 => {
                let (b, ib) = self.make_vector(n, 64.0);
                (format!("(add {{r}} {a} {b})"), ia.add(ib))
            }
            1 => {
                let (b, ib) = self.make_vector(n, 64.0);
                (format!("(subtract {{r}} {a} {b})"), ia.add(ib))
            }
            2 => {
                let (b, ib) = self.make_vector(n, 64.0);
                (format!("(multiply {{r}} {a} {b})"), ia.mul(ib))
            }
            3 => {
                let (s, is) = self.small_float(64.0);
                if self.rng.chance(50) {
                    (format!("(multiply {{r}} {a} {s})"), ia.mul(is))
                } else {
                    (format!("(multiply {{r}} {s} {a})"), ia.mul(is))
                }
            }
            4 => {
                let (d, id) = self.divisor();
                (format!("(divide {{r}} {a} {d})"), ia.div_at_least_one(id))
            }
            _ => {
                let k = self.rng.range(1, 3) as i32;
                let d = self.f.define(
                    Ty::FVec(n),
                    Info::float(FloatInfo::constant(2f64.powi(k))),
                    &format!("(construct {{r}} {})", float(2f64.powi(k))),
                );
                (
                    format!("(divide {{r}} {a} {})", d.name()),
                    ia.scale_pow2(-k),
                )
            }
        };
        let r = self.f.define(Ty::FVec(n), Info::float(info), &text);
        self.extract(r, n, info);
    }

    /// Swizzles one or two components of vector `r` into the pool.
    fn extract(&mut self, r: Value, n: u8, info: FloatInfo) {
        let letters = &"xyzw"[..n as usize];
        // One to four selectors (repeats allowed, section 7.4).
        let count = self.rng.range(1, 4) as usize;
        let pick: String = (0..count)
            .map(|_| letters.as_bytes()[self.rng.below(u64::from(n)) as usize] as char)
            .collect();
        let ty = if count == 1 {
            Ty::Float
        } else {
            Ty::FVec(count as u8)
        };
        self.f.define(
            ty,
            Info::float(info),
            &format!("(swizzle {{r}} {} \"{pick}\")", r.name()),
        );
        if count > 1 {
            let pair = self.f.pool.last().map_or(0, |v| v.reg);
            self.f.define(
                Ty::Float,
                Info::float(info),
                &format!("(swizzle {{r}} r{pair} \"y\")"),
            );
        }
    }

    fn make_matrix(&mut self, rows: u8, columns: u8) -> (String, FloatInfo) {
        if self.rng.chance(25) {
            let (s, is) = self.small_int_or_float(4.0);
            let v = self.f.define(
                Ty::Mat(rows, columns),
                Info::float(is.join(FloatInfo::constant(0.0))),
                &format!("(construct {{r}} {s})"),
            );
            return (v.name(), is);
        }
        let mut parts = Vec::new();
        let mut info = FloatInfo::constant(0.0);
        for _ in 0..columns {
            if self.rng.chance(40) {
                let (c, ic) = self.make_vector(rows, 4.0);
                parts.push(c);
                info = info.join(ic);
            } else {
                for _ in 0..rows {
                    let (s, is) = self.small_int_or_float(4.0);
                    parts.push(s);
                    info = info.join(is);
                }
            }
        }
        let v = self.f.define(
            Ty::Mat(rows, columns),
            Info::float(info),
            &format!("(construct {{r}} {})", parts.join(" ")),
        );
        (v.name(), info)
    }

    fn matrix(&mut self) {
        let rows = self.rng.range(2, 4) as u8;
        let columns = self.rng.range(2, 4) as u8;
        let (a, ia) = self.make_matrix(rows, columns);
        let (m, im, out_columns) = match self.rng.below(6) {
            0 | 1 => {
                let (b, ib) = self.make_matrix(rows, columns);
                let op = self.rng.pick(&["add", "subtract"]);
                (format!("({op} {{r}} {a} {b})"), ia.add(ib), columns)
            }
            2 => {
                // Component-wise division by a matrix of constants ≥ 1.
                let parts: Vec<String> = (0..u32::from(rows) * u32::from(columns))
                    .map(|_| float(self.rng.pick(&[1.0, 2.0, 4.0, 1.25])))
                    .collect();
                let d = self.f.define(
                    Ty::Mat(rows, columns),
                    Info::float(FloatInfo::constant(4.0)),
                    &format!("(construct {{r}} {})", parts.join(" ")),
                );
                (
                    format!("(divide {{r}} {a} {})", d.name()),
                    ia.div_at_least_one(FloatInfo::constant(1.0)),
                    columns,
                )
            }
            3 => {
                let (s, is) = self.small_float(4.0);
                let text = match self.rng.below(3) {
                    0 => format!("(multiply {{r}} {a} {s})"),
                    1 => format!("(multiply {{r}} {s} {a})"),
                    _ => {
                        let (d, id) = self.divisor();
                        return self.matrix_times_vector(
                            &format!("(divide {{r}} {a} {d})"),
                            ia.div_at_least_one(id),
                            rows,
                            columns,
                        );
                    }
                };
                (text, ia.mul(is), columns)
            }
            _ => {
                let k = self.rng.range(2, 4) as u8;
                let (b, ib) = self.make_matrix(columns, k);
                (
                    format!("(multiply {{r}} {a} {b})"),
                    ia.dot(ib, u32::from(columns)),
                    k,
                )
            }
        };
        self.matrix_times_vector(&m, im, rows, out_columns);
    }

    /// Defines the matrix `text`, multiplies it by a vector and extracts
    /// components.
    fn matrix_times_vector(&mut self, text: &str, info: FloatInfo, rows: u8, columns: u8) {
        let m = self
            .f
            .define(Ty::Mat(rows, columns), Info::float(info), text);
        if info.bound > 64.0 {
            return;
        }
        let (v, iv) = self.make_vector(columns, 4.0);
        let product = info.dot(iv, u32::from(columns));
        let r = self.f.define(
            Ty::FVec(rows),
            Info::float(product),
            &format!("(multiply {{r}} {} {v})", m.name()),
        );
        self.extract(r, rows, product);
    }

    fn conversion(&mut self) {
        let (a, ia) = self.int_operand();
        let converted = self.f.define(
            Ty::Float,
            Info::float(FloatInfo::from_int(ia)),
            &format!("(construct {{r}} {a})"),
        );
        // The same-type scalar constructions (section 7.2), which copy.
        if self.rng.chance(50) {
            self.f.define(
                Ty::Float,
                converted.info,
                &format!("(construct {{r}} {})", converted.name()),
            );
        } else {
            self.f
                .define(Ty::Int, Info::int(ia), &format!("(construct {{r}} {a})"));
        }
    }

    /// `if cond { merge = e1 } else { merge = e2 }`, arms with their own statements.
    fn diamond(&mut self) {
        let cond = self.condition();
        let then_block = self.f.block("then");
        let else_block = self.f.block("else");
        let join = self.f.block("join");
        self.f.terminate(format!(
            "(branch_if {cond} {} {})",
            self.f.label(then_block),
            self.f.label(else_block)
        ));
        let ty = if self.rng.chance(50) {
            Ty::Int
        } else {
            Ty::Float
        };
        let merge = self.f.register(ty);
        let mut infos = Vec::new();
        for arm in [then_block, else_block] {
            self.f.switch_to(arm);
            let saved = self.f.pool.len();
            self.nesting -= 1;
            for _ in 0..self.rng.range(0, 2) {
                self.statement();
            }
            self.nesting += 1;
            let info = if ty == Ty::Int {
                let (a, ia) = self.int_operand();
                self.f.emit(format!("(copy r{merge} {a})"));
                Info::int(ia)
            } else {
                let (a, ia) = self.float_operand(false);
                self.f.emit(format!("(copy r{merge} {a})"));
                Info::float(ia)
            };
            infos.push(info);
            self.f.pool.truncate(saved);
            self.f.terminate(format!("(branch {})", self.f.label(join)));
        }
        self.f.switch_to(join);
        let info = infos[0].join(infos[1]);
        self.f.pool.push(Value {
            reg: merge,
            ty,
            info,
        });
    }

    /// A loop with a bounded trip count, integer and float accumulators
    /// and indexed stores into a local array.
    fn counted_loop(&mut self) {
        let (limit, trips) = match self.rng.below(3) {
            0 => {
                let n = self.rng.range(0, 4);
                (int(n), n)
            }
            1 => {
                let v = self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(self.uniforms.limit)),
                    "(load {r} (uniform limit))",
                );
                (v.name(), self.uniforms.limit)
            }
            _ => {
                let v = self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(self.uniforms.count)),
                    "(load {r} (member_ref (uniform params) \"count\"))",
                );
                (v.name(), self.uniforms.count)
            }
        };
        let counter = self.f.register(Ty::Int);
        self.f.emit(format!("(copy r{counter} (int 0))"));
        let (x, ix) = self.small_float(64.0);
        let acc_f = self.f.register(Ty::Float);
        let (init, iinit) = self.small_float(2.0 * ix.bound.max(1.0));
        self.f.emit(format!("(copy r{acc_f} {init})"));
        let acc_i = self.f.register(Ty::Int);
        let (init_i, iinit_i) = self.int_operand();
        self.f.emit(format!("(copy r{acc_i} {init_i})"));
        let array = self.f.register(Ty::IArr);
        self.f.emit(format!(
            "(construct r{array} (int 0) (int 1) (int 2) (int 3))"
        ));
        let mul = self.rng.pick(&[1, 3, -5, 31]);
        // Facts after 0..=trips iterations.
        let (mut fi, mut ii) = (iinit, iinit_i);
        let (mut fj, mut ij) = (iinit, iinit_i);
        let counter_info = IntInfo {
            range: Some((0, trips.max(0))),
        };
        for _ in 0..trips {
            fi = fi.scale_pow2(-1).add(ix);
            ii = ii.mul(IntInfo::exact(mul)).add(counter_info);
            fj = fj.join(fi);
            ij = ij.join(ii);
        }
        let array_info = IntInfo {
            range: Some((0, 3)),
        }
        .join(ij);
        let test = self.f.block("test");
        let body = self.f.block("body");
        let exit = self.f.block("exit");
        self.f.terminate(format!("(branch {})", self.f.label(test)));
        self.f.switch_to(test);
        let c = self.f.register(Ty::Bool);
        self.f.emit(format!("(less r{c} r{counter} {limit})"));
        self.f.terminate(format!(
            "(branch_if r{c} {} {})",
            self.f.label(body),
            self.f.label(exit)
        ));
        self.f.switch_to(body);
        let saved = self.f.pool.len();
        self.f.pool.push(Value {
            reg: counter,
            ty: Ty::Int,
            info: Info::int(counter_info),
        });
        self.f
            .emit(format!("(multiply r{acc_f} r{acc_f} (float 0.5))"));
        self.f.emit(format!("(add r{acc_f} r{acc_f} {x})"));
        self.f
            .emit(format!("(multiply r{acc_i} r{acc_i} (int {mul}))"));
        self.f.emit(format!("(add r{acc_i} r{acc_i} r{counter})"));
        if trips <= 4 {
            self.f.emit(format!(
                "(store (index_ref (local r{array}) r{counter}) r{acc_i})"
            ));
        }
        self.nesting -= 1;
        if self.rng.chance(50) {
            self.statement();
        }
        self.nesting += 1;
        self.f.emit(format!("(add r{counter} r{counter} (int 1))"));
        self.f.terminate(format!("(branch {})", self.f.label(test)));
        self.f.pool.truncate(saved);
        self.f.switch_to(exit);
        self.f.pool.push(Value {
            reg: acc_f,
            ty: Ty::Float,
            info: Info::float(fj),
        });
        self.f.pool.push(Value {
            reg: acc_i,
            ty: Ty::Int,
            info: Info::int(ij),
        });
        let element = self.rng.range(0, 3);
        self.f.define(
            Ty::Int,
            Info::int(array_info),
            &format!("(index {{r}} r{array} {})", int(element)),
        );
    }

    /// Local records and arrays: construction, member/index extraction,
    /// stores and loads through derived references with dynamic indices.
    fn aggregates(&mut self) {
        let (x, ix) = self.small_float(64.0);
        let (y, iy) = self.small_float(64.0);
        let pair = self.f.define(
            Ty::FVec(2),
            Info::float(ix.join(iy)),
            &format!("(construct {{r}} {x} {y})"),
        );
        let (n, inn) = self.int_operand();
        let cell_info = Info {
            i: inn,
            f: ix.join(iy),
            b_exact: true,
        };
        let cell = self.f.define(
            Ty::Cell,
            cell_info,
            &format!("(construct {{r}} {} {n})", pair.name()),
        );
        let cells = self.f.define(
            Ty::Cells,
            cell_info,
            &format!("(construct {{r}} {0} {0} {0})", cell.name()),
        );
        // An index in 0..3: a constant, or a register known to be in range.
        let index = match self.f.pick(self.rng, Ty::Int, |i| {
            i.i.range.is_some_and(|(lo, hi)| lo >= 0 && hi <= 2)
        }) {
            Some(v) if self.rng.chance(70) => v.name(),
            _ => {
                let k = self.rng.range(0, 2);
                let v = self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(k)),
                    &format!("(copy {{r}} {})", int(k)),
                );
                v.name()
            }
        };
        let (m, im) = self.int_operand();
        self.f.emit(format!(
            "(store (member_ref (index_ref (local {}) {index}) \"n\") {m})",
            cells.name()
        ));
        let joined = Info {
            i: inn.join(im),
            ..cell_info
        };
        if let Some(v) = self.f.pool.iter_mut().find(|v| v.reg == cells.reg) {
            v.info = joined;
        }
        self.f.define(
            Ty::Int,
            Info::int(joined.i),
            &format!(
                "(load {{r}} (member_ref (index_ref (local {}) {index}) \"n\"))",
                cells.name()
            ),
        );
        self.f.define(
            Ty::FVec(2),
            Info::float(joined.f),
            &format!(
                "(load {{r}} (member_ref (index_ref (local {}) {index}) \"v\"))",
                cells.name()
            ),
        );
        let picked = self.f.define(
            Ty::Cell,
            joined,
            &format!("(index {{r}} {} {index})", cells.name()),
        );
        self.f.define(
            Ty::Int,
            Info::int(joined.i),
            &format!("(member {{r}} {} \"n\")", picked.name()),
        );
        let v2 = self.f.define(
            Ty::FVec(2),
            Info::float(joined.f),
            &format!("(member {{r}} {} \"v\")", picked.name()),
        );
        self.f.define(
            Ty::Float,
            Info::float(joined.f),
            &format!("(swizzle {{r}} {} \"x\")", v2.name()),
        );
        // A whole-local store.
        self.f
            .emit(format!("(store (local {}) {})", cell.name(), picked.name()));
    }

    /// Uniform records and arrays through whole loads and derived paths.
    fn uniform_load(&mut self) {
        let u = self.uniforms;
        match self.rng.below(6) {
            0 => {
                let k = self.rng.range(0, 3) as usize;
                self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(u.ints[k])),
                    &format!("(load {{r}} (index_ref (uniform ints) {}))", int(k as i64)),
                );
            }
            1 => {
                let all = self.f.define(
                    Ty::IArr,
                    Info::int(
                        u.ints
                            .iter()
                            .fold(IntInfo::exact(u.ints[0]), |a, b| a.join(IntInfo::exact(*b))),
                    ),
                    "(load {r} (uniform ints))",
                );
                let k = self.rng.range(0, 3);
                self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(u.ints[k as usize])),
                    &format!("(index {{r}} {} {})", all.name(), int(k)),
                );
            }
            2 => {
                let k = self.rng.range(0, 2) as usize;
                self.f.define(
                    Ty::Float,
                    Info::float(FloatInfo::constant(u.weights[k])),
                    &format!(
                        "(load {{r}} (index_ref (member_ref (uniform params) \"weights\") {}))",
                        int(k as i64)
                    ),
                );
            }
            3 => {
                // A light chosen by a dynamic index read from the uniform itself.
                let i = self.f.define(
                    Ty::Int,
                    Info::int(IntInfo::exact(u.lights[0].1)),
                    "(load {r} (member_ref (index_ref (uniform lights) (int 0)) \"n\"))",
                );
                let chosen = u.lights[u.lights[0].1 as usize];
                let info = FloatInfo::constant(chosen.0[0]).join(FloatInfo::constant(chosen.0[1]));
                let v = self.f.define(
                    Ty::FVec(2),
                    Info::float(info),
                    &format!(
                        "(load {{r}} (member_ref (index_ref (uniform lights) {}) \"v\"))",
                        i.name()
                    ),
                );
                self.extract(v, 2, info);
            }
            4 => {
                let p = self.f.define(
                    Ty::Params,
                    Info::int(IntInfo::any()),
                    "(load {r} (uniform params))",
                );
                let tint = u.tint.iter().fold(FloatInfo::constant(0.0), |a, b| {
                    a.join(FloatInfo::constant(*b))
                });
                let t = self.f.define(
                    Ty::FVec(4),
                    Info::float(tint),
                    &format!("(member {{r}} {} \"tint\")", p.name()),
                );
                self.extract(t, 4, tint);
                let offset = IntInfo::exact(u.offset[0]).join(IntInfo::exact(u.offset[1]));
                let o = self.f.define(
                    Ty::IVec(2),
                    Info::int(offset),
                    &format!("(member {{r}} {} \"offset\")", p.name()),
                );
                self.f.define(
                    Ty::Int,
                    Info::int(offset),
                    &format!("(swizzle {{r}} {} \"y\")", o.name()),
                );
            }
            _ => {
                let xf = u.xf.iter().fold(FloatInfo::constant(0.0), |a, b| {
                    a.join(FloatInfo::constant(*b))
                });
                let m = self.f.define(
                    Ty::Mat(2, 2),
                    Info::float(xf),
                    "(load {r} (member_ref (uniform params) \"xf\"))",
                );
                let scale = self.f.define(
                    Ty::Float,
                    Info::float(FloatInfo::constant(u.scale)),
                    "(load {r} (uniform scale))",
                );
                let (v, iv) = self.make_vector(2, 4.0);
                let product = xf.dot(iv, 2).mul(FloatInfo::constant(u.scale));
                let mv = self.f.define(
                    Ty::FVec(2),
                    Info::float(xf.dot(iv, 2)),
                    &format!("(multiply {{r}} {} {v})", m.name()),
                );
                let r = self.f.define(
                    Ty::FVec(2),
                    Info::float(product),
                    &format!("(multiply {{r}} {} {})", mv.name(), scale.name()),
                );
                self.extract(r, 2, product);
            }
        }
    }

    /// A call of a new helper with storage parameters: an int, a float and
    /// a `Cell` record, which the helper modifies through parameter
    /// storage paths before returning an int or a float.
    fn helper_call(&mut self) {
        let id = format!("h{}", self.helpers.len());
        // Reserve the helper's slot so nested helpers get other names.
        self.helpers.push(Helper {
            text: String::new(),
        });
        let slot = self.helpers.len() - 1;
        let (a, ia) = self.int_operand();
        let (b, ib) = self.small_float(64.0);
        let cell = match self.f.pick(self.rng, Ty::Cell, |_| true) {
            Some(c) => (c.name(), c.info),
            None => {
                let pair = self.f.define(
                    Ty::FVec(2),
                    Info::float(ib),
                    &format!("(construct {{r}} {b} {b})"),
                );
                let c = self.f.define(
                    Ty::Cell,
                    Info {
                        i: ia,
                        f: ib,
                        b_exact: true,
                    },
                    &format!("(construct {{r}} {} {a})", pair.name()),
                );
                (c.name(), c.info)
            }
        };
        let returns_int = self.rng.chance(50);
        let mut inner = Gen {
            rng: &mut *self.rng,
            f: FunctionText::new(),
            stage: self.stage,
            helpers: &mut *self.helpers,
            helper_depth: self.helper_depth - 1,
            nesting: self.nesting.min(1),
            uniforms: self.uniforms,
            counter: &mut *self.counter,
            disabled: self.disabled,
        };
        let p0 = inner
            .f
            .define(Ty::Int, Info::int(ia), "(load {r} (parameter p0))");
        let bumped = ia.add(IntInfo::exact(7));
        inner
            .f
            .emit(format!("(add {} {} (int 7))", p0.name(), p0.name()));
        inner
            .f
            .emit(format!("(store (parameter p0) {})", p0.name()));
        if let Some(v) = inner.f.pool.iter_mut().find(|v| v.reg == p0.reg) {
            v.info = Info::int(bumped);
        }
        inner
            .f
            .define(Ty::Float, Info::float(ib), "(load {r} (parameter p1))");
        inner.f.emit(format!(
            "(store (member_ref (parameter p2) \"n\") {})",
            p0.name()
        ));
        let cell_info = cell.1.join(Info::int(bumped));
        inner.f.define(
            Ty::Int,
            Info::int(cell_info.i),
            "(load {r} (member_ref (parameter p2) \"n\"))",
        );
        inner.f.define(
            Ty::FVec(2),
            Info::float(cell_info.f),
            "(load {r} (member_ref (parameter p2) \"v\"))",
        );
        inner
            .f
            .define(Ty::Int, Info::int(bumped), "(load {r} (parameter p0))");
        for _ in 0..inner.rng.range(1, 4) {
            inner.statement();
        }
        let (ret, info, ty) = if returns_int {
            let (v, i) = inner.int_operand();
            (v, Info::int(i), Ty::Int)
        } else {
            let (v, i) = inner.float_operand(false);
            (v, Info::float(i), Ty::Float)
        };
        inner.f.terminate(format!("(return {ret})"));
        let text = inner.f.finish(
            &id,
            &ty.id(),
            &[
                ("p0".into(), Ty::Int),
                ("p1".into(), Ty::Float),
                ("p2".into(), Ty::Cell),
            ],
        );
        self.helpers[slot].text = text;
        self.f
            .define(ty, info, &format!("(call {{r}} {id} {a} {b} {})", cell.0));
    }

    /// `if cond { discard }`, cond exact.
    fn discard(&mut self) {
        let cond = self.condition();
        let gone = self.f.block("gone");
        let kept = self.f.block("kept");
        self.f.terminate(format!(
            "(branch_if {cond} {} {})",
            self.f.label(gone),
            self.f.label(kept)
        ));
        self.f.switch_to(gone);
        self.f.terminate("(discard)".into());
        self.f.switch_to(kept);
    }
}
