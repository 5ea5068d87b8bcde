//! Typed host entries of a lowered module (docs/zlm/boundary.md, "Words"):
//! the same word stream the C engine's wrappers read and write
//! ([`zlm::boundary::words_of_value`]), in IR. Every lowered function
//! whose runtime slots and result can cross (the C engine's rule,
//! [`zlm::materialize::c::host::support`]) gets a wrapper
//! `zlm_typed_K(ptr %z, ptr %words, i64 %n)` that reads its slot values
//! into host storage, lends or moves them into the function exactly as its
//! signature says, and on success writes the result's words and then, for
//! each lent slot, `;` and the lent value's words to the result channel of
//! the output hooks (render kind [`HEX`]). A malformed stream returns -1
//! before anything runs. Per non-word type the module carries a reader
//! `zrN` and a writer `zwN` of the stream.

use crate::text::Body;
use crate::unitctx::Unit;
use std::fmt::Write;
use zlm::boundary::{self, Passing};
use zlm::materialize::c::host::{self, is_slice, storage};
use zlm::materialize::c::types::{Shape, Slot, Types, is_word, pointee};
use zlm::materialize::c::walk::At;
use zlm::model::*;

/// Render kind of one stream word on the result channel: a space, then
/// the word in lower-case hex (the C engine's `zlm_word_out`).
pub const HEX: u64 = 5;

/// The stream's word and byte-array readers and writers.
const STREAM_IR: &str = r#"
; The typed boundary's word stream (docs/zlm/boundary.md, "Words").
define internal i32 @zlm_tw_in(ptr %cur, ptr %end, ptr %x) {
entry:
  %p = load ptr, ptr %cur
  %done = icmp uge ptr %p, %end
  br i1 %done, label %bad, label %ok
ok:
  %w = load i64, ptr %p
  store i64 %w, ptr %x
  %n = getelementptr inbounds i64, ptr %p, i64 1
  store ptr %n, ptr %cur
  ret i32 0
bad:
  ret i32 1
}

; A host-supplied array: its length, then one word per byte; its capacity
; is its length and counts towards the byte limit (%z field 11).
define internal i32 @zlm_tb_in(ptr %z, ptr %cur, ptr %end, ptr %b) {
entry:
  %p = load ptr, ptr %cur
  %done = icmp uge ptr %p, %end
  br i1 %done, label %bad, label %len
len:
  %n = load i64, ptr %p
  %p1 = getelementptr inbounds i64, ptr %p, i64 1
  %pi = ptrtoint ptr %p1 to i64
  %ei = ptrtoint ptr %end to i64
  %room = sub i64 %ei, %pi
  %left = lshr i64 %room, 3
  %over = icmp ugt i64 %n, %left
  br i1 %over, label %bad, label %alloc
alloc:
  %buf = call ptr @zlm_mem_alloc(i64 %n)
  %null = icmp eq ptr %buf, null
  br i1 %null, label %bad, label %loop
loop:
  %i = phi i64 [0, %alloc], [%i1, %byte]
  %fin = icmp uge i64 %i, %n
  br i1 %fin, label %fill, label %body
body:
  %wp = getelementptr inbounds i64, ptr %p1, i64 %i
  %w = load i64, ptr %wp
  %big = icmp ugt i64 %w, 255
  br i1 %big, label %bad, label %byte
byte:
  %by = trunc i64 %w to i8
  %at = getelementptr inbounds i8, ptr %buf, i64 %i
  store i8 %by, ptr %at
  %i1 = add i64 %i, 1
  br label %loop
fill:
  store ptr %buf, ptr %b
  %lp = getelementptr inbounds i64, ptr %b, i64 1
  store i64 %n, ptr %lp
  %cp = getelementptr inbounds i64, ptr %b, i64 2
  store i64 %n, ptr %cp
  %np = getelementptr inbounds i64, ptr %p1, i64 %n
  store ptr %np, ptr %cur
  %bp = getelementptr inbounds i64, ptr %z, i64 11
  %bytes = load i64, ptr %bp
  %nb = add i64 %bytes, %n
  store i64 %nb, ptr %bp
  ret i32 0
bad:
  ret i32 1
}

define internal void @zlm_tw_out(ptr %z, i64 %w) {
entry:
  call void @zlm_host_word(ptr %z, i64 1, i64 5, i64 %w)
  ret void
}

