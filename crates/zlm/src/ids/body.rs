//! Function-body digests: the canonical framed encoding of blocks,
//! operations, owned paths, loans and cleanup edges, streamed into one
//! reusable buffer (or materialised as parts when tracing), optionally with
//! a share of the operations encoded on another thread.

use super::hasher::Hasher;
use super::order::*;
use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, domain};
use crate::model::*;
use std::collections::BTreeMap;

/// Derived initialization ordinal and entry state of an owned path.
pub fn path_facts(
    f: &Function,
    k: &PathKey,
    fields: &FastMap<Id, FieldInfo>,
    m: &Module,
) -> Result<(u32, EntryState)> {
    let state = match k.root {
        Root::Receiver | Root::Param(_) => EntryState::Initialized,
        Root::Local(_) | Root::Temp(_) => EntryState::Uninitialized,
    };
    let ordinal = if let Some(last) = k.fields.last() {
        let info = fields.get(last).ok_or_else(|| {
            Error::new(
                code::REF,
                format!(
                    "{}: owned path names a field that is not a local declaration field",
                    f.name
                ),
            )
        })?;
        let d = &m.declarations[info.decl];
        match info.variant {
            None => d.fields[info.index].ordinal,
            Some(v) => d.variants[v].fields[info.index].ordinal,
        }
    } else {
        match &k.root {
            Root::Receiver => 0,
            Root::Param(p) => match f.receiver {
                ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned => p + 1,
                _ => *p,
            },
            Root::Local(l) => *l,
            Root::Temp(OpRef::Flow { block, ordinal }) => {
                let mut n = 0u32;
                for block_index in block_order(f)? {
                    let b = &f.body.blocks[block_index];
                    if b.id == *block {
                        n += *ordinal;
                        break;
                    }
                    n += b.ops.len() as u32;
                }
                n
            }
            Root::Temp(OpRef::Recipe { .. }) => {
                return Err(Error::new(
                    code::SHAPE,
                    format!("{}: a cleanup recipe cannot produce a temporary", f.name),
                ));
            }
        }
    };
    Ok((ordinal, state))
}

/// Appends `F(P)` / `S` framing straight into one reusable buffer, patching
/// lengths and counts after the content, so hashing a body allocates nothing
/// per part.
mod enc {
    /// Starts `F(...)`: an 8-byte length placeholder; returns its position.
    #[inline]
    pub fn begin(buf: &mut Vec<u8>) -> usize {
        let at = buf.len();
        buf.extend_from_slice(&[0u8; 8]);
        at
    }
    /// Ends the `F(...)` begun at `at`.
    #[inline]
    pub fn end(buf: &mut [u8], at: usize) {
        let n = (buf.len() - at - 8) as u64;
        buf[at..at + 8].copy_from_slice(&n.to_le_bytes());
    }
    /// Starts the count of an `S` list; returns its position.
    #[inline]
    pub fn count(buf: &mut Vec<u8>) -> usize {
        let at = buf.len();
        buf.extend_from_slice(&[0u8; 4]);
        at
    }
    /// Writes the element count `n` at `at`.
    #[inline]
    pub fn set_count(buf: &mut [u8], at: usize, n: usize) {
        buf[at..at + 4].copy_from_slice(&(n as u32).to_le_bytes());
    }
    /// `F(bytes)`.
    #[inline]
    pub fn el(buf: &mut Vec<u8>, bytes: &[u8]) {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    }
    /// `F(u32le(v))`.
    #[inline]
    pub fn el_u32(buf: &mut Vec<u8>, v: u32) {
        buf.extend_from_slice(&4u64.to_le_bytes());
        buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `F(optional)` of raw bytes.
    #[inline]
    pub fn el_opt(buf: &mut Vec<u8>, v: Option<&[u8]>) {
        match v {
            None => buf.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0]),
            Some(p) => {
                buf.extend_from_slice(&(p.len() as u64 + 1).to_le_bytes());
                buf.push(1);
                buf.extend_from_slice(p);
            }
        }
    }
}

