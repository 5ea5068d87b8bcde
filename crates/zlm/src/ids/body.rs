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
    function: &Function,
    key: &PathKey,
    fields: &FastMap<Id, FieldInfo>,
    module: &Module,
) -> Result<(u32, EntryState)> {
    let state = match key.root {
        Root::Receiver | Root::Param(_) => EntryState::Initialized,
        Root::Local(_) | Root::Temp(_) => EntryState::Uninitialized,
    };
    let ordinal = if let Some(last) = key.fields.last() {
        let info = fields.get(last).ok_or_else(|| {
            Error::new(
                code::REF,
                format!(
                    "{}: owned path names a field that is not a local declaration field",
                    function.name
                ),
            )
        })?;
        let decl = &module.declarations[info.decl];
        match info.variant {
            None => decl.fields[info.index].ordinal,
            Some(variant_index) => decl.variants[variant_index].fields[info.index].ordinal,
        }
    } else {
        match &key.root {
            Root::Receiver => 0,
            Root::Param(param) => match function.receiver {
                ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned => param + 1,
                _ => *param,
            },
            Root::Local(local) => *local,
            Root::Temp(OpRef::Flow { block, ordinal }) => {
                let mut temp_ordinal = 0u32;
                for block_index in block_order(function)? {
                    let flow_block = &function.body.blocks[block_index];
                    if flow_block.id == *block {
                        temp_ordinal += *ordinal;
                        break;
                    }
                    temp_ordinal += flow_block.ops.len() as u32;
                }
                temp_ordinal
            }
            Root::Temp(OpRef::Recipe { .. }) => {
                return Err(Error::new(
                    code::SHAPE,
                    format!(
                        "{}: a cleanup recipe cannot produce a temporary",
                        function.name
                    ),
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
        let len = (buf.len() - at - 8) as u64;
        buf[at..at + 8].copy_from_slice(&len.to_le_bytes());
    }
    /// Starts the count of an `S` list; returns its position.
    #[inline]
    pub fn count(buf: &mut Vec<u8>) -> usize {
        let at = buf.len();
        buf.extend_from_slice(&[0u8; 4]);
        at
    }
    /// Writes the element count `count` at `at`.
    #[inline]
    pub fn set_count(buf: &mut [u8], at: usize, count: usize) {
        buf[at..at + 4].copy_from_slice(&(count as u32).to_le_bytes());
    }
    /// `F(bytes)`.
    #[inline]
    pub fn element(buf: &mut Vec<u8>, bytes: &[u8]) {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    }
    /// `F(u32le(v))`.
    #[inline]
    pub fn el_u32(buf: &mut Vec<u8>, value: u32) {
        buf.extend_from_slice(&4u64.to_le_bytes());
        buf.extend_from_slice(&value.to_le_bytes());
    }
    /// `F(optional)` of raw bytes.
    #[inline]
    pub fn el_opt(buf: &mut Vec<u8>, value: Option<&[u8]>) {
        match value {
            None => buf.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0]),
            Some(bytes) => {
                buf.extend_from_slice(&(bytes.len() as u64 + 1).to_le_bytes());
                buf.push(1);
                buf.extend_from_slice(bytes);
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
    fn op_el(&self, buf: &mut Vec<u8>, op_ref: &OpRef) {
        self.op_at(buf, op_ref, 0);
    }
    #[inline]
    fn op_content(&self, buf: &mut Vec<u8>, op_ref: &OpRef) {
        self.op_at(buf, op_ref, 8);
    }
    #[inline]
    fn op_at(&self, buf: &mut Vec<u8>, op_ref: &OpRef, from: usize) {
        let (kind, owner, ordinal) = match op_ref {
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
    fn path_el(&self, buf: &mut Vec<u8>, key: &PathKey) -> Result<()> {
        let at = enc::begin(buf);
        self.path_content(buf, key)?;
        enc::end(buf, at);
        Ok(())
    }
    /// Owned-path key content `S(sig, root kind, root identity, S(field IDs))`.
    fn path_content(&self, buf: &mut Vec<u8>, key: &PathKey) -> Result<()> {
        buf.extend_from_slice(&4u32.to_le_bytes());
        enc::element(buf, &self.ctx.sig);
        match &key.root {
            Root::Receiver => {
                enc::el_u32(buf, 0);
                enc::el_u32(buf, 0);
            }
            Root::Param(param) => {
                enc::el_u32(buf, 1);
                enc::element(buf, &self.ctx.param_id(*param)?);
            }
            Root::Local(local) => {
                enc::el_u32(buf, 2);
                enc::element(buf, &self.ctx.local_id(*local)?);
            }
            Root::Temp(op_ref) => {
                enc::el_u32(buf, 3);
                self.op_el(buf, op_ref);
            }
        }
        buf.extend_from_slice(&(4 + 40 * key.fields.len() as u64).to_le_bytes());
        buf.extend_from_slice(&(key.fields.len() as u32).to_le_bytes());
        for field_id in &key.fields {
            enc::element(buf, field_id);
        }
        Ok(())
    }
    /// `F(logical auxiliary)`.
    fn aux_el(&self, hasher: &mut Hasher, buf: &mut Vec<u8>, aux: &Aux) -> Result<()> {
        if let Aux::None = aux {
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
        enc::el_u32(buf, aux.kind());
        match aux {
            Aux::None => enc::element(buf, &[]),
            Aux::Lit(value) => enc::el_u32(buf, *value),
            Aux::Type(ty) => enc::element(buf, &hasher.type_id(ty)),
            Aux::Decl(id)
            | Aux::Field(id)
            | Aux::Func(id)
            | Aux::CatalogFunc(id)
            | Aux::Variant(id) => enc::element(buf, id),
            Aux::Effects(effects) => {
                check_effects(effects, &self.ctx.function.name)?;
                enc::element(buf, &hasher.effects(effects));
            }
            Aux::Loan(dense_id) | Aux::Edge(dense_id) | Aux::Block(dense_id) => {
                self.key_el(buf, *dense_id)
            }
            Aux::Path(key) => self.path_el(buf, key)?,
            Aux::Op(op_ref) => self.op_el(buf, op_ref),
        }
        enc::end(buf, at);
        Ok(())
    }
}

/// Bytes buffered before they are hashed (one flush per this many).
const FLUSH: usize = 1 << 15;

/// Hands an element's bytes to the digest while it is still being encoded:
/// a block's operation keys run to megabytes, which would otherwise grow
/// the buffer to the whole element (fresh pages and copies per decode).
/// Without a digest (the length pass, or materialising the parts when
/// tracing) it keeps every byte.
struct Spill<'s> {
    sha: Option<&'s mut sha2::Sha256>,
    /// Bytes hashed so far (the part's count included).
    written: u64,
}

impl Spill<'_> {
    /// Hashes and clears `buf` once it holds at least [`FLUSH`] bytes.
    #[inline]
    fn spill(&mut self, buf: &mut Vec<u8>) {
        use sha2::Digest as _;
        if buf.len() >= FLUSH
            && let Some(sha) = &mut self.sha
        {
            self.written += buf.len() as u64;
            sha.update(&buf[..]);
            buf.clear();
        }
    }
}

/// Hashes (or, when tracing, materialises) one `S` list part of `count` elements,
/// each appended framed by `encode`. Streaming makes two passes: the first only
/// measures the part length that precedes the elements. `encode` may call
/// [`Spill::spill`] inside a long element, which it must then frame with
/// lengths written up front (the bytes before a spill are gone).
fn list_part<E>(
    sha: Option<&mut sha2::Sha256>,
    buf: &mut Vec<u8>,
    count: usize,
    len_of: Option<&dyn Fn(usize) -> u64>,
    mut encode: E,
) -> Result<Option<Vec<u8>>>
where
    E: FnMut(&mut Vec<u8>, usize, &mut Spill<'_>) -> Result<()>,
{
    use sha2::Digest as _;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        let mut keep = Spill {
            sha: None,
            written: 0,
        };
        for i in 0..count {
            encode(&mut part, i, &mut keep)?;
        }
        enc::set_count(&mut part, at, count);
        return Ok(Some(part));
    };
    let mut len: u64 = 4;
    for i in 0..count {
        match len_of {
            Some(element_len) => len += element_len(i),
            None => {
                buf.clear();
                let mut keep = Spill {
                    sha: None,
                    written: 0,
                };
                encode(buf, i, &mut keep)?;
                len += buf.len() as u64;
            }
        }
    }
    let n32 = u32::try_from(count).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut spill = Spill {
        sha: Some(sha),
        written: 4,
    };
    for i in 0..count {
        encode(buf, i, &mut spill)?;
        spill.spill(buf);
    }
    let mut written = spill.written;
    if let Some(sha) = spill.sha {
        written += buf.len() as u64;
        sha.update(&buf[..]);
    }
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
    mut encode: E,
    tail: Option<(usize, &mut TailBytes<'_>)>,
) -> Result<Option<Vec<u8>>>
where
    I: Iterator<Item = T>,
    E: FnMut(&mut Vec<u8>, T) -> Result<()>,
{
    use sha2::Digest as _;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        let mut count = 0usize;
        for item in items() {
            encode(&mut part, item)?;
            count += 1;
        }
        enc::set_count(&mut part, at, count);
        return Ok(Some(part));
    };
    let (mut len, mut count) = (4u64, 0usize);
    for item in items() {
        len += len_of(&item);
        count += 1;
    }
    let n32 = u32::try_from(count).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut written: u64 = 4;
    let here = tail.as_ref().map_or(count, |t| t.0);
    for item in items().take(here) {
        encode(buf, item)?;
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
    decl: &Declaration,
    function: &Function,
    sig: &Id,
    params: &[Id],
    locals: &[Id],
    owner: &Id,
    fields: &FastMap<Id, FieldInfo>,
    module: &Module,
    split: Split<'_>,
) -> Result<Id> {
    use sha2::Digest as _;
    let ctx = FnCtx {
        sig: *sig,
        function,
        params,
        locals,
        receiver_type: receiver_type(owner, function.receiver),
        flow_index: BTreeMap::new(),
    };
    let _ = (&ctx.receiver_type, &ctx.flow_index);
    let body_enc = BodyEnc::new(&ctx);
    let border = block_order(function)?;
    let eorder = edge_order(function)?;
    let index = FnIndex::new(function);
    let lorder = loan_order(function)?;
    let porder = path_order(sig, function, params, locals)?;
    let lorder_locals = local_order(function)?;
    // Path facts need the flow-op base of each block (temporary ordinals).
    let mut path_facts_v = Vec::with_capacity(porder.len());
    for &path_index in &porder {
        path_facts_v.push(path_facts(
            function,
            &function.body.paths[path_index].key,
            fields,
            module,
        )?);
    }
    // The body operations in canonical order (flow, then recipes), as an
    // iterator made twice (length pass, then encoding) instead of a
    // collected list: that list was megabytes of fresh pages per decode.
    let ops = || {
        border
            .iter()
            .flat_map(|&block_index| {
                let block = &function.body.blocks[block_index];
                block.ops.iter().enumerate().map(move |(ordinal, op)| {
                    (
                        OpRef::Flow {
                            block: block.id,
                            ordinal: ordinal as u32,
                        },
                        op,
                    )
                })
            })
            .chain(eorder.iter().flat_map(|&edge_index| {
                let edge = &function.body.edges[edge_index];
                edge.drops.iter().enumerate().map(move |(ordinal, op)| {
                    (
                        OpRef::Recipe {
                            edge: edge.id,
                            ordinal: ordinal as u32,
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
    let op_at = |op_ref: &OpRef| -> Option<&Op> {
        match *op_ref {
            OpRef::Flow { block, ordinal } => function
                .body
                .blocks
                .get(*block_at.get(block as usize)?)?
                .ops
                .get(ordinal as usize),
            OpRef::Recipe { edge, ordinal } => function
                .body
                .edges
                .get(*edge_at.get(edge as usize)?)?
                .drops
                .get(ordinal as usize),
        }
    };
    let operand_type_id = |hasher: &mut Hasher, operand: &Operand| -> Result<Option<Id>> {
        let ty: Option<&Type> = match operand {
            Operand::Value(op_ref) => op_at(op_ref).and_then(|op| op.result.as_ref()),
            Operand::Place(key) => index.path(key).map(|p| &p.ty),
            Operand::Const(constant) => {
                return Ok(Some(hasher.type_id(&Type::Scalar(constant.kind))));
            }
            Operand::Block(_) => return Ok(None),
        };
        match ty {
            Some(ty) => Ok(Some(hasher.type_id(ty))),
            None => Err(index
                .operand_type(operand)
                .err()
                .unwrap_or_else(|| Error::new(code::REF, "unresolved body operand"))),
        }
    };
    let tracing = hasher.trace.is_some();
    // One framed body-operation element.
    let op_enc =
        |hasher: &mut Hasher, encoded: &mut Vec<u8>, (op_ref, op): (OpRef, &Op)| -> Result<()> {
            // An operand that does not resolve is reported at the operation using it.
            let at_this_op = |e: Error| match &e.site {
                Some(site) if site.op.is_some() => e,
                _ => e.at_body_op(&function.name, op_ref),
            };
            let operand_type_id = |hasher: &mut Hasher, operand: &Operand| {
                operand_type_id(hasher, operand).map_err(at_this_op)
            };
            let op_ref = &op_ref;
            if tracing {
                // Record the operands' identities before the result's, in use order.
                for operand in &op.operands {
                    operand_type_id(hasher, operand)?;
                    if let Operand::Const(constant) = operand {
                        hasher.constant(constant)?;
                    }
                }
            }
            let at = enc::begin(encoded);
            encoded.extend_from_slice(&7u32.to_le_bytes());
            body_enc.op_el(encoded, op_ref);
            enc::el_u32(encoded, op.tag);
            match &op.result {
                Some(result_ty) => enc::el_opt(encoded, Some(&hasher.type_id(result_ty))),
                None => enc::el_opt(encoded, None),
            }
            let operands_at = enc::begin(encoded);
            let count_at = enc::count(encoded);
            for operand in &op.operands {
                let type_id = operand_type_id(hasher, operand)?;
                let operand_at = enc::begin(encoded);
                encoded.extend_from_slice(&3u32.to_le_bytes());
                match operand {
                    Operand::Value(op_ref) => {
                        enc::el_u32(encoded, 0);
                        body_enc.op_el(encoded, op_ref);
                    }
                    Operand::Place(key) => {
                        enc::el_u32(encoded, 1);
                        body_enc.path_el(encoded, key)?;
                    }
                    Operand::Const(constant) => {
                        enc::el_u32(encoded, 2);
                        // Tracing recorded this use above; otherwise one
                        // memo lookup (inside `Hasher::constant`), not two.
                        let id = match tracing {
                            true => match hasher.constants.get(constant).copied() {
                                Some(id) => id,
                                None => hasher.constant(constant)?,
                            },
                            false => hasher.constant(constant)?,
                        };
                        enc::element(encoded, &id);
                    }
                    Operand::Block(blk) => {
                        enc::el_u32(encoded, 3);
                        body_enc.key_el(encoded, *blk);
                    }
                }
                enc::el_opt(encoded, type_id.as_ref().map(|type_id| &type_id[..]));
                enc::end(encoded, operand_at);
            }
            enc::set_count(encoded, count_at, op.operands.len());
            enc::end(encoded, operands_at);
            body_enc.aux_el(hasher, encoded, &op.aux0)?;
            body_enc.aux_el(hasher, encoded, &op.aux1)?;
            enc::el_u32(encoded, 0);
            enc::end(encoded, at);
            Ok(())
        };
    let (head, tail_out) = match split {
        Split::None => (None, None),
        Split::Head(first_tail_op, bytes) => (Some((first_tail_op, bytes)), None),
        Split::Tail(first_tail_op, out) => (None, Some((first_tail_op, out))),
    };
    if let Some((first_tail_op, out)) = tail_out {
        // Another thread hashes this body: encode its operations from `k` on
        // (into a buffer of the exact size: growing it copied megabytes).
        let len: u64 = ops().skip(first_tail_op).map(|(_, op)| op_el_len(op)).sum();
        out.reserve(usize::try_from(len).unwrap_or(0));
        for item in ops().skip(first_tail_op) {
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
            let encoded_part = list_part(
                (!tracing).then_some(&mut sha),
                &mut buf,
                $n,
                Some($len),
                $el,
            )?;
            if let Some(encoded_part) = encoded_part {
                parts.push(encoded_part);
            }
        }};
        ($n:expr, $el:expr) => {{
            let element = &mut $el;
            let encoded_part = list_part(
                (!tracing).then_some(&mut sha),
                &mut buf,
                $n,
                None,
                |encoded: &mut Vec<u8>, i: usize, _: &mut Spill<'_>| element(encoded, i),
            )?;
            if let Some(encoded_part) = encoded_part {
                parts.push(encoded_part);
            }
        }};
    }
    // Local IDs.
    part!(lorder_locals.len(), |encoded: &mut Vec<u8>, i: usize| {
        enc::element(encoded, &locals[lorder_locals[i]]);
        Ok(())
    });
    // Blocks: (block key, entry flag, flow op keys). The lengths are
    // written first, so a long block's keys are hashed as they are made.
    let block_len = |i: usize| 100 + 140 * function.body.blocks[border[i]].ops.len() as u64;
    part!(
        border.len(),
        len & block_len,
        |encoded: &mut Vec<u8>, i: usize, spill: &mut Spill<'_>| {
            let blk = &function.body.blocks[border[i]];
            let op_count = u32::try_from(blk.ops.len())
                .map_err(|_| Error::new(code::LIMIT, "block too long"))?;
            // F(S(key, flag, F(S(op keys)))): 4 + 64 + 12 + 8 + 4 + 140 per key.
            let keys_len = 4 + 140 * u64::from(op_count);
            encoded.extend_from_slice(&(88 + keys_len).to_le_bytes());
            encoded.extend_from_slice(&3u32.to_le_bytes());
            body_enc.key_el(encoded, blk.id);
            enc::el_u32(encoded, u32::from(blk.id == 0));
            encoded.extend_from_slice(&keys_len.to_le_bytes());
            encoded.extend_from_slice(&op_count.to_le_bytes());
            for ordinal in 0..op_count {
                body_enc.op_el(
                    encoded,
                    &OpRef::Flow {
                        block: blk.id,
                        ordinal,
                    },
                );
                spill.spill(encoded);
            }
            Ok(())
        }
    );
    // Owned paths.
    part!(porder.len(), |encoded: &mut Vec<u8>, i: usize| {
        let path = &function.body.paths[porder[i]];
        let (ordinal, state) = path_facts_v[i];
        let at = enc::begin(encoded);
        encoded.extend_from_slice(&5u32.to_le_bytes());
        body_enc.path_el(encoded, &path.key)?;
        if path.key.fields.is_empty() {
            enc::el_opt(encoded, None);
        } else {
            let mut parent_key = path.key.clone();
            parent_key.fields.pop();
            let parent_at = enc::begin(encoded);
            encoded.push(1);
            body_enc.path_content(encoded, &parent_key)?;
            enc::end(encoded, parent_at);
        }
        enc::element(encoded, &hasher.type_id(&path.ty));
        enc::el_u32(encoded, ordinal);
        enc::el_u32(encoded, state.tag());
        enc::end(encoded, at);
        Ok(())
    });
    // Loans.
    part!(lorder.len(), |encoded: &mut Vec<u8>, i: usize| {
        let loan = &function.body.loans[lorder[i]];
        let at = enc::begin(encoded);
        encoded.extend_from_slice(&7u32.to_le_bytes());
        body_enc.key_el(encoded, loan.id);
        enc::el_u32(encoded, loan.kind.tag());
        body_enc.path_el(encoded, &loan.origin)?;
        opt_with(encoded, loan.parent, |encoded, p| {
            body_enc.key_content(encoded, p)
        });
        enc::element(encoded, &hasher.type_id(&loan.borrowed));
        opt_with(encoded, loan.creation.as_ref(), |encoded, r| {
            body_enc.op_content(encoded, r)
        });
        opt_with(encoded, loan.last_use.as_ref(), |encoded, r| {
            body_enc.op_content(encoded, r)
        });
        enc::end(encoded, at);
        Ok(())
    });
    // Cleanup edges.
    part!(eorder.len(), |encoded: &mut Vec<u8>, i: usize| {
        let edge = &function.body.edges[eorder[i]];
        let at = enc::begin(encoded);
        encoded.extend_from_slice(&5u32.to_le_bytes());
        body_enc.key_el(encoded, edge.id);
        body_enc.key_el(encoded, edge.source);
        opt_with(encoded, edge.successor, |encoded, s| {
            body_enc.key_content(encoded, s)
        });
        enc::el_u32(encoded, edge.kind.tag());
        let ops_at = enc::begin(encoded);
        let count_at = enc::count(encoded);
        for ordinal in 0..edge.drops.len() as u32 {
            body_enc.op_el(
                encoded,
                &OpRef::Recipe {
                    edge: edge.id,
                    ordinal,
                },
            );
        }
        enc::set_count(encoded, count_at, edge.drops.len());
        enc::end(encoded, ops_at);
        enc::end(encoded, at);
        Ok(())
    });
    // Body operations.
    let tail_fn = head.filter(|_| !tracing);
    let encoded_part = list_part_iter(
        (!tracing).then_some(&mut sha),
        &mut buf,
        ops,
        |(_, op): &(OpRef, &Op)| op_el_len(op),
        |encoded: &mut Vec<u8>, item: (OpRef, &Op)| op_enc(hasher, encoded, item),
        tail_fn,
    )?;
    if let Some(encoded_part) = encoded_part {
        parts.push(encoded_part);
    }
    if tracing {
        return Ok(hasher.hash(
            || format!("body {}.{}", decl.name, function.name),
            domain::FUNCTION_BODY,
            parts,
        ));
    }
    Ok(sha.finalize().into())
}

/// Length of an owned-path key's content (see `BodyEnc::path_content`).
fn path_content_len(key: &PathKey) -> u64 {
    let ident = match key.root {
        Root::Receiver => 12,
        Root::Param(_) | Root::Local(_) => 40,
        Root::Temp(_) => 140,
    };
    4 + 40 + 12 + ident + 12 + 40 * key.fields.len() as u64
}

/// Length of `F(logical auxiliary)` (see `BodyEnc::aux_el`).
fn aux_el_len(aux: &Aux) -> u64 {
    24 + match aux {
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
        Aux::Path(key) => 8 + path_content_len(key),
        Aux::Op(_) => 140,
    }
}

/// Length of one framed body-operation element, computed without encoding
/// it (checked against the encoding by `list_part`).
fn op_el_len(op: &Op) -> u64 {
    let operands: u64 = op
        .operands
        .iter()
        .map(|operand| {
            24 + match operand {
                Operand::Value(_) => 140 + 41,
                Operand::Place(key) => 8 + path_content_len(key) + 41,
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
fn opt_with<T>(buf: &mut Vec<u8>, value: Option<T>, content: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        None => enc::el_opt(buf, None),
        Some(present) => {
            let at = enc::begin(buf);
            buf.push(1);
            content(buf, present);
            enc::end(buf, at);
        }
    }
}
