//! The independent decoder and structural validator.
//!
//! Nothing in the input is trusted: section starts are derived from the
//! header counts with checked arithmetic and must end exactly at the input
//! length before any table is read or allocated; every reference and range
//! is resolved against its table and owner; the logical projection is
//! reconstructed; every identity is recomputed; and the bytes must equal the
//! canonical encoding of that projection, which rejects noncanonical order,
//! orphan records and pool entries, wrong derived fields and reserved bits.

use crate::catalog;
use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::Id;
use crate::ids;
use crate::layout::{HEADER_BYTES, MAGIC, MAJOR, MINOR, NONE, Section, header, locate};
use crate::model::*;

pub use crate::check::Checked;

struct Reader<'a> {
    bytes: &'a [u8],
    starts: Vec<(Section, u64, u64)>,
    /// Section start offsets, indexed by `Section as usize`.
    start_of: [u64; 23],
    /// Record counts (byte lengths for the pools), indexed by `Section as usize`.
    counts: [u64; 23],
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn rd64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// One fixed-size record.
struct Rec<'a> {
    bytes: &'a [u8],
    offset: u64,
}

impl Rec<'_> {
    fn id(&self, at: usize) -> Id {
        let mut id = [0u8; 32];
        id.copy_from_slice(&self.bytes[at..at + 32]);
        id
    }
    /// The `n`th u32 word after a leading `skip` bytes.
    fn w(&self, skip: usize, n: usize) -> u32 {
        rd32(self.bytes, skip + 4 * n)
    }
    fn at(&self, skip: usize, n: usize) -> u64 {
        self.offset + (skip + 4 * n) as u64
    }
}

impl<'a> Reader<'a> {
    #[inline]
    fn start(&self, s: Section) -> u64 {
        self.start_of[s as usize]
    }
    #[inline]
    fn count(&self, s: Section) -> u64 {
        self.counts[s as usize]
    }
    fn rec(&self, s: Section, i: u64) -> Rec<'a> {
        let size = s.record_size();
        let off = self.start(s) + i * size;
        Rec {
            bytes: &self.bytes[off as usize..(off + size) as usize],
            offset: off,
        }
    }
    /// Checks `index < count(s)`.
    fn index(&self, s: Section, index: u32, at: u64, what: &str) -> Result<u64> {
        if u64::from(index) < self.count(s) {
            Ok(u64::from(index))
        } else {
            Err(Error::at(
                code::REF,
                at,
                format!(
                    "{what} {index} is outside the {} table ({} entries)",
                    s.name(),
                    self.count(s)
                ),
            ))
        }
    }
    /// Checks a range `start, count` against table `s`.
    fn range(
        &self,
        s: Section,
        start: u32,
        count: u32,
        at: u64,
        what: &str,
    ) -> Result<std::ops::Range<u64>> {
        let end = u64::from(start) + u64::from(count);
        if end > self.count(s) {
            return Err(Error::at(
                code::REF,
                at,
                format!(
                    "{what} range {start}+{count} exceeds the {} table ({} entries)",
                    s.name(),
                    self.count(s)
                ),
            ));
        }
        Ok(u64::from(start)..end)
    }
    fn string(&self, off: u32, len: u32, at: u64, what: &str) -> Result<String> {
        let pool = self.count(Section::Strings);
        let end = u64::from(off) + u64::from(len);
        if end > pool || len == 0 {
            return Err(Error::at(
                code::STRING,
                at,
                format!(
                    "{what} string slice {off}+{len} is not a nonempty slice of the {pool}-byte pool"
                ),
            ));
        }
        let start = self.start(Section::Strings);
        let b = &self.bytes[(start + u64::from(off)) as usize..(start + end) as usize];
        String::from_utf8(b.to_vec())
            .map_err(|_| Error::at(code::STRING, at, format!("{what} is not valid UTF-8")))
    }
}

/// Reads and checks the header and derives every section start.
fn sections(bytes: &[u8]) -> Result<Reader<'_>> {
    if bytes.len() < HEADER_BYTES {
        return Err(Error::at(
            code::LENGTH,
            bytes.len() as u64,
            format!("{} bytes is shorter than the 256-byte header", bytes.len()),
        ));
    }
    if &bytes[0..4] != MAGIC {
        return Err(Error::at(code::HEADER, 0, "magic is not ZLM1"));
    }
    let major = u16::from_le_bytes([bytes[4], bytes[5]]);
    let minor = u16::from_le_bytes([bytes[6], bytes[7]]);
    if major != MAJOR || minor != MINOR {
        return Err(Error::at(
            code::SCHEMA,
            4,
            format!(
                "unsupported schema {major}.{minor}: this reader implements only schema 1.9 (docs/zlm/format.md)"
            ),
        ));
    }
    if rd32(bytes, header::HEADER_BYTES) != 256 {
        return Err(Error::at(
            code::HEADER,
            header::HEADER_BYTES as u64,
            "header size field is not 256",
        ));
    }
    if rd32(bytes, header::FLAGS) != 0 {
        return Err(Error::at(
            code::HEADER,
            header::FLAGS as u64,
            "header flags are not zero",
        ));
    }
    if let Some(i) = bytes[header::RESERVED..256].iter().position(|&b| b != 0) {
        return Err(Error::at(
            code::HEADER,
            (header::RESERVED + i) as u64,
            "reserved header bytes are not zero",
        ));
    }
    let mut starts = Vec::new();
    let mut counts = [0u64; 23];
    let mut start_of = [0u64; 23];
    let mut off: u64 = HEADER_BYTES as u64;
    for s in Section::ALL {
        let co = s.count_offset();
        let n = match s {
            Section::Strings | Section::ConstantBytes => {
                let n = rd64(bytes, co);
                if n > u64::from(u32::MAX) {
                    return Err(Error::at(
                        code::LENGTH,
                        co as u64,
                        format!("{} byte length {n} exceeds 0xffffffff", s.name()),
                    ));
                }
                n
            }
            _ => {
                let n = rd32(bytes, co);
                if n == NONE {
                    return Err(Error::at(
                        code::LENGTH,
                        co as u64,
                        format!("{} count is NONE", s.name()),
                    ));
                }
                u64::from(n)
            }
        };
        let len = n
            .checked_mul(s.record_size())
            .ok_or_else(|| Error::at(code::LENGTH, co as u64, "section size overflows"))?;
        starts.push((s, off, len));
        counts[s as usize] = n;
        start_of[s as usize] = off;
        off = off
            .checked_add(len)
            .ok_or_else(|| Error::at(code::LENGTH, co as u64, "section offsets overflow"))?;
    }
    let declared = rd64(bytes, header::MODULE_BYTES);
    if declared != off {
        return Err(Error::at(
            code::LENGTH,
            header::MODULE_BYTES as u64,
            format!("module_bytes {declared} differs from the derived end {off}"),
        ));
    }
    if off != bytes.len() as u64 {
        let at = off.min(bytes.len() as u64);
        return Err(Error::at(
            code::LENGTH,
            at,
            if off < bytes.len() as u64 {
                format!(
                    "{} trailing bytes after the derived end {off}",
                    bytes.len() as u64 - off
                )
            } else {
                format!(
                    "input is {} bytes but the header derives {off}",
                    bytes.len()
                )
            },
        ));
    }
    Ok(Reader {
        bytes,
        starts,
        start_of,
        counts,
    })
}

