//! The random valid-module generator of the C engine's differential oracle
//! (crates/zlm/tests/c_engine_oracle.rs), shared here so the four-engine
//! oracle runs the same programs. Keep it in step with that file.
#![allow(dead_code)]

use std::fmt::Write;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const KINDS: [&str; 9] = [
    "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Byte",
];

fn width(k: &str) -> u32 {
    match k {
        "Int8" | "UInt8" | "Byte" => 8,
        "Int16" | "UInt16" => 16,
        "Int32" | "UInt32" => 32,
        _ => 64,
    }
}

/// A constant's bits: small values, extremes and random words at the width.
fn const_bits(rng: &mut Rng, k: &str) -> u64 {
    let w = width(k);
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let v = match rng.below(6) {
        0 => rng.below(4) as u64,
        1 => mask,
        2 => mask >> 1,
        3 => (mask >> 1) + 1,
        4 => mask - rng.below(3) as u64,
        _ => rng.next(),
    };
    v & mask
}

/// One block's straight-line work: emits ops from ordinal `*j` and returns
/// a value reference of kind `k`.
struct Block<'a> {
    id: u32,
    j: u32,
    lines: Vec<String>,
    pool: Vec<String>,
    k: &'a str,
}

impl Block<'_> {
    fn push(&mut self, line: String) -> String {
        self.lines.push(format!("      {line}"));
        let r = format!("%{}.{}", self.id, self.j);
        self.j += 1;
        r
    }

    fn value(&mut self, rng: &mut Rng) -> String {
        if self.pool.is_empty() || rng.below(4) == 0 {
            let k = self.k;
            let c = const_bits(rng, k);
            let v = self.push(format!("const {k} c:{k}:{c} | - -"));
            self.pool.push(v.clone());
            return v;
        }
        rng.pick(&self.pool).clone()
    }

    /// `n` random operations; callable functions are `callees`.
    fn work(&mut self, rng: &mut Rng, n: usize, callees: &[String]) -> String {
        let k = self.k;
        for _ in 0..n {
            let choice = rng.below(20);
            let v = match choice {
                0..=7 => {
                    let op = rng.pick(&[
                        "add", "sub", "mul", "div", "rem", "bit_and", "bit_or", "bit_xor",
                    ]);
                    let (a, b) = (self.value(rng), self.value(rng));
                    Some(self.push(format!("{op} {k} {a} {b} | - -")))
                }
                8 if k.starts_with("Int") => {
                    let a = self.value(rng);
                    Some(self.push(format!("neg {k} {a} | - -")))
                }
                9 | 10 => {
                    let a = self.value(rng);
                    let s = match rng.below(4) {
                        0 => rng.next() % 70,
                        _ => rng.next() % u64::from(width(k)),
                    };
                    let c = self.push(format!("const UInt64 c:UInt64:{s} | - -"));
                    let op = if choice == 9 {
                        "shift_left"
                    } else {
                        "shift_right"
                    };
                    Some(self.push(format!("{op} {k} {a} {c} | - -")))
                }
                11 | 12 => {
                    let op = rng.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
                    let (a, b) = (self.value(rng), self.value(rng));
                    let c = self.push(format!("{op} Bool {a} {b} | - -"));
                    if rng.below(6) == 0 {
                        self.push(format!("assert_true - {c} | - -"));
                    } else if rng.below(3) == 0 {
                        self.push(format!("not_bool Bool {c} | - -"));
                    }
                    None
                }
                13 if !callees.is_empty() => {
                    let f = rng.pick(callees).clone();
                    let (a, b) = (self.value(rng), self.value(rng));
                    Some(self.push(format!("call {k} {a} {b} | func:Main.{f} effects:[]")))
                }
                _ => None,
            };
            if let Some(v) = v {
                self.pool.push(v);
            }
        }
        self.value(rng)
    }
}

fn block<'a>(id: u32, k: &'a str) -> Block<'a> {
    Block {
        id,
        j: 0,
        lines: vec![format!("    block {id}")],
        pool: Vec::new(),
        k,
    }
}

fn contract(rng: &mut Rng, k: &str, subject: &str) -> String {
    let op = rng.pick(&["ge", "lt", "ne", "le", "gt"]);
    let c = const_bits(rng, k);
    format!("      cop {op} Bool {subject} c:{k}:{c} | 0 0 -\n")
}