/// The framed encodings of a function body's keys and elements.
struct BodyEnc<'c, 'a> {
    ctx: &'c FnCtx<'a>,
    /// `F(S(sig, id))` without the trailing 4-byte id: block, edge and loan keys.
    key: [u8; 60],
    /// `F(op key)` up to the ordinal, with zero kind and owner (patched per key).
    op: [u8; 136],
}

impl<'c, 'a> BodyEnc<'c, 'a> {
    fn new(ctx: &'c FnCtx<'a>) -> Self {
        let mut key = [0u8; 60];
        key[0..8].copy_from_slice(&56u64.to_le_bytes());
        key[8..12].copy_from_slice(&2u32.to_le_bytes());
        key[12..20].copy_from_slice(&32u64.to_le_bytes());
        key[20..52].copy_from_slice(&ctx.sig);
        key[52..60].copy_from_slice(&4u64.to_le_bytes());
        let mut op = [0u8; 136];
        op[0..8].copy_from_slice(&132u64.to_le_bytes());
        op[8..12].copy_from_slice(&4u32.to_le_bytes());
        op[12..20].copy_from_slice(&32u64.to_le_bytes());
        op[20..52].copy_from_slice(&ctx.sig);
        op[52..60].copy_from_slice(&4u64.to_le_bytes());
        // 60..64 kind
        op[64..72].copy_from_slice(&56u64.to_le_bytes());
        op[72..124].copy_from_slice(&key[8..60]);
        // 124..128 owner (inside the owner key), then the ordinal's frame;
        // the ordinal itself is appended.
        op[128..136].copy_from_slice(&4u64.to_le_bytes());
        BodyEnc { ctx, key, op }
    }
    /// `F(block/edge/loan key)`.
    #[inline]
    fn key_el(&self, buf: &mut Vec<u8>, id: u32) {
        buf.extend_from_slice(&self.key);
        buf.extend_from_slice(&id.to_le_bytes());
    }
    /// The key's content (inside an optional).
    #[inline]
    fn key_content(&self, buf: &mut Vec<u8>, id: u32) {
        buf.extend_from_slice(&self.key[8..]);
        buf.extend_from_slice(&id.to_le_bytes());
    }
    /// `F(op key)`.
    #[inline]
    fn op_el(&self, buf: &mut Vec<u8>, r: &OpRef) {
        self.op_at(buf, r, 0);
    }
    #[inline]
    fn op_content(&self, buf: &mut Vec<u8>, r: &OpRef) {
        self.op_at(buf, r, 8);
    }
    #[inline]
    fn op_at(&self, buf: &mut Vec<u8>, r: &OpRef, from: usize) {
        let (kind, owner, ordinal) = match r {
            OpRef::Flow { block, ordinal } => (0u32, *block, *ordinal),
            OpRef::Recipe { edge, ordinal } => (1u32, *edge, *ordinal),
        };
        let base = buf.len();
        buf.extend_from_slice(&self.op[from..]);
        buf[base + 60 - from..base + 64 - from].copy_from_slice(&kind.to_le_bytes());
        buf[base + 124 - from..base + 128 - from].copy_from_slice(&owner.to_le_bytes());
        buf.extend_from_slice(&ordinal.to_le_bytes());
    }
    /// `F(owned-path key)`.
    fn path_el(&self, buf: &mut Vec<u8>, k: &PathKey) -> Result<()> {
        let at = enc::begin(buf);
        self.path_content(buf, k)?;
        enc::end(buf, at);
        Ok(())
    }
    /// Owned-path key content `S(sig, root kind, root identity, S(field IDs))`.
    fn path_content(&self, buf: &mut Vec<u8>, k: &PathKey) -> Result<()> {
        buf.extend_from_slice(&4u32.to_le_bytes());
        enc::el(buf, &self.ctx.sig);
        match &k.root {
            Root::Receiver => {
                enc::el_u32(buf, 0);
                enc::el_u32(buf, 0);
            }
            Root::Param(p) => {
                enc::el_u32(buf, 1);
                enc::el(buf, &self.ctx.param_id(*p)?);
            }
            Root::Local(l) => {
                enc::el_u32(buf, 2);
                enc::el(buf, &self.ctx.local_id(*l)?);
            }
            Root::Temp(r) => {
                enc::el_u32(buf, 3);
                self.op_el(buf, r);
            }
        }
        buf.extend_from_slice(&(4 + 40 * k.fields.len() as u64).to_le_bytes());
        buf.extend_from_slice(&(k.fields.len() as u32).to_le_bytes());
        for f in &k.fields {
            enc::el(buf, f);
        }
        Ok(())
    }
    /// `F(logical auxiliary)`.
    fn aux_el(&self, hasher: &mut Hasher, buf: &mut Vec<u8>, a: &Aux) -> Result<()> {
        if let Aux::None = a {
            // F(S(u32le(0), empty)): the most common auxiliary, as one copy.
            const NONE_EL: [u8; 32] = [
                24, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0,
            ];
            buf.extend_from_slice(&NONE_EL);
            return Ok(());
        }
        let at = enc::begin(buf);
        buf.extend_from_slice(&2u32.to_le_bytes());
        enc::el_u32(buf, a.kind());
        match a {
            Aux::None => enc::el(buf, &[]),
            Aux::Lit(v) => enc::el_u32(buf, *v),
            Aux::Type(t) => enc::el(buf, &hasher.type_id(t)),
            Aux::Decl(id)
            | Aux::Field(id)
            | Aux::Func(id)
            | Aux::CatalogFunc(id)
            | Aux::Variant(id) => enc::el(buf, id),
            Aux::Effects(e) => {
                check_effects(e, &self.ctx.f.name)?;
                enc::el(buf, &hasher.effects(e));
            }
            Aux::Loan(l) | Aux::Edge(l) | Aux::Block(l) => self.key_el(buf, *l),
            Aux::Path(k) => self.path_el(buf, k)?,
            Aux::Op(r) => self.op_el(buf, r),
        }
        enc::end(buf, at);
        Ok(())
    }
}