/// Wall-clock time of each decoding phase (see [`decode_profiled`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// Header, section derivation and the checked projection to a model.
    pub structural: std::time::Duration,
    /// Recomputing every logical identity (ids::compute).
    pub identities: std::time::Duration,
    /// Model validation: admitted kinds, per-tag shapes, typing, CFG (validate::check).
    pub model: std::time::Duration,
    /// In-place comparison with the canonical encoding (order, carried IDs, pools).
    pub canonical: std::time::Duration,
    /// The semantic check (zlm::check): ownership, loans, contracts.
    pub semantic: std::time::Duration,
    /// With two threads: the identity work done on the calling thread
    /// (hashing the body constants, encoding its share of the largest body's
    /// operations) before its model, canonical and semantic phases; zero
    /// with one thread.
    pub shared: std::time::Duration,
    /// Threads used (1 or 2).
    pub threads: usize,
}

/// How many threads [`decode_with`] may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Every phase on the calling thread.
    One,
    /// Two threads: the function bodies are hashed on a second thread while
    /// the calling thread validates the model, compares the canonical
    /// encoding and runs the semantic check. Results and errors are the
    /// same as with [`Threads::One`].
    Two,
    /// [`Threads::Two`] when the machine has at least two cores and the
    /// module has at least [`PARALLEL_MIN_OPS`] body operations.
    Auto,
}

/// The body-operation count from which [`Threads::Auto`] uses two threads
/// (below it, starting a thread costs more than it saves).
pub const PARALLEL_MIN_OPS: u64 = 4096;

/// Decodes and fully validates untrusted bytes. Imports are not resolved
/// (no providers are given): the result can be printed and inspected, and
/// [`crate::interp::Interp::new`] refuses it when it imports anything.
pub fn decode(bytes: &[u8]) -> Result<Checked> {
    decode_with(bytes, Threads::Auto).map(|(checked, _)| checked)
}

/// [`decode`] that also resolves every import against `providers` (see
/// [`check_imports`]) right after the projection, so a missing provider or
/// a stale interface digest rejects before the dependent module is checked.
pub fn decode_linked(bytes: &[u8], providers: &[&Checked]) -> Result<Checked> {
    decode_full(bytes, Threads::Auto, Some(providers)).map(|(checked, _)| checked)
}

/// [`decode`], also reporting how long each phase took.
pub fn decode_profiled(bytes: &[u8]) -> Result<(Checked, Phases)> {
    decode_with(bytes, Threads::Auto)
}

/// Writes the canonical bytes of a model and decodes them: the only way
/// from a model built in code or parsed from text to a [`Checked`] module.
pub fn from_model(module: &Module, providers: &[&Checked]) -> Result<Checked> {
    let bytes = crate::write::write(module)?;
    decode_linked(&bytes, providers)
}

/// [`decode`] on the given threads, reporting how long each phase took
/// (with two threads, `identities` is waves 1-11 plus the body thread's own
/// time, overlapped with `shared`, `model`, `canonical` and `semantic` on
/// the calling thread).
pub fn decode_with(bytes: &[u8], threads: Threads) -> Result<(Checked, Phases)> {
    decode_full(bytes, threads, None)
}

fn decode_full(
    bytes: &[u8],
    threads: Threads,
    providers: Option<&[&Checked]>,
) -> Result<(Checked, Phases)> {
    use std::time::Instant;
    let t0 = Instant::now();
    let r = sections(bytes)?;
    let two = match threads {
        Threads::One => false,
        Threads::Two => true,
        Threads::Auto => {
            r.count(Section::Ops) >= PARALLEL_MIN_OPS
                && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        }
    };
    let module = project(&r, two)?;
    if let Some(providers) = providers {
        let pairs: Vec<(&Module, &ids::Identities)> =
            providers.iter().map(|p| (p.module(), p.ids())).collect();
        resolve_imports(&module, &pairs)?;
    }
    let t1 = Instant::now();
    let mut carried = [0u8; 32];
    carried.copy_from_slice(&bytes[header::CONTENT..header::CONTENT + 32]);
    let mut phases = Phases {
        structural: t1 - t0,
        ..Phases::default()
    };
    let ids = if !two {
        let mut pending = ids::prepare(&module, false)?;
        pending
            .hs
            .reserve_constants(r.count(Section::Constants) as usize);
        let (ids, _) = pending.finish(&module, None)?;
        let t2 = Instant::now();
        model_phase(&module, &ids, &r)?;
        let t3 = Instant::now();
        let (mismatch, ids) = crate::write::compare_canonical(&module, ids, bytes, &r.starts)?;
        if let Some(at) = mismatch {
            return Err(mismatch_error(&r, at));
        }
        let t4 = Instant::now();
        // Checked semantics (issue 10): rerun by every decode, never trusted. The
        // identities are the ones recomputed above from the projection (and
        // matched against every carried ID), not the input's.
        crate::check::check_with_ids(&module, &ids)?;
        let t5 = Instant::now();
        phases.identities = t2 - t1;
        phases.model = t3 - t2;
        phases.canonical = t4 - t3;
        phases.semantic = t5 - t4;
        phases.threads = 1;
        ids
    } else {
        let ids = two_threads(&module, &r, bytes, carried, &mut phases)?;
        phases.threads = 2;
        ids
    };
    Ok((
        Checked::new(module, ids, carried, providers.is_some()),
        phases,
    ))
}

/// Model validation (admitted kinds, per-tag shapes, typing, CFG).
fn model_phase(module: &Module, ids: &ids::Identities, r: &Reader) -> Result<()> {
    crate::validate::check(module, ids).map_err(|mut e| {
        // Point a layout cycle at the declaration record (projected in
        // physical order, so the model index is the record index).
        if e.code == code::LAYOUT
            && e.offset.is_none()
            && let Some((di, _)) = crate::validate::layout_cycle(module, ids)
        {
            e.offset = Some(r.start(Section::Decls) + 80 * di as u64);
        }
        e
    })
}

/// The error for the first byte `at` that differs from the canonical encoding.
fn mismatch_error(r: &Reader, at: u64) -> Error {
    let where_ = locate(&r.starts, at);
    let is_id = at >= header::CATALOG as u64 && at < (header::CONTENT + 32) as u64
        || r.starts.iter().any(|&(s, start, len)| {
            at >= start && at < start + len && {
                let rel = (at - start) % s.record_size();
                s.id_fields().iter().any(|&(a, b)| rel >= a && rel < b)
            }
        });
    let (c, what) = if at >= header::CATALOG as u64 && at < (header::CATALOG + 32) as u64 {
        (
            code::CATALOG,
            "the catalog content identity is not that of zerglang.selfhost-intrinsics/1",
        )
    } else if is_id {
        (
            code::ID,
            "a carried identity differs from the recomputed one",
        )
    } else {
        (
            code::NONCANONICAL,
            "bytes differ from the canonical encoding of their logical projection",
        )
    };
    Error::at(c, at, format!("{what} ({where_})"))
}

