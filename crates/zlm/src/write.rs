//! The canonical writer: identity waves first, then canonical table order,
//! index assignment, pools, ranges and the packed little-endian records.

use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, domain, opt, preimage, seq, u32p};
use crate::ids::{self, FnIndex, Identities};
use crate::layout::{NONE, Section, header};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet};

/// Validates `m`, computes its identities and returns its canonical bytes.
pub fn write(m: &Module) -> Result<Vec<u8>> {
    write_with_ids(m).map(|(bytes, _)| bytes)
}

/// Like [`write`], also handing back the identities it computed, so a caller
/// (the decoder's semantic check) need not recompute every hash.
pub fn write_with_ids(m: &Module) -> Result<(Vec<u8>, Identities)> {
    let (ids, _) = ids::compute(m, false)?;
    crate::validate::check(m, &ids)?;
    let (bytes, _, ids) = Writer::new(m, ids).emit(None)?;
    Ok((bytes, ids))
}

/// Compares `bytes` against the canonical encoding of `m` (whose identities,
/// already validated by [`crate::validate::check`], are `ids`) without
/// materialising that encoding: every section is compared in place as it is
/// produced. `sections` are the input's `(section, start, length)` in
/// [`Section::ALL`] order. Returns the first differing byte offset, if any,
/// and the identities.
pub fn compare_canonical(
    m: &Module,
    ids: Identities,
    bytes: &[u8],
    sections: &[(Section, u64, u64)],
) -> Result<(Option<u64>, Identities)> {
    let mut expect: [&[u8]; 23] = [&[]; 23];
    for (i, &(_, start, len)) in sections.iter().enumerate().take(23) {
        expect[i] = bytes
            .get(start as usize..(start + len) as usize)
            .ok_or_else(|| Error::new(code::LENGTH, "section outside the input"))?;
    }
    let header = bytes
        .get(..256)
        .ok_or_else(|| Error::new(code::LENGTH, "input shorter than the header"))?;
    let (_, mismatch, ids) = Writer::new(m, ids).emit(Some((header, expect, sections)))?;
    Ok((mismatch, ids))
}

/// Expected input while comparing: header, the 23 section slices, and their starts.
type Expect<'e> = (&'e [u8], [&'e [u8]; 23], &'e [(Section, u64, u64)]);

/// Where one section's canonical bytes go: appended to a buffer (writing),
/// or compared in place against the input's section (decoding), so a
/// validating decoder never materialises the canonical re-encoding.
struct Sink<'e> {
    buf: Vec<u8>,
    expect: Option<&'e [u8]>,
    len: usize,
    /// First differing byte, relative to the section start.
    mismatch: Option<usize>,
}

impl<'e> Sink<'e> {
    /// Compare mode buffers this many bytes and compares them in one call.
    const CHUNK: usize = 1 << 15;

    fn new(expect: Option<&'e [u8]>) -> Self {
        Sink {
            buf: Vec::new(),
            expect,
            len: 0,
            mismatch: None,
        }
    }
    #[inline]
    fn extend_from_slice(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
        if self.expect.is_some() && self.buf.len() >= Self::CHUNK {
            self.flush();
        }
    }
    /// Compare mode: compares the buffered bytes with the input at `len`.
    fn flush(&mut self) {
        let Some(e) = self.expect else { return };
        if self.mismatch.is_none() {
            let have = e.get(self.len..).unwrap_or(&[]);
            let n = self.buf.len().min(have.len());
            if have[..n] != self.buf[..n] {
                let i = have[..n].iter().zip(&self.buf).position(|(x, y)| x != y);
                self.mismatch = Some(self.len + i.unwrap_or(0));
            } else if n < self.buf.len() {
                self.mismatch = Some(self.len + n);
            }
        }
        self.len += self.buf.len();
        self.buf.clear();
    }
    /// Bytes produced so far.
    fn len(&self) -> usize {
        if self.expect.is_some() {
            self.len + self.buf.len()
        } else {
            self.buf.len()
        }
    }
    /// The first mismatch, including an expected section longer than the
    /// output (call after [`Sink::flush`]).
    fn first_mismatch(&self) -> Option<usize> {
        let e = self.expect?;
        self.mismatch.or((e.len() > self.len).then_some(self.len))
    }
}

/// Something packed little-endian words can be appended to.
trait Out {
    fn out(&mut self, b: &[u8]);
}
impl Out for Vec<u8> {
    #[inline]
    fn out(&mut self, b: &[u8]) {
        self.extend_from_slice(b)
    }
}
impl Out for Sink<'_> {
    #[inline]
    fn out(&mut self, b: &[u8]) {
        self.extend_from_slice(b)
    }
}

struct Tables<'e> {
    strings: Sink<'e>,
    imports: Sink<'e>,
    types: Sink<'e>,
    type_children: Sink<'e>,
    decls: Sink<'e>,
    fields: Sink<'e>,
    variants: Sink<'e>,
    functions: Sink<'e>,
    params: Sink<'e>,
    locals: Sink<'e>,
    blocks: Sink<'e>,
    effect_sets: Sink<'e>,
    effect_tags: Sink<'e>,
    paths: Sink<'e>,
    loans: Sink<'e>,
    edges: Sink<'e>,
    drop_refs: Sink<'e>,
    constants: Sink<'e>,
    constant_bytes: Sink<'e>,
    operands: Sink<'e>,
    symbols: Sink<'e>,
    contract_ops: Sink<'e>,
    ops: Sink<'e>,
}