/// Hashes (or, when tracing, materialises) one `S` list part of `n` elements,
/// each appended framed by `el`. Streaming makes two passes: the first only
/// measures the part length that precedes the elements.
fn list_part<E>(
    sha: Option<&mut sha2::Sha256>,
    buf: &mut Vec<u8>,
    n: usize,
    len_of: Option<&dyn Fn(usize) -> u64>,
    mut el: E,
) -> Result<Option<Vec<u8>>>
where
    E: FnMut(&mut Vec<u8>, usize) -> Result<()>,
{
    use sha2::Digest as _;
    const FLUSH: usize = 1 << 15;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        for i in 0..n {
            el(&mut part, i)?;
        }
        enc::set_count(&mut part, at, n);
        return Ok(Some(part));
    };
    let mut len: u64 = 4;
    for i in 0..n {
        match len_of {
            Some(f) => len += f(i),
            None => {
                buf.clear();
                el(buf, i)?;
                len += buf.len() as u64;
            }
        }
    }
    let n32 = u32::try_from(n).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut written: u64 = 4;
    for i in 0..n {
        el(buf, i)?;
        if buf.len() >= FLUSH {
            written += buf.len() as u64;
            sha.update(&buf[..]);
            buf.clear();
        }
    }
    written += buf.len() as u64;
    sha.update(&buf[..]);
    buf.clear();
    if written != len {
        // The arithmetic length disagrees with the encoding: never return a digest.
        return Err(Error::new(
            code::MODEL,
            "internal error: identity list length mismatch",
        ));
    }
    Ok(None)
}