/// The share of the largest body's operations (the last ones) that the
/// calling thread encodes for the body thread, balancing the two threads'
/// work. Measured on the benchmark module with both cores idle: 0 gives
/// 143 ms, 1/4 137 ms, 3/8 135 ms, 7/16 134 ms, 1/2 138 ms (the calling
/// thread then takes longest); 3/8 keeps the transient encoding smaller
/// at the same speed (≈ 700 bytes per shared operation of that module,
/// 42 MB, 3.3x its artifact).
const SHARED_NUM: usize = 3;
const SHARED_DEN: usize = 8;

/// How the calling thread's phases ended in [`two_threads`].
enum MainOutcome {
    Model(Error),
    Canonical(Error),
    Mismatch(u64),
    Semantic(Error),
    Valid(ids::Identities),
}

/// The two-thread schedule. Waves 1-11 of the identities come first; then
/// a second thread hashes every function body, while this thread runs
/// model validation, the canonical comparison (the carried module content
/// stands in for the recomputed one, which needs the bodies) and the
/// semantic check. The reported error is the one the sequential order reports: an
/// identity error first, then model validation, then the first canonical
/// mismatch (including the module content, now known), then the semantic
/// check.
fn two_threads(
    module: &Module,
    r: &Reader,
    bytes: &[u8],
    carried: Id,
    phases: &mut Phases,
) -> Result<ids::Identities> {
    use std::time::Instant;
    let t1 = Instant::now();
    let mut pending = ids::prepare(module, false)?;
    let provisional = pending.provisional(carried);
    let mut hs = std::mem::replace(&mut pending.hs, ids::Hasher::new(false));
    hs.reserve_constants(r.count(Section::Constants) as usize);
    let t_prepared = Instant::now();
    // The calling thread hashes the body constants first (its canonical
    // comparison needs them) and hands a copy to the body thread, which
    // reaches the operations, where constants appear, only after the block
    // part of the body preimage.
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    hs.receive_constants(rx);
    // The largest body's operations are shared too: this thread encodes the
    // last 3/8 (before its own phases) while the body thread encodes and
    // hashes the rest, then hashes that encoding in its place.
    let share = ids::Pending::largest_body(module)
        .filter(|&(_, n)| n as u64 >= PARALLEL_MIN_OPS)
        .map(|(at, n)| (at, n - n * SHARED_NUM / SHARED_DEN));
    let (tail_tx, tail_rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(1);
    let pending_ref = &pending;
    let hs_ref = &mut hs;
    let (body, main, times) = std::thread::scope(|s| {
        // Without a thread (the OS refused one), the bodies are hashed after
        // the other phases, on this thread.
        let worker = std::thread::Builder::new()
            .spawn_scoped(s, move || {
                let t = Instant::now();
                let bodies = match share {
                    Some((at, k)) => {
                        let mut tail = || {
                            tail_rx.recv().unwrap_or_else(|_| {
                                Err(Error::new(
                                    code::MODEL,
                                    "internal error: the shared body operations were not encoded",
                                ))
                            })
                        };
                        pending_ref.bodies_sharing(hs_ref, module, at, k, &mut tail)
                    }
                    None => pending_ref.bodies(hs_ref, module),
                };
                (bodies, t.elapsed())
            })
            .ok();
        let mut ids = provisional;
        let t_shared = Instant::now();
        let mut constants = ids::Hasher::new(false);
        constants.hash_body_constants(module);
        let _ = tx.send(constants.constant_ids().clone());
        if let Some((at, k)) = share
            && worker.is_some()
        {
            let _ = tail_tx.send(pending_ref.body_tail(&mut constants, module, at, k));
        }
        // The canonical writer needs the body constants too (hashed here;
        // it hashes any still missing itself).
        let mut body_constants = constants.take_constant_ids();
        for (c, id) in std::mem::take(&mut ids.constants) {
            body_constants.entry(c).or_insert(id);
        }
        ids.constants = body_constants;
        let ta = Instant::now();
        let mut times = [std::time::Duration::ZERO; 4];
        times[3] = ta - t_shared;
        let main = 'main: {
            if let Err(e) = model_phase(module, &ids, r) {
                break 'main MainOutcome::Model(e);
            }
            let tb = Instant::now();
            times[0] = tb - ta;
            let ids = match crate::write::compare_canonical(module, ids, bytes, &r.starts) {
                Err(e) => break 'main MainOutcome::Canonical(e),
                Ok((Some(at), _)) => break 'main MainOutcome::Mismatch(at),
                Ok((None, ids)) => ids,
            };
            let tc = Instant::now();
            times[1] = tc - tb;
            let checked = crate::check::check_with_ids(module, &ids);
            times[2] = tc.elapsed();
            match checked {
                Err(e) => MainOutcome::Semantic(e.into()),
                Ok(()) => MainOutcome::Valid(ids),
            }
        };
        let body = worker.map(|w| match w.join() {
            Ok(v) => v,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (body, main, times)
    });
    let (bodies, body_time) = body.unwrap_or_else(|| {
        let t = Instant::now();
        (pending.bodies(&mut hs, module), t.elapsed())
    });
    phases.identities = (t_prepared - t1) + body_time;
    phases.shared = times[3];
    phases.model = times[0];
    phases.canonical = times[1];
    phases.semantic = times[2];
    let bodies = bodies?;
    let (finished, _) = pending.finish(module, Some(&bodies))?;
    let content = finished
        .module_content
        .iter()
        .zip(&carried)
        .position(|(a, b)| a != b)
        .map(|i| (header::CONTENT + i) as u64);
    match main {
        MainOutcome::Model(e) | MainOutcome::Canonical(e) => Err(e),
        MainOutcome::Mismatch(at) => {
            // A header mismatch precedes every section mismatch.
            let at = match content {
                Some(c) if at >= HEADER_BYTES as u64 || c < at => c,
                _ => at,
            };
            Err(mismatch_error(r, at))
        }
        MainOutcome::Semantic(e) => Err(content.map_or(e, |c| mismatch_error(r, c))),
        MainOutcome::Valid(main_ids) => match content {
            Some(c) => Err(mismatch_error(r, c)),
            // The calling thread's identities carry the module content that
            // the finished ones just confirmed.
            None => Ok(main_ids),
        },
    }
}

struct FnRanges {
    ops: std::ops::Range<u64>,
    blocks: std::ops::Range<u64>,
    paths: std::ops::Range<u64>,
    loans: std::ops::Range<u64>,
    edges: std::ops::Range<u64>,
    receiver: ReceiverKind,
}

/// Decodes the operations `lo..hi` (a range already checked against the
/// operation table) in order. With `two`, a long range is split in halves,
/// the second decoded on another thread; the first error in operation order
/// is reported, as in the sequential loop.
fn decode_ops<F>(decode_op: &F, lo: u64, hi: u64, two: bool) -> Result<Vec<Op>>
where
    F: Fn(u64) -> Result<Op> + Sync,
{
    let mut ops = Vec::with_capacity((hi - lo) as usize);
    if !two || hi - lo < PARALLEL_MIN_OPS {
        for oi in lo..hi {
            ops.push(decode_op(oi)?);
        }
        return Ok(ops);
    }
    let mid = lo + (hi - lo) / 2;
    let second_half = || -> Result<Vec<Op>> {
        let mut v = Vec::with_capacity((hi - mid) as usize);
        for oi in mid..hi {
            v.push(decode_op(oi)?);
        }
        Ok(v)
    };
    let second = std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .spawn_scoped(s, second_half)
            .ok();
        let first = (lo..mid).try_for_each(|oi| {
            ops.push(decode_op(oi)?);
            Ok(())
        });
        // Without a thread (the OS refused one), the second half runs here.
        let second = match worker.map(|w| w.join()) {
            Some(Ok(v)) => v,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => first.clone().and_then(|()| second_half()),
        };
        first.and(second)
    })?;
    ops.extend(second);
    Ok(ops)
}