define internal void @zlm_tb_out(ptr %z, ptr %buf, i64 %n) {
entry:
  call void @zlm_host_word(ptr %z, i64 1, i64 5, i64 %n)
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %body]
  %fin = icmp uge i64 %i, %n
  br i1 %fin, label %done, label %body
body:
  %at = getelementptr inbounds i8, ptr %buf, i64 %i
  %by = load i8, ptr %at
  %w = zext i8 %by to i64
  call void @zlm_host_word(ptr %z, i64 1, i64 5, i64 %w)
  %i1 = add i64 %i, 1
  br label %loop
done:
  ret void
}
"#;

/// Adds the host types of every function of `set` that can cross the
/// typed boundary to `types` (before the layouts are fixed).
pub(crate) fn add_types(
    r: &zlm::check::Resolved<'_>,
    set: &std::collections::BTreeSet<At>,
    types: &mut Types,
) {
    for &at in set {
        if host::support(r, at).is_ok() {
            // `support` just added the same types to an empty table.
            let _ = host::add_types(types, r, at);
        }
    }
}

/// The typed entries of `set` (IR: the stream functions, each type's
/// reader and writer, one wrapper per entry) and their names
/// (`Decl.function`); entry `k` is the symbol `zlm_typed_k`.
pub(crate) fn emit(
    u: &Unit<'_, '_>,
    set: &std::collections::BTreeSet<At>,
) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let mut wrappers = String::new();
    for &at in set {
        if host::support(u.r, at).is_err() || !covered(u, at) {
            continue;
        }
        wrappers.push_str(&wrapper(u, at, names.len()));
        names.push(u.r.fn_name(at.0, at.1));
    }
    if names.is_empty() {
        return (String::new(), names);
    }
    let mut out = String::from(STREAM_IR);
    let types = &u.layouts.types;
    for (i, (t, shape)) in types.iter().enumerate() {
        out.push_str(&reader(u, i, t, shape));
        out.push_str(&writer(u, i, t, shape));
    }
    out.push_str(&wrappers);
    (out, names)
}

/// Whether every host type of `at` has a layout (always, after [`add_types`]).
fn covered(u: &Unit<'_, '_>, at: At) -> bool {
    let types = &u.layouts.types;
    let has = |t: &Type| is_word(t) || types.index(t).is_some();
    let f = u.f(at);
    boundary::slots(u.r, at)
        .iter()
        .all(|s| s.passing == Passing::Allocator || has(&storage(&s.host)))
        && has(pointee(&f.result).unwrap_or(&f.result))
}

/// The typed stream's statements (on the shared body builder).
impl Body {
    /// The address of slot `off` of the storage at `base`.
    fn slot(&mut self, base: &str, off: u32) -> String {
        self.v(format!("getelementptr inbounds i64, ptr {base}, i64 {off}"))
    }

    /// Reads a value of `t` into `dst`; on a malformed stream, to `%bad`.
    fn read(&mut self, types: &Types, t: &Type, dst: &str) {
        let rc = match types.index(t) {
            Some(j) => self.v(format!(
                "call i32 @zr{j}(ptr %z, ptr %cur, ptr %end, ptr {dst})"
            )),
            None => self.v(format!(
                "call i32 @zlm_tw_in(ptr %cur, ptr %end, ptr {dst})"
            )),
        };
        let c = self.v(format!("icmp ne i32 {rc}, 0"));
        let next = self.fresh("next");
        self.line(format!("br i1 {c}, label %bad, label %{next}"));
        self.label(&next);
    }

    /// Writes the value of `t` at `src`.
    fn write(&mut self, types: &Types, t: &Type, src: &str) {
        match types.index(t) {
            Some(j) => self.line(format!("call void @zw{j}(ptr %z, ptr {src})")),
            None => {
                let w = self.v(format!("load i64, ptr {src}"));
                self.line(format!("call void @zlm_tw_out(ptr %z, i64 {w})"));
            }
        }
    }