/// [`list_part`] over the items of an iterator that `items` makes afresh
/// for each pass; `len_of` gives each element's framed length.
///
/// With `tail = (k, bytes)`, only the first `k` elements are encoded here;
/// `bytes()` returns the encoding of the rest (made by another thread),
/// hashed in their place.
fn list_part_iter<T, I, E>(
    sha: Option<&mut sha2::Sha256>,
    buf: &mut Vec<u8>,
    items: impl Fn() -> I,
    len_of: impl Fn(&T) -> u64,
    mut el: E,
    tail: Option<(usize, &mut TailBytes<'_>)>,
) -> Result<Option<Vec<u8>>>
where
    I: Iterator<Item = T>,
    E: FnMut(&mut Vec<u8>, T) -> Result<()>,
{
    use sha2::Digest as _;
    const FLUSH: usize = 1 << 15;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        let mut n = 0usize;
        for item in items() {
            el(&mut part, item)?;
            n += 1;
        }
        enc::set_count(&mut part, at, n);
        return Ok(Some(part));
    };
    let (mut len, mut n) = (4u64, 0usize);
    for item in items() {
        len += len_of(&item);
        n += 1;
    }
    let n32 = u32::try_from(n).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut written: u64 = 4;
    let here = tail.as_ref().map_or(n, |t| t.0);
    for item in items().take(here) {
        el(buf, item)?;
        if buf.len() >= FLUSH {
            written += buf.len() as u64;
            sha.update(&buf[..]);
            buf.clear();
        }
    }
    written += buf.len() as u64;
    sha.update(&buf[..]);
    buf.clear();
    if let Some((_, bytes)) = tail {
        let rest = bytes()?;
        written += rest.len() as u64;
        sha.update(&rest);
    }
    if written != len {
        // The arithmetic length disagrees with the encoding: never return a digest.
        return Err(Error::new(
            code::MODEL,
            "internal error: identity list length mismatch",
        ));
    }
    Ok(None)
}

/// Returns the encoding of a body's shared operations (made elsewhere).
pub(crate) type TailBytes<'t> = dyn FnMut() -> Result<Vec<u8>> + 't;