fn project(r: &Reader, two: bool) -> Result<Module> {
    let b = r.bytes;
    let profile = NumericProfile::from_tag(rd32(b, header::PROFILE))
        .ok_or_else(|| Error::at(code::TAG, header::PROFILE as u64, "unknown numeric profile"))?;
    let mode = VerificationMode::from_tag(rd32(b, header::MODE))
        .ok_or_else(|| Error::at(code::TAG, header::MODE as u64, "unknown verification mode"))?;
    let name = r.string(rd32(b, 88), rd32(b, 92), 88, "module name")?;
    let package = r.string(rd32(b, 200), rd32(b, 204), 200, "package name")?;
    let mut hs = ids::Hasher::new(false);
    // Imports.
    let mut imports = Vec::new();
    let mut nominal_table: Vec<Id> = Vec::new();
    for i in 0..r.count(Section::Imports) {
        let rec = r.rec(Section::Imports, i);
        let nominal = rec.id(0);
        let module = r.string(rec.w(32, 0), rec.w(32, 1), rec.at(32, 0), "import module")?;
        let dname = r.string(
            rec.w(32, 2),
            rec.w(32, 3),
            rec.at(32, 2),
            "import declaration",
        )?;
        let ns = hs.namespace(&package, &module);
        let kind = DeclKind::ALL
            .iter()
            .copied()
            .find(|k| hs.nominal(&ns, *k, &dname) == nominal)
            .ok_or_else(|| Error::at(code::ID, rec.offset, format!("import {module}.{dname}: nominal ID does not match its module and declaration names")))?;
        imports.push(Import {
            module,
            name: dname,
            kind,
            interface: rec.id(48),
            copy: false,
        });
        nominal_table.push(nominal);
    }
    for i in 0..r.count(Section::Decls) {
        nominal_table.push(r.rec(Section::Decls, i).id(0));
    }
    // Type instances (children strictly precede parents).
    let mut types: Vec<Type> = Vec::new();
    for i in 0..r.count(Section::Types) {
        let rec = r.rec(Section::Types, i);
        let kind = rec.w(32, 0);
        let children = r.range(
            Section::TypeChildren,
            rec.w(32, 3),
            rec.w(32, 4),
            rec.at(32, 3),
            "type children",
        )?;
        let mut kids = Vec::new();
        for c in children {
            let at = r.start(Section::TypeChildren) + 4 * c;
            let ci = rd32(b, at as usize);
            if u64::from(ci) >= i {
                return Err(Error::at(
                    code::NONCANONICAL,
                    at,
                    format!("type {i} child {ci} does not precede its parent"),
                ));
            }
            kids.push(types[ci as usize].clone());
        }
        let t = match (kind, kids.len()) {
            (0, 0) => Type::Scalar(
                ScalarKind::from_tag(rec.w(32, 1))
                    .ok_or_else(|| Error::at(code::TAG, rec.at(32, 1), "unknown scalar kind"))?,
            ),
            (1, 0) => Type::Unit,
            (2, 0) => Type::Never,
            (3, 0) => {
                let n = rec.w(32, 2);
                let idx = r.index_combined(n, nominal_table.len(), rec.at(32, 2))?;
                if usize::try_from(n).is_ok_and(|n| n < imports.len()) {
                    // Import Copy flag is carried by the type record.
                    imports[idx].copy = rec.w(32, 5) & 1 == 1;
                }
                Type::Nominal(nominal_table[idx])
            }
            (4, 2) => Type::Result(Box::new(kids[0].clone()), Box::new(kids[1].clone())),
            (5, 0) => Type::ArrayByte,
            (6, 0) => Type::SliceByte,
            (7, 1) => Type::Ref(Box::new(kids[0].clone())),
            (8, 1) => Type::Mut(Box::new(kids[0].clone())),
            (9, 0) => Type::AllocatorBytesError,
            _ => {
                return Err(Error::at(
                    code::TAG,
                    rec.at(32, 0),
                    format!(
                        "type kind {kind} with {} children is not admitted",
                        kids.len()
                    ),
                ));
            }
        };
        if t.depth() > crate::validate::MAX_TYPE_DEPTH {
            return Err(Error::at(
                code::LIMIT,
                rec.offset,
                "type nesting exceeds the documented limit",
            ));
        }
        types.push(t);
    }
    let ty = |i: u32, at: u64| -> Result<Type> {
        types.get(i as usize).cloned().ok_or_else(|| {
            Error::at(
                code::REF,
                at,
                format!("type reference {i} is outside the type table"),
            )
        })
    };
    let sym = |i: u32, at: u64| -> Result<Id> {
        r.index(Section::Symbols, i, at, "semantic-symbol reference")?;
        Ok(r.rec(Section::Symbols, u64::from(i)).id(0))
    };
    let name_of = |rec: &Rec, skip: usize, n: usize, what: &str| {
        r.string(rec.w(skip, n), rec.w(skip, n + 1), rec.at(skip, n), what)
    };
    let field = |i: u64, owner_kind: u32, owner: u64| -> Result<Field> {
        let rec = r.rec(Section::Fields, i);
        if rec.w(32, 0) != owner_kind || u64::from(rec.w(32, 1)) != owner {
            return Err(Error::at(
                code::REF,
                rec.at(32, 0),
                format!("field {i} does not name its owning range's owner"),
            ));
        }
        Ok(Field {
            ordinal: rec.w(32, 2),
            name: name_of(&rec, 32, 3, "field name")?,
            visibility: Visibility::from_tag(rec.w(32, 5))
                .ok_or_else(|| Error::at(code::TAG, rec.at(32, 5), "unknown visibility"))?,
            mutability: Mutability::from_tag(rec.w(32, 6))
                .ok_or_else(|| Error::at(code::TAG, rec.at(32, 6), "unknown mutability"))?,
            ty: ty(rec.w(32, 7), rec.at(32, 7))?,
        })
    };
    // Declarations, fields, variants; collect function ranges.
    let mut decls = Vec::new();
    let mut fn_owner: Vec<Option<usize>> = vec![None; r.count(Section::Functions) as usize];
    for di in 0..r.count(Section::Decls) {
        let rec = r.rec(Section::Decls, di);
        let kind = DeclKind::from_tag(rec.w(32, 0)).ok_or_else(|| {
            Error::at(
                code::TAG,
                rec.at(32, 0),
                format!(
                    "declaration kind {} is not admitted in schema 1.9",
                    rec.w(32, 0)
                ),
            )
        })?;
        let visibility = Visibility::from_tag(rec.w(32, 1))
            .ok_or_else(|| Error::at(code::TAG, rec.at(32, 1), "unknown visibility"))?;
        let dname = name_of(&rec, 32, 3, "declaration name")?;
        let mut fields = Vec::new();
        for i in r.range(
            Section::Fields,
            rec.w(32, 5),
            rec.w(32, 6),
            rec.at(32, 5),
            "declaration fields",
        )? {
            fields.push(field(i, 0, di)?);
        }
        let mut variants = Vec::new();
        for vi in r.range(
            Section::Variants,
            rec.w(32, 7),
            rec.w(32, 8),
            rec.at(32, 7),
            "declaration variants",
        )? {
            let v = r.rec(Section::Variants, vi);
            if u64::from(v.w(32, 0)) != di {
                return Err(Error::at(
                    code::REF,
                    v.at(32, 0),
                    format!("variant {vi} does not name its owning declaration"),
                ));
            }
            let mut pf = Vec::new();
            for i in r.range(
                Section::Fields,
                v.w(32, 4),
                v.w(32, 5),
                v.at(32, 4),
                "payload fields",
            )? {
                pf.push(field(i, 1, vi)?);
            }
            variants.push(Variant {
                tag: v.w(32, 1),
                name: name_of(&v, 32, 2, "variant name")?,
                fields: pf,
            });
        }
        for fi in r.range(
            Section::Functions,
            rec.w(32, 9),
            rec.w(32, 10),
            rec.at(32, 9),
            "declaration functions",
        )? {
            if fn_owner[fi as usize].replace(di as usize).is_some() {
                return Err(Error::at(
                    code::DUPLICATE,
                    rec.at(32, 9),
                    format!("function {fi} belongs to two declaration ranges"),
                ));
            }
        }
        let ns = hs.namespace(&package, &name);
        if hs.nominal(&ns, kind, &dname) != rec.id(0) {
            return Err(Error::at(
                code::ID,
                rec.offset,
                format!("declaration {dname}: carried nominal ID differs from the recomputed one"),
            ));
        }
        decls.push(Declaration {
            kind,
            name: dname,
            visibility,
            fields,
            variants,
            functions: Vec::new(),
        });
    }
    // Effect sets: all 128 subsets by digest.
    let mut effect_digests: FastMap<Id, Vec<Effect>> = FastMap::default();
    for mask in 0u32..128 {
        let set: Vec<Effect> = Effect::ALL
            .iter()
            .copied()
            .filter(|e| mask & (1 << e.tag()) != 0)
            .collect();
        effect_digests.insert(hs.effects(&set), set);
    }
    let effect_set = |i: u32, at: u64| -> Result<Vec<Effect>> {
        let i = r.index(Section::EffectSets, i, at, "effect set")?;
        let rec = r.rec(Section::EffectSets, i);
        let mut out = Vec::new();
        for t in r.range(
            Section::EffectTags,
            rec.w(0, 0),
            rec.w(0, 1),
            rec.at(0, 0),
            "effect tags",
        )? {
            let at = r.start(Section::EffectTags) + 4 * t;
            let tag = rd32(b, at as usize);
            out.push(
                Effect::from_tag(tag)
                    .ok_or_else(|| Error::at(code::TAG, at, format!("unknown effect tag {tag}")))?,
            );
        }
        Ok(out)
    };
    let constant = |i: u32, at: u64| -> Result<Constant> {
        let i = r.index(Section::Constants, i, at, "constant")?;
        let rec = r.rec(Section::Constants, i);
        let kind = match ty(rec.w(32, 0), rec.at(32, 0))? {
            Type::Scalar(k) if k != ScalarKind::Index => k,
            _ => {
                return Err(Error::at(
                    code::MODEL,
                    rec.at(32, 0),
                    "constants are admitted only for closed scalar types other than Index",
                ));
            }
        };
        let off = rd64(rec.bytes, 40);
        let len = rd64(rec.bytes, 48);
        let end = off
            .checked_add(len)
            .filter(|&e| e <= r.count(Section::ConstantBytes));
        let end = end.ok_or_else(|| {
            Error::at(
                code::REF,
                rec.offset + 40,
                "constant payload outside the constant pool",
            )
        })?;
        if Some(len as usize) != kind.constant_width() {
            return Err(Error::at(
                code::MODEL,
                rec.offset + 48,
                format!(
                    "{} constant payload must be {:?} bytes",
                    kind.text(),
                    kind.constant_width()
                ),
            ));
        }
        let start = r.start(Section::ConstantBytes) + off;
        let mut bits = [0u8; 8];
        bits[..len as usize].copy_from_slice(&b[start as usize..(start + (end - off)) as usize]);
        let c = Constant {
            kind,
            bits: u64::from_le_bytes(bits),
        };
        if c.payload().is_none() {
            return Err(Error::at(
                code::MODEL,
                start,
                "noncanonical constant payload",
            ));
        }
        Ok(c)
    };
    // Functions.
    let mut fn_ranges = Vec::new();
    let mut functions: Vec<(usize, Function)> = Vec::new();
    let nfn = r.count(Section::Functions);
    for fi in 0..nfn {
        let rec = r.rec(Section::Functions, fi);
        let decl = fn_owner[fi as usize].ok_or_else(|| {
            Error::at(
                code::NONCANONICAL,
                rec.offset,
                format!("function {fi} belongs to no declaration"),
            )
        })?;
        if rec.w(32, 0) as usize != decl {
            return Err(Error::at(
                code::REF,
                rec.at(32, 0),
                "function does not name its owning declaration",
            ));
        }
        let callable = CallableKind::from_tag(rec.w(32, 1))
            .ok_or_else(|| Error::at(code::TAG, rec.at(32, 1), "unknown callable kind"))?;
        let receiver = ReceiverKind::from_tag(rec.w(32, 2))
            .ok_or_else(|| Error::at(code::TAG, rec.at(32, 2), "unknown receiver kind"))?;
        let fname = name_of(&rec, 32, 4, "function name")?;
        let mut params = Vec::new();
        for pi in r.range(
            Section::Params,
            rec.w(32, 6),
            rec.w(32, 7),
            rec.at(32, 6),
            "parameters",
        )? {
            params.push(param_like(r, Section::Params, pi, fi, &ty)?);
        }
        let mut locals = Vec::new();
        for li in r.range(
            Section::Locals,
            rec.w(32, 8),
            rec.w(32, 9),
            rec.at(32, 8),
            "locals",
        )? {
            locals.push(param_like(r, Section::Locals, li, fi, &ty)?);
        }
        let blocks = r.range(
            Section::Blocks,
            rec.w(32, 10),
            rec.w(32, 11),
            rec.at(32, 10),
            "blocks",
        )?;
        let result = ty(rec.w(32, 12), rec.at(32, 12))?;
        let effects = effect_set(rec.w(32, 13), rec.at(32, 13))?;
        let paths = r.range(
            Section::Paths,
            rec.w(32, 14),
            rec.w(32, 15),
            rec.at(32, 14),
            "owned paths",
        )?;
        let loans = r.range(
            Section::Loans,
            rec.w(32, 16),
            rec.w(32, 17),
            rec.at(32, 16),
            "loans",
        )?;
        let edges = r.range(
            Section::Edges,
            rec.w(32, 18),
            rec.w(32, 19),
            rec.at(32, 18),
            "cleanup edges",
        )?;
        let ops = r.range(
            Section::Ops,
            rec.w(32, 20),
            rec.w(32, 21),
            rec.at(32, 20),
            "body operations",
        )?;
        let visibility = Visibility::from_tag(rec.w(32, 23))
            .ok_or_else(|| Error::at(code::TAG, rec.at(32, 23), "unknown visibility"))?;
        let recv_type = receiver_type_of(&decls, &nominal_table, imports.len(), decl, receiver);
        let requires = contract_list(
            r,
            rec.w(32, 24),
            rec.w(32, 25),
            rec.at(32, 24),
            &ty,
            &constant,
        )?;
        let ensures = contract_list(
            r,
            rec.w(32, 26),
            rec.w(32, 27),
            rec.at(32, 26),
            &ty,
            &constant,
        )?;
        let _ = recv_type;
        fn_ranges.push(FnRanges {
            ops,
            blocks,
            paths,
            loans,
            edges,
            receiver,
        });
        functions.push((
            decl,
            Function {
                callable,
                receiver,
                name: fname,
                visibility,
                params,
                result,
                effects,
                requires,
                ensures,
                body: Body {
                    locals,
                    ..Body::default()
                },
            },
        ));
    }
    // Bodies.
    let mut op_owner: Vec<Option<(usize, OpRef)>> = vec![None; r.count(Section::Ops) as usize];
    let mut path_owner: Vec<Option<(usize, PathKey)>> =
        vec![None; r.count(Section::Paths) as usize];
    let mut block_owner: Vec<Option<(usize, u32)>> = vec![None; r.count(Section::Blocks) as usize];
    let mut edge_owner: Vec<Option<(usize, u32)>> = vec![None; r.count(Section::Edges) as usize];
    let mut loan_owner: Vec<Option<(usize, u32)>> = vec![None; r.count(Section::Loans) as usize];
    // Pass 1: ownership of blocks, edges, ops, loans.
    for (fi, fr) in fn_ranges.iter().enumerate() {
        for bi in fr.blocks.clone() {
            let rec = r.rec(Section::Blocks, bi);
            if rec.w(0, 0) as usize != fi {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 0),
                    "block does not name its owning function",
                ));
            }
            let id = rec.w(0, 1);
            block_owner[bi as usize] = Some((fi, id));
            let ops = r.range(
                Section::Ops,
                rec.w(0, 2),
                rec.w(0, 3),
                rec.at(0, 2),
                "block operations",
            )?;
            if ops.start < fr.ops.start || ops.end > fr.ops.end {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 2),
                    "block operations lie outside the function body range",
                ));
            }
            for (k, oi) in ops.enumerate() {
                claim(
                    &mut op_owner,
                    oi,
                    (
                        fi,
                        OpRef::Flow {
                            block: id,
                            ordinal: k as u32,
                        },
                    ),
                    rec.offset,
                )?;
            }
        }
        for ei in fr.edges.clone() {
            let rec = r.rec(Section::Edges, ei);
            if rec.w(0, 0) as usize != fi {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 0),
                    "cleanup edge does not name its owning function",
                ));
            }
            let id = rec.w(0, 1);
            edge_owner[ei as usize] = Some((fi, id));
            for (k, di) in r
                .range(
                    Section::DropRefs,
                    rec.w(0, 5),
                    rec.w(0, 6),
                    rec.at(0, 5),
                    "drop references",
                )?
                .enumerate()
            {
                let at = r.start(Section::DropRefs) + 4 * di;
                let oi = r.index(Section::Ops, rd32(b, at as usize), at, "drop reference")?;
                if !fr.ops.contains(&oi) {
                    return Err(Error::at(
                        code::REF,
                        at,
                        "drop reference names an operation of another function",
                    ));
                }
                claim(
                    &mut op_owner,
                    oi,
                    (
                        fi,
                        OpRef::Recipe {
                            edge: id,
                            ordinal: k as u32,
                        },
                    ),
                    at,
                )?;
            }
        }
        for li in fr.loans.clone() {
            let rec = r.rec(Section::Loans, li);
            if rec.w(0, 0) as usize != fi {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 0),
                    "loan does not name its owning function",
                ));
            }
            loan_owner[li as usize] = Some((fi, rec.w(0, 1)));
        }
    }
    let op_ref = |fi: usize, i: u32, at: u64, flow_only: bool| -> Result<OpRef> {
        let idx = r.index(Section::Ops, i, at, "operation")?;
        match op_owner[idx as usize] {
            Some((f, o)) if f == fi && (!flow_only || matches!(o, OpRef::Flow { .. })) => Ok(o),
            _ => Err(Error::at(
                code::REF,
                at,
                format!(
                    "operation {i} is not a {}operation of this function",
                    if flow_only { "flow " } else { "" }
                ),
            )),
        }
    };
    let owned = |table: &Vec<Option<(usize, u32)>>,
                 s: Section,
                 fi: usize,
                 i: u32,
                 at: u64|
     -> Result<u32> {
        let idx = r.index(s, i, at, s.name())?;
        match table[idx as usize] {
            Some((f, id)) if f == fi => Ok(id),
            _ => Err(Error::at(
                code::REF,
                at,
                format!("{} {i} belongs to another function", s.name()),
            )),
        }
    };
    // Pass 2: owned paths (parents precede children).
    for (fi, fr) in fn_ranges.iter().enumerate() {
        let f = &functions[fi].1;
        for pi in fr.paths.clone() {
            let rec = r.rec(Section::Paths, pi);
            if rec.w(0, 0) as usize != fi {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 0),
                    "owned path does not name its owning function",
                ));
            }
            let (kind, place, parent) = (rec.w(0, 1), rec.w(0, 2), rec.w(0, 3));
            let key = match kind {
                0 => {
                    let runtime_receiver = matches!(
                        fr.receiver,
                        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                    );
                    let root = match (runtime_receiver, place) {
                        (true, 0) => Root::Receiver,
                        (true, p) => Root::Param(p - 1),
                        (false, p) => Root::Param(p),
                    };
                    PathKey {
                        root,
                        fields: Vec::new(),
                    }
                }
                1 => PathKey {
                    root: Root::Local(place),
                    fields: Vec::new(),
                },
                2 => {
                    if parent == NONE
                        || u64::from(parent) >= pi
                        || u64::from(parent) < fr.paths.start
                    {
                        return Err(Error::at(
                            code::REF,
                            rec.at(0, 3),
                            "a field path's parent must precede it in the same function",
                        ));
                    }
                    let mut k = path_owner[parent as usize]
                        .clone()
                        .map(|x| x.1)
                        .ok_or_else(|| {
                            Error::at(code::REF, rec.at(0, 3), "unresolved parent path")
                        })?;
                    k.fields.push(sym(place, rec.at(0, 2))?);
                    k
                }
                3 => PathKey {
                    root: Root::Temp(op_ref(fi, place, rec.at(0, 2), true)?),
                    fields: Vec::new(),
                },
                _ => {
                    return Err(Error::at(
                        code::TAG,
                        rec.at(0, 1),
                        format!("unknown place kind {kind}"),
                    ));
                }
            };
            if kind != 2 && parent != NONE {
                return Err(Error::at(
                    code::REF,
                    rec.at(0, 3),
                    "a root path has parent NONE",
                ));
            }
            let _ = f;
            path_owner[pi as usize] = Some((fi, key));
        }
    }
    let path_ref = |fi: usize, i: u32, at: u64| -> Result<PathKey> {
        let idx = r.index(Section::Paths, i, at, "owned path")?;
        match &path_owner[idx as usize] {
            Some((f, k)) if *f == fi => Ok(k.clone()),
            _ => Err(Error::at(
                code::REF,
                at,
                format!("owned path {i} belongs to another function"),
            )),
        }
    };
    // Pass 3: paths' types, loans, edges, blocks and operations.
    for (fi, fr) in fn_ranges.iter().enumerate() {
        let mut body = std::mem::take(&mut functions[fi].1.body);
        for pi in fr.paths.clone() {
            let rec = r.rec(Section::Paths, pi);
            let key = path_owner[pi as usize]
                .clone()
                .map(|x| x.1)
                .unwrap_or(PathKey {
                    root: Root::Receiver,
                    fields: Vec::new(),
                });
            body.paths.push(OwnedPath {
                key,
                ty: ty(rec.w(0, 4), rec.at(0, 4))?,
            });
        }
        for li in fr.loans.clone() {
            let rec = r.rec(Section::Loans, li);
            let opt_op = |w: u32, at: u64| -> Result<Option<OpRef>> {
                if w == NONE {
                    Ok(None)
                } else {
                    op_ref(fi, w, at, true).map(Some)
                }
            };
            body.loans.push(Loan {
                id: rec.w(0, 1),
                kind: LoanKind::from_tag(rec.w(0, 2))
                    .ok_or_else(|| Error::at(code::TAG, rec.at(0, 2), "unknown loan kind"))?,
                origin: path_ref(fi, rec.w(0, 3), rec.at(0, 3))?,
                parent: if rec.w(0, 4) == NONE {
                    None
                } else {
                    Some(owned(
                        &loan_owner,
                        Section::Loans,
                        fi,
                        rec.w(0, 4),
                        rec.at(0, 4),
                    )?)
                },
                borrowed: ty(rec.w(0, 5), rec.at(0, 5))?,
                creation: opt_op(rec.w(0, 6), rec.at(0, 6))?,
                last_use: opt_op(rec.w(0, 7), rec.at(0, 7))?,
            });
        }
        let decode_op = |oi: u64| -> Result<Op> {
            let rec = r.rec(Section::Ops, oi);
            let tag = rec.w(0, 0);
            let (k0, k1) = crate::validate::aux_kinds(tag).ok_or_else(|| {
                Error::at(
                    code::TAG,
                    rec.at(0, 0),
                    format!("typed-operation tag {tag} is not canonical in schema 1.9"),
                )
            })?;
            let result = if rec.w(0, 1) == NONE {
                None
            } else {
                Some(ty(rec.w(0, 1), rec.at(0, 1))?)
            };
            let range = r.range(
                Section::Operands,
                rec.w(0, 2),
                rec.w(0, 3),
                rec.at(0, 2),
                "operands",
            )?;
            // The range is inside the operand table, so its length is bounded by the input.
            let mut operands = Vec::with_capacity((range.end - range.start) as usize);
            for o in range {
                let orec = r.rec(Section::Operands, o);
                let (kind, idx) = (orec.w(0, 0), orec.w(0, 1));
                let at = orec.at(0, 1);
                operands.push(match kind {
                    0 => Operand::Value(op_ref(fi, idx, at, true)?),
                    1 => Operand::Place(path_ref(fi, idx, at)?),
                    2 => Operand::Const(constant(idx, at)?),
                    3 => Operand::Block(owned(&block_owner, Section::Blocks, fi, idx, at)?),
                    _ => {
                        return Err(Error::at(
                            code::TAG,
                            orec.at(0, 0),
                            format!("body operand kind {kind} is not admitted"),
                        ));
                    }
                });
            }
            let aux = |kind: u32, w: u32, at: u64| -> Result<Aux> {
                Ok(match kind {
                    0 => {
                        if w != 0 {
                            return Err(Error::at(code::TAG, at, "absent auxiliary must be zero"));
                        }
                        Aux::None
                    }
                    1 => Aux::Lit(w),
                    2 => Aux::Type(ty(w, at)?),
                    3 => Aux::Decl(sym(w, at)?),
                    4 => Aux::Field(sym(w, at)?),
                    5 => Aux::Func(sym(w, at)?),
                    6 => Aux::CatalogFunc(sym(w, at)?),
                    7 => {
                        let d = sym(w, at)?;
                        Aux::Effects(effect_digests.get(&d).cloned().ok_or_else(|| {
                            Error::at(code::REF, at, "symbol is not an effect-set digest")
                        })?)
                    }
                    8 => Aux::Loan(owned(&loan_owner, Section::Loans, fi, w, at)?),
                    9 => Aux::Path(path_ref(fi, w, at)?),
                    10 => Aux::Edge(owned(&edge_owner, Section::Edges, fi, w, at)?),
                    11 => Aux::Op(op_ref(fi, w, at, false)?),
                    12 => Aux::Block(owned(&block_owner, Section::Blocks, fi, w, at)?),
                    _ => Aux::Variant(sym(w, at)?),
                })
            };
            Ok(Op {
                tag,
                result,
                operands,
                aux0: aux(k0, rec.w(0, 4), rec.at(0, 4))?,
                aux1: aux(k1, rec.w(0, 5), rec.at(0, 5))?,
            })
        };
        for bi in fr.blocks.clone() {
            let rec = r.rec(Section::Blocks, bi);
            // Inside the operation table and the function's range (pass 1).
            let lo = u64::from(rec.w(0, 2));
            let ops = decode_ops(&decode_op, lo, lo + u64::from(rec.w(0, 3)), two)?;
            body.blocks.push(Block {
                id: rec.w(0, 1),
                ops,
            });
        }
        for ei in fr.edges.clone() {
            let rec = r.rec(Section::Edges, ei);
            let mut drops = Vec::new();
            for di in u64::from(rec.w(0, 5))..u64::from(rec.w(0, 5)) + u64::from(rec.w(0, 6)) {
                let oi = rd32(b, (r.start(Section::DropRefs) + 4 * di) as usize);
                drops.push(decode_op(u64::from(oi))?);
            }
            body.edges.push(CleanupEdge {
                id: rec.w(0, 1),
                kind: EdgeKind::from_tag(rec.w(0, 4)).ok_or_else(|| {
                    Error::at(code::TAG, rec.at(0, 4), "unknown cleanup-edge kind")
                })?,
                source: owned(&block_owner, Section::Blocks, fi, rec.w(0, 2), rec.at(0, 2))?,
                successor: if rec.w(0, 3) == NONE {
                    None
                } else {
                    Some(owned(
                        &block_owner,
                        Section::Blocks,
                        fi,
                        rec.w(0, 3),
                        rec.at(0, 3),
                    )?)
                },
                drops,
            });
        }
        functions[fi].1.body = body;
    }
    for (decl, f) in functions {
        decls[decl].functions.push(f);
    }
    let _ = catalog::CATALOG_ID;
    Ok(Module {
        package,
        name,
        profile,
        mode,
        imports,
        declarations: decls,
    })
}

