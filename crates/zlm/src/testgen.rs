//! Seeded random valid ZLM1 modules in text form, for differential tests
//! between engines (the interpreter, the C materializer, and any later
//! engine). Every generated module must pass the checker; the tests that
//! use it assert that. Generation is deterministic per seed. The forms are
//! drawn from the spec, not from what an engine lowers:
//! `tests/testgen_coverage.rs` fails when any operation tag 0–52, contract
//! tag or catalog selector goes missing from the corpus.
//!
//! Covered: every numeric profile and scalar width, arithmetic, shifts,
//! division, comparisons, Bool negation, assertions (`assert_true`,
//! `assert_eq`), Copy locals, loops (back-edges), diamonds (joins), calls
//! between functions, functions returning `Unit` (`unit_value`) and
//! `Result<K, K>` (unwrapping each other's results with the one-word
//! `result_try` or, for 64-bit kinds, `result_try_rich`),
//! requires/ensures clauses, and (in modules with owned values) records
//! built and stored in owned locals, replacement of a local or a field
//! (`(replaced)` drops), field copies and moves, moves of a local,
//! explicit drops, cleanup
//! recipes on return and try-error edges, shared loans of owners passed to
//! shared-receiver methods (one with requires/ensures over the receiver's
//! field and a pure call), enum variants with payloads and
//! variant tests, `Result` carriers built, returned and unwrapped with
//! `result_try_rich`, and byte arrays from the host allocator (pushes with
//! growth, the byte budget, `set`, `length`, `clear`, slice windows
//! (`borrow_slice_byte`, as a value or in a `Slice<Byte>` local) with
//! their `length` and `get`, a bounds-checked read at an argument or at
//! the allocator's `remaining`). Some modules are `sdk.bytes` itself, whose
//! byte functions finish a `BytesBuilder` into `Bytes`
//! (`byte_builder_finish`) and read it through `Bytes.length` and the
//! `Bytes.slice` facade form (tag 43 over a `Ref<Bytes>`). Contracts
//! include identities. Faults (overflow, division, shifts, assertions,
//! bounds, slice preconditions, step and depth limits) can occur anywhere,
//! so unwinding with live owners is exercised too.
//!
//! Contracts call pure functions in every form the spec admits (tag 3):
//! scalar contracts call the module's earlier type-receiver functions;
//! `Box.held` (an exclusive receiver) and `Box.take` (an owned receiver,
//! consuming a moved-out record) read their receiver's field and call
//! `Box.get` through it; each byte function comes with a view helper
//! taking a `Slice<Byte>` window, a `Ref<Array<Byte>>` and the allocator,
//! whose requires/ensures call the catalog's `length`, `get` and
//! `remaining` (selectors 1, 2, 8, 9, 10, an index itself computed from a
//! pure call), and a poke helper whose requires call the catalog through a
//! `Mut<Array<Byte>>` parameter. Functions returning `Result<K, Never>`
//! (an uninhabited error side, unwrapped by a try whose error edge is
//! never taken) cover the last type kind.

use std::fmt::Write;