impl<'e> Tables<'e> {
    /// Empty tables; with `expect`, each compares against that section of the input.
    fn new(expect: Option<[&'e [u8]; 23]>) -> Self {
        let e = |i: usize| Sink::new(expect.map(|x| x[i]));
        Tables {
            strings: e(0),
            imports: e(1),
            types: e(2),
            type_children: e(3),
            decls: e(4),
            fields: e(5),
            variants: e(6),
            functions: e(7),
            params: e(8),
            locals: e(9),
            blocks: e(10),
            effect_sets: e(11),
            effect_tags: e(12),
            paths: e(13),
            loans: e(14),
            edges: e(15),
            drop_refs: e(16),
            constants: e(17),
            constant_bytes: e(18),
            operands: e(19),
            symbols: e(20),
            contract_ops: e(21),
            ops: e(22),
        }
    }
}

/// Appends `N` little-endian words (a fixed size, so the copy is inlined).
#[inline]
fn put<O: Out, const N: usize>(buf: &mut O, words: &[u32; N]) {
    let mut tmp = [[0u8; 4]; N];
    for (t, w) in tmp.iter_mut().zip(words) {
        *t = w.to_le_bytes();
    }
    buf.out(tmp.as_flattened());
}

/// The positions of `constants` sorted by ID, then by value, keeping the
/// first entry of each ID. IDs are SHA-256 digests, so a bucket pass on
/// their leading bits (about one bucket per constant, at most 2^16) leaves
/// runs of a few entries, each ordered by the full comparison (the whole
/// ID, then kind and bits): no comparison sort over the whole table.
fn constant_order(constants: &[(Id, Constant)]) -> Vec<usize> {
    let bits = (usize::BITS - constants.len().leading_zeros()).min(16);
    let bucket = |id: &Id| -> usize {
        let head = u64::from_be_bytes(*id.first_chunk::<8>().unwrap_or(&[0; 8]));
        match bits {
            0 => 0,
            _ => (head >> (64 - bits)) as usize,
        }
    };
    // starts[b]..starts[b + 1]: the positions of bucket b in `order`.
    let mut starts = vec![0usize; (1usize << bits) + 1];
    for (id, _) in constants {
        starts[bucket(id) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut next = starts.clone();
    let mut order = vec![0usize; constants.len()];
    for (i, (id, _)) in constants.iter().enumerate() {
        let slot = &mut next[bucket(id)];
        order[*slot] = i;
        *slot += 1;
    }
    let full = |a: &usize, b: &usize| {
        let (x, y) = (&constants[*a], &constants[*b]);
        x.0.cmp(&y.0)
            .then_with(|| (x.1.kind.tag(), x.1.bits).cmp(&(y.1.kind.tag(), y.1.bits)))
    };
    for range in starts.windows(2) {
        if let Some(run) = order.get_mut(range[0]..range[1])
            && run.len() > 1
        {
            run.sort_unstable_by(full);
        }
    }
    order.dedup_by(|later, first| constants[*later].0 == constants[*first].0);
    order
}

fn cnt(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v != NONE)
        .ok_or_else(|| Error::new(code::LIMIT, "a table exceeds 2^32-2 entries"))
}

/// The logical preimage of a type instance (the writer's same-depth sort key).
pub fn type_preimage(ids: &mut Identities, t: &Type) -> Vec<u8> {
    let children: Vec<Vec<u8>> = t
        .children()
        .into_iter()
        .map(|c| ids.type_id(c).to_vec())
        .collect();
    let catalog = match t {
        Type::Scalar(_) | Type::Nominal(_) => None,
        _ => Some(crate::catalog::CATALOG_ID.as_bytes()),
    };
    let scalar = match t {
        Type::Scalar(k) => Some(k.tag().to_le_bytes()),
        _ => None,
    };
    let nominal = match t {
        Type::Nominal(id) => Some(*id),
        _ => None,
    };
    preimage(
        domain::TYPE_INSTANCE,
        &[
            opt(catalog),
            u32p(t.kind()),
            opt(scalar.as_ref().map(|s| &s[..])),
            opt(nominal.as_ref().map(|n| &n[..])),
            seq(children),
        ],
    )
}

struct Writer<'a> {
    m: &'a Module,
    ids: Identities,
    strings: BTreeMap<&'a str, (u32, u32)>,
    types: FastMap<Type, u32>,
    /// Type-table index of each scalar kind by tag (NONE when absent).
    scalar_types: [u32; 16],
    symbols: BTreeMap<Id, u32>,
    /// The constant table: sorted by ID, one entry per ID; the position is
    /// the table index.
    constants: Vec<(Id, Constant)>,
    /// Constants in first-use order while collecting (sorted into `constants`).
    new_constants: Vec<(Id, Constant)>,
    effect_sets: BTreeMap<Id, (Vec<Effect>, u32)>,
    hasher: ids::Hasher,
    const_index: FastMap<Constant, u32>,
    effect_ids: FastMap<Vec<Effect>, Id>,
}

impl<'a> Writer<'a> {
    fn new(m: &'a Module, ids: Identities) -> Self {
        Writer {
            m,
            ids,
            strings: BTreeMap::new(),
            types: FastMap::default(),
            scalar_types: [NONE; 16],
            symbols: BTreeMap::new(),
            constants: Vec::new(),
            new_constants: Vec::new(),
            effect_sets: BTreeMap::new(),
            hasher: ids::Hasher::new(false),
            const_index: FastMap::default(),
            effect_ids: FastMap::default(),
        }
    }

    fn s(&self, s: &str) -> [u32; 2] {
        let (o, l) = self.strings[s];
        [o, l]
    }
    #[inline]
    fn t(&self, t: &Type) -> u32 {
        if let Type::Scalar(k) = t
            && let Some(&i) = self.scalar_types.get(k.tag() as usize)
            && i != NONE
        {
            return i;
        }
        self.types[t]
    }
    fn sym(&self, id: &Id) -> u32 {
        self.symbols[id]
    }