impl Reader<'_> {
    fn index_combined(&self, n: u32, total: usize, at: u64) -> Result<usize> {
        let n = n as usize;
        if n < total {
            Ok(n)
        } else {
            Err(Error::at(
                code::REF,
                at,
                format!(
                    "nominal declaration reference {n} is outside the {total} imports and declarations"
                ),
            ))
        }
    }
}

fn claim(owner: &mut [Option<(usize, OpRef)>], i: u64, v: (usize, OpRef), at: u64) -> Result<()> {
    let slot = &mut owner[i as usize];
    if slot.is_some() {
        return Err(Error::at(
            code::DUPLICATE,
            at,
            format!("typed operation {i} belongs to two ranges"),
        ));
    }
    *slot = Some(v);
    Ok(())
}

fn param_like(
    r: &Reader,
    s: Section,
    i: u64,
    fi: u64,
    ty: &dyn Fn(u32, u64) -> Result<Type>,
) -> Result<Param> {
    let rec = r.rec(s, i);
    if u64::from(rec.w(32, 0)) != fi {
        return Err(Error::at(
            code::REF,
            rec.at(32, 0),
            format!("{} does not name its owning function", s.name()),
        ));
    }
    Ok(Param {
        ordinal: rec.w(32, 1),
        name: r.string(rec.w(32, 2), rec.w(32, 3), rec.at(32, 2), s.name())?,
        ty: ty(rec.w(32, 4), rec.at(32, 4))?,
    })
}