/// The generator's pseudo-random source (xorshift64*).
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
                14 => {
                    // An equality assertion: of a value with itself (holds),
                    // or of two drawn values (may fault).
                    let a = self.value(rng);
                    let b = if rng.below(3) == 0 {
                        self.value(rng)
                    } else {
                        a.clone()
                    };
                    self.push(format!("assert_eq - {a} {b} | - -"));
                    None
                }
                13 if !callees.is_empty() => {
                    let f = rng.pick(callees).clone();
                    let (a, b) = (self.value(rng), self.value(rng));
                    // A callee of another module is named by its signature ID.
                    let f = if f.starts_with('#') {
                        f
                    } else {
                        format!("Main.{f}")
                    };
                    Some(self.push(format!("call {k} {a} {b} | func:{f} effects:[]")))
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

/// A contract operand of kind `k`: `subject`, or an arithmetic, bit or
/// shift operation of it (a contract value `vN`, pushed to `ops`).
fn contract_value(rng: &mut Rng, k: &str, subject: &str, ops: &mut Vec<String>) -> String {
    if rng.below(2) == 0 {
        return subject.to_string();
    }
    let mut choices = vec![
        "add", "sub", "mul", "div", "rem", "bit_and", "bit_xor", "bit_or", "shl", "shr",
    ];
    if k.starts_with("Int") {
        choices.push("neg");
    }
    let op = *rng.pick(&choices);
    let line = match op {
        "neg" => format!("cop neg {k} {subject} | 0 0 -"),
        "shl" | "shr" => format!("cop {op} {k} {subject} c:UInt64:{} | 0 0 -", rng.below(70)),
        _ => format!(
            "cop {op} {k} {subject} c:{k}:{} | 0 0 -",
            const_bits(rng, k)
        ),
    };
    ops.push(line);
    format!("v{}", ops.len() - 1)
}

/// A comparison of (a value computed from) `subject` with a constant.
/// With `pure` callees (type-receiver functions `(a: K, b: K) -> K` with
/// no effects) the compared value is sometimes first a pure call of one
/// of them over `subject` and a constant (tag 3 with a declared callee).
fn contract_compare(
    rng: &mut Rng,
    k: &str,
    subject: &str,
    pure: &[String],
    ops: &mut Vec<String>,
) -> String {
    let subject = if !pure.is_empty() && rng.below(3) == 0 {
        let f = rng.pick(pure).clone();
        let c = format!("c:{k}:{}", const_bits(rng, k));
        let args = if rng.below(2) == 0 {
            format!("{subject} {c}")
        } else {
            format!("{c} {subject}")
        };
        ops.push(format!("cop pure_call {k} {args} | 0 0 func:Main.{f}"));
        format!("v{}", ops.len() - 1)
    } else {
        subject.to_string()
    };
    let a = contract_value(rng, k, &subject, ops);
    let op = rng.pick(&["ge", "lt", "ne", "le", "gt", "eq"]);
    let c = const_bits(rng, k);
    ops.push(format!("cop {op} Bool {a} c:{k}:{c} | 0 0 -"));
    format!("v{}", ops.len() - 1)
}

/// One contract expression over `subject` (a parameter or `result`):
/// comparisons of it or of arithmetic on it, possibly negated or joined
/// by `and`/`or` (short-circuit), in the spec's postorder; sometimes
/// followed by a second `header` clause, the identity of `true`.
fn contract(rng: &mut Rng, k: &str, subject: &str, header: &str, pure: &[String]) -> String {
    let mut ops = Vec::new();
    let mut identity = false;
    match rng.below(4) {
        0 => {
            let a = contract_compare(rng, k, subject, pure, &mut ops);
            let b = contract_compare(rng, k, subject, pure, &mut ops);
            let op = rng.pick(&["and", "or"]);
            ops.push(format!("cop {op} Bool {a} {b} | 0 0 -"));
        }
        1 => {
            let a = contract_compare(rng, k, subject, pure, &mut ops);
            ops.push(format!("cop not Bool {a} | 0 0 -"));
        }
        draw => {
            contract_compare(rng, k, subject, pure, &mut ops);
            identity = draw == 3;
        }
    }
    let mut text: String = ops.iter().map(|l| format!("      {l}\n")).collect();
    if identity {
        // A second clause of the same kind: an identity, which is valid
        // only as the root over a direct leaf (drawing nothing more, so
        // every other choice of the stream stays as it was).
        let _ = write!(
            text,
            "    {header}\n      cop identity Bool c:Bool:1 | 0 0 -\n"
        );
    }
    text
}

/// One function `f{i}(a: K, b: K) -> K` of the scalar shapes (straight
/// line, diamond, loop), calling only `callees`.
fn function(rng: &mut Rng, i: usize, k: &str, callees: &[String]) -> String {
    let callees = callees.to_vec();
    let shape = rng.below(3);
    let mut s = format!(
        "  func message type f{i} public -> {k} effects []\n    param 0 a {k}\n    param 1 b {k}\n"
    );
    match shape {
        1 => s.push_str(&format!("    local 0 r {k}\n")),
        2 => s.push_str(&format!("    local 0 i {k}\n    local 1 acc {k}\n")),
        _ => {}
    }
    // Contract literals exclude Byte (the checker's rule). Contracts may
    // call this module's earlier callable functions (type receivers, no
    // effects, Copy parameters and result: pure callees).
    let contracts = k != "Byte";
    let pure: Vec<String> = callees
        .iter()
        .filter(|f| !f.starts_with('#'))
        .cloned()
        .collect();
    if contracts && rng.below(3) == 0 {
        s.push_str("    requires\n");
        s.push_str(&contract(rng, k, "p0", "requires", &pure));
    }
    if contracts && rng.below(3) == 0 {
        s.push_str("    ensures\n");
        s.push_str(&contract(rng, k, "result", "ensures", &pure));
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

/// `f{i}(a: K, b: K) -> Result<K, K>`: sometimes first unwraps the
/// result of one of `fallible` (earlier functions of this shape) with a
/// try (tag 29 `result_try` when `K` fits the one-word carrier, tag 46
/// `result_try_rich` otherwise, as the spec splits them), then returns
/// `Ok` of random work or `Err` of other work by a comparison.
fn fallible_function(
    rng: &mut Rng,
    i: usize,
    k: &str,
    callees: &[String],
    fallible: &[String],
) -> String {
    let carrier = format!("Result<{k},{k}>");
    let mut s = format!(
        "  func message type f{i} public -> {carrier} effects []\n    param 0 a {k}\n    param 1 b {k}\n    path p0 {k}\n    path p1 {k}\n"
    );
    let mut b0 = block(0, k);
    for place in ["p0", "p1"] {
        let v = b0.push(format!("load_local {k} ${place} | path:{place} -"));
        b0.pool.push(v);
    }
    let mut edges = Vec::new();
    if !fallible.is_empty() && rng.below(3) != 0 {
        let f = rng.pick(fallible).clone();
        let (a, c) = (b0.value(rng), b0.value(rng));
        let r = b0.push(format!("call {carrier} {a} {c} | func:Main.{f} effects:[]"));
        let op = if width(k) < 64 {
            "result_try"
        } else {
            "result_try_rich"
        };
        let v = b0.push(format!("{op} {k} {r} | type:{carrier} edge:0"));
        b0.pool.push(v);
        edges.push("try-error 0 exit".to_string());
    }
    let x = {
        let n = rng.below(4);
        b0.work(rng, n, callees)
    };
    let y = b0.value(rng);
    let op = rng.pick(&["lt", "le", "eq", "ne", "gt", "ge"]);
    let c = b0.push(format!("{op} Bool {x} {y} | - -"));
    b0.push(format!("jump_if_false - {c} ^2 | block:2 -"));
    let mut arms = Vec::new();
    for (id, (make, lit)) in [(1u32, ("result_ok_rich", 0)), (2, ("result_err_rich", 1))] {
        let mut b = block(id, k);
        for place in ["p0", "p1"] {
            let v = b.push(format!("load_local {k} ${place} | path:{place} -"));
            b.pool.push(v);
        }
        let v = {
            let n = rng.below(3);
            b.work(rng, n, callees)
        };
        let r = b.push(format!("{make} {carrier} {v} | type:{carrier} lit:{lit}"));
        b.push(format!("return - {r} | - -"));
        arms.push(b);
    }
    edges.extend([
        "branch 0 1".to_string(),
        "branch 0 2".to_string(),
        "return 1 exit".to_string(),
        "return 2 exit".to_string(),
    ]);
    for b in std::iter::once(b0).chain(arms) {
        for l in b.lines {
            s.push_str(&l);
            s.push('\n');
        }
    }
    for (n, e) in edges.iter().enumerate() {
        let _ = writeln!(s, "    edge {n} {e}");
    }
    s
}

/// `f{i}(a: K, b: K) -> Result<K, Never>`: the error variant is
/// uninhabited, so the body only returns `Ok` of random work; sometimes it
/// first unwraps an earlier function of this shape (`never`) with a rich
/// try whose error edge can never be taken.
fn never_function(
    rng: &mut Rng,
    i: usize,
    k: &str,
    callees: &[String],
    never: &[String],
) -> String {
    let carrier = format!("Result<{k},Never>");
    let mut s = format!(
        "  func message type f{i} public -> {carrier} effects []\n    param 0 a {k}\n    param 1 b {k}\n    path p0 {k}\n    path p1 {k}\n"
    );
    let mut b = block(0, k);
    for place in ["p0", "p1"] {
        let v = b.push(format!("load_local {k} ${place} | path:{place} -"));
        b.pool.push(v);
    }
    let mut edges = Vec::new();
    if !never.is_empty() && rng.below(2) == 0 {
        let f = rng.pick(never).clone();
        let (a, c) = (b.value(rng), b.value(rng));
        let r = b.push(format!("call {carrier} {a} {c} | func:Main.{f} effects:[]"));
        let v = b.push(format!("result_try_rich {k} {r} | type:{carrier} edge:0"));
        b.pool.push(v);
        edges.push("try-error 0 exit");
    }
    let n = 1 + rng.below(4);
    let v = b.work(rng, n, callees);
    let r = b.push(format!(
        "result_ok_rich {carrier} {v} | type:{carrier} lit:0"
    ));
    b.push(format!("return - {r} | - -"));
    edges.push("return 0 exit");
    for l in b.lines {
        s.push_str(&l);
        s.push('\n');
    }
    for (n, e) in edges.iter().enumerate() {
        let _ = writeln!(s, "    edge {n} {e}");
    }
    s
}

/// `f{i}(a: K, b: K) -> Unit`: random work (its assertions and faults are
/// the only observable effect), then `unit_value` returned.
fn unit_function(rng: &mut Rng, i: usize, k: &str, callees: &[String]) -> String {
    let mut s = format!(
        "  func message type f{i} public -> Unit effects []\n    param 0 a {k}\n    param 1 b {k}\n    path p0 {k}\n    path p1 {k}\n"
    );
    let mut b = block(0, k);
    for place in ["p0", "p1"] {
        let v = b.push(format!("load_local {k} ${place} | path:{place} -"));
        b.pool.push(v);
    }
    let n = 1 + rng.below(6);
    b.work(rng, n, callees);
    let u = b.push("unit_value Unit | - -".to_string());
    b.push(format!("return - {u} | - -"));
    for l in b.lines {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str("    edge 0 return 0 exit\n");
    s
}

/// `Box`, `Pair` and `Shape` over kind `k`, and `Box.mk(a, b)`:
/// `Ok(Box(v: a))` when `a < b`, else `Err(b)`.
fn owned_decls(k: &str) -> String {
    // A shared-receiver check with contracts over the receiver's field and
    // a pure call (contract literals exclude Byte; these have none, but
    // the ordering comparisons are kept to the ordered kinds).
    let at_least = if k == "Byte" {
        String::new()
    } else {
        format!(
            "
  func message shared at_least public -> Bool effects []
    param 0 limit {k}
    requires
      cop field_copy {k} recv | 0 0 field:Box.v
      cop ge Bool v0 p0 | 0 0 -
    ensures
      cop pure_call {k} recv | 0 0 func:Box.get
      cop ge Bool v0 p0 | 0 0 -
      cop eq Bool result v1 | 0 0 -
    path recv @Box
    path p0 {k}
    loan 0 shared recv - Ref<@Box> - -
    block 0
      field_copy {k} $recv | field:Box.v -
      load_local {k} $p0 | path:p0 -
      ge Bool %0.0 %0.1 | - -
      return - %0.2 | - -
    edge 0 return 0 exit
"
        )
    };
    format!(
        "decl value Box public
  field 0 v public let {k}

  func message type mk public -> Result<@Box,{k}> effects []
    param 0 a {k}
    param 1 b {k}
    path p0 {k}
    path p1 {k}
    path t%1.1 @Box
    path t%1.2 Result<@Box,{k}>
    path t%2.1 Result<@Box,{k}>
    block 0
      load_local {k} $p0 | path:p0 -
      load_local {k} $p1 | path:p1 -
      lt Bool %0.0 %0.1 | - -
      jump_if_false - %0.2 ^2 | block:2 -
    block 1
      load_local {k} $p0 | path:p0 -
      aggregate_construct @Box %1.0 | decl:@Box lit:1
      result_ok_rich Result<@Box,{k}> %1.1 | type:Result<@Box,{k}> lit:0
      return - %1.2 | - -
    block 2
      load_local {k} $p1 | path:p1 -
      result_err_rich Result<@Box,{k}> %2.0 | type:Result<@Box,{k}> lit:1
      return - %2.1 | - -
    edge 0 branch 0 1
    edge 1 branch 0 2
    edge 2 return 1 exit
    edge 3 return 2 exit

  func message shared get public -> {k} effects []
    path recv @Box
    loan 0 shared recv - Ref<@Box> - -
    block 0
      field_copy {k} $recv | field:Box.v -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message exclusive held public -> {k} effects []
    requires
      cop field_copy {k} recv | 0 0 field:Box.v
      cop pure_call {k} recv | 0 0 func:Box.get
      cop eq Bool v0 v1 | 0 0 -
    path recv @Box
    loan 0 exclusive recv - Mut<@Box> - -
    block 0
      field_copy {k} $recv | field:Box.v -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message owned take public -> {k} effects []
    requires
      cop pure_call {k} recv | 0 0 func:Box.get
      cop field_copy {k} recv | 0 0 field:Box.v
      cop ne Bool v0 v1 | 0 0 -
      cop not Bool v2 | 0 0 -
    path recv @Box
    block 0
      field_copy {k} $recv | field:Box.v -
      return - %0.0 | - -
    edge 0 return 0 exit
      place_drop - $recv | path:recv -
{at_least}
decl value Pair public
  field 0 left public var @Box
  field 1 right public var @Box

decl enum Shape public
  variant 0 Empty
  variant 1 Circle
    pfield 0 radius {k}

"
    )
}

/// One function over owned values, in one block: records built from
/// random work and stored in owned locals, a replacement (of the local, or
/// of a pair's field), a field move and drop, a local moved out and
/// dropped (in odd-numbered functions), a variant test, field
/// copies feeding more work. `try_shape`: the function returns
/// `Result<K, K>` and unwraps a `Box.mk` result with a try (its error edge
/// drops the live owner); otherwise it returns `K` and is callable.
fn owned_function(rng: &mut Rng, i: usize, k: &str, callees: &[String], try_shape: bool) -> String {
    let mut b = block(0, k);
    let mut locals: Vec<(&str, String)> = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut temps: Vec<(String, String)> = Vec::new();
    let mut drops: Vec<String> = Vec::new();
    let temp = |r: &str| format!("t{r}");
    let load = |b: &mut Block<'_>, place: &str| {
        let v = b.push(format!("load_local {k} ${place} | path:{place} -"));
        b.pool.push(v);
    };
    load(&mut b, "p0");
    load(&mut b, "p1");
    let n = rng.below(4);
    let v1 = b.work(rng, n, callees);
    let t1 = b.push(format!("aggregate_construct @Box {v1} | decl:@Box lit:1"));
    temps.push((temp(&t1), "@Box".into()));
    b.push(format!("store_local - $l0 {t1} | path:l0 -"));
    locals.push(("keep", "@Box".into()));
    drops.push("l0".into());
    let n = rng.below(4);
    let v2 = b.work(rng, n, callees);
    let t2 = b.push(format!("aggregate_construct @Box {v2} | decl:@Box lit:1"));
    temps.push((temp(&t2), "@Box".into()));
    let mut second: Option<&str> = None;
    match rng.below(3) {
        0 => {
            b.push(format!("replace_commit - $l0 {t2} | path:l0 -"));
        }
        1 => {
            b.push(format!("store_local - $l1 {t2} | path:l1 -"));
            locals.push(("other", "@Box".into()));
            if i % 2 == 1 {
                // Moved out of its local again and dropped at once, or
                // consumed by the owned receiver `Box.take` (whose
                // requires borrow the owner for a pure call).
                let m = b.push("place_move @Box $l1 | path:l1 -".to_string());
                temps.push((temp(&m), "@Box".into()));
                if rng.below(2) == 0 {
                    let g = b.push(format!("call {k} {m} | func:Box.take effects:[]"));
                    b.pool.push(g);
                } else {
                    b.push(format!("place_drop - ${} | path:{} -", temp(&m), temp(&m)));
                }
            } else {
                second = Some("l1");
            }
        }
        _ => {
            let n = rng.below(3);
            let v3 = b.work(rng, n, callees);
            let t3 = b.push(format!("aggregate_construct @Box {v3} | decl:@Box lit:1"));
            temps.push((temp(&t3), "@Box".into()));
            let tp = b.push(format!(
                "aggregate_construct @Pair {t2} {t3} | decl:@Pair lit:2"
            ));
            temps.push((temp(&tp), "@Pair".into()));
            b.push(format!("store_local - $l1 {tp} | path:l1 -"));
            locals.push(("pair", "@Pair".into()));
            second = Some("l1");
            if rng.below(2) == 0 {
                let v4 = b.value(rng);
                let t4 = b.push(format!("aggregate_construct @Box {v4} | decl:@Box lit:1"));
                temps.push((temp(&t4), "@Box".into()));
                b.push(format!(
                    "replace_commit - $l1/Pair.right {t4} | path:l1/Pair.right -"
                ));
                fields.push("l1/Pair.right @Box".into());
            }
            if rng.below(2) == 0 {
                let m = b.push("field_move @Box $l1 | field:Pair.left -".to_string());
                temps.push((temp(&m), "@Box".into()));
                fields.push("l1/Pair.left @Box".into());
                b.push(format!("place_drop - ${} | path:{} -", temp(&m), temp(&m)));
            }
        }
    }
    if let Some(l) = second {
        drops.insert(0, l.into());
    }
    let c = b.push(format!("field_copy {k} $l0 | field:Box.v -"));
    b.pool.push(c);
    // Shared loans of the owner into calls with a shared receiver.
    let mut loans = Vec::new();
    if rng.below(2) == 0 {
        let l = b.push(format!(
            "borrow_shared Ref<@Box> $l0 | loan:{} -",
            loans.len()
        ));
        let g = b.push(format!("call {k} {l} | func:Box.get effects:[]"));
        loans.push(format!("shared l0 - Ref<@Box> {l} {g}"));
        b.pool.push(g);
    }
    if rng.below(3) == 0 {
        // An exclusive loan into `Box.held` (its requires read the field
        // and call `get` through the Mut binding).
        let m = b.push(format!("borrow_mut Mut<@Box> $l0 | loan:{} -", loans.len()));
        let g = b.push(format!("call {k} {m} | func:Box.held effects:[]"));
        loans.push(format!("exclusive l0 - Mut<@Box> {m} {g}"));
        b.pool.push(g);
    }
    if k != "Byte" && rng.below(2) == 0 {
        let l = b.push(format!(
            "borrow_shared Ref<@Box> $l0 | loan:{} -",
            loans.len()
        ));
        let v = b.value(rng);
        let g = b.push(format!("call Bool {l} {v} | func:Box.at_least effects:[]"));
        loans.push(format!("shared l0 - Ref<@Box> {l} {g}"));
        if rng.below(3) == 0 {
            b.push(format!("assert_true - {g} | - -"));
        }
    }
    // A Copy enum in a local, and a test of its variant.
    let s = if rng.below(2) == 0 {
        let v = b.value(rng);
        b.push(format!(
            "variant_construct @Shape {v} | variant:Shape.Circle lit:1"
        ))
    } else {
        b.push("enum_const @Shape | variant:Shape.Empty -".to_string())
    };
    let shape_local = locals.len();
    b.push(format!(
        "store_local - $l{shape_local} {s} | path:l{shape_local} -"
    ));
    locals.push(("shape", "@Shape".into()));
    let is = b.push(format!(
        "enum_is_variant Bool $l{shape_local} | variant:Shape.Circle -"
    ));
    if rng.below(4) == 0 {
        b.push(format!("assert_true - {is} | - -"));
    }
    let mut try_drops = Vec::new();
    if try_shape {
        // keep (l0 …) stays live across the try; its error edge drops it.
        try_drops = drops.clone();
        let a = b.value(rng);
        let bv = b.value(rng);
        let r = b.push(format!(
            "call Result<@Box,{k}> {a} {bv} | func:Box.mk effects:[]"
        ));
        temps.push((temp(&r), format!("Result<@Box,{k}>")));
        let got = b.push(format!(
            "result_try_rich @Box {r} | type:Result<{k},{k}> edge:0"
        ));
        temps.push((temp(&got), "@Box".into()));
        let gl = locals.len();
        b.push(format!("store_local - $l{gl} {got} | path:l{gl} -"));
        locals.push(("got", "@Box".into()));
        drops.insert(0, format!("l{gl}"));
        let c = b.push(format!("field_copy {k} $l{gl} | field:Box.v -"));
        b.pool.push(c);
    }
    let n = 1 + rng.below(4);
    let v = b.work(rng, n, callees);
    let result = if try_shape {
        let r = b.push(format!(
            "result_ok_rich Result<{k},{k}> {v} | type:Result<{k},{k}> lit:0"
        ));
        b.push(format!("return - {r} | - -"));
        format!("Result<{k},{k}>")
    } else {
        b.push(format!("return - {v} | - -"));
        k.to_string()
    };
    let mut s = format!(
        "  func message type f{i} public -> {result} effects []\n    param 0 a {k}\n    param 1 b {k}\n"
    );
    for (n, (name, ty)) in locals.iter().enumerate() {
        let _ = writeln!(s, "    local {n} {name} {ty}");
    }
    s.push_str(&format!("    path p0 {k}\n    path p1 {k}\n"));
    for (n, (_, ty)) in locals.iter().enumerate() {
        let _ = writeln!(s, "    path l{n} {ty}");
    }
    for f in &fields {
        let _ = writeln!(s, "    path {f}");
    }
    for (t, ty) in &temps {
        let _ = writeln!(s, "    path {t} {ty}");
    }
    for (n, l) in loans.iter().enumerate() {
        let _ = writeln!(s, "    loan {n} {l}");
    }
    for l in b.lines {
        s.push_str(&l);
        s.push('\n');
    }
    let recipe = |s: &mut String, ds: &[String]| {
        for d in ds {
            let _ = writeln!(s, "      place_drop - ${d} | path:{d} -");
        }
    };
    if try_shape {
        s.push_str("    edge 0 try-error 0 exit\n");
        recipe(&mut s, &try_drops);
        s.push_str("    edge 1 return 0 exit\n");
    } else {
        s.push_str("    edge 0 return 0 exit\n");
    }
    recipe(&mut s, &drops);
    s
}

/// The catalog-bound `sdk.bytes` facade declarations (module `sdk.bytes` of
/// package `sdk`): `Bytes` with `length` and the certified `slice`
/// forwarding body, and `BytesBuilder.finish` (BYTE_BUILDER_FINISH).
const FACADE: &str = "decl value Bytes public
  field 0 storage private let Array<Byte>

  func message shared length public -> UInt64 effects []
    path recv @Bytes
    path recv/Bytes.storage Array<Byte>
    loan 0 shared recv - Ref<@Bytes> - -
    loan 1 shared recv/Bytes.storage 0 Ref<Array<Byte>> %0.0 %0.1
    block 0
      borrow_shared Ref<Array<Byte>> $recv/Bytes.storage | loan:1 -
      intrinsic_call UInt64 %0.0 | cfunc:1 effects:[]
      return - %0.1 | - -
    edge 0 return 0 exit

  func message shared slice public -> Slice<Byte> effects []
    param 0 start UInt64
    param 1 end UInt64
    requires
      cop le Bool p0 p1 | 0 0 -
    requires
      cop pure_call UInt64 recv | 0 0 func:Bytes.length
      cop le Bool p1 v0 | 0 0 -
    path recv @Bytes
    path recv/Bytes.storage Array<Byte>
    path p0 UInt64
    path p1 UInt64
    loan 0 shared recv - Ref<@Bytes> - -
    loan 1 slice recv/Bytes.storage 0 Slice<Byte> %0.2 %0.3
    block 0
      load_local UInt64 $p0 | path:p0 -
      load_local UInt64 $p1 | path:p1 -
      borrow_slice_byte Slice<Byte> $recv/Bytes.storage %0.0 %0.1 | loan:1 cfunc:6
      return - %0.2 | - -
    edge 0 return 0 exit

decl value BytesBuilder public
  field 0 storage private var Array<Byte>

  func message owned finish public -> @Bytes effects []
    path recv @BytesBuilder
    path t%0.0 @Bytes
    block 0
      byte_builder_finish @Bytes $recv | - -
      return - %0.0 | - -
    edge 0 return 0 exit

";

/// The body of one byte-array function under construction (block 0 only):
/// its lines, loans, locals, temporaries and cleanup edges.
struct BytesBody<'a> {
    b: Block<'a>,
    loans: Vec<String>,
    locals: Vec<(String, String)>,
    temps: Vec<(String, String)>,
    /// `(kind, drops)` of each cleanup edge, by index.
    edges: Vec<(&'static str, Vec<String>)>,
    /// UInt64 values usable as indexes and bounds.
    indexes: Vec<String>,
    /// Bytes read so far (folded into the result).
    bytes: Vec<String>,
    /// The module's byte helpers this function may call: the view reader
    /// ([`view_function`]) and the poke ([`poke_function`]).
    helpers: Option<(String, String)>,
}

impl BytesBody<'_> {
    fn loan(&mut self, record: String) -> usize {
        self.loans.push(record);
        self.loans.len() - 1
    }

    /// An index: one already read or a small constant.
    fn index(&mut self, rng: &mut Rng) -> String {
        if !self.indexes.is_empty() && rng.below(3) != 0 {
            return rng.pick(&self.indexes).clone();
        }
        let c = rng.below(12);
        self.b.push(format!("const UInt64 c:UInt64:{c} | - -"))
    }

    /// Reads of a byte slice held in `slice` (an SSA value or a `$` place)
    /// under slice loan `parent` on `origin`: its length, and sometimes the
    /// byte at an index. Returns the last use.
    fn read_slice(&mut self, rng: &mut Rng, origin: &str, slice: &str, parent: usize) -> String {
        let l = self.loans.len();
        let r = self.b.push(format!(
            "borrow_shared Ref<Slice<Byte>> {slice} | loan:{l} -"
        ));
        let len = self
            .b
            .push(format!("intrinsic_call UInt64 {r} | cfunc:9 effects:[]"));
        self.loan(format!(
            "shared {origin} {parent} Ref<Slice<Byte>> {r} {len}"
        ));
        self.indexes.push(len);
        let mut last = r;
        if rng.below(4) != 0 {
            let l = self.loans.len();
            let r = self.b.push(format!(
                "borrow_shared Ref<Slice<Byte>> {slice} | loan:{l} -"
            ));
            let at = self.index(rng);
            let g = self.b.push(format!(
                "intrinsic_call Byte {r} {at} | cfunc:10 effects:[]"
            ));
            self.loan(format!("shared {origin} {parent} Ref<Slice<Byte>> {r} {g}"));
            self.bytes.push(g);
            last = r;
        }
        last
    }

    /// One random operation on the array owned by local `l0`: set a byte,
    /// read its length, take a slice window and read it, or (rarely) clear
    /// it.
    fn array_op(&mut self, rng: &mut Rng) {
        match rng.below(7) {
            0 | 1 => {
                let l = self.loans.len();
                let m = self
                    .b
                    .push(format!("borrow_mut Mut<Array<Byte>> $l0 | loan:{l} -"));
                let at = self.index(rng);
                let byte = rng.below(256);
                let v = self.b.push(format!("const Byte c:Byte:{byte} | - -"));
                // The catalog's set, or the module's poke helper (its
                // contracts call the catalog through the Mut binding).
                let set = match &self.helpers {
                    Some((_, poke)) if rng.below(2) == 0 => self.b.push(format!(
                        "call Unit {m} {at} {v} | func:Main.{poke} effects:[]"
                    )),
                    _ => self.b.push(format!(
                        "intrinsic_call Unit {m} {at} {v} | cfunc:5 effects:[]"
                    )),
                };
                self.loan(format!("exclusive l0 - Mut<Array<Byte>> {m} {set}"));
            }
            2 | 3 => {
                let l = self.loans.len();
                let r = self
                    .b
                    .push(format!("borrow_shared Ref<Array<Byte>> $l0 | loan:{l} -"));
                let len = self
                    .b
                    .push(format!("intrinsic_call UInt64 {r} | cfunc:1 effects:[]"));
                self.loan(format!("shared l0 - Ref<Array<Byte>> {r} {len}"));
                self.indexes.push(len);
            }
            4 | 5 => {
                let (start, end) = (self.index(rng), self.index(rng));
                let l = self.loans.len();
                let s = self.b.push(format!(
                    "borrow_slice_byte Slice<Byte> $l0 {start} {end} | loan:{l} cfunc:6"
                ));
                self.loan(String::new());
                // The window in a local (once per function) or as a value.
                let place =
                    if self.locals.iter().all(|(_, t)| t != "Slice<Byte>") && rng.below(2) == 0 {
                        let n = self.locals.len();
                        self.b
                            .push(format!("store_local - $l{n} {s} | path:l{n} -"));
                        self.locals
                            .push((format!("window{n}"), "Slice<Byte>".into()));
                        format!("$l{n}")
                    } else {
                        s.clone()
                    };
                let last = self.read_slice(rng, "l0", &place, l);
                self.loans[l] = format!("slice l0 - Slice<Byte> {s} {last}");
            }
            _ => {
                let l = self.loans.len();
                let m = self
                    .b
                    .push(format!("borrow_mut Mut<Array<Byte>> $l0 | loan:{l} -"));
                let c = self
                    .b
                    .push(format!("intrinsic_call Unit {m} | cfunc:7 effects:[]"));
                self.loan(format!("exclusive l0 - Mut<Array<Byte>> {m} {c}"));
            }
        }
    }

    /// A call of the view helper `view` with a window of the array owned
    /// by `l0` (a `Slice<Byte>` argument), a shared loan of the array and
    /// the allocator: its result joins the indexes.
    fn view_call(&mut self, rng: &mut Rng, view: &str) {
        let (start, end) = (self.index(rng), self.index(rng));
        let l = self.loans.len();
        let s = self.b.push(format!(
            "borrow_slice_byte Slice<Byte> $l0 {start} {end} | loan:{l} cfunc:6"
        ));
        let r = self.b.push(format!(
            "borrow_shared Ref<Array<Byte>> $l0 | loan:{} -",
            l + 1
        ));
        let c = self.b.push(format!(
            "call UInt64 {s} {r} $p0 | func:Main.{view} effects:[]"
        ));
        self.loan(format!("slice l0 - Slice<Byte> {s} {c}"));
        self.loan(format!("shared l0 - Ref<Array<Byte>> {r} {c}"));
        self.indexes.push(c);
    }
}

/// One requires clause of [`view_function`] over its parameters (`p0` the
/// window, `p1` the array, `p2` the allocator): catalog pure calls (the
/// slice's and the array's `length` and `get`, the allocator's
/// `remaining`, tag 3 with a catalog callee), compared with each other or
/// with a constant; an index may itself be computed from a pure call.
fn view_clause(rng: &mut Rng) -> Vec<String> {
    let cmp = *rng.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
    match rng.below(5) {
        0 => vec![
            "cop pure_call UInt64 p0 | 1 0 cfunc:9".into(),
            format!("cop {cmp} Bool v0 c:UInt64:{} | 0 0 -", rng.below(6)),
        ],
        1 => vec![
            format!(
                "cop pure_call Byte p0 c:UInt64:{} | 1 0 cfunc:10",
                rng.below(4)
            ),
            format!(
                "cop pure_call Byte p1 c:UInt64:{} | 1 0 cfunc:2",
                rng.below(4)
            ),
            format!("cop {cmp} Bool v0 v1 | 0 0 -"),
        ],
        2 => vec![
            "cop pure_call UInt64 p1 | 1 0 cfunc:1".into(),
            "cop pure_call UInt64 p0 | 1 0 cfunc:9".into(),
            // A window is never longer than its array: mostly `ge`.
            format!(
                "cop {} Bool v0 v1 | 0 0 -",
                if rng.below(2) == 0 { "ge" } else { cmp }
            ),
        ],
        3 => vec![
            "cop pure_call UInt64 p2 | 1 0 cfunc:8".into(),
            format!("cop {cmp} Bool v0 c:UInt64:{} | 0 0 -", rng.below(40)),
        ],
        _ => vec![
            // The array's last byte against the window's first (an empty
            // array overflows the subtraction, an empty window is a
            // bounds fault).
            "cop pure_call UInt64 p1 | 1 0 cfunc:1".into(),
            "cop sub UInt64 v0 c:UInt64:1 | 0 0 -".into(),
            "cop pure_call Byte p1 v1 | 1 0 cfunc:2".into(),
            "cop pure_call Byte p0 c:UInt64:0 | 1 0 cfunc:10".into(),
            format!("cop {cmp} Bool v2 v3 | 0 0 -"),
        ],
    }
}

/// `name(view: Slice<Byte>, bytes: Ref<Array<Byte>>, alloc:
/// Ref<Allocator<BytesError>>) -> UInt64`: requires clauses of catalog
/// pure calls ([`view_clause`]), sometimes an ensures clause comparing the
/// result with pure calls on the surviving shared loans, and a body
/// reading the window's and the array's lengths (and maybe the window's
/// first byte) and the budget left.
fn view_function(rng: &mut Rng, name: &str) -> String {
    let mut s = format!(
        "  func message type {name} public -> UInt64 effects []
    param 0 view Slice<Byte>
    param 1 bytes Ref<Array<Byte>>
    param 2 alloc Ref<Allocator<BytesError>>
"
    );
    for _ in 0..1 + rng.below(3) {
        s.push_str("    requires\n");
        for l in view_clause(rng) {
            let _ = writeln!(s, "      {l}");
        }
    }
    if rng.below(2) == 0 {
        let cmp = rng.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
        let _ = write!(
            s,
            "    ensures
      cop pure_call UInt64 p1 | 1 0 cfunc:1
      cop pure_call UInt64 p2 | 1 0 cfunc:8
      cop add UInt64 v0 v1 | 0 0 -
      cop {cmp} Bool result v2 | 0 0 -
"
        );
    }
    s.push_str(
        "    path p0 Slice<Byte>
    path p1 Array<Byte>
    path p2 Allocator<BytesError>
    loan 0 slice p0 - Slice<Byte> - -
    loan 1 shared p1 - Ref<Array<Byte>> - -
    loan 2 shared p2 - Ref<Allocator<BytesError>> - -
    loan 3 shared p0 0 Ref<Slice<Byte>> %0.0 %0.1
",
    );
    let first = rng.below(2) == 0;
    if first {
        s.push_str("    loan 4 shared p0 0 Ref<Slice<Byte>> %0.6 %0.8\n");
    }
    s.push_str(
        "    block 0
      borrow_shared Ref<Slice<Byte>> $p0 | loan:3 -
      intrinsic_call UInt64 %0.0 | cfunc:9 effects:[]
      intrinsic_call UInt64 $p1 | cfunc:1 effects:[]
      add UInt64 %0.1 %0.2 | - -
      intrinsic_call UInt64 $p2 | cfunc:8 effects:[]
      bit_xor UInt64 %0.3 %0.4 | - -
",
    );
    if first {
        // The window's first byte, widened by a pure bytes read: the
        // array's byte at the same index.
        s.push_str(
            "      borrow_shared Ref<Slice<Byte>> $p0 | loan:4 -
      const UInt64 c:UInt64:0 | - -
      intrinsic_call Byte %0.6 %0.7 | cfunc:10 effects:[]
      intrinsic_call Byte $p1 %0.7 | cfunc:2 effects:[]
      eq Bool %0.8 %0.9 | - -
      assert_true - %0.10 | - -
      return - %0.5 | - -
",
        );
    } else {
        s.push_str("      return - %0.5 | - -\n");
    }
    s.push_str("    edge 0 return 0 exit\n");
    s
}

/// `name(bytes: Mut<Array<Byte>>, at: UInt64, value: Byte) -> Unit`: the
/// catalog's set, with requires clauses of catalog pure calls through the
/// exclusive loan (the array's `length` against `at`, its byte at `at`
/// against `value`).
fn poke_function(rng: &mut Rng, name: &str) -> String {
    let mut s = format!(
        "  func message type {name} public -> Unit effects []
    param 0 bytes Mut<Array<Byte>>
    param 1 at UInt64
    param 2 value Byte
"
    );
    if rng.below(3) != 0 {
        let cmp = rng.pick(&["gt", "ge", "ne"]);
        let _ = write!(
            s,
            "    requires
      cop pure_call UInt64 p0 | 1 0 cfunc:1
      cop {cmp} Bool v0 p1 | 0 0 -
"
        );
    }
    if rng.below(3) == 0 {
        let cmp = rng.pick(&["ne", "le", "eq"]);
        let _ = write!(
            s,
            "    requires
      cop pure_call Byte p0 p1 | 1 0 cfunc:2
      cop {cmp} Bool v0 p2 | 0 0 -
"
        );
    }
    s.push_str(
        "    path p0 Array<Byte>
    path p1 UInt64
    path p2 Byte
    loan 0 exclusive p0 - Mut<Array<Byte>> - -
    block 0
      load_local UInt64 $p1 | path:p1 -
      load_local Byte $p2 | path:p2 -
      intrinsic_call Unit $p0 %0.0 %0.1 | cfunc:5 effects:[]
      return - %0.2 | - -
    edge 0 return 0 exit
",
    );
    s
}

/// One byte-array function: allocate `cap` bytes from the host allocator,
/// push one to ten bytes (growth and the byte budget), then a few random
/// operations on the array (set, length, clear, a slice window with its
/// length and a byte of it), and read the byte at `at` or at the budget's
/// `remaining` (a bounds fault unwinds the owner). With `facade` (in the
/// `sdk.bytes` module) the array instead becomes a `BytesBuilder`, is
/// finished into `Bytes`, and is read through the `Bytes.slice` facade
/// form (tag 43 over a `Ref<Bytes>`) and `Bytes.length`. Try edges drop
/// the array. The bytes read are folded into the result.
fn bytes_function(rng: &mut Rng, i: usize, facade: bool) -> String {
    // Outside the facade, the function's own helpers come first: a view
    // reader and a poke, each with contracts of catalog pure calls.
    let mut helpers_text = String::new();
    let helpers = if facade {
        None
    } else {
        let (view, poke) = (format!("f{i}w"), format!("f{i}m"));
        helpers_text.push_str(&view_function(rng, &view));
        helpers_text.push('\n');
        helpers_text.push_str(&poke_function(rng, &poke));
        helpers_text.push('\n');
        Some((view, poke))
    };
    let mut body = BytesBody {
        b: block(0, "UInt64"),
        loans: vec!["shared p0 - Ref<Allocator<BytesError>> - -".into()],
        locals: vec![("buf".into(), "Array<Byte>".into())],
        temps: Vec::new(),
        edges: vec![("try-error", Vec::new())],
        indexes: Vec::new(),
        bytes: Vec::new(),
        helpers,
    };
    let cap = body.b.push("load_local UInt64 $p1 | path:p1 -".into());
    let r = body.b.push(format!(
        "intrinsic_call Result<Array<Byte>,UInt64> $p0 {cap} | cfunc:3 effects:[alloc]"
    ));
    body.temps
        .push((format!("t{r}"), "Result<Array<Byte>,UInt64>".into()));
    let arr = body.b.push(format!(
        "result_try_rich Array<Byte> {r} | type:Result<Byte,UInt64> edge:0"
    ));
    body.temps.push((format!("t{arr}"), "Array<Byte>".into()));
    body.b.push(format!("store_local - $l0 {arr} | path:l0 -"));
    let n = 1 + rng.below(10);
    for _ in 0..n {
        let l = body.loans.len();
        let m = body
            .b
            .push(format!("borrow_mut Mut<Array<Byte>> $l0 | loan:{l} -"));
        let byte = rng.below(256);
        let v = body.b.push(format!("const Byte c:Byte:{byte} | - -"));
        let p = body.b.push(format!(
            "intrinsic_call Result<Unit,UInt64> {m} $p0 {v} | cfunc:4 effects:[alloc]"
        ));
        let e = body.edges.len();
        body.b.push(format!(
            "result_try_rich Unit {p} | type:Result<Byte,UInt64> edge:{e}"
        ));
        body.loan(format!("exclusive l0 - Mut<Array<Byte>> {m} {p}"));
        body.edges.push(("try-error", vec!["l0".into()]));
    }
    for _ in 0..rng.below(4) {
        body.array_op(rng);
    }
    if let Some((view, _)) = body.helpers.clone()
        && rng.below(2) == 0
    {
        body.view_call(rng, &view);
    }
    let last = if facade {
        // Array -> BytesBuilder -> Bytes (finish relabels the token).
        let mv = body.b.push("place_move Array<Byte> $l0 | path:l0 -".into());
        body.temps.push((format!("t{mv}"), "Array<Byte>".into()));
        let bb = body.b.push(format!(
            "aggregate_construct @BytesBuilder {mv} | decl:@BytesBuilder lit:1"
        ));
        body.temps.push((format!("t{bb}"), "@BytesBuilder".into()));
        let bytes = body.b.push(format!(
            "call @Bytes {bb} | func:BytesBuilder.finish effects:[]"
        ));
        body.temps.push((format!("t{bytes}"), "@Bytes".into()));
        let lb = body.locals.len();
        body.b
            .push(format!("store_local - $l{lb} {bytes} | path:l{lb} -"));
        body.locals.push(("bytes".into(), "@Bytes".into()));
        let origin = format!("l{lb}");
        if rng.below(2) == 0 {
            let l = body.loans.len();
            let r = body
                .b
                .push(format!("borrow_shared Ref<@Bytes> ${origin} | loan:{l} -"));
            let len = body
                .b
                .push(format!("call UInt64 {r} | func:Bytes.length effects:[]"));
            body.loan(format!("shared {origin} - Ref<@Bytes> {r} {len}"));
            body.indexes.push(len);
        }
        // The facade form: tag 43 over the active Ref<Bytes>.
        let lent = body.loans.len();
        let r = body.b.push(format!(
            "borrow_shared Ref<@Bytes> ${origin} | loan:{lent} -"
        ));
        let (start, end) = (body.index(rng), body.index(rng));
        let sl = lent + 1;
        let s = body.b.push(format!(
            "borrow_slice_byte Slice<Byte> {r} {start} {end} | loan:{sl} cfunc:6"
        ));
        body.loan(format!("shared {origin} - Ref<@Bytes> {r} {s}"));
        body.loan(String::new());
        let last = body.read_slice(rng, &origin, &s, sl);
        body.loans[sl] = format!("slice {origin} {lent} Slice<Byte> {s} {last}");
        if body.bytes.is_empty() {
            // A byte of the window at its start (faults on an empty one).
            let l = body.loans.len();
            let r = body
                .b
                .push(format!("borrow_shared Ref<Slice<Byte>> {s} | loan:{l} -"));
            let z = body.b.push("const UInt64 c:UInt64:0 | - -".into());
            let g = body
                .b
                .push(format!("intrinsic_call Byte {r} {z} | cfunc:10 effects:[]"));
            body.loan(format!("shared {origin} {sl} Ref<Slice<Byte>> {r} {g}"));
            body.loans[sl] = format!("slice {origin} {lent} Slice<Byte> {s} {r}");
            body.bytes.push(g);
        }
        body.bytes[0].clone()
    } else {
        // The index read: `at`, or (after an odd number of pushes) what is
        // left of the byte budget, the allocator's `remaining`, so small
        // budgets read in bounds and large ones fault.
        let l = body.loans.len();
        let r = body
            .b
            .push(format!("borrow_shared Ref<Array<Byte>> $l0 | loan:{l} -"));
        let at = if n % 2 == 1 {
            body.b
                .push("intrinsic_call UInt64 $p0 | cfunc:8 effects:[]".into())
        } else {
            body.b.push("load_local UInt64 $p2 | path:p2 -".into())
        };
        let g = body
            .b
            .push(format!("intrinsic_call Byte {r} {at} | cfunc:2 effects:[]"));
        body.loan(format!("shared l0 - Ref<Array<Byte>> {r} {g}"));
        g
    };
    let mut folded = last.clone();
    for other in body.bytes.clone().iter().filter(|b| **b != last) {
        folded = body.b.push(format!("bit_xor Byte {folded} {other} | - -"));
    }
    let ok = body.b.push(format!(
        "result_ok_rich Result<Byte,UInt64> {folded} | type:Result<Byte,UInt64> lit:0"
    ));
    body.b.push(format!("return - {ok} | - -"));
    // The live owner: the array, or (facade) the Bytes, the last local.
    let owner = if facade {
        format!("l{}", body.locals.len() - 1)
    } else {
        "l0".to_string()
    };
    body.edges.push(("return", vec![owner]));
    let mut s = helpers_text;
    let _ = write!(
        s,
        "  func message type f{i} public -> Result<Byte,UInt64> effects [alloc]
    param 0 alloc Ref<Allocator<BytesError>>
    param 1 cap UInt64
    param 2 at UInt64
"
    );
    for (n, (name, ty)) in body.locals.iter().enumerate() {
        let _ = writeln!(s, "    local {n} {name} {ty}");
    }
    s.push_str("    path p0 Allocator<BytesError>\n    path p1 UInt64\n    path p2 UInt64\n");
    for (n, (_, ty)) in body.locals.iter().enumerate() {
        let _ = writeln!(s, "    path l{n} {ty}");
    }
    for (t, ty) in &body.temps {
        let _ = writeln!(s, "    path {t} {ty}");
    }
    for (n, l) in body.loans.iter().enumerate() {
        let _ = writeln!(s, "    loan {n} {l}");
    }
    for l in &body.b.lines {
        s.push_str(l);
        s.push('\n');
    }
    for (n, (kind, drops)) in body.edges.iter().enumerate() {
        let _ = writeln!(s, "    edge {n} {kind} 0 exit");
        for d in drops {
            let _ = writeln!(s, "      place_drop - ${d} | path:{d} -");
        }
    }
    s
}

/// A random valid module for `seed`.
pub fn module_text(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let profile = rng.pick(&["exact", "modular", "approximate"]);
    let k = *rng.pick(&KINDS);
    let owned = rng.below(2) == 0;
    // Some modules with owned values are the `sdk.bytes` module itself,
    // with the catalog-bound facade (`Bytes.slice`, `BytesBuilder.finish`)
    // that their byte functions may go through.
    let facade = owned && rng.below(4) == 0;
    let mut s = if facade {
        format!("zlm 1.9 package sdk module sdk.bytes profile {profile} mode checked\n\n")
    } else {
        format!("zlm 1.9 package gen module gen.m{seed} profile {profile} mode checked\n\n")
    };
    if owned {
        s.push_str(&owned_decls(k));
    }
    if facade {
        s.push_str(FACADE);
    }
    s.push_str("decl value Main public\n");
    let n = 1 + rng.below(3);
    let mut callees = Vec::new();
    let mut fallible = Vec::new();
    for i in 0..n {
        s.push_str(&any_function(
            &mut rng,
            i,
            k,
            owned,
            facade,
            &mut callees,
            &mut fallible,
        ));
        s.push('\n');
    }
    s
}

/// Function `f{i}` of a drawn shape: scalar (straight line, diamond,
/// loop), fallible (`Result`, with a try), `Unit`, and in modules with
/// owned values also owned records, owned with a try, and byte arrays
/// (through the `sdk.bytes` facade in a `facade` module). Callable
/// scalar functions join `callees`, fallible ones `fallible`.
fn any_function(
    rng: &mut Rng,
    i: usize,
    k: &str,
    owned: bool,
    facade: bool,
    callees: &mut Vec<String>,
    fallible: &mut Vec<String>,
) -> String {
    let shape = if owned {
        rng.below(8)
    } else {
        6 + rng.below(5)
    };
    // Functions returning `Result<K, Never>` are listed among the
    // fallible ones with a `!` before their name.
    let (never, others): (Vec<String>, Vec<String>) =
        fallible.iter().cloned().partition(|f| f.starts_with('!'));
    let never: Vec<String> = never.iter().map(|f| f[1..].to_string()).collect();
    let text = match shape {
        3 => owned_function(rng, i, k, callees, false),
        4 => owned_function(rng, i, k, callees, true),
        5 => {
            let through_facade = facade && rng.below(2) == 0;
            bytes_function(rng, i, through_facade)
        }
        6 => fallible_function(rng, i, k, callees, &others),
        7 => unit_function(rng, i, k, callees),
        10 => never_function(rng, i, k, callees, &never),
        _ => function(rng, i, k, callees),
    };
    match shape {
        0..=3 | 8 | 9 => callees.push(format!("f{i}")),
        6 => fallible.push(format!("f{i}")),
        10 => fallible.push(format!("!f{i}")),
        _ => {}
    }
    text
}

/// A random valid package: provider modules in dependency order (each may
/// call into the one before it, which it then imports from) and a root
/// module whose functions call into every provider.
#[derive(Debug, Clone)]
pub struct PackageText {
    /// Provider modules, each after the providers it imports from.
    pub providers: Vec<String>,
    /// The root module.
    pub root: String,
}

/// The `(import line, external callees)` of calling into the scalar
/// functions `Main.f*` of provider `text`: callees by signature ID.
fn exports(text: &str) -> (String, Vec<String>) {
    let Ok(m) = crate::text::parse(text) else {
        return (String::new(), Vec::new());
    };
    let Ok((ids, _)) = crate::ids::compute(&m, false) else {
        return (String::new(), Vec::new());
    };
    let mut callees = Vec::new();
    let mut import = String::new();
    for (d, di) in m.declarations.iter().zip(&ids.decls) {
        if d.name != "Main" {
            continue;
        }
        let _ = writeln!(
            import,
            "import {} Main value {} interface {}",
            m.name,
            if di.copy { "copy" } else { "move" },
            crate::hash::to_hex(&ids.module_interface)
        );
        for (f, fi) in d.functions.iter().zip(&di.functions) {
            // The two-argument scalar functions (owned and bytes shapes
            // that are not callable are named otherwise or take other types).
            let scalar = f.params.len() == 2
                && f.params.iter().all(|p| p.ty == f.result)
                && matches!(f.result, crate::model::Type::Scalar(_));
            if scalar && f.name.starts_with('f') {
                callees.push(format!("#{}", crate::hash::to_hex(&fi.sig)));
            }
        }
    }
    (import, callees)
}

/// One module of a package: `imports` lines, then the declarations of
/// [`module_text`]'s shapes whose calls may also name `external` callees.
fn package_module(
    rng: &mut Rng,
    name: &str,
    k: &str,
    imports: &str,
    external: &[String],
) -> String {
    let profile = rng.pick(&["exact", "modular", "approximate"]);
    let owned = rng.below(2) == 0;
    let mut s = format!("zlm 1.9 package gen module {name} profile {profile} mode checked\n");
    s.push_str(imports);
    s.push('\n');
    if owned {
        s.push_str(&owned_decls(k));
    }
    s.push_str("decl value Main public\n");
    let n = 1 + rng.below(3);
    let mut callees: Vec<String> = external.to_vec();
    let mut fallible = Vec::new();
    for i in 0..n {
        let mine = callees.clone();
        if i == 0 && !external.is_empty() {
            // The first function calls into a provider at once.
            s.push_str(&bridge_function(rng, i, k, external, &mine));
            callees.push(format!("f{i}"));
            s.push('\n');
            continue;
        }
        s.push_str(&any_function(
            rng,
            i,
            k,
            owned,
            false,
            &mut callees,
            &mut fallible,
        ));
        s.push('\n');
    }
    s
}

/// `f{i}(a: K, b: K) -> K` that first calls one of `external` (another
/// module's function) with its arguments, then works on the result with
/// calls to `callees`.
fn bridge_function(
    rng: &mut Rng,
    i: usize,
    k: &str,
    external: &[String],
    callees: &[String],
) -> String {
    let mut s = format!(
        "  func message type f{i} public -> {k} effects []\n    param 0 a {k}\n    param 1 b {k}\n    path p0 {k}\n    path p1 {k}\n"
    );
    let mut b = block(0, k);
    let a = b.push(format!("load_local {k} $p0 | path:p0 -"));
    let c = b.push(format!("load_local {k} $p1 | path:p1 -"));
    let f = rng.pick(external).clone();
    let r = b.push(format!("call {k} {a} {c} | func:{f} effects:[]"));
    b.pool.extend([a, c, r]);
    let n = 1 + rng.below(4);
    let v = b.work(rng, n, callees);
    b.push(format!("return - {v} | - -"));
    for l in b.lines {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str("    edge 0 return 0 exit\n");
    s
}

/// A random valid package for `seed`: one or two providers (the second
/// calling into the first) and a root calling into them, all over one
/// scalar kind, each module under its own random profile and with the
/// owned, loan and byte shapes of [`module_text`] inside.
pub fn package_text(seed: u64) -> PackageText {
    let mut rng = Rng(seed.wrapping_mul(0xd1b5_4a32_d192_ed03) | 1);
    let k = *rng.pick(&KINDS);
    let count = 1 + rng.below(2);
    let mut providers: Vec<String> = Vec::new();
    for p in 0..count {
        let (imports, external) = match providers.last() {
            Some(prev) if rng.below(2) == 0 => exports(prev),
            _ => (String::new(), Vec::new()),
        };
        let name = format!("gen.p{seed}x{p}");
        providers.push(package_module(&mut rng, &name, k, &imports, &external));
    }
    let mut imports = String::new();
    let mut external = Vec::new();
    for p in &providers {
        let (i, e) = exports(p);
        imports.push_str(&i);
        external.extend(e);
    }
    let root = package_module(&mut rng, &format!("gen.r{seed}"), k, &imports, &external);
    PackageText { providers, root }
}

/// Seeded random arguments for an entry's typed call boundary
/// (docs/zlm/boundary.md): one JSON value per slot that takes one, each a
/// valid value of the slot's host type (scalars at their extremes and
/// small, every variant, both Result arms, short byte arrays), so the
/// engines can be compared on calls whose arguments are records, enums,
/// results, bytes and lent receivers. Deterministic per seed.
pub fn arguments(
    r: &crate::check::Resolved<'_>,
    slots: &[crate::boundary::Slot],
    seed: u64,
) -> serde_json::Value {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    serde_json::Value::Array(
        slots
            .iter()
            .filter(|s| s.passing != crate::boundary::Passing::Allocator)
            .map(|s| argument(r, &s.host, &mut rng, 0))
            .collect(),
    )
}

/// A random valid JSON value of type `t` (`depth` bounds nesting).
fn argument(
    r: &crate::check::Resolved<'_>,
    t: &crate::model::Type,
    rng: &mut Rng,
    depth: usize,
) -> serde_json::Value {
    use crate::model::{ScalarKind, Type};
    use serde_json::{Map, Value as Json};
    let fields = |fs: &[crate::model::Field], rng: &mut Rng| -> Json {
        let mut map = Map::new();
        for f in fs {
            map.insert(f.name.clone(), argument(r, &f.ty, rng, depth + 1));
        }
        Json::Object(map)
    };
    match t {
        Type::Unit => Json::Null,
        Type::Scalar(ScalarKind::Bool) => Json::Bool(rng.below(2) == 1),
        Type::Scalar(k) => {
            let bits = const_bits(rng, k.text());
            let w = crate::interp::width(*k);
            if k.is_signed() {
                // Sign-extend from the kind's width.
                let shift = 64 - w;
                Json::from(((bits << shift) as i64) >> shift)
            } else {
                Json::from(bits)
            }
        }
        Type::ArrayByte | Type::SliceByte => Json::Array(
            (0..rng.below(6))
                .map(|_| Json::from(rng.below(256) as u64))
                .collect(),
        ),
        Type::Result(ok, err) => {
            let mut map = Map::new();
            if rng.below(2) == 0 {
                map.insert("Ok".into(), argument(r, ok, rng, depth + 1));
            } else {
                map.insert("Err".into(), argument(r, err, rng, depth + 1));
            }
            Json::Object(map)
        }
        Type::Nominal(_) if depth < 8 => {
            let Some(d) = r.decl_of(t) else {
                return Json::Null;
            };
            let decl = &r.module.declarations[d];
            if decl.variants.is_empty() {
                return fields(&decl.fields, rng);
            }
            let var = rng.pick(&decl.variants);
            if var.fields.is_empty() {
                return Json::String(var.name.clone());
            }
            let mut map = Map::new();
            map.insert(var.name.clone(), fields(&var.fields, rng));
            Json::Object(map)
        }
        _ => Json::Null,
    }
}

/// One engine's answer to a typed call, comparable across engines (the
/// typed-boundary oracles): the result and every lent value handed back
/// as JSON (docs/zlm/boundary.md), the steps and the drop log, or the
/// fault and the drops performed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedAnswer {
    /// Result JSON, lent values handed back (JSON, in slot order), steps, drop log.
    Done(String, Vec<String>, u64, Vec<String>),
    /// Fault display, drop log.
    Fault(String, Vec<String>),
}

/// The expected answer of typed call `at` with slot `values`: the
/// reference interpreter's (`Interp::call_host`), or its error when the
/// call is refused rather than run.
pub fn expected_typed_answer(
    it: &crate::interp::Interp<'_>,
    at: (usize, usize),
    slots: &[crate::boundary::Slot],
    values: Vec<crate::interp::Value>,
) -> Result<TypedAnswer, crate::interp::RunError> {
    let r = it.resolved();
    let f = &r.module.declarations[at.0].functions[at.1];
    match it.call_host(at, values) {
        Ok(call) => {
            let typed = crate::boundary::TypedWords {
                value: call.outcome.value,
                returned: call.returned,
            };
            Ok(typed_done(
                r,
                &f.result,
                slots,
                &typed,
                call.outcome.steps,
                &call.outcome.drops,
            ))
        }
        Err(crate::interp::RunError::Fault { fault, drops }) => Ok(TypedAnswer::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        )),
        Err(e) => Err(e),
    }
}

/// A native engine's run of typed call `at` (its rendered report decoded
/// as the boundary's words) as a [`TypedAnswer`]; `None` when the report
/// does not decode.
pub fn typed_answer_of_run(
    r: &crate::check::Resolved<'_>,
    at: (usize, usize),
    slots: &[crate::boundary::Slot],
    ran: crate::materialize::c::engine::CRun,
) -> Option<TypedAnswer> {
    use crate::materialize::c::engine::CRun;
    let f = &r.module.declarations[at.0].functions[at.1];
    match ran {
        CRun::Done(o) => {
            let typed = crate::boundary::typed_of_report(r, &f.result, slots, &o.rendered)?;
            Some(typed_done(r, &f.result, slots, &typed, o.steps, &o.drops))
        }
        CRun::Fault { fault, drops } => Some(TypedAnswer::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        )),
    }
}

/// [`TypedAnswer::Done`] of a completed call.
fn typed_done(
    r: &crate::check::Resolved<'_>,
    result: &crate::model::Type,
    slots: &[crate::boundary::Slot],
    typed: &crate::boundary::TypedWords,
    steps: u64,
    drops: &[crate::interp::DropEvent],
) -> TypedAnswer {
    TypedAnswer::Done(
        crate::boundary::json_of_value(r, &typed.value, result).to_string(),
        slots
            .iter()
            .zip(&typed.returned)
            .filter_map(|(s, v)| {
                v.as_ref()
                    .map(|v| crate::boundary::json_of_value(r, v, &s.host).to_string())
            })
            .collect(),
        steps,
        drops.iter().map(|d| d.to_string()).collect(),
    )
}