    /// Reads a presence word, then (when set) the member of `t` at slot
    /// `value`; stores the presence at slot `flag`.
    fn read_field(&mut self, types: &Types, t: &Type, value: u32, flag: u32) {
        self.read(types, &Type::Unit, "%xw");
        let x = self.v("load i64, ptr %xw");
        let c = self.v(format!("icmp ne i64 {x}, 0"));
        let fp = self.slot("%v", flag);
        let (yes, no, join) = (self.fresh("yes"), self.fresh("no"), self.fresh("join"));
        self.line(format!("br i1 {c}, label %{yes}, label %{no}"));
        self.label(&yes);
        let m = self.slot("%v", value);
        self.read(types, t, &m);
        self.line(format!("store i64 1, ptr {fp}"));
        self.line(format!("br label %{join}"));
        self.label(&no);
        self.line(format!("store i64 0, ptr {fp}"));
        self.line(format!("br label %{join}"));
        self.label(&join);
    }

    /// Writes a presence word (the slots `conds` all set), then, when
    /// present, the member of `t` at slot `value`.
    fn write_field(&mut self, types: &Types, t: &Type, value: u32, conds: &[u32]) {
        let mut ok = "true".to_string();
        for &s in conds {
            let p = self.slot("%v", s);
            let x = self.v(format!("load i64, ptr {p}"));
            let c = self.v(format!("icmp ne i64 {x}, 0"));
            ok = self.v(format!("and i1 {ok}, {c}"));
        }
        let (yes, no, join) = (self.fresh("yes"), self.fresh("no"), self.fresh("join"));
        self.line(format!("br i1 {ok}, label %{yes}, label %{no}"));
        self.label(&yes);
        self.line("call void @zlm_tw_out(ptr %z, i64 1)");
        let m = self.slot("%v", value);
        self.write(types, t, &m);
        self.line(format!("br label %{join}"));
        self.label(&no);
        self.line("call void @zlm_tw_out(ptr %z, i64 0)");
        self.line(format!("br label %{join}"));
        self.label(&join);
    }
}

impl Body {
    /// Branches on the variant tag `tag`: one block per variant in order,
    /// filled by `arm(body, variant index, tag, payload fields)`, all
    /// joining after; an unknown tag goes to `default` (the join when none).
    fn variant_switch(
        &mut self,
        tag: &str,
        variants: &[(u32, String, Vec<Slot>)],
        default: Option<&str>,
        mut arm: impl FnMut(&mut Body, usize, u32, &[Slot]),
    ) {
        let end = self.fresh("end");
        let cases: Vec<(u32, String)> = variants
            .iter()
            .map(|(tag, _, _)| (*tag, self.fresh("case")))
            .collect();
        let arms: String = cases
            .iter()
            .map(|(tag, l)| format!(" i64 {tag}, label %{l}"))
            .collect();
        let default = default.unwrap_or(&end);
        self.line(format!("switch i64 {tag}, label %{default} [{arms} ]"));
        for (vi, ((tag, label), (_, _, fields))) in cases.iter().zip(variants).enumerate() {
            self.label(label);
            arm(self, vi, *tag, fields);
            self.line(format!("br label %{end}"));
        }
        self.label(&end);
    }

    /// Branches on a `Result`'s tag `tag` (0: Ok): `side(body, type,
    /// member address)` for the Ok side's (type, slot) or the Err side's,
    /// joining after.
    fn result_sides(
        &mut self,
        tag: &str,
        sides: [(&Type, u32); 2],
        mut side: impl FnMut(&mut Body, &Type, &str),
    ) {
        let (ok, err, end) = (self.fresh("ok"), self.fresh("err"), self.fresh("end"));
        let c = self.v(format!("icmp eq i64 {tag}, 0"));
        self.line(format!("br i1 {c}, label %{ok}, label %{err}"));
        for (label, (t, slot)) in [ok, err].iter().zip(sides) {
            self.label(label);
            let m = self.slot("%v", slot);
            side(self, t, &m);
            self.line(format!("br label %{end}"));
        }
        self.label(&end);
    }
}