fn receiver_type_of(
    _decls: &[Declaration],
    table: &[Id],
    imports: usize,
    decl: usize,
    receiver: ReceiverKind,
) -> Option<Type> {
    table
        .get(imports + decl)
        .and_then(|n| ids::receiver_type(n, receiver))
}

fn contract_list(
    r: &Reader,
    start: u32,
    count: u32,
    at: u64,
    ty: &dyn Fn(u32, u64) -> Result<Type>,
    constant: &dyn Fn(u32, u64) -> Result<Constant>,
) -> Result<Vec<Expr>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for ci in r.range(
        Section::ContractOps,
        start,
        count,
        at,
        "contract operations",
    )? {
        let rec = r.rec(Section::ContractOps, ci);
        let mut operands = Vec::new();
        for o in r.range(
            Section::Operands,
            rec.w(0, 2),
            rec.w(0, 3),
            rec.at(0, 2),
            "contract operands",
        )? {
            let orec = r.rec(Section::Operands, o);
            let (kind, idx) = (orec.w(0, 0), orec.w(0, 1));
            operands.push(match kind {
                2 => ContractOperand::Const(constant(idx, orec.at(0, 1))?),
                4 => ContractOperand::Receiver,
                5 => ContractOperand::Param(idx),
                6 => ContractOperand::Result,
                7 => ContractOperand::Value(idx),
                _ => {
                    return Err(Error::at(
                        code::TAG,
                        orec.at(0, 0),
                        format!("operand kind {kind} is not admitted in a contract"),
                    ));
                }
            });
        }
        let reference = rec.id(24);
        let flags = rd32(rec.bytes, 56);
        if flags > 1 {
            return Err(Error::at(
                code::TAG,
                rec.offset + 56,
                "contract flags admit only the root bit",
            ));
        }
        cur.push(ContractOp {
            tag: rec.w(0, 0),
            result: ty(rec.w(0, 1), rec.at(0, 1))?,
            operands,
            aux0: rec.w(0, 4),
            aux1: rec.w(0, 5),
            reference: (reference != [0u8; 32]).then_some(reference),
        });
        if flags == 1 {
            out.push(Expr {
                ops: std::mem::take(&mut cur),
            });
        }
    }
    if !cur.is_empty() {
        return Err(Error::at(
            code::SHAPE,
            at,
            "the last contract expression has no root bit",
        ));
    }
    Ok(out)
}