/// One function `f{i}(a: K, b: K) -> K`, calling only earlier functions.
fn function(rng: &mut Rng, i: usize, k: &str) -> String {
    let callees: Vec<String> = (0..i).map(|c| format!("f{c}")).collect();
    let shape = rng.below(3);
    let mut s = format!(
        "  func message type f{i} public -> {k} effects []\n    param 0 a {k}\n    param 1 b {k}\n"
    );
    match shape {
        1 => s.push_str(&format!("    local 0 r {k}\n")),
        2 => s.push_str(&format!("    local 0 i {k}\n    local 1 acc {k}\n")),
        _ => {}
    }
    // Contract literals exclude Byte (the checker's rule).
    let contracts = k != "Byte";
    if contracts && rng.below(3) == 0 {
        s.push_str("    requires\n");
        s.push_str(&contract(rng, k, "p0"));
    }
    if contracts && rng.below(3) == 0 {
        s.push_str("    ensures\n");
        s.push_str(&contract(rng, k, "result"));
    }
    s.push_str(&format!("    path p0 {k}\n    path p1 {k}\n"));
    match shape {
        1 => s.push_str(&format!("    path l0 {k}\n")),
        2 => s.push_str(&format!("    path l0 {k}\n    path l1 {k}\n")),
        _ => {}
    }
    let load = |b: &mut Block<'_>, place: &str| {
        let v = b.push(format!("load_local {k} ${place} | path:{place} -"));
        b.pool.push(v);
    };
    let mut blocks = Vec::new();
    let mut edges: Vec<String> = Vec::new();
    match shape {
        0 => {
            let mut b = block(0, k);
            load(&mut b, "p0");
            load(&mut b, "p1");
            let n = 2 + rng.below(8);
            let v = b.work(rng, n, &callees);
            b.push(format!("return - {v} | - -"));
            blocks.push(b);
            edges.extend(["edge 0 return 0 exit".to_string()]);
        }
        1 => {
            // Diamond: 0 -> 1 (true) -> 2 (join), 0 -> 3 (false) -> 2.
            let mut b0 = block(0, k);
            load(&mut b0, "p0");
            load(&mut b0, "p1");
            let x = {
                let n = rng.below(4);
                b0.work(rng, n, &callees)
            };
            let y = b0.value(rng);
            let op = rng.pick(&["lt", "le", "eq", "ne", "gt", "ge"]);
            let c = b0.push(format!("{op} Bool {x} {y} | - -"));
            b0.push(format!("jump_if_false - {c} ^3 | block:3 -"));
            let mut arms = Vec::new();
            for id in [1, 3] {
                let mut b = block(id, k);
                load(&mut b, "p0");
                load(&mut b, "p1");
                let v = {
                    let n = 1 + rng.below(4);
                    b.work(rng, n, &callees)
                };
                b.push(format!("store_local - $l0 {v} | path:l0 -"));
                b.push("jump - ^2 | block:2 -".to_string());
                arms.push(b);
            }
            let mut b2 = block(2, k);
            load(&mut b2, "l0");
            let v = {
                let n = rng.below(3);
                b2.work(rng, n, &callees)
            };
            b2.push(format!("return - {v} | - -"));
            let b3 = arms.pop();
            blocks.push(b0);
            blocks.extend(arms);
            blocks.push(b2);
            blocks.extend(b3);
            edges.extend([
                "edge 0 branch 0 1".to_string(),
                "edge 1 branch 0 3".to_string(),
                "edge 2 fallthrough 1 2".to_string(),
                "edge 3 return 2 exit".to_string(),
                "edge 4 fallthrough 3 2".to_string(),
            ]);
        }
        _ => {
            // Counting loop: i from 0 while i < a; acc updated by random work.
            let mut b0 = block(0, k);
            let z = b0.push(format!("const {k} c:{k}:0 | - -"));
            b0.push(format!("store_local - $l0 {z} | path:l0 -"));
            let init = b0.value(rng);
            b0.push(format!("store_local - $l1 {init} | path:l1 -"));
            b0.push("jump - ^1 | block:1 -".to_string());
            let mut b1 = block(1, k);
            let i = b1.push(format!("load_local {k} $l0 | path:l0 -"));
            let n = b1.push(format!("load_local {k} $p0 | path:p0 -"));
            let c = b1.push(format!("lt Bool {i} {n} | - -"));
            b1.push(format!("jump_if_false - {c} ^3 | block:3 -"));
            let mut b2 = block(2, k);
            load(&mut b2, "l1");
            let i2 = b2.push(format!("load_local {k} $l0 | path:l0 -"));
            b2.pool.push(i2.clone());
            load(&mut b2, "p1");
            let v = {
                let n = 1 + rng.below(5);
                b2.work(rng, n, &callees)
            };
            b2.push(format!("store_local - $l1 {v} | path:l1 -"));
            let one = b2.push(format!("const {k} c:{k}:1 | - -"));
            let i3 = b2.push(format!("add {k} {i2} {one} | - -"));
            b2.push(format!("store_local - $l0 {i3} | path:l0 -"));
            b2.push("jump - ^1 | block:1 -".to_string());
            let mut b3 = block(3, k);
            load(&mut b3, "l1");
            let v = {
                let n = rng.below(3);
                b3.work(rng, n, &callees)
            };
            b3.push(format!("return - {v} | - -"));
            blocks.extend([b0, b1, b2, b3]);
            edges.extend([
                "edge 0 fallthrough 0 1".to_string(),
                "edge 1 branch 1 2".to_string(),
                "edge 2 branch 1 3".to_string(),
                "edge 3 backedge 2 1".to_string(),
                "edge 4 return 3 exit".to_string(),
            ]);
        }
    }
    for b in blocks {
        for l in b.lines {
            s.push_str(&l);
            s.push('\n');
        }
    }
    for e in edges {
        let _ = writeln!(s, "    {e}");
    }
    s
}

/// A random valid module for `seed`.
pub fn module_text(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let profile = rng.pick(&["exact", "modular", "approximate"]);
    let k = *rng.pick(&KINDS);
    let mut s = format!(
        "zlm 1.9 package gen module gen.m{seed} profile {profile} mode checked\n\ndecl value Main public\n"
    );
    let n = 1 + rng.below(3);
    for i in 0..n {
        s.push_str(&function(&mut rng, i, k));
        s.push('\n');
    }
    s
}