    fn collect(&mut self, order: &Order) -> Result<()> {
        let m = self.m;
        let seeded: Vec<(Id, Constant)> = self
            .ids
            .constants
            .iter()
            .map(|(c, id)| (*id, c.clone()))
            .collect();
        // Seeded constants are not entered in `const_index`:
        // `add_constant` finds them in `ids.constants`.
        self.new_constants.extend(seeded);
        let mut strings: BTreeSet<&'a str> = BTreeSet::new();
        let mut types: BTreeSet<&Type> = BTreeSet::new();
        let mut extra_types: Vec<Type> = Vec::new();
        let mut symbols: BTreeSet<Id> = BTreeSet::new();
        strings.insert(&m.package);
        strings.insert(&m.name);
        for i in &m.imports {
            strings.insert(&i.module);
            strings.insert(&i.name);
        }
        for &(decl_index, _) in &order.decls {
            let d = &m.declarations[decl_index];
            strings.insert(&d.name);
            for f in &d.fields {
                strings.insert(&f.name);
                types.insert(&f.ty);
            }
            for v in &d.variants {
                strings.insert(&v.name);
                for f in &v.fields {
                    strings.insert(&f.name);
                    types.insert(&f.ty);
                }
            }
            let nominal = self.ids.decls[decl_index].nominal;
            for (fn_index, f) in d.functions.iter().enumerate() {
                strings.insert(&f.name);
                if let Some(r) = ids::receiver_type(&nominal, f.receiver) {
                    extra_types.push(r);
                }
                types.insert(&f.result);
                for p in &f.params {
                    strings.insert(&p.name);
                    types.insert(&p.ty);
                }
                for l in &f.body.locals {
                    strings.insert(&l.name);
                    types.insert(&l.ty);
                }
                let eff = self.ids.decls[decl_index].functions[fn_index].effects;
                self.effect_sets
                    .entry(eff)
                    .or_insert_with(|| (f.effects.clone(), 0));
                for p in &f.body.paths {
                    types.insert(&p.ty);
                    symbols.extend(p.key.fields.iter().copied());
                }
                for l in &f.body.loans {
                    types.insert(&l.borrowed);
                }
                let recv = ids::receiver_type(&nominal, f.receiver);
                for e in f.requires.iter().chain(&f.ensures) {
                    for op in &e.ops {
                        types.insert(&op.result);
                        for o in &op.operands {
                            if let ContractOperand::Const(c) = o {
                                self.add_constant(c)?;
                            }
                            extra_types.push(ids::contract_operand_type(f, recv.as_ref(), e, o)?);
                        }
                    }
                }
                let all_ops = f
                    .body
                    .blocks
                    .iter()
                    .flat_map(|b| &b.ops)
                    .chain(f.body.edges.iter().flat_map(|e| &e.drops));
                // Scalar result types (nearly every operation's) go into
                // the ordered set once per kind, not once per operation.
                let mut scalar_seen = [false; 16];
                for op in all_ops {
                    match &op.result {
                        Some(t @ Type::Scalar(kind)) => {
                            if let Some(seen) = scalar_seen.get_mut(kind.tag() as usize) {
                                if !*seen {
                                    *seen = true;
                                    types.insert(t);
                                }
                            } else {
                                types.insert(t);
                            }
                        }
                        Some(t) => {
                            types.insert(t);
                        }
                        None => {}
                    }
                    // Body constants: seeded above from the identities,
                    // which hashed every body constant; a validator that
                    // hashes the bodies on another thread passes identities
                    // without them, and they are hashed here.
                    if !self.ids.body_constants {
                        for o in &op.operands {
                            if let Operand::Const(c) = o {
                                self.add_constant(c)?;
                            }
                        }
                    }
                    for a in [&op.aux0, &op.aux1] {
                        match a {
                            Aux::Type(t) => extra_types.push(t.clone()),
                            Aux::Decl(id)
                            | Aux::Field(id)
                            | Aux::Func(id)
                            | Aux::CatalogFunc(id)
                            | Aux::Variant(id) => {
                                symbols.insert(*id);
                            }
                            Aux::Effects(e) => {
                                let id = self.hasher.effects(e);
                                self.effect_ids.insert(e.clone(), id);
                                symbols.insert(id);
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        // Sorted by ID, then by value, so the seeding order never matters;
        // the first entry of each ID is kept. (The comparator borrows and
        // tries the leading 8 bytes first: copying and memcmp-ing 32-byte
        // keys dominated the sort of 65 536 constants.)
        let new_constants = std::mem::take(&mut self.new_constants);
        let order = constant_order(&new_constants);
        self.constants = order
            .into_iter()
            .map(|i| new_constants[i].clone())
            .collect();
        // The constants' scalar types, each kind once (not once per constant).
        let mut kinds: Vec<ScalarKind> = self.constants.iter().map(|(_, c)| c.kind).collect();
        kinds.sort_unstable_by_key(|k| k.tag());
        kinds.dedup();
        extra_types.extend(kinds.into_iter().map(Type::Scalar));
        // Close under children.
        let mut all: BTreeSet<Type> = types.into_iter().cloned().collect();
        all.extend(extra_types);
        let mut stack: Vec<Type> = all.iter().cloned().collect();
        while let Some(t) = stack.pop() {
            for c in t.children() {
                if all.insert(c.clone()) {
                    stack.push(c.clone());
                }
            }
        }
        let mut keyed: Vec<(u32, Vec<u8>, Id, Type)> = all
            .into_iter()
            .map(|t| {
                let pre = type_preimage(&mut self.ids, &t);
                let id = self.ids.type_id(&t);
                (t.depth(), pre, id, t)
            })
            .collect();
        keyed.sort();
        for (i, (.., t)) in keyed.into_iter().enumerate() {
            if let Type::Scalar(k) = &t
                && let Some(slot) = self.scalar_types.get_mut(k.tag() as usize)
            {
                *slot = cnt(i)?;
            }
            self.types.insert(t, cnt(i)?);
        }
        let mut off = 0u64;
        for s in strings {
            if s.is_empty() {
                return Err(Error::new(code::MODEL, "empty names are not admitted"));
            }
            let len =
                u32::try_from(s.len()).map_err(|_| Error::new(code::LIMIT, "string too long"))?;
            let o = u32::try_from(off)
                .map_err(|_| Error::new(code::LIMIT, "string pool exceeds 4 GiB"))?;
            self.strings.insert(s, (o, len));
            off += s.len() as u64;
        }
        for (i, s) in symbols.into_iter().enumerate() {
            self.symbols.insert(s, cnt(i)?);
        }
        self.const_index.clear();
        self.const_index.reserve(self.constants.len());
        for (i, (_, c)) in self.constants.iter().enumerate() {
            self.const_index.insert(c.clone(), cnt(i)?);
        }
        for (i, v) in self.effect_sets.values_mut().enumerate() {
            v.1 = cnt(i)?;
        }
        Ok(())
    }

    fn add_constant(&mut self, c: &Constant) -> Result<()> {
        // Index assigned once every constant is known (BTreeMap order).
        if self.ids.constants.contains_key(c) {
            // Seeded from the identities in `collect`.
            return Ok(());
        }
        match self.const_index.entry(c.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => return Ok(()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(0);
            }
        }
        let id = match self.ids.constants.get(c) {
            Some(id) => *id,
            None => self.hasher.constant(c)?,
        };
        self.new_constants.push((id, c.clone()));
        Ok(())
    }

    fn emit(mut self, expect: Option<Expect<'_>>) -> Result<(Vec<u8>, Option<u64>, Identities)> {
        let order = Order::new(self.m, &self.ids)?;
        self.collect(&order)?;
        let m = self.m;
        let mut tb = Tables::new(expect.map(|e| e.1));
        for s in self.strings.keys() {
            tb.strings.extend_from_slice(s.as_bytes());
        }
        // Imports.
        for &(ii, nominal) in &order.imports {
            let i = &m.imports[ii];
            tb.imports.extend_from_slice(&nominal);
            put(&mut tb.imports, &self.s(&i.module));
            put(&mut tb.imports, &self.s(&i.name));
            tb.imports.extend_from_slice(&i.interface);
        }
        // Combined nominal reference namespace.
        let mut nominal_ref: FastMap<Id, u32> = FastMap::default();
        for (pos, &(_, n)) in order.imports.iter().enumerate() {
            nominal_ref.insert(n, cnt(pos)?);
        }
        for (pos, &(_, n)) in order.decls.iter().enumerate() {
            let r = order
                .imports
                .len()
                .checked_add(pos)
                .ok_or_else(|| Error::new(code::LIMIT, "too many declarations"))?;
            nominal_ref.insert(n, cnt(r)?);
        }
        // Types.
        let mut by_index: Vec<(&Type, u32)> = self.types.iter().map(|(t, i)| (t, *i)).collect();
        by_index.sort_by_key(|x| x.1);
        let mut child_count = 0usize;
        for (t, _) in &by_index {
            let id = self.ids.types.get(*t).copied().unwrap_or([0; 32]);
            tb.types.extend_from_slice(&id);
            let scalar = if let Type::Scalar(k) = t {
                k.tag()
            } else {
                NONE
            };
            let nominal = if let Type::Nominal(n) = t {
                *nominal_ref.get(n).ok_or_else(|| {
                    Error::new(
                        code::REF,
                        format!(
                            "nominal type {} names no import or local declaration",
                            crate::hash::to_hex(n)
                        ),
                    )
                })?
            } else {
                NONE
            };
            let children = t.children();
            put(
                &mut tb.types,
                &[
                    t.kind(),
                    scalar,
                    nominal,
                    cnt(child_count)?,
                    cnt(children.len())?,
                    u32::from(self.ids.is_copy(t)),
                    0,
                ],
            );
            tb.types.extend_from_slice(&[0u8; 20]);
            for c in children {
                put(&mut tb.type_children, &[self.t(c)]);
            }
            child_count += t.children().len();
        }
        // Declarations, fields, variants, functions and everything below.
        let mut field_n = 0usize;
        let mut variant_n = 0usize;
        let mut fn_n = 0usize;
        let mut counters = Counters::default();
        let mut fn_jobs = Vec::new();
        let mut field_rows: Vec<u8> = Vec::new();
        let mut variant_rows: Vec<u8> = Vec::new();
        for (dpos, &(decl_index, nominal)) in order.decls.iter().enumerate() {
            let d = &m.declarations[decl_index];
            let dids = &self.ids.decls[decl_index];
            let fields_start = field_n;
            // Ordinary fields by ordinal.
            let mut fo: Vec<usize> = (0..d.fields.len()).collect();
            fo.sort_by_key(|&i| d.fields[i].ordinal);
            for &fn_index in &fo {
                self.field_row(
                    &mut field_rows,
                    &dids.fields[fn_index],
                    0,
                    cnt(dpos)?,
                    &d.fields[fn_index],
                )?;
            }
            field_n += fo.len();
            let variants_start = variant_n;
            let mut vo: Vec<usize> = (0..d.variants.len()).collect();
            vo.sort_by_key(|&i| d.variants[i].tag);
            for &variant_index in &vo {
                let v = &d.variants[variant_index];
                let (vid, _) = &dids.variants[variant_index];
                let mut po: Vec<usize> = (0..v.fields.len()).collect();
                po.sort_by_key(|&i| v.fields[i].ordinal);
                // Field IDs in model order (ids::compute keeps ordinal order; map by ordinal).
                let pstart = field_n;
                for &pi in &po {
                    let fid = payload_field_id(&self.ids, decl_index, variant_index, pi);
                    self.field_row(&mut field_rows, &fid, 1, cnt(variant_n)?, &v.fields[pi])?;
                }
                field_n += po.len();
                variant_rows.extend_from_slice(vid);
                put(&mut variant_rows, &[cnt(dpos)?, v.tag]);
                put(&mut variant_rows, &self.s(&v.name));
                put(&mut variant_rows, &[cnt(pstart)?, cnt(po.len())?, 0, 0]);
                variant_n += 1;
            }
            let fns = &order.functions[dpos];
            tb.decls.extend_from_slice(&nominal);
            put(
                &mut tb.decls,
                &[d.kind.tag(), d.visibility.tag(), u32::from(dids.copy)],
            );
            put(&mut tb.decls, &self.s(&d.name));
            put(
                &mut tb.decls,
                &[
                    cnt(fields_start)?,
                    cnt(fo.len())?,
                    cnt(variants_start)?,
                    cnt(vo.len())?,
                    cnt(fn_n)?,
                    cnt(fns.len())?,
                    0,
                ],
            );
            for &fn_index in fns {
                fn_jobs.push((dpos, decl_index, fn_index, fn_n));
                fn_n += 1;
            }
        }
        tb.fields.extend_from_slice(&field_rows);
        tb.variants.extend_from_slice(&variant_rows);
        for (dpos, decl_index, fn_index, fpos) in fn_jobs {
            self.function(
                &mut tb,
                &mut counters,
                &nominal_ref,
                dpos,
                decl_index,
                fn_index,
                fpos,
            )?;
        }
        // Effect sets.
        let mut tag_n = 0usize;
        for (effects, _) in self.effect_sets.values() {
            put(
                &mut tb.effect_sets,
                &[cnt(tag_n)?, cnt(effects.len())?, 0, 0],
            );
            for e in effects {
                put(&mut tb.effect_tags, &[e.tag()]);
            }
            tag_n += effects.len();
        }
        // Constants.
        for (id, c) in &self.constants {
            tb.constants.extend_from_slice(id);
            put(&mut tb.constants, &[self.t(&Type::Scalar(c.kind)), 0]);
            let (payload, width) = c
                .payload_bytes()
                .ok_or_else(|| Error::new(code::MODEL, "constant without canonical payload"))?;
            tb.constants
                .extend_from_slice(&(tb.constant_bytes.len() as u64).to_le_bytes());
            tb.constants
                .extend_from_slice(&(width as u64).to_le_bytes());
            tb.constant_bytes.extend_from_slice(&payload[..width]);
        }
        for id in self.symbols.keys() {
            tb.symbols.extend_from_slice(id);
        }
        let (bytes, mismatch) = self.assemble(tb, expect)?;
        Ok((bytes, mismatch, self.ids))
    }

    fn field_row(
        &self,
        out: &mut Vec<u8>,
        id: &Id,
        owner_kind: u32,
        owner: u32,
        f: &Field,
    ) -> Result<()> {
        out.extend_from_slice(id);
        put(out, &[owner_kind, owner, f.ordinal]);
        put(out, &self.s(&f.name));
        put(
            out,
            &[f.visibility.tag(), f.mutability.tag(), self.t(&f.ty), 0, 0],
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn function(
        &self,
        tb: &mut Tables,
        c: &mut Counters,
        nominal_ref: &FastMap<Id, u32>,
        dpos: usize,
        decl_index: usize,
        fn_index: usize,
        fpos: usize,
    ) -> Result<()> {
        let _ = nominal_ref;
        let m = self.m;
        let d = &m.declarations[decl_index];
        let f = &d.functions[fn_index];
        let fids = &self.ids.decls[decl_index].functions[fn_index];
        let nominal = self.ids.decls[decl_index].nominal;
        let fpos32 = cnt(fpos)?;
        let index = FnIndex::new(f);
        // Parameters and locals.
        let param_start = c.params;
        for &pi in &ids::param_order(f)? {
            let p = &f.params[pi];
            tb.params.extend_from_slice(&fids.params[pi]);
            put(&mut tb.params, &[fpos32, p.ordinal]);
            put(&mut tb.params, &self.s(&p.name));
            put(&mut tb.params, &[self.t(&p.ty), fids.param_flags[pi], 0, 0]);
            c.params += 1;
        }
        let local_start = c.locals;
        for &loan_index in &ids::local_order(f)? {
            let l = &f.body.locals[loan_index];
            tb.locals.extend_from_slice(&fids.locals[loan_index]);
            put(&mut tb.locals, &[fpos32, l.ordinal]);
            put(&mut tb.locals, &self.s(&l.name));
            put(&mut tb.locals, &[self.t(&l.ty), 0, 0, 0]);
            c.locals += 1;
        }
        // Global indices of blocks, edges, ops, paths, loans.
        let border = ids::block_order(f)?;
        let eorder = ids::edge_order(f)?;
        let lorder = ids::loan_order(f)?;
        let porder = ids::path_order(&fids.sig, f, &fids.params, &fids.locals)?;
        let block_start = c.blocks;
        let edge_start = c.edges;
        let loan_start = c.loans;
        let path_start = c.paths;
        let op_start = c.ops;
        // Dense IDs: position in the block/edge order is the ID.
        let mut flow_base: Vec<(usize, usize)> = Vec::with_capacity(border.len());
        let mut n = op_start;
        for &block_slot in &border {
            let len = f.body.blocks[block_slot].ops.len();
            flow_base.push((n, len));
            n += len;
        }
        let mut recipe_base: Vec<(usize, usize)> = Vec::with_capacity(eorder.len());
        for &edge_index in &eorder {
            let len = f.body.edges[edge_index].drops.len();
            recipe_base.push((n, len));
            n += len;
        }
        cnt(n)?;
        let op_count = n - op_start;
        let mut path_index: FastMap<&PathKey, u32> = FastMap::default();
        for (k, &pi) in porder.iter().enumerate() {
            path_index.insert(&f.body.paths[pi].key, cnt(path_start + k)?);
        }
        let block_index = |id: u32| -> Result<u32> {
            if (id as usize) < border.len() {
                cnt(block_start + id as usize)
            } else {
                Err(Error::new(code::REF, format!("{}: no block {id}", f.name)))
            }
        };
        let opx = |r: &OpRef| -> Result<u32> {
            let (table, owner, ordinal) = match *r {
                OpRef::Flow { block, ordinal } => (&flow_base, block, ordinal),
                OpRef::Recipe { edge, ordinal } => (&recipe_base, edge, ordinal),
            };
            match table.get(owner as usize) {
                Some(&(base, len)) if (ordinal as usize) < len => {
                    Ok((base + ordinal as usize) as u32)
                }
                _ => Err(
                    Error::new(code::REF, format!("{}: no operation {r}", f.name)).in_body(&f.name),
                ),
            }
        };
        let pathx = |k: &PathKey| -> Result<u32> {
            path_index.get(k).copied().ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: no owned path {}", f.name, crate::spell::Place(k)),
                )
            })
        };
        let loanx = |id: u32| -> Result<u32> {
            if (id as usize) < lorder.len() {
                cnt(loan_start + id as usize)
            } else {
                Err(Error::new(code::REF, format!("{}: no loan {id}", f.name)))
            }
        };
        let edgex = |id: u32| -> Result<u32> {
            if (id as usize) < eorder.len() {
                cnt(edge_start + id as usize)
            } else {
                Err(Error::new(
                    code::REF,
                    format!("{}: no cleanup edge {id}", f.name),
                ))
            }
        };
        // Blocks.
        let mut flow_n = op_start;
        for &block_slot in &border {
            let b = &f.body.blocks[block_slot];
            put(
                &mut tb.blocks,
                &[
                    fpos32,
                    b.id,
                    cnt(flow_n)?,
                    cnt(b.ops.len())?,
                    u32::from(b.id == 0),
                    0,
                    0,
                    0,
                ],
            );
            flow_n += b.ops.len();
        }
        c.blocks += border.len();
        // Owned paths.
        for &pi in &porder {
            let p = &f.body.paths[pi];
            let (kind, place) = match (&p.key.root, p.key.fields.last()) {
                (_, Some(fid)) => (2, self.sym(fid)),
                (Root::Receiver, None) => (0, 0),
                (Root::Param(x), None) => (
                    0,
                    match f.receiver {
                        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned => x
                            .checked_add(1)
                            .ok_or_else(|| Error::new(code::LIMIT, "parameter ordinal overflow"))?,
                        _ => *x,
                    },
                ),
                (Root::Local(x), None) => (1, *x),
                (Root::Temp(r), None) => (3, opx(r)?),
            };
            let parent = if p.key.fields.is_empty() {
                NONE
            } else {
                let mut pk = p.key.clone();
                pk.fields.pop();
                pathx(&pk)?
            };
            let (ordinal, state) = ids::path_facts(f, &p.key, &self.ids.fields, m)?;
            put(
                &mut tb.paths,
                &[
                    fpos32,
                    kind,
                    place,
                    parent,
                    self.t(&p.ty),
                    ordinal,
                    state.tag(),
                    0,
                ],
            );
        }
        c.paths += porder.len();
        // Loans.
        for &loan_index in &lorder {
            let l = &f.body.loans[loan_index];
            let parent = l.parent.map(loanx).transpose()?.unwrap_or(NONE);
            let creation = l.creation.as_ref().map(opx).transpose()?.unwrap_or(NONE);
            let last = l.last_use.as_ref().map(opx).transpose()?.unwrap_or(NONE);
            put(
                &mut tb.loans,
                &[
                    fpos32,
                    l.id,
                    l.kind.tag(),
                    pathx(&l.origin)?,
                    parent,
                    self.t(&l.borrowed),
                    creation,
                    last,
                    0,
                    0,
                ],
            );
        }
        c.loans += lorder.len();
        // Cleanup edges and drop references.
        let mut recipe_n = flow_n;
        for &edge_index in &eorder {
            let e = &f.body.edges[edge_index];
            let succ = e.successor.map(block_index).transpose()?.unwrap_or(NONE);
            put(
                &mut tb.edges,
                &[
                    fpos32,
                    e.id,
                    block_index(e.source)?,
                    succ,
                    e.kind.tag(),
                    cnt(c.drop_refs)?,
                    cnt(e.drops.len())?,
                    0,
                ],
            );
            for _ in &e.drops {
                put(&mut tb.drop_refs, &[cnt(recipe_n)?]);
                recipe_n += 1;
                c.drop_refs += 1;
            }
        }
        c.edges += eorder.len();
        // Contract operations (requires then ensures) and their operands.
        let recv = ids::receiver_type(&nominal, f.receiver);
        let contract_range =
            |list: &[Expr], tb: &mut Tables, c: &mut Counters| -> Result<(u32, u32)> {
                let start = c.contract_ops;
                for e in list {
                    let last = e.ops.len().saturating_sub(1);
                    for (i, op) in e.ops.iter().enumerate() {
                        let ostart = c.operands;
                        for o in &op.operands {
                            let t = ids::contract_operand_type(f, recv.as_ref(), e, o)?;
                            let (kind, r) = match o {
                                ContractOperand::Const(k) => (2, self.constant_index(k)?),
                                ContractOperand::Receiver => (4, 0),
                                ContractOperand::Param(p) => (5, *p),
                                ContractOperand::Result => (6, 0),
                                ContractOperand::Value(v) => (7, *v),
                            };
                            put(&mut tb.operands, &[kind, r, self.t(&t), 0]);
                            c.operands += 1;
                        }
                        put(
                            &mut tb.contract_ops,
                            &[
                                op.tag,
                                self.t(&op.result),
                                cnt(ostart)?,
                                cnt(op.operands.len())?,
                                op.aux0,
                                op.aux1,
                            ],
                        );
                        tb.contract_ops
                            .extend_from_slice(&op.reference.unwrap_or([0; 32]));
                        put(&mut tb.contract_ops, &[u32::from(i == last), 0]);
                        c.contract_ops += 1;
                    }
                }
                Ok((cnt(start)?, cnt(c.contract_ops - start)?))
            };
        let (req_start, req_n) = contract_range(&f.requires, tb, c)?;
        let (ens_start, ens_n) = contract_range(&f.ensures, tb, c)?;
        // Typed operations in canonical order.
        let flow = border
            .iter()
            .flat_map(|&block_slot| f.body.blocks[block_slot].ops.iter());
        let recipes = eorder
            .iter()
            .flat_map(|&edge_index| f.body.edges[edge_index].drops.iter());
        for op in flow.chain(recipes) {
            let ostart = c.operands;
            for o in &op.operands {
                // The operand's type-table index, without cloning its type.
                let resolved: Option<&Type> = match o {
                    Operand::Value(r) => index.op(r).and_then(|op| op.result.as_ref()),
                    Operand::Place(k) => index.path(k).map(|p| &p.ty),
                    Operand::Const(_) | Operand::Block(_) => None,
                };
                let t = match (o, resolved) {
                    (Operand::Const(k), _) => self.t(&Type::Scalar(k.kind)),
                    (Operand::Block(_), _) => NONE,
                    (_, Some(t)) => self.t(t),
                    (_, None) => {
                        return Err(index
                            .operand_type(o)
                            .err()
                            .unwrap_or_else(|| Error::new(code::REF, "unresolved body operand")));
                    }
                };
                let (kind, r) = match o {
                    Operand::Value(r) => (0, opx(r)?),
                    Operand::Place(k) => (1, pathx(k)?),
                    Operand::Const(k) => (2, self.constant_index(k)?),
                    Operand::Block(b) => (3, block_index(*b)?),
                };
                put(&mut tb.operands, &[kind, r, t, 0]);
                c.operands += 1;
            }
            let aux = |a: &Aux| -> Result<u32> {
                Ok(match a {
                    Aux::None => 0,
                    Aux::Lit(v) => *v,
                    Aux::Type(t) => self.t(t),
                    Aux::Decl(id)
                    | Aux::Field(id)
                    | Aux::Func(id)
                    | Aux::CatalogFunc(id)
                    | Aux::Variant(id) => self.sym(id),
                    Aux::Effects(e) => self.sym(&self.effect_ids[e]),
                    Aux::Loan(l) => loanx(*l)?,
                    Aux::Path(k) => pathx(k)?,
                    Aux::Edge(e) => edgex(*e)?,
                    Aux::Op(r) => opx(r)?,
                    Aux::Block(b) => block_index(*b)?,
                })
            };
            let result = op.result.as_ref().map(|t| self.t(t)).unwrap_or(NONE);
            put(
                &mut tb.ops,
                &[
                    op.tag,
                    result,
                    cnt(ostart)?,
                    cnt(op.operands.len())?,
                    aux(&op.aux0)?,
                    aux(&op.aux1)?,
                    0,
                    0,
                ],
            );
        }
        c.ops += op_count;
        // The function record.
        tb.functions.extend_from_slice(&fids.sig);
        let recv_t = recv.as_ref().map(|t| self.t(t)).unwrap_or(NONE);
        put(
            &mut tb.functions,
            &[cnt(dpos)?, f.callable.tag(), f.receiver.tag(), recv_t],
        );
        put(&mut tb.functions, &self.s(&f.name));
        put(
            &mut tb.functions,
            &[
                cnt(param_start)?,
                cnt(f.params.len())?,
                cnt(local_start)?,
                cnt(f.body.locals.len())?,
                cnt(block_start)?,
                cnt(border.len())?,
                self.t(&f.result),
                self.effect_sets[&fids.effects].1,
                cnt(path_start)?,
                cnt(porder.len())?,
                cnt(loan_start)?,
                cnt(lorder.len())?,
                cnt(edge_start)?,
                cnt(eorder.len())?,
                cnt(op_start)?,
                cnt(op_count)?,
                0,
                f.visibility.tag(),
                req_start,
                req_n,
                ens_start,
                ens_n,
            ],
        );
        tb.functions.extend_from_slice(&fids.contract);
        Ok(())
    }

    fn constant_index(&self, c: &Constant) -> Result<u32> {
        self.const_index
            .get(c)
            .copied()
            .ok_or_else(|| Error::new(code::MODEL, "constant missing from the constant table"))
    }

    fn assemble(
        &self,
        mut tb: Tables,
        expect: Option<Expect<'_>>,
    ) -> Result<(Vec<u8>, Option<u64>)> {
        for sink in [
            &mut tb.strings,
            &mut tb.imports,
            &mut tb.types,
            &mut tb.type_children,
            &mut tb.decls,
            &mut tb.fields,
            &mut tb.variants,
            &mut tb.functions,
            &mut tb.params,
            &mut tb.locals,
            &mut tb.blocks,
            &mut tb.effect_sets,
            &mut tb.effect_tags,
            &mut tb.paths,
            &mut tb.loans,
            &mut tb.edges,
            &mut tb.drop_refs,
            &mut tb.constants,
            &mut tb.constant_bytes,
            &mut tb.operands,
            &mut tb.symbols,
            &mut tb.contract_ops,
            &mut tb.ops,
        ] {
            sink.flush();
        }
        let sections: [(&Sink, Section); 23] = [
            (&tb.strings, Section::Strings),
            (&tb.imports, Section::Imports),
            (&tb.types, Section::Types),
            (&tb.type_children, Section::TypeChildren),
            (&tb.decls, Section::Decls),
            (&tb.fields, Section::Fields),
            (&tb.variants, Section::Variants),
            (&tb.functions, Section::Functions),
            (&tb.params, Section::Params),
            (&tb.locals, Section::Locals),
            (&tb.blocks, Section::Blocks),
            (&tb.effect_sets, Section::EffectSets),
            (&tb.effect_tags, Section::EffectTags),
            (&tb.paths, Section::Paths),
            (&tb.loans, Section::Loans),
            (&tb.edges, Section::Edges),
            (&tb.drop_refs, Section::DropRefs),
            (&tb.constants, Section::Constants),
            (&tb.constant_bytes, Section::ConstantBytes),
            (&tb.operands, Section::Operands),
            (&tb.symbols, Section::Symbols),
            (&tb.contract_ops, Section::ContractOps),
            (&tb.ops, Section::Ops),
        ];
        let total: usize = 256 + sections.iter().map(|(b, _)| b.len()).sum::<usize>();
        let mut out = vec![0u8; 256];
        if expect.is_none() {
            out.reserve(total - 256);
        }
        out[0..4].copy_from_slice(crate::layout::MAGIC);
        out[header::MAJOR..header::MAJOR + 2].copy_from_slice(&crate::layout::MAJOR.to_le_bytes());
        out[header::MINOR..header::MINOR + 2].copy_from_slice(&crate::layout::MINOR.to_le_bytes());
        out[header::HEADER_BYTES..header::HEADER_BYTES + 4].copy_from_slice(&256u32.to_le_bytes());
        out[header::PROFILE..header::PROFILE + 4]
            .copy_from_slice(&self.m.profile.tag().to_le_bytes());
        out[header::MODE..header::MODE + 4].copy_from_slice(&self.m.mode.tag().to_le_bytes());
        out[header::CATALOG..header::CATALOG + 32].copy_from_slice(&self.ids.catalog);
        out[header::CONTENT..header::CONTENT + 32].copy_from_slice(&self.ids.module_content);
        let [mo, ml] = self.s(&self.m.name);
        out[88..92].copy_from_slice(&mo.to_le_bytes());
        out[92..96].copy_from_slice(&ml.to_le_bytes());
        let [po, pl] = self.s(&self.m.package);
        out[200..204].copy_from_slice(&po.to_le_bytes());
        out[204..208].copy_from_slice(&pl.to_le_bytes());
        for (bytes, s) in &sections {
            let off = s.count_offset();
            match s {
                Section::Strings | Section::ConstantBytes => {
                    if bytes.len() as u64 > u64::from(u32::MAX) {
                        return Err(Error::new(code::LIMIT, "pool exceeds 0xffffffff bytes"));
                    }
                    out[off..off + 8].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
                }
                _ => {
                    let n = cnt(bytes.len() / s.record_size() as usize)?;
                    out[off..off + 4].copy_from_slice(&n.to_le_bytes());
                }
            }
        }
        out[header::MODULE_BYTES..header::MODULE_BYTES + 8]
            .copy_from_slice(&(total as u64).to_le_bytes());
        if let Some((head, _, starts)) = expect {
            // Equal headers mean equal counts, hence equal section starts.
            if let Some(i) = out.iter().zip(head).position(|(a, b)| a != b) {
                return Ok((Vec::new(), Some(i as u64)));
            }
            for ((sink, _), &(_, start, _)) in sections.iter().zip(starts) {
                if let Some(i) = sink.first_mismatch() {
                    return Ok((Vec::new(), Some(start + i as u64)));
                }
            }
            return Ok((Vec::new(), None));
        }
        for (sink, _) in &sections {
            out.extend_from_slice(&sink.buf);
        }
        Ok((out, None))
    }
}

fn payload_field_id(ids: &Identities, decl_index: usize, variant_index: usize, pi: usize) -> Id {
    // `DeclIds::variants[variant_index].1` is in ordinal order; find the model field's ordinal position.
    let d = &ids.decls[decl_index];
    let (_, fids) = &d.variants[variant_index];
    // ids::compute inserted every payload field into `fields` with its model index.
    fids.iter()
        .find(|id| {
            ids.fields.get(*id).is_some_and(|info| {
                info.variant == Some(variant_index) && info.index == pi && info.decl == decl_index
            })
        })
        .copied()
        .unwrap_or([0; 32])
}

#[derive(Default)]
struct Counters {
    params: usize,
    locals: usize,
    blocks: usize,
    paths: usize,
    loans: usize,
    edges: usize,
    drop_refs: usize,
    ops: usize,
    operands: usize,
    contract_ops: usize,
}

/// Canonical order of imports, declarations and functions.
struct Order {
    imports: Vec<(usize, Id)>,
    decls: Vec<(usize, Id)>,
    /// Per declaration position: function indices sorted by signature ID.
    functions: Vec<Vec<usize>>,
}

impl Order {
    fn new(m: &Module, ids: &Identities) -> Result<Self> {
        let mut imports: Vec<(usize, Id)> = ids.imports.iter().copied().enumerate().collect();
        imports.sort_by_key(|a| a.1);
        if imports.windows(2).any(|w| w[0].1 == w[1].1) {
            return Err(Error::new(code::DUPLICATE, "duplicate import"));
        }
        let mut decls: Vec<(usize, Id)> = ids.decls.iter().map(|d| d.nominal).enumerate().collect();
        decls.sort_by_key(|a| a.1);
        if decls.windows(2).any(|w| w[0].1 == w[1].1) {
            return Err(Error::new(code::DUPLICATE, "duplicate declaration"));
        }
        if imports
            .iter()
            .any(|i| decls.binary_search_by(|d| d.1.cmp(&i.1)).is_ok())
        {
            return Err(Error::new(
                code::DUPLICATE,
                "an import names a local declaration",
            ));
        }
        let functions = decls
            .iter()
            .map(|&(decl_index, _)| {
                let mut v: Vec<usize> = (0..m.declarations[decl_index].functions.len()).collect();
                v.sort_by(|&a, &b| {
                    ids.decls[decl_index].functions[a]
                        .sig
                        .cmp(&ids.decls[decl_index].functions[b].sig)
                });
                v
            })
            .collect();
        Ok(Order {
            imports,
            decls,
            functions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(section, start, length)` of canonical bytes, from their header.
    fn sections(bytes: &[u8]) -> Vec<(Section, u64, u64)> {
        let mut off = 256u64;
        Section::ALL
            .iter()
            .map(|&s| {
                let co = s.count_offset();
                let n = match s {
                    Section::Strings | Section::ConstantBytes => {
                        u64::from_le_bytes(bytes[co..co + 8].try_into().unwrap())
                    }
                    _ => u64::from(u32::from_le_bytes(bytes[co..co + 4].try_into().unwrap())),
                };
                let len = n * s.record_size();
                let r = (s, off, len);
                off += len;
                r
            })
            .collect()
    }

    /// The key sort of the constant table orders exactly as a full sort by
    /// (ID, kind, bits) followed by keeping the first entry of each ID,
    /// including IDs that tie on their leading 8 bytes and repeated IDs.
    #[test]
    fn constant_order_matches_the_full_sort() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let kinds = [ScalarKind::Int32, ScalarKind::UInt64, ScalarKind::Bool];
        let mut constants: Vec<(Id, Constant)> = Vec::new();
        for _ in 0..2000 {
            let mut id = [0u8; 32];
            // Few distinct leading words (spread over the leading bits, so
            // over many buckets) and tails: many prefix ties and repeated
            // IDs with different values.
            let head = ((next() % 64) << 58) | (next() % 2);
            id[..8].copy_from_slice(&head.to_be_bytes());
            id[31] = (next() % 4) as u8;
            let kind = kinds[(next() % 3) as usize];
            constants.push((
                id,
                Constant {
                    kind,
                    bits: next() % 3,
                },
            ));
        }
        let mut expected = constants.clone();
        expected.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| (a.1.kind.tag(), a.1.bits).cmp(&(b.1.kind.tag(), b.1.bits)))
        });
        expected.dedup_by(|later, first| later.0 == first.0);
        let got: Vec<(Id, Constant)> = constant_order(&constants)
            .into_iter()
            .map(|i| constants[i].clone())
            .collect();
        assert!(expected.len() <= 512, "the generator repeats IDs");
        assert_eq!(got, expected);
    }

    /// The in-place comparison finds exactly the first differing byte,
    /// across chunk boundaries of large sections.
    #[test]
    fn in_place_comparison_reports_the_first_difference() {
        let m = crate::sample::module("t.cmp", 3000);
        let bytes = write(&m).unwrap();
        let secs = sections(&bytes);
        assert_eq!(secs.last().map(|s| s.1 + s.2), Some(bytes.len() as u64));
        let (ids, _) = ids::compute(&m, false).unwrap();
        let (none, ids) = compare_canonical(&m, ids, &bytes, &secs).unwrap();
        assert_eq!(none, None);
        let ops = secs[22];
        assert!(ops.2 > 3 * Sink::CHUNK as u64);
        let mut ids = ids;
        for at in [
            10usize,
            60,
            (ops.1 + Sink::CHUNK as u64 + 7) as usize,
            (ops.1 + ops.2 - 1) as usize,
            secs[19].1 as usize + 5,
        ] {
            let mut x = bytes.clone();
            x[at] ^= 0x40;
            let (got, back) = compare_canonical(&m, ids, &x, &secs).unwrap();
            ids = back;
            assert_eq!(got, Some(at as u64));
        }
    }
}
