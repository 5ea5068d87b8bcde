//! Memory layout of the values that are not one word, and their drop and
//! render functions in IR.
//!
//! The shapes are the portable C engine's (`zlm::materialize::c::types`:
//! the same types are accepted and refused). Every value lives in storage
//! of 64-bit slots: a word is one slot; a loan one slot holding the
//! target's address (a shared loan of a byte slice is the slice itself); a
//! record its fields in ordinal order, each its value's slots then a
//! presence slot; an enum or error the tag, the `built` slot, then every
//! variant's fields (value, presence); a `Result` the tag, the Ok payload,
//! the Err payload; an `Array<Byte>` buffer address, length and capacity;
//! a `Slice<Byte>` the viewed array's address and the bounds. Copies are
//! `memcpy` of whole slots, so no value is ever partially undefined.

use crate::text::{Body, llvm_bytes};
use std::collections::BTreeMap;
use std::fmt::Write;
use zlm::check::Resolved;
use zlm::interp::type_name;
use zlm::materialize::c::types::{Shape, Types, is_word, pointee, render_kind};
use zlm::model::*;

/// Offsets (in slots) of one field: its value and its presence slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldAt {
    pub value: u32,
    pub flag: u32,
}

/// The layout of every non-word type of a unit.
pub(crate) struct Layouts {
    pub types: Types,
    /// Size in slots per type index.
    sizes: Vec<u32>,
    /// Record fields by (type index, ordinal); variant fields by (type
    /// index, variant index, ordinal) with the variant index in `.1`.
    fields: BTreeMap<(usize, usize, u32), FieldAt>,
}

/// Variant index used for record fields in [`Layouts`] keys.
const RECORD: usize = usize::MAX;

/// Offsets of the fixed slots.
pub(crate) mod at {
    /// Tag of an enum, error or Result.
    pub const TAG: u32 = 0;
    /// Whether an enum's variant fields were built.
    pub const BUILT: u32 = 1;
    /// An Ok payload.
    pub const OK: u32 = 1;
    /// Array<Byte>: buffer (slot 0), length, capacity (slot 2).
    pub const LEN: u32 = 1;
    /// Slice<Byte>: array (slot 0), start, end.
    pub const START: u32 = 1;
    pub const END: u32 = 2;
}

/// A shared loan of a byte slice: the slice itself.
pub(crate) fn slice_loan(t: &Type) -> bool {
    matches!(t, Type::Ref(a) if **a == Type::SliceByte)
}