/// How [`body_digest`] shares a body's operation list with another thread.
pub(crate) enum Split<'t> {
    /// Everything here.
    None,
    /// Encode and hash the first `k` operations here; the closure returns
    /// the encoding of the rest, made elsewhere with [`Split::Tail`].
    Head(usize, &'t mut dyn FnMut() -> Result<Vec<u8>>),
    /// Only encode operations `k..` into the buffer (no digest).
    Tail(usize, &'t mut Vec<u8>),
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn body_digest(
    hasher: &mut Hasher,
    d: &Declaration,
    f: &Function,
    sig: &Id,
    params: &[Id],
    locals: &[Id],
    owner: &Id,
    fields: &FastMap<Id, FieldInfo>,
    m: &Module,
    split: Split<'_>,
) -> Result<Id> {
    use sha2::Digest as _;
    let ctx = FnCtx {
        sig: *sig,
        f,
        params,
        locals,
        receiver_type: receiver_type(owner, f.receiver),
        flow_index: BTreeMap::new(),
    };
    let _ = (&ctx.receiver_type, &ctx.flow_index);
    let be = BodyEnc::new(&ctx);
    let border = block_order(f)?;
    let eorder = edge_order(f)?;
    let index = FnIndex::new(f);
    let lorder = loan_order(f)?;
    let porder = path_order(sig, f, params, locals)?;
    let lorder_locals = local_order(f)?;
    // Path facts need the flow-op base of each block (temporary ordinals).
    let mut path_facts_v = Vec::with_capacity(porder.len());
    for &pi in &porder {
        path_facts_v.push(path_facts(f, &f.body.paths[pi].key, fields, m)?);
    }
    // The body operations in canonical order (flow, then recipes), as an
    // iterator made twice (length pass, then encoding) instead of a
    // collected list: that list was megabytes of fresh pages per decode.
    let ops = || {
        border
            .iter()
            .flat_map(|&block_index| {
                let b = &f.body.blocks[block_index];
                b.ops.iter().enumerate().map(move |(o, op)| {
                    (
                        OpRef::Flow {
                            block: b.id,
                            ordinal: o as u32,
                        },
                        op,
                    )
                })
            })
            .chain(eorder.iter().flat_map(|&edge_index| {
                let e = &f.body.edges[edge_index];
                e.drops.iter().enumerate().map(move |(o, op)| {
                    (
                        OpRef::Recipe {
                            edge: e.id,
                            ordinal: o as u32,
                        },
                        op,
                    )
                })
            }))
    };
    // The type-instance ID of a body operand, without cloning its type; an
    // unresolved operand gets `FnIndex::operand_type`'s error.
    // Block and edge IDs are dense (checked by `block_order`, `edge_order`),
    // so the canonical order is also the index by ID.
    let (block_at, edge_at) = (&border, &eorder);
    let op_at = |r: &OpRef| -> Option<&Op> {
        match *r {
            OpRef::Flow { block, ordinal } => f
                .body
                .blocks
                .get(*block_at.get(block as usize)?)?
                .ops
                .get(ordinal as usize),
            OpRef::Recipe { edge, ordinal } => f
                .body
                .edges
                .get(*edge_at.get(edge as usize)?)?
                .drops
                .get(ordinal as usize),
        }
    };
    let operand_type_id = |hasher: &mut Hasher, o: &Operand| -> Result<Option<Id>> {
        let t: Option<&Type> = match o {
            Operand::Value(r) => op_at(r).and_then(|op| op.result.as_ref()),
            Operand::Place(k) => index.path(k).map(|p| &p.ty),
            Operand::Const(c) => return Ok(Some(hasher.type_id(&Type::Scalar(c.kind)))),
            Operand::Block(_) => return Ok(None),
        };
        match t {
            Some(t) => Ok(Some(hasher.type_id(t))),
            None => Err(index
                .operand_type(o)
                .err()
                .unwrap_or_else(|| Error::new(code::REF, "unresolved body operand"))),
        }
    };
    let tracing = hasher.trace.is_some();
    // One framed body-operation element.
    let op_enc = |hasher: &mut Hasher, b: &mut Vec<u8>, (r, op): (OpRef, &Op)| -> Result<()> {
        let r = &r;
        if tracing {
            // Record the operands' identities before the result's, in use order.
            for o in &op.operands {
                operand_type_id(hasher, o)?;
                if let Operand::Const(c) = o {
                    hasher.constant(c)?;
                }
            }
        }
        let at = enc::begin(b);
        b.extend_from_slice(&7u32.to_le_bytes());
        be.op_el(b, r);
        enc::el_u32(b, op.tag);
        match &op.result {
            Some(t) => enc::el_opt(b, Some(&hasher.type_id(t))),
            None => enc::el_opt(b, None),
        }
        let k = enc::begin(b);
        let c = enc::count(b);
        for o in &op.operands {
            let t = operand_type_id(hasher, o)?;
            let oe = enc::begin(b);
            b.extend_from_slice(&3u32.to_le_bytes());
            match o {
                Operand::Value(r) => {
                    enc::el_u32(b, 0);
                    be.op_el(b, r);
                }
                Operand::Place(k) => {
                    enc::el_u32(b, 1);
                    be.path_el(b, k)?;
                }
                Operand::Const(c) => {
                    enc::el_u32(b, 2);
                    let id = match hasher.constants.get(c).copied() {
                        Some(id) if tracing => id,
                        _ => hasher.constant(c)?,
                    };
                    enc::el(b, &id);
                }
                Operand::Block(blk) => {
                    enc::el_u32(b, 3);
                    be.key_el(b, *blk);
                }
            }
            enc::el_opt(b, t.as_ref().map(|t| &t[..]));
            enc::end(b, oe);
        }
        enc::set_count(b, c, op.operands.len());
        enc::end(b, k);
        be.aux_el(hasher, b, &op.aux0)?;
        be.aux_el(hasher, b, &op.aux1)?;
        enc::el_u32(b, 0);
        enc::end(b, at);
        Ok(())
    };
    let (head, tail_out) = match split {
        Split::None => (None, None),
        Split::Head(k, bytes) => (Some((k, bytes)), None),
        Split::Tail(k, out) => (None, Some((k, out))),
    };
    if let Some((k, out)) = tail_out {
        // Another thread hashes this body: encode its operations from `k` on
        // (into a buffer of the exact size: growing it copied megabytes).
        let len: u64 = ops().skip(k).map(|(_, op)| op_el_len(op)).sum();
        out.reserve(usize::try_from(len).unwrap_or(0));
        for item in ops().skip(k) {
            op_enc(hasher, out, item)?;
        }
        return Ok([0; 32]);
    }
    let mut sha = sha2::Sha256::new();
    if !tracing {
        sha.update(domain::FUNCTION_BODY.as_bytes());
        sha.update([0u8]);
        sha.update(32u64.to_le_bytes());
        sha.update(sig);
    }
    let mut buf = Vec::with_capacity(1 << 16);
    let mut parts: Vec<Vec<u8>> = vec![sig.to_vec()];
    macro_rules! part {
        ($n:expr, len $len:expr, $el:expr) => {{
            let p = list_part(
                (!tracing).then_some(&mut sha),
                &mut buf,
                $n,
                Some($len),
                $el,
            )?;
            if let Some(p) = p {
                parts.push(p);
            }
        }};
        ($n:expr, $el:expr) => {{
            let p = list_part((!tracing).then_some(&mut sha), &mut buf, $n, None, $el)?;
            if let Some(p) = p {
                parts.push(p);
            }
        }};
    }
    // Local IDs.
    part!(lorder_locals.len(), |b: &mut Vec<u8>, i: usize| {
        enc::el(b, &locals[lorder_locals[i]]);
        Ok(())
    });
    // Blocks: (block key, entry flag, flow op keys).
    let block_len = |i: usize| 100 + 140 * f.body.blocks[border[i]].ops.len() as u64;
    part!(
        border.len(),
        len & block_len,
        |b: &mut Vec<u8>, i: usize| {
            let blk = &f.body.blocks[border[i]];
            let at = enc::begin(b);
            b.extend_from_slice(&3u32.to_le_bytes());
            be.key_el(b, blk.id);
            enc::el_u32(b, u32::from(blk.id == 0));
            let k = enc::begin(b);
            let c = enc::count(b);
            for o in 0..blk.ops.len() as u32 {
                be.op_el(
                    b,
                    &OpRef::Flow {
                        block: blk.id,
                        ordinal: o,
                    },
                );
            }
            enc::set_count(b, c, blk.ops.len());
            enc::end(b, k);
            enc::end(b, at);
            Ok(())
        }
    );
    // Owned paths.
    part!(porder.len(), |b: &mut Vec<u8>, i: usize| {
        let p = &f.body.paths[porder[i]];
        let (ordinal, state) = path_facts_v[i];
        let at = enc::begin(b);
        b.extend_from_slice(&5u32.to_le_bytes());
        be.path_el(b, &p.key)?;
        if p.key.fields.is_empty() {
            enc::el_opt(b, None);
        } else {
            let mut pk = p.key.clone();
            pk.fields.pop();
            let o = enc::begin(b);
            b.push(1);
            be.path_content(b, &pk)?;
            enc::end(b, o);
        }
        enc::el(b, &hasher.type_id(&p.ty));
        enc::el_u32(b, ordinal);
        enc::el_u32(b, state.tag());
        enc::end(b, at);
        Ok(())
    });
    // Loans.
    part!(lorder.len(), |b: &mut Vec<u8>, i: usize| {
        let l = &f.body.loans[lorder[i]];
        let at = enc::begin(b);
        b.extend_from_slice(&7u32.to_le_bytes());
        be.key_el(b, l.id);
        enc::el_u32(b, l.kind.tag());
        be.path_el(b, &l.origin)?;
        opt_with(b, l.parent, |b, p| be.key_content(b, p));
        enc::el(b, &hasher.type_id(&l.borrowed));
        opt_with(b, l.creation.as_ref(), |b, r| be.op_content(b, r));
        opt_with(b, l.last_use.as_ref(), |b, r| be.op_content(b, r));
        enc::end(b, at);
        Ok(())
    });
    // Cleanup edges.
    part!(eorder.len(), |b: &mut Vec<u8>, i: usize| {
        let e = &f.body.edges[eorder[i]];
        let at = enc::begin(b);
        b.extend_from_slice(&5u32.to_le_bytes());
        be.key_el(b, e.id);
        be.key_el(b, e.source);
        opt_with(b, e.successor, |b, s| be.key_content(b, s));
        enc::el_u32(b, e.kind.tag());
        let k = enc::begin(b);
        let c = enc::count(b);
        for o in 0..e.drops.len() as u32 {
            be.op_el(
                b,
                &OpRef::Recipe {
                    edge: e.id,
                    ordinal: o,
                },
            );
        }
        enc::set_count(b, c, e.drops.len());
        enc::end(b, k);
        enc::end(b, at);
        Ok(())
    });
    // Body operations.
    let tail_fn = head.filter(|_| !tracing);
    let p = list_part_iter(
        (!tracing).then_some(&mut sha),
        &mut buf,
        ops,
        |(_, op): &(OpRef, &Op)| op_el_len(op),
        |b: &mut Vec<u8>, item: (OpRef, &Op)| op_enc(hasher, b, item),
        tail_fn,
    )?;
    if let Some(p) = p {
        parts.push(p);
    }
    if tracing {
        return Ok(hasher.hash(
            || format!("body {}.{}", d.name, f.name),
            domain::FUNCTION_BODY,
            parts,
        ));
    }
    Ok(sha.finalize().into())
}

/// Length of an owned-path key's content (see `BodyEnc::path_content`).
fn path_content_len(k: &PathKey) -> u64 {
    let ident = match k.root {
        Root::Receiver => 12,
        Root::Param(_) | Root::Local(_) => 40,
        Root::Temp(_) => 140,
    };
    4 + 40 + 12 + ident + 12 + 40 * k.fields.len() as u64
}

/// Length of `F(logical auxiliary)` (see `BodyEnc::aux_el`).
fn aux_el_len(a: &Aux) -> u64 {
    24 + match a {
        Aux::None => 8,
        Aux::Lit(_) => 12,
        Aux::Type(_)
        | Aux::Decl(_)
        | Aux::Field(_)
        | Aux::Func(_)
        | Aux::CatalogFunc(_)
        | Aux::Variant(_)
        | Aux::Effects(_) => 40,
        Aux::Loan(_) | Aux::Edge(_) | Aux::Block(_) => 64,
        Aux::Path(k) => 8 + path_content_len(k),
        Aux::Op(_) => 140,
    }
}

/// Length of one framed body-operation element, computed without encoding
/// it (checked against the encoding by `list_part`).
fn op_el_len(op: &Op) -> u64 {
    let operands: u64 = op
        .operands
        .iter()
        .map(|o| {
            24 + match o {
                Operand::Value(_) => 140 + 41,
                Operand::Place(k) => 8 + path_content_len(k) + 41,
                Operand::Const(_) => 40 + 41,
                Operand::Block(_) => 64 + 9,
            }
        })
        .sum();
    8 + 4
        + 140
        + 12
        + if op.result.is_some() { 41 } else { 9 }
        + 12
        + operands
        + aux_el_len(&op.aux0)
        + aux_el_len(&op.aux1)
        + 12
}

/// `F(optional)` whose present value's content is appended by `content`.
fn opt_with<T>(b: &mut Vec<u8>, v: Option<T>, content: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        None => enc::el_opt(b, None),
        Some(x) => {
            let o = enc::begin(b);
            b.push(1);
            content(b, x);
            enc::end(b, o);
        }
    }
}