/// The stream reader `zr{i}` of type `t`: 0, or 1 on a malformed stream.
fn reader(u: &Unit<'_, '_>, i: usize, t: &Type, shape: &Shape) -> String {
    let l = &u.layouts;
    let types = &l.types;
    let mut b = Body::new("%t");
    match shape {
        Shape::Record { fields, .. } => {
            for f in fields {
                if let Some(fa) = l.field(t, f.ordinal) {
                    b.read_field(types, &f.ty, fa.value, fa.flag);
                }
            }
        }
        Shape::Variants { variants, .. } => {
            b.read(types, &Type::Unit, "%xw");
            let tag = b.v("load i64, ptr %xw");
            let built = b.slot("%v", 1);
            b.line(format!("store i64 1, ptr {built}"));
            b.variant_switch(&tag, variants, Some("bad"), |b, vi, tag, fields| {
                b.line(format!("store i64 {tag}, ptr %v"));
                for f in fields {
                    if let Some(fa) = l.variant_field(t, vi, f.ordinal) {
                        b.read_field(types, &f.ty, fa.value, fa.flag);
                    }
                }
            });
        }
        Shape::Result(a, e) => {
            b.read(types, &Type::Unit, "%xw");
            let tag = b.v("load i64, ptr %xw");
            let big = b.v(format!("icmp ugt i64 {tag}, 1"));
            let go = b.fresh("go");
            b.line(format!("br i1 {big}, label %bad, label %{go}"));
            b.label(&go);
            b.line(format!("store i64 {tag}, ptr %v"));
            b.result_sides(&tag, [(a, 1), (e, l.err_at(a))], |b, t, m| {
                b.read(types, t, m)
            });
        }
        Shape::Bytes => {
            let rc = b.v("call i32 @zlm_tb_in(ptr %z, ptr %cur, ptr %end, ptr %v)");
            let c = b.v(format!("icmp ne i32 {rc}, 0"));
            let next = b.fresh("next");
            b.line(format!("br i1 {c}, label %bad, label %{next}"));
            b.label(&next);
        }
        // A slice is never read from the stream: the host lends an array.
        Shape::Slice => b.line("br label %bad"),
    }
    if !matches!(shape, Shape::Slice) {
        b.line("ret i32 0");
    }
    format!(
        "define internal i32 @zr{i}(ptr %z, ptr %cur, ptr %end, ptr %v) {{\nentry:\n  %xw = alloca i64, align 8\n{}bad:\n  ret i32 1\n}}\n\n",
        b.text
    )
}

/// The stream writer `zw{i}` of type `t`.
fn writer(u: &Unit<'_, '_>, i: usize, t: &Type, shape: &Shape) -> String {
    let l = &u.layouts;
    let types = &l.types;
    let mut b = Body::new("%t");
    match shape {
        Shape::Record { fields, .. } => {
            for f in fields {
                if let Some(fa) = l.field(t, f.ordinal) {
                    b.write_field(types, &f.ty, fa.value, &[fa.flag]);
                }
            }
        }
        Shape::Variants { variants, .. } => {
            let tag = b.v("load i64, ptr %v");
            b.line(format!("call void @zlm_tw_out(ptr %z, i64 {tag})"));
            b.variant_switch(&tag, variants, None, |b, vi, _, fields| {
                for f in fields {
                    if let Some(fa) = l.variant_field(t, vi, f.ordinal) {
                        b.write_field(types, &f.ty, fa.value, &[1, fa.flag]);
                    }
                }
            });
        }
        Shape::Result(a, e) => {
            let tag = b.v("load i64, ptr %v");
            b.line(format!("call void @zlm_tw_out(ptr %z, i64 {tag})"));
            b.result_sides(&tag, [(a, 1), (e, l.err_at(a))], |b, t, m| {
                b.write(types, t, m)
            });
        }
        Shape::Bytes => {
            let buf = b.v("load ptr, ptr %v");
            let lp = b.slot("%v", 1);
            let n = b.v(format!("load i64, ptr {lp}"));
            b.line(format!("call void @zlm_tb_out(ptr %z, ptr {buf}, i64 {n})"));
        }
        Shape::Slice => {
            let arr = b.v("load ptr, ptr %v");
            let buf = b.v(format!("load ptr, ptr {arr}"));
            let sp = b.slot("%v", 1);
            let s = b.v(format!("load i64, ptr {sp}"));
            let ep = b.slot("%v", 2);
            let e = b.v(format!("load i64, ptr {ep}"));
            let n = b.v(format!("sub i64 {e}, {s}"));
            let at = b.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {s}"));
            b.line(format!("call void @zlm_tb_out(ptr %z, ptr {at}, i64 {n})"));
        }
    }
    b.line("ret void");
    format!(
        "define internal void @zw{i}(ptr %z, ptr %v) {{\nentry:\n{}}}\n\n",
        b.text
    )
}