impl Layouts {
    /// Lays out every type of `types`.
    pub fn new(types: Types) -> Layouts {
        let mut l = Layouts {
            sizes: Vec::new(),
            fields: BTreeMap::new(),
            types: Types::default(),
        };
        // Members come first, so each size is known when needed.
        let shapes: Vec<(Type, usize)> = types
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (t.clone(), i))
            .collect();
        l.types = types;
        for (t, i) in shapes {
            let size = match l.types.shape(&t) {
                Some(Shape::Record { fields, .. }) => {
                    let mut off = 0;
                    let mut put = Vec::new();
                    for f in fields {
                        let n = l.size(&f.ty);
                        put.push((
                            (i, RECORD, f.ordinal),
                            FieldAt {
                                value: off,
                                flag: off + n,
                            },
                        ));
                        off += n + 1;
                    }
                    l.fields.extend(put);
                    off.max(1)
                }
                Some(Shape::Variants { variants, .. }) => {
                    let mut off = 2;
                    let mut put = Vec::new();
                    for (vi, (_, _, fields)) in variants.iter().enumerate() {
                        for f in fields {
                            let n = l.size(&f.ty);
                            put.push((
                                (i, vi, f.ordinal),
                                FieldAt {
                                    value: off,
                                    flag: off + n,
                                },
                            ));
                            off += n + 1;
                        }
                    }
                    l.fields.extend(put);
                    off
                }
                Some(Shape::Result(a, b)) => 1 + l.size(a) + l.size(b),
                Some(Shape::Bytes | Shape::Slice) | None => 3,
            };
            l.sizes.push(size);
        }
        l
    }

    /// Size in slots of a value of `t`.
    pub fn size(&self, t: &Type) -> u32 {
        if is_word(t) || pointee(t).is_some() {
            return 1;
        }
        if slice_loan(t) {
            return self.size(&Type::SliceByte);
        }
        self.types
            .index(t)
            .and_then(|i| self.sizes.get(i).copied())
            .unwrap_or(1)
    }

    /// A record field's offsets.
    pub fn field(&self, t: &Type, ordinal: u32) -> Option<FieldAt> {
        let i = self.types.index(t)?;
        self.fields.get(&(i, RECORD, ordinal)).copied()
    }

    /// A variant field's offsets.
    pub fn variant_field(&self, t: &Type, variant: usize, ordinal: u32) -> Option<FieldAt> {
        let i = self.types.index(t)?;
        self.fields.get(&(i, variant, ordinal)).copied()
    }

    /// The Err payload's offset in a `Result`.
    pub fn err_at(&self, ok: &Type) -> u32 {
        1 + self.size(ok)
    }

    /// Whether values of `t` own something to drop (non-Copy, not a loan).
    pub fn drops(&self, r: &Resolved<'_>, t: &Type) -> bool {
        self.types.index(t).is_some() && !r.is_copy(t) && !t.is_borrow()
    }

    /// A call destroying the value at `v` named by the name node `nm`, in
    /// the frame of function index `fnix`; empty for types without drops.
    pub fn drop_call(&self, r: &Resolved<'_>, t: &Type, fnix: &str, nm: &str, v: &str) -> String {
        match self.types.index(t) {
            Some(i) if self.drops(r, t) => {
                format!("call void @zd{i}(ptr %z, i64 {fnix}, ptr {nm}, ptr {v})")
            }
            _ => String::new(),
        }
    }

    /// The lines rendering the value of `t` at `v` to the result channel
    /// (`%rw` names a word's load; callers substitute a fresh name).
    pub fn render_call(
        &self,
        t: &Type,
        v: &str,
        strings: &mut BTreeMap<String, usize>,
    ) -> Vec<String> {
        match (self.types.index(t), render_kind(t)) {
            (Some(i), _) => vec![format!("call void @zp{i}(ptr %z, ptr {v})")],
            (None, Some(k)) => vec![
                format!("%rw = load i64, ptr {v}"),
                format!("call void @zlm_host_word(ptr %z, i64 1, i64 {k}, i64 %rw)"),
            ],
            (None, None) => vec![format!(
                "call void @zlm_host_text(ptr %z, i64 1, ptr {})",
                string(strings, "()")
            )],
        }
    }

    /// The drop and render functions of every type, and their strings.
    pub fn emit(&self, r: &Resolved<'_>, strings: &mut BTreeMap<String, usize>) -> String {
        let mut out = String::new();
        for (i, (t, shape)) in self.types.iter().enumerate() {
            if self.drops(r, t) {
                out.push_str(&self.drop_fn(r, i, t, shape, strings));
            }
            out.push_str(&self.render_fn(r, i, shape, strings));
        }
        out
    }

    fn drop_fn(
        &self,
        r: &Resolved<'_>,
        i: usize,
        t: &Type,
        shape: &Shape,
        strings: &mut BTreeMap<String, usize>,
    ) -> String {
        let mut b = Body::new("%x");
        let ty = string(strings, &type_name(r, t));
        b.line(format!(
            "call void @zlm_drop_line(ptr %z, i64 %fn, ptr %nm, ptr {ty})"
        ));
        // A member's drop: when its presence holds, under the name `nm.seg`.
        let mut member =
            |b: &mut Body, mt: &Type, seg: &str, off: u32, cond: Vec<(u32, Option<u64>)>| {
                let call = self.drop_call(r, mt, "%fn", "%n", "%m");
                if call.is_empty() {
                    return;
                }
                let seg = string(strings, seg);
                let skip = b.fresh("skip");
                let go = b.fresh("go");
                let mut ok = "true".to_string();
                for (slot, want) in cond {
                    let p = b.v(format!("getelementptr inbounds i64, ptr %v, i64 {slot}"));
                    let x = b.v(format!("load i64, ptr {p}"));
                    let c = match want {
                        Some(w) => b.v(format!("icmp eq i64 {x}, {w}")),
                        None => b.v(format!("icmp ne i64 {x}, 0")),
                    };
                    ok = b.v(format!("and i1 {ok}, {c}"));
                }
                b.line(format!("br i1 {ok}, label %{go}, label %{skip}"));
                b.label(&go);
                let n = b.v("alloca {ptr, ptr}");
                b.line(format!("store ptr %nm, ptr {n}"));
                let s = b.v(format!(
                    "getelementptr inbounds {{ptr, ptr}}, ptr {n}, i64 0, i32 1"
                ));
                b.line(format!("store ptr {seg}, ptr {s}"));
                let m = b.v(format!("getelementptr inbounds i64, ptr %v, i64 {off}"));
                b.line(
                    call.replace("ptr %n,", &format!("ptr {n},"))
                        .replace("ptr %m)", &format!("ptr {m})")),
                );
                b.line(format!("br label %{skip}"));
                b.label(&skip);
            };
        match shape {
            Shape::Record { fields, .. } => {
                for f in fields.iter().rev() {
                    if let Some(fa) = self.field(t, f.ordinal) {
                        member(
                            &mut b,
                            &f.ty,
                            &format!(".{}", f.name),
                            fa.value,
                            vec![(fa.flag, None)],
                        );
                    }
                }
            }
            Shape::Variants { variants, .. } => {
                for (vi, (tag, _, fields)) in variants.iter().enumerate() {
                    for f in fields.iter().rev() {
                        if let Some(fa) = self.variant_field(t, vi, f.ordinal) {
                            member(
                                &mut b,
                                &f.ty,
                                &format!(".{}", f.name),
                                fa.value,
                                vec![
                                    (at::BUILT, None),
                                    (at::TAG, Some(u64::from(*tag))),
                                    (fa.flag, None),
                                ],
                            );
                        }
                    }
                }
            }
            Shape::Result(a, e) => {
                member(&mut b, a, ".value", at::OK, vec![(at::TAG, Some(0))]);
                // Any tag but 0 is the Err arm, as in the C runtime.
                member(&mut b, e, ".error", self.err_at(a), vec![(at::TAG, None)]);
            }
            Shape::Bytes => b.line("call void @zlm_bytes_free(ptr %z, ptr %v)"),
            Shape::Slice => {}
        }
        b.line("ret void");
        format!(
            "define internal void @zd{i}(ptr %z, i64 %fn, ptr %nm, ptr %v) {{\nentry:\n{}}}\n\n",
            b.text
        )
    }

    fn render_fn(
        &self,
        r: &Resolved<'_>,
        i: usize,
        shape: &Shape,
        strings: &mut BTreeMap<String, usize>,
    ) -> String {
        let mut b = Body::new("%x");
        let text = |b: &mut Body, strings: &mut BTreeMap<String, usize>, s: &str| {
            let g = string(strings, s);
            b.line(format!("call void @zlm_host_text(ptr %z, i64 1, ptr {g})"));
        };
        // One member: `sep name: ` then its value when present, else `<moved>`.
        let part = |b: &mut Body,
                    strings: &mut BTreeMap<String, usize>,
                    label: &str,
                    mt: &Type,
                    off: u32,
                    cond: Vec<u32>| {
            text(b, strings, label);
            let (yes, no, join) = (b.fresh("yes"), b.fresh("no"), b.fresh("join"));
            let mut ok = "true".to_string();
            for slot in cond {
                let p = b.v(format!("getelementptr inbounds i64, ptr %v, i64 {slot}"));
                let x = b.v(format!("load i64, ptr {p}"));
                let c = b.v(format!("icmp ne i64 {x}, 0"));
                ok = b.v(format!("and i1 {ok}, {c}"));
            }
            b.line(format!("br i1 {ok}, label %{yes}, label %{no}"));
            b.label(&yes);
            let m = b.v(format!("getelementptr inbounds i64, ptr %v, i64 {off}"));
            b.render(self, mt, &m, strings);
            b.line(format!("br label %{join}"));
            b.label(&no);
            text(b, strings, "<moved>");
            b.line(format!("br label %{join}"));
            b.label(&join);
        };
        let t = self
            .types
            .iter()
            .nth(i)
            .map(|(t, _)| t.clone())
            .unwrap_or(Type::Unit);
        match shape {
            Shape::Record { decl, fields } => {
                text(
                    &mut b,
                    strings,
                    &format!("{}(", r.module.declarations[*decl].name),
                );
                for (k, f) in fields.iter().enumerate() {
                    let sep = if k == 0 { "" } else { ", " };
                    if let Some(fa) = self.field(&t, f.ordinal) {
                        part(
                            &mut b,
                            strings,
                            &format!("{sep}{}: ", f.name),
                            &f.ty,
                            fa.value,
                            vec![fa.flag],
                        );
                    }
                }
                text(&mut b, strings, ")");
            }
            Shape::Variants { decl, variants } => {
                let dn = &r.module.declarations[*decl].name;
                let p = b.v("getelementptr inbounds i64, ptr %v, i64 0");
                let tag = b.v(format!("load i64, ptr {p}"));
                let end = b.fresh("end");
                for (vi, (vt, name, fields)) in variants.iter().enumerate() {
                    let (yes, next) = (b.fresh("case"), b.fresh("next"));
                    let c = b.v(format!("icmp eq i64 {tag}, {vt}"));
                    b.line(format!("br i1 {c}, label %{yes}, label %{next}"));
                    b.label(&yes);
                    if fields.is_empty() {
                        text(&mut b, strings, &format!("{dn}.{name}"));
                    } else {
                        text(&mut b, strings, &format!("{dn}.{name}("));
                        for (k, f) in fields.iter().enumerate() {
                            let sep = if k == 0 { "" } else { ", " };
                            if let Some(fa) = self.variant_field(&t, vi, f.ordinal) {
                                part(
                                    &mut b,
                                    strings,
                                    &format!("{sep}{}: ", f.name),
                                    &f.ty,
                                    fa.value,
                                    vec![at::BUILT, fa.flag],
                                );
                            }
                        }
                        text(&mut b, strings, ")");
                    }
                    b.line(format!("br label %{end}"));
                    b.label(&next);
                }
                let g = string(strings, "<variant ");
                b.line(format!("call void @zlm_host_text(ptr %z, i64 1, ptr {g})"));
                b.line(format!(
                    "call void @zlm_host_word(ptr %z, i64 1, i64 0, i64 {tag})"
                ));
                text(&mut b, strings, ">");
                b.line(format!("br label %{end}"));
                b.label(&end);
            }
            Shape::Result(a, e) => {
                let p = b.v("getelementptr inbounds i64, ptr %v, i64 0");
                let tag = b.v(format!("load i64, ptr {p}"));
                let (ok, err, end) = (b.fresh("ok"), b.fresh("err"), b.fresh("end"));
                let c = b.v(format!("icmp eq i64 {tag}, 0"));
                b.line(format!("br i1 {c}, label %{ok}, label %{err}"));
                b.label(&ok);
                text(&mut b, strings, "Ok(");
                let m = b.v(format!(
                    "getelementptr inbounds i64, ptr %v, i64 {}",
                    at::OK
                ));
                b.render(self, a, &m, strings);
                b.line(format!("br label %{end}"));
                b.label(&err);
                text(&mut b, strings, "Err(");
                let m = b.v(format!(
                    "getelementptr inbounds i64, ptr %v, i64 {}",
                    self.err_at(a)
                ));
                b.render(self, e, &m, strings);
                b.line(format!("br label %{end}"));
                b.label(&end);
                text(&mut b, strings, ")");
            }
            Shape::Bytes => b.line("call void @zlm_bytes_render(ptr %z, ptr %v)"),
            Shape::Slice => {
                text(&mut b, strings, "Slice(");
                for (slot, sep) in [(at::START, ".."), (at::END, ")")] {
                    let p = b.v(format!("getelementptr inbounds i64, ptr %v, i64 {slot}"));
                    let x = b.v(format!("load i64, ptr {p}"));
                    b.line(format!(
                        "call void @zlm_host_word(ptr %z, i64 1, i64 0, i64 {x})"
                    ));
                    text(&mut b, strings, sep);
                }
            }
        }
        b.line("ret void");
        format!(
            "define internal void @zp{i}(ptr %z, ptr %v) {{\nentry:\n{}}}\n\n",
            b.text
        )
    }
}

/// The global of an interned string constant.
pub(crate) fn string(strings: &mut BTreeMap<String, usize>, s: &str) -> String {
    let n = strings.len();
    let i = *strings.entry(s.to_string()).or_insert(n);
    format!("@zs{i}")
}

/// The string constants' definitions, by index.
pub(crate) fn emit_strings(strings: &BTreeMap<String, usize>) -> String {
    let mut by: Vec<(&usize, &String)> = strings.iter().map(|(s, i)| (i, s)).collect();
    by.sort();
    let mut out = String::new();
    for (i, s) in by {
        let _ = writeln!(
            out,
            "@zs{i} = private unnamed_addr constant [{} x i8] c\"{}\\00\"",
            s.len() + 1,
            llvm_bytes(s)
        );
    }
    out
}

impl Body {
    /// Renders the member of type `t` at `m`.
    fn render(&mut self, l: &Layouts, t: &Type, m: &str, strings: &mut BTreeMap<String, usize>) {
        let x = self.fresh("%rw");
        for line in l.render_call(t, m, strings) {
            self.line(line.replace("%rw", &x));
        }
    }
}
