//! A generator of random well-typed material graphs (JSON values), driven
//! by a seed: type-directed, each value either reused from earlier nodes
//! or built by a random production for its type, down to a depth limit.
#![allow(dead_code)]

use serde_json::{Value, json};

/// xorshift64*.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum T {
    F(u8),
    I(u8),
    B,
    M3,
}

impl T {
    fn spell(self) -> String {
        match self {
            T::F(1) => "float".into(),
            T::F(n) => format!("float{n}"),
            T::I(1) => "int".into(),
            T::I(n) => format!("int{n}"),
            T::B => "bool".into(),
            T::M3 => "float3x3".into(),
        }
    }
}

pub struct Gen {
    pub rng: Rng,
    pub nodes: Vec<Value>,
    pub edges: Vec<Value>,
    /// Values made so far: (endpoint, type).
    pool: Vec<(String, T)>,
    next: usize,
    /// Whether the document has the `fade` sub-graph (float3, float) -> float3.
    pub with_function: bool,
}

impl Gen {
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let with_function = rng.chance(40);
        Gen {
            rng,
            nodes: Vec::new(),
            edges: Vec::new(),
            pool: Vec::new(),
            next: 0,
            with_function,
        }
    }

    fn node(&mut self, kind: &str, extra: Value) -> String {
        let id = format!("n{}", self.next);
        self.next += 1;
        let mut v = json!({"id": id, "kind": kind});
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        self.nodes.push(v);
        id
    }

    fn edge(&mut self, from: &str, to: &str, socket: &str) {
        self.edges
            .push(json!({"from": from, "to": format!("{to}.{socket}")}));
    }

    fn finish(&mut self, id: String, socket: &str, t: T) -> String {
        let e = format!("{id}.{socket}");
        self.pool.push((e.clone(), t));
        e
    }

    fn constant(&mut self, t: T) -> String {
        let (ty, value) = match t {
            T::F(_) => (t.spell(), json!((self.rng.below(9) as f64) / 4.0 - 1.0)),
            T::I(_) => (t.spell(), json!(self.rng.below(7) as i64 - 3)),
            T::B => (t.spell(), json!(self.rng.chance(50))),
            T::M3 => return self.uniform(t),
        };
        let id = self.node("constant", json!({"type": ty, "value": value}));
        self.finish(id, "out", t)
    }

    fn uniform(&mut self, t: T) -> String {
        let name = format!("u_{}", t.spell());
        let id = self.node("uniform", json!({"type": t.spell(), "name": name}));
        self.finish(id, "out", t)
    }

    fn leaf(&mut self, t: T) -> String {
        match (t, self.rng.below(4)) {
            (T::F(2), 0) => {
                let id = self.node("uv", json!({}));
                self.finish(id, "out", t)
            }
            (T::F(4), 0) => {
                let id = self.node("vertex_color", json!({}));
                self.finish(id, "out", t)
            }
            (T::F(3), 0) => {
                let kind = if self.rng.chance(50) {
                    "position"
                } else {
                    "normal"
                };
                let id = self.node(kind, json!({}));
                self.finish(id, "out", t)
            }
            (T::F(1), 0) => {
                let id = self.node("time", json!({}));
                self.finish(id, "out", t)
            }
            (_, 1) => self.uniform(t),
            _ => self.constant(t),
        }
    }

    /// An endpoint producing a value of type `t`.
    pub fn value(&mut self, t: T, depth: u32) -> String {
        let reusable: Vec<String> = self
            .pool
            .iter()
            .filter(|(_, u)| *u == t)
            .map(|(e, _)| e.clone())
            .collect();
        if !reusable.is_empty() && self.rng.chance(25) {
            let i = self.rng.below(reusable.len());
            return reusable[i].clone();
        }
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(t);
        }
        let d = depth - 1;
        let scalar_kind = |t: T| match t {
            T::F(_) => T::F(1),
            T::I(_) => T::I(1),
            other => other,
        };
        match t {
            T::B => match self.rng.below(5) {
                0 => {
                    let k = if self.rng.chance(50) {
                        T::F(1)
                    } else {
                        T::I(1)
                    };
                    let ops = [
                        "less",
                        "greater",
                        "equal",
                        "not_equal",
                        "less_equal",
                        "greater_equal",
                    ];
                    let op = ops[self.rng.below(ops.len())];
                    let (a, b) = (self.value(k, d), self.value(k, d));
                    let id = self.node("compare", json!({"op": op}));
                    self.edge(&a, &id, "a");
                    self.edge(&b, &id, "b");
                    self.finish(id, "out", t)
                }
                1 | 2 => {
                    let kind = ["and", "or"][self.rng.below(2)];
                    let (a, b) = (self.value(T::B, d), self.value(T::B, d));
                    let id = self.node(kind, json!({}));
                    self.edge(&a, &id, "a");
                    self.edge(&b, &id, "b");
                    self.finish(id, "out", t)
                }
                3 => {
                    let x = self.value(T::B, d);
                    let id = self.node("not", json!({}));
                    self.edge(&x, &id, "x");
                    self.finish(id, "out", t)
                }
                _ => self.select(t, d),
            },
            T::M3 => {
                if self.rng.chance(50) {
                    let (a, b) = (self.value(T::M3, d), self.value(T::M3, d));
                    let kind = ["add", "multiply", "subtract"][self.rng.below(3)];
                    let id = self.node(kind, json!({}));
                    self.edge(&a, &id, "a");
                    self.edge(&b, &id, "b");
                    self.finish(id, "out", t)
                } else {
                    self.uniform(t)
                }
            }
            T::F(_) | T::I(_) => {
                let n = match t {
                    T::F(n) | T::I(n) => n,
                    _ => 1,
                };
                let float = matches!(t, T::F(_));
                match self.rng.below(14) {
                    0 | 1 => {
                        let kind = ["add", "subtract", "multiply", "divide"]
                            [self.rng.below(if float { 4 } else { 3 })];
                        let a = self.value(t, d);
                        let b = if n > 1 && self.rng.chance(30) {
                            self.value(scalar_kind(t), d)
                        } else {
                            self.value(t, d)
                        };
                        let id = self.node(kind, json!({}));
                        self.edge(&a, &id, "a");
                        self.edge(&b, &id, "b");
                        self.finish(id, "out", t)
                    }
                    2 => {
                        let kinds: &[&str] = if float {
                            &["negate", "one_minus", "abs", "saturate"]
                        } else {
                            &["negate", "abs"]
                        };
                        let kind = kinds[self.rng.below(kinds.len())];
                        let x = self.value(t, d);
                        let id = self.node(kind, json!({}));
                        self.edge(&x, &id, "x");
                        self.finish(id, "out", t)
                    }
                    3 => {
                        let kind =
                            ["min", "max", "step"][self.rng.below(if float { 3 } else { 2 })];
                        let (sa, sb) = if kind == "step" {
                            ("edge", "x")
                        } else {
                            ("a", "b")
                        };
                        let a = self.value(t, d);
                        let b = if n > 1 && self.rng.chance(30) {
                            self.value(scalar_kind(t), d)
                        } else {
                            self.value(t, d)
                        };
                        let id = self.node(kind, json!({}));
                        self.edge(&a, &id, sa);
                        self.edge(&b, &id, sb);
                        self.finish(id, "out", t)
                    }
                    4 => {
                        let x = self.value(t, d);
                        let lo = self.value(scalar_kind(t), d);
                        let hi = self.value(t, d);
                        let id = self.node("clamp", json!({}));
                        self.edge(&x, &id, "x");
                        self.edge(&lo, &id, "min");
                        self.edge(&hi, &id, "max");
                        self.finish(id, "out", t)
                    }
                    5 if float => {
                        let (a, b) = (self.value(t, d), self.value(t, d));
                        let tt = if self.rng.chance(50) { T::F(1) } else { t };
                        let w = self.value(tt, d);
                        let id = self.node("lerp", json!({}));
                        self.edge(&a, &id, "a");
                        self.edge(&b, &id, "b");
                        self.edge(&w, &id, "t");
                        self.finish(id, "out", t)
                    }
                    6 => self.select(t, d),
                    7 => {
                        // Swizzle or split from a wider vector.
                        let m = 2 + self.rng.below(3) as u8;
                        let m = m.max(n.min(4));
                        let src = if float { T::F(m) } else { T::I(m) };
                        let x = self.value(src, d);
                        if n == 1 && self.rng.chance(50) {
                            let id = self.node("split", json!({}));
                            self.edge(&x, &id, "x");
                            let c = ["x", "y", "z", "w"][self.rng.below(usize::from(m))];
                            return self.finish(id, c, t);
                        }
                        let letters = ["x", "y", "z", "w"];
                        let pattern: String = (0..n)
                            .map(|_| letters[self.rng.below(usize::from(m))])
                            .collect();
                        let id = self.node("swizzle", json!({"pattern": pattern}));
                        self.edge(&x, &id, "x");
                        self.finish(id, "out", t)
                    }
                    8 if n > 1 => {
                        let mut left = n;
                        let id_parts: Vec<String> = {
                            let mut parts = Vec::new();
                            while left > 0 {
                                let take = 1 + self.rng.below(usize::from(left)) as u8;
                                let pt = if float { T::F(take) } else { T::I(take) };
                                parts.push(self.value(pt, d));
                                left -= take;
                            }
                            parts
                        };
                        let id = self.node("combine", json!({"type": t.spell()}));
                        for (p, s) in id_parts.iter().zip(["x", "y", "z", "w"]) {
                            self.edge(p, &id, s);
                        }
                        self.finish(id, "out", t)
                    }
                    9 if float => {
                        let from = if self.rng.chance(50) { T::I(n) } else { T::B };
                        let x = self.value(from, d);
                        let id = self.node("convert", json!({"type": t.spell()}));
                        self.edge(&x, &id, "x");
                        self.finish(id, "out", t)
                    }
                    10 if float && n == 1 => {
                        let m = 2 + self.rng.below(3) as u8;
                        let (a, b) = (self.value(T::F(m), d), self.value(T::F(m), d));
                        let id = self.node("dot", json!({}));
                        self.edge(&a, &id, "a");
                        self.edge(&b, &id, "b");
                        self.finish(id, "out", t)
                    }
                    11 if float && (n == 3 || n == 4 || n == 1) => {
                        let uv = self.value(T::F(2), d);
                        let id = self.node("texture_sample", json!({"name": "tex"}));
                        self.edge(&uv, &id, "uv");
                        let s = match n {
                            4 => "rgba",
                            3 => "rgb",
                            _ => ["r", "g", "b", "a"][self.rng.below(4)],
                        };
                        self.finish(id, s, t)
                    }
                    12 if t == T::F(3) => {
                        if self.with_function && self.rng.chance(60) {
                            let (c, a) = (self.value(T::F(3), d), self.value(T::F(1), d));
                            let id = self.node("call", json!({"function": "fade"}));
                            self.edge(&c, &id, "color");
                            self.edge(&a, &id, "amount");
                            return self.finish(id, "out", t);
                        }
                        let (m, v) = (self.value(T::M3, d), self.value(T::F(3), d));
                        let id = self.node("multiply", json!({}));
                        self.edge(&m, &id, "a");
                        self.edge(&v, &id, "b");
                        self.finish(id, "out", t)
                    }
                    _ => self.leaf(t),
                }
            }
        }
    }

    fn select(&mut self, t: T, d: u32) -> String {
        let c = self.value(T::B, d);
        let (a, b) = (self.value(t, d), self.value(t, d));
        let id = self.node("select", json!({}));
        self.edge(&c, &id, "condition");
        self.edge(&a, &id, "true");
        self.edge(&b, &id, "false");
        self.finish(id, "out", t)
    }

    /// A whole document whose material output takes a float3 or float4.
    pub fn document(seed: u64, depth: u32) -> Value {
        let mut g = Gen::new(seed);
        let four = g.rng.chance(50);
        let color = g.value(if four { T::F(4) } else { T::F(3) }, depth);
        let out = g.node("material_output", json!({}));
        g.edge(&color, &out, "base_color");
        if !four && g.rng.chance(40) {
            let o = g.value(T::F(1), depth.min(2));
            g.edge(&o, &out, "opacity");
        }
        if g.rng.chance(30) {
            let v = g.value(T::F(2), depth.min(2));
            let o = g.node("fragment_output", json!({"name": "extra", "location": 1}));
            g.edge(&v, &o, "value");
        }
        let mut doc = json!({"version": 1, "nodes": g.nodes, "edges": g.edges});
        if g.with_function {
            doc["functions"] = json!([{
                "name": "fade",
                "inputs": [{"name": "color", "type": "float3"}, {"name": "amount", "type": "float"}],
                "output": "float3",
                "nodes": [
                    {"id": "c", "kind": "parameter", "name": "color"},
                    {"id": "a", "kind": "parameter", "name": "amount"},
                    {"id": "w", "kind": "constant", "type": "float3", "value": 1},
                    {"id": "m", "kind": "lerp"},
                    {"id": "r", "kind": "return"}
                ],
                "edges": [
                    {"from": "c", "to": "m.a"}, {"from": "w", "to": "m.b"},
                    {"from": "a", "to": "m.t"}, {"from": "m", "to": "r.value"}
                ]
            }]);
        }
        doc
    }
}

/// A graph of at least `target` nodes: random float3 values summed in a chain.
pub fn sized(seed: u64, target: usize) -> Value {
    let mut g = Gen::new(seed);
    g.with_function = false;
    let mut acc = g.value(T::F(3), 4);
    while g.nodes.len() + 1 < target {
        let v = g.value(T::F(3), 4);
        let id = g.node("add", json!({}));
        g.edge(&acc, &id, "a");
        g.edge(&v, &id, "b");
        acc = g.finish(id, "out", T::F(3));
    }
    let out = g.node("material_output", json!({}));
    g.edge(&acc, &out, "base_color");
    json!({"version": 1, "nodes": g.nodes, "edges": g.edges})
}