/// The typed wrapper `zlm_typed_{k}` of function `at`.
fn wrapper(u: &Unit<'_, '_>, at: At, k: usize) -> String {
    let l = &u.layouts;
    let types = &l.types;
    let f = u.f(at);
    let slots = boundary::slots(u.r, at);
    let mut b = Body::new("%t");
    let rn = l.size(&f.result);
    b.line("%cur = alloca ptr, align 8");
    b.line("store ptr %a, ptr %cur");
    b.line("%end = getelementptr inbounds i64, ptr %a, i64 %n");
    b.line(format!("%res = alloca [{rn} x i64], align 8"));
    b.line(format!(
        "call void @llvm.memset.p0.i64(ptr %res, i8 0, i64 {}, i1 false)",
        u64::from(rn) * 8
    ));
    for (n, s) in slots.iter().enumerate() {
        if s.passing == Passing::Allocator {
            continue;
        }
        let size = l.size(&storage(&s.host));
        b.line(format!("%h{n} = alloca [{size} x i64], align 8"));
        b.line(format!(
            "call void @llvm.memset.p0.i64(ptr %h{n}, i8 0, i64 {}, i1 false)",
            u64::from(size) * 8
        ));
    }
    for (n, s) in slots.iter().enumerate() {
        if s.passing != Passing::Allocator {
            b.read(types, &storage(&s.host), &format!("%h{n}"));
        }
    }
    let p = b.v("load ptr, ptr %cur");
    let left = b.v("icmp ne ptr %end, ".to_string() + &p);
    let call = b.fresh("call");
    b.line(format!("br i1 {left}, label %bad, label %{call}"));
    b.label(&call);
    let mut args = String::new();
    for (n, s) in slots.iter().enumerate() {
        if s.passing == Passing::Allocator {
            args.push_str(", i64 0");
        } else if is_slice(&s.ty) {
            // A slice over the whole host array.
            let sl = b.v("alloca [3 x i64], align 8");
            b.line(format!("store ptr %h{n}, ptr {sl}"));
            let sp = b.slot(&sl, 1);
            b.line(format!("store i64 0, ptr {sp}"));
            let lp = b.slot(&format!("%h{n}"), 1);
            let len = b.v(format!("load i64, ptr {lp}"));
            let ep = b.slot(&sl, 2);
            b.line(format!("store i64 {len}, ptr {ep}"));
            let _ = write!(args, ", ptr {sl}");
        } else if matches!(s.passing, Passing::Shared | Passing::Exclusive) {
            // A loan: one slot holding the host storage's address.
            let lp = b.v("alloca i64, align 8");
            b.line(format!("store ptr %h{n}, ptr {lp}"));
            let _ = write!(args, ", ptr {lp}");
        } else if is_word(&s.ty) {
            let w = b.v(format!("load i64, ptr %h{n}"));
            let _ = write!(args, ", i64 {w}");
        } else {
            let _ = write!(args, ", ptr %h{n}");
        }
    }
    let rc = b.v(format!("call i32 @{}(ptr %z, ptr %res{args})", u.lname(at)));
    let ok = b.v(format!("icmp eq i32 {rc}, 0"));
    let (out, done) = (b.fresh("out"), b.fresh("done"));
    b.line(format!("br i1 {ok}, label %{out}, label %{done}"));
    b.label(&out);
    match pointee(&f.result) {
        Some(t) => {
            let target = b.v("load ptr, ptr %res");
            b.write(types, t, &target);
        }
        None => b.write(types, &f.result, "%res"),
    }
    let semi = u.string(";");
    for (n, s) in slots.iter().enumerate() {
        if matches!(s.passing, Passing::Shared | Passing::Exclusive) {
            b.line(format!(
                "call void @zlm_host_text(ptr %z, i64 1, ptr {semi})"
            ));
            b.write(types, &storage(&s.host), &format!("%h{n}"));
        }
    }
    b.line(format!("br label %{done}"));
    b.label(&done);
    b.line("call void @zlm_mem_release_all()");
    b.line(format!("ret i32 {rc}"));
    format!(
        "; typed entry {k}: {}\ndefine i32 @zlm_typed_{k}(ptr %z, ptr %a, i64 %n) {{\nentry:\n{}bad:\n  call void @zlm_mem_release_all()\n  ret i32 -1\n}}\n\n",
        u.r.fn_name(at.0, at.1).replace(['\n', '\r'], " "),
        b.text
    )
}