/// Resolves every import of `module` against its provider modules: the
/// provider must be supplied (same package, dotted name equal to the
/// import's module), export a public declaration of that name and kind with
/// the same Copy flag, and have exactly the carried module-interface digest.
pub fn check_imports(module: &Module, providers: &[Module]) -> Result<()> {
    let mut pairs = Vec::with_capacity(providers.len());
    for provider in providers {
        pairs.push((provider, ids::compute(provider, false)?.0));
    }
    let pairs: Vec<(&Module, &ids::Identities)> = pairs.iter().map(|(m, i)| (*m, i)).collect();
    resolve_imports(module, &pairs)
}

/// [`check_imports`] against providers whose identities are known.
fn resolve_imports(module: &Module, providers: &[(&Module, &ids::Identities)]) -> Result<()> {
    for imp in &module.imports {
        let (p, pids) = providers
            .iter()
            .find(|(p, _)| p.package == module.package && p.name == imp.module)
            .ok_or_else(|| {
                Error::new(
                    code::IMPORT,
                    format!(
                        "import {}.{}: provider module {} was not supplied",
                        imp.module, imp.name, imp.module
                    ),
                )
            })?;
        if pids.module_interface != imp.interface {
            return Err(Error::new(
                code::IMPORT,
                format!(
                    "import {}.{}: stale module-interface digest (provider has {})",
                    imp.module,
                    imp.name,
                    crate::hash::to_hex(&pids.module_interface)
                ),
            ));
        }
        let found = p
            .declarations
            .iter()
            .zip(&pids.decls)
            .find(|(d, _)| d.name == imp.name && d.kind == imp.kind);
        match found {
            Some((d, di)) if d.visibility == Visibility::Public => {
                if di.copy != imp.copy {
                    return Err(Error::new(
                        code::IMPORT,
                        format!(
                            "import {}.{}: Copy flag differs from the provider",
                            imp.module, imp.name
                        ),
                    ));
                }
            }
            _ => {
                return Err(Error::new(
                    code::IMPORT,
                    format!(
                        "import {}.{}: the provider exports no public {} declaration of that name",
                        imp.module,
                        imp.name,
                        imp.kind.text()
                    ),
                ));
            }
        }
    }
    Ok(())
}
